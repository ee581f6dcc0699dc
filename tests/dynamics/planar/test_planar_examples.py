"""The planar engine's example scripts: examples/planar_mass_inference.py recovers the mass it
simulated the observation with; examples/planar_scenes.py's chain and break keep their constraints;
examples/planar_cartpole.py balances its pole and swings it up."""

import runpy
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_mass_inference_recovers_the_known_mass():
    example = runpy.run_path(str(EXAMPLES / "planar_mass_inference.py"), run_name="planar_mass_inference")
    true_mass = 2.5
    observed, _ = example["final_x"](true_mass)
    estimates = example["infer_mass"](observed, guess=1.0)
    assert estimates[-1] == pytest.approx(true_mass, abs=1e-4)
    assert len(estimates) < 10  # Gauss–Newton with exact derivatives converges fast


def test_scenes_keep_their_joints_contacts_and_momentum():
    """examples/planar_scenes.py: the chain reaches the wall without going into it and its hinges
    stay closed; the pyramid of boxes stands still; the break keeps the balls' total momentum (the
    impulses are internal)."""
    example = runpy.run_path(str(EXAMPLES / "planar_scenes.py"), run_name="planar_scenes")
    world, positions = example["chain_against_a_wall"]()
    swing = example["run"](world, positions, np.zeros_like(positions), 300)
    assert swing["touching"] > 0
    assert swing["joint_error"] < 1e-3
    assert swing["penetration"] < world.contact_margin
    stack, boxes = example["pyramid"]()
    rest = example["run"](stack, boxes, np.zeros_like(boxes), 100)
    np.testing.assert_allclose(rest["trajectory"][-1], boxes, atol=1e-6)  # the pyramid stands
    assert rest["penetration"] < stack.contact_margin
    table, balls, cue = example["billiards_break"]()
    shot = example["run"](table, balls, cue, 200)
    masses = np.array([body.mass for body in table.bodies])
    np.testing.assert_allclose(masses @ shot["velocities"][:, 1:], masses @ cue[:, 1:], atol=1e-9)
    assert np.count_nonzero(np.linalg.norm(shot["velocities"][:, 1:], axis=1) > 0.1) > 5  # the rack broke up
    assert shot["penetration"] < table.contact_margin


def test_cartpole_is_balanced_by_gradients_through_the_engine():
    """examples/planar_cartpole.py: one L-BFGS iteration through the torch rollout takes the cost
    down fiftyfold and leaves the pole near upright, where without force it falls over."""
    pytest.importorskip("torch")
    example = runpy.run_path(str(EXAMPLES / "planar_cartpole.py"), run_name="planar_cartpole")
    pushes, costs = example["balance"](iterations=1)
    assert costs[-1] < costs[0] / 50
    world, positions, velocities = example["cart_pole"]()
    pole = example["POLE"]
    balanced, _ = example["rollout"](world, positions, velocities, pushes)
    fallen, _ = example["rollout"](world, positions, velocities, 0 * pushes)
    assert abs(float(balanced[-1, pole, 0])) < 0.1 < abs(float(fallen[-1, pole, 0]))


def test_cartpole_is_swung_up_by_gradients_through_the_engine():
    """examples/planar_cartpole.py's swing-up: two L-BFGS iterations from zero force bring the
    hanging pole to within 0.2 rad of upright (any number of turns) and nearly at rest at the end,
    where without force it stays hanging."""
    pytest.importorskip("torch")
    example = runpy.run_path(str(EXAMPLES / "planar_cartpole.py"), run_name="planar_cartpole")
    pushes, costs = example["swing_up"](iterations=2)
    assert costs[-1] < costs[0] / 3
    world, positions, velocities = example["cart_pole"](example["SWING_UP_START"], example["SWING_UP_DT"])
    pole = example["POLE"]
    swung, swung_velocities = example["rollout"](world, positions, velocities, pushes)
    hanging, _ = example["rollout"](world, positions, velocities, 0 * pushes)
    assert np.cos(float(swung[-1, pole, 0])) > np.cos(0.2)
    assert abs(float(swung_velocities[-1, pole, 0])) < 0.5
    assert np.cos(hanging[:, pole, 0].numpy()).max() < -0.99
