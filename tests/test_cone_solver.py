"""solve_cone_program against cvxpy + Clarabel on random feasible, bounded cone programs."""

import cvxpy as cp
import numpy as np
import pytest

from dcol.solvers import SolverSettings, Status, solve_cone_program


def interior_point(dims_l, dims_q, rng):
    """A random point strictly inside the orthant × second-order cones."""
    parts = [rng.uniform(0.1, 2.0, size=dims_l)]
    for dim in dims_q:
        tail = rng.normal(size=dim - 1)
        parts.append(np.r_[np.linalg.norm(tail) + rng.uniform(0.1, 1.0), tail])
    return np.concatenate(parts)


def random_program(rng, n, dims_l, dims_q):
    """Strictly feasible primal (x0, s0) and dual (z0) points make the program solvable and bounded."""
    m = dims_l + sum(dims_q)
    G = rng.normal(size=(m, n))
    h = G @ rng.normal(size=n) + interior_point(dims_l, dims_q, rng)
    c = -G.T @ interior_point(dims_l, dims_q, rng)
    return c, G, h


def cvxpy_solution(c, G, h, dims_l, dims_q):
    x = cp.Variable(len(c))
    s = h - G @ x
    constraints = [s[:dims_l] >= 0] if dims_l else []
    row = dims_l
    for dim in dims_q:
        constraints.append(cp.SOC(s[row], s[row + 1 : row + dim]))
        row += dim
    problem = cp.Problem(cp.Minimize(c @ x), constraints)
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    return problem.value, x.value


@pytest.mark.parametrize("seed", range(40))
def test_random_programs_match_clarabel(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 12))
    dims_q = [int(d) for d in rng.integers(1, 6, size=int(rng.integers(0, 5)))]
    dims_l = int(rng.integers(0 if dims_q else 1, 15)) + n  # more rows than variables: G has full column rank
    c, G, h = random_program(rng, n, dims_l, dims_q)
    sol = solve_cone_program(c, G, h, {"l": dims_l, "q": dims_q})
    assert sol.status == Status.SOLVED
    value, x_ref = cvxpy_solution(c, G, h, dims_l, dims_q)
    assert sol.primal_objective == pytest.approx(value, rel=1e-7, abs=1e-7)
    assert sol.dual_objective == pytest.approx(value, rel=1e-7, abs=1e-7)
    # KKT conditions of our own solution.
    np.testing.assert_allclose(sol.s, h - G @ sol.x, atol=1e-7 * (1 + np.abs(h).max()))
    np.testing.assert_allclose(c + G.T @ sol.z, 0.0, atol=1e-7 * (1 + np.abs(c).max()))
    assert sol.s @ sol.z == pytest.approx(0.0, abs=1e-7 * (1 + abs(value)))
    assert np.all(sol.s[:dims_l] >= -1e-9) and np.all(sol.z[:dims_l] >= -1e-9)
    # The primal solution of a random LP/SOCP is unique with probability one.
    np.testing.assert_allclose(sol.x, x_ref, atol=1e-5 * (1 + np.abs(x_ref).max()))


def test_iteration_limit_is_a_status_with_finite_output():
    c, G, h = random_program(np.random.default_rng(1), 5, 12, [3, 4])
    sol = solve_cone_program(c, G, h, {"l": 12, "q": [3, 4]}, settings=SolverSettings(max_iter=1))
    assert sol.status == Status.MAX_ITERATIONS
    assert sol.iterations == 1
    assert all(np.all(np.isfinite(v)) for v in (sol.x, sol.s, sol.z))


def test_unbounded_program_is_not_reported_solved():
    # minimize -x subject to x >= 0: unbounded below.
    sol = solve_cone_program([-1.0], [[-1.0]], [0.0], {"l": 1, "q": []})
    assert sol.status != Status.SOLVED
    assert np.all(np.isfinite(sol.x))


@pytest.mark.parametrize(
    "c,G,h,cones,match",
    [
        ([1.0], [[1.0], [2.0]], [1.0], {"l": 1}, r"G must have shape"),
        ([1.0], [[1.0]], [1.0], {"l": 2}, r'cones\["l"\] \+ sum\(cones\["q"\]\) must equal'),
        ([1.0], [[1.0]], [np.nan], {"l": 1}, "h must be finite"),
        ([1.0], [[1.0]], [1.0], {"l": 0, "q": [0, 1]}, "size >= 1"),
        ([1.0], [[1.0]], [1.0], {"l": 1, "soc": []}, "keys"),
        (np.ones(40), np.ones((40, 40)), np.ones(40), {"l": 40}, "between 1 and 32"),
    ],
)
def test_bad_programs_raise(c, G, h, cones, match):
    with pytest.raises(ValueError, match=match):
        solve_cone_program(c, G, h, cones)
