"""Gradients of the planar step (LCP-physics §B) through the KKT backward pass of the dynamics LCP,
against central differences of the step itself inside a contact mode (strict complementarity, the
same contacts on both sides of the difference)."""

from dataclasses import replace

import numpy as np
import pytest

from dcol.dynamics.planar import Body, Circle, FixedJoint, PlanarWorld, rectangle
from dcol.solvers import LCPStatus


def sliding_box():
    """A box landing on the ground while sliding (restitution and friction both active)."""
    ground = Body(rectangle(20, 1), mass=1.0, restitution=0.2, friction=0.3)
    box = Body(rectangle(1, 0.5), mass=2.0, restitution=0.6, friction=0.5)
    world = PlanarWorld((ground, box), (FixedJoint(0, None, (0, -0.5)),), dt=0.01, post_stabilization=False)
    positions = np.array([[0, 0, -0.5], [0, 0.3, 0.25 + 2e-4]])
    velocities = np.array([[0, 0, 0], [0.0, 1.5, -0.8]])
    return world, positions, velocities


def colliding_disks():
    """Two disks in a glancing collision with friction, gravity sideways."""
    bodies = (
        Body(Circle(0.5), mass=1.0, restitution=0.5, friction=0.4),
        Body(Circle(0.3), mass=3.0, restitution=0.9, friction=0.2),
    )
    world = PlanarWorld(bodies, gravity=(0.5, -1.0), dt=0.01, post_stabilization=False)
    direction = np.array([np.cos(0.4), np.sin(0.4)])
    positions = np.array([[0.1, 0, 0], [0.2, *((0.8 + 2e-4) * direction)]])
    velocities = np.array([[0.3, 1.0, 0.2], [-0.5, -1.0, 0.1]])
    return world, positions, velocities


@pytest.mark.parametrize("scene", [sliding_box, colliding_disks])
def test_step_vjp_matches_central_differences(scene):
    world, positions, velocities = scene()
    rng = np.random.default_rng(7)
    forces = rng.normal(size=positions.shape)
    step = world.step(positions, velocities, forces)
    solution = step.solution
    assert solution.status == LCPStatus.SOLVED and step.contacts
    assert np.maximum(solution.s, solution.z).min() > 1e-6  # strictly complementary: a contact mode
    grad_v, grad_p = rng.normal(size=positions.shape), rng.normal(size=positions.shape)
    cot = world.step_vjp(step, velocities, grad_v, grad_p)

    def loss(world=world, velocities=velocities, forces=forces):
        result = world.step(positions, velocities, forces)
        assert len(result.contacts) == len(step.contacts)
        return np.sum(grad_v * result.velocities) + np.sum(grad_p * result.positions)

    def body_changed(name, index, value):
        bodies = list(world.bodies)
        bodies[index] = replace(bodies[index], **{name: value})
        return replace(world, bodies=tuple(bodies))

    eps = 1e-6
    for name in ("velocities", "forces"):
        direction = rng.normal(size=positions.shape)
        base = dict(velocities=velocities, forces=forces)[name]
        expected = (loss(**{name: base + eps * direction}) - loss(**{name: base - eps * direction})) / (2 * eps)
        assert np.sum(getattr(cot, name) * direction) == pytest.approx(expected, rel=1e-5, abs=1e-7), name
    for name in ("mass", "restitution", "friction"):
        for index, body in enumerate(world.bodies):
            value = getattr(body, name)
            expected = (
                loss(world=body_changed(name, index, value + eps)) - loss(world=body_changed(name, index, value - eps))
            ) / (2 * eps)
            assert getattr(cot, name)[index] == pytest.approx(expected, rel=1e-5, abs=1e-7), (name, index)
