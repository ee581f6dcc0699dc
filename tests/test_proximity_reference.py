"""DCOL proximity against the independent cvxpy + Clarabel formulation (tests/reference.py)."""

import itertools

import numpy as np
import pytest

from dcol.geom import proximity, proximity_batch
from dcol.solvers import Status

from conftest import KINDS, random_quaternion, random_shape
from reference import containing_scale, reference_proximity, rotation

CONFIGS_PER_PAIR = 21  # 49 ordered pairs × 21 = 1029 configurations


def configurations(kind_a, kind_b, seed):
    """Random shapes and poses for one ordered pair: a third deeply penetrating, the rest apart or
    grazing (centre distances 0.5–4)."""
    rng = np.random.default_rng(seed)
    for i in range(CONFIGS_PER_PAIR):
        a, b = random_shape(kind_a, rng), random_shape(kind_b, rng)
        direction = rng.normal(size=3)
        distance = rng.uniform(0.0, 0.5) if i % 3 == 0 else rng.uniform(0.5, 4.0)
        r_a = rng.normal(size=3)
        yield a, r_a, random_quaternion(rng), b, r_a + distance * direction / np.linalg.norm(direction), random_quaternion(rng)


@pytest.mark.parametrize("kind_a,kind_b", list(itertools.product(KINDS, KINDS)))
def test_alpha_and_x_match_reference(kind_a, kind_b):
    seed = 1000 * KINDS.index(kind_a) + KINDS.index(kind_b)
    for a, r_a, q_a, b, r_b, q_b in configurations(kind_a, kind_b, seed):
        res = proximity(a, r_a, q_a, b, r_b, q_b)
        assert res.status == Status.SOLVED
        alpha_ref, _ = reference_proximity(a, r_a, q_a, b, r_b, q_b)
        assert abs(res.alpha - alpha_ref) <= 1e-6 * max(alpha_ref, 1e-3)
        # x lies in both scaled shapes: the scaling that contains it is at most α.
        scale = 1e-6 * max(res.alpha, 1e-3)
        assert containing_scale(a, r_a, q_a, res.x) <= res.alpha + scale
        assert containing_scale(b, r_b, q_b, res.x) <= res.alpha + scale
        # p_a (29) is on the boundary of the unscaled a.
        assert containing_scale(a, r_a, q_a, res.p_a) == pytest.approx(1.0, abs=1e-6)
        assert containing_scale(b, r_b, q_b, res.p_b) == pytest.approx(1.0, abs=1e-6)


def test_batch_equals_single_calls_for_mixed_pairs():
    cases = [case for i, (ka, kb) in enumerate(itertools.product(KINDS, KINDS)) for case in [*configurations(ka, kb, i)][:3]]
    a, r_a, q_a, b, r_b, q_b = (list(column) for column in zip(*cases))
    singles = [proximity(*case) for case in cases]
    for threads in (1, 2):
        batch = proximity_batch(a, np.array(r_a), np.array(q_a), b, np.array(r_b), np.array(q_b), threads=threads)
        np.testing.assert_array_equal(batch.alpha, [s.alpha for s in singles])
        np.testing.assert_array_equal(batch.x, [s.x for s in singles])
        np.testing.assert_array_equal(batch.p_a, [s.p_a for s in singles])
        np.testing.assert_array_equal(batch.p_b, [s.p_b for s in singles])
        np.testing.assert_array_equal(batch.normal, [s.normal for s in singles])
        np.testing.assert_array_equal(batch.distance, [s.distance for s in singles])
        np.testing.assert_array_equal(batch.status, [int(s.status) for s in singles])
        np.testing.assert_array_equal(batch.iterations, [s.iterations for s in singles])


def test_batch_single_pair_with_rotation_matrices():
    rng = np.random.default_rng(8)
    a, b = random_shape("cone", rng), random_shape("polytope", rng)
    n = 50
    r_a, r_b = rng.normal(size=(n, 3)), rng.normal(size=(n, 3)) * 2
    q_a = np.array([random_quaternion(rng) for _ in range(n)])
    q_b = np.array([random_quaternion(rng) for _ in range(n)])
    R_a = np.array([rotation(q) for q in q_a])
    batch_q = proximity_batch(a, r_a, q_a, b, r_b, q_b)
    batch_R = proximity_batch(a, r_a, R_a, b, r_b, q_b, threads=2)
    np.testing.assert_allclose(batch_R.alpha, batch_q.alpha, rtol=1e-9)
    for i in range(0, n, 10):
        alpha_ref, _ = reference_proximity(a, r_a[i], q_a[i], b, r_b[i], q_b[i])
        assert batch_q.alpha[i] == pytest.approx(alpha_ref, rel=1e-6)
