"""Signed distance, witness points and normal (dcol.geom.distance) against independent routes: the
cvxpy distance program and coal (tests/support/distance_oracle.py), closed forms, central finite
differences of the values, and the geometric rules the result must obey."""

import numpy as np
import pytest

from dcol.geom import (
    DISTANCE_SETTINGS,
    Box,
    Capsule,
    Sphere,
    distance_jacobian,
    distance_jacobian_batch,
    proximity,
    signed_distance,
    signed_distance_batch,
    support_point,
)
from dcol.solvers import Status
from tests.support.distance_oracle import coal_distance, euclidean_distance
from tests.support.distance_oracle import signed_distance as oracle_signed_distance
from tests.support.oracle import gauge, rotation_matrix
from tests.support.shapes import KINDS, random_configuration, random_quaternion

PAIRS = [(ka, kb) for ka in KINDS for kb in KINDS]


def perturbed(config, column, step):
    """The configuration after a rigid motion of one body along one of the 12 rigid columns."""
    a, r_a, q_a, b, r_b, q_b = config
    poses = [[np.asarray(r_a, float), rotation_matrix(q_a)], [np.asarray(r_b, float), rotation_matrix(q_b)]]
    body, k = divmod(column, 6)
    if k < 3:
        poses[body][0] = poses[body][0] + step * np.eye(3)[k]
    else:
        angle = step * np.eye(3)[k - 3]
        poses[body][1] = rotation_matrix(np.r_[np.cos(step / 2), np.sin(step / 2) * angle / step]) @ poses[body][1]
    return a, *poses[0], b, *poses[1]


def central_differences(config, step=1e-6):
    """(12,) or (3, 12) derivatives of distance, p_a, p_b, normal by central differences of the values
    (solved centred at the same barrier as the derivatives)."""
    derivatives = {key: [] for key in ("distance", "p_a", "p_b", "normal")}
    for column in range(12):
        plus = signed_distance(*perturbed(config, column, step), settings=DISTANCE_SETTINGS)
        minus = signed_distance(*perturbed(config, column, -step), settings=DISTANCE_SETTINGS)
        for key in derivatives:
            derivatives[key].append((np.asarray(getattr(plus, key)) - getattr(minus, key)) / (2 * step))
    return {key: np.array(value).T for key, value in derivatives.items()}


def relative_error(value, reference):
    return np.max(np.abs(value - reference)) / max(np.max(np.abs(reference)), 1e-9)


@pytest.mark.parametrize("regime", ["separated", "penetrating"])
def test_derivatives_match_finite_differences_for_every_pair(regime):
    rng = np.random.default_rng(7 if regime == "separated" else 8)
    errors, unsolved = [], 0
    for ka, kb in PAIRS:
        config = random_configuration(ka, kb, rng, regime, offsets=True)
        result = distance_jacobian(*config)
        if result.status != Status.SOLVED:  # the centred solve can stall on deep penetrations
            unsolved += 1
            config = random_configuration(ka, kb, rng, regime, offsets=True)
            result = distance_jacobian(*config)
        assert result.status == Status.SOLVED, (ka, kb)
        assert (result.distance > 0) == (regime == "separated"), (ka, kb)
        reference = central_differences(config)
        errors.append(max(relative_error(getattr(result, "d_" + key), reference[key]) for key in reference))
    assert unsolved <= 2
    # Measured: median ~2e-6 (the differences' own noise), largest ~1e-3 (a witness point near a cone's
    # rim, where the barrier's smoothing of the edge is not yet linear over the differencing step).
    assert np.median(errors) <= 1e-5
    assert np.max(errors) <= 3e-3


def test_separated_pairs_agree_with_cvxpy_and_coal():
    # The cvxpy program and coal's GJK both pin the distance to ~1e-10 but witness points on curved
    # surfaces only to ~1e-5 (the distance is flat along the surface): points are checked against the
    # shapes themselves in the next test.
    rng = np.random.default_rng(21)
    for ka, kb in PAIRS:
        config = random_configuration(ka, kb, rng, "separated", offsets=True)
        result = signed_distance(*config)
        assert result.status == Status.SOLVED, (ka, kb)
        reference, _, _ = euclidean_distance(*config)
        assert np.isclose(result.distance, reference, rtol=1e-8, atol=1e-9), (ka, kb)
        coal_value, coal_p_a, coal_p_b, _ = coal_distance(*config)
        assert np.isclose(result.distance, coal_value, rtol=1e-7, atol=1e-9), (ka, kb)
        assert np.allclose(result.p_a, coal_p_a, atol=1e-4) and np.allclose(result.p_b, coal_p_b, atol=1e-4), (ka, kb)


def test_penetration_depth_bounds_the_minimum_translation():
    # The depth along DCOL's normal separates the shapes, so it is at least the minimum translation
    # distance (the oracle's search over directions); spheres and resting faces attain it.
    rng = np.random.default_rng(22)
    for ka, kb in PAIRS[::2]:
        config = random_configuration(ka, kb, rng, "penetrating")
        result = signed_distance(*config)
        reference = oracle_signed_distance(*config)[0]
        assert reference < 0 and result.distance <= reference + 1e-7, (ka, kb)
    a, b = Sphere(0.6), Sphere(0.9)
    config = (a, [0.1, 0.2, 0.3], [1, 0, 0, 0], b, [0.8, -0.4, 1.0], random_quaternion(rng))
    assert np.isclose(signed_distance(*config).distance, oracle_signed_distance(*config)[0], atol=1e-8)


def test_witness_points_lie_on_the_shapes_and_span_the_distance():
    rng = np.random.default_rng(11)
    for ka, kb in PAIRS:
        config = random_configuration(ka, kb, rng, "separated", offsets=True)
        a, r_a, q_a, b, r_b, q_b = config
        result = signed_distance(*config)
        assert result.status == Status.SOLVED
        assert np.isclose(np.linalg.norm(result.p_b - result.p_a), result.distance, rtol=1e-9, atol=1e-12)
        assert np.allclose(result.normal * result.distance, result.p_b - result.p_a, rtol=1e-6, atol=1e-9)
        # A witness point is the farthest point of its shape along the normal (a), or against it (b).
        top_a = result.normal @ support_point(a, r_a, q_a, result.normal)
        bottom_b = result.normal @ support_point(b, r_b, q_b, -result.normal)
        assert np.isclose(result.normal @ result.p_a, top_a, atol=1e-8)
        assert np.isclose(result.normal @ result.p_b, bottom_b, atol=1e-8)
        # And each is in its shape (the oracle's gauge: the smallest scaling holding the point).
        assert gauge(a, r_a, q_a, result.p_a) <= 1 + 1e-8 and gauge(b, r_b, q_b, result.p_b) <= 1 + 1e-8


def test_spheres_closed_form_in_both_regimes():
    a, b = Sphere(0.7), Sphere(0.4)
    q = [1.0, 0.0, 0.0, 0.0]
    direction = np.array([2.0, -1.0, 2.0]) / 3.0
    for gap in (0.9, 1e-3, -0.05, -0.6):
        center_b = np.array([0.3, 0.1, -0.2]) + (1.1 + gap) * direction
        result = signed_distance(a, [0.3, 0.1, -0.2], q, b, center_b, q)
        assert np.isclose(result.distance, gap, atol=1e-8)
        assert np.allclose(result.normal, direction, atol=1e-8)
        assert np.allclose(result.p_a, [0.3, 0.1, -0.2] + 0.7 * direction, atol=1e-7)
        assert np.allclose(result.p_b, center_b - 0.4 * direction, atol=1e-7)


def test_resting_boxes_penetration_is_the_overlap():
    # A box sunk 0.05 into a wide slab: the minimum translation is 0.05 straight up.
    slab, box = Box([5.0, 5.0, 0.5]), Box([0.3, 0.2, 0.1])
    q = [1.0, 0.0, 0.0, 0.0]
    result = signed_distance(slab, [0.0, 0.0, -0.5], q, box, [0.4, -0.3, 0.05], q)
    assert np.isclose(result.distance, -0.05, atol=1e-9)
    assert np.allclose(result.normal, [0.0, 0.0, 1.0], atol=1e-9)
    assert np.isclose(result.p_a[2], 0.0, atol=1e-9) and np.isclose(result.p_b[2], -0.05, atol=1e-9)


def test_signed_distance_is_continuous_through_contact():
    a, b = Capsule(0.3, 1.0), Box([0.4, 0.3, 0.2])
    q_a, q_b = random_quaternion(np.random.default_rng(3)), random_quaternion(np.random.default_rng(4))
    direction = np.array([0.2, 0.3, 1.0]) / np.linalg.norm([0.2, 0.3, 1.0])
    heights = np.linspace(0.2, 1.4, 241)
    values = np.array([signed_distance(a, [0, 0, 0], q_a, b, h * direction, q_b).distance for h in heights])
    assert values[0] < 0 < values[-1]
    # Lipschitz with constant 1 in the translation of b: no jump where the branch changes.
    assert np.max(np.abs(np.diff(values))) <= 1.0 * (heights[1] - heights[0]) + 1e-9


def test_branch_follows_dcol():
    rng = np.random.default_rng(5)
    for ka, kb in PAIRS[::3]:
        for regime in ("penetrating", "near", "separated"):
            config = random_configuration(ka, kb, rng, regime)
            result = signed_distance(*config)
            # Both solves end within a gap of ~1e-8 α of the optimum (proximity's default tolerance).
            assert result.alpha == pytest.approx(proximity(*config).alpha, rel=3e-8)
            assert (result.distance > 0) == (result.alpha > 1) or abs(result.distance) < 1e-8


def test_support_point_is_farthest_on_the_tessellated_surface():
    from dcol.geom.tessellate import surface_mesh

    rng = np.random.default_rng(9)
    for kind in KINDS:
        config = random_configuration(kind, kind, rng, "separated", offsets=True)
        shape, r, q = config[:3]
        vertices = surface_mesh(shape, r, q, resolution=64)[0]
        for _ in range(5):
            u = rng.normal(size=3)
            point = support_point(shape, r, q, u)
            # The tessellation is inscribed: no surface point beats the support point, and a fine
            # one comes within its faceting error.
            assert u @ point >= np.max(vertices @ u) - 1e-9
            assert u @ point <= np.max(vertices @ u) + 2e-2 * np.linalg.norm(u) * np.ptp(vertices, axis=0).max()


def test_batch_matches_single_calls_and_threads():
    rng = np.random.default_rng(12)
    a, b = Capsule(0.2, 0.8), Box([0.3, 0.4, 0.5])
    n = 40
    r_a, r_b = rng.normal(size=(n, 3)), rng.normal(size=(n, 3)) * 2
    q_a = np.array([random_quaternion(rng) for _ in range(n)])
    q_b = np.array([random_quaternion(rng) for _ in range(n)])
    batch = signed_distance_batch(a, r_a, q_a, b, r_b, q_b, threads=2)
    jac = distance_jacobian_batch(a, r_a, q_a, b, r_b, q_b, parameterization="quaternion", threads=2)
    assert jac.d_p_a.shape == (n, 3, 14) and jac.d_distance.shape == (n, 14)
    for i in range(0, n, 7):
        single = signed_distance(a, r_a[i], q_a[i], b, r_b[i], q_b[i])
        assert np.isclose(batch.distance[i], single.distance, rtol=1e-12)
        assert np.allclose(batch.p_a[i], single.p_a, rtol=1e-12)
        assert np.isclose(jac.distance[i], single.distance, rtol=1e-6, atol=1e-9)


def test_quaternion_columns_chain_the_rigid_ones():
    rng = np.random.default_rng(13)
    config = random_configuration("ellipsoid", "cone", rng, "separated")
    rigid = distance_jacobian(*config, parameterization="rigid")
    quaternion = distance_jacobian(*config, parameterization="quaternion")
    step = 1e-6
    a, r_a, q_a, b, r_b, q_b = config
    for k in range(4):  # raw quaternion components of a, by central differences of the values
        dq = step * np.eye(4)[k]
        plus = signed_distance(a, r_a, q_a + dq, b, r_b, q_b, settings=DISTANCE_SETTINGS).distance
        minus = signed_distance(a, r_a, q_a - dq, b, r_b, q_b, settings=DISTANCE_SETTINGS).distance
        assert np.isclose(quaternion.d_distance[3 + k], (plus - minus) / (2 * step), rtol=1e-5, atol=1e-8)
    assert np.allclose(quaternion.d_distance[:3], rigid.d_distance[:3])


@pytest.mark.parametrize(
    "args, error, match",
    [
        ((Sphere(1.0), [0, 0, np.nan], [1, 0, 0, 0], Sphere(1.0), [3, 0, 0], [1, 0, 0, 0]), ValueError, "pose 0"),
        ((Sphere(1.0), [0, 0, 0], [0, 0, 0, 0], Sphere(1.0), [3, 0, 0], [1, 0, 0, 0]), ValueError, "q_a"),
        ((Sphere(1.0), [0, 0], [1, 0, 0, 0], Sphere(1.0), [3, 0, 0], [1, 0, 0, 0]), ValueError, "r_a"),
        (("sphere", [0, 0, 0], [1, 0, 0, 0], Sphere(1.0), [3, 0, 0], [1, 0, 0, 0]), TypeError, "dcol.geom shape"),
    ],
)
def test_bad_input_is_named(args, error, match):
    with pytest.raises(error, match=match):
        signed_distance(*args)


def test_support_point_rejects_zero_direction():
    with pytest.raises(ValueError, match="direction must be nonzero"):
        support_point(Sphere(1.0), [0, 0, 0], [1, 0, 0, 0], [0, 0, 0])
