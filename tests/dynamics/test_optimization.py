"""dcol.dynamics.optimization on the problems of Nimble §VII and Simple §IV-B, at reduced horizons.

Each result is checked against something the optimizer did not compute: the simulator's own rollout
of the controls found, a second optimizer on the same problem, a known initial velocity, World.step
at the torques found."""

import dataclasses
import functools

import numpy as np
import pytest

from dcol.dynamics import (
    World,
    frame_placement,
    integrate,
    load_dataset_robot,
    load_example_robot,
    neutral,
    tangent_maps,
)
from dcol.dynamics.optimization import (
    QuadraticCost,
    cem,
    ddp,
    multiple_shooting,
    rollout_least_squares,
)
from tests.support.optional import example_robots_dir

CART_FORCE = np.array([[1.0], [0.0]])  # the cart is driven, the hinge is passive
HANGING = (np.array([0.0, np.pi]), np.zeros(2))


@pytest.fixture(scope="module")
def cartpole():
    return World(load_dataset_robot("cartpole"), dt=0.02, ground=False)


def swing_up_cost():
    """Upright (angle 0) at rest over the centre of the rail."""
    return QuadraticCost(np.zeros(2), np.zeros(2), [0.1, 1.0, 0.01, 0.01], [1e-3], [10.0, 100.0, 10.0, 10.0])


def wrapped(angle):
    return np.angle(np.exp(1j * angle))


def test_ddp_swings_the_cart_pole_up(cartpole):
    reported = []
    result = ddp(
        cartpole, *HANGING, np.zeros((100, 1)), swing_up_cost(), actuation=CART_FORCE, callback=reported.append
    )
    assert result.converged
    assert abs(wrapped(result.q[-1, 1])) < 0.05 and abs(result.v[-1, 1]) < 0.2
    # The trajectory is the simulator's for these controls, from World.rollout (warm-started steps).
    rollout = cartpole.rollout(*HANGING, result.taus)
    np.testing.assert_allclose(result.q, rollout.q, atol=1e-9)
    np.testing.assert_array_equal(result.taus[:, 1], 0.0)
    assert [p.iteration for p in reported] == list(range(1, result.iterations + 1))
    costs = [p.cost for p in result.history]
    assert all(later < earlier for earlier, later in zip(costs, costs[1:]))
    assert costs[-1] < 0.5 * costs[0]


def test_ddp_shortens_the_steps_the_simulation_cannot_take(monkeypatch):
    """Weights so large that the full Riccati step spins the pole faster than a step can integrate:
    the failed rollouts count as no decrease, and DDP goes on more regularized."""
    world = World(load_dataset_robot("cartpole"), dt=0.02, ground=False)
    failures = []
    step_batch = world.step_batch

    def counted(*args, **kwargs):
        try:
            return step_batch(*args, **kwargs)
        except RuntimeError:
            failures.append(True)
            raise

    monkeypatch.setattr(world, "step_batch", counted)
    cost = QuadraticCost(np.zeros(2), np.zeros(2), np.zeros(4), [0.0], np.full(4, 1e14))
    result = ddp(world, *HANGING, np.zeros((20, 1)), cost, actuation=CART_FORCE, max_iterations=5)
    assert failures
    assert result.iterations == 5 and result.cost < result.history[0].cost


def test_multiple_shooting_closes_its_defects_at_ddps_optimum(cartpole):
    """Moving the cart 0.5 m with the pole hanging: two methods, one optimum."""
    cost = QuadraticCost([0.5, np.pi], np.zeros(2), [1.0, 1.0, 0.1, 0.1], [1e-2], [10.0, 10.0, 10.0, 10.0])
    guess = np.zeros((30, 1))
    shooting = multiple_shooting(cartpole, *HANGING, guess, cost, intervals=3, actuation=CART_FORCE)
    assert shooting.converged
    assert shooting.history[-1].constraint_violation < 1e-6
    # The shooting trajectory's cost equals the cost of one rollout of its controls only without defects.
    assert shooting.history[-1].cost == pytest.approx(shooting.cost, rel=1e-9)
    reference = ddp(cartpole, *HANGING, guess, cost, actuation=CART_FORCE, tolerance=1e-10)
    assert shooting.cost == pytest.approx(reference.cost, rel=1e-8)
    np.testing.assert_allclose(shooting.controls, reference.controls, atol=1e-3)


def test_multiple_shooting_swings_the_cart_pole_up_from_rest(cartpole):
    """The swing-up from the zero guess, 10 intervals: the trust region keeps the first steps where
    the simulation can follow, and SR1's curvature of the defects (large multipliers on a pendulum's
    bending dynamics) lets the iterates reach a stationary point, where Gauss–Newton's trust region
    shrinks to nothing short of one. The cart's position costs enough that the optimum keeps off
    the rail's ends: an optimum against a joint limit sits on a kink of the dynamics, where a
    trust-region method stops wherever round-off leaves it. The result is a feasible trajectory
    with the pole upright that DDP, started from its controls, cannot improve: a local optimum of
    the same problem found by the other method."""
    cost = QuadraticCost(np.zeros(2), np.zeros(2), [1.0, 1.0, 0.01, 0.01], [1e-3], [10.0, 100.0, 10.0, 10.0])
    result = multiple_shooting(
        cartpole,
        *HANGING,
        np.zeros((100, 1)),
        cost,
        intervals=10,
        actuation=CART_FORCE,
        defect_curvature="sr1",
        max_iterations=400,
    )
    assert result.converged
    assert result.history[-1].constraint_violation < 1e-6
    assert abs(wrapped(result.q[-1, 1])) < 0.05
    rail = cartpole.model.upper_limits[0]
    assert np.abs(result.q[:, 0]).max() < rail - 0.1
    rollout = cartpole.rollout(*HANGING, result.taus)
    np.testing.assert_allclose(result.q, rollout.q, atol=1e-9)
    polished = ddp(cartpole, *HANGING, result.controls, cost, actuation=CART_FORCE)
    assert polished.cost == pytest.approx(result.cost, rel=1e-6)


def test_multiple_shooting_steps_back_from_a_point_the_simulation_cannot_roll_out(monkeypatch):
    """The first trial point's rollout fails (as a state that stops being finite does): the trust
    region rejects it and multiple shooting still reaches DDP's optimum."""
    world = World(load_dataset_robot("cartpole"), dt=0.02, ground=False)
    cost = QuadraticCost([0.5, np.pi], np.zeros(2), [1.0, 1.0, 0.1, 0.1], [1e-2], [10.0, 10.0, 10.0, 10.0])
    rollout_batch = world.rollout_batch
    calls = []

    def failing_once(*args, **kwargs):
        calls.append(True)
        # The guess's rollout and the start's evaluation come first; the third call is a trial point.
        if len(calls) == 3:
            raise RuntimeError("rollout 0 failed at step 0: the state stopped being finite")
        return rollout_batch(*args, **kwargs)

    monkeypatch.setattr(world, "rollout_batch", failing_once)
    guess = np.zeros((30, 1))
    shooting = multiple_shooting(world, *HANGING, guess, cost, intervals=3, actuation=CART_FORCE)
    assert len(calls) > 3 and shooting.converged
    assert shooting.history[-1].constraint_violation < 1e-6
    reference = ddp(world, *HANGING, guess, cost, actuation=CART_FORCE, tolerance=1e-10)
    assert shooting.cost == pytest.approx(reference.cost, rel=1e-8)


def test_bounded_ddp_and_bounded_multiple_shooting_agree(cartpole):
    """The cart moved with its force bounded by 1 N, below the unbounded optimum's 2.7 N: DDP's
    box-constrained QPs and trust-constr's bounds find the same optimum, at the bound for a third of it."""
    cost = QuadraticCost([0.5, np.pi], np.zeros(2), [1.0, 1.0, 0.1, 0.1], [1e-2], [10.0, 10.0, 10.0, 10.0])
    guess = np.zeros((30, 1))
    bounded = dict(actuation=CART_FORCE, lower=-1.0, upper=1.0)
    shooting = multiple_shooting(cartpole, *HANGING, guess, cost, intervals=3, **bounded)
    reference = ddp(cartpole, *HANGING, guess, cost, tolerance=1e-10, **bounded)
    assert shooting.converged and reference.converged
    assert shooting.history[-1].constraint_violation < 1e-6
    assert shooting.cost == pytest.approx(reference.cost, rel=1e-7)
    for result in (shooting, reference):
        assert np.abs(result.controls).max() <= 1.0
    assert np.count_nonzero(np.abs(reference.controls) > 1.0 - 1e-9) >= 8
    np.testing.assert_allclose(shooting.controls, reference.controls, atol=2e-3)


def test_ddp_makes_the_jump_worm_jump_through_its_contacts():
    """The worm lying on the ground, its joints within their effort limits, asked to have its root as
    high as it can after 0.3 s (a linear final cost, −z_T): it can only rise by pushing on the ground.
    Each link rests on its bottom line, two contacts, all clamped at rest, where the step's own
    Jacobians give the root's height no sensitivity to the torques: DDP takes no step. Linearized at
    the sets relabeled from the value's gradient (Nimble §IV-D), it finds the jump."""
    model = load_dataset_robot("jump_worm")
    world = World(model, dt=0.01)
    start = world.rollout(np.zeros(7), np.zeros(7), np.zeros((50, 7))).q[-1]
    cost = QuadraticCost(start, np.zeros(7), np.zeros(14), np.full(4, 1e-4), np.zeros(14), -np.eye(14)[1])
    limits = np.asarray(model.effort_limits)[3:]
    joints = np.vstack([np.zeros((3, 4)), np.eye(4)])
    bounds = dict(actuation=joints, lower=-limits, upper=limits)
    assert ddp(world, start, np.zeros(7), np.zeros((30, 4)), cost, **bounds).iterations == 0
    result = ddp(world, start, np.zeros(7), np.zeros((30, 4)), cost, complementarity_aware=True, **bounds)
    assert np.abs(result.controls).max() <= 5.0
    # DDP's trajectory is step_batch's, stepped without warm starts (its docstring): the same steps
    # replayed one by one give it again.
    q, v = start, np.zeros(7)
    for t, tau in enumerate(result.taus):
        step = world.step_batch(q[None], v[None], tau[None])
        q, v = step.q[0], step.v[0]
        np.testing.assert_allclose(q, result.q[t + 1], atol=1e-9)
        if t < 5:
            assert step.contacts[0] > 0
    assert result.q[-1, 1] > start[1] + 0.3
    # World.rollout warm-starts each contact solve from the last. A step's LCP can have several
    # solutions (the worm's feet sticking or sliding), and the warm start may pick another one, so
    # the rollout is held to the outcome: the jump.
    assert world.rollout(start, np.zeros(7), result.taus).q[-1, 1] > start[1] + 0.3


def free_cube_problem():
    """A free cube (nq = 7, nv = 6) pushed by a body wrench to a pose 0.5 m away and turned 0.8 rad,
    under gravity: a floating joint's state, compared in its tangent space."""
    world = World(load_dataset_robot("box"), dt=0.05, ground=False)
    half = 0.4
    target = np.array([0.3, -0.2, 0.5, np.cos(half), 0.6 * np.sin(half), 0.0, 0.8 * np.sin(half)])
    cost = QuadraticCost(target, np.zeros(6), np.full(12, 0.1), np.full(6, 1e-2), np.full(12, 10.0))
    return world, np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]), cost


def test_state_derivatives_of_a_floating_joint_against_central_differences():
    """The cost's gradient in the tangent space, a linear final term included, q ⊕ δ by integrate, against
    central differences."""
    world, q0, cost = free_cube_problem()
    rng = np.random.default_rng(3)
    cost = dataclasses.replace(cost, final_gradient=rng.normal(size=12))
    q = np.array([integrate(world.model, q0, rng.normal(size=6)) for _ in range(3)])
    v = rng.normal(size=(3, 6))
    gradient = cost.state_derivatives(world, q, v)[0]
    no_controls = np.zeros((2, 6))
    step = 1e-6
    for t in range(3):
        for i in range(6):
            delta = step * np.eye(6)[i]
            shifted = [q.copy(), q.copy()]
            shifted[0][t] = integrate(world.model, q[t], delta)
            shifted[1][t] = integrate(world.model, q[t], -delta)
            ahead, behind = (cost(world, moved, v, no_controls) for moved in shifted)
            assert gradient[t, i] == pytest.approx((ahead - behind) / (2 * step), rel=1e-6, abs=1e-8)
            moved_v = [v + step * np.eye(6)[i] * (t == np.arange(3))[:, None] * sign for sign in (1, -1)]
            ahead, behind = (cost(world, q, moved, no_controls) for moved in moved_v)
            assert gradient[t, 6 + i] == pytest.approx((ahead - behind) / (2 * step), rel=1e-6, abs=1e-8)


def test_ddp_and_multiple_shooting_agree_on_a_free_body():
    """nq ≠ nv: DDP's feedback on tangent deviations and multiple shooting's start states in coordinates
    (quaternion norm fixed by the defects) find one optimum."""
    world, q0, cost = free_cube_problem()
    guess = np.zeros((10, 6))
    reference = ddp(world, q0, np.zeros(6), guess, cost, tolerance=1e-10)
    shooting = multiple_shooting(world, q0, np.zeros(6), guess, cost, intervals=2)
    assert reference.converged and shooting.converged
    assert shooting.history[-1].constraint_violation < 1e-6
    assert shooting.cost == pytest.approx(reference.cost, rel=1e-8)
    np.testing.assert_allclose(shooting.controls, reference.controls, atol=1e-3)
    # Both well below the guess's cost: the cube moved and turned towards the target.
    assert reference.cost < 0.5 * reference.history[0].cost


def test_ddp_and_multiple_shooting_agree_through_the_contacts_of_a_sliding_cube():
    """A free cube sliding on the ground (four contacts at every step), steered by horizontal forces
    towards a point it cannot quite reach: one optimum for both, on the simulator's trajectory."""
    world = World(load_dataset_robot("box"), dt=0.02)
    q0 = np.array([0.0, 0.0, 0.1 - 5e-5, 1.0, 0.0, 0.0, 0.0])
    v0 = np.array([1.0, 0.5, 0.0, 0.0, 0.0, 0.0])
    target = np.array([0.35, 0.05, 0.1, 1.0, 0.0, 0.0, 0.0])
    final_weights = np.zeros(12)
    final_weights[[0, 1, 6, 7]] = [100.0, 100.0, 10.0, 10.0]  # horizontal position and velocity
    cost = QuadraticCost(target, np.zeros(6), np.zeros(12), np.full(2, 1e-3), final_weights)
    horizontal = np.eye(6)[:, :2]
    guess = np.zeros((20, 2))
    reference = ddp(world, q0, v0, guess, cost, actuation=horizontal, tolerance=1e-10)
    shooting = multiple_shooting(world, q0, v0, guess, cost, actuation=horizontal, intervals=2)
    assert reference.converged and shooting.converged
    assert shooting.history[-1].constraint_violation < 1e-6
    assert shooting.cost == pytest.approx(reference.cost, rel=1e-8)
    assert shooting.cost < 0.5 * shooting.history[0].cost
    np.testing.assert_allclose(shooting.controls, reference.controls, atol=1e-5)
    rollout = world.rollout(q0, v0, reference.taus)
    assert rollout.contacts.min() == 4
    np.testing.assert_allclose(reference.q, rollout.q, atol=1e-9)


def test_cem_lowers_the_swing_up_cost_less_than_ddp(cartpole):
    cost = swing_up_cost()
    guess = np.zeros((100, 1))
    search = cem(
        cartpole,
        *HANGING,
        guess,
        cost,
        actuation=CART_FORCE,
        spread=5.0,
        lower=-15.0,
        upper=15.0,
        hold=5,
        samples=64,
        elites=8,
        max_iterations=10,
    )
    costs = [p.cost for p in search.history]
    assert all(later <= earlier for earlier, later in zip(costs, costs[1:]))
    assert search.cost < costs[0]
    assert np.abs(search.controls).max() <= 15.0
    rollout = cartpole.rollout(*HANGING, search.taus)
    assert float(cost(cartpole, rollout.q, rollout.v, search.controls)) == pytest.approx(search.cost, rel=1e-12)
    assert ddp(cartpole, *HANGING, guess, cost, actuation=CART_FORCE).cost < search.cost


@pytest.mark.parametrize("jacobian", ["analytic", "3-point"])
def test_a_sliding_cubes_initial_velocity_from_its_final_pose(jacobian):
    """Simple eq. 14: the cube slides and spins on the ground for 0.2 s; its in-plane velocity and
    spin (what the final pose tells; the contact absorbs the rest) are found from a guess 0.5 off."""
    model = load_dataset_robot("box")
    world = World(model, dt=0.01)
    q0 = np.array([0.0, 0.0, 0.1, 1.0, 0.0, 0.0, 0.0])
    known = np.array([2.0, 0.5, 0.0, 0.0, 0.0, 3.0])
    controls = np.zeros((20, 6))
    observed = world.rollout(q0, known, controls)
    assert observed.contacts.min() > 0
    target = observed.q[-1]

    def pose_error(q, v):
        return q - target, np.hstack([tangent_maps(model, q)[0], np.zeros((7, 6))])

    guess = known + [0.2, -0.1, 0.0, 0.0, 0.0, 0.5]
    result = rollout_least_squares(
        world, q0, guess, controls, pose_error, velocity_basis=np.eye(6)[:, [0, 1, 5]], jacobian=jacobian
    )
    if jacobian == "analytic":
        np.testing.assert_allclose(result.x, known, atol=1e-6)
        return
    # Central differences across the contacts land on the known velocity or stall a millimetre short of
    # it as the rollouts' rounding falls: from this guess, and from one 1e-10 away, they did one and then
    # the other (Simple §IV-B: finite differences reach a lower precision). Either way most of the
    # guess's error is gone.
    assert result.cost < 1e-3 * result.history[0].cost


def go1_standing():
    """Go1 with its legs bent and its four feet 5e-5 m into the ground (within the allowed
    penetration, so the contacts hold without being pushed out), and its actuation matrix."""
    example_robots_dir()
    model = load_example_robot("go1")
    q = neutral(model)
    q[7:] = np.tile([0.0, 0.9, -1.8], 4)
    foot_radius = 0.02
    lowest = min(frame_placement(model, q, f"{leg}_foot")[0][2] for leg in ("FR", "FL", "RR", "RL"))
    q[2] = foot_radius - lowest - 5e-5
    return World(model, dt=1e-3), q, np.vstack([np.zeros((6, 12)), np.eye(12)])


@pytest.mark.parametrize("jacobian", ["analytic", "3-point"])
def test_go1_inverse_dynamics_through_contact(jacobian):
    """Simple eq. 15: the joint torques for which one step from rest ends at rest."""
    world, q, actuation = go1_standing()

    def velocity(q_next, v_next):
        return v_next, np.hstack([np.zeros((18, 18)), np.eye(18)])

    result = rollout_least_squares(
        world,
        q,
        np.zeros(18),
        np.zeros((1, 12)),
        velocity,
        variables="controls",
        actuation=actuation,
        jacobian=jacobian,
    )
    assert result.iterations <= 20
    assert np.abs(result.residual).max() < 1e-8
    step = world.step(q, np.zeros(18), actuation @ result.x[0])
    assert len(step.contacts) >= 4
    assert np.abs(step.v).max() < 1e-8


def test_inconsistent_sizes_are_refused_by_name(cartpole):
    cost = swing_up_cost()
    for optimizer in (ddp, cem, functools.partial(multiple_shooting, intervals=2)):
        with pytest.raises(ValueError, match="controls"):
            optimizer(cartpole, *HANGING, np.zeros((10, 2)), cost, actuation=CART_FORCE)
        with pytest.raises(ValueError, match="actuation"):
            optimizer(cartpole, *HANGING, np.zeros((10, 1)), cost, actuation=np.ones((3, 1)))
        with pytest.raises(ValueError, match="cost.control_weights"):
            optimizer(cartpole, *HANGING, np.zeros((10, 2)), cost)
        with pytest.raises(ValueError, match="q0"):
            optimizer(cartpole, np.zeros(3), np.zeros(2), np.zeros((10, 1)), cost, actuation=CART_FORCE)
    with pytest.raises(ValueError, match="states"):
        multiple_shooting(
            cartpole, *HANGING, np.zeros((10, 1)), cost, intervals=2, actuation=CART_FORCE, states=np.zeros((2, 4))
        )
    with pytest.raises(ValueError, match="intervals must divide"):
        multiple_shooting(cartpole, *HANGING, np.zeros((10, 1)), cost, intervals=3, actuation=CART_FORCE)
    with pytest.raises(ValueError, match="defect_curvature must be 'none' or 'sr1'"):
        multiple_shooting(
            cartpole, *HANGING, np.zeros((10, 1)), cost, intervals=2, actuation=CART_FORCE, defect_curvature="bfgs"
        )
    with pytest.raises(ValueError, match="at least one step"):
        ddp(cartpole, *HANGING, np.zeros((0, 1)), cost, actuation=CART_FORCE)
    with pytest.raises(ValueError, match="lower must be below upper"):
        ddp(cartpole, *HANGING, np.zeros((10, 1)), cost, actuation=CART_FORCE, lower=1.0, upper=-1.0)
    with pytest.raises(ValueError, match="upper"):
        multiple_shooting(cartpole, *HANGING, np.zeros((10, 1)), cost, intervals=2, actuation=CART_FORCE, upper=[1, 2])
    with pytest.raises(ValueError, match="spread"):
        cem(cartpole, *HANGING, np.zeros((10, 1)), cost, actuation=CART_FORCE, spread=[1.0, 2.0])
    with pytest.raises(ValueError, match="target_v"):
        QuadraticCost([0.0], [[0.0]], [1.0], [1.0], [1.0])
    with pytest.raises(ValueError, match="final_weights must be ≥ 0"):
        QuadraticCost([0.0], [0.0], [1.0], [1.0], [-1.0])
    with pytest.raises(ValueError, match="cost.final_gradient must have 4 entries"):
        ddp(
            cartpole, *HANGING, np.zeros((10, 1)), dataclasses.replace(cost, final_gradient=[1.0]), actuation=CART_FORCE
        )
    with pytest.raises(ValueError, match="cost.target_q"):
        ddp(
            cartpole,
            *HANGING,
            np.zeros((10, 1)),
            QuadraticCost([0.0], [0.0], [1.0], [1.0], [1.0]),
            actuation=CART_FORCE,
        )
    ncp = World(load_dataset_robot("cartpole"), dt=0.02, ground=False, contact_model="ncp")
    with pytest.raises(ValueError, match="complementarity_aware .* contact_model='lcp'"):
        ddp(ncp, *HANGING, np.zeros((10, 1)), cost, actuation=CART_FORCE, complementarity_aware=True)
    residual = lambda q, v: (q, np.eye(2, 4))  # noqa: E731
    with pytest.raises(ValueError, match="controls"):
        rollout_least_squares(cartpole, *HANGING, np.zeros((5, 2)), residual, actuation=CART_FORCE)
    with pytest.raises(ValueError, match="actuation"):
        rollout_least_squares(cartpole, *HANGING, np.zeros((5, 1)), residual, actuation=np.ones((3, 1)))
    with pytest.raises(ValueError, match="v0"):
        rollout_least_squares(cartpole, HANGING[0], np.zeros(3), np.zeros((5, 2)), residual)
    with pytest.raises(ValueError, match="residual must return"):
        rollout_least_squares(cartpole, *HANGING, np.zeros((5, 2)), lambda q, v: (q, np.eye(2)))
    with pytest.raises(ValueError, match="velocity_basis applies to variables='v0' only"):
        rollout_least_squares(
            cartpole,
            *HANGING,
            np.zeros((5, 2)),
            lambda q, v: (q, np.eye(2, 4)),
            variables="controls",
            velocity_basis=np.eye(2),
        )
    with pytest.raises(ValueError, match="variables must be"):
        rollout_least_squares(cartpole, *HANGING, np.zeros((5, 2)), lambda q, v: (q, np.eye(2, 4)), variables="q0")
    with pytest.raises(ValueError, match="velocity_basis"):
        rollout_least_squares(
            cartpole, *HANGING, np.zeros((5, 2)), lambda q, v: (q, np.eye(2, 4)), velocity_basis=np.eye(3)
        )


def test_complementarity_aware_gradients_lift_the_quadrotor_off_the_ground():
    """Nimble Fig. 8: resting on the ground, the drone's contacts clamp, so the plain gradient of the
    final height's error with respect to the thrust is zero (to rounding: the rest pose's orientation
    carries 1e-17 residues); the complementarity-aware one asks for more thrust, and one gradient step
    along it lifts the drone off."""
    model = load_dataset_robot("quadrotor")
    world = World(model, dt=0.01)
    q0 = neutral(model)
    q0[2] = 0.025 - 5e-5  # the body's half height, within the penetration left at rest
    steps, target = 50, 0.3
    thrust = np.zeros((steps, 6))
    resting = world.rollout(q0, np.zeros(6), thrust, derivatives=True)
    assert resting.contacts.min() == 4 and abs(resting.q[-1, 2] - q0[2]) < 1e-9
    grad_q = np.zeros((steps + 1, 6))
    grad_q[-1, 2] = 2.0 * (resting.q[-1, 2] - target)  # the final height's tangent is along body z, here world z
    plain = resting.vjp(grad_q).tau
    aware = resting.vjp(grad_q, complementarity_aware=True).tau
    assert np.abs(plain).max() < 1e-18
    assert (aware[:, 2] < 0.0).all()
    lifted = world.rollout(q0, np.zeros(6), thrust - 1e4 * aware * np.eye(6)[2])
    assert lifted.q[-1, 2] > q0[2] + 0.1
