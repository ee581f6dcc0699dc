"""DCOL proximity against the independent cvxpy + Clarabel oracle (tests/support/oracle.py), all 49 ordered pairs."""

import itertools

import numpy as np
import pytest

from dcol.geom import proximity, proximity_batch
from dcol.solvers import SolverSettings, Status
from tests.support.oracle import bounding_radii, gauge, proximity_oracle, rotation_matrix, shape_frame, support
from tests.support.shapes import KINDS, REGIMES, random_configuration

PAIRS = list(itertools.product(KINDS, KINDS))
CONFIGS_PER_PAIR = 21  # 49 × 21 = 1029 configurations, a third in each regime, half with offset poses
RESULT_FIELDS = ["alpha", "x", "p_a", "p_b", "distance", "normal"]


def pair_configurations(kind_a, kind_b, count):
    """Seeded configurations of one ordered pair, cycling through the regimes."""
    rng = np.random.default_rng(PAIRS.index((kind_a, kind_b)))
    return [
        (REGIMES[i % 3], random_configuration(kind_a, kind_b, rng, REGIMES[i % 3], offsets=i % 2 == 1))
        for i in range(count)
    ]


@pytest.mark.parametrize("kind_a,kind_b", PAIRS)
def test_matches_oracle(kind_a, kind_b):
    for regime, (a, r_a, q_a, b, r_b, q_b) in pair_configurations(kind_a, kind_b, CONFIGS_PER_PAIR):
        res = proximity(a, r_a, q_a, b, r_b, q_b)
        case = f"{regime} {a!r} at ({r_a}, {q_a}), {b!r} at ({r_b}, {q_b})"
        assert res.status == Status.SOLVED and res.converged, case

        alpha_ref, _ = proximity_oracle(a, r_a, q_a, b, r_b, q_b)
        assert abs(res.alpha - alpha_ref) <= 1e-6 * alpha_ref, case

        # Balls about the origins inside / around each shape bound α (and set the regime).
        (origin_a, _), (origin_b, _) = shape_frame(a, r_a, q_a), shape_frame(b, r_b, q_b)
        (inner_a, outer_a), (inner_b, outer_b) = bounding_radii(a), bounding_radii(b)
        gap = np.linalg.norm(origin_b - origin_a)
        assert gap / (outer_a + outer_b) * (1 - 1e-7) <= res.alpha <= gap / (inner_a + inner_b) * (1 + 1e-7), case
        assert {"penetrating": res.alpha < 1, "near": True, "separated": res.alpha > 1}[regime], case

        # x lies in both scaled shapes; the contact points (DCOL eq. 29) lie on the unscaled boundaries.
        assert gauge(a, r_a, q_a, res.x) <= res.alpha * (1 + 1e-6), case
        assert gauge(b, r_b, q_b, res.x) <= res.alpha * (1 + 1e-6), case
        assert gauge(a, r_a, q_a, res.p_a) == pytest.approx(1.0, abs=1e-6), case
        assert gauge(b, r_b, q_b, res.p_b) == pytest.approx(1.0, abs=1e-6), case
        np.testing.assert_allclose(res.p_a, origin_a + (res.x - origin_a) / res.alpha, atol=1e-9 * (1 + gap))

        # Distance (DCOL eq. 30): ‖p_a − p_b‖ = ‖r_a − r_b‖ |1 − 1/α|.
        assert res.distance == pytest.approx(np.linalg.norm(res.p_a - res.p_b), abs=1e-9 * (1 + gap)), case
        assert res.distance == pytest.approx(gap * abs(1 - 1 / alpha_ref), abs=1e-6 * gap / alpha_ref), case

        # The normal is a unit vector from a to b and the plane through x with it supports both scaled shapes.
        n = res.normal
        assert np.linalg.norm(n) == pytest.approx(1.0, abs=1e-12), case
        assert n @ (origin_b - origin_a) > 0, case
        plane_tol = 1e-6 * res.alpha * (outer_a + outer_b)
        assert support(a, r_a, q_a, n, res.alpha) == pytest.approx(n @ res.x, abs=plane_tol), case
        assert support(b, r_b, q_b, -n, res.alpha) == pytest.approx(-n @ res.x, abs=plane_tol), case


def assert_batch_equals_singles(batch, singles):
    """Bit for bit: shape lists go through the one-pair kernel, as single calls do."""
    for field in RESULT_FIELDS:
        np.testing.assert_array_equal(getattr(batch, field), [getattr(s, field) for s in singles], err_msg=field)
    np.testing.assert_array_equal(batch.status, [int(s.status) for s in singles])
    np.testing.assert_array_equal(batch.iterations, [s.iterations for s in singles])


def assert_batch_matches_singles(batch, singles):
    """The same solutions. SIMD lanes may contract multiply-adds into FMAs differently from one call,
    so the iterates differ by rounding; where the solution is not unique (x on a face–face contact)
    that moves it within the solver's tolerance."""
    for field in RESULT_FIELDS:
        np.testing.assert_allclose(
            getattr(batch, field), [getattr(s, field) for s in singles], rtol=1e-8, atol=1e-8, err_msg=field
        )
    np.testing.assert_array_equal(batch.status, [int(s.status) for s in singles])
    assert np.all(np.abs(batch.iterations - [s.iterations for s in singles]) <= 1)


@pytest.mark.parametrize("threads", [1, 2])
def test_batch_of_mixed_pairs_equals_single_calls(threads):
    cases = [config for ka, kb in PAIRS for _, config in pair_configurations(ka, kb, 3)]
    a, r_a, q_a, b, r_b, q_b = (list(column) for column in zip(*cases))
    batch = proximity_batch(a, np.array(r_a), np.array(q_a), b, np.array(r_b), np.array(q_b), threads=threads)
    assert_batch_equals_singles(batch, [proximity(*case) for case in cases])
    assert np.all(batch.status == Status.SOLVED)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("kind_a,kind_b", [("cone", "polytope"), ("polygon", "ellipsoid"), ("capsule", "cylinder")])
def test_batch_of_one_pair_matches_single_calls(kind_a, kind_b, threads):
    configs = [config for _, config in pair_configurations(kind_a, kind_b, 30)]
    a, b = configs[0][0], configs[0][3]
    # One shape pair for all poses: reuse each configuration's poses with the first pair's shapes.
    r_a, q_a, r_b, q_b = (np.array([config[i] for config in configs]) for i in (1, 2, 4, 5))
    Q_a = np.array([rotation_matrix(q) for q in q_a])
    for orientation_a in (q_a, Q_a):
        batch = proximity_batch(a, r_a, orientation_a, b, r_b, q_b, threads=threads)
        singles = [proximity(a, r_a[i], orientation_a[i], b, r_b[i], q_b[i]) for i in range(len(r_a))]
        assert_batch_matches_singles(batch, singles)
    # Quaternion and rotation-matrix inputs describe the same poses.
    by_matrix = proximity_batch(a, r_a, Q_a, b, r_b, q_b, threads=threads)
    by_quaternion = proximity_batch(a, r_a, q_a, b, r_b, q_b, threads=threads)
    np.testing.assert_allclose(by_matrix.alpha, by_quaternion.alpha, rtol=1e-9)
    for i in range(0, len(r_a), 6):
        alpha_ref, _ = proximity_oracle(a, r_a[i], q_a[i], b, r_b[i], q_b[i])
        assert by_quaternion.alpha[i] == pytest.approx(alpha_ref, rel=1e-6)


@pytest.mark.parametrize("kind_a,kind_b", PAIRS)
def test_single_calls_agree_with_the_lane_solver(kind_a, kind_b):
    """A single call solves with the rows four to a vector (native/conic/row_packet_solver.hpp), a batch of
    one shape pair with four problems in the vector's lanes (native/conic/cone_solver.hpp): two
    implementations of the method, which must give the same solutions and iteration counts (±1)."""
    configs = [config for _, config in pair_configurations(kind_a, kind_b, 12)]
    a, b = configs[0][0], configs[0][3]
    r_a, q_a, r_b, q_b = (np.array([config[i] for config in configs]) for i in (1, 2, 4, 5))
    batch = proximity_batch(a, r_a, q_a, b, r_b, q_b)
    singles = [proximity(a, r_a[i], q_a[i], b, r_b[i], q_b[i]) for i in range(len(r_a))]
    assert np.all(batch.status == Status.SOLVED)
    assert_batch_matches_singles(batch, singles)
    assert np.all(np.abs(batch.iterations - [s.iterations for s in singles]) <= 1)


@pytest.mark.parametrize("kind_a,kind_b", [("polygon", "capsule"), ("cone", "polytope"), ("sphere", "ellipsoid")])
def test_single_calls_in_barrier_mode_match_the_oracle(kind_a, kind_b):
    """Value calls with barrier > 0 take the general solver; they end on the central path at μ, whose
    α is within a few μ of the exact one."""
    settings = SolverSettings(barrier=1e-9, centrality_tol=1e-5)
    for _, (a, r_a, q_a, b, r_b, q_b) in pair_configurations(kind_a, kind_b, 6):
        res = proximity(a, r_a, q_a, b, r_b, q_b, settings=settings)
        alpha_ref, _ = proximity_oracle(a, r_a, q_a, b, r_b, q_b)
        assert res.converged
        assert abs(res.alpha - alpha_ref) <= 1e-6 * alpha_ref


@pytest.mark.parametrize("threads", [1, 2])
def test_batch_of_one_shape_against_a_list_equals_single_calls(threads):
    """One shape on one side and a list on the other (each side is indexed on its own)."""
    cases = [config for kb in KINDS for _, config in pair_configurations("sphere", kb, 3)]
    a = cases[0][0]
    _, r_a, q_a, b, r_b, q_b = (list(column) for column in zip(*cases))
    singles = [proximity(a, r_a[i], q_a[i], b[i], r_b[i], q_b[i]) for i in range(len(cases))]
    batch = proximity_batch(a, np.array(r_a), np.array(q_a), b, np.array(r_b), np.array(q_b), threads=threads)
    assert_batch_equals_singles(batch, singles)
    swapped = [proximity(b[i], r_b[i], q_b[i], a, r_a[i], q_a[i]) for i in range(len(cases))]
    batch = proximity_batch(b, np.array(r_b), np.array(q_b), a, np.array(r_a), np.array(q_a), threads=threads)
    assert_batch_equals_singles(batch, swapped)
