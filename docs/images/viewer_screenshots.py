"""Writes the viewer's screenshots in this folder: a primitive scene, Talos standing with its
contacts, and the demo's rollout (``python docs/images/viewer_screenshots.py``; needs the ``viz``
extra, example-robot-data, playwright and Debian's chromium, as tests/test_viz.py does)."""

import shutil
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image
from playwright.sync_api import sync_playwright

from dcol.demo import demo_scene
from dcol.dynamics import World
from dcol.simulation_demo import DT, STEPS, demo_model
from dcol.viz import Viewer, robot_viewer

HERE = Path(__file__).resolve().parent
# The pair drawn with its witness points and DCOL's scaled shapes; the others plainly.
PAIR = ("sphere", "ellipsoid")
SLOW_MOTION = 4.0


def primitive_page(folder: Path) -> Path:
    with Viewer() as viewer:
        shapes = {name: (shape, r, q) for name, shape, r, q in demo_scene()}
        for name, (shape, r, q) in shapes.items():
            if name not in PAIR:
                viewer.add_shape(shape, r, q, name=name)
        viewer.add_proximity(*shapes[PAIR[0]], *shapes[PAIR[1]], scaled=True, name="pair")
        return viewer.save_html(folder / "primitives.html")


def talos_page(folder: Path) -> Path:
    with robot_viewer("talos", contacts=True) as viewer:
        return viewer.save_html(folder / "talos.html")


def rollout_page(folder: Path) -> Path:
    model, q0, v0 = demo_model()
    world = World(model, dt=DT, friction=0.6, restitution=0.3)
    rollout = world.rollout(q0, v0, np.zeros((STEPS, model.nv)), keep_steps=True)
    with Viewer() as viewer:
        viewer.animate(rollout, world, name="demo", slow_motion=SLOW_MOTION)
        return viewer.save_html(folder / "rollout.html")


def screenshot(browser, page_path: Path, output: Path, seconds: float | None = None) -> None:
    page = browser.new_page(viewport={"width": 1000, "height": 700})
    page.goto(page_path.as_uri())
    page.add_style_tag(content=".mantine-Notifications-root { display: none !important; }")
    page.wait_for_function("() => window.__viserSceneTree && window.__viserMutable", timeout=60_000)
    page.wait_for_timeout(4000)
    if seconds is not None:  # pause the animation at that time
        field = page.locator("input.mantine-NumberInput-input")
        for _ in range(3):
            field.click()
            field.press("Control+a")
            field.type(f"{seconds:g}")
            page.wait_for_timeout(300)
        page.mouse.move(500, 300)
        page.wait_for_timeout(1000)
    png = output.with_suffix(".full.png")
    page.screenshot(path=png)
    page.close()
    # A palette of 256 colours keeps each picture small enough for the repository.
    Image.open(png).convert("RGB").quantize(colors=256, dither=Image.Dither.NONE).save(output, optimize=True)
    png.unlink()
    print(f"{output} ({output.stat().st_size // 1000} kB)")


def main() -> None:
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=shutil.which("chromium"), args=["--use-angle=swiftshader", "--enable-unsafe-swiftshader"]
        )
        screenshot(browser, primitive_page(Path(folder)), HERE / "viewer-primitives.png")
        screenshot(browser, talos_page(Path(folder)), HERE / "viewer-talos-contacts.png")
        screenshot(
            browser,
            rollout_page(Path(folder)),
            HERE / "viewer-demo-rollout.png",
            seconds=0.3 * SLOW_MOTION * STEPS * DT,
        )
        browser.close()


if __name__ == "__main__":
    main()
