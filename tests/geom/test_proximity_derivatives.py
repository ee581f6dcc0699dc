"""Derivatives of DCOL proximity against the independent diffcp oracle (tests/support/derivative_oracle.py) and
against their own symmetries."""

import numpy as np
import pytest

from dcol.geom import (
    DERIVATIVE_SETTINGS,
    Box,
    Capsule,
    Polytope,
    Sphere,
    contact_jacobian,
    contact_jacobian_batch,
    distance_jacobian,
    proximity_batch,
    proximity_gradient,
    proximity_gradient_batch,
    proximity_jacobian,
    proximity_jacobian_batch,
    shape_parameter_jacobian,
)
from dcol.solvers import SolverSettings, Status
from tests.support.derivative_oracle import (
    PARAMETERIZATIONS,
    complementarity_margin,
    contact_jacobian_oracle,
    mrp_of_quaternion,
    shape_parameter_jacobian_oracle,
)
from tests.support.oracle import rotation_matrix
from tests.support.shapes import KINDS, random_configuration, random_quaternion

PAIRS = [(ka, kb) for ka in KINDS for kb in KINDS]


def relative_error(value, reference):
    return np.max(np.abs(value - reference)) / max(np.max(np.abs(reference)), 1e-12)


def pose_batch(ka, kb, rng, count):
    """Two shapes (with offsets) and `count` random pose pairs near contact, as batch arrays."""
    a, _, _, b, _, _ = random_configuration(ka, kb, rng, "near", offsets=True)
    poses = [random_configuration(ka, kb, rng, "near") for _ in range(count)]
    r_a = np.array([p[1] for p in poses])
    q_a = np.array([p[2] for p in poses])
    r_b = r_a + 2.0 * rng.normal(size=(count, 3))
    q_b = np.array([random_quaternion(rng) for _ in poses])
    return a, r_a, q_a, b, r_b, q_b


def generic_configurations(rng, count_per_pair=1):
    """(kinds, configuration, oracle values and Jacobians, complementarity margin) for every ordered
    pair, both regimes; the oracle refuses degenerate configurations (no derivative), which are skipped."""
    cases = []
    for index, (ka, kb) in enumerate(PAIRS * count_per_pair):
        regime = ("separated", "penetrating")[index % 2]
        for _ in range(5):
            config = random_configuration(ka, kb, rng, regime, offsets=index % 3 == 0)
            try:
                oracle = contact_jacobian_oracle(*config, parameterization="quaternion")
            except RuntimeError:
                continue
            cases.append(((ka, kb), config, oracle, complementarity_margin(*config)))
            break
    return cases


@pytest.fixture(scope="module")
def cases():
    return generic_configurations(np.random.default_rng(20261123))


def diffcp_errors(cases, settings=None):
    """Per case, the relative error of every contact Jacobian against the oracle's."""
    barrier = (settings or DERIVATIVE_SETTINGS).barrier
    errors = []
    for _, config, (values, reference), _ in cases:
        result = contact_jacobian(*config, settings=settings)
        assert result.status == Status.SOLVED
        # α moves by O(μ) with the barrier (measured 3.5μ relative at most)
        assert abs(result.alpha - values["alpha"]) <= 10 * barrier * max(1.0, values["alpha"])
        errors.append({key: relative_error(getattr(result, "d_" + key), reference[key]) for key in reference})
    return errors


# Configurations whose active constraints are this far from changing (the oracle's complementarity
# margin): the contact is not near an edge or corner, where the smoothing acts.
GENERIC_MARGIN = 0.1


def test_all_pairs_agree_with_diffcp(cases):
    # The derivatives are those of the barrier-smoothed problem (μ = 1e-9), diffcp's those of the exact
    # one at its refined solution. They differ by the smoothing, which grows like μ/m² as the margin m
    # shrinks near an edge or corner, and by rounding, which grows like 1e-16/μ (see dcol.geom.derivatives).
    # Measured on this set: median 4e-8 over all outputs (1.3e-7 for the normal, the largest); largest
    # 4.3e-6 on the 29 cases with m ≥ 0.1 (cone–cone, rounding); 5.4e-5 overall (a polygon edge on a
    # polytope, m = 2e-3, smoothing).
    assert len(cases) >= 45
    errors = diffcp_errors(cases)
    for key in errors[0]:
        assert np.median([e[key] for e in errors]) <= 1e-6, key
    generic = [max(e.values()) for e, case in zip(errors, cases) if case[3] >= GENERIC_MARGIN]
    assert len(generic) >= 20
    assert max(generic) <= 1e-5
    assert max(max(e.values()) for e in errors) <= 3e-4


def test_disagreement_near_edges_is_the_smoothing(cases):
    # Where the margin is small the difference from diffcp is the barrier's bias: ten times less barrier,
    # ten times closer (measured ratios 9.99–10.0 on the three smallest margins, 2e-3 to 3e-2).
    near_edges = sorted(cases, key=lambda case: case[3])[:3]
    coarse = diffcp_errors(near_edges, SolverSettings(barrier=1e-8, centrality_tol=1e-5))
    fine = diffcp_errors(near_edges, SolverSettings(barrier=1e-9, centrality_tol=1e-5))
    for e_coarse, e_fine in zip(coarse, fine):
        assert 5.0 <= max(e_coarse.values()) / max(e_fine.values()) <= 20.0


EXACT = SolverSettings()  # barrier = 0: the exact problem's derivatives


def test_exact_derivatives_agree_with_diffcp_everywhere(cases):
    # With barrier = 0 the roles of the constraints are read at the central point, Newton's method takes
    # the solution to the exact one, and its KKT system is differentiated: no smoothing, no rounding of a
    # slack near its cone. Measured on the 48 cases, near edges included: largest error 5e-11 (a cone on
    # a sphere), α within 1.3e-13 relative.
    for (ka, kb), config, (values, reference), _ in cases:
        result = contact_jacobian(*config, settings=EXACT)
        assert result.status == Status.SOLVED, (ka, kb)
        assert result.alpha == pytest.approx(values["alpha"], rel=1e-11, abs=1e-12)
        np.testing.assert_allclose(result.x, values["x"], rtol=0, atol=1e-10 * max(1.0, np.max(np.abs(values["x"]))))
        for key, expected in reference.items():
            assert relative_error(getattr(result, "d_" + key), expected) <= 1e-8, (ka, kb, key)


@pytest.mark.parametrize("parameterization", PARAMETERIZATIONS)
def test_exact_derivatives_agree_with_central_differences(parameterization):
    # Central differences of the exact values themselves (α and x exact to rounding, so a step of 1e-6
    # leaves ~1e-10 of rounding and ~1e-12 of truncation). Measured: 47 of the 49 pairs differentiable,
    # largest error 6.2e-10 (quaternion), 5.8e-10 (MRP), 5.0e-10 (rigid).
    rng = np.random.default_rng(12)
    errors = []
    for index, (ka, kb) in enumerate(PAIRS):
        config = random_configuration(ka, kb, rng, ("separated", "penetrating")[index % 2], offsets=index % 3 == 0)
        J = proximity_jacobian(*config, parameterization=parameterization, settings=EXACT)
        if J.status != Status.SOLVED:  # not differentiable here (flagged SMOOTHED)
            continue
        errors.append(relative_error(J.jacobian, exact_central_differences(config, parameterization)))
    assert len(errors) >= 40
    assert np.max(errors) <= 1e-7


def exact_central_differences(config, parameterization, step=1e-6):
    """Central differences of the exact (x, α) along each pose coordinate, in one batch call."""
    a, r_a, q_a, b, r_b, q_b = config
    moved = moved_poses(config, parameterization, step)
    result = proximity_jacobian_batch(a, *moved[:2], b, *moved[2:], settings=EXACT)
    assert np.all(result.status == Status.SOLVED)
    values = np.column_stack([result.x, result.alpha])
    return ((values[0::2] - values[1::2]) / (2 * step)).T


def test_exact_mode_flags_contacts_without_a_derivative():
    # Face on face (x not unique), an edge along a face, coincident origins, and a pyramid's apex (four
    # faces meet there, so the multipliers are not unique) on a face: no strict complementarity or no
    # unique multipliers, no exact derivative. Status SMOOTHED, and the derivatives are those of the
    # default barrier-smoothed settings.
    box, q = Box([1.0, 1.0, 1.0]), np.array([1.0, 0.0, 0.0, 0.0])
    tilted = np.array([np.cos(np.pi / 8), np.sin(np.pi / 8), 0.0, 0.0])
    flipped = np.array([0.0, 1.0, 0.0, 0.0])  # the pyramid's apex points down
    pyramid = Polytope.from_vertices([[1, 1, -1], [1, -1, -1], [-1, 1, -1], [-1, -1, -1], [0, 0, 1]])
    for b, r_b, q_b in (
        (box, [0.0, 0.0, 2.5], q),
        (box, [0.0, 0.0, 3.0], tilted),
        (Sphere(0.5), [0.0, 0.0, 0.0], q),
        (pyramid, [0.2, -0.1, 2.5], flipped),
    ):
        exact = contact_jacobian(box, np.zeros(3), q, b, r_b, q_b, settings=EXACT)
        smoothed = contact_jacobian(box, np.zeros(3), q, b, r_b, q_b)
        assert exact.status == Status.SMOOTHED
        assert exact.alpha == smoothed.alpha
        for key in ("d_alpha", "d_x", "d_p_a", "d_p_b", "d_distance", "d_normal"):
            assert np.all(np.isfinite(getattr(exact, key))), key
            # The same derivatives up to rounding: the exact path is compiled apart from the AVX2 kernel,
            # and at these degenerate points the linearized KKT system is nearly singular (condition up to
            # ~1/μ), which amplifies it: measured 1.2e-10 of the largest entry, and 3.3e-8 from another
            # starting point of the solver, in entries that are 0. Derivatives that vanish (α's at coincident
            # origins) are rounding noise of ~1e-17 in both, so the scale has a floor, 1e-9: far below the
            # O(1) derivatives of these unit-sized shapes.
            scale = max(np.max(np.abs(getattr(smoothed, key))), 1e-9)
            np.testing.assert_allclose(getattr(exact, key), getattr(smoothed, key), rtol=0, atol=1e-6 * scale)


def test_exact_gradient_batch_and_shape_parameters(rng):
    # The gradient is the exact Jacobian's α row; batches (one pair at a time) equal single calls; the
    # shape-parameter derivatives agree with diffcp's to 1e-8.
    a, r_a, q_a, b, r_b, q_b = pose_batch("polygon", "cone", rng, 6)
    batch = contact_jacobian_batch(a, r_a, q_a, b, r_b, q_b, settings=EXACT, threads=2)
    gradients = proximity_gradient_batch(a, r_a, q_a, b, r_b, q_b, settings=EXACT)
    for i in range(6):
        single = contact_jacobian(a, r_a[i], q_a[i], b, r_b[i], q_b[i], settings=EXACT)
        assert batch.status[i] == single.status
        for key in ("d_alpha", "d_x", "d_p_a", "d_p_b", "d_distance", "d_normal"):
            np.testing.assert_array_equal(getattr(batch, key)[i], getattr(single, key))
        if single.status == Status.SOLVED:
            scale = np.max(np.abs(single.d_alpha))
            np.testing.assert_allclose(gradients.gradient[i], single.d_alpha, rtol=0, atol=1e-12 * scale)
    for ka, kb in (("polytope", "ellipsoid"), ("capsule", "cone"), ("sphere", "polygon")):
        config = random_configuration(ka, kb, rng, "separated", offsets=True)
        _, _, reference = shape_parameter_jacobian_oracle(*config)
        result = shape_parameter_jacobian(*config, settings=EXACT)
        assert result.status == Status.SOLVED
        overall = max(np.max(np.abs(expected)) for expected in reference.values())
        for key, expected in reference.items():
            assert np.max(np.abs(result.jacobians[key] - expected)) <= 1e-8 * overall, key


@pytest.mark.parametrize("parameterization", PARAMETERIZATIONS)
def test_parameterizations_agree_with_diffcp(parameterization, rng):
    for ka, kb in [("polytope", "ellipsoid"), ("capsule", "cone"), ("polygon", "cylinder"), ("sphere", "capsule")]:
        config = random_configuration(ka, kb, rng, "separated", offsets=True)
        values, reference = contact_jacobian_oracle(*config, parameterization=parameterization)
        result = proximity_jacobian(*config, parameterization=parameterization)
        expected = np.vstack([reference["x"], reference["alpha"]])
        assert result.jacobian.shape == expected.shape == (4, 14 if parameterization == "quaternion" else 12)
        assert relative_error(result.jacobian, expected) <= 1e-5, (ka, kb)


def test_quaternion_columns_see_the_normalization(rng):
    # J q = 0 on each body's quaternion columns: scaling q does not move anything.
    config = random_configuration("cone", "polytope", rng, "near")
    J = proximity_jacobian(*config).jacobian
    q_a, q_b = config[2], config[5]
    assert np.max(np.abs(J[:, 3:7] @ q_a)) <= 1e-10 * np.max(np.abs(J))
    assert np.max(np.abs(J[:, 10:14] @ q_b)) <= 1e-10 * np.max(np.abs(J))


@pytest.mark.parametrize("ka,kb", [("capsule", "polytope"), ("ellipsoid", "polygon"), ("cylinder", "sphere")])
def test_swapping_the_shapes_swaps_the_column_blocks(ka, kb, rng):
    a, r_a, q_a, b, r_b, q_b = random_configuration(ka, kb, rng, "separated", offsets=True)
    ab = contact_jacobian(a, r_a, q_a, b, r_b, q_b, parameterization="rigid")
    ba = contact_jacobian(b, r_b, q_b, a, r_a, q_a, parameterization="rigid")
    swap = np.r_[6:12, 0:6]
    for key, sign in (("alpha", 1), ("x", 1), ("distance", 1), ("normal", -1)):
        assert relative_error(sign * getattr(ba, "d_" + key)[..., swap], getattr(ab, "d_" + key)) <= 1e-5, key
    assert relative_error(ba.d_p_b[:, swap], ab.d_p_a) <= 1e-5


def test_one_rigid_motion_of_both_bodies_rotates_the_jacobian(rng):
    a, r_a, q_a, b, r_b, q_b = random_configuration("cone", "capsule", rng, "penetrating", offsets=True)
    q_motion = random_quaternion(rng)
    R, t = rotation_matrix(q_motion), rng.normal(size=3)

    def compose(q):  # quaternion of R Q(q)
        w1, v1, w2, v2 = q_motion[0], q_motion[1:], q[0], q[1:]
        return np.r_[w1 * w2 - v1 @ v2, w1 * v2 + w2 * v1 + np.cross(v1, v2)]

    before = proximity_jacobian(a, r_a, q_a, b, r_b, q_b, parameterization="rigid")
    after = proximity_jacobian(a, R @ r_a + t, compose(q_a), b, R @ r_b + t, compose(q_b), parameterization="rigid")
    assert abs(after.alpha - before.alpha) <= 1e-8
    # World-frame perturbations rotate with the world: J' = [R 0; 0 1] J blockdiag(Rᵀ, …).
    rows = np.eye(4)
    rows[:3, :3] = R
    columns = np.kron(np.eye(4), R.T)
    assert relative_error(after.jacobian, rows @ before.jacobian @ columns) <= 1e-5


@pytest.mark.parametrize("parameterization", PARAMETERIZATIONS)
def test_gradient_is_the_alpha_row_of_the_jacobian(parameterization, rng):
    for ka, kb in [("polytope", "polytope"), ("ellipsoid", "cone"), ("polygon", "capsule")]:
        config = random_configuration(ka, kb, rng, "near")
        gradient = proximity_gradient(*config, parameterization=parameterization)
        jacobian = proximity_jacobian(*config, parameterization=parameterization)
        assert gradient.alpha == pytest.approx(jacobian.alpha, abs=1e-12)
        assert relative_error(gradient.gradient, jacobian.jacobian[3]) <= 1e-6


def test_batch_matches_single_calls(rng):
    a, r_a, q_a, b, r_b, q_b = pose_batch("capsule", "ellipsoid", rng, 11)
    batch = contact_jacobian_batch(a, r_a, q_a, b, r_b, q_b, parameterization="mrp", threads=2)
    gradients = proximity_gradient_batch(a, r_a, q_a, b, r_b, q_b, parameterization="mrp")
    jacobians = proximity_jacobian_batch(a, r_a, q_a, b, r_b, q_b, parameterization="mrp")
    # Lanes and single calls round differently and so stop at different points within the centrality
    # tolerance of the central path; the derivatives there differ by up to ~1e-5 relative.
    for i in range(11):
        single = contact_jacobian(a, r_a[i], q_a[i], b, r_b[i], q_b[i], parameterization="mrp")
        for key in ("d_alpha", "d_x", "d_p_a", "d_p_b", "d_distance", "d_normal"):
            scale = np.max(np.abs(getattr(single, key)))
            np.testing.assert_allclose(getattr(batch, key)[i], getattr(single, key), rtol=0, atol=1e-4 * scale)
        np.testing.assert_allclose(jacobians.jacobian[i, 3], batch.d_alpha[i], rtol=0, atol=1e-12)
        np.testing.assert_allclose(
            gradients.gradient[i], single.d_alpha, rtol=0, atol=1e-4 * np.max(np.abs(single.d_alpha))
        )


@pytest.mark.parametrize("parameterization", PARAMETERIZATIONS)
def test_single_calls_equal_the_batch_path_of_one_pair_at_a_time(parameterization, rng):
    # Single calls have their own native binding; a batch with a list of shapes solves one pair at a
    # time with the same kernel, so the two agree exactly.
    config = random_configuration("cylinder", "polygon", rng, "near", offsets=True)
    a, r_a, q_a, b, r_b, q_b = config
    if parameterization == "rigid":
        q_a, q_b = rotation_matrix(q_a), rotation_matrix(q_b)
    batch_args = ([a], r_a[None], q_a[None], [b], r_b[None], q_b[None])
    for single_call, batch_call, fields in (
        (proximity_gradient, proximity_gradient_batch, ("alpha", "gradient")),
        (proximity_jacobian, proximity_jacobian_batch, ("alpha", "x", "jacobian")),
        (
            contact_jacobian,
            contact_jacobian_batch,
            (
                "alpha",
                "x",
                "p_a",
                "p_b",
                "distance",
                "normal",
                "d_alpha",
                "d_x",
                "d_p_a",
                "d_p_b",
                "d_distance",
                "d_normal",
            ),
        ),
    ):
        single = single_call(a, r_a, q_a, b, r_b, q_b, parameterization=parameterization)
        batch = batch_call(*batch_args, parameterization=parameterization)
        assert single.status == Status.SOLVED and isinstance(single.status, Status)
        assert single.iterations == batch.iterations[0]
        for field in fields:
            np.testing.assert_array_equal(getattr(single, field), getattr(batch, field)[0], err_msg=field)


def test_coincident_origins_give_finite_derivatives():
    result = contact_jacobian(Box([1.0, 0.5, 0.7]), np.zeros(3), [1, 0, 0, 0], Sphere(0.4), np.zeros(3), [1, 0, 0, 0])
    assert result.alpha == pytest.approx(0.0, abs=1e-6)
    for key in ("d_alpha", "d_x", "d_p_a", "d_p_b", "d_distance", "d_normal"):
        assert np.all(np.isfinite(getattr(result, key))), key


@pytest.mark.parametrize(
    "ka, kb", [("sphere", "sphere"), ("ellipsoid", "cone"), ("polytope", "capsule"), ("polygon", "cylinder")]
)
def test_far_apart_shapes_are_solved_and_agree_with_central_differences(ka, kb, rng):
    # Origins ~300 sizes apart (α in the hundreds): rounding keeps λ∘λ from μe by ~1e-4 relative there,
    # above DERIVATIVE_SETTINGS' centrality 1e-5, so the solve stops at that floor (before, it ran to the
    # iteration limit and reported SOLVED_INACCURATE, with the same derivatives). Rounding also bounds
    # their accuracy, the error growing like α/μ, which the solve holds at 1e11 at most by raising μ to
    # 1e-11 α (proximity.hpp's resolvable_barrier), which keeps them within the 1e-4 asserted below.
    a, r_a, q_a, b, r_b, q_b = random_configuration(ka, kb, rng, "separated")
    config = (a, r_a, q_a, b, r_a + 300.0 * (r_b - r_a), q_b)
    result = proximity_jacobian(*config, parameterization="rigid")
    assert result.status == Status.SOLVED and result.alpha > 100.0
    values_settings = SolverSettings(barrier=DERIVATIVE_SETTINGS.barrier, centrality_tol=1e-8)
    assert relative_error(result.jacobian, central_differences(config, values_settings, "rigid")) <= 1e-4


def far_pair(distance, count, parameterization="rigid"):
    """A unit sphere at the origin and a cube of half side 1 centred at Δ = (d, 0.3 d, 0), both unturned,
    as `count` equal pose pairs (one pose pair takes the one-pair kernel, more the lane kernels): their
    proximity_jacobian_batch."""
    identity = np.tile([1.0, 0.0, 0.0, 0.0], (count, 1))
    r_b = np.tile([distance, 0.3 * distance, 0.0], (count, 1))
    return proximity_jacobian_batch(
        Sphere(1.0),
        np.zeros((count, 3)),
        identity,
        Box([1.0, 1.0, 1.0]),
        r_b,
        identity,
        parameterization=parameterization,
    )


@pytest.mark.parametrize("distance", [1e9, 1e12, 1e155])
@pytest.mark.parametrize("count", [1, 2, 4, 8])
def test_derivatives_are_finite_or_say_why_not_at_any_distance(distance, count):
    """Unit shapes 10⁹–10¹⁵⁵ m apart, alone and in batches of every size, in the quaternion
    parameterization: each Jacobian is finite, or its status is NUMERICAL_ERROR; it used to be NaN
    under SOLVED_INACCURATE, depending on the batch size."""
    batch = far_pair(distance, count, "quaternion")
    for n in range(count):
        finite = np.isfinite(batch.jacobian[n]).all()
        assert finite or batch.status[n] == Status.NUMERICAL_ERROR, (n, batch.status[n])


def far_pair_jacobian(distance):
    """∂(x, α)/∂(δp_a, δθ_a, δp_b, δθ_b) (4, 12) of far_pair in closed form. The scaled cube's face
    facing the sphere has the outward normal −u, u = R_b e_x, and lies at u·(r_b − r_a) − α from the
    sphere's centre; it spans 0.3 d ± α across, which holds the foot of that distance (α > 0.3 d), so
    the sphere of radius α touches it where that distance is α: α = u·Δ / 2 = d / 2 and x = r_a + α u.
    A turn δθ of the cube about its centre turns u by δθ × u: ∂α/∂δθ_b = (u × Δ) / 2,
    ∂x/∂δθ_b = u (∂α/∂δθ_b)ᵀ − α [u]×; the sphere's turn changes nothing."""
    u, delta, alpha = np.array([1.0, 0.0, 0.0]), np.array([distance, 0.3 * distance, 0.0]), distance / 2
    d_alpha = np.r_[-u / 2, np.zeros(3), u / 2, np.cross(u, delta) / 2]
    u_cross = np.array([[0.0, -u[2], u[1]], [u[2], 0.0, -u[0]], [-u[1], u[0], 0.0]])
    d_x = np.outer(u, d_alpha) + np.hstack([np.eye(3), np.zeros((3, 6)), -alpha * u_cross])
    return np.vstack([d_x, d_alpha])


def far_pair_error(jacobian, distance, rows):
    """Largest error of the Jacobian's `rows` against the closed form, the turn columns divided by d
    (their entries grow with it) so that every entry is of order one."""
    columns = np.r_[np.ones(9), np.full(3, distance)]
    return np.abs((jacobian[..., rows, :] - far_pair_jacobian(distance)[rows]) / columns).max()


@pytest.mark.parametrize("distance", [3e5, 1e6, 1e7, 1e9, 1e12])
@pytest.mark.parametrize("count", [1, 2, 4, 8])
def test_far_apart_alpha_derivatives_are_the_closed_form(distance, count):
    """Issue 31's reproducer, unit shapes 3·10⁵–10⁷ m apart (and beyond), alone and in batches of
    every size: SOLVED (as proximity says) with α and its row of the Jacobian the closed form's
    (far_pair_jacobian); it used to be all NaN under SOLVED_INACCURATE."""
    batch = far_pair(distance, count)
    np.testing.assert_array_equal(batch.status, Status.SOLVED)
    np.testing.assert_allclose(batch.alpha, distance / 2, rtol=1e-9)
    assert far_pair_error(batch.jacobian, distance, [3]) <= 1e-7


@pytest.mark.parametrize("distance", [3e5, 1e6, 2e6, 1e7, 1e9, 1e12])
@pytest.mark.parametrize("count", [1, 2, 4, 8])
def test_far_apart_intersection_point_derivatives_are_the_closed_form(distance, count):
    """The rows of the intersection point x too, in the one-pair kernel and in the lane kernels. From
    2·10⁶ m on they used to come out wrong under SOLVED (∂x_y/∂δp_a,y ≈ 0.77 for the closed form's 1):
    the central path at μ = 1e-9 lay closer to the sphere's cone boundary than doubles resolve."""
    batch = far_pair(distance, count)
    np.testing.assert_array_equal(batch.status, Status.SOLVED)
    assert far_pair_error(batch.jacobian, distance, [0, 1, 2]) <= 1e-7


@pytest.mark.parametrize("ka, kb", PAIRS)
def test_far_apart_derivatives_of_every_pair_agree_with_central_differences(ka, kb, rng):
    """Every pair of primitives with its origins spread 10⁷ times as far apart as in a separated
    configuration (α ~ 10⁷), against central differences of the returned x and α: the far pair's
    error above was not the sphere's alone. Before, the values' solves of 38 of the 49 pairs ended
    unsolved and the rows of x of the others were off by up to 0.18; now the largest error is 1.4e-4
    (cylinder–cone), the median 2e-6, as at a few hundred sizes apart (the test of those above). Far
    apart, a translation changes x and α on the scale of the distance (by turning the direction
    between the shapes), so translations take a step of 1 m, whose truncation error is negligible and
    whose rounding of values of size 10⁷ is ~1e-9; a turn moves x by the distance times its angle, so
    turns take 10⁻³, and their columns are divided by the distance, the turn's lever, so that every
    entry is of order one."""
    a, r_a, q_a, b, r_b, q_b = random_configuration(ka, kb, rng, "separated")
    config = (a, r_a, q_a, b, r_a + 1e7 * (r_b - r_a), q_b)
    result = proximity_jacobian(*config, parameterization="rigid")
    assert result.status == Status.SOLVED and result.alpha > 1e6
    values_settings = SolverSettings(barrier=DERIVATIVE_SETTINGS.barrier, centrality_tol=1e-8)
    translation = np.tile(np.r_[np.ones(3, bool), np.zeros(3, bool)], 2)
    reference = np.where(
        translation,
        central_differences(config, values_settings, "rigid", step=1.0),
        central_differences(config, values_settings, "rigid", step=1e-3),
    )
    columns = np.where(translation, 1.0, np.linalg.norm(config[4] - config[1]))
    assert np.abs((result.jacobian - reference) / columns).max() <= 1e-3


def test_bad_arguments_are_refused():
    box, sphere = Box([1.0, 1.0, 1.0]), Sphere(0.5)
    pose = (np.zeros(3), [1.0, 0, 0, 0])
    with pytest.raises(ValueError, match="parameterization"):
        proximity_jacobian(box, *pose, sphere, np.ones(3), [1.0, 0, 0, 0], parameterization="euler")
    with pytest.raises(ValueError, match="quaternions"):
        proximity_jacobian(box, np.zeros(3), np.eye(3), sphere, np.ones(3), np.eye(3))
    with pytest.raises(ValueError, match="barrier"):
        distance_jacobian(box, *pose, sphere, np.ones(3), [1.0, 0, 0, 0], settings=SolverSettings())
    with pytest.raises(ValueError, match="r_b"):
        proximity_jacobian(box, *pose, sphere, [np.nan, 0, 0], [1.0, 0, 0, 0])
    with pytest.raises(ValueError, match="barrier"):
        SolverSettings(barrier=-1.0)
    rigid = proximity_jacobian(box, np.zeros(3), np.eye(3), sphere, np.ones(3) * 3, np.eye(3), parameterization="rigid")
    assert rigid.jacobian.shape == (4, 12)


@pytest.mark.parametrize(
    "ka,kb", [("polytope", "ellipsoid"), ("capsule", "cone"), ("polygon", "cylinder"), ("sphere", "polygon")]
)
def test_shape_parameter_jacobian_agrees_with_diffcp(ka, kb, rng):
    for _ in range(5):
        config = random_configuration(ka, kb, rng, "separated", offsets=True)
        try:
            alpha, x, reference = shape_parameter_jacobian_oracle(*config)
            break
        except RuntimeError:
            continue
    result = shape_parameter_jacobian(*config)
    assert result.alpha == pytest.approx(alpha, rel=1e-8)
    assert set(result.jacobians) == set(reference)
    # A parameter whose constraint is inactive has derivative 0: measure it against the others.
    overall = max(np.max(np.abs(expected)) for expected in reference.values())
    for key, expected in reference.items():
        assert result.jacobians[key].shape == expected.shape, key
        scale = max(np.max(np.abs(expected)), 1e-3 * overall)
        assert np.max(np.abs(result.jacobians[key] - expected)) <= 1e-4 * scale, key


def test_user_parameterized_polytope_against_finite_differences(rng):
    # A box whose half extents are θ: A fixed, b(θ) = [θ; θ], and a tilt of one face normal by θ_3.
    def polytope(theta):
        A = np.vstack([np.eye(3), -np.eye(3)])
        A[0] += theta[3] * np.array([0.0, 1.0, 0.0])
        return Polytope(A, np.r_[theta[:3], theta[:3]])

    theta = np.array([0.8, 0.5, 0.6, 0.2])
    dA = np.zeros((6, 3, 4))
    dA[0, 1, 3] = 1.0
    db = np.zeros((6, 4))
    for k in range(3):
        db[k, k] = db[3 + k, k] = 1.0
    other = Capsule(0.3, 0.9)
    r_b, q_b = np.array([1.4, 0.7, -0.3]), np.array([0.9, 0.2, -0.3, 0.1])
    q_a = np.array([0.8, -0.1, 0.3, 0.2])
    result = shape_parameter_jacobian(polytope(theta), np.zeros(3), q_a, other, r_b, q_b, theta_a=(dA, db))
    settings = SolverSettings(barrier=1e-10, centrality_tol=1e-6, max_iter=200)
    step, columns = 1e-5, []
    for k in range(4):
        values = []
        for sign in (1, -1):
            moved = theta.copy()
            moved[k] += sign * step
            r = proximity_jacobian(polytope(moved), np.zeros(3), q_a, other, r_b, q_b, settings=settings)
            values.append(np.r_[r.x, r.alpha])
        columns.append((values[0] - values[1]) / (2 * step))
    assert relative_error(result.jacobians["a", "theta"], np.array(columns).T) <= 1e-4


def perturbed_orientation(q, parameterization, k, delta):
    """q moved by delta along coordinate k of the parameterization's orientation columns."""
    if parameterization == "quaternion":
        return q + delta * np.eye(4)[k]
    if parameterization == "mrp":  # p ← p + δ e_k, back to the unit quaternion [1 − pᵀp, 2p]/(1 + pᵀp)
        p = mrp_of_quaternion(q) + delta * np.eye(3)[k]
        return np.r_[1 - p @ p, 2 * p] / (1 + p @ p)
    # rigid: Q ← exp([δθ]×) Q, as a quaternion product
    half = 0.5 * delta * np.eye(3)[k]
    w1, v1 = np.cos(np.linalg.norm(half)), np.sin(np.linalg.norm(half)) * half / np.linalg.norm(half)
    w2, v2 = q[0], q[1:]
    return np.r_[w1 * w2 - v1 @ v2, w1 * v2 + w2 * v1 + np.cross(v1, v2)]


def moved_poses(config, parameterization, step):
    """(r_a, q_a, r_b, q_b) stacked: each pose coordinate moved by +step, then −step, in turn."""
    _, r_a, q_a, _, r_b, q_b = config
    base = [np.asarray(v, dtype=float) for v in (r_a, q_a, r_b, q_b)]
    moved = []
    for index in range(4):
        width = 3 if index in (0, 2) or parameterization != "quaternion" else 4
        for k in range(width):
            for sign in (1.0, -1.0):
                pose = [v.copy() for v in base]
                if index in (0, 2):
                    pose[index][k] += sign * step
                else:
                    pose[index] = perturbed_orientation(pose[index], parameterization, k, sign * step)
                moved.append(pose)
    return [np.array([pose[i] for pose in moved]) for i in range(4)]


def central_differences(config, settings, parameterization, step=1e-5):
    """Central differences of proximity's (x, α) along each pose coordinate, in one batch call."""
    a, _, _, b, _, _ = config
    stacked = moved_poses(config, parameterization, step)
    result = proximity_batch(a, stacked[0], stacked[1], b, stacked[2], stacked[3], settings=settings)
    # A centrality this tight is below what rounding allows: the solves stop at the rounding floor
    # (ConeSolver::centrality_floor, ~1e-6 at μ = 1e-9 near contact), centred enough for the values.
    assert np.all(result.status == Status.SOLVED)
    values = np.column_stack([result.x, result.alpha])
    return ((values[0::2] - values[1::2]) / (2 * step)).T


@pytest.mark.parametrize("parameterization", PARAMETERIZATIONS)
def test_all_pairs_agree_with_central_differences(parameterization):
    # The derivatives at the default settings against central differences of the same barrier-smoothed
    # solution (μ = 1e-9), its values centred as closely as rounding allows so that they are smooth in
    # the poses to the differences' accuracy. Measured over the 49 pairs: largest error 1.3e-6
    # (quaternion), 1.2e-6 (MRP), 1.7e-6 (rigid); medians 4e-8.
    rng = np.random.default_rng(11)
    values_settings = SolverSettings(barrier=DERIVATIVE_SETTINGS.barrier, centrality_tol=1e-8)
    errors = []
    for index, (ka, kb) in enumerate(PAIRS):
        config = random_configuration(ka, kb, rng, ("separated", "penetrating")[index % 2], offsets=index % 3 == 0)
        J = proximity_jacobian(*config, parameterization=parameterization).jacobian
        errors.append(relative_error(J, central_differences(config, values_settings, parameterization)))
    assert np.max(errors) <= 1e-5, (np.argmax(errors), np.max(errors))
