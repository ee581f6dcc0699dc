"""Properties DCOL must have whatever the solver: symmetry, invariance, closed forms, edge cases."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dcol.geom import Box, Capsule, Cone, Cylinder, Ellipsoid, Polygon, Sphere, proximity, proximity_batch
from dcol.solvers import SolverSettings, Status

from conftest import KINDS, random_quaternion, random_shape
from reference import reference_proximity, rotation

IDENTITY = [1.0, 0.0, 0.0, 0.0]


def quaternion_product(p, q):
    w1, v1, w2, v2 = p[0], np.asarray(p[1:]), q[0], np.asarray(q[1:])
    return np.r_[w1 * w2 - v1 @ v2, w1 * v2 + w2 * v1 + np.cross(v1, v2)]


def random_pair(rng, kind_a, kind_b, spread=2.0):
    return (
        random_shape(kind_a, rng),
        rng.normal(size=3),
        random_quaternion(rng),
        random_shape(kind_b, rng),
        spread * rng.normal(size=3),
        random_quaternion(rng),
    )


@pytest.mark.parametrize("kind_a,kind_b", list(itertools.combinations_with_replacement(KINDS, 2)))
def test_swap_symmetry(kind_a, kind_b, rng):
    for _ in range(5):
        a, r_a, q_a, b, r_b, q_b = random_pair(rng, kind_a, kind_b)
        ab, ba = proximity(a, r_a, q_a, b, r_b, q_b), proximity(b, r_b, q_b, a, r_a, q_a)
        assert ab.alpha == pytest.approx(ba.alpha, rel=1e-8)
        np.testing.assert_allclose(ab.x, ba.x, atol=1e-6 * (1 + np.abs(ab.x).max()))
        np.testing.assert_allclose(ab.p_a, ba.p_b, atol=1e-6 * (1 + np.abs(ab.p_a).max()))
        np.testing.assert_allclose(ab.normal, -ba.normal, atol=1e-5)


@settings(max_examples=60, deadline=None)
@given(
    kinds=st.tuples(st.sampled_from(KINDS), st.sampled_from(KINDS)),
    seed=st.integers(0, 2**32 - 1),
    translation=st.lists(st.floats(-50, 50), min_size=3, max_size=3),
    rotation_q=st.lists(st.floats(-1, 1), min_size=4, max_size=4).filter(lambda q: np.linalg.norm(q) > 0.1),
)
def test_invariance_under_one_rigid_motion(kinds, seed, translation, rotation_q):
    """Moving both shapes by the same rigid motion moves x, contact points and normal with them."""
    rng = np.random.default_rng(seed)
    a, r_a, q_a, b, r_b, q_b = random_pair(rng, *kinds)
    t, R = np.asarray(translation), rotation(rotation_q)
    before = proximity(a, r_a, q_a, b, r_b, q_b)
    after = proximity(
        a, t + R @ r_a, quaternion_product(rotation_q, q_a), b, t + R @ r_b, quaternion_product(rotation_q, q_b)
    )
    assert after.alpha == pytest.approx(before.alpha, rel=1e-7, abs=1e-9)
    size = 1 + np.abs(t).max() + np.abs(before.x).max()
    np.testing.assert_allclose(after.x, t + R @ before.x, atol=1e-6 * size)
    np.testing.assert_allclose(after.p_a, t + R @ before.p_a, atol=1e-6 * size)
    np.testing.assert_allclose(after.normal, R @ before.normal, atol=1e-5)


def test_sphere_sphere_closed_form(rng):
    for _ in range(20):
        R_a, R_b = rng.uniform(0.1, 2.0, size=2)
        r_a, r_b = rng.normal(size=3), 3 * rng.normal(size=3)
        res = proximity(Sphere(R_a), r_a, random_quaternion(rng), Sphere(R_b), r_b, random_quaternion(rng))
        gap = np.linalg.norm(r_b - r_a)
        assert res.alpha == pytest.approx(gap / (R_a + R_b), rel=1e-8)
        np.testing.assert_allclose(res.normal, (r_b - r_a) / gap, atol=1e-7)
        np.testing.assert_allclose(res.p_a, r_a + R_a * (r_b - r_a) / gap, atol=1e-7)
        np.testing.assert_allclose(res.p_b, r_b - R_b * (r_b - r_a) / gap, atol=1e-7)
        assert res.distance == pytest.approx(abs(gap - R_a - R_b), abs=1e-7)


def test_axis_aligned_boxes_closed_form(rng):
    """Boxes scaled about their centres first touch on the axis with the largest |d_i|/(h_a,i + h_b,i)."""
    for _ in range(20):
        h_a, h_b = rng.uniform(0.1, 2.0, size=3), rng.uniform(0.1, 2.0, size=3)
        d = 3 * rng.normal(size=3)
        res = proximity(Box(h_a), np.zeros(3), IDENTITY, Box(h_b), d, IDENTITY)
        assert res.alpha == pytest.approx(np.max(np.abs(d) / (h_a + h_b)), rel=1e-8)
        axis = np.argmax(np.abs(d) / (h_a + h_b))
        np.testing.assert_allclose(res.normal, np.sign(d[axis]) * np.eye(3)[axis], atol=1e-6)


@pytest.mark.parametrize("kind_a,kind_b", list(itertools.product(KINDS, KINDS)))
def test_coincident_origins_give_zero_and_finite_outputs(kind_a, kind_b, rng):
    a, b = random_shape(kind_a, rng), random_shape(kind_b, rng)
    r = rng.normal(size=3)
    res = proximity(a, r, random_quaternion(rng), b, r, random_quaternion(rng))
    assert res.status == Status.SOLVED
    assert abs(res.alpha) <= 1e-8
    for value in (res.x, res.p_a, res.p_b, res.normal, res.distance):
        assert np.all(np.isfinite(value))


def test_exact_touching_gives_one(rng):
    # Faces, curved sides and tips placed exactly in contact.
    cases = [
        (Box([1, 1, 1]), Box([0.5, 2, 2]), [1.5, 0, 0]),
        (Sphere(1.0), Capsule(0.5, 2.0), [0, 1.5, 0]),
        (Capsule(0.5, 2.0), Cylinder(0.3, 1.0), [1.5 + 0.5, 0, 0]),
        (Cone(2.0, 0.4), Sphere(0.5), [-1.5 - 0.5, 0, 0]),
        (Ellipsoid(np.diag([1.0, 1 / 4, 1 / 9])), Sphere(1.0), [0, 0, 4.0]),
        (Polygon(np.array([[1.0, 0], [0, 1], [-1, 0], [0, -1]]), np.ones(4), 0.25), Sphere(1.0), [0, 0, 1.25]),
    ]
    for a, b, r_b in cases:
        res = proximity(a, np.zeros(3), IDENTITY, b, r_b, IDENTITY)
        assert res.alpha == pytest.approx(1.0, abs=1e-8)
        assert res.distance == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("kind_a,kind_b", list(itertools.product(KINDS, KINDS)))
def test_far_apart(kind_a, kind_b, rng):
    a, b = random_shape(kind_a, rng), random_shape(kind_b, rng)
    direction = rng.normal(size=3)
    r_b = 2e3 * direction / np.linalg.norm(direction)
    q_a, q_b = random_quaternion(rng), random_quaternion(rng)
    res = proximity(a, np.zeros(3), q_a, b, r_b, q_b)
    assert res.status == Status.SOLVED
    assert 100 < res.alpha < 1e5
    alpha_ref, _ = reference_proximity(a, np.zeros(3), q_a, b, r_b, q_b)
    assert res.alpha == pytest.approx(alpha_ref, rel=1e-6)


@pytest.mark.parametrize("scale", [1e-4, 1e-2, 1e2, 1e4])
def test_alpha_is_invariant_to_units(scale, rng):
    """Scaling every length (shapes and positions) by one factor leaves α unchanged."""

    def build(s):
        return [
            Box(np.array([0.3, 1.0, 0.5]) * s),
            Capsule(0.5 * s, 2 * s),
            Cylinder(0.5 * s, 2 * s),
            Cone(2 * s, 0.5),
            Sphere(s),
            Ellipsoid(np.diag([1.0, 4.0, 9.0]) / s**2),
            Polygon(np.array([[1.0, 0], [0, 1], [-1, 0], [0, -1], [1, 1]]), np.ones(5) * s, 0.2 * s),
        ]

    poses = [(rng.normal(size=3), random_quaternion(rng), 2 * rng.normal(size=3), random_quaternion(rng)) for _ in range(49)]
    unit, scaled = build(1.0), build(scale)
    for (i, j), (r_a, q_a, r_b, q_b) in zip(itertools.product(range(7), range(7)), poses):
        ref = proximity(unit[i], r_a, q_a, unit[j], r_b, q_b)
        res = proximity(scaled[i], scale * r_a, q_a, scaled[j], scale * r_b, q_b)
        assert res.status == Status.SOLVED
        assert res.alpha == pytest.approx(ref.alpha, rel=1e-7)
        np.testing.assert_allclose(res.x, scale * ref.x, atol=1e-6 * scale * (1 + np.abs(ref.x).max()))


@pytest.mark.parametrize(
    "thin",
    [Capsule(1e-3, 1.0), Cylinder(1e-3, 1.0), Cylinder(1.0, 1e-3), Cone(1.0, 1e-3),
     Polygon(np.array([[1.0, 0], [0, 1], [-1, 0], [0, -1]]), np.ones(4), 1e-3)],
    ids=["capsule", "cylinder", "disc", "cone", "polygon"],
)
def test_thin_shapes(thin, rng):
    for kind in KINDS:
        other = random_shape(kind, rng)
        q_a, q_b, r_b = random_quaternion(rng), random_quaternion(rng), 1.5 * rng.normal(size=3)
        res = proximity(thin, np.zeros(3), q_a, other, r_b, q_b)
        assert res.status == Status.SOLVED
        alpha_ref, _ = reference_proximity(thin, np.zeros(3), q_a, other, r_b, q_b)
        assert res.alpha == pytest.approx(alpha_ref, rel=1e-6)


def test_orientation_forms_agree(rng):
    a, b = random_shape("cone", rng), random_shape("polygon", rng)
    q_a, q_b = random_quaternion(rng), random_quaternion(rng)
    r_b = rng.normal(size=3)
    by_quaternion = proximity(a, np.zeros(3), q_a, b, r_b, q_b)
    by_unit_quaternion = proximity(a, np.zeros(3), q_a / np.linalg.norm(q_a), b, r_b, -7.0 * q_b)
    by_matrix = proximity(a, np.zeros(3), rotation(q_a), b, r_b, rotation(q_b))
    assert by_unit_quaternion.alpha == pytest.approx(by_quaternion.alpha, rel=1e-12)
    assert by_matrix.alpha == pytest.approx(by_quaternion.alpha, rel=1e-12)


def test_offset_pose_equals_moving_the_body(rng):
    r_off, q_off = rng.normal(size=3), random_quaternion(rng)
    with_offset = Capsule(0.3, 1.2, offset=(r_off, q_off))
    plain = Capsule(0.3, 1.2)
    other = random_shape("polytope", rng)
    r_body, q_body = rng.normal(size=3), random_quaternion(rng)
    r_other, q_other = rng.normal(size=3), random_quaternion(rng)
    moved = proximity(with_offset, r_body, q_body, other, r_other, q_other)
    direct = proximity(
        plain, r_body + rotation(q_body) @ r_off, quaternion_product(q_body, q_off), other, r_other, q_other
    )
    assert moved.alpha == pytest.approx(direct.alpha, rel=1e-9)
    np.testing.assert_allclose(moved.p_a, direct.p_a, atol=1e-9)


def test_normal_is_unit_and_points_from_a_to_b(rng):
    for kind_a, kind_b in itertools.product(KINDS, KINDS):
        a, r_a, q_a, b, r_b, q_b = random_pair(rng, kind_a, kind_b, spread=4.0)
        res = proximity(a, r_a, q_a, b, r_b, q_b)
        assert np.linalg.norm(res.normal) == pytest.approx(1.0, abs=1e-9)
        # The plane through x separates the scaled shapes, so it separates their origins too.
        assert res.normal @ (r_b - res.x) >= -1e-9 and res.normal @ (r_a - res.x) <= 1e-9


@pytest.mark.parametrize("max_iter", [0, 1, 2])
def test_non_convergence_is_reported_not_nan(max_iter, rng):
    limited = SolverSettings(max_iter=max_iter)
    for kind_a, kind_b in itertools.product(KINDS, KINDS):
        a, r_a, q_a, b, r_b, q_b = random_pair(rng, kind_a, kind_b)
        res = proximity(a, r_a, q_a, b, r_b, q_b, settings=limited)
        assert res.status in (Status.MAX_ITERATIONS, Status.SOLVED_INACCURATE)
        assert res.iterations == max_iter
        for value in (res.alpha, res.x, res.p_a, res.p_b, res.normal, res.distance):
            assert np.all(np.isfinite(value))
    batch = proximity_batch(a, np.zeros((3, 3)) + r_a, np.tile(q_a, (3, 1)), b, np.tile(r_b, (3, 1)), np.tile(q_b, (3, 1)), settings=limited)
    assert np.all(batch.status != Status.SOLVED) and np.all(np.isfinite(batch.alpha))
