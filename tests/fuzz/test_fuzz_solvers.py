"""Fuzz of dcol.solvers: random LCPs (Lemke, Gauss–Seidel, interior point), boxed LCPs with friction,
mixed LCPs, contact NCPs and second-order cone programs, with their data scaled by 1e-300 … 1e300.

Problems are built with a planted solution where the class has one (b = w* − A f* for complementary
f*, w* ≥ 0; the MLCP's and the cone program's data from a primal-dual pair), so a claim that there is
none is a wrong answer. Every answer with the status SOLVED is checked by the residuals of
tests/support/fuzz.py, computed here from the problem data, and, where the solution is unique (A a
P-matrix), against the planted one. A problem and its data multiplied by one factor have the same
solution (impulses) or one scaled by the factor (slacks): the checks are without units.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dcol.solvers import (
    LCPStatus,
    Status,
    solve_boxed_lcp,
    solve_cone_program,
    solve_contact_ncp,
    solve_lcp,
    solve_mlcp,
)
from dcol.solvers.cone import MAX_VARIABLES
from tests.solvers.test_cone_solver import assert_optimal, clarabel_solution
from tests.support.fuzz import (
    boxed_lcp_violation,
    finite,
    fuzz_settings,
    lcp_violation,
    mlcp_violation,
    ncp_violation,
    record,
    seeds,
)

# Data scales: ordinary, moderate and across the whole double range.
data_exponents = st.one_of(st.just(0.0), st.floats(-20.0, 20.0), st.floats(-300.0, 300.0))


def quietly(solve, *args, **kwargs):
    """solve(...) with its iteration-limit RuntimeWarnings silenced: the status is what is checked."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return solve(*args, **kwargs)


def planted_complementary(rng, n, strict=False):
    """f*, w* ≥ 0 of order one with f*_i w*_i = 0, each index in one of the two supports at random
    (unless strict, some in neither: degenerate, both zero)."""
    which = rng.integers(2 if strict else 3, size=n)  # 0: f > 0, 1: w > 0, 2: both zero
    f = np.where(which == 0, rng.uniform(0.1, 2.0, n), 0.0)
    w = np.where(which == 1, rng.uniform(0.1, 2.0, n), 0.0)
    return f, w


def lcp_matrix(rng, n, kind):
    """A random A of the class: "spd" (a P-matrix: unique solution), "pd" (A + Aᵀ ≻ 0, not symmetric:
    a P-matrix too), "psd" (symmetric, rank deficient) or "monotone" (A + Aᵀ ⪰ 0, rank deficient)."""
    if kind in ("spd", "pd"):
        B = rng.normal(size=(n, n))
        A = B @ B.T + 0.1 * n * np.eye(n)
    else:
        B = rng.normal(size=(n, int(rng.integers(1, n + 1))))
        A = B @ B.T
    if kind in ("pd", "monotone"):
        K = rng.normal(size=(n, n))
        A = A + (K - K.T)
    return A


@fuzz_settings(short=60)
@given(
    n=st.integers(1, 12),
    kind=st.sampled_from(["spd", "pd", "psd", "monotone"]),
    method=st.sampled_from(["lemke", "pgs", "ipm"]),
    seed=seeds,
    e_A=data_exponents,
    e_shift=st.one_of(st.just(0.0), st.floats(-20.0, 20.0)),
)
def test_lcp(n, kind, method, seed, e_A, e_shift):
    """w = A f + b with a planted solution; data A·10^e_A, b·10^(e_A + e_shift), so f scales by 10^e_shift."""
    rng = np.random.default_rng(seed)
    A = lcp_matrix(rng, n, kind)
    f_star, w_star = planted_complementary(rng, n)
    b = w_star - A @ f_star
    e_b = float(np.clip(e_A + e_shift, -300.0, 300.0))
    A_s, b_s = A * 10.0**e_A, b * 10.0**e_b
    family = f"solvers, LCP {method}"
    if method == "pgs" and not np.array_equal(A, A.T):  # Gauss–Seidel takes symmetric A only
        try:
            solve_lcp(A_s, b_s, method=method)
        except ValueError:
            return record(family, "error")
        return record(family, "wrong", f"Gauss–Seidel took a non-symmetric A: kind={kind} seed={seed} A·1e{e_A}")
    detail = f"kind={kind} n={n} seed={seed} A·1e{e_A:.2f} b·1e{e_b:.2f}"
    sol = quietly(solve_lcp, A_s, b_s, method=method)
    if sol.status == LCPStatus.UNSOLVABLE:
        return record(family, "wrong", f"UNSOLVABLE, but f* = {f_star} solves it: {detail}")
    if sol.status != LCPStatus.SOLVED:
        ordinary = abs(e_A) <= 3 and abs(e_b) <= 3 and kind == "spd" and method != "pgs"
        return record(family, "wrong" if ordinary else "status", f"{sol.status.name} on an ordinary LCP: {detail}")
    if not finite(sol.f, sol.w):
        return record(family, "nan", f"SOLVED with f = {sol.f}: {detail}")
    violation = lcp_violation(A_s, b_s, sol.f)
    problems = [f"complementarity violated by {violation:.3g}"] if violation > 1e-6 else []
    if kind in ("spd", "pd"):  # a P-matrix: the solution is unique
        expected = f_star * 10.0 ** (e_b - e_A)
        if np.abs(sol.f - expected).max() > 1e-6 * np.abs(expected).max(initial=0.0) + 1e-300:
            problems.append(f"f = {sol.f}, unique solution {expected}")
    record(family, "wrong" if problems else "ok", "; ".join(problems) + " — " + detail)


def test_ipm_solves_badly_scaled_data_to_complementarity():
    """A planted monotone LCP (n = 11, seed 316, found by the long fuzz profile) with A·1e6 and b·1e-1,
    so that f is about 1e-7. The interior point stopped on sᵀz/m ≤ 1e-10 in the caller's units, which
    for w of order 0.1 lets f sit 1e-9 off zero, a hundredth of its own size: it reported SOLVED while
    the solution violated complementarity by 1.7e-3 in lcp_violation's scale-free measure (the problem
    scaled to A's largest entry, f and w against the sizes of f and b), and the sets it handed to the
    stabilization were wrong. Checked here by that measure, computed from the data: solved, and without
    the stabilization (the interior point's own iterate, its degenerate pairs resolved to about √tol)
    SOLVED only within it."""
    rng = np.random.default_rng(316)
    A = lcp_matrix(rng, 11, "monotone")
    f_star, w_star = planted_complementary(rng, 11)
    A_s, b_s = A * 1e6, (w_star - A @ f_star) * 1e-1
    sol = solve_lcp(A_s, b_s, method="ipm")
    assert sol.status == LCPStatus.SOLVED and lcp_violation(A_s, b_s, sol.f) <= 1e-6
    sol = solve_lcp(A_s, b_s, method="ipm", stabilize=False)
    assert (sol.status == LCPStatus.SOLVED) == (lcp_violation(A_s, b_s, sol.f) <= 1e-6)


def test_lemke_solves_tiny_data():
    """[[2, 1], [1, 2]] f − [1, 1] has the solution f = [1/3, 1/3] at any scale of its data (Lemke said
    UNSOLVABLE at 1e-13: its pivot tolerance was absolute)."""
    sol = solve_lcp(1e-13 * np.array([[2.0, 1.0], [1.0, 2.0]]), -1e-13 * np.ones(2))
    assert sol.status == LCPStatus.SOLVED
    np.testing.assert_allclose(sol.f, [1 / 3, 1 / 3], rtol=1e-9)


def test_lemke_right_for_large_data():
    """Planted LCPs, positive semidefinite (n = 12, rank deficient) and monotone (n = 11), solved as they
    are and with their data multiplied by 1e11 and 1e6 (which once gave SOLVED with a wrong f)."""
    for seed, n, kind, scale in ((98, 12, "psd", 1e11), (450, 11, "monotone", 1e6)):
        rng = np.random.default_rng(seed)
        A = lcp_matrix(rng, n, kind)
        f, w = planted_complementary(rng, n)
        b = w - A @ f
        assert lcp_violation(A, b, solve_lcp(A, b).f) < 1e-12
        sol = solve_lcp(scale * A, scale * b)
        assert sol.status == LCPStatus.SOLVED and lcp_violation(scale * A, scale * b, sol.f) < 1e-9


def test_lcp_right_for_tiny_b():
    """b ≥ 0, so f = 0 solves it whatever b's scale (with b of order 1e-9 the stabilization once returned
    a negative f); and a P-matrix LCP with b multiplied by 1e-8 has f multiplied by 1e-8 (which the
    interior point once missed)."""
    A = np.array([[0.50900711, 1.19818221], [1.19818221, 6.33138447]])
    b = 1e-9 * np.array([0.20477859, 0.6224418])
    sol = solve_lcp(A, b)
    assert sol.status == LCPStatus.SOLVED and np.all(sol.f == 0.0)
    rng = np.random.default_rng(5)
    B = rng.normal(size=(6, 6))
    A, b = B @ B.T + 0.1 * np.eye(6), rng.normal(size=6)
    reference = solve_lcp(A, b, method="lemke")
    sol = solve_lcp(A, 1e-8 * b, method="ipm")
    assert reference.status == LCPStatus.SOLVED
    assert sol.status == LCPStatus.SOLVED and np.abs(sol.f - 1e-8 * reference.f).max() < 1e-6 * 1e-8


@fuzz_settings(short=30)
@given(contacts=st.integers(1, 5), seed=seeds, e=data_exponents, friction=st.booleans(), mu=st.floats(0.0, 2.0))
def test_boxed_lcp(contacts, seed, e, friction, mu):
    """Contact-like boxed LCPs: per contact a normal row (f ≥ 0) and two tangent rows, bounded by ±μ
    times the normal impulse (friction) or by fixed random bounds, some infinite; A = J Jᵀ + δ I. The
    data A·10^e, b·10^e have the same solution."""
    rng = np.random.default_rng(seed)
    n = 3 * contacts
    J = rng.normal(size=(n, int(rng.integers(1, n + 3))))
    A = J @ J.T + 1e-3 * np.eye(n)
    b = rng.normal(size=n)
    lo, hi = np.zeros(n), np.full(n, np.inf)
    tangents = np.flatnonzero(np.arange(n) % 3 != 0)
    lo[tangents] = np.where(rng.random(tangents.size) < 0.2, -np.inf, -rng.uniform(0.1, 2.0, tangents.size))
    hi[tangents] = np.where(rng.random(tangents.size) < 0.2, np.inf, rng.uniform(0.1, 2.0, tangents.size))
    kwargs = {}
    if friction:
        index = np.where(np.arange(n) % 3 == 0, -1, 3 * (np.arange(n) // 3))
        kwargs = {"friction_index": index, "mu": np.full(n, mu)}
    c = 10.0**e
    family = "solvers, boxed LCP"
    sol = quietly(solve_boxed_lcp, c * A, c * b, lo, hi, **kwargs)
    if sol.status != LCPStatus.SOLVED:
        return record(family, "status")
    if not finite(sol.f, sol.w):
        return record(family, "nan", f"SOLVED with f = {sol.f}")
    violation = boxed_lcp_violation(c * A, c * b, lo, hi, sol.f, kwargs.get("friction_index"), kwargs.get("mu"))
    detail = f"contacts={contacts} seed={seed} friction={friction} mu={mu!r} scale 1e{e:.2f}"
    record(family, "wrong" if violation > 1e-6 else "ok", f"violation {violation:.3g}: {detail}")


def test_pgs_right_for_tiny_data():
    """A P-matrix LCP (n = 12) and a boxed LCP whose solutions do not depend on the scale of A and b,
    solved with both multiplied by 1e-10 (once SOLVED with a wrong f: the tolerances were absolute)."""
    rng = np.random.default_rng(0)
    A = lcp_matrix(rng, 12, "spd")
    f, w = planted_complementary(rng, 12)
    b = w - A @ f
    sol = solve_lcp(1e-10 * A, 1e-10 * b, method="pgs")
    assert sol.status == LCPStatus.SOLVED and np.abs(sol.f - f).max() < 1e-6
    A = np.array(
        [
            [2.48346381, 1.59109001, 0.21462452],
            [1.59109001, 1.30823828, 0.53091914],
            [0.21462452, 0.53091914, 0.55812521],
        ]
    )
    b = np.array([0.02842224, 0.54671299, -0.73645409])
    lo, hi = np.array([0.0, -0.96164599, -0.35467922]), np.array([np.inf, 0.59839535, 1.52569288])
    reference = solve_boxed_lcp(A, b, lo, hi)
    assert reference.status == LCPStatus.SOLVED and boxed_lcp_violation(A, b, lo, hi, reference.f) < 1e-9
    sol = solve_boxed_lcp(1e-10 * A, 1e-10 * b, lo, hi)
    assert sol.status == LCPStatus.SOLVED and np.abs(sol.f - reference.f).max() < 1e-6


def test_symmetry_check_is_relative():
    """Gauss–Seidel needs a symmetric A; [[0.23, −0.88], [1.0, 0.62]] is refused, at 1e-13 too (an
    absolute floor once let it pass)."""
    A = np.array([[0.23325978, -0.87574232], [1.00906766, 0.62114521]])
    with pytest.raises(ValueError, match="symmetric"):
        solve_lcp(A, np.ones(2), method="pgs")
    with pytest.raises(ValueError, match="symmetric"):
        solve_lcp(1e-13 * A, np.ones(2), method="pgs")


@fuzz_settings(short=40)
@given(
    n=st.integers(1, 6),
    m=st.integers(0, 6),
    p=st.integers(0, 3),
    seed=seeds,
    e=data_exponents,
    singular=st.booleans(),
)
def test_mlcp(n, m, p, seed, e, singular):
    """M x + Aᵀy + Gᵀz + q = 0, A x = 0, G x + F z + s = h, s, z ≥ 0 complementary, from a planted
    solution (strictly complementary: an interior point ends a degenerate pair, z = s = 0, only at the
    square root of its tolerance), M symmetric positive definite (or singular), F = −C Cᵀ ⪯ 0 (a
    monotone problem); all data multiplied by 10^e, which keeps x, y, z and multiplies s by it."""
    rng = np.random.default_rng(seed)
    p = min(p, n - 1)
    B = rng.normal(size=(n, n - 1 if singular and n > 1 else n))
    M = B @ B.T + (0.0 if singular else 0.1 * np.eye(n))
    A = rng.normal(size=(p, n))
    x = rng.normal(size=n)
    if p:
        x -= np.linalg.pinv(A) @ (A @ x)  # in A's null space
    y = rng.normal(size=p)
    z, s = planted_complementary(rng, m, strict=True)
    G = rng.normal(size=(m, n))
    C = rng.normal(size=(m, m))
    F = -rng.uniform(0.0, 1.0) * C @ C.T
    q = -(M @ x + A.T @ y + G.T @ z)
    h = G @ x + F @ z + s
    c = 10.0**e
    family = "solvers, MLCP"
    sol = quietly(solve_mlcp, c * M, c * q, c * G, c * F, c * h, A=c * A if p else None)
    if sol.status != LCPStatus.SOLVED:
        # A singular M may leave the interior point's Newton systems singular: INVALID_PROBLEM.
        return record(family, "status")
    # The interior point's tolerance is absolute: its answers lose digits as the data shrink below one.
    if not finite(sol.x, sol.y, sol.z, sol.s):
        return record(family, "nan", f"SOLVED with x = {sol.x}")
    violation = mlcp_violation(M, q, G, F, h, sol.x, sol.z, sol.s / c, A if p else None, sol.y)
    detail = f"n={n} m={m} p={p} seed={seed} singular={singular} scale 1e{e:.2f}"
    record(family, "wrong" if violation > 1e-6 else "ok", f"violation {violation:.3g}: {detail}")


@fuzz_settings(short=40)
@given(
    contacts=st.integers(1, 5),
    rank=st.integers(1, 17),
    seed=seeds,
    e_G=data_exponents,
    e_shift=st.one_of(st.just(0.0), st.floats(-10.0, 10.0)),
    frictionless=st.booleans(),
)
def test_contact_ncp(contacts, rank, seed, e_G, e_shift, frictionless):
    """Delassus matrices G = J Jᵀ of any rank, free velocities g, μ in [0, 1.5]; data G·10^e_G and
    g·10^(e_G + e_shift), which scales λ by 10^e_shift."""
    rng = np.random.default_rng(seed)
    n = 3 * contacts
    J = rng.normal(size=(n, min(rank, n + 2)))
    G, g = J @ J.T, rng.normal(size=n)
    mu = np.zeros(contacts) if frictionless else rng.uniform(0.0, 1.5, contacts)
    e_g = float(np.clip(e_G + e_shift, -300.0, 300.0))
    family = "solvers, contact NCP"
    sol = quietly(solve_contact_ncp, G * 10.0**e_G, g * 10.0**e_g, mu)
    if sol.status != LCPStatus.SOLVED:
        return record(family, "status")
    if not finite(sol.impulses, sol.velocities):
        return record(family, "nan", f"SOLVED with λ = {sol.impulses}")
    violation = ncp_violation(G * 10.0**e_G, g * 10.0**e_g, mu, sol.impulses)
    detail = f"contacts={contacts} rank={rank} seed={seed} G·1e{e_G:.2f} g·1e{e_g:.2f}"
    record(family, "wrong" if violation > 1e-5 else "ok", f"violation {violation:.3g}: {detail}")


def test_ncp_normal_impulses_nonnegative_without_friction():
    """Two frictionless contacts, G = J Jᵀ of rank 2 (seeded): with μ = 0 the cone ‖λ_t‖ ≤ μ λ_n is the
    ray λ_t = 0, λ_n ≥ 0 (its projection once kept a normal impulse of −0.35)."""
    rng = np.random.default_rng(238272)
    J = rng.normal(size=(6, 2))
    G, g = J @ J.T, rng.normal(size=6)
    sol = solve_contact_ncp(G, g, 0.0)
    assert sol.status == LCPStatus.SOLVED and sol.impulses[2::3].min() >= 0.0
    assert ncp_violation(G, g, 0.0, sol.impulses) < 1e-9


def test_ncp_run_off_is_not_solved():
    """Two contacts with friction, G = J Jᵀ of rank 4 (seeded as the fuzz test draws it). With a penalty
    a tenth of G's largest eigenvalue ADMM runs off along G's null space: once SOLVED with impulses of
    1e154 (the residual overflowed to NaN and was dropped); then the iteration limit, with the finite
    iterate of smallest residual. Now a run that runs off stops early (within 400 iterations), and
    the last run (the De Saxcé term held while ADMM settles) solves the problem. With the default
    penalty it converges to a solution."""
    rng = np.random.default_rng(254)
    contacts = int(rng.integers(1, 6))
    rank = int(rng.integers(1, 3 * contacts + 3))
    J = rng.normal(size=(3 * contacts, rank))
    G, g = J @ J.T, rng.normal(size=3 * contacts)
    mu = rng.uniform(0.0, 1.5, contacts)
    sol = solve_contact_ncp(G, g, mu, rho=0.1 * np.linalg.eigvalsh(G).max())
    assert sol.status == LCPStatus.SOLVED
    assert np.abs(sol.impulses).max() < 1e3 and ncp_violation(G, g, mu, sol.impulses) < 1e-9
    sol = solve_contact_ncp(G, g, mu)
    assert sol.status == LCPStatus.SOLVED and ncp_violation(G, g, mu, sol.impulses) < 1e-9


def test_ncp_right_for_tiny_g():
    """One contact pressed into the ground with friction; g multiplied by 1e-8 multiplies λ by 1e-8 (a
    free velocity of 10 nm/s, as at a contact coming to rest; the tolerance was once absolute)."""
    G = np.array([[2.0, 0.0, 0.5], [0.0, 2.0, 0.0], [0.5, 0.0, 1.0]])
    g = np.array([0.3, 0.0, -1.0])
    reference = solve_contact_ncp(G, g, 0.5)
    sol = solve_contact_ncp(G, 1e-8 * g, 0.5)
    assert reference.status == sol.status == LCPStatus.SOLVED
    assert ncp_violation(G, 1e-8 * g, 0.5, sol.impulses) < 1e-9
    np.testing.assert_allclose(sol.impulses, 1e-8 * reference.impulses, rtol=1e-8, atol=1e-16)


def test_ncp_does_not_depend_on_units():
    """Three contacts, G = J Jᵀ of rank 4 and g, solved as they are and multiplied by 1e4 and 1e-4 (the
    same λ; at 1e4 once SOLVED with the cone and complementarity badly violated). And five contacts on
    a Delassus matrix of rank one, which ADMM does not solve: with g multiplied by 1e9 (once SOLVED,
    yet violated) it says so too."""
    rng = np.random.default_rng(8)
    n = 3 * int(rng.integers(1, 5))
    J = rng.normal(size=(n, int(rng.integers(1, n + 3))))
    G, g, mu = J @ J.T, rng.normal(size=n), rng.uniform(0.0, 1.5, n // 3)
    reference = solve_contact_ncp(G, g, mu)
    assert reference.status == LCPStatus.SOLVED and ncp_violation(G, g, mu, reference.impulses) < 1e-9
    for scale in (1e4, 1e-4):
        sol = solve_contact_ncp(scale * G, scale * g, mu)
        assert sol.status == LCPStatus.SOLVED and ncp_violation(scale * G, scale * g, mu, sol.impulses) < 1e-9
        np.testing.assert_allclose(sol.impulses, reference.impulses, rtol=1e-6, atol=1e-9)
    rng = np.random.default_rng(4294967295)
    J = rng.normal(size=(15, 1))
    G, g, mu = J @ J.T, rng.normal(size=15), rng.uniform(0.0, 1.5, 5)
    for scale in (1.0, 1e9):
        sol = solve_contact_ncp(G, scale * g, mu)
        assert sol.status == LCPStatus.ITERATION_LIMIT and np.isfinite(sol.impulses).all()
        assert sol.residual > 1e-3


def test_mlcp_tolerance_is_relative():
    """2 x + z − 2 = 0, x − z + s = −0.5, z, s ≥ 0: x = 0.5, z = 1, s = 0 at any scale of the data (at
    1e-5 the returned s was once far from zero relative to the data's size)."""
    M, G, F = np.array([[2.0]]), np.array([[1.0]]), np.array([[-1.0]])
    q, h = np.array([-2.0]), np.array([-0.5])
    sol = solve_mlcp(1e-5 * M, 1e-5 * q, 1e-5 * G, 1e-5 * F, 1e-5 * h)
    assert sol.status == LCPStatus.SOLVED and mlcp_violation(M, q, G, F, h, sol.x, sol.z, sol.s / 1e-5) < 1e-9


def test_cone_tolerances_hold_for_small_data():
    """A planted program (one orthant row, one cone of size 1) whose optimum is the same with c
    multiplied by 1e-4 (the solve once stopped at a gap of 1e-8 absolute, far from it relatively)."""
    c, G, h, optimum = planted_cone_program(np.random.default_rng(0), 1, 1, [1])
    assert solve_cone_program(c, G, h, {"l": 1, "q": [1]}).primal_objective == pytest.approx(optimum, rel=1e-8)
    sol = solve_cone_program(1e-4 * c, G, h, {"l": 1, "q": [1]})
    assert sol.status == Status.SOLVED and c @ sol.x == pytest.approx(optimum, rel=1e-6)


def test_cone_program_with_square_G():
    """Six variables, four orthant rows and a cone of size 2 (G 6 × 6, condition number 11), with a
    planted optimum that Clarabel finds. With G square the least-squares start's s = h − G x is zero up
    to rounding, on the cone's boundary: the solve once started there and stopped at iteration 0 with
    NUMERICAL_ERROR."""
    c, G, h, optimum = planted_cone_program(np.random.default_rng(340), 6, 4, [2])
    sol = solve_cone_program(c, G, h, {"l": 4, "q": [2]})
    assert sol.status == Status.SOLVED and sol.primal_objective == pytest.approx(optimum, rel=1e-6)
    assert clarabel_solution(c, G, h, 4, [2])[0] == pytest.approx(optimum, rel=1e-6)


@pytest.mark.parametrize("seed", range(12))
def test_cone_programs_with_square_G(seed):
    """Square G of 1–8 variables whose rows are split at random into orthant rows and cones, with a
    planted optimum that Clarabel finds too: SOLVED there, its KKT conditions met."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 9))
    cuts = np.sort(rng.choice(np.arange(1, n), size=int(rng.integers(0, n)), replace=False))
    parts = np.diff(np.r_[0, cuts, n]).tolist()
    orthant, sizes = (parts[0], parts[1:]) if rng.integers(2) else (0, parts)
    c, G, h, optimum = planted_cone_program(rng, n, orthant, sizes)
    assert G.shape == (n, n)
    reference, _ = clarabel_solution(c, G, h, orthant, sizes)
    assert reference == pytest.approx(optimum, rel=1e-7, abs=1e-7)
    assert_optimal(solve_cone_program(c, G, h, {"l": orthant, "q": sizes}), c, G, h, orthant, sizes, optimum)


def planted_cone_program(rng, n, orthant, sizes):
    """c, G, h of a cone program min cᵀx, h − G x ∈ K whose optimum is a planted (x*, s*, z*): s*, z* ∈ K
    with s*ᵀz* = 0 block by block, h = G x* + s*, c = −Gᵀz*. Returns (c, G, h, cᵀx*)."""
    s_parts, z_parts = [], []
    f, w = planted_complementary(rng, orthant)
    s_parts.append(f)
    z_parts.append(w)
    for size in sizes:
        d = rng.normal(size=size - 1)
        d = d / np.linalg.norm(d) if size > 1 and np.linalg.norm(d) > 0 else d
        case = rng.integers(3)
        if size == 1 or case == 0:  # s* interior, z* = 0
            t = rng.normal(size=size - 1)
            s_parts.append(np.r_[np.linalg.norm(t) + rng.uniform(0.1, 1.0), t])
            z_parts.append(np.zeros(size))
        elif case == 1:  # z* interior, s* = 0
            t = rng.normal(size=size - 1)
            s_parts.append(np.zeros(size))
            z_parts.append(np.r_[np.linalg.norm(t) + rng.uniform(0.1, 1.0), t])
        else:  # both on the boundary, opposite
            s_parts.append(rng.uniform(0.1, 2.0) * np.r_[1.0, d])
            z_parts.append(rng.uniform(0.1, 2.0) * np.r_[1.0, -d])
    s, z = np.concatenate(s_parts), np.concatenate(z_parts)
    if not z.any():  # c = 0 would leave a feasibility problem, without a scale for z: make one active
        k = 1 if orthant else sizes[0]
        s[:k], z[:k] = 0.0, np.eye(k)[0]
    G = rng.normal(size=(s.size, n))
    x = rng.normal(size=n)
    return -G.T @ z, G, G @ x + s, float(-(G.T @ z) @ x)


@fuzz_settings(short=40)
@given(
    n=st.integers(1, 8),
    orthant=st.integers(0, 10),
    sizes=st.lists(st.integers(1, 6), max_size=4),
    seed=seeds,
    e_c=st.one_of(st.just(0.0), st.floats(-20.0, 20.0)),
    e_G=st.one_of(st.just(0.0), st.floats(-20.0, 20.0)),
)
def test_cone_program(n, orthant, sizes, seed, e_c, e_G):
    """Planted optimum; c·10^e_c and (G, h)·10^e_G (x* stays optimal). SOLVED must come with the optimal
    value, s, z in the cone and c + Gᵀz = 0."""
    m = orthant + sum(sizes)
    if m < n:  # G must have full column rank
        orthant += n - m
    rng = np.random.default_rng(seed)
    c, G, h, optimum = planted_cone_program(rng, min(n, MAX_VARIABLES), orthant, sizes)
    family = "solvers, cone program"
    sol = solve_cone_program(c * 10.0**e_c, G * 10.0**e_G, h * 10.0**e_G, {"l": orthant, "q": sizes})
    if sol.status != Status.SOLVED:
        # A planted optimum may be degenerate (s* and z* both zero in a row): SOLVED_INACCURATE is
        # honest there; failing outright on an unscaled program is not.
        failed = sol.status not in (Status.SOLVED_INACCURATE, Status.SMOOTHED)
        ordinary = e_c == 0.0 and e_G == 0.0
        outcome = "wrong" if ordinary and failed else "status"
        return record(family, outcome, f"{sol.status.name} on an ordinary program: seed={seed}")
    if not finite(sol.x, sol.s, sol.z, sol.primal_objective):
        return record(family, "nan", f"SOLVED with x = {sol.x}")
    # In the problem's own units: x* is unchanged by the scalings, s by 10^e_G, z by 10^(e_c − e_G).
    s, z = sol.s / 10.0**e_G, sol.z / 10.0 ** (e_c - e_G)
    size = max(1.0, np.abs(h).max(), np.abs(G).max() * np.abs(sol.x).max())
    problems = []
    if abs(c @ sol.x - optimum) > 1e-6 * max(1.0, abs(optimum), np.abs(c).max() * np.abs(sol.x).max()):
        problems.append(f"objective {c @ sol.x!r}, optimum {optimum!r}")
    if np.abs(c + G.T @ z).max() > 1e-6 * max(np.abs(c).max(), np.abs(G).max() * np.abs(z).max()):
        problems.append("c + Gᵀz ≠ 0")
    start = orthant
    violation = max(-s[:orthant].min(initial=0.0), -z[:orthant].min(initial=0.0))
    for k in sizes:
        for v in (s[start : start + k], z[start : start + k]):
            violation = max(violation, np.linalg.norm(v[1:]) - v[0])
        start += k
    if violation > 1e-6 * size:
        problems.append(f"s or z outside the cone by {violation:.3g}")
    detail = f"n={n} l={orthant} q={sizes} seed={seed} c·1e{e_c:.2f} G·1e{e_G:.2f}"
    record(family, "wrong" if problems else "ok", "; ".join(problems) + " — " + detail)
