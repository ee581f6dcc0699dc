"""The planar engine's PyTorch functions: torch.autograd.gradcheck (central differences of the
forward pass) on a step in a contact mode, on a step of a jointed chain, on a short rollout of a box
sliding on the ground and on a batch of scenes; a batch is its scenes stepped one by one."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from dcol.dynamics.planar import Body, FixedJoint, Hinge, PlanarWorld, rectangle  # noqa: E402
from dcol.dynamics.planar import torch as planar_torch  # noqa: E402


def tensor(values):
    return torch.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


def box_on_ground(vertical_speed, restitution):
    ground = Body(rectangle(20, 1), mass=1.0, restitution=0.2, friction=0.3)
    box = Body(rectangle(1, 0.5), mass=2.0, restitution=restitution, friction=0.5)
    world = PlanarWorld((ground, box), (FixedJoint(0, None, (0, -0.5)),), dt=0.01, post_stabilization=False)
    positions = [[0, 0, -0.5], [0, 0.3, 0.25 + 2e-4]]
    velocities = [[0, 0, 0], [0.0, 1.5, vertical_speed]]
    return world, positions, velocities


def test_step_gradcheck_in_a_contact_mode():
    world, positions, velocities = box_on_ground(-0.8, 0.6)
    rng = np.random.default_rng(2)
    inputs = (
        tensor(positions),
        tensor(velocities),
        tensor(rng.normal(size=(2, 3))),
        tensor([1.0, 2.0]),
        tensor([0.2, 0.6]),
        tensor([0.3, 0.5]),
        tensor([1.5, 0.2]),  # moments of inertia
    )
    assert torch.autograd.gradcheck(lambda *args: planar_torch.step(world, *args), inputs, atol=1e-6)


def test_step_gradcheck_on_a_jointed_chain():
    bodies = (Body(rectangle(1.0, 0.1), 1.0), Body(rectangle(0.8, 0.1), 0.5))
    joints = (Hinge(0, (-0.5, 0.0), None, (0.0, 0.0)), Hinge(1, (-0.4, 0.0), 0, (0.5, 0.0)))
    world = PlanarWorld(bodies, joints, dt=0.01, post_stabilization=False)
    inputs = (tensor([[0.3, 0.48, 0.15], [-0.4, 1.3, 0.2]]), tensor([[1.0, 0.0, 0.5], [-0.5, 0.2, 0.1]]))
    assert torch.autograd.gradcheck(lambda *args: planar_torch.step(world, *args), inputs, atol=1e-6)


def test_rollout_gradcheck_of_a_sliding_box():
    world, positions, velocities = box_on_ground(0.0, 0.0)
    forces = np.zeros((4, 2, 3))
    forces[:, 1, 1] = 1.0
    inputs = (tensor(positions), tensor(velocities), tensor(forces), tensor([1.0, 2.0]))
    assert torch.autograd.gradcheck(lambda *args: planar_torch.rollout(world, *args), inputs, atol=1e-6)


def test_bad_tensors_are_named():
    world, positions, velocities = box_on_ground(0.0, 0.0)
    with pytest.raises(TypeError, match="positions must have dtype torch.float64"):
        planar_torch.step(world, torch.zeros(2, 3, dtype=torch.float32), tensor(velocities))
    with pytest.raises(ValueError, match=r"mass must have shape \(number of bodies,\) = \(2,\)"):
        planar_torch.step(world, tensor(positions), tensor(velocities), mass=tensor([1.0]))
    with pytest.raises(TypeError, match="world must be a dcol.dynamics.planar.PlanarWorld"):
        planar_torch.step(None, tensor(positions), tensor(velocities))  # type: ignore[arg-type]


def test_batched_step_is_each_scene_stepped_with_gradients():
    """Two scenes of the sliding-box world, the mass per scene: each row of the batch is the single
    scene's step, and gradcheck holds over the batch."""
    world, positions, velocities = box_on_ground(-0.8, 0.6)
    batch_positions = tensor([positions, np.add(positions, [[0, 0, 0], [0.05, 0.1, 0.0]])])
    batch_velocities = tensor([velocities, np.multiply(velocities, 0.5)])
    masses = tensor([[1.0, 2.0], [1.0, 3.0]])
    stepped, _ = planar_torch.step(world, batch_positions, batch_velocities, mass=masses)
    for index in range(2):
        single, _ = planar_torch.step(world, batch_positions[index], batch_velocities[index], mass=masses[index])
        torch.testing.assert_close(stepped[index], single, rtol=0, atol=0)
    assert torch.autograd.gradcheck(
        lambda p, v, m: planar_torch.step(world, p, v, mass=m), (batch_positions, batch_velocities, masses), atol=1e-6
    )


def test_batched_rollout_is_each_scenes_rollout():
    world, positions, velocities = box_on_ground(0.0, 0.0)
    forces = torch.zeros(3, 2, 2, 3, dtype=torch.float64)
    forces[:, 1, 1, 1] = 2.0  # the second scene's box is pushed
    batch = tensor([positions, positions]), tensor([velocities, velocities])
    trajectories, _ = planar_torch.rollout(world, *batch, forces)
    assert trajectories.shape == (4, 2, 2, 3)
    for index in range(2):
        single, _ = planar_torch.rollout(world, tensor(positions), tensor(velocities), forces[:, index])
        torch.testing.assert_close(trajectories[:, index], single, rtol=0, atol=0)
    assert not torch.equal(trajectories[:, 0], trajectories[:, 1])
