"""``dcol demo``: the function, the command line, and the hint when matplotlib is missing."""

import subprocess
import sys

import numpy as np
import pytest

from dcol.demo import run_demo
from dcol.solvers import Status

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_run_demo(tmp_path, capsys):
    output = tmp_path / "demo.png"
    summary = run_demo(output)
    assert summary["output"] == output
    assert output.read_bytes().startswith(PNG_SIGNATURE) and output.stat().st_size > 10_000
    pairs = summary["pairs"]
    assert len(pairs) == 21
    assert len({frozenset((pair["a"], pair["b"])) for pair in pairs}) == 21
    assert all(pair["result"].status == Status.SOLVED for pair in pairs)
    # The scene is built to show both penetrating and separated pairs.
    assert 0 < summary["touching"] == sum(pair["result"].alpha <= 1.0 for pair in pairs) < 21
    # The distance column is signed: negative exactly for the pairs DCOL finds overlapping (α < 1).
    for pair in pairs:
        assert (pair["distance"] < 0.0) == (pair["result"].alpha < 1.0), pair
    printed = capsys.readouterr().out
    assert "polytope-capsule" in printed and "ellipsoid-polygon" in printed and "21 pairs" in printed
    assert "distance: metres, negative by the penetration depth when overlapping" in printed


@pytest.mark.slow
def test_command_line(tmp_path):
    output = tmp_path / "cli.png"
    done = subprocess.run(
        [sys.executable, "-m", "dcol", "demo", "--output", str(output)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert output.read_bytes().startswith(PNG_SIGNATURE)
    assert "SOLVED" in done.stdout and str(output) in done.stdout
    assert (tmp_path / "cli-simulation.png").read_bytes().startswith(PNG_SIGNATURE)
    assert (tmp_path / "cli-simulation.html").read_text().startswith("<!doctype html>")
    assert "d(far box final position)/d(ball initial velocity)" in done.stdout


def test_simulation_demo(tmp_path):
    """The ball reaches the boxes and pushes the far one along +x; the gradient is finite and says a
    faster throw pushes it farther. (Step Jacobians are checked against finite differences in
    test_simulation_derivatives; over the whole rollout the contact events make differences useless.)"""
    from dcol.simulation_demo import run_simulation_demo

    summary = run_simulation_demo(tmp_path / "sim.png")
    assert summary["output"].read_bytes().startswith(PNG_SIGNATURE)
    # The animation beside the plot; tests/test_viz.py opens such pages in a browser.
    assert summary["animation"] == tmp_path / "sim.html"
    assert summary["animation"].read_text().startswith("<!doctype html>")
    assert summary["q"][-1, 7] > 0.3 and summary["contacts"].min() >= 8  # two boxes resting: 4 + 4
    assert summary["energy"][-1] < summary["energy"][0]  # friction and restitution < 1 dissipate
    assert np.all(np.isfinite(summary["gradient"]))
    # Bounded by the physics: a throw faster by 1 m/s gives the far box at most (1 + e) m_ball/m_box
    # m/s more, for at most the rollout's 0.5 s; step Jacobians of near-degenerate contact sets break it.
    assert np.abs(summary["gradient"]).max() < 0.5 * (1.0 + 0.3) * 2.0
    assert summary["gradient"][0, 0] > 0.0


@pytest.mark.parametrize("package", ["matplotlib", "viser"])
def test_missing_viz_extra_gives_install_hint(package, tmp_path, monkeypatch, capsys):
    from dcol.cli import main

    monkeypatch.setitem(sys.modules, package, None)  # makes `import package` fail
    output = tmp_path / "never.png"
    with pytest.raises(ImportError, match=r'pip install "dcol\[viz\]"'):
        run_demo(output)
    assert "21 pairs" in capsys.readouterr().out  # the table needs no extra
    assert main(["demo", "--output", str(output)]) == 1
    printed = capsys.readouterr()
    assert 'pip install "dcol[viz]"' in printed.err and "the tables above need no extra" in printed.err
    assert "21 pairs" in printed.out and "energy (J)" in printed.out and "d(far box final position)" in printed.out
    assert not output.exists() and not (tmp_path / "never-simulation.png").exists()


def test_command_line_version(capsys):
    from dcol import __version__
    from dcol.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"dcol {__version__}"


def test_demo_makes_its_folder_and_names_the_files_it_wrote(tmp_path, capsys):
    """An output in a folder that does not exist yet, without a suffix: the folder is made, and the
    files written are the ones reported (matplotlib adds .png to a bare name)."""
    from dcol.cli import main

    assert main(["demo", "--output", str(tmp_path / "new" / "picture")]) == 0
    printed = capsys.readouterr().out
    for name in ("picture.png", "picture-simulation.png", "picture-simulation.html"):
        path = tmp_path / "new" / name
        assert path.stat().st_size > 10_000
        assert str(path) in printed


def test_info_names_the_kernels_and_extras(capsys):
    from dcol import __version__, _native
    from dcol.cli import main

    assert main(["info"]) == 0
    printed = capsys.readouterr().out
    kernel, lanes = _native.proximity_kernel_info()
    assert kernel in ("avx2+fma", "baseline") and lanes == (4 if kernel == "avx2+fma" else 2)
    assert printed.startswith(f"dcol {__version__} ")
    assert f"proximity kernels: {kernel}, {lanes} pose pairs at once" in printed
    for extra in ("[viz]", "[torch]", "[mesh]", "[robots]"):
        assert f"extra {extra}: " in printed
