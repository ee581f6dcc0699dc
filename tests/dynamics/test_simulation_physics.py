"""dcol.dynamics.World against closed forms worked out by hand (no expected value comes from the code
under test).

Conventions used below: gravity g along −z, the ground is the plane z = 0, a floating body's
q = [x, y, z, qw, qx, qy, qz] and v = [v; ω] in the body frame; every body here keeps the identity
orientation, so body-frame and world-frame translations coincide (also for the tangent-space
cotangents of Rollout.vjp). The time stepping (module docstring of dcol.dynamics.simulation) is
semi-implicit Euler, v_{k+1} = v_k + Δt (a + impulses / m), x_{k+1} = x_k + Δt v_{k+1}.
"""

import dataclasses
import warnings

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from scipy.special import ellipk

from dcol.dynamics import ModelBuilder, World, load_dataset_robot
from dcol.geom import Box, Cylinder, Sphere
from tests.support.bodies import (
    IDENTITY,
    G,
    ball_model,
    box_pile_model,
    column_pile,
    floating_bodies,
    floating_state,
    pendulum_model,
)


def rollout(world, q0, v0, steps, derivatives=False):
    """World.rollout from rest controls, keeping its steps for the tests to study."""
    return world.rollout(q0, v0, np.zeros((steps, world.model.nv)), derivatives=derivatives, keep_steps=True)


def final_state_jacobian(result, q_index, v_index, bounce=True):
    """d(q_T[q_index], v_T[v_index]) / d(q_0, v_0) by Rollout.vjp: rows are the chosen final tangent
    coordinates (q first), columns the initial tangent of q then v."""
    count, nv = result.v.shape
    rows = []
    for which, index in [("q", i) for i in q_index] + [("v", i) for i in v_index]:
        grad = np.zeros((count, nv))
        grad[-1, index] = 1.0
        cot = result.vjp(grad_q=grad if which == "q" else None, grad_v=grad if which == "v" else None, bounce=bounce)
        rows.append(np.r_[cot.q, cot.v])
    return np.array(rows)


def box_on_ground(velocity=(0.0, 0.0, 0.0)):
    """The shipped 0.2 m, 1 kg cube resting on the ground (centre at z = 0.1)."""
    return floating_state(([0.0, 0.0, 0.1], velocity))


@pytest.fixture(scope="module")
def box_model():
    return load_dataset_robot("box", floating_base=True)


# --- 1. resting contact -------------------------------------------------------------------------------


def test_box_at_rest_stays_put_with_equal_corner_impulses(box_model):
    """A 1 kg cube on the ground: the four corner contacts carry its weight, each m g Δt / 4 per step
    (symmetric, least-norm split of the redundant support), and nothing moves."""
    mass, dt, steps = 1.0, 1e-3, 500  # box.urdf: 1 kg
    world = World(box_model, dt=dt)
    q, v = box_on_ground()
    q0, previous, hits = q.copy(), None, 0
    for _ in range(steps):
        previous = world.step(q, v, warm_start=previous)
        q, v = previous.q, previous.v
        hits += previous.lcp.warm_start_hit
    assert len(previous.contacts) == 4
    assert np.abs(q[:3] - q0[:3]).max() < 1e-6
    assert np.abs(q[3:] - q0[3:]).max() < 1e-9
    assert np.abs(v).max() < 1e-9
    np.testing.assert_allclose(previous.impulses[:, 0], mass * G * dt / 4, rtol=1e-9)
    assert np.abs(previous.impulses[:, 1:]).max() < 1e-12
    assert hits >= 0.9 * steps, f"warm start hit rate {hits / steps:.0%}"


# --- 2. sliding friction ------------------------------------------------------------------------------


def sliding_run(box_model, direction, mu, v0, dt, contact_model="lcp"):
    """The box launched at v0 along a horizontal unit direction, simulated until 10 steps after it
    would stop if it decelerated at μ g along that direction."""
    world = World(box_model, dt=dt, friction=mu, contact_model=contact_model)
    q, v = box_on_ground(v0 * np.r_[direction, 0.0])
    return rollout(world, q, v, int(v0 / (mu * G * dt)) + 10)


def discrete_stopping_distance(v0, deceleration, dt):
    """Semi-implicit Euler under a constant Coulomb deceleration a: v_k = v0 − k a Δt while positive,
    then 0 (the sticking impulse a Δt m exceeds what is needed); x = Δt Σ_{k=1..K} v_k with
    K = ⌊v0 / (a Δt)⌋, i.e. Δt (K v0 − a Δt K (K + 1) / 2)."""
    K = np.floor(v0 / (deceleration * dt))
    return dt * (K * v0 - deceleration * dt * K * (K + 1) / 2)


def test_sliding_box_decelerates_at_mu_g_and_stops_at_v0_squared_over_2_mu_g(box_model):
    """Coulomb friction on a sliding box: Σ f_t = μ Σ f_n = μ m g, so v_x(t) = v0 − μ g t (exact in
    the discrete scheme too: each step removes μ g Δt) until it stops after v0² / (2 μ g); the
    discrete distance differs from it by less than one step's travel v0 Δt."""
    mu, v0, dt = 0.3, 2.0, 2e-3
    result = sliding_run(box_model, [1.0, 0.0], mu, v0, dt)
    t = dt * np.arange(len(result.v))
    sliding = t < 0.9 * v0 / (mu * G)
    np.testing.assert_allclose(result.v[sliding, 0], v0 - mu * G * t[sliding], rtol=0.0, atol=1e-9)
    assert np.abs(result.v[sliding, 1:]).max() < 1e-9  # straight, no hop, no pitch
    assert np.abs(result.v[-1]).max() < 1e-6  # stopped and sticking (to the LCP's tolerance)
    distance = result.q[-1, 0] - result.q[0, 0]
    assert distance == pytest.approx(discrete_stopping_distance(v0, mu * G, dt), abs=1e-9)
    assert abs(distance - v0**2 / (2 * mu * G)) < v0 * dt


def test_diagonal_sliding_shows_the_friction_pyramid(box_model):
    """Friction is a pyramid, not a cone: each tangent impulse is bounded by μ f_n on its own (boxed
    LCP). The ground contacts' tangents are the world x and y axes, so a box sliding along the
    diagonal loses μ g per unit time on *each* axis, |a| = √2 μ g, and stops after
    √2 (v0/√2)² / (2 μ g) = v0² / (2√2 μ g) (a friction cone would give μ g and v0² / (2 μ g))."""
    mu, v0, dt = 0.3, 2.0, 2e-3
    result = sliding_run(box_model, np.array([1.0, 1.0]) / np.sqrt(2.0), mu, v0, dt)
    contacts = result.steps[0].contacts
    np.testing.assert_allclose(np.abs(contacts.tangent1 @ [1.0, 0.0, 0.0]), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.abs(contacts.tangent2 @ [0.0, 1.0, 0.0]), 1.0, atol=1e-12)
    t = dt * np.arange(len(result.v))
    component = v0 / np.sqrt(2.0)
    sliding = t < 0.9 * component / (mu * G)
    for axis in (0, 1):
        np.testing.assert_allclose(result.v[sliding, axis], component - mu * G * t[sliding], rtol=0.0, atol=1e-9)
    travel = result.q[-1, :2] - result.q[0, :2]
    np.testing.assert_allclose(travel, discrete_stopping_distance(component, mu * G, dt), rtol=0.0, atol=1e-9)
    assert abs(np.linalg.norm(travel) - v0**2 / (2 * np.sqrt(2.0) * mu * G)) < v0 * dt


def test_diagonal_sliding_on_the_friction_cone_is_isotropic(box_model):
    """The contact NCP bounds each contact's tangent impulse by its cone ‖f_t‖ ≤ μ f_n: the box sliding
    along the diagonal decelerates at μ g straight against its velocity (each axis at μ g / √2) and
    stops after v0² / (2 μ g) — the closed forms the pyramid misses above — and rests at the end."""
    mu, v0, dt = 0.3, 2.0, 2e-3
    direction = np.array([1.0, 1.0]) / np.sqrt(2.0)
    result = sliding_run(box_model, direction, mu, v0, dt, contact_model="ncp")
    t = dt * np.arange(len(result.v))
    sliding = t < 0.9 * v0 / (mu * G)
    for axis in (0, 1):
        np.testing.assert_allclose(
            result.v[sliding, axis], direction[axis] * (v0 - mu * G * t[sliding]), rtol=0.0, atol=1e-7
        )
    travel = result.q[-1, :2] - result.q[0, :2]
    np.testing.assert_allclose(travel, direction * discrete_stopping_distance(v0, mu * G, dt), rtol=0.0, atol=1e-7)
    assert np.abs(result.v[-1]).max() < 1e-6
    assert (result.steps[-1].lcp.modes == 1).all()  # STICKING


def test_ncp_box_at_rest_and_native_rollouts_match(box_model):
    """At rest on the NCP the four corners share the weight equally (the least-norm split), and
    rollout_batch runs the same NCP steps as World.rollout."""
    world = World(box_model, dt=1e-3, contact_model="ncp")
    q, v = box_on_ground()
    result = rollout(world, q, v, 200)
    np.testing.assert_allclose(result.steps[-1].impulses[:, 0], G * 1e-3 / 4, rtol=1e-7)
    assert np.abs(result.v[-1]).max() < 1e-8
    starts = [box_on_ground(np.array([vx, 0.3, 0.0])) for vx in (0.5, -1.0)]
    q0, v0 = (np.array(x) for x in zip(*starts))
    batch = world.rollout_batch(q0, v0, np.zeros((2, 150, 6)))
    for n in range(2):
        reference = rollout(world, q0[n], v0[n], 150)
        np.testing.assert_allclose(batch.q[n], reference.q, rtol=0.0, atol=1e-8)
        np.testing.assert_allclose(batch.v[n], reference.v, rtol=0.0, atol=1e-6)


# --- 3. restitution -----------------------------------------------------------------------------------


@pytest.mark.parametrize("restitution", [0.5, 0.8])
def test_ball_bounces_to_e_squared_h(restitution):
    """A ball dropped from h hits the ground at √(2 g h) and leaves at e √(2 g h) (Newton's law,
    exact in the step: v⁺_n = −e v_n), so it climbs to e² h.

    Discrete corrections, all O(Δt): the bouncing step starts at a height z_b ∈ (0, |v| Δt] (one
    step's travel) with the speed |v| of semi-implicit Euler, v² = 2 g (h − z_b) − g Δt |v| (its
    energy relation), so |v| ∈ [√(2 g h) − 1.5 g Δt, √(2 g h)]; the flight from z_b at e |v| peaks
    at z_b + e² v² / (2 g) + e |v| Δt / 2, i.e. apex − e² h = (1 − e²) z_b + e (1 − e) |v| Δt / 2,
    between 0 and |v| Δt for e ≥ 1/4."""
    radius, h, dt = 0.1, 0.5, 1e-3
    world = World(ball_model(radius), dt=dt, restitution=restitution, friction=0.0)
    q, v = floating_state(([0.0, 0.0, radius + h], [0.0, 0.0, 0.0]))
    fall = np.sqrt(2 * h / G)
    result = rollout(world, q, v, int((fall * (1 + restitution) + 0.05) / dt))
    bounces = [k for k, step in enumerate(result.steps) if step.bouncing.any()]
    assert bounces, "the ball never bounced"
    k = bounces[0]
    impact_speed = np.sqrt(2 * G * h)
    speed = -result.v[k, 2]
    assert impact_speed - 1.5 * G * dt <= speed <= impact_speed
    assert result.v[k + 1, 2] == pytest.approx(restitution * speed, rel=1e-9)
    apex = result.q[k + 1 :, 2].max() - radius
    assert 0.0 < apex - restitution**2 * h < speed * dt, (
        f"apex {apex:.6f} m vs e² h = {restitution**2 * h:.6f} m (relative error {apex / (restitution**2 * h) - 1:.2%})"
    )


# --- 3b. rolling ------------------------------------------------------------------------------------------


def _world_linear_velocity(q, v):
    """R v_lin of free-body states q (N, 7), v (N, 6): the centre's velocity in the world."""
    return Rotation.from_quat(q[:, 3:7], scalar_first=True).apply(v[:, :3])


@pytest.mark.parametrize("dt", [0.01, 1 / 60])
def test_a_ball_rolling_without_slipping_keeps_its_centre_at_its_radius(dt):
    """A solid ball (R = 0.1 m) on the ground rolling at 2 m/s with ω = v / R = 20 rad/s, for 2 s at 100
    and 60 Hz: rolling without slipping needs no force, so its centre stays at height R and moves at
    2 m/s (closed forms). Its twist turns about the contact point: the step's position update moves the
    centre straight (the world-frame velocity, as the contact row sees it), where the SE(3) exponential
    moved it along that arc, R (1 − cos ω Δt) into the ground every step; and the body-frame velocity's
    turn is applied after the step, where before the contact rows it lifted the contact point off."""
    radius, speed = 0.1, 2.0
    world = World(ball_model(radius), dt=dt)
    q0 = np.r_[0.0, 0.0, radius, IDENTITY]
    v0 = np.r_[speed, 0.0, 0.0, 0.0, speed / radius, 0.0]
    batch = world.rollout_batch(q0[None], v0[None], np.zeros((round(2.0 / dt), 6)))
    q, v = batch.q[0], batch.v[0]
    assert np.abs(q[:, 2] - radius).max() <= 1e-3
    np.testing.assert_allclose(_world_linear_velocity(q, v), np.tile([speed, 0.0, 0.0], (len(q), 1)), atol=1e-3)
    assert q[-1, 0] == pytest.approx(speed * dt * (len(q) - 1), rel=1e-3)


# --- 4. pendulum --------------------------------------------------------------------------------------


def pendulum_run(theta0, periods, length, mass=1.0, inertia=1e-6, dt=2e-3):
    """A bob of mass m on a massless rod (com at distance l below a y hinge, inertia I about the com):
    θ̈ = −(m g l / (m l² + I)) sin θ, a simple pendulum of length L = (m l² + I) / (m l).
    Returns (times, θ, L, energy (m l² + I) θ̇² / 2 − m g l cos θ)."""
    world = World(pendulum_model(length, mass, inertia), ground=False, dt=dt)
    L = (mass * length**2 + inertia) / (mass * length)
    steps = int(periods * exact_period(theta0, L) / dt) + 1
    result = rollout(world, [theta0], [0.0], steps)
    theta, omega = result.q[:, 0], result.v[:, 0]
    energy = 0.5 * (mass * length**2 + inertia) * omega**2 - mass * G * length * np.cos(theta)
    return dt * np.arange(steps + 1), theta, L, energy


def exact_period(theta0, L):
    """4 √(L/g) K(m = sin²(θ0/2)), K the complete elliptic integral of the first kind."""
    return 4.0 * np.sqrt(L / G) * ellipk(np.sin(theta0 / 2) ** 2)


def measured_period(t, theta):
    """Twice the mean spacing of the zero crossings of θ (linear interpolation in each step)."""
    k = np.flatnonzero(np.sign(theta[:-1]) != np.sign(theta[1:]))
    crossings = t[k] - theta[k] * (t[k + 1] - t[k]) / (theta[k + 1] - theta[k])
    return 2.0 * (crossings[-1] - crossings[0]) / (len(crossings) - 1)


def test_small_amplitude_pendulum_period_is_2_pi_sqrt_l_over_g():
    """θ0 = 0.05 rad: 2π √(L/g) up to the amplitude correction θ0²/16 = 1.6e-4; the exact elliptic
    period within the O((ω Δt)²) phase error of the scheme."""
    theta0 = 0.05
    t, theta, L, _ = pendulum_run(theta0, periods=2, length=0.25)
    assert measured_period(t, theta) == pytest.approx(2 * np.pi * np.sqrt(L / G), rel=5e-3)
    assert measured_period(t, theta) == pytest.approx(exact_period(theta0, L), rel=1e-4)


def test_large_amplitude_pendulum_period_and_energy():
    """θ0 = 1 rad: the exact period is 4 √(L/g) K(sin²(θ0/2)) (6.6 % above 2π √(L/g)). Semi-implicit
    Euler is symplectic: over 10 periods the energy oscillates by O(ω Δt) (ω Δt / 2 ≈ 0.6 % of the
    swinging energy here) around its start without drifting (period means agree to 1e-5), and the
    amplitude stays θ0."""
    theta0, length = 1.0, 0.25
    t, theta, L, energy = pendulum_run(theta0, periods=10, length=length)
    assert measured_period(t, theta) == pytest.approx(exact_period(theta0, L), rel=1e-4)
    scale = G * length * (1 - np.cos(theta0))  # m g l (1 − cos θ0): the energy that swings
    assert np.abs(energy - energy[0]).max() < 1e-2 * scale
    period = int(exact_period(theta0, L) / (t[1] - t[0]))
    assert abs(energy[-period:].mean() - energy[:period].mean()) < 1e-5 * scale
    assert np.abs(theta[-period:]).max() == pytest.approx(theta0, abs=1e-4)


# --- 4b. free rotation ----------------------------------------------------------------------------------


def _free_body(inertia, mass=1.0):
    """One force-free body (no gravity, no ground) with principal inertia `inertia` about its centre."""
    builder = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    builder.add_body("body", parent=None, joint="free", kind="floating", mass=mass, inertia=np.diag(inertia))
    builder.add_shape("body", Box([0.5, 0.5, 0.5]))
    return World(builder.build(), dt=1e-3, ground=False)


def _kinetic_energy_and_momentum(v, inertia, mass=1.0):
    """½ m |v|² + ½ ωᵀ I ω and ‖I ω‖ (body-frame velocities; both are frame-invariant)."""
    linear, angular = v[..., :3], v[..., 3:]
    energy = 0.5 * mass * (linear**2).sum(-1) + 0.5 * (inertia * angular**2).sum(-1)
    return energy, np.linalg.norm(inertia * angular, axis=-1)


@pytest.mark.parametrize("spin", [50.0, 1000.0])
def test_a_spinning_box_keeps_its_energy(spin):
    """A force-free unit cube of side 1 m moving at 1 m/s and spinning about z at 50 and 1,000 rad/s,
    10⁴ steps of 1 ms: a torque-free rigid body keeps its kinetic energy ½ m v² + ½ I ω² and its
    speed (the explicit ω × v coupling used to multiply it by (1 + (ω Δt)²)^½ per step)."""
    inertia = np.full(3, 1.0 / 6.0)
    world = _free_body(inertia)
    q0, v0 = np.r_[0.0, 0.0, 0.0, IDENTITY], np.r_[1.0, 0.0, 0.0, 0.0, 0.0, spin]
    batch = world.rollout_batch(q0[None], v0[None], np.zeros((10_000, 6)))
    energy, momentum = _kinetic_energy_and_momentum(batch.v[0], inertia)
    energy0, momentum0 = _kinetic_energy_and_momentum(v0, inertia)
    assert np.abs(energy / energy0 - 1).max() <= 1e-6
    assert np.abs(momentum / momentum0 - 1).max() <= 1e-6
    np.testing.assert_allclose(np.linalg.norm(batch.v[0, :, :3], axis=1), 1.0, rtol=1e-6)


def test_a_tumbling_body_flips_about_its_intermediate_axis_with_energy_and_momentum_kept():
    """Principal moments 1, 2, 3 kg m², spun at 5 rad/s about the intermediate axis with a 0.01 rad/s
    perturbation: the spin flips back and forth (Dzhanibekov), and over 10⁴ steps energy and ‖L‖ stay
    to 1e-6. The angular velocity follows Euler's equations I ω̇ = (I ω) × ω, integrated here by
    scipy's DOP853 to 1e-12, within the O(Δt²) error of the step over the first second."""
    from scipy.integrate import solve_ivp

    inertia = np.array([1.0, 2.0, 3.0])
    world = _free_body(inertia, mass=2.0)
    q0, v0 = np.r_[0.0, 0.0, 0.0, IDENTITY], np.r_[0.3, 0.0, 0.1, 0.01, 5.0, 0.0]
    batch = world.rollout_batch(q0[None], v0[None], np.zeros((10_000, 6)))
    energy, momentum = _kinetic_energy_and_momentum(batch.v[0], inertia, mass=2.0)
    energy0, momentum0 = _kinetic_energy_and_momentum(v0, inertia, mass=2.0)
    assert np.abs(energy / energy0 - 1).max() <= 1e-6
    assert np.abs(momentum / momentum0 - 1).max() <= 1e-6
    spin = batch.v[0, :, 4]
    assert spin.min() < -4.9 and spin.max() > 4.9  # flipped over and back

    def euler(_, omega):
        return np.cross(inertia * omega, omega) / inertia

    exact = solve_ivp(euler, (0.0, 1.0), v0[3:], method="DOP853", rtol=1e-12, atol=1e-12, t_eval=[1.0]).y[:, 0]
    np.testing.assert_allclose(batch.v[0, 999, 3:], exact, atol=1e-3)


# --- 4c. joint limits and deep penetration --------------------------------------------------------------


def _slider(lower=-1.0, upper=1.0):
    """A 1 kg body on a prismatic joint along x with limits [lower, upper], no gravity."""
    builder = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    builder.add_body(
        "slider", parent=None, joint="slide", kind="prismatic", axis=(1, 0, 0), mass=1.0,
        inertia=1e-2 * np.eye(3), lower=lower, upper=upper,
    )  # fmt: skip
    return builder.build()


@pytest.mark.parametrize("dt", [0.01, 0.05])
def test_a_slider_stops_at_its_limit_whatever_the_step(dt):
    """At 100 m/s a step covers 1–5 m, far beyond the limit margin: the step that reaches the bound
    lands the slider exactly on it (its velocity covers the distance left, speculatively), the next
    one stops it (a perfectly inelastic stop: limits do not bounce), and it stays."""
    world = World(_slider(), dt=dt, ground=False)
    result = world.rollout_batch(np.zeros((1, 1)), np.full((1, 1), 100.0), np.zeros((20, 1)))
    q, v = result.q[0, :, 0], result.v[0, :, 0]
    assert q.max() <= 1.0 + 1e-12
    hit = int(np.argmax(q >= 1.0 - 1e-12))
    assert q[hit] == pytest.approx(1.0, abs=1e-12) and v[hit] == pytest.approx((1.0 - q[hit - 1]) / dt)
    np.testing.assert_allclose(v[hit + 1 :], 0.0, atol=1e-12)
    assert np.abs(v).max() <= 100.0


@pytest.mark.parametrize("dt", [0.01, 0.05])
def test_a_slider_started_past_its_limit_is_moved_back_without_speed(dt):
    """5 m past its upper bound at rest: the limit neither throws the slider back with the speed that
    would undo the violation in a few steps (β 5 m / Δt = 20 m/s at 50 ms) nor lets it move further;
    its position returns by β of the violation per step, q_k − 1 = 5 (1 − β)^k, with v = 0 throughout."""
    world = World(_slider(), dt=dt, ground=False, baumgarte=0.2)
    result = world.rollout_batch(np.full((1, 1), 6.0), np.zeros((1, 1)), np.zeros((30, 1)))
    np.testing.assert_array_equal(result.v[0, :, 0], 0.0)
    np.testing.assert_allclose(result.q[0, :, 0] - 1.0, 5.0 * 0.8 ** np.arange(31), rtol=1e-12)


@pytest.mark.parametrize("dt", [0.01, 0.05])
def test_a_half_cheetah_falling_onto_its_height_limit_never_gains_energy(dt):
    """The half-cheetah (no gravity, so its energy is all kinetic) thrown down at 140 m/s onto its
    rootz limit 1 m below: the limit stops the root within the step that reaches it and the legs'
    joints then swing into theirs, and the kinetic energy ½ vᵀ M(q) v never exceeds its start (it used
    to reach 10¹⁷⁸ m/s)."""
    from dcol.dynamics import crba

    model = load_dataset_robot("half_cheetah", gravity=(0.0, 0.0, 0.0))
    world = World(model, dt=dt)
    q0, v0 = np.zeros(model.nq), np.zeros(model.nv)
    q0[1], v0[1] = model.lower_limits[1] + 1.0, -140.0
    result = world.rollout_batch(q0[None], v0[None], np.zeros((60, model.nv)))
    q, v = result.q[0], result.v[0]
    energy = np.array([0.5 * vk @ crba(model, qk) @ vk for qk, vk in zip(q, v)])
    assert np.all(energy <= energy[0] * (1 + 1e-9))
    assert q[:, 1].min() >= model.lower_limits[1] - 1e-9


@pytest.mark.parametrize("dt", [1e-2, 5e-2])
@pytest.mark.parametrize("restitution", [0.0, 0.5, 0.9])
@pytest.mark.parametrize("height, speed", [(0.3, 10.0), (0.3, 50.0), (-0.05, 10.0), (-0.05, 0.0)])
def test_a_ball_thrown_at_the_ground_leaves_at_e_times_its_speed_whatever_the_step(dt, restitution, height, speed):
    """A ball (no gravity, so its energy is all kinetic) thrown straight down at 10 or 50 m/s from
    0.3 m above the ground, or from 5 cm inside it, at steps that cover up to 2.5 m: Newton's law
    v⁺ = −e v⁻ for the one impact, so it leaves at e times its approach speed and never faster, however
    deep the contact; started at rest inside the ground it is moved out without speed, and nothing
    pushes it deeper."""
    radius = 0.1
    world = World(ball_model(radius, gravity=0.0), dt=dt, restitution=restitution, friction=0.0)
    q, v = floating_state(([0.0, 0.0, radius + height], [0.0, 0.0, -speed]))
    result = world.rollout(q, v, np.zeros((round(1.0 / dt), 6)))
    vertical = result.v[:, 2]
    assert np.abs(result.v[:, [0, 1, 3, 4, 5]]).max() == 0.0
    assert np.abs(vertical).max() <= speed
    assert vertical[-1] == pytest.approx(restitution * speed, rel=1e-12, abs=1e-12)
    # Never deeper than it started or than the allowed penetration (1 % of the contact margin).
    assert result.q[:, 2].min() >= min(radius + height, radius - 1e-2 * world.contact_margin) - 1e-12


@pytest.mark.parametrize("dt", [1e-3, 1e-2, 1 / 60])
def test_a_box_started_inside_the_ground_is_moved_out_without_speed(dt):
    """The cube resting 5 cm deep in the ground: the penetration is removed by moving the cube (a
    fraction β per step), not by a Baumgarte velocity (which launched it at β φ / Δt = 10 m/s at 1 ms):
    it rises monotonically to the allowed 1e-4 m penetration (1 % of the 1 cm contact margin) and never
    moves faster than rounding."""
    world = World(load_dataset_robot("box", floating_base=True), dt=dt)
    q0, v0 = box_on_ground()
    q0[2] = 0.05
    result = world.rollout_batch(q0[None], v0[None], np.zeros((100, 6)))
    z = result.q[0, :, 2]
    assert np.all(np.diff(z) >= -1e-12) and z.max() <= 0.1
    assert z[-1] == pytest.approx(0.1 - 1e-4, abs=1e-6)
    assert np.abs(result.v[0]).max() <= 1e-12


@pytest.mark.parametrize("dt", [1e-3, 1e-2])
def test_a_double_pendulum_hanging_through_the_ground_slab_stays_bounded(dt):
    """The shipped double pendulum (pivot on the ground's top face, 2 m of links hanging through the
    1 m slab): every step's LCP converges (it used to run 200,000 sweeps per step) and the swing's
    kinetic energy stays below what falling 4 m (the most any point of the chain can drop) would give
    (a Baumgarte velocity of β φ / Δt drove it to 311 rad/s)."""
    from dcol.dynamics import crba, inertial_parameters

    model = load_dataset_robot("double_pendulum")
    world = World(model, dt=dt)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = world.rollout_batch(np.array([[0.3, 0.2]]), np.zeros((1, 2)), np.zeros((100, 2)))
    q, v = result.q[0], result.v[0]
    assert np.isfinite(q).all() and np.isfinite(v).all()
    mass = inertial_parameters(model)[::10].sum()
    energy = np.array([0.5 * vk @ crba(model, qk) @ vk for qk, vk in zip(q, v)])
    assert energy.max() <= mass * G * 4.0


# --- 5. a pile of boxes -------------------------------------------------------------------------------


@pytest.mark.slow
def test_pile_of_ten_boxes_settles_without_sinking():
    """Ten 0.2 m, 1 kg cubes stacked with 1 cm gaps (so each drops onto the one below), random 2 cm
    horizontal offsets and yaws up to 0.1 rad, 2000 steps of 2 ms: the penetration stays below 5 mm,
    every LCP is solved, speeds stay below the free fall through all ten gaps (√(2 g · 10 cm) ≈
    1.4 m/s), and the settled stack is at rest with its centres at z_i = 0.1 + 0.2 i."""
    count, gap, dt, steps = 10, 0.01, 2e-3, 2000
    rng = np.random.default_rng(7)
    q = np.zeros(7 * count)
    for i in range(count):
        yaw = rng.uniform(-0.1, 0.1)
        q[7 * i : 7 * i + 7] = np.r_[
            rng.uniform(-0.02, 0.02, 2), 0.1 + gap + (0.2 + gap) * i, np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)
        ]
    v = np.zeros(6 * count)
    world = World(box_pile_model(count), dt=dt)
    deepest, fastest, previous = 0.0, 0.0, None
    for _ in range(steps):  # a step whose contact LCP is not solved to its tolerance raises
        previous = world.step(q, v, warm_start=previous)
        q, v = previous.q, previous.v
        if len(previous.contacts):
            deepest = min(deepest, previous.contacts.separation.min())
        fastest = max(fastest, np.abs(v.reshape(count, 6)[:, :3]).max())
    assert deepest > -5e-3, f"penetration {-deepest * 1e3:.2f} mm"
    assert fastest < np.sqrt(2 * G * count * gap) + 0.1
    twists = v.reshape(count, 6)
    kinetic = 0.5 * np.sum(twists[:, :3] ** 2) + 0.5 * (0.2**2 / 6) * np.sum(twists[:, 3:] ** 2)
    assert kinetic < 1e-8
    np.testing.assert_allclose(q.reshape(count, 7)[:, 2], 0.1 + 0.2 * np.arange(count), atol=1e-3)


# --- 6. gradients through elastic impacts -------------------------------------------------------------


def ball_drop_closed_form(z0, v0, e, T, R, g):
    """Ball (radius R) from height z0 with vertical velocity v0 < 0, one bounce before T.

    Impact when z0 − R + v0 t − g t²/2 = 0: with s = √(v0² + 2 g (z0 − R)) the impact speed,
    t_c = (v0 + s)/g; rebound at e s; with τ = T − t_c:
        z(T) = R + e s τ − g τ²/2,   v(T) = e s − g τ.
    With s_{z0} = g/s, s_{v0} = v0/s, t_c,{z0} = 1/s, t_c,{v0} = (s + v0)/(g s):
        ∂z(T)/∂x = e s_x τ − v(T) t_c,x,   ∂v(T)/∂x = e s_x + g t_c,x.
    (For g = 0: ∂z/∂z0 = −e, ∂z/∂v0 = −e T, ∂v/∂z0 = 0, ∂v/∂v0 = −e. With gravity the saltation
    term (1 + e) g / s of ∂v⁺/∂z at the impact adds (1 + e) g τ / s to ∂z/∂z0.)
    Returns (z(T), v(T), [[∂z/∂z0, ∂z/∂v0], [∂v/∂z0, ∂v/∂v0]])."""
    s = np.sqrt(v0**2 + 2 * g * (z0 - R))
    t_c = (v0 + s) / g if g > 0 else (z0 - R) / -v0
    tau = T - t_c
    z, v = R + e * s * tau - g * tau**2 / 2, e * s - g * tau
    s_x = np.array([g / s, v0 / s])
    t_x = np.array([1 / s, (s + v0) / (g * s) if g > 0 else (z0 - R) / v0**2])
    return z, v, np.array([e * s_x * tau - v * t_x, e * s_x + g * t_x])


def ball_drop_jacobian(z0, v0, e, T, R, g, dt, bounce=True):
    """Rollout of the ball drop: (z(T), v(T), the simulator's 2 × 2 Jacobian as in the closed form)."""
    world = World(ball_model(R, gravity=g), dt=dt, restitution=e, friction=0.0)
    q, v = floating_state(([0.0, 0.0, z0], [0.0, 0.0, v0]))
    result = rollout(world, q, v, round(T / dt), derivatives=True)
    assert sum(step.bouncing.any() for step in result.steps) == 1
    full = final_state_jacobian(result, [2], [2], bounce=bounce)
    return result.q[-1, 2], result.v[-1, 2], full[:, [2, 6 + 2]]


def dimensionless(J, T):
    """[[∂z/∂z0, ∂z/∂v0 / T], [T ∂v/∂z0, ∂v/∂v0]]: every entry O(1), so one absolute tolerance."""
    return J * np.array([[1.0, 1.0 / T], [T, 1.0]])


@pytest.mark.parametrize("g", [0.0, G], ids=["no-gravity", "gravity"])
def test_bounce_gradients_match_continuous_time_closed_form(g):
    """A 1-D ball drop with one bounce, e = 0.5, loss on the final state only (default bounce=True).

    The bouncing step starts at t_k ∈ (t_c − Δt, t_c], so the discrete trajectory and its
    bounce-corrected Jacobian are within O(Δt) of the continuous ones, with an error that depends on
    where t_c falls in its step: five start heights spread over one step's travel sample that phase.
    Expected: a few % at Δt = 1 ms, and the mean error shrinking when Δt halves."""
    v0, e, T, R, dt, drop = -1.0, 0.5, 0.1, 0.1, 1e-3, 0.05
    impact_speed = np.sqrt(v0**2 + 2 * g * drop)
    starts = R + drop + impact_speed * dt * np.arange(5) / 5

    def errors(step):
        out = []
        for z0 in starts:
            z, v, J = ball_drop_closed_form(z0, v0, e, T, R, g)
            z_sim, v_sim, J_sim = ball_drop_jacobian(z0, v0, e, T, R, g, step)
            assert z_sim == pytest.approx(z, abs=2 * impact_speed * step)  # bounce up to a step's travel early
            assert v_sim == pytest.approx(v, abs=2 * g * step + 1e-9)
            error = np.abs(dimensionless(J_sim - J, T)).max()
            assert error < 0.03, (
                f"z0 = {z0}: simulator d(z_T, v_T)/d(z0, v0) = {J_sim.round(4).tolist()}, "
                f"closed form {J.round(4).tolist()}"
            )
            out.append(error)
        return np.mean(out)

    error = errors(dt)
    if error > 1e-9:
        error_half = errors(dt / 2)
        assert error_half < 0.7 * error, f"mean error {error:.3g} at Δt, {error_half:.3g} at Δt/2"


def test_bounce_false_gives_the_discrete_wrong_sign():
    """Nimble §VI: without the bounce correction the discrete step says a ball starting closer to the
    ground ends closer (∂z(T)/∂z0 = +1), whereas it bounces earlier and ends farther: −e (g = 0)."""
    z0, v0, e, T, R, dt = 0.15, -1.0, 0.5, 0.1, 0.1, 1e-3
    J = ball_drop_closed_form(z0, v0, e, T, R, 0.0)[2]
    J_discrete = ball_drop_jacobian(z0, v0, e, T, R, 0.0, dt, bounce=False)[2]
    assert J[0, 0] == pytest.approx(-e)
    assert J_discrete[0, 0] == pytest.approx(1.0, abs=1e-9)


def test_two_ball_collision_state_and_gradients():
    """Two balls on the x axis, no gravity, no friction: masses m1, m2, radii R1, R2, positions
    x1 < x2, velocities u1 > u2. With the gap d = x2 − x1 − R1 − R2 and closing speed w = u1 − u2 they
    touch at t_c = d / w; momentum conservation and v2' − v1' = e w give v1' = u1 − μ2 w,
    v2' = u2 + μ1 w with μ_i = m_i (1 + e) / (m1 + m2), so
        x1(T) = x1 + u1 T − μ2 (w T − d),   x2(T) = x2 + u2 T + μ1 (w T − d),
    affine in the initial state: the Jacobian is read off directly."""
    m1, m2, R1, R2, e, dt, T = 1.0, 3.0, 0.1, 0.15, 0.5, 1e-3, 0.1
    x1, x2, u1, u2 = 0.0, 0.3, 1.0, -0.5
    builder = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    model = floating_bodies(builder, [("a", m1, 0.4 * m1 * R1**2, Sphere(R1)), ("b", m2, 0.4 * m2 * R2**2, Sphere(R2))])
    world = World(model, dt=dt, ground=False, restitution=e, friction=0.0)
    q, v = floating_state(([x1, 0.0, 0.0], [u1, 0.0, 0.0]), ([x2, 0.0, 0.0], [u2, 0.0, 0.0]))
    result = rollout(world, q, v, round(T / dt), derivatives=True)
    assert sum(step.bouncing.any() for step in result.steps) == 1

    M, d, w = m1 + m2, x2 - x1 - R1 - R2, u1 - u2
    mu1, mu2 = m1 * (1 + e) / M, m2 * (1 + e) / M
    expected_v = [u1 - mu2 * w, u2 + mu1 * w]
    expected_x = [x1 + u1 * T - mu2 * (w * T - d), x2 + u2 * T + mu1 * (w * T - d)]
    np.testing.assert_allclose(result.v[-1, [0, 6]], expected_v, rtol=0.0, atol=1e-9)
    np.testing.assert_allclose(result.q[-1, [0, 7]], expected_x, rtol=0.0, atol=w * dt)
    np.testing.assert_allclose(m1 * result.v[-1, 0] + m2 * result.v[-1, 6], m1 * u1 + m2 * u2, atol=1e-12)

    # Rows x1(T), x2(T), v1(T), v2(T); columns x1, x2, u1, u2 (tangent indices 0, 6 of q and of v).
    expected = np.array(
        [
            [1 - mu2, mu2, (1 - mu2) * T, mu2 * T],
            [mu1, 1 - mu1, mu1 * T, (1 - mu1) * T],
            [0.0, 0.0, 1 - mu2, mu2],
            [0.0, 0.0, mu1, 1 - mu1],
        ]
    )
    J = final_state_jacobian(result, [0, 6], [0, 6])[:, [0, 6, 12, 18]]
    np.testing.assert_allclose(J * [1, 1, 1 / T, 1 / T], expected * [1, 1, 1 / T, 1 / T], rtol=0.0, atol=1e-6)


# --- 7. parameter gradients ---------------------------------------------------------------------------


def test_sliding_box_friction_and_mass_gradients(box_model):
    """While the box slides, v_x(T) = v0 − μ g T and x(T) = x0 + v0 T − μ g T²/2 (discretely
    x_N = x0 + Δt Σ_{k=1..N} v_k, ∂x_N/∂μ = −g Δt² N (N + 1)/2): ∂v_x(T)/∂μ = −g T and
    ∂x(T)/∂μ → −g T²/2. The deceleration μ g does not involve the mass: with com at the origin
    (first moment m c = 0 fixed) and I about the origin fixed, ∂(x, v_x)(T)/∂m = 0; the restitution
    never acts, ∂/∂e = 0. θ = [m, m c, I_origin (6), μ, e]."""
    mu, v0, dt, steps = 0.3, 2.0, 1e-3, 200
    T = steps * dt
    world = World(box_model, dt=dt, friction=mu)
    q, v = box_on_ground((v0, 0.0, 0.0))
    result = rollout(world, q, v, steps, derivatives=True)
    assert result.v[-1, 0] == pytest.approx(v0 - mu * G * T, abs=1e-9)

    discrete_dx_dmu = -G * dt**2 * steps * (steps + 1) / 2

    # Reverse mode: Rollout.vjp with the loss x(T) or v_x(T); θ columns [m, ..., μ, e].
    grad = np.zeros((steps + 1, 6))
    grad[-1, 0] = 1.0
    by_velocity = result.vjp(grad_v=grad).params
    by_position = result.vjp(grad_q=grad).params
    assert by_velocity[-2] == pytest.approx(-G * T, rel=1e-6)
    assert by_position[-2] == pytest.approx(discrete_dx_dmu, rel=1e-6)
    for params in (by_velocity, by_position):
        assert abs(params[0]) < 1e-9  # mass
        assert abs(params[-1]) < 1e-12  # restitution

    # Forward mode: s = d(q, v)/d(m, μ) through the step Jacobians, s ← ∂step/∂(q, v) s + ∂step/∂θ.
    tangent = np.zeros((12, 2))
    for step in result.steps:
        J = step.jacobians()
        tangent = np.block([[J.q_q, J.q_v], [J.v_q, J.v_v]]) @ tangent + np.vstack(
            [J.q_params[:, [0, -2]], J.v_params[:, [0, -2]]]
        )
    np.testing.assert_allclose(tangent[[0, 6], 1], [discrete_dx_dmu, -G * T], rtol=1e-6)
    np.testing.assert_allclose(tangent[[0, 6], 0], 0.0, atol=1e-9)


def test_a_fixed_base_tree_owns_the_worlds_shapes_free_bodies_hit_them():
    """A two-link arm on a base fixed to the world (the world's shape) and a free cube dropped on the
    base: without self-collision the arm's links never test the base (their shapes overlap it, as a
    robot's meshes do); the cube, clear of the arm, lands on the base and rests with its centre 0.05
    above the base's top at z = 0.4."""
    builder = ModelBuilder(gravity=(0.0, 0.0, -G))
    builder.add_shape(None, Box([0.2, 0.2, 0.2], offset=([0.0, 0.0, 0.2], IDENTITY)))  # base, top at 0.4
    builder.add_body(
        "upper",
        parent=None,
        joint="shoulder",
        kind="revolute",
        axis=(0, 1, 0),
        placement=(np.array([0.0, 0.0, 0.4]), np.eye(3)),
        mass=1.0,
        com=(0.0, 0.0, 0.25),
        inertia=np.eye(3) * 1e-2,
    )
    builder.add_shape("upper", Box([0.05, 0.05, 0.3], offset=([0.0, 0.0, 0.25], IDENTITY)))  # into the base
    builder.add_body(
        "lower",
        parent="upper",
        joint="elbow",
        kind="revolute",
        axis=(0, 1, 0),
        placement=(np.array([0.0, 0.0, 0.5]), np.eye(3)),
        mass=1.0,
        com=(0.0, 0.0, 0.25),
        inertia=np.eye(3) * 1e-2,
    )
    builder.add_shape("lower", Box([0.05, 0.05, 0.3], offset=([0.0, 0.0, -0.1], IDENTITY)))
    builder.add_body("cube", parent=None, joint="cube_free", kind="floating", mass=1.0, inertia=np.eye(3) / 600)
    builder.add_shape("cube", Box([0.05, 0.05, 0.05]))
    model = builder.build()
    bodies = {name: index for index, name in enumerate(model.body_names)}
    for self_collision in (False, True):
        world = World(model, dt=1e-3, ground=False, self_collision=self_collision)
        scene_body = {int(body): index for index, body in enumerate(world.scene_body_of_model) if body >= 0}
        base = int(np.flatnonzero(world.scene_body_of_model == -1)[0])
        allowed = world.scene.collision_matrix()
        assert allowed[base, scene_body[bodies["lower"]]] == self_collision
        assert not allowed[base, scene_body[bodies["upper"]]]  # its parent: never
        assert allowed[base, scene_body[bodies["cube"]]]
    world = World(model, dt=1e-3, ground=False)
    q = np.zeros(model.nq)
    cube = model.joint_q_index[bodies["cube"]]
    q[cube : cube + 7] = [0.12, 0.12, 0.55, *IDENTITY]  # over the base's corner, beside the upright arm
    rollout = world.rollout(q, np.zeros(model.nv), np.zeros((600, model.nv)))
    assert rollout.q[-1, cube + 2] == pytest.approx(0.45, abs=1e-3)
    assert np.abs(rollout.v[-1, model.joint_v_index[bodies["cube"]] :][:6]).max() < 1e-3


def test_contact_problem_is_the_lcp_the_step_solves_island_by_island():
    """World.contact_problem against A = J (M + Δt D)⁻¹ Jᵀ from the mass matrix (numpy's solve): two
    cubes stacked and a third apart, in two contact islands whose block of A the other's rows do not
    touch, and a fourth hovering 5 mm up, within the 1 cm margin, whose speculative contacts the
    screened solve leaves out at zero impulse. The step's impulses solve the whole LCP: w = A f + b
    complementary to f within the friction bounds."""
    from dcol.dynamics import crba

    world = World(box_pile_model(4), dt=1e-3, friction=0.5)
    q, v = floating_state(
        ([0.0, 0.0, 0.0995], [0.0, 0.0, -0.1]),
        ([0.01, 0.0, 0.2993], [0.05, 0.0, 0.0]),
        ([0.6, 0.0, 0.0998], [0.3, 0.0, 0.0]),
        ([-0.6, 0.0, 0.105], [0.0, 0.0, 0.0]),
    )
    step = world.step(q, v)
    J, A, b, bounds, kept = world.contact_problem(q, v)
    M = crba(world.model, q) + world.dt * np.diag(world.model.damping)
    np.testing.assert_allclose(A, J @ np.linalg.solve(M, J.T), rtol=0.0, atol=1e-12 * np.abs(A).max())
    # islands: the rows of the cube apart (dofs 12–17) and of the stack (0–11) do not couple
    apart = np.abs(J[:, 12:18]).max(axis=1) > 0
    stack = np.abs(J[:, :12]).max(axis=1) > 0
    assert apart.any() and stack.any() and not (apart & stack).any()
    assert np.all(A[np.ix_(apart, stack)] == 0.0)
    hovering = np.abs(J[:, 18:]).max(axis=1) > 0
    assert hovering.sum() == 12 and np.all(b[hovering][::3] > 0.0)  # 4 speculative corners, gap closing slowly
    f = step.lcp.f
    assert np.all(f[hovering] == 0.0) and step.lcp.status == 0
    w = A @ f + b
    normal = bounds.friction_index
    high = np.where(normal >= 0, bounds.mu * f[np.maximum(normal, 0)], np.inf)
    low = np.where(normal >= 0, -high, 0.0)
    assert np.all(f >= low - 1e-12) and np.all(f <= high + 1e-12)
    assert np.abs(f - np.clip(f - w, low, high)).max() <= 1e-9
    assert np.array_equal(np.concatenate([step.impulses.ravel(), step.limit_impulses])[kept], f)


def _least_squares_minimal_impulses(problem, lcp):
    """The impulses on the step's sets by numpy's pseudo-inverse (Nimble App. B): the bounded entries
    at their bounds, a friction entry at ±μ times its normal (E's column when the normal clamps), and
    f_C = −K⁺ (b_C + A_CB c) with K = A_CC + A_CB E, singular values below 1e-10 of the largest cut."""
    _, A, b, bounds, _ = problem
    C, B = np.flatnonzero(lcp.clamping), np.flatnonzero(~lcp.clamping)
    column = {row: index for index, row in enumerate(C)}
    E, c = np.zeros((len(B), len(C))), np.zeros(len(B))
    for r, row in enumerate(B):
        sign, normal = (1.0 if lcp.at_upper[row] else -1.0), bounds.friction_index[row]
        if normal >= 0 and normal in column:
            E[r, column[normal]] = sign * bounds.mu[row]
        elif normal >= 0:
            c[r] = sign * bounds.mu[row] * lcp.f[normal]
    K = A[np.ix_(C, C)] + A[np.ix_(C, B)] @ E
    f = np.zeros(len(b))
    f[C] = -np.linalg.pinv(K, rcond=1e-10) @ (b[C] + A[np.ix_(C, B)] @ c)
    f[B] = E @ f[C] + c
    return f


def _sliding_corners(step):
    """Friction rows at a bound whose normal clamps (E's entries: the corner slides while it pushes)."""
    rows = np.arange(len(step.lcp.f))
    friction = (rows % 3 != 0) & (rows < 3 * len(step.contacts))
    return friction & ~step.lcp.clamping & step.lcp.clamping[rows - rows % 3]


@pytest.mark.parametrize("scene", ["stack at rest", "stack sliding", "ball at rest"])
def test_warm_started_impulses_are_the_least_squares_minimal_ones_on_their_sets(scene):
    """Warm-started steps reuse the previous sets and solve on them least-squares-minimally, by the
    factors of each island's rows without its Delassus matrix, in each of its three cases: a three-box
    stack at rest (four sticking corners per face: more clamping rows than dofs, all of them
    constrained), the same stack sliding at 1 m/s (friction at its bounds, following clamping
    normals), and a ball at rest (three clamping rows for six dofs). The step's impulses equal numpy's
    pseudo-inverse solution on the step's own sets, and the step reports that the warm start solved
    it."""
    if scene == "ball at rest":
        world = World(ball_model(), dt=1e-3, friction=0.3)
        q, v = floating_state(([0.0, 0.0, 0.1], [0.0, 0.0, 0.0]))
    else:
        world = World(box_pile_model(3), dt=1e-3, friction=0.3)
        speed = [1.0, 0.0, 0.0] if scene == "stack sliding" else [0.0, 0.0, 0.0]
        q, v = floating_state(*[([0.0, 0.0, 0.1 + 0.2 * level], speed) for level in range(3)])
    previous = None
    for _ in range(30):
        previous = world.step(q, v, warm_start=previous)
        q, v = previous.q, previous.v
    step = world.step(q, v, warm_start=previous)
    assert step.lcp.warm_start_hit and len(step.contacts) == (1 if scene == "ball at rest" else 12)
    assert _sliding_corners(step).any() == (scene == "stack sliding")
    expected = _least_squares_minimal_impulses(world.contact_problem(q, v), step.lcp)
    np.testing.assert_allclose(step.lcp.f, expected, rtol=0.0, atol=1e-9 * np.abs(expected).max())


def test_a_zero_width_friction_row_warm_starts_on_either_side():
    """Two cubes on the ground 5 mm apart, one sliding past the other: their facing sides are a
    speculative contact that takes no impulse, so its friction rows are boxed at ±μ·0 and hold f = 0
    whatever the sign of their sliding velocity (which, for bodies at rest, round-off flips from step to
    step). A warm start that lists them on the other side (lower for upper and back) still solves the
    step on its sets, with the same impulses."""
    world = World(box_pile_model(2), dt=1e-3, friction=0.5)
    q, v = floating_state(([0.0, 0.0, 0.1], [0.0, 0.0, 0.0]), ([0.205, 0.0, 0.1], [0.0, 0.5, 0.0]))
    previous = None
    for _ in range(20):
        previous = world.step(q, v, warm_start=previous)
        q, v = previous.q, previous.v
    sideways = np.abs(previous.contacts.normal[:, 0]) > 0.99
    assert sideways.any() and np.all(previous.impulses[sideways] == 0.0)
    zero_width = np.flatnonzero(np.repeat(sideways, 3) & (np.arange(3 * len(sideways)) % 3 != 0))
    row_ids, impulses, sets = previous._warm_start
    flipped = sets.copy()
    flipped[zero_width] = np.where(sets[zero_width] == 1, 2, 1)  # lower ↔ upper
    assert np.any(flipped != sets)
    reference = world.step(q, v, warm_start=previous)
    step = world.step(q, v, warm_start=dataclasses.replace(previous, _warm_start=(row_ids, impulses, flipped)))
    assert reference.lcp.warm_start_hit and step.lcp.warm_start_hit
    np.testing.assert_array_equal(step.lcp.f, reference.lcp.f)


def test_warm_started_impulses_with_a_sliding_corner_in_a_held_pile_are_least_squares_minimal():
    """The 64-cube pile of 4 × 4 columns of 4 landing: in the first three warm-started steps where a
    corner's friction sits at its bound while its normal pushes (E ≠ 0) and the other rows hold every
    cube, the impulses equal numpy's pseudo-inverse solution on the step's sets."""
    world = World(box_pile_model(64), dt=1e-3, friction=0.5)
    q, v = column_pile(4), np.zeros(6 * 64)
    previous, checked = None, 0
    for _ in range(200):
        step = world.step(q, v, warm_start=previous)
        if step.lcp.warm_start_hit and _sliding_corners(step).any():
            expected = _least_squares_minimal_impulses(world.contact_problem(q, v), step.lcp)
            np.testing.assert_allclose(step.lcp.f, expected, rtol=0.0, atol=1e-9 * np.abs(expected).max())
            checked += 1
            if checked == 3:
                break
        previous, q, v = step, step.q, step.v
    assert checked == 3


def test_mesh_foot_rests_flat_on_four_points_that_span_it():
    """A 32-sided prism (a mesh foot, radius 5 cm) set down 1 mm above the ground: every step keeps at
    most four of its 32 bottom vertices as contacts (the reduced patch), which span at least the
    inscribed square's area 2 r² (64% of the disk's); it lands and rests flat, its centre at the half
    height h/2 (closed form), without rocking: no tilt or angular velocity builds up."""
    import trimesh

    from dcol.geom import ConvexMesh

    radius, height, mass = 0.05, 0.04, 0.5
    foot = ConvexMesh.from_mesh(trimesh.creation.cylinder(radius=radius, height=height, sections=32))
    inertia = mass * np.diag([(3 * radius**2 + height**2) / 12] * 2 + [radius**2 / 2])
    builder = ModelBuilder()
    builder.add_body("foot", parent=None, joint="foot_free", kind="floating", mass=mass, inertia=inertia)
    builder.add_shape("foot", foot)
    world = World(builder.build(), dt=1e-3, friction=0.8)
    q0, v0 = floating_state(([0.0, 0.0, height / 2 + 1e-3], [0.0, 0.0, 0.0]))
    result = rollout(world, q0, v0, 400)
    for step in result.steps:
        assert len(step.contacts) <= 4
    points = result.steps[-1].contacts.point[:, :2]
    assert len(points) == 4
    hull = points[np.argsort(np.arctan2(*(points - points.mean(axis=0)).T[::-1]))]
    area = 0.5 * abs(np.sum(hull[:, 0] * np.roll(hull[:, 1], -1) - np.roll(hull[:, 0], -1) * hull[:, 1]))
    assert area >= 2 * radius**2 * np.cos(np.pi / 32) ** 2  # the square inscribed in the 32-gon
    assert result.q[-1, 2] == pytest.approx(height / 2, abs=2e-4)
    assert np.abs(result.q[-100:, 4:6]).max() < 1e-9  # quaternion x, y: no tilt
    assert np.abs(result.v[-100:, 3:]).max() < 1e-7  # no rocking


def _two_cube_body(half=0.05, apart=0.3, mass=1.0):
    """A floating body of two cubes of half side `half`, their centres `apart` along body x (the two
    shapes of one rigid body, as a foot mesh and the leg mesh that holds it)."""
    builder = ModelBuilder()
    builder.add_body("body", parent=None, joint="free", kind="floating", mass=mass, inertia=0.01 * np.eye(3))
    for x in (-apart / 2, apart / 2):
        builder.add_shape("body", Box([half] * 3, offset=([x, 0.0, 0.0], IDENTITY)))
    return builder


def test_a_body_on_two_shapes_rests_on_one_patch_of_their_outer_corners():
    """A body of two 10 cm cubes 30 cm apart set down on the ground: its contacts with the ground are
    one patch of four points, the corners of the two cubes' joint footprint (x = ±0.2, y = ±0.05 m), not
    four per cube; it rests at the half side (closed form) without tilting."""
    world = World(_two_cube_body().build(), dt=1e-3, friction=0.8)
    result = rollout(world, np.r_[0.0, 0.0, 0.05 + 1e-3, IDENTITY], np.zeros(6), 300)
    assert all(len(step.contacts) <= 4 for step in result.steps)
    points = result.steps[-1].contacts.point
    assert len(points) == 4
    corners = {(x, y) for x in (-0.2, 0.2) for y in (-0.05, 0.05)}
    assert {(round(x, 6), round(y, 6)) for x, y in points[:, :2]} == corners
    assert result.q[-1, 2] == pytest.approx(0.05, abs=2e-4)
    np.testing.assert_allclose(result.q[-20:, 3:], np.tile(IDENTITY, (20, 1)), rtol=0, atol=1e-6)


def test_a_body_touching_along_two_normals_keeps_both_patches():
    """The same body in a corner of the static world's floor and wall (two shapes of one static body):
    its cubes touch the floor and the outer one the wall, along two normals, so the floor's patch and
    the wall's are not reduced together: contacts along both normals, the wall's four on the cube's
    face x = 0.2."""
    builder = _two_cube_body()
    builder.add_shape(None, Box([1.0, 1.0, 0.1], offset=([0.0, 0.0, -0.1], IDENTITY)))  # floor, top at z = 0
    builder.add_shape(None, Box([0.1, 1.0, 1.0], offset=([0.3, 0.0, 0.0], IDENTITY)))  # wall, face at x = 0.2
    world = World(builder.build(), dt=1e-3, friction=0.8, ground=False)
    step = world.step(np.r_[0.0, 0.0, 0.05 + 1e-3, IDENTITY], np.zeros(6))
    normals = np.abs(step.contacts.normal)
    on_wall = normals[:, 0] > 0.99
    assert (normals[:, 2] > 0.99).sum() >= 3 and on_wall.sum() == 4
    np.testing.assert_allclose(step.contacts.point[on_wall, 0], 0.2, atol=1e-9)


@pytest.mark.parametrize("dt", [0.01, 1 / 60])
@pytest.mark.parametrize("pose", ["standing", "lying"])
def test_cylinder_rests_on_its_cap_or_its_side(pose, dt):
    """A cylinder (radius 5 cm, length 12 cm) set down 1 mm above the ground on its cap or on its side,
    at 100 and 60 Hz: it rests on its reduced patch, four rim points spanning the cap or the two ends of
    its bottom line, its centre at L/2 or R (closed forms), without tilting or rocking. (It had one
    contact, at the signed distance's witness, which jumped between rim points as it rocked.)"""
    radius, length, mass = 0.05, 0.12, 0.5
    axial, transverse = mass * radius**2 / 2, mass * (3 * radius**2 + length**2) / 12
    builder = ModelBuilder()
    builder.add_body(
        "can",
        parent=None,
        joint="can_free",
        kind="floating",
        mass=mass,
        inertia=np.diag([axial, transverse, transverse]),
    )
    builder.add_shape("can", Cylinder(radius, length))
    world = World(builder.build(), dt=dt, friction=0.8)
    # The cylinder's axis is body x: turned onto world z to stand, left along x to lie.
    standing = pose == "standing"
    height = length / 2 if standing else radius
    orientation = [np.sqrt(0.5), 0.0, -np.sqrt(0.5), 0.0] if standing else [1.0, 0.0, 0.0, 0.0]
    q0 = np.r_[0.0, 0.0, height + 1e-3, orientation]
    result = rollout(world, q0, np.zeros(6), round(2.0 / dt))
    assert all(len(step.contacts) <= 4 for step in result.steps)
    assert len(result.steps[-1].contacts) == (4 if standing else 2)
    assert result.q[-1, 2] == pytest.approx(height, abs=2e-4)
    np.testing.assert_allclose(result.q[-20:, 3:], np.tile(orientation, (20, 1)), rtol=0, atol=1e-6)  # no tilt
    assert np.abs(result.v[-20:]).max() < 1e-6  # at rest: no rocking or creeping


def test_a_pile_of_125_boxes_settles_with_every_solve_converged():
    """125 cubes (0.2 m, 1 kg) in 25 columns of five, each stacked with 1 cm gaps, a few mm of sideways
    offset and a small yaw, dropped together: every step's contact LCP converges (a step whose
    LCP does not would raise; warnings are errors here too), and after 0.8 s the pile rests with its centres at
    z_i = 0.1 + 0.2 i (the closed form of a rigid stack), no contact deeper than 5 mm and no speed left."""
    columns, levels, half = 25, 5, 0.1
    count = columns * levels
    world = World(box_pile_model(count, half=half), dt=1e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        batch = world.rollout_batch(
            column_pile(levels, half)[None], np.zeros((1, 6 * count)), np.zeros((800, 6 * count))
        )
    heights = batch.q[0, -1].reshape(columns, levels, 7)[:, :, 2]
    np.testing.assert_allclose(heights, np.tile(half + 2 * half * np.arange(levels), (columns, 1)), atol=5e-3)
    assert np.abs(batch.v[0, -1]).max() < 1e-3
    final = world.step(batch.q[0, -1], batch.v[0, -1])
    assert final.lcp.status == 0 and final.contacts.separation.min() > -5e-3


@pytest.mark.parametrize("contact_model", ["lcp", "ncp"])
def test_contact_islands_do_not_see_each_other(contact_model):
    """A cube sliding and landing beside a second one far away: its contact problem is its own island,
    so its trajectory is the one it has alone, bit for bit (the solvers' tolerances and penalties are
    per island too), for the boxed LCP and the NCP."""
    q_alone, v_alone = floating_state(([0.0, 0.0, 0.11], [0.6, 0.2, -0.3]))
    q_far, v_far = floating_state(([3.0, 0.0, 0.12], [-0.2, 0.0, 0.0]))
    alone = World(box_pile_model(1), dt=2e-3, contact_model=contact_model)
    both = World(box_pile_model(2), dt=2e-3, contact_model=contact_model)
    steps = 150
    single = alone.rollout_batch(q_alone[None], v_alone[None], np.zeros((steps, 6)))
    pair = both.rollout_batch(np.r_[q_alone, q_far][None], np.r_[v_alone, v_far][None], np.zeros((steps, 12)))
    assert np.array_equal(pair.q[0, :, :7], single.q[0]) and np.array_equal(pair.v[0, :, :6], single.v[0])
    assert pair.contacts[0].max() == 8  # both cubes on the ground


def test_two_cubes_stacked_under_the_ncp_come_to_rest():
    """Two cubes dropped 1 mm onto each other, the top one shifted 1 mm, under the contact NCP at
    dt = 1 ms (their faces used to touch along one side only, and ADMM's iterate ran off along G's null
    space after 0.3 s): every step solved, and the stack rests at z = 0.1, 0.3 (closed form)."""
    world = World(box_pile_model(2), dt=1e-3, contact_model="ncp")
    q0, v0 = floating_state(([0.0, 0.0, 0.101], [0.0, 0.0, 0.0]), ([0.001, 0.0, 0.302], [0.0, 0.0, 0.0]))
    result = world.rollout(q0, v0, np.zeros((1000, 12)), keep_steps=True)
    assert all(step.lcp.status == 0 for step in result.steps)
    np.testing.assert_allclose(result.q[-1, [2, 9]], [0.1, 0.3], atol=1e-3)
    assert np.abs(result.v[-1]).max() < 1e-3


@pytest.mark.parametrize("friction", [0.8, None], ids=["mu=0.8", "default friction"])
@pytest.mark.parametrize("dt", [0.01, 1 / 60])
@pytest.mark.parametrize("count", [3, 8])
def test_stacks_with_offsets_stand_at_large_time_steps(count, dt, friction):
    """Ten stacks each of 3 and 8 cubes with random offsets of up to 1 mm, μ = 0.8 (the issue's
    reproducer) and the World's default friction, for 10 s at 100 and 60 Hz (each face rests on four
    corners: the corners of one face that lie on the other's sides count): no cube drifts more than
    2 mm sideways and the centres stay at z_i = 0.1 + 0.2 i (closed form)."""
    trials, rng = 10, np.random.default_rng(count)
    starts = [
        floating_state(*[([*rng.uniform(-0.001, 0.001, 2), 0.1 + 0.2 * i], [0.0, 0.0, 0.0]) for i in range(count)])
        for _ in range(trials)
    ]
    q0, v0 = (np.array(state) for state in zip(*starts))
    world = World(box_pile_model(count), dt=dt, **({} if friction is None else {"friction": friction}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        batch = world.rollout_batch(q0, v0, np.zeros((trials, round(10 / dt), 6 * count)))
    final, start = batch.q[:, -1].reshape(trials, count, 7), q0.reshape(trials, count, 7)
    assert np.abs(final[..., :2] - start[..., :2]).max() <= 2e-3
    np.testing.assert_allclose(final[..., 2], np.tile(0.1 + 0.2 * np.arange(count), (trials, 1)), atol=1e-3)
