"""Step Jacobians of dcol.dynamics.World, of a step (Step.jacobians, linearized again at its LCP
solution) and of the native batch (World.step_batch), against central finite differences of
World.step, reverse mode against the transpose of forward mode, and the simulation's argument checks.

Configurations are chosen inside a contact mode (no tied contact, no contact appearing within the
finite-difference step), where the step is differentiable.
"""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from dcol.dynamics import (
    ModelBuilder,
    World,
    difference,
    inertial_parameters,
    integrate,
    integrate_jacobians,
    load_dataset_robot,
    minverse,
    neutral,
    random_configuration,
    step_integrate,
    step_integrate_jacobians,
)
from dcol.geom import Box, ConvexMesh, Sphere
from tests.fuzz.test_fuzz_simulation import pile

RELATIVE = 1e-5
EPS = 1e-6


def _finite_differences(world, q, v, tau, with_params=True, step=EPS):
    """Central differences of (q⁺ tangent, v⁺) along every q (tangent), v, τ and θ direction."""
    model = world.model

    def outputs(step):
        return step.q, step.v

    def column(plus, minus, h):
        (q_plus, v_plus), (q_minus, v_minus) = outputs(plus), outputs(minus)
        return np.r_[difference(model, q_minus, q_plus), v_plus - v_minus] / (2 * h)

    columns = {"q": [], "v": [], "tau": [], "params": []}
    for k in range(model.nv):
        e = np.eye(model.nv)[k] * step
        columns["q"].append(
            column(world.step(integrate(model, q, e), v, tau), world.step(integrate(model, q, -e), v, tau), step)
        )
        columns["v"].append(column(world.step(q, v + e, tau), world.step(q, v - e, tau), step))
        columns["tau"].append(column(world.step(q, v, tau + e), world.step(q, v, tau - e), step))
    if with_params:
        theta = world.parameters()
        for k in range(theta.size):
            h = step * max(1.0, abs(theta[k]))
            e = np.eye(theta.size)[k] * h
            # Friction μ = 0 and restitution e = 0 are the ends of their ranges: forward differences there.
            one_sided = k >= theta.size - 2 and theta[k] < h
            low = theta if one_sided else theta - e
            columns["params"].append(
                column(
                    world.with_parameters(theta + e).step(q, v, tau),
                    world.with_parameters(low).step(q, v, tau),
                    h / 2 if one_sided else h,
                )
            )
    return {X: np.column_stack(c) for X, c in columns.items() if c}


def _native_jacobians(world, q, v, tau, *, parameters=True, bounce=False):
    """StepJacobians of one step from World.step_batch, and the batch's next state."""
    batch = world.step_batch(q[None], v[None], tau[None], derivatives=True, parameters=parameters, bounce=bounce)
    jac = type(batch.jacobians)(*(None if block is None else block[0] for block in batch.jacobians))
    return jac, batch.q[0], batch.v[0]


def _assert_jacobians_match(world, q, v, tau, *, with_params=True, bounce=False, relative=RELATIVE, step=EPS):
    """Step.jacobians and World.step_batch's Jacobians against central differences (and each other:
    the same linearization, at World.step's LCP solution and inside the batch's step)."""
    taken = world.step(q, v, tau, derivatives=True)
    jac = taken.jacobians(bounce=bounce)
    native, q_next, v_next = _native_jacobians(world, q, v, tau, parameters=with_params, bounce=bounce)
    np.testing.assert_allclose(q_next, taken.q, atol=1e-12)
    np.testing.assert_allclose(v_next, taken.v, atol=1e-10)
    for X, finite in _finite_differences(world, q, v, tau, with_params, step).items():
        scale = max(1.0, np.abs(finite).max())
        for source in (jac, native):
            analytic = np.vstack([getattr(source, "q_" + X), getattr(source, "v_" + X)])
            assert np.abs(analytic - finite).max() <= relative * scale, (X, np.abs(analytic - finite).max(), scale)
        python = np.vstack([getattr(jac, "q_" + X), getattr(jac, "v_" + X)])
        analytic = np.vstack([getattr(native, "q_" + X), getattr(native, "v_" + X)])
        assert np.abs(analytic - python).max() <= 1e-9 * max(1.0, np.abs(python).max()), X
    return taken


def _free_body_model(shapes_and_masses, gravity=(0.0, 0.0, -9.81)):
    builder = ModelBuilder(gravity=gravity)
    for i, (shape, mass, inertia) in enumerate(shapes_and_masses):
        builder.add_body(f"body{i}", parent=None, joint=f"free{i}", kind="floating", mass=mass, inertia=inertia)
        builder.add_shape(f"body{i}", shape)
    return builder.build()


def _box_model():
    return load_dataset_robot("box", floating_base=True)


def _pose(position, axis=(1.0, 0.0, 0.0), angle=0.0):
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    return np.r_[position, np.cos(angle / 2), np.sin(angle / 2) * axis]


@pytest.mark.parametrize("dt", [1e-3, 1e-2])
def test_spinning_free_body_through_the_implicit_midpoint(dt):
    """An asymmetric free body tumbling at 40 rad/s under gravity, no ground: the velocity terms are
    taken at the midpoint velocity (solved by fixed-point iteration at 1 ms, by Newton's method at
    10 ms, where |ω| Δt / 2 = 0.2), and the Jacobians differentiate that equation implicitly."""
    model = _free_body_model([(Box([0.3, 0.2, 0.1]), 2.0, np.diag([0.5, 1.0, 1.4]))])
    world = World(model, dt=dt, ground=False)
    q = _pose([0.1, -0.2, 1.0], (1, 2, 3), 0.7)
    _assert_jacobians_match(world, q, np.array([0.5, -1.0, 0.3, 3.0, 40.0, -5.0]), np.array([0.1, 0, 0.2, 0.3, 0, 0.1]))


def test_box_sliding_on_face_all_inputs():
    """Four face contacts sliding (friction at its bounds), slightly penetrating."""
    world = World(_box_model(), dt=1e-2, friction=0.3)
    q = _pose([0.1, 0.2, 0.0995], (0, 0, 1), 0.3)
    step = _assert_jacobians_match(world, q, np.array([1.0, 0.3, -0.05, 0.0, 0.0, 0.2]), np.zeros(6))
    assert len(step.contacts) == 4
    assert (step.lcp.at_lower | step.lcp.at_upper)[1::3].any()  # some friction at the Coulomb bound


def test_box_resting_on_edge_with_torque():
    """A tilted box on one edge (two edge contacts), pushed and twisted."""
    world = World(_box_model(), dt=1e-2, friction=0.3)
    angle = 0.3
    q = _pose([0.0, 0.0, 0.1 * np.cos(angle) + 0.1 * np.sin(angle) - 5e-4], (1, 0, 0), angle)
    step = _assert_jacobians_match(
        world, q, np.array([0.2, 0.0, -0.1, 0.5, 0.1, 0.0]), np.array([0, 0, 0, 0.1, 0, 0.0])
    )
    assert len(step.contacts) == 2


def test_box_sticking():
    """Static friction: every contact clamps, normals and tangents."""
    world = World(_box_model(), dt=1e-2, friction=1.0)
    q = _pose([0.0, 0.0, 0.0998])
    step = _assert_jacobians_match(
        world, q, np.array([0.02, 0.0, -0.01, 0.0, 0.0, 0.0]), np.array([1.0, 0.5, 0, 0, 0, 0.1])
    )
    assert step.lcp.clamping.all() and not step.lcp.tied.any()


def test_box_on_an_edge_with_speculative_corners():
    """A cube tilted 0.02 rad about x: two corners press on the ground, the other two hover 4 mm up,
    within the contact margin, with no impulse (rows the Jacobians leave out as idle). Against central
    differences: dropping them must not change the derivatives."""
    world = World(_box_model(), dt=1e-2, friction=1.0)
    q = _pose([0.0, 0.0, 0.1 * np.cos(0.02) + 0.1 * np.sin(0.02) - 2e-4], (1.0, 0.0, 0.0), 0.02)
    step = _assert_jacobians_match(
        world, q, np.array([0.02, 0.0, -0.01, 0.0, 0.0, 0.0]), np.r_[0.5, 0.2, 0, 0, 0, 0.05]
    )
    normals = step.impulses[:, 0]
    assert len(step.contacts) == 4 and np.sum(normals > 0) == 2 and np.sum(normals == 0) == 2


def test_pile_of_three_boxes_in_two_islands():
    """A stack of two cubes (turned 0.1 rad against each other: a clipped octagon, reduced to its four
    spanning corners) beside a third on the ground, pressed and pushed while every contact sticks: the
    step Jacobians of a two-island pile against central differences."""
    world = World(_free_body_model([(Box([0.1] * 3), 1.0, np.eye(3) / 150.0)] * 3), dt=1e-2, friction=1.0)
    q = np.r_[_pose([0.0, 0.0, 0.0998]), _pose([0.01, -0.005, 0.2996], (0.0, 0.0, 1.0), 0.1), _pose([0.5, 0.0, 0.0998])]
    v = np.r_[0.02, 0.0, -0.01, 0.0, 0.0, 0.0, 0.0, 0.01, -0.02, 0.0, 0.0, 0.0, -0.01, 0.0, 0.0, 0.0, 0.0, 0.0]
    tau = np.r_[1.0, 0.5, 0.0, 0.0, 0.0, 0.1, 0.0, -0.5, -2.0, 0.05, 0.0, 0.0, 0.3, 0.0, 0.0, 0.0, 0.0, 0.0]
    step = _assert_jacobians_match(world, q, v, tau)
    assert len(step.contacts) == 12  # four per resting face, the octagon's reduced
    assert step.lcp.clamping.all() and not step.lcp.tied.any()


def test_half_cheetah_cylinders_on_ground():
    """An articulated planar robot: cylinder (distance-rule) contacts, a tree of Jacobians. Lowered
    onto the ground and run 20 steps into a resting contact state: the contacts' derivatives come from
    an interior-point solve, good to ~1e-6 absolute, which 10 cm penetrations of light links
    amplify to the 1e-5 relative of this check."""
    model = load_dataset_robot("half_cheetah")
    world = World(model, dt=1e-2, friction=0.8)
    q = neutral(model)
    q[1] = -0.2  # the root's height joint: the feet 7 cm into the ground
    v = np.zeros(model.nv)
    v[0] = 0.5
    for _ in range(20):
        step = world.step(q, v)
        q, v = step.q, step.v
    rng = np.random.default_rng(3)
    checked = _assert_jacobians_match(world, q, v, rng.normal(size=model.nv), with_params=False)
    assert len(checked.contacts) >= 2


def test_joint_limit_row():
    """A pendulum pressed against its lower limit by gravity and a torque: the limit row clamps."""
    builder = ModelBuilder()
    builder.add_body(
        "link",
        parent=None,
        joint="hinge",
        kind="revolute",
        axis=(0, 1, 0),
        mass=1.0,
        com=(0.5, 0.0, 0.0),
        inertia=np.diag([1e-3, 1e-2, 1e-2]),
        lower=-0.3,
        upper=0.3,
    )
    model = builder.build()
    world = World(model, ground=False, dt=1e-2)
    q = np.array([-0.301])  # past the bound along y (gravity turns +x's tip down, q > 0)
    step = _assert_jacobians_match(world, q, np.array([-0.2]), np.array([-3.0]))
    assert step.limit_joints.tolist() == [0] and step.limit_impulses[0] > 0


def test_two_moving_bodies_collide():
    """Two free spheres meeting off-centre: rows depend on both bodies' motion; bounce=False is the
    discrete step's own derivative."""
    model = _free_body_model(
        [(Sphere(0.1), 1.0, np.eye(3) * 4e-3), (Sphere(0.15), 2.5, np.eye(3) * 2.25e-2)], gravity=(0.0, 0.0, 0.0)
    )
    world = World(model, ground=False, dt=1e-2, friction=0.4, restitution=0.5)
    q = np.r_[_pose([0.0, 0.0, 0.0], (0, 0, 1), 0.2), _pose([0.245, 0.03, 0.01], (0, 1, 0), 0.4)]
    v = np.r_[1.0, 0.1, 0.0, 0.0, 0.3, 0.0, -1.0, 0.0, 0.05, 0.2, 0.0, 0.0]
    step = _assert_jacobians_match(world, q, v, np.zeros(12))
    assert step.bouncing.all()


def test_ball_rolling_and_pressed_into_the_ground():
    """A turned ball 0.5 mm into the ground, rolling along x at 2 m/s with ω = 20 rad/s about y (a turn
    of 0.2 rad per 10 ms step), landing at 0.5 m/s, pushed and twisted: every row clamps, and the step's
    position update (its straight translation, its turn and the position correction with them) against
    central differences."""
    world = World(_free_body_model([(Sphere(0.1), 1.0, np.eye(3) * 4e-3)]), dt=1e-2, friction=0.8)
    q = _pose([0.1, -0.2, 0.0995], (1, 2, 3), 0.7)
    to_body = Rotation.from_quat(q[3:], scalar_first=True).inv()
    v = np.r_[to_body.apply([2.0, 0.0, -0.5]), to_body.apply([0.0, 20.0, 0.0])]
    step = _assert_jacobians_match(world, q, v, np.array([0.0, 0.0, 0.0, 0.05, 0.0, 0.1]), with_params=False)
    assert len(step.contacts) == 1 and step.lcp.clamping.all()
    assert step.contacts.separation[0] < -1e-4  # deeper than the allowed 1 % of the margin: corrected


def test_free_flight_is_pure_dynamics():
    """Without contact the step Jacobian is the dynamics' and integration's alone."""
    model = _box_model()
    world = World(model, dt=1e-2)
    q = _pose([0.0, 0.0, 1.0], (1, 1, 0), 0.7)
    step = _assert_jacobians_match(world, q, np.array([0.3, -0.2, 0.1, 2.0, -1.0, 0.5]), np.ones(6))
    assert len(step.contacts) == 0


def test_bounce_correction_is_continuous_time_for_one_contact():
    """A ball bouncing straight down, 5 mm above the ground and closing it within the step: with
    bounce=True ∂z⁺/∂z = −e (Nimble §VI, Nimble eq. 26); without, the discrete step's +1."""
    restitution = 0.6
    model = _free_body_model([(Sphere(0.1), 1.0, np.eye(3) * 4e-3)], gravity=(0.0, 0.0, 0.0))
    world = World(model, dt=1e-2, restitution=restitution, friction=0.0)
    step = world.step(_pose([0.0, 0.0, 0.105]), np.array([0.0, 0.0, -2.0, 0.0, 0.0, 0.0]), derivatives=True)
    assert step.bouncing.all()
    assert step.v[2] == pytest.approx(restitution * 2.0, rel=1e-9)
    assert step.jacobians(bounce=True).q_q[2, 2] == pytest.approx(-restitution, abs=1e-9)
    assert step.jacobians(bounce=False).q_q[2, 2] == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("bounce", [True, False])
def test_reverse_mode_is_the_transpose_of_forward_mode(bounce):
    model = _free_body_model([(Box([0.1, 0.1, 0.1]), 1.0, np.eye(3) * 6.7e-3), (Sphere(0.1), 1.0, np.eye(3) * 4e-3)])
    world = World(model, dt=1e-2, friction=0.5, restitution=0.4)
    q = np.r_[_pose([0.0, 0.0, 0.0998], (0, 0, 1), 0.1), _pose([0.5, 0.0, 0.099])]
    v = np.r_[0.3, 0.0, -0.01, 0.0, 0.0, 0.1, 0.0, 0.2, -1.0, 0.0, 0.0, 0.0]
    step = world.step(q, v, np.zeros(12), derivatives=True)
    assert step.bouncing.any()
    jac = step.jacobians(bounce=bounce)
    rng = np.random.default_rng(0)
    grad_q, grad_v = rng.normal(size=12), rng.normal(size=12)
    cot = step.vjp(grad_q, grad_v, bounce=bounce)
    for X in ("q", "v", "tau", "params"):
        expected = getattr(jac, "q_" + X).T @ grad_q + getattr(jac, "v_" + X).T @ grad_v
        np.testing.assert_allclose(getattr(cot, X), expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())


def test_rollout_vjp_matches_chained_jacobians():
    world = World(_box_model(), dt=1e-2, friction=0.3)
    taus = np.tile([0.5, 0.0, 0.0, 0.0, 0.0, 0.05], (5, 1))
    rollout = world.rollout(_pose([0.0, 0.0, 0.0999]), np.array([0.5, 0, 0, 0, 0, 0.0]), taus, derivatives=True)
    grad = np.random.default_rng(1).normal(size=6)
    cot = rollout.vjp(grad_v=np.vstack([np.zeros((5, 6)), grad]))
    # forward: chain the step Jacobians
    d_state = np.eye(12)  # ∂(q_t, v_t)/∂(q_0, v_0)
    for step in rollout.steps:
        jac = step.jacobians()
        d_state = np.block([[jac.q_q, jac.q_v], [jac.v_q, jac.v_v]]) @ d_state
    np.testing.assert_allclose(np.r_[cot.q, cot.v], d_state[6:].T @ grad, rtol=1e-9, atol=1e-12)


def test_complementarity_aware_picks_the_larger_gradient():
    """Nimble §IV-D: a box resting on clamping contacts whose loss wants it to rise (ℓ = −v_z⁺): the
    exact gradient loses ∂ℓ/∂τ_z (the contacts absorb any push), the relabeled sets (separating)
    give ∂ℓ/∂τ_z = −Δt/m. Without stabilization (β = 0) nothing else depends on the state, so the
    relabeled gradient is the larger one and is returned."""
    world = World(_box_model(), dt=1e-2, baumgarte=0.0)
    step = world.step(_pose([0.0, 0.0, 0.0999]), np.zeros(6), derivatives=True)
    assert step.lcp.clamping[0::3].all()
    loss_gradient = np.array([0, 0, -1.0, 0, 0, 0])
    exact = step.vjp(grad_v=loss_gradient)
    aware = step.vjp(grad_v=loss_gradient, complementarity_aware=True)
    assert abs(exact.tau[2]) < 1e-9 and np.abs(exact.q).max() < 1e-9
    assert aware.tau[2] == pytest.approx(-world.dt / 1.0, rel=1e-9)  # m = 1 kg


# The light box squeezed between heavy spheres (below): a state its drop reaches, kept as numbers
# because the drop's path depends on the step's integrator.
SQUEEZED_BOX_Q = np.array(
    [
        -0.0352534712766069,
        0.4367903091848435,
        0.1455441016623344,
        0.3462895036287337,
        -0.006736139744794452,
        0.018245234426959505,
        -0.9379260714569188,
        0.03062963844661417,
        -0.053247442738146196,
        0.19146977902081466,
        0.008545090810495431,
        -0.1154670591845326,
        -0.010865761556341533,
        -0.9932151201487606,
        0.01295631422310451,
        -0.010387311936516807,
        0.5124600836693909,
        0.38318613788437067,
        0.06527279936747453,
        -0.09923969799025532,
        -0.9160018164495071,
        -0.04861882615257387,
        0.029846224613005862,
        0.83219438272191,
        0.8891697598227427,
        -0.0504139608300553,
        -0.01044490819413045,
        0.4546718318336952,
    ]
)
SQUEEZED_BOX_V = np.array(
    [
        -1.1718406432981359,
        -1.748639958411893,
        -0.06805758557297549,
        9.299686729355744e-15,
        -0.11825034745593675,
        3.0382832756849933,
        -0.5913732522826028,
        0.027024395226063293,
        -2.4224604574134796,
        1.9526370412639457e-16,
        4.0468259893747394e-17,
        -4.727653024795674e-18,
        0.08462729169817239,
        -0.5533930236286984,
        -2.3420475769140117,
        1.5242429538478586,
        1.7035254144057919,
        2.9746596363623607e-16,
        0.07371061055489826,
        0.27975957530507406,
        -2.399312846233439,
        -1.1585123504344286e-17,
        -1.7228535937744565e-17,
        1.606273607959268e-18,
    ]
)


def test_jacobians_through_the_misprediction_projection():
    """The light box squeezed between heavy spheres at 5 ms (the pile of
    test_light_box_between_heavy_spheres_does_not_sink_at_5_ms in tests/fuzz), at a state of its drop
    where the box turns fast enough that the step finds its contacts again at the pose reached, and the
    misprediction projection moves q⁺ back to the depths the step's linearized contacts predicted.
    ∂q⁺ goes through the projection's corrections and through those predicted depths (they move with
    q, v, τ and θ); the Jacobians that leave the projection out fail this check. Against central
    differences inside the contact mode (steps of 1e-7: the state is within 1e-6 of the edge of its
    mode; the restitution's column excepted: any e > 0 makes the landing box bounce), and reverse
    mode against the transpose of forward mode there."""
    world, _, _, _ = pile(4, ["capsule", "sphere", "box", "sphere"], 0, 5e-3, 0.0, 0.0, "lcp", True)
    nv = world.model.nv
    q, v, tau = SQUEEZED_BOX_Q.copy(), SQUEEZED_BOX_V.copy(), np.zeros(nv)
    step = _assert_jacobians_match(world, q, v, tau, with_params=False, step=1e-7)
    jac = step.jacobians(bounce=False)
    finite = _finite_differences(world, q, v, tau, step=1e-7)["params"][:, :-1]
    analytic = np.vstack([jac.q_params, jac.v_params])[:, :-1]
    assert np.abs(analytic - finite).max() <= RELATIVE * max(1.0, np.abs(finite).max())
    rng = np.random.default_rng(1)
    grad_q, grad_v = rng.normal(size=nv), rng.normal(size=nv)
    cot = step.vjp(grad_q, grad_v, bounce=False)
    for X in ("q", "v", "tau", "params"):
        expected = getattr(jac, "q_" + X).T @ grad_q + getattr(jac, "v_" + X).T @ grad_v
        np.testing.assert_allclose(getattr(cot, X), expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())


def test_warm_start_gives_the_cold_solution():
    world = World(_box_model(), dt=1e-3)
    q, v = _pose([0.0, 0.0, 0.1]), np.zeros(6)
    first = world.step(q, v)
    warm = world.step(first.q, first.v, warm_start=first)
    cold = world.step(first.q, first.v)
    assert warm.lcp.warm_start_hit
    np.testing.assert_allclose(warm.v, cold.v, atol=1e-12)
    np.testing.assert_allclose(warm.impulses, cold.impulses, atol=1e-12)


@pytest.mark.parametrize(
    ("update", "update_jacobians"), [(integrate, integrate_jacobians), (step_integrate, step_integrate_jacobians)]
)
def test_integrate_jacobians_against_finite_differences(update, update_jacobians):
    """(∂q⁺/∂q, ∂q⁺/∂u) of integrate and of the step's update, in integrate's tangent spaces."""
    free_body = _free_body_model([(Sphere(0.1), 1.0, np.eye(3) * 4e-3)])
    rng = np.random.default_rng(2)
    for model, scale in ((free_body, 1.0), (free_body, 20.0), (load_dataset_robot("half_cheetah"), 1.0)):
        q = random_configuration(model, rng)
        u = scale * rng.normal(size=model.nv)  # 20: turns of several radians (the series' squarings)
        d_q, d_u = update_jacobians(model, q, u)
        for k in range(model.nv):
            e = np.eye(model.nv)[k] * EPS
            by_q = difference(
                model, update(model, integrate(model, q, -e), u), update(model, integrate(model, q, e), u)
            )
            by_u = difference(model, update(model, q, u - e), update(model, q, u + e))
            np.testing.assert_allclose(d_q[:, k], by_q / (2 * EPS), atol=1e-8)
            np.testing.assert_allclose(d_u[:, k], by_u / (2 * EPS), atol=1e-8)


def test_step_integrate_moves_a_free_body_straight_and_turns_it():
    """q ⊞ u of a free body: p⁺ = p + R u[:3], R⁺ = R exp(u[3:]) (scipy's rotations), for a quaternion
    of any norm; a 1-dof joint adds u, as integrate does."""
    model = _free_body_model([(Sphere(0.1), 1.0, np.eye(3) * 4e-3)])
    rng = np.random.default_rng(5)
    for _ in range(5):
        q, u = np.r_[rng.normal(size=3), 3.0 * rng.normal(size=4)], 2.0 * rng.normal(size=6)
        rotation = Rotation.from_quat(q[3:], scalar_first=True)
        moved = step_integrate(model, q, u)
        np.testing.assert_allclose(moved[:3], q[:3] + rotation.apply(u[:3]), atol=1e-12)
        turned = (rotation * Rotation.from_rotvec(u[3:])).as_quat(scalar_first=True)
        np.testing.assert_allclose(moved[3:] * np.sign(moved[3] * turned[0]), turned, atol=1e-12)
    cheetah = load_dataset_robot("half_cheetah")
    q, u = random_configuration(cheetah, rng), rng.normal(size=cheetah.nv)
    np.testing.assert_allclose(step_integrate(cheetah, q, u), q + u, atol=1e-15)


def test_with_inertial_parameters_round_trip_and_checks():
    model = load_dataset_robot("half_cheetah")
    params = inertial_parameters(model)
    np.testing.assert_allclose(inertial_parameters(model.with_inertial_parameters(params)), params, atol=1e-12)
    bad = params.copy()
    bad[2, 0] = -1.0
    with pytest.raises(ValueError, match="torso|mass"):
        model.with_inertial_parameters(bad)
    with pytest.raises(ValueError, match="shape"):
        model.with_inertial_parameters(params[:, :9])


@pytest.mark.parametrize(
    "robot, zeroed, joint",
    [
        ("box", slice(0, 4), "root_joint"),
        ("double_pendulum", slice(0, 20), "shoulder"),
        ("double_pendulum", slice(10, 20), "elbow"),
    ],
)
def test_parameters_that_leave_a_joint_without_inertia_are_refused(robot, zeroed, joint):
    """Zero mass (and first moment), or all ten parameters zero, leave a joint moving nothing: the mass
    matrix is singular and its solves gave NaN, or numpy's "Singular matrix". The parameters are
    refused by name, by the builder's own rule, whether they come through the world or the model."""
    world = World(load_dataset_robot(robot))
    params = world.parameters().copy()
    params[zeroed] = 0.0
    message = rf"params: joint '{joint}' moves no mass or inertia along its axis \(singular mass matrix\)"
    with pytest.raises(ValueError, match=message):
        world.with_parameters(params)
    with pytest.raises(ValueError, match=message):
        world.model.with_inertial_parameters(params[:-2].reshape(-1, 10))


def test_a_massless_link_that_moves_a_heavy_one_is_accepted():
    """The builder's rule, not a stricter one: a first pendulum link without mass or inertia still
    swings the second, which keeps the mass matrix invertible."""
    model = load_dataset_robot("double_pendulum")
    params = inertial_parameters(model).copy()
    params[0] = 0.0
    light = model.with_inertial_parameters(params)
    np.testing.assert_array_equal(light.masses, [0.0, model.masses[1]])
    assert np.all(np.isfinite(minverse(light, neutral(light))))


def test_convex_mesh_max_vertices_is_an_inner_approximation():
    import trimesh

    sphere = trimesh.creation.icosphere(subdivisions=2, radius=1.0)
    full = ConvexMesh.from_mesh(sphere)
    reduced = ConvexMesh.from_mesh(sphere, max_vertices=32)
    assert len(reduced.vertices) <= 32 < len(full.vertices)
    world_vertices = reduced.vertices + reduced.offset_position
    assert np.all(np.linalg.norm(world_vertices, axis=1) <= 1.0 + 1e-9)
    with pytest.raises(ValueError, match="max_vertices"):
        ConvexMesh.from_mesh(sphere, max_vertices=3)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"dt": 0.0}, "dt"),
        ({"restitution": 1.5}, "restitution"),
        ({"friction": -0.1}, "friction"),
        ({"baumgarte": float("nan")}, "baumgarte"),
        ({"contact_margin": float("inf")}, "contact_margin"),
        ({"dt": float("nan")}, "dt"),
        ({"ground_height": float("nan")}, "ground_height"),
    ],
)
def test_world_arguments_are_checked(kwargs, message):
    with pytest.raises(ValueError, match=message):
        World(_box_model(), **kwargs)


def test_step_arguments_are_checked():
    world = World(_box_model())
    q, v = _pose([0.0, 0.0, 1.0]), np.zeros(6)
    with pytest.raises(ValueError, match="q"):
        world.step(q[:6], v)
    with pytest.raises(ValueError, match="v"):
        world.step(q, np.r_[v, 0.0])
    with pytest.raises(ValueError, match="finite"):
        world.step(q, np.full(6, np.nan))
    with pytest.raises(ValueError, match="tau"):
        world.step(q, v, np.zeros(5))
    with pytest.raises(ValueError, match="derivatives"):
        world.step(q, v).jacobians()
    with pytest.raises(TypeError, match="warm_start"):
        world.step(q, v, warm_start="previous")
    with pytest.raises(ValueError, match="params"):
        world.with_parameters(np.zeros(3))


# --- the contact NCP (contact_model="ncp"): derivatives with the contact modes held fixed -------------


def test_ncp_box_sliding_on_an_edge():
    """Two edge contacts sliding on their cones (each its own direction), pushed and twisted."""
    world = World(_box_model(), dt=1e-2, friction=0.3, contact_model="ncp")
    angle = 0.3
    q = _pose([0.0, 0.0, 0.1 * np.cos(angle) + 0.1 * np.sin(angle) - 5e-4], (1, 0, 0), angle)
    step = _assert_jacobians_match(
        world, q, np.array([0.2, 0.1, -0.1, 0.5, 0.1, 0.3]), np.array([0, 0, 0, 0.1, 0, 0.0])
    )
    assert len(step.contacts) == 2 and (step.lcp.modes == 2).all()  # both SLIDING


def test_ncp_box_sliding_and_turning_on_its_face():
    """Four coplanar contacts sliding, each its own direction (the box turns): their normal impulses
    are undetermined (a rank-deficient mode system) and the solver's least-norm split moves with
    every input, inertia included."""
    world = World(_box_model(), dt=1e-2, friction=0.3, contact_model="ncp")
    q = _pose([0.1, 0.2, 0.0995], (0, 0, 1), 0.3)
    step = _assert_jacobians_match(world, q, np.array([1.0, 0.3, -0.05, 0.0, 0.0, 0.2]), np.zeros(6))
    assert len(step.contacts) == 4 and (step.lcp.modes == 2).all()  # SLIDING


def test_ncp_box_sticking_on_its_face():
    """Four coplanar contacts inside their cones: a singular Delassus matrix, the impulses' split
    undetermined but the motion not."""
    world = World(_box_model(), dt=1e-2, friction=1.0, contact_model="ncp")
    q = _pose([0.0, 0.0, 0.0998])
    step = _assert_jacobians_match(
        world, q, np.array([0.02, 0.0, -0.01, 0.0, 0.0, 0.0]), np.array([1.0, 0.5, 0, 0, 0, 0.1])
    )
    assert (step.lcp.modes == 1).all()  # STICKING


def test_ncp_articulated_robot_and_joint_limit():
    """The half-cheetah's cylinder contacts, and a pendulum on its limit (a frictionless contact)."""
    model = load_dataset_robot("half_cheetah")
    world = World(model, dt=1e-2, friction=0.8, contact_model="ncp")
    q = neutral(model)
    q[1] = -0.2
    v = np.zeros(model.nv)
    v[0] = 0.5
    for _ in range(20):
        step = world.step(q, v)
        q, v = step.q, step.v
    checked = _assert_jacobians_match(world, q, v, np.random.default_rng(3).normal(size=model.nv), with_params=False)
    assert len(checked.contacts) >= 2
    builder = ModelBuilder()
    builder.add_body(
        "link",
        parent=None,
        joint="hinge",
        kind="revolute",
        axis=(0, 1, 0),
        mass=1.0,
        com=(0.5, 0.0, 0.0),
        inertia=np.diag([1e-3, 1e-2, 1e-2]),
        lower=-0.3,
        upper=0.3,
    )
    world = World(builder.build(), ground=False, dt=1e-2, contact_model="ncp")
    step = _assert_jacobians_match(world, np.array([-0.301]), np.array([-0.2]), np.array([-3.0]))
    assert step.limit_impulses[0] > 0


def test_ncp_has_no_complementarity_aware_gradients():
    world = World(_box_model(), dt=1e-2, contact_model="ncp")
    step = world.step(_pose([0.0, 0.0, 0.0999]), np.zeros(6), derivatives=True)
    with pytest.raises(ValueError, match="steps the boxed LCP solved only"):
        step.vjp(grad_v=np.ones(6), complementarity_aware=True)
    with pytest.raises(ValueError, match="contact_model"):
        World(_box_model(), contact_model="pgs")
