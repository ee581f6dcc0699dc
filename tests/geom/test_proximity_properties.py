"""Properties DCOL must have: swap symmetry, rigid-motion and unit invariance, closed forms, edge cases."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dcol.geom import Box, Capsule, Cone, Cylinder, Ellipsoid, Polygon, Sphere, proximity, proximity_batch
from dcol.solvers import SolverSettings, Status
from tests.support.oracle import bounding_radii, gauge, proximity_oracle, rotation_matrix, shape_frame
from tests.support.shapes import (
    KINDS,
    REGIMES,
    body_position,
    random_configuration,
    random_quaternion,
    random_shape,
    scaled_copy,
)

PAIRS = list(itertools.product(KINDS, KINDS))
SQUARE = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, -1.0]])
OUTPUTS = ["alpha", "x", "p_a", "p_b", "distance", "normal"]


def problem_size(a, r_a, q_a, b, r_b, q_b):
    """Length scale of a configuration: shape sizes plus how far it sits from the world origin."""
    (origin_a, _), (origin_b, _) = shape_frame(a, r_a, q_a), shape_frame(b, r_b, q_b)
    return bounding_radii(a)[1] + bounding_radii(b)[1] + max(np.abs(origin_a).max(), np.abs(origin_b).max())


def assert_all_finite(res):
    for field in OUTPUTS:
        assert np.all(np.isfinite(getattr(res, field))), field


@pytest.mark.parametrize("kind_a,kind_b", list(itertools.combinations_with_replacement(KINDS, 2)))
def test_swap_symmetry(kind_a, kind_b, rng):
    for regime in REGIMES:
        a, r_a, q_a, b, r_b, q_b = random_configuration(kind_a, kind_b, rng, regime, offsets=True)
        ab, ba = proximity(a, r_a, q_a, b, r_b, q_b), proximity(b, r_b, q_b, a, r_a, q_a)
        size = problem_size(a, r_a, q_a, b, r_b, q_b)
        assert ab.status == ba.status == Status.SOLVED
        assert ab.alpha == pytest.approx(ba.alpha, rel=1e-8)
        np.testing.assert_allclose(ab.x, ba.x, atol=1e-6 * size)
        np.testing.assert_allclose(ab.p_a, ba.p_b, atol=1e-6 * size)
        np.testing.assert_allclose(ab.p_b, ba.p_a, atol=1e-6 * size)
        assert ab.distance == pytest.approx(ba.distance, abs=1e-6 * size)
        # Unit normals from a to b: swapping the shapes flips them.
        (origin_a, _), (origin_b, _) = shape_frame(a, r_a, q_a), shape_frame(b, r_b, q_b)
        assert np.linalg.norm(ab.normal) == pytest.approx(1.0, abs=1e-12)
        assert ab.normal @ (origin_b - origin_a) > 0
        np.testing.assert_allclose(ab.normal, -ba.normal, atol=1e-6)


@settings(max_examples=60, deadline=None)
@given(
    kind_a=st.sampled_from(KINDS),
    kind_b=st.sampled_from(KINDS),
    regime=st.sampled_from(REGIMES),
    seed=st.integers(0, 2**32 - 1),
    translation=st.lists(st.floats(-100, 100), min_size=3, max_size=3),
    motion_q=st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(lambda q: np.linalg.norm(q) > 0.1),
)
def test_invariance_under_one_rigid_motion(kind_a, kind_b, regime, seed, translation, motion_q):
    """Moving both shapes by one rigid motion (t, M) keeps α and moves x, p_a, p_b and the normal with them."""
    a, r_a, q_a, b, r_b, q_b = random_configuration(kind_a, kind_b, np.random.default_rng(seed), regime, offsets=True)
    t, M = np.asarray(translation), rotation_matrix(motion_q)
    before = proximity(a, r_a, q_a, b, r_b, q_b)
    after = proximity(a, t + M @ r_a, M @ rotation_matrix(q_a), b, t + M @ r_b, M @ rotation_matrix(q_b))
    assert before.status == after.status == Status.SOLVED
    assert after.alpha == pytest.approx(before.alpha, rel=1e-8)
    size = problem_size(a, r_a, q_a, b, r_b, q_b) + np.abs(t).max()
    for point in ("x", "p_a", "p_b"):
        np.testing.assert_allclose(getattr(after, point), t + M @ getattr(before, point), atol=1e-6 * size)
    np.testing.assert_allclose(after.normal, M @ before.normal, atol=1e-6)
    assert after.distance == pytest.approx(before.distance, abs=1e-6 * size)


def test_sphere_sphere_closed_form(rng):
    for _ in range(30):
        R_a, R_b = rng.uniform(0.05, 2.0, size=2)
        a, b = Sphere(R_a, offset=(rng.normal(size=3), random_quaternion(rng))), Sphere(R_b)
        r_a, q_a, r_b, q_b = rng.normal(size=3), random_quaternion(rng), 3 * rng.normal(size=3), random_quaternion(rng)
        res = proximity(a, r_a, q_a, b, r_b, q_b)
        center_a = shape_frame(a, r_a, q_a)[0]
        gap = np.linalg.norm(r_b - center_a)
        n = (r_b - center_a) / gap
        assert res.status == Status.SOLVED
        assert res.alpha == pytest.approx(gap / (R_a + R_b), rel=1e-8)
        np.testing.assert_allclose(res.normal, n, atol=1e-8)
        np.testing.assert_allclose(res.x, center_a + res.alpha * R_a * n, atol=1e-8 * (1 + gap))
        np.testing.assert_allclose(res.p_a, center_a + R_a * n, atol=1e-8 * (1 + gap))
        np.testing.assert_allclose(res.p_b, r_b - R_b * n, atol=1e-8 * (1 + gap))
        assert res.distance == pytest.approx(abs(gap - R_a - R_b), abs=1e-8 * (1 + gap))


def test_axis_aligned_boxes_closed_form(rng):
    """Boxes with parallel axes first touch where |d_i| / (h_a,i + h_b,i) is largest (d in their common frame)."""
    for _ in range(30):
        h_a, h_b, d = rng.uniform(0.1, 2.0, size=3), rng.uniform(0.1, 2.0, size=3), 3 * rng.normal(size=3)
        Q, r_a = rotation_matrix(random_quaternion(rng)), rng.normal(size=3)
        r_b = r_a + Q @ d
        res = proximity(Box(h_a), r_a, Q, Box(h_b), r_b, Q)
        ratios = np.abs(d) / (h_a + h_b)
        axis = np.argmax(ratios)
        assert res.status == Status.SOLVED
        assert res.alpha == pytest.approx(ratios[axis], rel=1e-8)
        np.testing.assert_allclose(res.normal, np.sign(d[axis]) * Q[:, axis], atol=1e-6)
        # The contact is a face patch, so x is not unique: it must lie in both scaled boxes.
        assert np.max(np.abs(Q.T @ (res.x - r_a)) / h_a) <= res.alpha * (1 + 1e-7)
        assert np.max(np.abs(Q.T @ (res.x - r_b)) / h_b) <= res.alpha * (1 + 1e-7)


@pytest.mark.parametrize("kind_a,kind_b", PAIRS)
def test_coincident_origins(kind_a, kind_b, rng):
    a, b = random_shape(kind_a, rng, offset=True), random_shape(kind_b, rng, offset=True)
    origin, q_a, q_b = rng.normal(size=3), random_quaternion(rng), random_quaternion(rng)
    res = proximity(a, body_position(a, origin, q_a), q_a, b, body_position(b, origin, q_b), q_b)
    assert res.status == Status.SOLVED
    assert res.alpha == pytest.approx(0.0, abs=1e-8)
    np.testing.assert_allclose(res.x, origin, atol=1e-8 * (1 + np.abs(origin).max()))
    assert_all_finite(res)


TOUCHING = [
    pytest.param(Box([1, 1, 1]), Box([0.5, 2, 2]), [1.5, 0, 0], id="box face-box face"),
    pytest.param(Sphere(1.0), Capsule(0.5, 2.0), [0, 1.5, 0], id="sphere-capsule side"),
    pytest.param(Capsule(0.5, 2.0), Cylinder(0.3, 1.0), [2.0, 0, 0], id="capsule tip-cylinder face"),
    pytest.param(Cylinder(0.5, 2.0), Box([1, 1, 1]), [0, 1.5, 0], id="cylinder side-box face"),
    pytest.param(Cone(2.0, 0.4), Sphere(0.5), [-2.0, 0, 0], id="cone apex-sphere"),
    pytest.param(Cone(2.0, 0.4), Box([0.25, 3, 3]), [0.75, 0, 0], id="cone base-box face"),
    pytest.param(Ellipsoid(np.diag([1.0, 1 / 4, 1 / 9])), Sphere(1.0), [0, 0, 4.0], id="ellipsoid-sphere"),
    pytest.param(Polygon(SQUARE, np.ones(4), 0.25), Sphere(1.0), [0, 0, 1.25], id="polygon face-sphere"),
    pytest.param(Polygon(SQUARE, np.ones(4), 0.25), Sphere(1.0), [2.25, 0, 0], id="polygon edge-sphere"),
]


@pytest.mark.parametrize("a,b,r_b", TOUCHING)
def test_exact_touching_gives_one(a, b, r_b, rng):
    """Shapes placed exactly in contact (then moved together by a random rigid motion) have α = 1."""
    t, M = rng.normal(size=3), rotation_matrix(random_quaternion(rng))
    res = proximity(a, t, M, b, t + M @ np.asarray(r_b, float), M)
    assert res.status == Status.SOLVED
    assert res.alpha == pytest.approx(1.0, abs=1e-8)
    assert res.distance == pytest.approx(0.0, abs=1e-7)
    np.testing.assert_allclose(res.p_a, res.p_b, atol=1e-7)


@pytest.mark.parametrize("kind_a,kind_b", PAIRS)
def test_far_apart(kind_a, kind_b, rng):
    a, b = random_shape(kind_a, rng), random_shape(kind_b, rng)
    direction = rng.normal(size=3)
    gap = 1e3 * (bounding_radii(a)[1] + bounding_radii(b)[1])
    r_a, q_a, q_b = rng.normal(size=3), random_quaternion(rng), random_quaternion(rng)
    r_b = r_a + gap * direction / np.linalg.norm(direction)
    res = proximity(a, r_a, q_a, b, r_b, q_b)
    assert res.status == Status.SOLVED
    assert res.alpha >= 1e3 * (1 - 1e-8)
    assert res.alpha == pytest.approx(proximity_oracle(a, r_a, q_a, b, r_b, q_b)[0], rel=1e-6)
    assert_all_finite(res)


def test_far_apart_spheres_closed_form():
    res = proximity(Sphere(0.3), np.zeros(3), [1, 0, 0, 0], Sphere(0.7), [0.0, 1e3, 0.0], [1, 0, 0, 0])
    assert res.alpha == pytest.approx(1e3, rel=1e-9)


@pytest.mark.parametrize("scale", [1e-4, 1e-2, 1e2, 1e4])
def test_alpha_is_invariant_to_units(scale, rng):
    """Multiplying every length by one factor leaves α unchanged and scales x."""
    for kind_a, kind_b in PAIRS:
        a, r_a, q_a, b, r_b, q_b = random_configuration(kind_a, kind_b, rng, REGIMES[rng.integers(3)], offsets=True)
        unit = proximity(a, r_a, q_a, b, r_b, q_b)
        res = proximity(scaled_copy(a, scale), scale * r_a, q_a, scaled_copy(b, scale), scale * r_b, q_b)
        assert res.status == Status.SOLVED
        assert res.alpha == pytest.approx(proximity_oracle(a, r_a, q_a, b, r_b, q_b)[0], rel=1e-6)
        assert res.alpha == pytest.approx(unit.alpha, rel=1e-7)
        size = problem_size(a, r_a, q_a, b, r_b, q_b)
        np.testing.assert_allclose(res.x, scale * unit.x, atol=1e-6 * scale * size)


THIN = [
    pytest.param(Capsule(1e-3, 1.0), id="needle capsule"),
    pytest.param(Cylinder(1e-3, 1.0), id="needle cylinder"),
    pytest.param(Cylinder(1.0, 1e-3), id="disc"),
    pytest.param(Cone(1.0, np.arctan(1e-3)), id="needle cone"),
    pytest.param(Polygon(SQUARE, np.ones(4), 1e-3), id="plate polygon"),
    pytest.param(Ellipsoid(np.diag([1.0, 1.0, 1e6])), id="flat ellipsoid"),
    pytest.param(Box([1.0, 1e-3, 1.0]), id="sheet box"),
]


@pytest.mark.parametrize("thin", THIN)
def test_thin_shapes(thin, rng):
    """Aspect ratios of 1e3 against every kind, with the shapes apart and crossing."""
    for kind in KINDS:
        other = random_shape(kind, rng)
        direction = rng.normal(size=3)
        r_b = rng.uniform(0.2, 2.5) * direction / np.linalg.norm(direction)
        q_a, q_b = random_quaternion(rng), random_quaternion(rng)
        res = proximity(thin, np.zeros(3), q_a, other, r_b, q_b)
        assert res.status == Status.SOLVED, kind
        assert res.alpha == pytest.approx(proximity_oracle(thin, np.zeros(3), q_a, other, r_b, q_b)[0], rel=1e-6), kind
        assert gauge(other, r_b, q_b, res.p_b) == pytest.approx(1.0, abs=1e-6), kind


@pytest.mark.parametrize("kind", KINDS)
def test_quaternion_norm_and_rotation_matrix_give_the_same_result(kind, rng):
    a, r_a, q_a, b, r_b, q_b = random_configuration(kind, KINDS[rng.integers(7)], rng, "near", offsets=True)
    unit = q_a / np.linalg.norm(q_a)
    reference = proximity(a, r_a, unit, b, r_b, q_b)
    for orientation in (3.7 * unit, -0.02 * unit, rotation_matrix(q_a)):
        res = proximity(a, r_a, orientation, b, r_b, q_b)
        assert res.alpha == pytest.approx(reference.alpha, rel=1e-10)
        np.testing.assert_allclose(res.x, reference.x, atol=1e-8 * problem_size(a, r_a, q_a, b, r_b, q_b))


@pytest.mark.parametrize("kind", KINDS)
def test_offset_pose_equals_moving_the_body(kind, rng):
    """A shape with offset (r_off, Q_off) at body pose (r, Q) is the plain shape at (r + Q r_off, Q Q_off)."""
    a_offset, r_a, q_a, b_offset, r_b, q_b = random_configuration(kind, kind, rng, "near", offsets=True)
    (origin_a, Q_a), (origin_b, Q_b) = shape_frame(a_offset, r_a, q_a), shape_frame(b_offset, r_b, q_b)
    a_plain, b_plain = scaled_copy(a_offset, with_offset=False), scaled_copy(b_offset, with_offset=False)
    moved = proximity(a_offset, r_a, q_a, b_offset, r_b, q_b)
    direct = proximity(a_plain, origin_a, Q_a, b_plain, origin_b, Q_b)
    assert moved.alpha == pytest.approx(direct.alpha, rel=1e-9)
    size = problem_size(a_offset, r_a, q_a, b_offset, r_b, q_b)
    for field in ("x", "p_a", "p_b", "normal"):
        np.testing.assert_allclose(getattr(moved, field), getattr(direct, field), atol=1e-8 * size)


@pytest.mark.parametrize("max_iter", [1, 2])
def test_non_convergence_is_a_status_never_nan(max_iter, rng):
    limited = SolverSettings(max_iter=max_iter)
    configs = [random_configuration(ka, kb, rng, REGIMES[i % 3], offsets=True) for i, (ka, kb) in enumerate(PAIRS)]
    stopped = (Status.MAX_ITERATIONS, Status.SOLVED_INACCURATE)
    statuses = []
    for config in configs:
        res = proximity(*config, settings=limited)
        assert res.status in stopped and not res.converged
        assert res.iterations == max_iter
        assert_all_finite(res)
        if res.status == Status.SOLVED_INACCURATE:  # within 1e4 times the tolerances already
            assert res.alpha == pytest.approx(proximity_oracle(*config)[0], rel=1e-4)
        statuses.append(res.status)
    # An easy pair may stop that close after two iterations, most may not.
    assert statuses.count(Status.MAX_ITERATIONS) > len(configs) // 2
    a, r_a, q_a, b, r_b, q_b = (list(column) for column in zip(*configs))
    r_a, q_a, r_b, q_b = (np.array(column) for column in (r_a, q_a, r_b, q_b))
    batch = proximity_batch(a, r_a, q_a, b, r_b, q_b, settings=limited, threads=2)
    assert np.all(np.isin(batch.status, [int(status) for status in stopped]))
    for field in OUTPUTS:
        assert np.all(np.isfinite(getattr(batch, field))), field
