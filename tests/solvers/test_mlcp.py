"""Mixed LCP interior-point method and its KKT backward pass (planar engine appendix B) against the
QP it is the optimality system of (cvxpy/Clarabel), central differences, and the clamping-set
gradients of the LCP."""

import numpy as np
import pytest

from dcol.solvers import LCPStatus, lcp_vjp, mlcp_vjp, solve_lcp, solve_mlcp
from tests.support.optional import oracle

cp = oracle("cvxpy")


def contact_qp(rng, n, m, p, diagonal_mass=False):
    """M ≻ 0, q, equalities A x = 0, inequalities G x ≤ h (h > 0: x = 0 is feasible): F = 0 makes the
    MLCP this QP's KKT system. With diagonal_mass, M is diagonal (as a mass matrix in maximal
    coordinates) and each row of G touches the three columns of at most two of n // 3 bodies (as a
    contact row), the structure the solver's elimination of x and its ordering of the rest exploit."""
    if diagonal_mass:
        G = np.zeros((m, n))
        for row in G:
            for body in rng.choice(n // 3, size=min(2, n // 3), replace=False):
                row[3 * body : 3 * body + 3] = rng.normal(size=3)
        M = np.diag(rng.uniform(0.1, 2.0, n))
    else:
        L = rng.normal(size=(n, n))
        M, G = L @ L.T + np.eye(n), rng.normal(size=(m, n))
    return (
        M,
        5.0 * rng.normal(size=n),
        G,
        np.zeros((m, m)),
        rng.uniform(0.1, 1.0, m),
        rng.normal(size=(p, n)),
    )


def qp_reference(M, q, G, h, A):
    x = cp.Variable(q.size)
    constraints = [G @ x <= h] + ([A @ x == 0] if A.shape[0] else [])
    cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(M)) + q @ x), constraints).solve(
        solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12
    )
    return x.value, constraints[0].dual_value


# The largest problem only with a diagonal M, whose sparse Schur complement the solver reorders; a
# dense M of that size is too ill-conditioned for the reference's tolerances.
@pytest.mark.parametrize(
    "n, m, p, diagonal_mass",
    [(n, m, p, diagonal) for n, m, p in [(3, 4, 0), (6, 10, 2), (20, 30, 5)] for diagonal in (False, True)]
    + [(60, 40, 6, True)],
)
def test_solution_matches_the_qp(n, m, p, diagonal_mass):
    rng = np.random.default_rng(n + m + p)
    M, q, G, F, h, A = contact_qp(rng, n, m, p, diagonal_mass)
    solution = solve_mlcp(M, q, G, F, h, A=A)
    assert solution.status == LCPStatus.SOLVED
    x_ref, z_ref = qp_reference(M, q, G, h, A)
    assert np.allclose(solution.x, x_ref, atol=1e-7)
    assert np.allclose(solution.z, z_ref, atol=1e-7)
    assert np.allclose(G @ solution.x + solution.s, h, atol=1e-9)
    assert np.abs(A @ solution.x).max(initial=0.0) <= 1e-9


def strictly_complementary(rng, n, m, p, diagonal_mass=False):
    while True:
        problem = contact_qp(rng, n, m, p, diagonal_mass)
        solution = solve_mlcp(*problem[:5], A=problem[5], tol=1e-13)
        if solution.status == LCPStatus.SOLVED and np.maximum(solution.s, solution.z).min() > 1e-3:
            return problem, solution


@pytest.mark.parametrize("diagonal_mass", [False, True])
def test_kkt_backward_matches_central_differences(diagonal_mass):
    """With a diagonal M, the backward pass solves by the Schur complement on (z, y), while the
    differences of M's symmetric perturbations are solved with the full Newton matrix."""
    rng = np.random.default_rng(1)
    n, m, p = 5, 7, 2
    (M, q, G, F, h, A), solution = strictly_complementary(rng, n, m, p, diagonal_mass)
    grad_x, grad_z = rng.normal(size=n), rng.normal(size=m)
    cot = mlcp_vjp(solution, M, q, G, F, h, A=A, grad_x=grad_x, grad_z=grad_z)
    dM = rng.normal(size=(n, n))
    dM = dM + dM.T  # M stays symmetric: the cotangent is symmetrized (LCP-physics eq. 32)
    directions = dict(
        M=dM,
        q=rng.normal(size=n),
        G=rng.normal(size=(m, n)),
        F=0.1 * rng.normal(size=(m, m)),
        h=rng.normal(size=m),
        A=rng.normal(size=(p, n)),
    )
    eps = 1e-6

    def loss(t, name):
        args = dict(M=M, q=q, G=G, F=F, h=h, A=A)
        args[name] = args[name] + t * directions[name]
        s = solve_mlcp(args["M"], args["q"], args["G"], args["F"], args["h"], A=args["A"], tol=1e-14)
        return grad_x @ s.x + grad_z @ s.z

    for name, direction in directions.items():
        expected = (loss(eps, name) - loss(-eps, name)) / (2 * eps)
        assert np.isclose(np.sum(getattr(cot, name) * direction), expected, rtol=1e-5, atol=1e-7), name


@pytest.mark.parametrize("n", [3, 15])
def test_kkt_route_agrees_with_the_clamping_set_gradients(n):
    """A plain LCP as the MLCP with F = −A, h = b: the KKT backward pass and the clamping-set
    gradients (Nimble §IV) give the same ∂ℓ/∂A and ∂ℓ/∂b where the LCP is strictly differentiable."""
    rng = np.random.default_rng(30 + n)
    while True:
        J = rng.normal(size=(n, n + 2))
        A, b = J @ J.T + 1e-2 * np.eye(n), rng.normal(size=n)
        lcp = solve_lcp(A, b)
        if np.where(lcp.clamping, lcp.f, lcp.w).min() > 1e-2:
            break
    grad_f = rng.normal(size=n)
    clamping = lcp_vjp(lcp, A, grad_f)
    empty = np.zeros((0, 0))
    mlcp = solve_mlcp(empty, np.zeros(0), np.zeros((n, 0)), -A, b, tol=1e-13)
    kkt = mlcp_vjp(mlcp, empty, np.zeros(0), np.zeros((n, 0)), -A, b, grad_z=grad_f)
    assert np.allclose(kkt.h, clamping.b, atol=1e-7)
    assert np.allclose(-kkt.F, clamping.A, atol=1e-7)


def test_bad_shapes_are_named():
    with pytest.raises(ValueError, match="G must have shape"):
        solve_mlcp(np.eye(2), np.ones(2), np.ones((3, 3)), np.zeros((3, 3)), np.ones(3))
    with pytest.raises(ValueError, match="M must be finite"):
        solve_mlcp(np.full((1, 1), np.nan), np.ones(1), np.ones((1, 1)), np.zeros((1, 1)), np.ones(1))


def test_singular_newton_system_returns_zeros_and_says_so():
    """A problem whose first Newton system is singular stops at once: INVALID_PROBLEM, and x and y
    are zeros rather than whatever the memory held."""
    solution = solve_mlcp(np.zeros((2, 2)), [1.0, 1.0], np.zeros((1, 2)), np.zeros((1, 1)), [1.0])
    assert solution.status == LCPStatus.INVALID_PROBLEM
    np.testing.assert_array_equal(solution.x, np.zeros(2))
    assert solution.y.shape == (0,)


def test_cotangents_are_checked_by_name():
    """Complex cotangents made complex cotangents of every input; wrong lengths, numpy's message."""
    problem = ([[1.0]], [-2.0], [[1.0]], [[0.0]], [1.0])  # min ½x² − 2x subject to x ≤ 1
    solution = solve_mlcp(*problem)
    with pytest.raises(TypeError, match="grad_x must be an array of real numbers, got complex ones"):
        mlcp_vjp(solution, *problem, grad_x=[1j])
    with pytest.raises(ValueError, match=r"grad_z must have shape \(len\(h\),\) = \(1,\), got \(2,\)"):
        mlcp_vjp(solution, *problem, grad_z=[1.0, 2.0])
