"""Progress bars (dcol.progress) of World.rollout and rollout_batch: shown for long runs when standard
error is a terminal, never for short ones or with progress=False, and without changing any result."""

import os
import sys

import numpy as np
import pytest

from dcol.dynamics import ROLLOUT_PROGRESS_STEPS, World, load_dataset_robot, neutral
from dcol.progress import progress_bar
from tests.support.optional import oracle


@pytest.fixture
def terminal(monkeypatch, capsys):
    """Standard error as a terminal (pytest's capture is not one): the bars' default then depends on
    the amount of work alone. A function that makes it so (capsys replaces sys.stderr only once the
    test runs) and returns what was written to it since the last call."""

    def written() -> str:
        monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
        return capsys.readouterr().err

    return written


def _cartpole():
    model = load_dataset_robot("cartpole")
    return World(model, ground=False), neutral(model) + 0.1, np.zeros(model.nv)


def test_the_default_shows_a_bar_only_for_long_runs_on_a_terminal(terminal, monkeypatch):
    terminal()
    for total, shown in ((99, False), (100, True)):
        with progress_bar(total, None, minimum=100, description="work", unit="step") as bar:
            bar.update(total)
        printed = terminal()
        assert ("work: 100%" in printed) == shown, printed
    with progress_bar(100, False, minimum=1, description="work", unit="step") as bar:
        bar.update(100)
    assert terminal() == ""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)  # a log file or a pipe
    with progress_bar(10**6, None, minimum=1, description="work", unit="step") as bar:
        bar.update(10**6)
    assert terminal() == ""


def test_progress_must_be_a_bool_or_none():
    with pytest.raises(TypeError, match="progress must be True, False or None, got 'yes'"):
        progress_bar(1, "yes", minimum=1, description="work", unit="step")  # type: ignore[arg-type]


def test_long_rollouts_show_progress_and_short_ones_do_not(terminal):
    world, q, v = _cartpole()
    terminal()
    long = world.rollout(q, v, np.zeros((ROLLOUT_PROGRESS_STEPS, 2)))
    assert "World.rollout: 100%" in terminal() and long.q.shape == (ROLLOUT_PROGRESS_STEPS + 1, 2)
    world.rollout(q, v, np.zeros((ROLLOUT_PROGRESS_STEPS - 1, 2)))
    world.rollout(q, v, np.zeros((ROLLOUT_PROGRESS_STEPS, 2)), progress=False)
    assert terminal() == ""
    world.rollout(q, v, np.zeros((3, 2)), keep_steps=True, progress=True)
    assert "3/3" in terminal()


def test_rollout_batch_shows_progress_by_groups_of_worlds_with_the_same_results(terminal):
    world, q, v = _cartpole()
    count, steps = 8, ROLLOUT_PROGRESS_STEPS // 4
    rng = np.random.default_rng(0)
    q0, v0 = q + 0.1 * rng.normal(size=(count, 2)), v + rng.normal(size=(count, 2))
    taus = rng.normal(size=(count, steps, 2))
    terminal()
    shown = world.rollout_batch(q0, v0, taus, derivatives=True)
    printed = terminal()
    assert "World.rollout_batch: 100%" in printed and f"{count * steps}/{count * steps}" in printed
    hidden = world.rollout_batch(q0, v0, taus, derivatives=True, progress=False)
    assert terminal() == ""
    for name in ("q", "v", "contacts"):
        assert np.array_equal(getattr(shown, name), getattr(hidden, name)), name
    for name, block in zip(hidden.jacobians._fields, hidden.jacobians):
        assert np.array_equal(getattr(shown.jacobians, name), block), name


def test_convex_decomposition_shows_the_method_then_the_hulls(terminal, tmp_path):
    """A bar while CoACD runs, then over the parts' hulls; none by default for a cached result, and
    the same parts with or without a bar."""
    oracle("coacd")
    from dcol.geom import convex_decomposition

    block = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "datasets", "meshes", "l_block.obj")
    terminal()
    parts = convex_decomposition(block, cache_dir=tmp_path)
    printed = terminal()
    assert f"coacd on mesh file {block!r}:   0%" in printed
    assert f"hulls of the coacd parts of mesh file {block!r}: 100%" in printed
    assert f"{len(parts)}/{len(parts)}" in printed
    cached = convex_decomposition(block, cache_dir=tmp_path)
    assert terminal() == ""
    assert [part.mesh.vertices.tolist() for part in cached] == [part.mesh.vertices.tolist() for part in parts]
    convex_decomposition(block, cache_dir=tmp_path, progress=True)
    assert "hulls of the coacd parts" in terminal()
