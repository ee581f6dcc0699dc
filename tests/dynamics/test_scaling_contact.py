"""dcol.dynamics.ScalingContactSimulator (DCOL §IV-B: α(q⁺) ≥ 1 per pair) and solid_inertia, against closed
forms (inelastic impact of two spheres, a ball coming to rest, the discrete free fall), scipy's integration of
Euler's equations, trimesh's and Monte Carlo mass properties, and cvxpy's α (tests.support.oracle)."""

import dataclasses

import numpy as np
import pytest
import trimesh
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

import dcol.dynamics.scaling_contact as scaling_contact
from dcol.dynamics import ScalingContactSimulator, ScalingContactStatus, solid_inertia
from dcol.geom import (
    Box,
    Capsule,
    Cone,
    Cylinder,
    Ellipsoid,
    Obstacle,
    Polygon,
    Polytope,
    Sphere,
    proximity,
    proximity_batch,
)
from dcol.geom.tessellate import surface_mesh
from dcol.solvers import LCPStatus, Status
from tests.support.oracle import proximity_oracle
from tests.support.shapes import random_quaternion

IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])


# --- solid_inertia -------------------------------------------------------------------------------------------


def _tessellated_inertia(shape, mass):
    """Inertia about the origin of the inscribed polyhedron of the shape's boundary (body frame), by trimesh."""
    vertices, faces = surface_mesh(shape, resolution=256)
    solid = trimesh.Trimesh(vertices, faces)
    assert np.linalg.norm(solid.center_mass) < 1e-9
    return solid.moment_inertia * mass / solid.volume


@pytest.mark.parametrize(
    "shape",
    [
        Sphere(0.3),
        Cylinder(R=0.2, L=0.7),
        Capsule(R=0.15, L=0.5),
        Cone(H=0.8, beta=0.4),
        Ellipsoid(np.array([[9.0, 2.0, 0.5], [2.0, 16.0, -1.0], [0.5, -1.0, 25.0]])),
        Cylinder(R=0.2, L=0.7, offset=(np.zeros(3), random_quaternion(np.random.default_rng(3)))),
    ],
    ids=["sphere", "cylinder", "capsule", "cone", "ellipsoid", "turned cylinder"],
)
def test_solid_inertia_of_curved_shapes_matches_their_fine_tessellations(shape):
    """The closed forms against trimesh's mass properties of a 256-gon tessellation (inscribed: its
    inertia is below the true one by O((2π/256)²))."""
    np.testing.assert_allclose(solid_inertia(shape, 2.0), _tessellated_inertia(shape, 2.0), rtol=2e-3, atol=1e-6)


def test_solid_inertia_of_a_box_and_a_convex_polytope():
    """A box: m (b² + c²) / 3 per axis from its half extents; an octahedron |x| + |y| + |z| ≤ a: m a² / 5
    about every axis (its second moment ∫ x² dm = m a² / 10)."""
    half = np.array([0.4, 0.3, 0.25])
    expected = (
        3.0 / 3.0 * np.array([half[1] ** 2 + half[2] ** 2, half[0] ** 2 + half[2] ** 2, half[0] ** 2 + half[1] ** 2])
    )
    np.testing.assert_allclose(solid_inertia(Box(half), 3.0), np.diag(expected), rtol=1e-12, atol=1e-15)
    octahedron = Polytope.from_vertices(0.5 * np.vstack([np.eye(3), -np.eye(3)]))
    np.testing.assert_allclose(solid_inertia(octahedron, 2.0), np.eye(3) * 2.0 * 0.25 / 5.0, rtol=1e-12, atol=1e-15)


def test_solid_inertia_of_a_padded_square_against_monte_carlo():
    """The padded polygon's (a tessellation's) inertia against a Monte Carlo estimate over its solid: the
    points within R of the square |x|, |y| ≤ a in the plane z = 0."""
    a, R, mass = 0.3, 0.1, 1.5
    shape = Polygon(np.array([[1.0, 0], [0, 1], [-1, 0], [0, -1]]), np.full(4, a), R)
    rng = np.random.default_rng(0)
    points = rng.uniform(-1.0, 1.0, size=(2_000_000, 3)) * np.array([a + R, a + R, R])
    outside = np.maximum(np.abs(points[:, :2]) - a, 0.0)
    inside = points[np.sum(outside**2, axis=1) + points[:, 2] ** 2 <= R**2]
    second_moment = mass * inside.T @ inside / len(inside)
    expected = np.trace(second_moment) * np.eye(3) - second_moment
    np.testing.assert_allclose(solid_inertia(shape, mass), expected, rtol=5e-3, atol=2e-4 * np.abs(expected).max())


def test_solid_inertia_refuses_what_it_cannot_know():
    with pytest.raises(ValueError, match="offset position"):
        solid_inertia(Sphere(0.2, offset=([0.1, 0.0, 0.0], IDENTITY)), 1.0)
    with pytest.raises(ValueError, match="centroid"):
        solid_inertia(Polytope.from_vertices(np.vstack([np.eye(3), -0.2 * np.eye(3)])), 1.0)
    with pytest.raises(ValueError, match="mass must be finite and > 0"):
        solid_inertia(Sphere(0.2), 0.0)
    with pytest.raises(TypeError, match="shape must be a dcol.geom shape"):
        solid_inertia("sphere", 1.0)


# --- free flight ---------------------------------------------------------------------------------------------


def _euler_equations(inertia, omega, seconds):
    """ω (3,) body frame after `seconds` of torque-free motion, by scipy's integration of Euler's equations."""
    inverse = np.linalg.inv(inertia)
    solution = solve_ivp(
        lambda t, w: -inverse @ np.cross(w, inertia @ w), (0.0, seconds), omega, rtol=1e-12, atol=1e-14, method="DOP853"
    )
    return solution.y[:, -1]


def test_free_body_keeps_energy_momentum_and_spin_magnitude_exactly():
    """An asymmetric box tumbling near its unstable middle axis, no gravity, nothing to hit, 2000 steps: its
    kinetic energy and the magnitude of its angular momentum stay as they were to rounding (the implicit
    midpoint rule on Euler's equations), and its centre moves in a straight line at constant velocity."""
    inertia = solid_inertia(Box([0.3, 0.2, 0.1]), 2.0)
    simulator = ScalingContactSimulator([Box([0.3, 0.2, 0.1])], 2.0, gravity=(0.0, 0.0, 0.0), dt=0.01)
    omega = np.array([[0.1, 8.0, 0.2]])
    velocity = np.array([[0.3, -0.2, 0.5]])
    run = simulator.rollout([[1.0, 2.0, 3.0]], [IDENTITY], velocity, omega, steps=2000)
    np.testing.assert_allclose(run.energy, run.energy[0], rtol=1e-12)
    spin = np.linalg.norm(run.angular_velocities[:, 0] @ inertia, axis=-1)
    np.testing.assert_allclose(spin, spin[0], rtol=1e-12)
    np.testing.assert_allclose(run.velocities, np.broadcast_to(velocity, run.velocities.shape), rtol=0, atol=0)
    expected = np.array([1.0, 2.0, 3.0]) + 0.01 * np.arange(2001)[:, None] * velocity[0]
    np.testing.assert_allclose(run.positions[:, 0], expected, rtol=0, atol=1e-12)
    assert np.all(run.newton_iterations == 0) and run.impulses.size == 0


def test_free_spin_converges_at_second_order_to_eulers_equations():
    """ω after 1 s of an asymmetric body against scipy's integration of Euler's equations: the error falls
    by about 4 when Δt halves (the midpoint rule is of second order)."""
    inertia = np.diag([0.02, 0.05, 0.06])
    omega = np.array([3.0, 1.0, -2.0])
    reference = _euler_equations(inertia, omega, 1.0)
    errors = []
    for dt in (0.01, 0.005):
        simulator = ScalingContactSimulator([Sphere(0.2)], 1.0, inertias=inertia, gravity=(0.0, 0.0, 0.0), dt=dt)
        run = simulator.rollout(np.zeros((1, 3)), [IDENTITY], np.zeros((1, 3)), [omega], steps=round(1.0 / dt))
        errors.append(np.linalg.norm(run.angular_velocities[-1, 0] - reference))
    assert errors[0] < 1e-2 * np.linalg.norm(omega)
    assert 3.5 < errors[0] / errors[1] < 4.5


def test_free_fall_loses_the_discrete_schemes_energy():
    """A ball let go from rest: r⁺ = r + Δt v⁺ puts it at z₀ − g Δt² n (n + 1) / 2 after n steps and takes
    ½ m g² Δt² of energy out each step (the closed form of the scheme the module docstring states)."""
    g, dt, mass = 9.81, 0.01, 2.0
    simulator = ScalingContactSimulator([Sphere(0.1)], mass, dt=dt)
    run = simulator.rollout([[0.0, 0.0, 5.0]], [IDENTITY], np.zeros((1, 3)), np.zeros((1, 3)), steps=50)
    n = np.arange(51)
    np.testing.assert_allclose(run.positions[:, 0, 2], 5.0 - g * dt**2 * n * (n + 1) / 2, rtol=1e-13)
    np.testing.assert_allclose(run.energy - run.energy[0], -0.5 * mass * g**2 * dt**2 * n, atol=1e-11)


# --- contacts ---


def test_constraint_rows_are_the_derivatives_of_alpha_in_the_velocities():
    """The rows H = ∂α(q⁺)/∂V⁺ / Δt at q⁺ = (r + Δt v, Q exp(Δt [ω]×)), built here with scipy, against central
    differences of dcol.geom.proximity's α; spins of a few rad/s at Δt = 0.05 make the exponential's
    differential matter."""
    dt = 0.05
    shapes = [Box([0.3, 0.2, 0.1]), Cone(H=0.8, beta=0.4), Capsule(R=0.1, L=0.4)]
    ground = Obstacle(Cylinder(R=0.5, L=0.2), np.array([0.3, -0.2, -1.0]), random_quaternion(np.random.default_rng(1)))
    simulator = ScalingContactSimulator(shapes, 1.0, obstacles=[ground], dt=dt)
    rng = np.random.default_rng(2)
    r = np.array([[0.0, 0.0, 0.0], [1.1, 0.2, 0.1], [-0.2, 0.9, -0.3]])
    q = np.array([random_quaternion(rng) for _ in shapes])
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    velocity = np.concatenate([rng.normal(size=(3, 3)), 4.0 * rng.normal(size=(3, 3))], axis=1)

    def poses(velocity):
        turned = Rotation.from_quat(q, scalar_first=True) * Rotation.from_rotvec(dt * velocity[:, 3:])
        return r + dt * velocity[:, :3], turned.as_matrix()

    def alphas(velocity):
        positions, rotations = poses(velocity)
        everything = [*zip(shapes, positions, rotations, strict=True), (ground.shape, ground.r, ground.q)]
        return np.array([proximity(*everything[i], *everything[j]).alpha for i, j in simulator.pairs])

    alpha, rows, solved = simulator._constraints(*poses(velocity), velocity[:, 3:])
    assert solved
    np.testing.assert_allclose(alpha, alphas(velocity), rtol=1e-8)
    step = 1e-3
    differences = np.empty_like(rows)
    for column in range(rows.shape[1]):
        change = np.zeros(velocity.size)
        change[column] = step
        change = change.reshape(velocity.shape)
        differences[:, column] = (alphas(velocity + change) - alphas(velocity - change)) / (2.0 * step * dt)
    np.testing.assert_allclose(rows, differences, rtol=1e-5, atol=1e-5 * np.abs(differences).max())


# --- contacts ------------------------------------------------------------------------------------------------


def test_two_spheres_head_on_meet_and_move_on_together():
    """Spheres of radii 0.2 and 0.3, masses 1 and 3, approaching along x at 2 and −1 m/s with a gap of 1 cm:
    α = d / (R₁ + R₂) is linear in the step, so the first step that would overlap closes the gap exactly
    (relative speed −gap / Δt, momentum kept), and the next one stops the approach: both move at the centre
    of mass's velocity and stay touching (a perfectly inelastic impact), their spins untouched."""
    dt, (m1, m2), (R1, R2) = 0.01, (1.0, 3.0), (0.2, 0.3)
    simulator = ScalingContactSimulator([Sphere(R1), Sphere(R2)], [m1, m2], gravity=(0.0, 0.0, 0.0), dt=dt)
    gap = 0.01
    positions = np.array([[0.0, 0.0, 0.0], [R1 + R2 + gap, 0.0, 0.0]])
    velocities = np.array([[2.0, 0.0, 0.0], [-1.0, 0.0, 0.0]])
    spins = np.array([[0.0, 0.0, 4.0], [1.0, 0.0, 0.0]])
    centre = (m1 * velocities[0, 0] + m2 * velocities[1, 0]) / (m1 + m2)

    first = simulator.step(positions, np.array([IDENTITY, IDENTITY]), velocities, spins)
    assert first.status == ScalingContactStatus.CONVERGED and first.newton_iterations == 1
    relative = -gap / dt
    expected = [centre - m2 / (m1 + m2) * relative, centre + m1 / (m1 + m2) * relative]
    # α is exact to ~1e-9 (dcol.geom.derivatives), a distance of ~5e-10 m, which over Δt is ~5e-8 m/s.
    np.testing.assert_allclose(first.velocities[:, 0], expected, atol=2e-7)
    np.testing.assert_allclose(first.velocities[:, 1:], 0.0, atol=1e-12)
    np.testing.assert_allclose(first.alpha, [1.0], atol=1e-9)
    np.testing.assert_allclose(first.angular_velocities, spins, atol=1e-8)
    # The impulse on body b is m₂ Δv₂ along +x, and α's gradient with respect to r_b is x̂ / (R₁ + R₂).
    np.testing.assert_allclose(first.impulses, [m2 * (expected[1] - velocities[1, 0]) * (R1 + R2)], rtol=1e-6)

    second = simulator.step(first.positions, first.quaternions, first.velocities, first.angular_velocities)
    np.testing.assert_allclose(second.velocities[:, 0], [centre, centre], atol=2e-7)
    np.testing.assert_allclose(second.alpha, [1.0], atol=1e-9)


def test_ball_dropped_on_a_static_box_comes_to_rest_on_it():
    """A ball of radius 0.1 falls 0.5 m onto a box whose top is at z = 0: the inelastic impact stops it, and
    then each step's impulse takes exactly the velocity gravity gave: it rests at z = 0.1 with v = 0."""
    ground = Obstacle(Box([1.0, 1.0, 0.5]), np.array([0.0, 0.0, -0.5]), IDENTITY)
    simulator = ScalingContactSimulator([Sphere(0.1)], 1.0, obstacles=[ground], dt=0.01)
    run = simulator.rollout([[0.2, -0.1, 0.6]], [IDENTITY], np.zeros((1, 3)), np.zeros((1, 3)), steps=60)
    assert np.all(run.worst_violation <= 1e-9)
    # α's barrier smoothing leaves its gradient a small tangential part, on which the ball creeps sideways
    # by far less than the tolerance.
    np.testing.assert_allclose(run.positions[-10:, 0], np.broadcast_to([0.2, -0.1, 0.1], (10, 3)), atol=1e-8)
    np.testing.assert_allclose(run.velocities[-10:, 0], 0.0, atol=1e-8)
    # Resting, the impulse is the weight times Δt, λ per unit of α's gradient: α scales the ball about its
    # centre and the box about its own, so α = (centres' height difference) / (0.1 + 0.5), its gradient ẑ / 0.6.
    np.testing.assert_allclose(run.impulses[-5:, 0], 9.81 * 0.01 * 0.6, rtol=1e-7)


# --- DCOL's twelve bodies ------------------------------------------------------------------------------------

TWELVE = [
    Box([0.3, 0.25, 0.2]),
    Capsule(R=0.2, L=0.5),
    Cylinder(R=0.25, L=0.5),
    Cone(H=0.8, beta=0.45),
    Ellipsoid(np.diag([1 / 0.4**2, 1 / 0.25**2, 1 / 0.3**2])),
    Polygon(C=np.array([[1.0, 0], [0, 1], [-1, 0], [0, -1]]), d=np.full(4, 0.25), R=0.1),
    Sphere(0.3),
    Box([0.2, 0.2, 0.35]),
    Capsule(R=0.15, L=0.7),
    Cylinder(R=0.3, L=0.3),
    Cone(H=0.6, beta=0.6),
    Ellipsoid(np.diag([1 / 0.3**2, 1 / 0.35**2, 1 / 0.2**2])),
]


def _thrown_at_the_origin(seed, arrival=1.0):
    """Twelve bodies 2–3 m from the origin, at least 1.5 m apart, random attitudes and spins, flying at the
    origin so as to reach it at t = arrival."""
    rng = np.random.default_rng(seed)
    first, second = np.triu_indices(len(TWELVE), 1)
    while True:
        directions = rng.normal(size=(len(TWELVE), 3))
        r = directions / np.linalg.norm(directions, axis=1, keepdims=True) * rng.uniform(2.0, 3.0, (len(TWELVE), 1))
        if np.min(np.linalg.norm(r[first] - r[second], axis=1)) > 1.5:
            break
    q = Rotation.random(len(TWELVE), random_state=rng).as_quat(scalar_first=True)
    return r, q, -r / arrival, rng.normal(size=(len(TWELVE), 3))


@pytest.fixture(scope="module")
def twelve_bodies():
    simulator = ScalingContactSimulator(TWELVE, np.linspace(0.5, 2.0, 12), gravity=(0.0, 0.0, 0.0), dt=0.01)
    state = _thrown_at_the_origin(0)
    return simulator, state, simulator.rollout(*state, steps=150)


def test_twelve_bodies_collide_without_overlapping(twelve_bodies):
    """DCOL Fig. 6 at a reduced horizon: the bodies collide (impulses, energy taken out) and at every step
    max(1 − α) ≤ 1e-6, as the simulator reports it and as dcol.geom.proximity_batch finds it, with nothing NaN."""
    simulator, _, run = twelve_bodies
    for array in (run.positions, run.quaternions, run.velocities, run.angular_velocities, run.energy):
        assert np.isfinite(array).all()
    assert np.all(run.worst_violation <= 1e-6)
    # The same at the poses the run returned, every pair at every step in one batch of the plain proximity.
    first, second = simulator.pairs.T
    alpha = proximity_batch(
        [TWELVE[i] for i in first] * len(run.positions),
        run.positions[:, first].reshape(-1, 3),
        run.quaternions[:, first].reshape(-1, 4),
        [TWELVE[j] for j in second] * len(run.positions),
        run.positions[:, second].reshape(-1, 3),
        run.quaternions[:, second].reshape(-1, 4),
    ).alpha
    assert np.min(alpha) >= 1.0 - 1e-6
    assert np.count_nonzero(run.impulses.max(axis=1) > 0.0) > 10
    assert run.energy[-1] < 0.8 * run.energy[0]
    # Contacts take energy out; where a gradient turns within a step they can return a little of it (module
    # docstring), never so much that the bodies end a step with more than they were thrown with.
    assert run.energy.max() <= run.energy[0] * (1.0 + 1e-12)
    assert np.diff(run.energy).max() <= 1e-2 * run.energy[0]


def test_twelve_bodies_touch_where_cvxpy_says(twelve_bodies):
    """At the poses the run returned where the three pairs that pushed hardest pushed most, cvxpy's α
    (DCOL eq. 9 posed independently, tests.support.oracle) is 1 to the solvers' tolerances."""
    simulator, _, run = twelve_bodies
    for pair in np.argsort(run.impulses.max(axis=0))[-3:]:
        step = int(np.argmax(run.impulses[:, pair])) + 1
        i, j = simulator.pairs[pair]
        alpha, _ = proximity_oracle(
            TWELVE[i],
            run.positions[step, i],
            run.quaternions[step, i],
            TWELVE[j],
            run.positions[step, j],
            run.quaternions[step, j],
        )
        assert alpha == pytest.approx(1.0, abs=1e-6)


def test_twelve_bodies_keep_their_linear_momentum_through_impacts(twelve_bodies):
    """α depends on the bodies' relative poses only, so each impulse's forces on a pair are opposite: with
    no gravity and no obstacles Σ m v stays as it was."""
    simulator, _, run = twelve_bodies
    momentum = np.einsum("b,tbi->ti", simulator.masses, run.velocities)
    np.testing.assert_allclose(momentum, np.broadcast_to(momentum[0], momentum.shape), atol=1e-10)


def test_a_step_that_does_not_converge_says_so(twelve_bodies, monkeypatch):
    """A step that needs more Newton iterations than allowed ends NEWTON_LIMIT and a rollout raises; a
    failing LCP ends the step LCP_FAILED with the LCP's status."""
    simulator, state, run = twelve_bodies
    step = int(np.flatnonzero(run.newton_iterations >= 2)[0])  # the first step that took two LCPs
    hard = tuple(array[step] for array in (run.positions, run.quaternions, run.velocities, run.angular_velocities))
    strict = ScalingContactSimulator(
        TWELVE, simulator.masses, gravity=(0.0, 0.0, 0.0), dt=0.01, max_newton_iterations=1
    )
    result = strict.step(*hard)
    assert result.status == ScalingContactStatus.NEWTON_LIMIT and result.newton_iterations == 1
    with pytest.raises(RuntimeError, match=f"step {step} did not converge: NEWTON_LIMIT after 1 Newton iterations"):
        strict.rollout(*state, steps=step + 1)

    solve = scaling_contact.solve_lcp
    monkeypatch.setattr(
        scaling_contact, "solve_lcp", lambda A, b: dataclasses.replace(solve(A, b), status=LCPStatus.ITERATION_LIMIT)
    )
    failed = simulator.step(*hard)
    assert failed.status == ScalingContactStatus.LCP_FAILED and failed.lcp_status == LCPStatus.ITERATION_LIMIT


def test_failed_proximity_and_spin_solves_say_so(twelve_bodies, monkeypatch):
    """A pair whose cone program stopped at its iteration limit ends the step PROXIMITY_FAILED; Euler's
    equations given one Newton iteration for a tumbling body end it SPIN_FAILED. Either way the step is
    the last iterate, finite, and the rollout raises naming the status."""
    simulator, state, _ = twelve_bodies
    gradients = scaling_contact.proximity_gradient_batch

    def one_unsolved(*args, **kwargs):
        result = gradients(*args, **kwargs)
        status = np.array(result.status)
        status[3] = Status.MAX_ITERATIONS
        return dataclasses.replace(result, status=status)

    with monkeypatch.context() as patch:
        patch.setattr(scaling_contact, "proximity_gradient_batch", one_unsolved)
        result = simulator.step(*state)
        assert result.status == ScalingContactStatus.PROXIMITY_FAILED and np.isfinite(result.positions).all()
        with pytest.raises(RuntimeError, match="step 0 did not converge: PROXIMITY_FAILED"):
            simulator.rollout(*state, steps=1)
    with monkeypatch.context() as patch:
        patch.setattr(scaling_contact, "_SPIN_ITERATIONS", 1)
        result = simulator.step(*state)
        assert result.status == ScalingContactStatus.SPIN_FAILED and np.isfinite(result.angular_velocities).all()


# --- bad input -----------------------------------------------------------------------------------------------


def test_bad_arguments_raise_clear_errors():
    shapes = [Sphere(0.1), Box([0.1, 0.2, 0.3])]
    with pytest.raises(ValueError, match="shapes must hold at least one shape"):
        ScalingContactSimulator([], 1.0)
    with pytest.raises(TypeError, match=r"shapes\[1\] must be a dcol.geom shape"):
        ScalingContactSimulator([Sphere(0.1), "box"], 1.0)
    with pytest.raises(ValueError, match="masses must be > 0"):
        ScalingContactSimulator(shapes, [1.0, -2.0])
    with pytest.raises(ValueError, match=r"masses must have shape \(len\(shapes\),\) = \(2,\)"):
        ScalingContactSimulator(shapes, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="masses must be finite"):
        ScalingContactSimulator(shapes, [1.0, np.nan])
    with pytest.raises(ValueError, match=r"inertias\[0\] must be symmetric"):
        ScalingContactSimulator(shapes, 1.0, inertias=[[1.0, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    with pytest.raises(ValueError, match=r"inertias\[1\] must be positive definite"):
        ScalingContactSimulator(shapes, 1.0, inertias=[np.eye(3), np.diag([1.0, 1.0, 0.0])])
    with pytest.raises(TypeError, match=r"obstacles\[0\] must be a dcol.geom.Obstacle"):
        ScalingContactSimulator(shapes, 1.0, obstacles=[Box([1.0, 1.0, 1.0])])
    with pytest.raises(ValueError, match="Obstacle r must be finite"):
        Obstacle(Box([1.0, 1.0, 1.0]), [0.0, np.nan, 0.0], IDENTITY)
    with pytest.raises(ValueError, match="dt must be finite and > 0"):
        ScalingContactSimulator(shapes, 1.0, dt=0.0)
    with pytest.raises(ValueError, match="max_newton_iterations must be a positive integer"):
        ScalingContactSimulator(shapes, 1.0, max_newton_iterations=0)

    simulator = ScalingContactSimulator(shapes, 1.0)
    good = (
        np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]),
        np.array([IDENTITY, IDENTITY]),
        np.zeros((2, 3)),
        np.zeros((2, 3)),
    )
    bad_position = good[0].copy()
    bad_position[1, 2] = np.nan
    with pytest.raises(ValueError, match="positions must be finite"):
        simulator.step(bad_position, *good[1:])
    with pytest.raises(ValueError, match=r"quaternions must have shape \(len\(shapes\), 4\) = \(2, 4\)"):
        simulator.step(good[0], good[1][:, :3], *good[2:])
    with pytest.raises(ValueError, match="quaternions: the quaternion must be nonzero"):
        simulator.step(good[0], np.zeros((2, 4)), *good[2:])
    with pytest.raises(ValueError, match=r"angular_velocities must have shape \(len\(shapes\), 3\) = \(2, 3\)"):
        simulator.step(*good[:3], np.zeros((3, 3)))
    with pytest.raises(ValueError, match="steps must be a positive integer"):
        simulator.rollout(*good, steps=0)
