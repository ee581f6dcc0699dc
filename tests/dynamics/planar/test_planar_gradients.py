"""Gradients of the planar step (LCP-physics §B) through the KKT backward pass of the dynamics LCP,
against central differences of the step itself: inside a contact mode (strict complementarity, the
same contacts on both sides of the difference), and for a jointed chain without contacts, where the
positions and the joints' anchors are differentiated too; and against the closed form of a light
body in free flight (whose interior point works on data scaled up: no contact, no joint)."""

from dataclasses import replace

import numpy as np
import pytest

from dcol.dynamics.planar import Body, Circle, FixedJoint, Hinge, PlanarWorld, PointsFeature, rectangle
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


def disk_on_a_turned_box():
    """A spinning disk landing on the top face of a turned box hinged at its centre to the world."""
    bodies = (
        Body(rectangle(2, 1), mass=2.0, restitution=0.3, friction=0.4),
        Body(Circle(0.3), mass=0.5, restitution=0.5, friction=0.6),
    )
    world = PlanarWorld(bodies, (Hinge(0, (0, 0), None, (0, 0)),), dt=0.01, post_stabilization=False)
    angle = 0.2
    face_normal, along_face = np.array([-np.sin(angle), np.cos(angle)]), np.array([np.cos(angle), np.sin(angle)])
    centre = (0.5 + 0.3 - 1e-4) * face_normal + 0.2 * along_face
    positions = np.array([[angle, 0.0, 0.0], [0.0, *centre]])
    velocities = np.array([[0.0, 0.0, 0.0], [3.0, 0.5, -1.0]])
    return world, positions, velocities


def box_over_a_ledge():
    """A tilted box sliding off the edge of a ledge: the edges overlap over part of their length, so
    clipping moves a corner along its edge."""
    ledge = Body(rectangle(1, 1), mass=1.0, restitution=0.1, friction=0.5)
    box = Body(rectangle(1, 0.5), mass=2.0, restitution=0.3, friction=0.4)
    world = PlanarWorld((ledge, box), (FixedJoint(0, None, (0, -0.5)),), dt=0.01, post_stabilization=False)
    tilt = 2e-4  # the box's left end lower: its corner and the ledge's face decide, not a tie of faces
    positions = np.array([[0, 0, -0.5], [tilt, 0.6, 0.25 - 1e-4 + 0.5 * np.sin(tilt)]])
    velocities = np.array([[0, 0, 0], [0.0, 1.0, -0.3]])
    return world, positions, velocities


def test_the_ledge_scene_has_a_clipped_contact():
    world, positions, _ = box_over_a_ledge()
    assert any(contact.feature.edge_end is not None for contact in world.contacts(positions))


def mode(feature):
    """What must not change between the sides of a central difference: the kind of each contact."""
    if isinstance(feature, PointsFeature):
        return "points"
    return feature.reference_is_b, feature.edge_end is None


@pytest.mark.parametrize("scene", [sliding_box, colliding_disks, disk_on_a_turned_box, box_over_a_ledge])
def test_step_vjp_matches_central_differences(scene):
    world, positions, velocities = scene()
    rng = np.random.default_rng(7)
    forces = rng.normal(size=positions.shape)
    step = world.step(positions, velocities, forces)
    solution = step.solution
    assert solution.status == LCPStatus.SOLVED and step.contacts
    assert np.maximum(solution.s, solution.z).min() > 1e-6  # strictly complementary: a contact mode
    grad_v, grad_p = rng.normal(size=positions.shape), rng.normal(size=positions.shape)
    cot = world.step_vjp(step, positions, velocities, grad_v, grad_p)

    def loss(world=world, positions=positions, velocities=velocities, forces=forces):
        result = world.step(positions, velocities, forces)
        assert [mode(c.feature) for c in result.contacts] == [mode(c.feature) for c in step.contacts]
        return np.sum(grad_v * result.velocities) + np.sum(grad_p * result.positions)

    def body_changed(name, index, value):
        bodies = list(world.bodies)
        bodies[index] = replace(bodies[index], **{name: value})
        return replace(world, bodies=tuple(bodies))

    eps = 1e-6
    for name in ("positions", "velocities", "forces"):
        direction = rng.normal(size=positions.shape)
        base = dict(positions=positions, velocities=velocities, forces=forces)[name]
        expected = (loss(**{name: base + eps * direction}) - loss(**{name: base - eps * direction})) / (2 * eps)
        assert np.sum(getattr(cot, name) * direction) == pytest.approx(expected, rel=1e-5, abs=1e-7), name
    for name in ("mass", "restitution", "friction"):
        for index, body in enumerate(world.bodies):
            value = getattr(body, name)
            expected = (
                loss(world=body_changed(name, index, value + eps)) - loss(world=body_changed(name, index, value - eps))
            ) / (2 * eps)
            assert getattr(cot, name)[index] == pytest.approx(expected, rel=1e-5, abs=1e-7), (name, index)
    # 𝓘 on its own (mass fixed), and the mass with 𝓘 given, so that it no longer follows the mass.
    given = replace(world, bodies=tuple(replace(body, moment_of_inertia=body.inertia) for body in world.bodies))
    cot_given = given.step_vjp(given.step(positions, velocities, forces), positions, velocities, grad_v, grad_p)
    for index, body in enumerate(world.bodies):
        for name, value, got in (
            ("moment_of_inertia", body.inertia, cot.inertia[index]),
            ("mass", body.mass, cot_given.mass[index]),
        ):
            up, down = (replace(given.bodies[index], **{name: value + sign * eps}) for sign in (1, -1))
            expected = (
                loss(world=replace(given, bodies=given.bodies[:index] + (up,) + given.bodies[index + 1 :]))
                - loss(world=replace(given, bodies=given.bodies[:index] + (down,) + given.bodies[index + 1 :]))
            ) / (2 * eps)
            assert got == pytest.approx(expected, rel=1e-5, abs=1e-7), (name, index)
    # The joints' anchors (a hinge on a body, and world points, which the step does not depend on).
    for index, joint in enumerate(world.joints):
        for slot, name in enumerate(("anchor_a", "anchor_b")):
            if not hasattr(joint, name):
                continue
            direction = rng.normal(size=2)
            changed = []
            for sign in (1, -1):
                moved = list(world.joints)
                moved[index] = replace(joint, **{name: getattr(joint, name) + sign * eps * direction})
                changed.append(loss(world=replace(world, joints=tuple(moved))))
            expected = (changed[0] - changed[1]) / (2 * eps)
            assert cot.anchors[index, slot] @ direction == pytest.approx(expected, rel=1e-5, abs=1e-7), (index, name)


def test_free_flight_gradients_are_the_closed_form():
    """v_{t+dt} = v_t + dt (𝓜⁻¹ f + g), p_{t+dt} = p_t + dt v_{t+dt} for a light disk (𝓘 = m r²/2),
    whose LCP has no rows: every cotangent in closed form."""
    radius, mass, dt = 0.2, 0.05, 0.01
    world = PlanarWorld((Body(Circle(radius), mass, restitution=0.5, friction=0.3),), dt=dt)
    rng = np.random.default_rng(11)
    positions, velocities, forces = rng.normal(size=(3, 1, 3))
    grad_v, grad_p = rng.normal(size=(2, 1, 3))
    step = world.step(positions, velocities, forces)
    assert not step.contacts and step.solution.status == LCPStatus.SOLVED
    cot = world.step_vjp(step, positions, velocities, grad_v, grad_p)
    through_velocity = grad_v + dt * grad_p
    inertia = 0.5 * mass * radius**2
    diagonal = np.array([inertia, mass, mass])
    np.testing.assert_allclose(cot.velocities, through_velocity, rtol=1e-12)
    np.testing.assert_allclose(cot.forces, dt * through_velocity / diagonal, rtol=1e-12)
    np.testing.assert_allclose(cot.positions, grad_p, rtol=1e-12)
    # ∂v_{t+dt}/∂m = −dt f / m² (𝓘 = m r²/2 moving along), ∂ω_{t+dt}/∂𝓘 = −dt τ / 𝓘².
    assert cot.mass[0] == pytest.approx(-dt * np.sum(through_velocity * forces / (diagonal * mass)), rel=1e-12)
    assert cot.inertia[0] == pytest.approx(-dt * through_velocity[0, 0] * forces[0, 0] / inertia**2, rel=1e-12)
    np.testing.assert_array_equal(cot.restitution, [0.0])
    np.testing.assert_array_equal(cot.friction, [0.0])


def test_step_vjp_takes_a_step_of_the_engine():
    world, positions, velocities = sliding_box()
    step = world.step(positions, velocities)
    with pytest.raises(TypeError, match="step must be a PlanarStep that PlanarWorld.step or step_batch returned"):
        world.step_vjp(replace(step, native=None), positions, velocities)
    with pytest.raises(ValueError, match="grad_positions must have shape"):
        world.step_vjp(step, positions, velocities, grad_positions=np.zeros((3, 3)))


def test_jointed_chain_gradients_match_central_differences():
    """Two links hinged to the world and to each other, a disk welded to the second: the positions
    turn the joints' arms, and the anchors are parameters of 𝓙_e."""
    bodies = (Body(rectangle(1.0, 0.1), 1.0), Body(rectangle(0.8, 0.1), 0.5), Body(Circle(0.2), 0.3))
    joints = (
        Hinge(0, (-0.5, 0.0), None, (0.0, 0.0)),
        Hinge(1, (-0.4, 0.0), 0, (0.5, 0.0)),
        FixedJoint(2, 1, (0.4, 0.0), angle=0.2),
    )
    world = PlanarWorld(bodies, joints, dt=0.01, post_stabilization=False)
    rng = np.random.default_rng(3)
    positions = np.array([[0.3, 0.48, 0.15], [-0.4, 1.3, 0.2], [-0.2, 1.7, 0.1]]) + 0.01 * rng.normal(size=(3, 3))
    velocities, forces = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    step = world.step(positions, velocities, forces)
    assert step.solution.status == LCPStatus.SOLVED and not step.contacts
    grad_v, grad_p = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    cot = world.step_vjp(step, positions, velocities, grad_v, grad_p)

    def loss(world=world, positions=positions, velocities=velocities, forces=forces):
        result = world.step(positions, velocities, forces)
        return np.sum(grad_v * result.velocities) + np.sum(grad_p * result.positions)

    eps = 1e-6
    for name in ("positions", "velocities", "forces"):
        direction = rng.normal(size=(3, 3))
        base = dict(positions=positions, velocities=velocities, forces=forces)[name]
        expected = (loss(**{name: base + eps * direction}) - loss(**{name: base - eps * direction})) / (2 * eps)
        assert np.sum(getattr(cot, name) * direction) == pytest.approx(expected, rel=1e-6, abs=1e-8), name
    for index, field in [(0, "anchor_a"), (1, "anchor_a"), (1, "anchor_b"), (2, "anchor_b")]:
        direction = rng.normal(size=2)
        changed = []
        for sign in (1, -1):
            moved = list(joints)
            moved[index] = replace(joints[index], **{field: getattr(joints[index], field) + sign * eps * direction})
            changed.append(loss(world=replace(world, joints=tuple(moved))))
        expected = (changed[0] - changed[1]) / (2 * eps)
        got = cot.anchors[index, 0 if field == "anchor_a" else 1] @ direction
        assert got == pytest.approx(expected, rel=1e-6, abs=1e-8), (index, field)
    for index in range(3):
        up, down = (replace(world.bodies[index], mass=world.bodies[index].mass + s * eps) for s in (1, -1))
        expected = (
            loss(world=replace(world, bodies=world.bodies[:index] + (up,) + world.bodies[index + 1 :]))
            - loss(world=replace(world, bodies=world.bodies[:index] + (down,) + world.bodies[index + 1 :]))
        ) / (2 * eps)
        assert cot.mass[index] == pytest.approx(expected, rel=1e-6, abs=1e-8), index
