"""dcol.viz and ``dcol view``: the exported pages opened in headless Chromium (Debian's ``chromium``,
driven by playwright without a browser download of its own), and the errors of bad input.

A page counts as rendered when its WebGL canvas differs from the background and the scene the page
built (viser's client, which exposes its scene tree and three.js objects to end-to-end tests) holds the
objects the test drew, with geometry. Expected values come from the inputs: shape counts, the URDF's
elements, closed forms (DCOL's α of two spheres, a prismatic joint's offset) and the rollout's states.
Each page's screenshot is kept in the test's tmp_path.
"""

import io
import shutil
import threading
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from dcol.demo import demo_scene
from dcol.dynamics import World, dataset_robot_path, load_dataset_robot, load_urdf
from dcol.geom import Box, ConvexMesh, Scene, Sphere, contacts, signed_distance
from dcol.simulation_demo import DT, demo_model

viser = pytest.importorskip(
    "viser", reason='viser is missing: it comes with the viz and test extras, pip install ".[test]"'
)

from dcol.cli import main  # noqa: E402  (after the skip: the viewer needs viser)
from dcol.viz import Viewer, show  # noqa: E402

DATASETS = Path(__file__).resolve().parents[1] / "datasets"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])

# A pixel belongs to the background when no channel differs from it by more than this (antialiasing
# and shading of drawn objects differ by far more); a drawn scene must cover this share of the canvas.
BACKGROUND_TOLERANCE = 24
DRAWN_SHARE = 0.01

# Per node under a prefix: the type of the message that made it, its visibility, and the vertices of
# the three.js meshes, points and lines it holds (the scene as the page built it).
NODES_JS = """(prefix) => {
  const tree = window.__viserSceneTree.getState();
  const objects = window.__viserMutable.nodeRefFromName;
  const out = {};
  for (const [name, node] of Object.entries(tree)) {
    if (!name.startsWith(prefix) || !node.message) continue;
    let vertices = 0;
    const object = objects[name];
    if (object) object.traverse((o) => {
      if ((o.isMesh || o.isPoints || o.isLine) && o.geometry.attributes.position)
        vertices += o.geometry.attributes.position.count;
    });
    out[name] = {type: node.message.type, vertices: vertices};
  }
  return out;
}"""

# The local vertices (flattened) of the first three.js mesh under a node.
MESH_VERTICES_JS = """(name) => {
  let found = null;
  window.__viserMutable.nodeRefFromName[name].traverse((o) => {
    if (found === null && o.isMesh) found = Array.from(o.geometry.attributes.position.array);
  });
  return found;
}"""

# A node's position and quaternion (three.js order x, y, z, w) relative to its parent.
POSE_JS = """(name) => {
  const o = window.__viserMutable.nodeRefFromName[name];
  return [o.position.toArray(), o.quaternion.toArray()];
}"""


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason='playwright is missing: pip install ".[test]"')
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium; .ci/run installs it when missing)")
    with sync_api.sync_playwright() as playwright:
        # SwiftShader: WebGL in software, as a headless machine has no GPU.
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--use-angle=swiftshader", "--enable-unsafe-swiftshader"]
        )
        yield chromium
        chromium.close()


def open_page(browser, path: Path, expected_nodes: int, prefix: str = "/"):
    """The page at path, once its scene holds at least expected_nodes nodes under prefix and has drawn them."""
    page = browser.new_page(viewport={"width": 900, "height": 650})
    page.goto(path.as_uri())
    # viser warns in a corner that WebGL runs in software; hidden so that it is not taken for the scene.
    page.add_style_tag(content=".mantine-Notifications-root { display: none !important; }")
    page.wait_for_function(
        """([prefix, count]) => window.__viserSceneTree && window.__viserMutable &&
             Object.entries(window.__viserSceneTree.getState())
               .filter(([name, node]) => name.startsWith(prefix) && node.message).length >= count""",
        arg=[prefix, expected_nodes],
        timeout=60_000,
    )
    page.wait_for_timeout(1500)  # the meshes' first frames
    return page


def drawn_share(page, screenshot: Path) -> float:
    """Share of the WebGL canvas's pixels that differ from its background (its corner pixel); the
    canvas's screenshot is written to screenshot."""
    from PIL import Image

    box = page.evaluate(
        "() => { const r = window.__viserMutable.canvas.getBoundingClientRect(); "
        "return {x: r.x, y: r.y, width: r.width, height: r.height}; }"
    )
    png = page.screenshot(clip=box)
    screenshot.write_bytes(png)
    pixels = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)
    differs = np.abs(pixels - pixels[0, 0]).max(axis=2) > BACKGROUND_TOLERANCE
    return float(differs.mean())


def node_types(nodes: dict) -> dict[str, int]:
    counts: dict[str, int] = {}
    for node in nodes.values():
        counts[node["type"]] = counts.get(node["type"], 0) + 1
    return counts


def test_primitive_scene_renders(browser, tmp_path):
    """Every primitive, a ConvexMesh, a two-body Scene, DCOL's scaled spheres and a box's contacts."""
    primitives = demo_scene()
    with Viewer() as viewer:
        for name, shape, r, q in primitives:
            viewer.add_shape(shape, r, q, name=name)
        hull = ConvexMesh.from_mesh(DATASETS / "meshes" / "tetrahedron.stl", scale=0.3)
        viewer.add_shape(hull, [0.0, 0.0, 1.2], IDENTITY, name="hull")
        scene = Scene()
        scene.add_body([Box([0.1, 0.1, 0.1]), Sphere(0.1, offset=([0.0, 0.0, 0.2], IDENTITY))], name="tower")
        scene.add_body(Box([0.2, 0.05, 0.05]), name="bar")
        viewer.add_scene(scene, [[1.5, 0.0, 0.0], [1.5, 0.5, 0.0]], [IDENTITY, IDENTITY], name="scene")
        centre_a, centre_b, radius_a, radius_b = np.array([-1.5, 0.0, 0.5]), np.array([-0.9, 0.2, 0.6]), 0.3, 0.2
        viewer.add_proximity(
            Sphere(radius_a), centre_a, IDENTITY, Sphere(radius_b), centre_b, IDENTITY, scaled=True, name="pair"
        )
        resting = ([0.0, 0.0, -1.0], IDENTITY)
        found = contacts(Box([0.2, 0.2, 0.2]), *resting, Box([1.0, 1.0, 0.1]), [0.0, 0.0, -1.3], IDENTITY, margin=0.01)
        assert len(found) == 4  # a face resting on a face: its four corners
        viewer.add_contacts(found, name="contacts")
        path = viewer.save_html(tmp_path / "primitives.html")

    meshes = len(primitives) + 1 + 3 + 4  # primitives, hull, scene shapes, a, b and their scaled copies
    page = open_page(browser, path, meshes + 6)
    nodes = page.evaluate(NODES_JS, "/")
    assert node_types(nodes) == {
        "MeshMessage": meshes,
        "PointCloudMessage": 2,  # the witness points, the contact points
        "ArrowMessage": 2,  # the pair's normal, the contacts' normals
        "LineSegmentsMessage": 1,
        "FrameMessage": 6,  # /WorldAxes and the groups /scene, /scene/tower, /scene/bar, /pair, /contacts
    }
    assert all(node["vertices"] > 0 for node in nodes.values() if node["type"] != "FrameMessage")
    assert drawn_share(page, tmp_path / "primitives.png") > DRAWN_SHARE

    # DCOL's α of two spheres is the ratio of the centres' distance to the radii's sum; the scaled
    # sphere's vertices (on the sphere, as surface_mesh puts them) are α R_a from its centre.
    alpha = np.linalg.norm(centre_b - centre_a) / (radius_a + radius_b)
    scaled = np.array(page.evaluate(MESH_VERTICES_JS, "/pair/a_scaled")).reshape(-1, 3)
    np.testing.assert_allclose(np.linalg.norm(scaled - centre_a, axis=1), alpha * radius_a, rtol=1e-5)
    # The contact normals: one arrow of two ends per contact.
    arrows = page.evaluate("() => window.__viserSceneTree.getState()['/contacts/normals'].message.props.points")
    assert len(arrows) == len(found) * 2 * 3
    page.close()


def urdf_counts(path: Path) -> tuple[int, int]:
    """The numbers of <visual> and <collision> elements of a URDF file."""
    root = ET.parse(path).getroot()
    return len(root.findall("link/visual")), len(root.findall("link/collision"))


def test_urdf_robot_renders(browser, tmp_path):
    """The cart-pole with its collision geometry on a World's ground, and a robot with a mesh file."""
    cartpole = dataset_robot_path("cartpole")
    visuals, collisions = urdf_counts(cartpole)
    x, angle = 0.3, 0.5
    mesh_file = DATASETS / "meshes" / "tetrahedron.stl"
    meshy = tmp_path / "meshy.urdf"
    meshy.write_text(
        f'<robot name="meshy"><link name="body"><visual><geometry><mesh filename="{mesh_file}" scale="0.2 0.2 0.2"/>'
        "</geometry></visual></link></robot>"
    )
    with Viewer() as viewer:
        viewer.add_robot(World(load_dataset_robot("cartpole")), [x, angle], name="robot", collision=True)
        viewer.add_robot(load_urdf(meshy), name="meshy")
        path = viewer.save_html(tmp_path / "robot.html")

    page = open_page(browser, path, visuals + collisions + 1 + 1)
    robot = page.evaluate(NODES_JS, "/robot/")
    assert sum(name.startswith("/robot/visual/") and n["type"] == "MeshMessage" for name, n in robot.items()) == visuals
    assert (
        sum(name.startswith("/robot/collision/") and n["type"] == "MeshMessage" for name, n in robot.items())
        == collisions
    )
    assert node_types(robot)["GridMessage"] == 1  # the World's ground
    # The cart slides along x from the rail's frame raised 0.095 m; the pole turns about y.
    position, quaternion = page.evaluate(POSE_JS, "/robot/visual/cart")
    np.testing.assert_allclose(position, [x, 0.0, 0.095], atol=1e-6)
    position, quaternion = page.evaluate(POSE_JS, "/robot/visual/pole")
    np.testing.assert_allclose(position, [x, 0.0, 0.095 + 0.075], atol=1e-6)
    np.testing.assert_allclose(quaternion, [0.0, np.sin(angle / 2), 0.0, np.cos(angle / 2)], atol=1e-6)
    # The mesh file's vertices as trimesh merges them, scaled; the fixed root link is the world's.
    import trimesh

    expected = trimesh.load_mesh(mesh_file)
    expected.merge_vertices()
    vertices = np.array(page.evaluate(MESH_VERTICES_JS, "/meshy/visual/world/0")).reshape(-1, 3)
    assert len(vertices) == len(expected.vertices)
    np.testing.assert_allclose(np.sort(vertices, axis=0), np.sort(0.2 * expected.vertices, axis=0), atol=1e-6)
    assert drawn_share(page, tmp_path / "robot.png") > DRAWN_SHARE
    page.close()


def seek(page, seconds: float) -> None:
    """Types a time into the page's playback bar (which pauses it there)."""
    field = page.locator("input.mantine-NumberInput-input")
    for _ in range(3):  # while playing, the bar rewrites the field: the first entry pauses it
        field.click()
        field.press("Control+a")
        field.type(f"{seconds:g}")
        page.wait_for_timeout(300)
        if field.input_value() == f"{seconds:g}":
            break
    page.wait_for_timeout(500)  # the frame's pose messages


def test_rollout_renders(browser, tmp_path):
    """100 steps of the demo's ball thrown at two boxes, one frame per step: the page shows the
    rollout's state at the time typed into its time slider's field, and the step's contacts."""
    model, q0, v0 = demo_model()
    world = World(model, dt=DT, friction=0.6, restitution=0.3)
    steps = 100
    rollout = world.rollout(q0, v0, np.zeros((steps, model.nv)), keep_steps=True)
    slow_motion = 4.0
    frame = DT * slow_motion  # playback seconds per step, at frame_rate 1 / frame
    with Viewer() as viewer:
        viewer.animate(rollout, world, name="demo", slow_motion=slow_motion, frame_rate=1.0 / frame)
        path = viewer.save_html(tmp_path / "rollout.html")

    page = open_page(browser, path, 3 + 2 + 1, prefix="/demo/")
    nodes = page.evaluate(NODES_JS, "/demo/")
    counts = node_types(nodes)
    assert counts["MeshMessage"] == 3 and counts["GridMessage"] == 1  # two boxes, a ball, the ground
    assert counts["PointCloudMessage"] == 1 and counts["ArrowMessage"] == 1
    assert drawn_share(page, tmp_path / "rollout.png") > DRAWN_SHARE
    ball = slice(14, 17)  # the ball's free joint: position, then quaternion
    for step in (0, 50, steps):
        seek(page, (step + 0.5) * frame)  # mid-frame: the frame's messages are all in
        position, _ = page.evaluate(POSE_JS, "/demo/collision/ball")
        np.testing.assert_allclose(position, rollout.q[step, ball], atol=1e-6, err_msg=f"step {step}")
        points = page.evaluate(
            "() => { const n = window.__viserSceneTree.getState()['/demo/contacts/points']; "
            "return [n.message.props.points.length / 3, n.visibility !== false]; }"
        )
        if step < steps:
            assert points == [len(rollout.steps[step].contacts), True]
        else:
            assert not points[1]  # the final state has no step, so no contacts
    page.close()


def test_empty_page_is_blank(browser, tmp_path):
    """The pixel check can fail: a page with nothing drawn shows only its background."""
    with Viewer() as viewer:
        path = viewer.save_html(tmp_path / "empty.html")
    page = open_page(browser, path, 1)
    assert drawn_share(page, tmp_path / "empty.png") < 0.001
    page.close()


def test_view_command_sets_a_floating_robot_on_the_ground(browser, tmp_path, capsys):
    """dcol view box --contacts: the free 0.2 m cube is lowered onto the ground and rests on its four
    bottom corners; the page shows it there with its four contacts."""
    output = tmp_path / "box" / "view.html"
    assert main(["view", "box", "--contacts", "--output", str(output)]) == 0
    assert str(output) in capsys.readouterr().out
    page = open_page(browser, output, 4, prefix="/robot/")
    position, _ = page.evaluate(POSE_JS, "/robot/visual/box")
    np.testing.assert_allclose(position, [0.0, 0.0, 0.1], atol=1e-9)
    points = page.evaluate("() => window.__viserSceneTree.getState()['/contacts/points'].message.props.points")
    heights = np.array(points, dtype=float).reshape(-1, 3)[:, 2]
    assert len(heights) == 4 and np.allclose(heights, 0.0, atol=1e-4)
    assert drawn_share(page, tmp_path / "box.png") > DRAWN_SHARE
    page.close()


def test_view_command_help(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["view", "--help"])
    assert exit_info.value.code == 0
    printed = capsys.readouterr().out
    assert "ROBOT_OR_URDF" in printed and "--q" in printed and "--output" in printed and "--serve" in printed


def test_view_command_writes_a_page_for_a_urdf_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["view", str(dataset_robot_path("double_pendulum")), "--q", "0.3", "-0.2"]) == 0
    page = tmp_path / "double_pendulum.html"  # the default name: the robot's
    assert page.read_text(encoding="utf-8").startswith("<!doctype html>")
    assert "page written to double_pendulum.html" in capsys.readouterr().out


def test_view_command_errors(tmp_path, capsys):
    assert main(["view", "no_such_robot", "--output", str(tmp_path / "x.html")]) == 2
    error = capsys.readouterr().err
    assert "unknown robot 'no_such_robot'" in error and "cartpole" in error and "talos" in error

    missing = tmp_path / "missing_mesh.urdf"
    missing.write_text(
        '<robot name="r"><link name="a"><visual><geometry><mesh filename="gone.stl"/></geometry></visual></link>'
        "</robot>"
    )
    assert main(["view", str(missing), "--output", str(tmp_path / "y.html")]) == 2
    error = capsys.readouterr().err
    assert "mesh file 'gone.stl' not found" in error

    assert main(["view", "cartpole", "--q", "0.1", "--output", str(tmp_path / "z.html")]) == 2
    assert "q must have shape (nq,) = (2,), got (1,)" in capsys.readouterr().err
    assert not any(tmp_path.glob("*.html"))


def test_viewer_argument_errors(tmp_path):
    box = Box([0.1, 0.1, 0.1])
    with Viewer() as viewer:
        viewer.add_shape(box, name="box")
        with pytest.raises(ValueError, match="name 'box' is already drawn"):
            viewer.add_shape(box, name="box")
        with pytest.raises(ValueError, match="name must be a non-empty string without '/'"):
            viewer.add_shape(box, name="a/b")
        with pytest.raises(ValueError, match=r"color must be 3 integers in \[0, 255\]"):
            viewer.add_shape(box, color=(0, 0, 256))
        with pytest.raises(ValueError, match=r"opacity must be in \(0, 1\]"):
            viewer.add_shape(box, opacity=0.0)
        with pytest.raises(TypeError, match="shape must be a dcol.geom shape, got str"):
            viewer.add_shape("box")
        with pytest.raises(ValueError, match=r"r must have shape \(num_bodies, 3\) = \(1, 3\)"):
            scene = Scene()
            scene.add_body(box)
            viewer.add_scene(scene, [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]], [IDENTITY, IDENTITY])
        model = load_dataset_robot("cartpole")
        with pytest.raises(ValueError, match=r"q must have shape \(nq,\) = \(2,\)"):
            viewer.add_robot(model, [0.0])
        with pytest.raises(ValueError, match="visual=False and collision=False leave nothing to draw"):
            viewer.add_robot(model, visual=False, collision=False)
        with pytest.raises(TypeError, match="robot must be a dcol.dynamics Model or World"):
            viewer.add_robot(box)
        distance = signed_distance(box, [0.0, 0.0, 0.0], IDENTITY, box, [0.5, 0.0, 0.0], IDENTITY)
        with pytest.raises(ValueError, match="need a ProximityResult"):
            viewer.add_proximity(box, [0, 0, 0], IDENTITY, box, [0.5, 0, 0], IDENTITY, result=distance, scaled=True)

        demo, q0, v0 = demo_model()
        world = World(demo, dt=DT)
        plain = world.rollout(q0, v0, np.zeros((3, demo.nv)))  # without its steps
        with pytest.raises(ValueError, match="contacts=True needs each step's contacts"):
            viewer.animate(plain, world, contacts=True)
        with pytest.raises(ValueError, match=r"rollout has configurations of 21 numbers, world's model nq = 2"):
            viewer.animate(plain, World(model))
        with pytest.raises(ValueError, match="slow_motion must be finite and > 0"):
            viewer.animate(plain, world, slow_motion=0.0)
        with pytest.raises(TypeError, match="item must be"):
            show(42, path=tmp_path / "never.html")
    assert not (tmp_path / "never.html").exists()


def test_batch_rollout_and_proximity_defaults(tmp_path):
    """A BatchRollout animates as one robot per world; a rollout kept without its steps draws no
    contacts; add_proximity computes the pair's proximity when not given one."""
    demo, q0, v0 = demo_model()
    world = World(demo, dt=DT)
    batch = world.rollout_batch(np.stack([q0, q0]), np.stack([v0, 0.5 * v0]), np.zeros((2, 5, demo.nv)))
    with Viewer() as viewer:
        assert viewer.animate(batch, world) == "/rollout0"
        assert viewer.animate(world.rollout(q0, v0, np.zeros((5, demo.nv))), world) == "/rollout1"
        a, b = Sphere(0.2), Sphere(0.3)
        assert viewer.add_proximity(a, [0, 0, 1], IDENTITY, b, [1, 0, 1], IDENTITY) == "/proximity0"
        path = viewer.save_html(tmp_path / "batch.html")
    assert path.stat().st_size > 100_000


def test_serve_answers_on_loopback():
    """The live page: serve() answers HTTP on its loopback address while it runs, then stops."""
    viewer = Viewer()
    viewer.add_shape(Sphere(0.5))
    server = threading.Thread(target=viewer.serve, kwargs={"seconds": 3.0})
    server.start()
    try:
        with urllib.request.urlopen(viewer.url, timeout=10) as response:
            assert response.status == 200 and b"<html" in response.read().lower()
    finally:
        server.join()
