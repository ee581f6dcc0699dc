"""solve_cone_program against cvxpy + Clarabel and closed forms: random strictly feasible, bounded cone programs."""

import warnings

import numpy as np
import pytest

from dcol.solvers import SolverSettings, Status, solve_cone_program
from tests.support.optional import oracle

cp = oracle("cvxpy")

CLARABEL = dict(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10, max_iter=200)


def interior_point(dims_l, dims_q, rng):
    """A random point strictly inside the orthant R^l_+ × Q^{q_1} × … × Q^{q_k}."""
    parts = [rng.uniform(0.1, 2.0, size=dims_l)]
    for dim in dims_q:
        tail = rng.normal(size=dim - 1)
        parts.append(np.r_[np.linalg.norm(tail) + rng.uniform(0.1, 1.0), tail])
    return np.concatenate(parts)


def random_program(rng, n, dims_l, dims_q):
    """(c, G, h) with a strictly feasible primal (x0, s0 ∈ int K) and dual (z0 ∈ int K): solvable and bounded."""
    G = rng.normal(size=(dims_l + sum(dims_q), n))
    h = G @ rng.normal(size=n) + interior_point(dims_l, dims_q, rng)
    c = -G.T @ interior_point(dims_l, dims_q, rng)
    return c, G, h


def program_with_known_solution(rng, n, dims_l, dims_q):
    """(c, G, h, x*): x* is the unique solution by construction, with strictly feasible primal and dual points.

    An optimal pair s*, z* is chosen strictly complementary: n orthant rows with s = 0 < z (they pin x*
    down), the other rows s > 0 = z, each SOC either s ∈ int Q, z = 0 or s = t(1, u), z = τ(1, −u).
    G then gets G d = s* − v and Gᵀ(κw − z*) = 0 for v, w ∈ int K, so x* + d and κw are Slater points.
    """
    m = dims_l + sum(dims_q)
    s_opt, z_opt = np.zeros(m), np.zeros(m)
    s_opt[:dims_l] = rng.uniform(0.5, 2.0, size=dims_l)
    active = rng.permutation(dims_l)[:n]
    s_opt[active], z_opt[active] = 0.0, rng.uniform(0.5, 2.0, size=n)
    row = dims_l
    for dim in dims_q:
        u = rng.normal(size=dim - 1)
        if rng.random() < 0.5:
            s_opt[row : row + dim] = rng.uniform(0.5, 2.0) * np.r_[1.0, u / np.linalg.norm(u)]
            z_opt[row : row + dim] = rng.uniform(0.5, 2.0) * np.r_[1.0, -u / np.linalg.norm(u)]
        else:
            s_opt[row : row + dim] = interior_point(0, [dim], rng)
        row += dim
    v, w = interior_point(dims_l, dims_q, rng), interior_point(dims_l, dims_q, rng)
    v *= 1 + 2 * (w @ s_opt) / (w @ v)  # so that w·v > w·s* and κ > 0
    kappa = (z_opt @ v) / (w @ v - w @ s_opt)
    u = kappa * w - z_opt  # uᵀ(s* − v) = 0 makes both conditions on G compatible
    d = rng.normal(size=n)
    G = rng.normal(size=(m, n))
    G -= np.outer(u, u @ G) / (u @ u)
    G += np.outer(s_opt - v - G @ d, d) / (d @ d)
    x_opt = rng.normal(size=n)
    return -G.T @ z_opt, G, G @ x_opt + s_opt, x_opt


def random_dimensions(rng, min_soc=1):
    """n variables, orthant rows and SOC sizes with more orthant rows than n, so G has full column rank."""
    n = int(rng.integers(1, 16))
    dims_q = [int(d) for d in rng.integers(min_soc, 7, size=int(rng.integers(0, 6)))]
    return n, n + int(rng.integers(1, 15)), dims_q


def clarabel_solution(c, G, h, dims_l, dims_q):
    """(objective, x) of the same program by cvxpy + Clarabel."""
    x = cp.Variable(len(c))
    s = h - G @ x
    constraints = [s[:dims_l] >= 0] if dims_l else []
    row = dims_l
    for dim in dims_q:
        constraints.append(cp.SOC(s[row], s[row + 1 : row + dim]))
        row += dim
    problem = cp.Problem(cp.Minimize(c @ x), constraints)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        problem.solve(**CLARABEL)
    # Clarabel calls a few of these "inaccurate" at 1e-10 only for want of its last digits (on the programs
    # of known solution its x is then still within 1e-11); the comparisons are at 1e-7.
    assert problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE)
    return problem.value, x.value


def cone_violation(v, dims_l, dims_q):
    """How far v is outside the cone: max of -v_i over the orthant and ‖v[1:]‖ − v[0] over each SOC."""
    violations = [0.0, *(-v[:dims_l])]
    row = dims_l
    for dim in dims_q:
        violations.append(np.linalg.norm(v[row + 1 : row + dim]) - v[row])
        row += dim
    return max(violations)


def assert_optimal(sol, c, G, h, dims_l, dims_q, value):
    """Status, objectives against the reference value, and the KKT conditions of our own solution."""
    assert sol.status == Status.SOLVED and sol.iterations > 0
    scale = 1 + abs(value)
    assert sol.primal_objective == pytest.approx(value, rel=1e-7, abs=1e-7 * scale)
    assert sol.dual_objective == pytest.approx(value, rel=1e-7, abs=1e-7 * scale)
    assert sol.primal_objective == pytest.approx(c @ sol.x, rel=1e-12, abs=1e-12 * scale)
    assert sol.dual_objective == pytest.approx(-h @ sol.z, rel=1e-12, abs=1e-12 * scale)
    # s = h − Gx ∈ K, z ∈ K, c + Gᵀz = 0, sᵀz = 0.
    data_scale = 1 + max(np.abs(h).max(), np.abs(c).max())
    np.testing.assert_allclose(sol.s, h - G @ sol.x, atol=1e-8 * data_scale)
    np.testing.assert_allclose(c + G.T @ sol.z, 0.0, atol=1e-8 * data_scale)
    assert cone_violation(sol.s, dims_l, dims_q) <= 1e-9 * data_scale
    assert cone_violation(sol.z, dims_l, dims_q) <= 1e-9 * data_scale
    assert abs(sol.s @ sol.z) <= 1e-8 * scale


@pytest.mark.parametrize("seed", range(40))
def test_random_program_matches_clarabel(seed):
    """Random data: x is unique but often ill-conditioned (Clarabel's own answers at gap 1e-10 and
    1e-12 differ by ~1e-6), so x is held to 1e-5 here and to 1e-7 on the programs of known solution,
    with our gap tightened to 1e-9 (at the default 1e-8 such an x moves by up to ~1e-4)."""
    rng = np.random.default_rng(seed)
    n, dims_l, dims_q = random_dimensions(rng)
    c, G, h = random_program(rng, n, dims_l, dims_q)
    sol = solve_cone_program(c, G, h, {"l": dims_l, "q": dims_q}, settings=SolverSettings(abstol=1e-9, reltol=1e-9))
    value, x_ref = clarabel_solution(c, G, h, dims_l, dims_q)
    assert_optimal(sol, c, G, h, dims_l, dims_q, value)
    assert np.linalg.norm(sol.x - x_ref) <= 1e-5 * (1 + np.linalg.norm(x_ref))


@pytest.mark.parametrize("seed", range(40))
def test_program_with_known_solution(seed):
    rng = np.random.default_rng(1000 + seed)
    n, dims_l, dims_q = random_dimensions(rng, min_soc=2)
    c, G, h, x_opt = program_with_known_solution(rng, n, dims_l, dims_q)
    sol = solve_cone_program(c, G, h, {"l": dims_l, "q": dims_q})
    assert_optimal(sol, c, G, h, dims_l, dims_q, c @ x_opt)
    assert np.linalg.norm(sol.x - x_opt) <= 1e-7 * (1 + np.linalg.norm(x_opt))
    value, x_ref = clarabel_solution(c, G, h, dims_l, dims_q)
    assert sol.primal_objective == pytest.approx(value, rel=1e-7, abs=1e-7 * (1 + abs(value)))
    assert np.linalg.norm(sol.x - x_ref) <= 1e-7 * (1 + np.linalg.norm(x_ref))


@pytest.mark.parametrize("seed", range(20))
def test_size_one_cones_act_as_orthant_rows(seed):
    """A second-order cone of size 1 is {s : s ≥ 0}: the same rows as orthant rows give the same solution."""
    rng = np.random.default_rng(seed)
    n, dims_l, dims_q = random_dimensions(rng, min_soc=2)
    c, G, h = random_program(rng, n, dims_l, [1, 1, 1, *dims_q])
    as_cones = solve_cone_program(c, G, h, {"l": dims_l, "q": [1, 1, 1, *dims_q]})
    as_orthant = solve_cone_program(c, G, h, {"l": dims_l + 3, "q": dims_q})
    assert as_orthant.status == Status.SOLVED
    assert as_cones.status == Status.SOLVED
    assert as_cones.primal_objective == pytest.approx(as_orthant.primal_objective, rel=1e-7, abs=1e-7)
    assert np.linalg.norm(as_cones.x - as_orthant.x) <= 1e-5 * (1 + np.linalg.norm(as_orthant.x))


def test_largest_program_matches_clarabel():
    rng = np.random.default_rng(99)
    n, dims_l, dims_q = 32, 60, [3, 4, 5, 6, 8, 10, 2, 1]
    c, G, h = random_program(rng, n, dims_l, dims_q)
    sol = solve_cone_program(c, G, h, {"l": dims_l, "q": dims_q})
    value, x_ref = clarabel_solution(c, G, h, dims_l, dims_q)
    assert_optimal(sol, c, G, h, dims_l, dims_q, value)
    assert np.linalg.norm(sol.x - x_ref) <= 1e-5 * (1 + np.linalg.norm(x_ref))


def test_linear_program_closed_form():
    """minimize x1 + 2 x2 subject to x1 ≥ 1, x2 ≥ −3, x1 + x2 ≤ 10: x = (1, −3)."""
    G = np.array([[-1.0, 0.0], [0.0, -1.0], [1.0, 1.0]])
    sol = solve_cone_program([1.0, 2.0], G, [-1.0, 3.0, 10.0], {"l": 3, "q": []})
    assert sol.status == Status.SOLVED
    np.testing.assert_allclose(sol.x, [1.0, -3.0], atol=1e-8)
    np.testing.assert_allclose(sol.z, [1.0, 2.0, 0.0], atol=1e-8)


def test_second_order_cone_closed_form(rng):
    """minimize −aᵀx subject to ‖x‖ ≤ ρ: x = ρ a/‖a‖, objective −ρ‖a‖."""
    a, radius = rng.normal(size=5), 1.7
    G = np.vstack([np.zeros((1, 5)), -np.eye(5)])  # s = (ρ, x)
    sol = solve_cone_program(-a, G, np.r_[radius, np.zeros(5)], {"l": 0, "q": [6]})
    assert sol.status == Status.SOLVED
    np.testing.assert_allclose(sol.x, radius * a / np.linalg.norm(a), atol=1e-8)
    assert sol.primal_objective == pytest.approx(-radius * np.linalg.norm(a), rel=1e-9)


def test_iteration_limit_is_a_status_with_finite_output():
    rng = np.random.default_rng(7)
    c, G, h = random_program(rng, 6, 10, [3, 4, 2])
    for max_iter in (1, 2):
        sol = solve_cone_program(c, G, h, {"l": 10, "q": [3, 4, 2]}, settings=SolverSettings(max_iter=max_iter))
        assert sol.status == Status.MAX_ITERATIONS
        assert sol.iterations == max_iter
        for value in (sol.x, sol.s, sol.z, sol.primal_objective, sol.dual_objective):
            assert np.all(np.isfinite(value))


GOOD = dict(c=[1.0, 1.0], G=-np.eye(2), h=np.zeros(2), cones={"l": 2, "q": []})


@pytest.mark.parametrize(
    "change,argument",
    [
        (dict(G=-np.eye(3)), "G"),
        (dict(G=-np.ones(2)), "G"),
        (dict(c=np.ones((2, 1))), "c"),
        (dict(c=[1.0, 1.0, 1.0]), "G"),
        (dict(h=np.zeros(3)), "h"),
        (dict(cones={"l": 1, "q": []}), "cones"),
        (dict(cones={"l": 1, "q": [2]}), "cones"),
        (dict(cones={"l": -1, "q": [3]}), "cones"),
        (dict(cones={"l": 0, "q": [0, 2]}), "cones"),
        (dict(cones={"l": 2, "soc": []}), "cones"),
        (dict(c=[np.nan, 1.0]), "c"),
        (dict(G=np.array([[-1.0, np.inf], [0.0, -1.0]])), "G"),
        (dict(h=[0.0, -np.inf]), "h"),
    ],
)
def test_bad_input_raises_value_error(change, argument):
    with pytest.raises(ValueError, match=rf"(?<!\w){argument}(?!\w)"):
        solve_cone_program(**{**GOOD, **change})
