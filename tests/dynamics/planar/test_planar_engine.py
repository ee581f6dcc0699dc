"""The planar engine's step (LCP-physics §A.1, §A.5, §A.7) against closed forms: free fall, head-on
collisions with restitution, a box sliding to a stop, a resting stack, a hinged pendulum's period and
its joint's drift with and without post-stabilization; and a pendulum's step, a disk on a ramp and a
sliding box against the 3-D World."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from scipy.special import ellipk

from dcol.dynamics import ModelBuilder, World, load_dataset_robot
from dcol.dynamics.planar import Body, Circle, FixedJoint, Hinge, PlanarWorld, rectangle
from dcol.geom import Sphere
from dcol.solvers import LCPStatus
from tests.dynamics.test_simulation_physics import sliding_run
from tests.support.bodies import floating_bodies, pendulum_model

G = 9.81


def rollout(world, positions, velocities, steps):
    positions, velocities = np.asarray(positions, dtype=float), np.asarray(velocities, dtype=float)
    for _ in range(steps):
        step = world.step(positions, velocities)
        assert step.solution.status == LCPStatus.SOLVED
        positions, velocities = step.positions, step.velocities
    return positions, velocities, step


def test_free_fall_follows_the_discrete_and_the_continuous_closed_forms():
    """Explicit Euler on v_{t+dt}: v_N = v₀ − g N dt, y_N = y₀ + v₀ N dt − g dt² N(N + 1)/2, within
    g t dt / 2 of the parabola."""
    dt, steps, v0 = 0.01, 50, 3.0
    world = PlanarWorld((Body(rectangle(1, 2), mass=2.0),), dt=dt)
    positions, velocities, _ = rollout(world, [[0.2, 1.0, 5.0]], [[0.5, -1.0, v0]], steps)
    t = steps * dt
    np.testing.assert_allclose(velocities, [[0.5, -1.0, v0 - G * t]], rtol=1e-12)
    y_discrete = 5.0 + v0 * t - G * dt**2 * steps * (steps + 1) / 2
    np.testing.assert_allclose(positions, [[0.2 + 0.5 * t, 1.0 - t, y_discrete]], rtol=1e-12)
    assert abs(y_discrete - (5.0 + v0 * t - G * t**2 / 2)) <= G * t * dt / 2 + 1e-12


@pytest.mark.parametrize("k", [0.0, 0.5, 1.0])
def test_head_on_circles_conserve_momentum_with_the_restitutions_exit_speeds(k):
    """Newton's restitution law: v₁' = (m₁v₁ + m₂v₂ + m₂k(v₂ − v₁)) / (m₁ + m₂), and alike for v₂'."""
    m1, m2, v1, v2 = 1.0, 3.0, 2.0, -1.0
    bodies = (Body(Circle(0.5), m1, restitution=k), Body(Circle(0.3), m2, restitution=k))
    world = PlanarWorld(bodies, gravity=(0, 0), dt=0.01)
    _, velocities, _ = rollout(world, [[0, -1.0, 0], [0, 1.0, 0]], [[0, v1, 0], [0, v2, 0]], 100)
    total = m1 * v1 + m2 * v2
    expected = [(total + m2 * k * (v2 - v1)) / (m1 + m2), (total + m1 * k * (v1 - v2)) / (m1 + m2)]
    np.testing.assert_allclose(velocities[:, 1], expected, atol=1e-4)
    assert m1 * velocities[0, 1] + m2 * velocities[1, 1] == pytest.approx(total, abs=1e-8)
    np.testing.assert_allclose(velocities[:, [0, 2]], 0.0, atol=1e-8)


def ground_and(*bodies, dt=0.01, **world):
    """A wide static box whose top face is y = 0 (welded to the world), then the given bodies."""
    ground = Body(rectangle(20, 1), friction=bodies[0].friction)
    return PlanarWorld((ground, *bodies), (FixedJoint(0, None, (0, -0.5)),), dt=dt, **world)


def test_box_sliding_with_friction_stops_at_v2_over_2_mu_g():
    """Constant deceleration μg: the discrete sum dt Σ_k (v₀ − k μ g dt) over the steps with v > 0,
    within v₀ dt of the continuous v₀²/2μg."""
    mu, v0, dt = 0.5, 2.0, 0.002
    world = ground_and(Body(rectangle(1, 1), friction=mu), dt=dt)
    steps = int(v0 / (mu * G * dt)) + 20
    positions, velocities, _ = rollout(world, [[0, 0, -0.5], [0, 0, 0.5]], [[0, 0, 0], [0, v0, 0]], steps)
    moving = np.arange(1, int(v0 / (mu * G * dt)) + 1)
    discrete = dt * np.sum(v0 - moving * mu * G * dt)
    assert positions[1, 1] == pytest.approx(discrete, abs=1e-6)
    assert abs(positions[1, 1] - v0**2 / (2 * mu * G)) <= v0 * dt
    np.testing.assert_allclose(velocities, 0.0, atol=1e-6)
    assert positions[1, 2] == pytest.approx(0.5, abs=1e-6)


def test_resting_stack_does_not_interpenetrate():
    boxes = [Body(rectangle(1, 1), friction=0.5) for _ in range(3)]
    world = ground_and(*boxes)
    start = [[0, 0, -0.5]] + [[0, 0.01 * i, 0.5 + 1.0005 * i] for i in range(3)]
    positions, velocities, step = rollout(world, start, np.zeros((4, 3)), 200)
    assert len(step.contacts) == 6
    assert min(contact.gap for contact in world.contacts(positions)) >= -1e-6
    np.testing.assert_allclose(positions[1:, 1], [0.0, 0.01, 0.02], atol=1e-6)
    np.testing.assert_allclose(velocities, 0.0, atol=1e-5)


def pendulum(post_stabilization):
    """A disk of radius 0.1 hung 1 m below a world hinge, released at 0.5 rad."""
    world = PlanarWorld(
        (Body(Circle(0.1), mass=1.0),),
        (Hinge(0, (0, 1.0), None, (0, 0)),),
        dt=1e-3,
        post_stabilization=post_stabilization,
    )
    angle = 0.5
    return world, np.array([[angle, np.sin(angle), -np.cos(angle)]]), np.zeros((1, 3))


def swing(world, positions, velocities, steps):
    angles, drift = [], 0.0
    for _ in range(steps):
        step = world.step(positions, velocities)
        positions, velocities = step.positions, step.velocities
        angles.append(positions[0, 0])
        drift = max(drift, np.abs(world.equality_error(positions)).max())
    return np.array(angles), drift


def test_hinged_pendulum_keeps_its_period_and_its_joint():
    """Physical pendulum, amplitude θ₀: T = 4 √(I_pivot / m g L) K(sin²(θ₀/2)); 10⁴ steps with
    post-stabilization leave the hinge closed to round-off, without it the joint drifts apart."""
    world, positions, velocities = pendulum(post_stabilization=True)
    body = world.bodies[0]
    pivot_inertia = body.inertia + body.mass * 1.0**2
    period = 4 * np.sqrt(pivot_inertia / (body.mass * G * 1.0)) * ellipk(np.sin(0.25) ** 2)
    angles, drift = swing(world, positions, velocities, 10_000)
    downward = np.flatnonzero((angles[:-1] > 0) & (angles[1:] <= 0))
    crossings = (downward + angles[downward] / (angles[downward] - angles[downward + 1])) * world.dt
    assert np.diff(crossings).mean() == pytest.approx(period, rel=2e-3)
    assert drift < 1e-12
    drifting, positions, velocities = pendulum(post_stabilization=False)
    _, drift_without = swing(drifting, positions, velocities, 10_000)
    assert drift_without > 1e-3


def test_bad_state_is_named():
    world = PlanarWorld((Body(Circle(1.0)),))
    with pytest.raises(ValueError, match="positions must be finite"):
        world.step([[0.0, np.nan, 0.0]], [[0.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match="velocities must have shape"):
        world.step([[0.0, 0.0, 0.0]], [[0.0, 0.0]])
    with pytest.raises(ValueError, match="forces must be finite"):
        world.step([[0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0]], [[np.inf, 0.0, 0.0]])
    with pytest.raises(ValueError, match="bodies must hold at least one Body"):
        PlanarWorld(())


@pytest.mark.parametrize("angle, rate", [(0.5, 0.0), (-1.2, 2.0), (2.0, -1.0)])
def test_pendulum_step_agrees_with_the_3d_world(angle, rate):
    """The same pendulum as a revolute joint of the 3-D World about +y (gravity −z): one step from a
    state that satisfies the hinge gives the angle and rate of the World's step (θ = −q: the x–z
    plane seen from −y) to solver tolerance; post-stabilization moves the angle by round-off of
    the hinge's error only."""
    length, mass, inertia, dt = 1.0, 1.0, 0.005, 1e-3
    spatial = World(pendulum_model(length, mass, inertia), ground=False, dt=dt).step([-angle], [-rate])
    body = Body(Circle(np.sqrt(2 * inertia / mass)), mass)  # the disk whose inertia is `inertia`
    planar = PlanarWorld((body,), (Hinge(0, (0, length), None, (0, 0)),), dt=dt)
    positions = [[angle, length * np.sin(angle), -length * np.cos(angle)]]
    velocities = [[rate, rate * length * np.cos(angle), rate * length * np.sin(angle)]]
    step = planar.step(positions, velocities)
    assert step.velocities[0, 0] == pytest.approx(-spatial.v[0], abs=1e-9)
    assert step.positions[0, 0] == pytest.approx(-spatial.q[0], abs=1e-8)


def test_the_step_solves_the_dynamics_lcp_of_the_appendix():
    """A box pushed sideways while resting on the ground (two contacts): E is [e₁ e₂] with ones at
    rows 2i − 1, 2i, μ and k the averages of the two bodies' coefficients (LCP-physics §A.4.2–3),
    and the solution satisfies eq. 20 (momentum with the constraint impulses), eq. 21
    (a = 𝓙_c v + c ≥ 0 ⊥ λ_c ≥ 0) and eq. 22 (σ = 𝓙_f v + Eγ ≥ 0 ⊥ λ_f, ζ = μλ_c − Eᵀλ_f ≥ 0 ⊥ γ), read
    off the mixed LCP's unknowns (y = −λ_e, z = (λ_c, λ_f, γ))."""
    ground = Body(rectangle(20, 1), friction=0.2, restitution=0.1)
    box = Body(rectangle(1, 1), friction=0.6, restitution=0.5)
    world = PlanarWorld((ground, box), (FixedJoint(0, None, (0, -0.5)),))
    positions, velocities = np.array([[0, 0, -0.5], [0, 0.2, 0.5 - 1e-4]]), np.array([[0, 0, 0], [0.1, 1.0, -0.3]])
    forces = np.array([[0, 0, 0], [0.2, 3.0, 0]])
    step = world.step(positions, velocities, forces)
    lcp, solution = step.problem, step.solution
    assert solution.status == LCPStatus.SOLVED and len(step.contacts) == 2
    np.testing.assert_array_equal(lcp.E, [[1, 0], [1, 0], [0, 1], [0, 1]])
    np.testing.assert_allclose(lcp.mu, [0.4, 0.4], rtol=1e-15)
    np.testing.assert_allclose(lcp.k, [0.3, 0.3], rtol=1e-15)
    v, v_t = solution.x, velocities.reshape(-1)
    lambda_e, (lambda_c, lambda_f, gamma) = -solution.y, np.split(solution.z, [2, 6])
    weights = np.array([[0.0, 0.0, -G * body.mass] for body in world.bodies])
    momentum = lcp.M @ v_t + world.dt * (forces + weights).reshape(-1)
    residual = lcp.M @ v - lcp.J_e.T @ lambda_e - lcp.J_c.T @ lambda_c - lcp.J_f.T @ lambda_f - momentum
    np.testing.assert_allclose(residual, 0.0, atol=1e-9)
    np.testing.assert_allclose(lcp.J_e @ v, 0.0, atol=1e-9)
    a = lcp.J_c @ v + lcp.k * (lcp.J_c @ v_t)
    sigma = lcp.J_f @ v + lcp.E @ gamma
    zeta = lcp.mu * lambda_c - lcp.E.T @ lambda_f
    for slack, multiplier in ((a, lambda_c), (sigma, lambda_f), (zeta, gamma)):
        assert slack.min() >= -1e-9 and multiplier.min() >= 0.0
        assert np.abs(slack * multiplier).max() <= 1e-8
    assert np.abs(lambda_f).max() > 0  # the push is resisted by friction


def test_sliding_box_agrees_with_the_3d_world():
    """The shipped 0.2 m, 1 kg cube sliding on the 3-D World's ground and the 0.2 m square sliding
    on the planar ground (the x–z plane), μ = 0.3: the same speed at every step, to solver
    tolerance, until both stop."""
    mu, v0, dt = 0.3, 2.0, 2e-3
    spatial = sliding_run(load_dataset_robot("box", floating_base=True), [1.0, 0.0], mu, v0, dt)
    world = ground_and(Body(rectangle(0.2, 0.2), mass=1.0, friction=mu), dt=dt)
    positions, velocities = [[0, 0, -0.5], [0, 0, 0.1 - 1e-5]], [[0, 0, 0], [0, v0, 0]]
    speeds = [v0]
    for _ in range(len(spatial.v) - 1):
        positions, velocities, _ = rollout(world, positions, velocities, 1)
        speeds.append(velocities[1, 1])
    np.testing.assert_allclose(speeds, spatial.v[:, 0], atol=1e-7)


def test_dt_halving_rejects_interpenetrating_integration():
    """LCP-physics §A.1 item 5: a disk falling fast 0.1 m above the ground (no contact at the start)
    would end a full step 0.2 m deep; with max_halvings the step takes the largest dt / 2ᵏ that keeps
    it out, k = ⌈log₂(dt |v| / 0.1)⌉, and its positions' gradient in v_t is that dt."""
    disk = Body(Circle(0.5), mass=1.0)
    start, speed = np.array([[0.0, 0.0, 0.6]]), 30.0
    positions = np.array([[0, 0, -0.5], start[0]])
    velocities = np.array([[0, 0, 0], [0, 0, -speed]])
    deep = ground_and(disk, post_stabilization=False).step(positions, velocities)
    assert min(contact.gap for contact in ground_and(disk).contacts(deep.positions)) < -0.15
    world = ground_and(disk, post_stabilization=False, max_halvings=10)
    step = world.step(positions, velocities)
    falling = speed + G * world.dt
    halvings = int(np.ceil(np.log2(world.dt * falling / 0.1)))
    assert step.dt == world.dt / 2**halvings
    assert step.positions[1, 2] == pytest.approx(0.6 - step.dt * falling, abs=1e-9)
    assert min([contact.gap for contact in world.contacts(step.positions)] + [np.inf]) >= 0.0
    cotangents = world.step_vjp(step, positions, velocities, grad_positions=[[0, 0, 0], [0, 0, 1]])
    assert cotangents.velocities[1, 2] == pytest.approx(step.dt, rel=1e-9)
    for _ in range(30):  # it lands and stays out of the ground
        step = world.step(step.positions, step.velocities)
        assert min([contact.gap for contact in step.contacts] + [np.inf]) >= -world.penetration_tolerance
    with pytest.raises(ValueError, match="max_halvings must be an integer ≥ 0"):
        ground_and(disk, max_halvings=-1)


@pytest.mark.parametrize("mu, speed", [(0.5, 0.0), (0.5, 1.0), (0.05, 0.0), (0.05, 1.0)])
def test_disk_on_a_ramp_agrees_with_the_3d_world(mu, speed):
    """A disk (radius 0.1 m, 1 kg) on a ramp 0.3 rad steep, at rest or sliding down without spin, so
    that it starts to roll (μ = 0.5 at rest), or slips (the others): one planar step on a turned
    ground gives the velocities along and across the ramp and the spin of the 3-D World's step of a
    ball with the disk's inertia (m r²/2) on its flat ground under gravity turned by the same angle
    (the x–z plane seen from −y: the spin changes sign), the World's in the world frame (its velocity
    is the body's, in the body turned by the step); and the moves of the centre, both engines moving it
    straight by Δt times its velocity."""
    theta, radius, mass, dt = 0.3, 0.1, 1.0, 2e-3
    gravity = (G * np.sin(theta), 0.0, -G * np.cos(theta))
    ball = floating_bodies(ModelBuilder(gravity=gravity), [("disk", mass, 0.5 * mass * radius**2, Sphere(radius))])
    spatial = World(ball, dt=dt, friction=mu).step(np.r_[0, 0, radius, 1, 0, 0, 0], np.r_[speed, 0, 0, 0, 0, 0])
    normal, downhill = np.array([np.sin(theta), np.cos(theta)]), np.array([np.cos(theta), -np.sin(theta)])
    ramp = Body(rectangle(40, 1), friction=mu)
    world = PlanarWorld(
        (ramp, Body(Circle(radius), mass, friction=mu)), (FixedJoint(0, None, -0.5 * normal, -theta),), dt=dt
    )
    positions = [[-theta, *(-0.5 * normal)], [0.0, *(radius * normal)]]
    step = world.step(positions, [[0, 0, 0], [0.0, *(speed * downhill)]])
    disk = step.velocities[1]
    planar = [disk[1:] @ downhill, disk[1:] @ normal, -disk[0]]
    turned = Rotation.from_quat(spatial.q[3:], scalar_first=True)
    world_velocity = np.r_[turned.apply(spatial.v[:3]), turned.apply(spatial.v[3:])]
    np.testing.assert_allclose(planar, world_velocity[[0, 2, 4]], rtol=0, atol=1e-8)
    moved = step.positions[1, 1:] - radius * normal
    np.testing.assert_allclose(
        [moved @ downhill, moved @ normal], spatial.q[[0, 2]] - [0.0, radius], rtol=0, atol=1e-10
    )
