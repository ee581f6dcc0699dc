"""LCP solvers and clamping-set gradients against independent routes: the equivalent QP in
cvxpy/Clarabel, brute-force enumeration of complementary bases, and central differences."""

import itertools

import numpy as np
import pytest

from dcol.solvers import (
    LCPStatus,
    complementarity_aware,
    lcp_jacobian,
    lcp_jvp,
    lcp_vjp,
    solve_boxed_lcp,
    solve_contact_ncp,
    solve_lcp,
    solve_mlcp,
)
from tests.support.optional import oracle

cp = oracle("cvxpy")


def psd_problem(rng, n, rank=None):
    """A Delassus-like A = J Jᵀ (rank ≤ `rank`) and a b with contacts of both kinds."""
    J = rng.normal(size=(n, rank or n + 2))
    return J @ J.T + 1e-3 * np.eye(n) * (rank is None), rng.normal(size=n)


def p_matrix(rng, n):
    """A nonsymmetric P-matrix: positive definite symmetric part plus a skew part."""
    L = rng.normal(size=(n, n))
    S = rng.normal(size=(n, n))
    return L @ L.T + np.eye(n) + (S - S.T), rng.normal(size=n)


def qp_solution(A, b):
    """min ½ fᵀAf + bᵀf s.t. f ≥ 0 (its KKT conditions are the LCP) in cvxpy/Clarabel."""
    f = cp.Variable(b.size)
    A_sym = 0.5 * (A + A.T)
    problem = cp.Problem(cp.Minimize(0.5 * cp.quad_form(f, cp.psd_wrap(A_sym)) + b @ f), [f >= 0])
    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return f.value


def enumerated_solution(A, b):
    """The LCP solution by trying every clamping set (small n)."""
    n = b.size
    for size in range(n + 1):
        for subset in itertools.combinations(range(n), size):
            C = np.zeros(n, bool)
            C[list(subset)] = True
            f = np.zeros(n)
            if size:
                f[C] = np.linalg.solve(A[np.ix_(C, C)], -b[C])
            w = A @ f + b
            if np.all(f >= -1e-12) and np.all(w[~C] >= -1e-12):
                return f
    raise AssertionError("no solution found")


def complementarity(A, b, f):
    w = A @ f + b
    return max(np.abs(np.minimum(f, w)).max(), -min(f.min(), 0.0), -min(w.min(), 0.0))


@pytest.mark.parametrize("n", [1, 2, 5, 20, 60, 200])
@pytest.mark.parametrize("method", ["lemke", "pgs", "ipm"])
def test_psd_lcps_match_the_qp(n, method):
    rng = np.random.default_rng(n)
    A, b = psd_problem(rng, n)
    solution = solve_lcp(A, b, method=method, tol=1e-11, max_iterations=200000)
    assert solution.status == LCPStatus.SOLVED
    scale = max(1.0, np.abs(A).max())
    assert complementarity(A, b, solution.f) <= 1e-9 * scale
    reference = qp_solution(A, b)
    assert np.allclose(solution.f, reference, atol=1e-6 * max(1.0, np.abs(reference).max()))


@pytest.mark.parametrize("n", [40, 150])
def test_rank_deficient_psd_lcps_match_the_qp_velocities(n):
    """With A = J Jᵀ of low rank the f solving the LCP are many, but w = A f + b is unique."""
    rng = np.random.default_rng(7 + n)
    A, _ = psd_problem(rng, n, rank=n // 4)
    b = A @ rng.normal(size=n) + np.abs(rng.normal(size=n))  # a solvable right-hand side
    lemke = solve_lcp(A, b)
    pgs = solve_lcp(A, b, method="pgs", tol=1e-11, max_iterations=200000)
    reference = qp_solution(A, b)
    for solution in (lemke, pgs):
        assert solution.status == LCPStatus.SOLVED
        assert complementarity(A, b, solution.f) <= 1e-9 * np.abs(A).max()
        assert np.allclose(solution.w, A @ reference + b, atol=1e-6)


@pytest.mark.parametrize("seed", range(8))
def test_p_matrix_lcps_match_enumeration(seed):
    rng = np.random.default_rng(100 + seed)
    n = 1 + seed % 7
    A, b = p_matrix(rng, n)
    solution = solve_lcp(A, b)
    assert solution.status == LCPStatus.SOLVED
    assert complementarity(A, b, solution.f) <= 1e-9 * np.abs(A).max()
    assert np.allclose(solution.f, enumerated_solution(A, b), atol=1e-10)


def test_no_solution_is_reported():
    """w = −f − 1 < 0 for every f ≥ 0."""
    solution = solve_lcp(-np.eye(3), -np.ones(3))
    assert solution.status == LCPStatus.UNSOLVABLE
    assert solve_lcp(np.zeros((2, 2)), -np.ones(2), method="pgs").status == LCPStatus.INVALID_PROBLEM


def test_methods_that_need_psd_say_so():
    indefinite = np.array([[1.0, 2.0], [2.0, 1.0]])
    for method in ("pgs", "ipm"):
        with pytest.raises(ValueError, match="positive semidefinite"):
            solve_lcp(indefinite, -np.ones(2), method=method)
    with pytest.raises(ValueError, match="symmetric"):
        solve_lcp(np.array([[1.0, 1.0], [0.0, 1.0]]), -np.ones(2), method="pgs")
    assert solve_lcp(indefinite, -np.ones(2)).status == LCPStatus.SOLVED  # Lemke: w = 0 at f = (1/3, 1/3)


def test_complementarity_aware_relabeling_lets_a_resting_ball_lift():
    """Nimble Fig. 3: a ball resting on the ground, pushed up by an actuator. Through the true
    (clamping) contact, ∂w/∂b = 0: pushing harder changes nothing. Relabeled from ∂ℓ/∂w < 0 (the loss
    wants it to rise), the contact separates and ∂w/∂b = 1."""
    m, dt, g, push = 1.0, 0.01, 9.81, 2.0
    A, b = np.array([[dt / m]]), np.array([dt * (push / m - g)])
    solution = solve_lcp(A, b)
    assert solution.clamping[0]

    def dw_db(sol):
        return (A @ lcp_jvp(sol, A, np.zeros((1, 1)), np.ones(1)) + 1.0)[0]

    assert np.isclose(dw_db(solution), 0.0)
    relabeled = complementarity_aware(solution, grad_w=[-1.0])
    assert relabeled.at_lower[0] and not relabeled.clamping[0]
    assert np.isclose(dw_db(relabeled), 1.0)
    assert complementarity_aware(solution, grad_w=[1.0]).clamping[0]


def test_complementarity_aware_relabeling_frees_the_friction_of_a_contact_it_separates():
    """A block resting on the ground and pushed sideways within friction: normal and friction clamp.
    Relabeled from a loss that wants the normal velocity to grow and the tangential one to shrink,
    the normal separates; its friction impulse, bounded by ±μ f_n = 0, goes to its bound with it
    instead of clamping inside a box of no width. With no impulse left, w = b: ∂w/∂b = I."""
    m, dt, g, mu = 1.0, 0.01, 9.81, 0.5
    A = np.eye(2) * dt / m
    b = np.array([-dt * g, 0.2 * dt * g])  # gravity into the ground, a push below μ m g sideways
    solution = solve_boxed_lcp(
        A, b, np.array([0.0, 0.0]), np.array([np.inf, 0.0]), friction_index=[-1, 0], mu=[0.0, mu]
    )
    assert solution.clamping.all()
    relabeled = complementarity_aware(solution, grad_w=[-1.0, 1.0])
    assert relabeled.at_lower[0] and not relabeled.clamping[1]
    dw_db = A @ np.stack([lcp_jvp(relabeled, A, np.zeros((2, 2)), e) for e in np.eye(2)], axis=1) + np.eye(2)
    np.testing.assert_allclose(dw_db, np.eye(2), atol=1e-12)


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="A must have shape"):
        solve_lcp(np.eye(3), np.ones(2))
    with pytest.raises(ValueError, match="b must be finite"):
        solve_lcp(np.eye(2), [1.0, np.nan])
    with pytest.raises(ValueError, match="method"):
        solve_lcp(np.eye(2), np.ones(2), method="simplex")


# --- tied contacts, rank deficiency: Nimble App. B ---------------------------------------------


@pytest.mark.parametrize("method", ["lemke", "pgs"])
def test_box_on_plane_gets_the_least_squares_minimal_impulses(method):
    """Two identical contact columns (a box that cannot rotate, Nimble App. B): f1 + f2 = m g, and the
    stabilized solution splits it evenly."""
    m, g = 2.0, 9.81
    A = np.ones((2, 2)) / m
    b = np.array([-g, -g])
    solution = solve_lcp(A, b, method=method)
    assert np.allclose(solution.f, [m * g / 2, m * g / 2], rtol=1e-12)
    assert solution.clamping.all()
    df_db = lcp_jacobian(solution, A).b
    assert np.all(np.isfinite(df_db))
    # Pushing both contacts down the same way (b → b + ε(1, 1)) is what the rank allows: along it the
    # least-squares-minimal solution moves by −A⁺ ε 1 = −(m/2) ε each.
    eps = 1e-6
    moved = solve_lcp(A, b + eps, method=method).f
    assert np.allclose((moved - solution.f) / eps, df_db @ np.ones(2), atol=1e-6)


def test_tied_contact_takes_a_valid_subgradient():
    """f = 0 and w = 0 at index 1: the gradient is the separating one, which one-sided differences
    reproduce in the separating direction."""
    A = np.array([[2.0, 0.5], [0.5, 1.0]])
    f1 = 1.5
    b = np.array([-2.0 * f1, -0.5 * f1])  # w_1 = 0.5 f1 + b_1 = 0 with f_1 = 0: tied
    solution = solve_lcp(A, b)
    assert solution.tied[1] and solution.clamping[0]
    df_db = lcp_jacobian(solution, A).b
    eps = 1e-7
    up = solve_lcp(A, b + [0.0, eps]).f  # w_1 grows: index 1 separates
    assert np.allclose((up - solution.f) / eps, df_db[:, 1], atol=1e-6)


# --- gradients ----------------------------------------------------------------------------------


def strictly_differentiable(rng, n):
    """A random PD problem whose clamping and separating indices are clear of zero."""
    while True:
        A, b = psd_problem(rng, n)
        solution = solve_lcp(A, b)
        margin = np.where(solution.clamping, solution.f, solution.w)
        if margin.min() > 1e-3:
            return A, b, solution


@pytest.mark.parametrize("n", [1, 4, 12])
def test_jvp_matches_central_differences(n):
    rng = np.random.default_rng(40 + n)
    A, b, solution = strictly_differentiable(rng, n)
    dA, db = rng.normal(size=(n, n)), rng.normal(size=n)
    eps = 1e-6
    plus = solve_lcp(A + eps * dA, b + eps * db).f
    minus = solve_lcp(A - eps * dA, b - eps * db).f
    expected = (plus - minus) / (2 * eps)
    assert np.allclose(lcp_jvp(solution, A, dA, db), expected, atol=1e-7 * max(1.0, np.abs(expected).max()))


@pytest.mark.parametrize("n", [3, 10])
def test_vjp_and_jacobian_agree_with_jvp(n):
    rng = np.random.default_rng(60 + n)
    A, b, solution = strictly_differentiable(rng, n)
    dA, db, grad_f = rng.normal(size=(n, n)), rng.normal(size=n), rng.normal(size=n)
    df = lcp_jvp(solution, A, dA, db)
    grad = lcp_vjp(solution, A, grad_f)
    assert np.isclose(grad_f @ df, np.sum(grad.A * dA) + grad.b @ db, rtol=1e-10)
    jacobian = lcp_jacobian(solution, A)
    assert np.allclose(np.einsum("kij,ij->k", jacobian.A, dA) + jacobian.b @ db, df, rtol=1e-10, atol=1e-12)


def test_pseudo_inverse_gradient_on_a_rank_deficient_clamping_set():
    """A_CC = U Vᵀ of rank 3 < 4, moved at constant rank (nonsymmetric, as friction's
    A_CC = J_C M⁻¹(J_Cᵀ + J_Bᵀ E) is): the least-squares-minimal f_C is the projection of f* onto
    range(V), and its derivative is carried by the pseudo-inverse term of Nimble eq. 22 alone. Central
    differences of the stabilized solve agree, and dropping the term would not."""
    rng = np.random.default_rng(5)
    n, r = 4, 3
    U0, V0 = rng.normal(size=(n, r)), np.abs(rng.normal(size=(n, r)))
    dU, dV = rng.normal(size=(n, r)), rng.normal(size=(n, r))
    f_star = V0 @ np.ones(r)

    def problem(t):
        A = (U0 + t * dU) @ (V0 + t * dV).T
        return A, -A @ f_star

    A, b = problem(0.0)
    solution = solve_lcp(A, b)
    assert solution.status == LCPStatus.SOLVED and solution.clamping.all()
    assert np.allclose(solution.f, f_star)
    eps = 1e-6
    (A_plus, b_plus), (A_minus, b_minus) = problem(eps), problem(-eps)
    # Warm-started from `solution`, all four stay clamping and the stabilized solve is differenced.
    expected = (
        solve_lcp(A_plus, b_plus, warm_start=solution).f - solve_lcp(A_minus, b_minus, warm_start=solution).f
    ) / (2 * eps)
    dA, db = (A_plus - A_minus) / (2 * eps), (b_plus - b_minus) / (2 * eps)
    assert np.abs(expected).max() > 0.1
    assert np.allclose(lcp_jvp(solution, A, dA, db), expected, atol=1e-6)
    without_pseudo_inverse_term = -np.linalg.pinv(A) @ (dA @ solution.f + db)
    assert np.abs(without_pseudo_inverse_term).max() < 1e-6


# --- warm start ---------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["lemke", "pgs"])
def test_warm_start_on_slowly_changing_problems(method):
    rng = np.random.default_rng(11)
    n = 30
    J = rng.normal(size=(n, n + 4))
    dJ = rng.normal(size=(n, n + 4))
    b0, db = rng.normal(size=n), rng.normal(size=n)
    previous = None
    hits = 0
    steps = 200
    for step in range(steps):
        t = 1e-3 * step
        A = (J + t * dJ) @ (J + t * dJ).T
        b = b0 + t * db
        warm = solve_lcp(A, b, method=method, warm_start=previous, tol=1e-11, max_iterations=100000)
        cold = solve_lcp(A, b, method=method, tol=1e-11, max_iterations=100000)
        hits += warm.warm_start_hit
        assert np.allclose(warm.f, cold.f, atol=1e-8 * max(1.0, np.abs(cold.f).max()))
        previous = warm
    assert hits >= 0.9 * steps


@pytest.mark.parametrize("scale", [1e150, 1e155, 1e200, 1e300])
@pytest.mark.parametrize("method", ["lemke", "pgs", "ipm"])
def test_status_says_when_the_solution_is_not_finite(scale, method):
    """An LCP scaled so far that its products overflow: the returned solution is finite and SOLVED,
    or its status says NUMERICAL_ERROR; never SOLVED with NaN."""
    rng = np.random.default_rng(8)
    B = rng.normal(size=(4, 4))
    A, b = B @ B.T + np.eye(4), rng.normal(size=4)
    solution = solve_lcp(scale * A, scale * b, method=method)
    finite = np.isfinite(solution.f).all() and np.isfinite(solution.w).all()
    assert solution.status == (LCPStatus.SOLVED if finite else LCPStatus.NUMERICAL_ERROR)
    if finite:  # then it is the unscaled problem's solution, which scaling does not change
        np.testing.assert_allclose(solution.f, solve_lcp(A, b, method=method).f, rtol=1e-8, atol=1e-12)


def relative_natural_residual(A, b, f):
    """max_i |f_i − max(f_i − w_i / A_ii, 0)| over max(‖f‖∞, max_i |b_i| / A_ii), w = A f + b (A_ii > 0):
    zero exactly at a solution, the same for A, b in any units; computed here from the data."""
    d = np.diag(A)
    worst = np.abs(f - np.maximum(f - (A @ f + b) / d, 0.0)).max()
    return worst / max(np.abs(f).max(), (np.abs(b) / d).max())


@pytest.mark.parametrize("method", ["lemke", "ipm"])
@pytest.mark.parametrize("stabilize", [True, False])
def test_solved_only_within_the_tolerance(method, stabilize):
    """Positive definite LCPs (n = 8), as they are and with A·1e6, b·1e-1 (f of order 1e-7, where the
    interior point's stopping test was once absolute and it said SOLVED 1e-3 short of complementarity):
    SOLVED only where the returned f's relative natural residual, computed here, is within tol; with
    the stabilization every one is SOLVED."""
    for seed in range(10):
        rng = np.random.default_rng(seed)
        A, b = p_matrix(rng, 8)
        A = A @ A.T  # symmetric positive definite: the interior point takes it too
        for scale_A, scale_b in ((1.0, 1.0), (1e6, 1e-1)):
            solution = solve_lcp(scale_A * A, scale_b * b, method=method, stabilize=stabilize)
            residual = relative_natural_residual(scale_A * A, scale_b * b, solution.f)
            assert solution.status != LCPStatus.SOLVED or residual <= 1e-9
            assert solution.status == LCPStatus.SOLVED or not stabilize


# Every solver of the LCP family with a problem of known solution: (keywords → solution, solution).
_SOLVES = {
    "lemke": (lambda **kw: solve_lcp(np.eye(2), -np.ones(2), **kw).f, [1.0, 1.0]),
    "pgs": (lambda **kw: solve_lcp(np.eye(2), -np.ones(2), method="pgs", **kw).f, [1.0, 1.0]),
    "ipm": (lambda **kw: solve_lcp(np.eye(2), -np.ones(2), method="ipm", **kw).f, [1.0, 1.0]),
    "boxed": (lambda **kw: solve_boxed_lcp(np.eye(2), -np.ones(2), np.zeros(2), [0.5, 2.0], **kw).f, [0.5, 1.0]),
    # min ½x² − 2x subject to x ≤ 1: x = 1 with multiplier z = 1.
    "mlcp": (lambda **kw: solve_mlcp([[1.0]], [-2.0], [[1.0]], [[0.0]], [1.0], **kw).z, [1.0]),
    # A contact approaching at 1 m/s along its normal (last) with G = I stops: λ = (0, 0, 1).
    "ncp": (lambda **kw: solve_contact_ncp(np.eye(3), [0.0, 0.0, -1.0], 0.5, **kw).impulses, [0.0, 0.0, 1.0]),
}


@pytest.mark.parametrize("solver", sorted(_SOLVES))
def test_iteration_limits_are_checked_by_name(solver):
    """A limit beyond the native core's C int was pybind11's list of signatures; a fractional, textual
    or negative one was used as it came out of int()."""
    solve, expected = _SOLVES[solver]
    np.testing.assert_allclose(solve(max_iterations=np.int64(1000)), expected, atol=1e-8)
    for limit in (-1, 1.5, True, "5", 2**31, 10**12):
        with pytest.raises(ValueError, match=r"max_iterations must be an integer in \[0, 2147483647\], got"):
            solve(max_iterations=limit)


def test_derivative_arguments_refuse_complex_numbers():
    """numpy would drop the imaginary parts (with a warning at most)."""
    A, b = np.eye(2), -np.ones(2)
    solution = solve_lcp(A, b)
    boxed = solve_boxed_lcp(A, b, np.zeros(2), [0.5, 2.0])
    zero_A, zero_b, imaginary = np.zeros((2, 2)), np.zeros(2), np.array([0.0, 1e-3j])
    calls = {
        "A": lambda: lcp_vjp(solution, A + 0j, [1.0, 0.0]),
        "dA": lambda: lcp_jvp(solution, A, zero_A + 0j, zero_b),
        "db": lambda: lcp_jvp(solution, A, zero_A, imaginary),
        "dlo": lambda: lcp_jvp(boxed, A, zero_A, zero_b, dlo=imaginary),
        "dhi": lambda: lcp_jvp(boxed, A, zero_A, zero_b, dhi=imaginary),
        "grad_f": lambda: lcp_vjp(solution, A, imaginary),
    }
    for name, call in calls.items():
        with pytest.raises(TypeError, match=f"^{name} must be an array of real numbers, got complex ones"):
            call()
