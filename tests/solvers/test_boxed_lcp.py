"""Boxed LCPs (fixed bounds and Coulomb friction bounds, Nimble App. A) and their gradients against
the box-constrained QP in cvxpy/Clarabel, closed forms and central differences."""

import warnings

import numpy as np
import pytest

from dcol.solvers import LCPStatus, lcp_jacobian, lcp_jvp, lcp_vjp, solve_boxed_lcp, solve_lcp
from tests.support.optional import oracle

cp = oracle("cvxpy")


def box_qp(A, b, lo, hi):
    """min ½ fᵀAf + bᵀf s.t. lo ≤ f ≤ hi: its KKT conditions are the boxed LCP."""
    f = cp.Variable(b.size)
    constraints = [f[i] >= lo[i] for i in range(b.size) if np.isfinite(lo[i])]
    constraints += [f[i] <= hi[i] for i in range(b.size) if np.isfinite(hi[i])]
    problem = cp.Problem(cp.Minimize(0.5 * cp.quad_form(f, cp.psd_wrap(A)) + b @ f), constraints)
    problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return f.value


def random_box_problem(rng, n):
    J = rng.normal(size=(n, n + 2))
    lo = -rng.uniform(0.1, 1.0, n)
    hi = rng.uniform(0.1, 1.0, n)
    lo[::5], hi[1::5] = -np.inf, np.inf
    return J @ J.T + 1e-2 * np.eye(n), 3.0 * rng.normal(size=n), lo, hi


def contact_problem(rng, contacts, mu=0.6, rigid=False):
    """Normal + two friction directions per contact of a random body; normals at 0, 3, 6, … With
    rigid, A = J M⁻¹ Jᵀ of rank 6 at most and b = J v, the contact velocities of a motion v of the
    body; else A + 10⁻³ I and b random with every contact approaching."""
    n = 3 * contacts
    J = rng.normal(size=(n, 6))
    M_inv = np.diag(rng.uniform(0.5, 2.0, 6))
    A = J @ M_inv @ J.T + (0.0 if rigid else 1e-3) * np.eye(n)
    normals = np.arange(0, n, 3)
    b = J @ rng.normal(size=6) if rigid else rng.normal(size=n)
    if not rigid:
        b[normals] = -np.abs(b[normals]) - 0.5  # approaching contacts
    lo, hi = np.zeros(n), np.full(n, np.inf)
    friction_index = np.full(n, -1)
    for k in normals:
        friction_index[k + 1 : k + 3] = k
    return A, b, lo, hi, friction_index, np.full(n, mu)


@pytest.mark.parametrize("n", [1, 5, 30, 100])
def test_fixed_bounds_match_the_box_qp(n):
    rng = np.random.default_rng(n)
    A, b, lo, hi = random_box_problem(rng, n)
    solution = solve_boxed_lcp(A, b, lo, hi, tol=1e-12, max_iterations=100000)
    assert solution.status == LCPStatus.SOLVED
    assert solution.residual <= 1e-9 * max(1.0, np.abs(A).max())
    reference = box_qp(A, b, lo, hi)
    assert np.allclose(solution.f, reference, atol=1e-6)


@pytest.mark.parametrize("v_tangent, sticking", [((0.1, -0.05), True), ((2.0, 0.3), False)])
def test_point_mass_friction_closed_form(v_tangent, sticking):
    """A point mass m hitting the ground: the normal impulse stops it, f_n = −m v_n; each friction
    direction stops its velocity, −m v_t, unless that exceeds μ f_n (box friction)."""
    m, mu, v_n = 2.0, 0.5, -1.0
    A = np.eye(3) / m
    b = np.array([v_n, *v_tangent])
    solution = solve_boxed_lcp(A, b, [0, 0, 0], [np.inf] * 2 + [np.inf], friction_index=[-1, 0, 0], mu=[0, mu, mu])
    f_n = -m * v_n
    expected = np.r_[f_n, np.clip(-m * np.asarray(v_tangent), -mu * f_n, mu * f_n)]
    assert np.allclose(solution.f, expected, rtol=1e-12)
    assert solution.clamping[1] == sticking
    # Sliding: the friction impulse is μ f_n, and its derivative with respect to μ is f_n.
    if not sticking:
        df = lcp_jvp(solution, A, np.zeros((3, 3)), np.zeros(3), dmu=[0, 1, 0])
        assert np.isclose(df[1], -np.sign(v_tangent[0]) * f_n)


def random_direction(rng, n):
    return rng.normal(size=(n, n)), rng.normal(size=n), rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)


def strictly_differentiable_contacts(rng, contacts):
    """A contact problem whose indices are clear of their set boundaries, with both sliding and
    sticking friction."""
    while True:
        problem = contact_problem(rng, contacts)
        A, b, lo, hi, friction_index, mu = problem
        solution = solve_boxed_lcp(A, b, lo, hi, friction_index=friction_index, mu=mu, tol=1e-13, max_iterations=100000)
        low, high = solution.bounds.at(solution.f)
        margin = np.where(solution.clamping, np.minimum(solution.f - low, high - solution.f), np.abs(solution.w))
        bounded_friction = (solution.at_lower | solution.at_upper) & (friction_index >= 0)
        if (
            solution.status == LCPStatus.SOLVED
            and margin.min() > 1e-3
            and bounded_friction.any()
            and (solution.clamping & (friction_index >= 0)).any()
        ):
            return problem, solution


@pytest.mark.parametrize("contacts", [2, 4])
def test_friction_gradients_match_central_differences(contacts):
    rng = np.random.default_rng(20 + contacts)
    (A, b, lo, hi, friction_index, mu), solution = strictly_differentiable_contacts(rng, contacts)
    n = b.size
    dA, db, _, _, dmu = random_direction(rng, n)
    dA = dA + dA.T  # keep A symmetric for Gauss–Seidel
    dmu[friction_index < 0] = 0.0
    eps = 1e-6

    def solve(t):
        return solve_boxed_lcp(
            A + t * dA,
            b + t * db,
            lo,
            hi,
            friction_index=friction_index,
            mu=mu + t * dmu,
            tol=1e-14,
            max_iterations=200000,
        ).f

    expected = (solve(eps) - solve(-eps)) / (2 * eps)
    df = lcp_jvp(solution, A, dA, db, dmu=dmu)
    assert np.allclose(df, expected, atol=1e-6 * max(1.0, np.abs(expected).max()))


def test_fixed_bound_gradients_match_central_differences():
    rng = np.random.default_rng(5)
    n = 12
    A, b, lo, hi = random_box_problem(rng, n)
    solution = solve_boxed_lcp(A, b, lo, hi, tol=1e-13, max_iterations=100000)
    assert (solution.at_lower | solution.at_upper).any() and solution.clamping.any()
    dA, db, dlo, dhi, _ = random_direction(rng, n)
    dA = dA + dA.T
    dlo[~np.isfinite(lo)] = 0.0
    dhi[~np.isfinite(hi)] = 0.0
    eps = 1e-6

    def solve(t):
        return solve_boxed_lcp(A + t * dA, b + t * db, lo + t * dlo, hi + t * dhi, tol=1e-14, max_iterations=200000).f

    expected = (solve(eps) - solve(-eps)) / (2 * eps)
    assert np.allclose(lcp_jvp(solution, A, dA, db, dlo, dhi), expected, atol=1e-6 * max(1.0, np.abs(expected).max()))


def test_vjp_and_jacobian_are_the_transpose_of_jvp():
    rng = np.random.default_rng(9)
    (A, b, lo, hi, friction_index, mu), solution = strictly_differentiable_contacts(rng, 3)
    n = b.size
    dA, db, dlo, dhi, dmu = random_direction(rng, n)
    grad_f = rng.normal(size=n)
    df = lcp_jvp(solution, A, dA, db, dlo, dhi, dmu)
    grad = lcp_vjp(solution, A, grad_f)
    pairing = np.sum(grad.A * dA) + grad.b @ db + grad.lo @ dlo + grad.hi @ dhi + grad.mu @ dmu
    assert np.isclose(grad_f @ df, pairing, rtol=1e-10)
    jacobian = lcp_jacobian(solution, A)
    assert np.allclose(
        np.einsum("kij,ij->k", jacobian.A, dA)
        + jacobian.b @ db
        + jacobian.lo @ dlo
        + jacobian.hi @ dhi
        + jacobian.mu @ dmu,
        df,
        atol=1e-12,
    )


def test_warm_start_for_friction_problems():
    rng = np.random.default_rng(13)
    A, b, lo, hi, friction_index, mu = contact_problem(rng, 5)
    previous, hits, steps = None, 0, 100
    for step in range(steps):
        b_step = b + 1e-4 * step
        kwargs = dict(friction_index=friction_index, mu=mu, tol=1e-12, max_iterations=100000)
        warm = solve_boxed_lcp(A, b_step, lo, hi, warm_start=previous, **kwargs)
        cold = solve_boxed_lcp(A, b_step, lo, hi, **kwargs)
        hits += warm.warm_start_hit
        assert np.allclose(warm.f, cold.f, atol=1e-8)
        previous = warm
    assert hits >= 0.9 * steps


def test_bad_bounds_are_named():
    A, b = np.eye(2), np.ones(2)
    with pytest.raises(ValueError, match="lo must be ≤ hi"):
        solve_boxed_lcp(A, b, [1, 0], [0, 1])
    with pytest.raises(ValueError, match="friction_index"):
        solve_boxed_lcp(A, b, [0, 0], [1, 1], friction_index=[1, 0], mu=[0.5, 0.5])
    with pytest.raises(ValueError, match="mu"):
        solve_boxed_lcp(A, b, [0, 0], [1, 1], friction_index=[-1, 0], mu=[0.0, -1.0])


def test_structured_directions_and_low_rank_cotangents_match_the_dense_forms():
    """lcp_jvp with dA given as products (a simulation's A = J M⁻¹ Jᵀ never forms dA) equals the
    dense form, and lcp_vjp's rank-2 factors of ∂ℓ/∂A multiply out to the dense cotangent — also for
    a singular clamping system (A of rank 4 on 12 unknowns), where the projector term enters."""
    rng = np.random.default_rng(31)
    for rank in (None, 4):
        A, b, lo, hi, friction_index, mu = contact_problem(rng, 4)
        if rank is not None:
            J = rng.normal(size=(b.size, rank))
            A = J @ J.T
        solution = solve_boxed_lcp(A, b, lo, hi, friction_index=friction_index, mu=mu, tol=1e-12, max_iterations=200000)
        n, directions = b.size, 3
        dA = rng.normal(size=(directions, n, n))
        db, dmu = rng.normal(size=(directions, n)), rng.normal(size=(directions, n))

        def products(u, transposed):
            return (dA.transpose(0, 2, 1) if transposed else dA) @ u

        dense = lcp_jvp(solution, A, dA, db, dmu=dmu)
        assert np.allclose(lcp_jvp(solution, A, products, db, dmu=dmu), dense, rtol=1e-12, atol=1e-12)
        grad_f = rng.normal(size=n)
        left, right = lcp_vjp(solution, A, grad_f, low_rank_A=True).A
        assert left.shape == right.shape == (2, n)
        assert np.allclose(left.T @ right, lcp_vjp(solution, A, grad_f).A, rtol=1e-12, atol=1e-12)
        # and the cotangent is the transpose of the directional derivative
        pairing = sum(left[k] @ dA[0] @ right[k] for k in range(2))
        expected = grad_f @ lcp_jvp(solution, A, dA[0], np.zeros(n))
        assert np.isclose(pairing, expected, rtol=1e-9, atol=1e-12)


def test_solution_on_sets_is_the_minimum_norm_least_squares_one():
    """All entries clamping and unbounded: the solve on the sets is f = −A⁺ b; A rank-deficient and
    not symmetric, b in its range (numpy's SVD pseudo-inverse as the reference)."""
    from dcol import _native

    rng = np.random.default_rng(4)
    for n, rank in ((6, 3), (15, 7), (40, 39)):
        A = rng.normal(size=(n, rank)) @ rng.normal(size=(rank, n))
        b = A @ rng.normal(size=n)
        unbounded = (np.full(n, -np.inf), np.full(n, np.inf), np.full(n, -1), np.zeros(n))
        f, w, verified = _native.lcp.solve_on_sets(A, b, *unbounded, np.zeros(n, np.int8), 1e-8)
        assert verified
        expected = -np.linalg.pinv(A) @ b
        assert np.allclose(f, expected, atol=1e-9 * np.abs(expected).max())
        assert np.allclose(w, A @ f + b)


def test_statically_indeterminate_friction_is_solved_by_pivoting():
    """The jump worm resting on its five feet: A = J M⁻¹ Jᵀ has three zero eigenvalues and the load
    shifts between the feet along them, so Gauss–Seidel alone takes ~27 000 sweeps to settle. Block
    principal pivots from its sets after 16 sweeps give a solution: complementarity checked here
    from f and w = A f + b, friction within μ f_n."""
    from dcol.dynamics import World, load_dataset_robot, neutral

    world = World(load_dataset_robot("jump_worm"), dt=1e-3)
    q, v, previous = neutral(world.model), np.zeros(world.model.nv), None
    # lowered until its lowest shape is 1 mm into the ground
    lower, _ = world.scene.bounding_boxes(*world.body_poses(q))
    q[world.model.joint_q_index[world.model.joint_names.index("rootz")]] -= lower[:-1, 2].min() + 1e-3
    for _ in range(200):
        previous = world.step(q, v, warm_start=previous)
        q, v = previous.q, previous.v
    step = world.step(q, v)  # no warm start: Gauss–Seidel from zero
    _, A, b, bounds, _ = world.contact_problem(q, v)
    f, mu, normal = step.lcp.f, bounds.mu, bounds.friction_index
    assert step.lcp.status == LCPStatus.SOLVED and step.lcp.iterations <= 64
    assert np.linalg.eigvalsh(A)[2] < 1e-9 * np.abs(A).max()  # rank-deficient
    w = A @ f + b
    high = np.where(normal >= 0, mu * f[np.maximum(normal, 0)], np.inf)
    low = np.where(normal >= 0, -high, 0.0)
    assert np.all(f >= low - 1e-12) and np.all(f <= high + 1e-12)
    assert np.abs(f - np.clip(f - w, low, high)).max() <= 1e-9


def test_friction_that_jams_its_normal_is_not_reported_solved():
    """One contact on one dof (mass 1) whose normal row moves it by a = 0.35 per unit impulse and whose
    friction rows by 3.8 and 3.3 (a contact far off the joint's axis), asked to separate at 2834 m/s
    (a body sunk 14 m, Baumgarte's β φ / Δt). A sliding friction impulse ±μ f_n moves the dof by
    μ (3.8 + 3.3) f_n = 3.5 f_n against the normal's 0.35 f_n, so no impulse in the cone can open the
    contact and the LCP has no solution. Gauss–Seidel's iterate runs off to ~1e9; its status must not
    say SOLVED, and the residual it reports is that of the returned f."""
    J = np.array([[0.3536], [3.778], [3.278]])
    A, b = J @ J.T, np.array([-2834.4271, 0.0, 0.0])
    solution = solve_boxed_lcp(
        A, b, np.zeros(3), np.full(3, np.inf), friction_index=[-1, 0, 0], mu=[0.5, 0.5, 0.5], max_iterations=200_000
    )
    assert solution.status != LCPStatus.SOLVED
    f = solution.f
    w = A @ f + b
    high = 0.5 * max(f[0], 0.0)
    natural = np.abs(f - np.clip(f - w, [0.0, -high, -high], [np.inf, high, high])).max()
    assert solution.residual == pytest.approx(natural, rel=1e-9) and natural > 1.0


def natural_residual(A, b, f, lo, hi, friction_index=None, mu=None):
    """max_i |f_i − clamp(f_i − w_i, lo_i, hi_i)| with w = A f + b, friction bounds ±μ f_n: zero exactly
    at a solution."""
    lo, hi = np.array(lo, dtype=float), np.array(hi, dtype=float)
    if friction_index is not None:
        friction = np.flatnonzero(np.asarray(friction_index) >= 0)
        hi[friction] = np.asarray(mu)[friction] * np.maximum(f[np.asarray(friction_index)[friction]], 0.0)
        lo[friction] = -hi[friction]
    w = A @ f + b
    return np.abs(f - np.clip(f - w, lo, hi)).max()


@pytest.mark.parametrize("seed", range(4))
def test_pivoting_solves_every_kind_of_fixed_bound(seed):
    """Lemke's method on the Stewart–Trinkle form (native/lcp/boxed_lemke.hpp) with entries bounded
    below only, above only, on both sides and not at all, against the box QP in Clarabel."""
    from dcol import _native

    rng = np.random.default_rng(seed)
    A, b, lo, hi = random_box_problem(rng, 12)
    lo[2], hi[2] = -np.inf, np.inf
    unbounded = (np.full(12, -1), np.zeros(12))
    f, status, _, residual = _native.lcp.boxed_lemke(A, b, lo, hi, *unbounded, 1e-10)
    assert status == LCPStatus.SOLVED and residual <= 1e-10
    assert np.allclose(f, box_qp(A, b, lo, hi), atol=1e-6)
    assert natural_residual(A, b, f, lo, hi) <= 1e-9 * np.abs(b).max()


@pytest.mark.parametrize("contacts", [1, 4, 12])
def test_pivoting_solves_rank_deficient_friction_problems(contacts):
    """Contacts on one body (six dofs), A = J M⁻¹ Jᵀ of rank at most 6 with friction bounds ±μ f_n
    (solvable: b = J v, Stewart & Trinkle 1996): Lemke's solution satisfies the boxed LCP, checked from f
    and w = A f + b."""
    from dcol import _native

    rng = np.random.default_rng(contacts)
    A, b, lo, hi, friction_index, mu = contact_problem(rng, contacts, rigid=True)
    f, status, _, _ = _native.lcp.boxed_lemke(A, b, lo, hi, friction_index, mu, 1e-10)
    assert status == LCPStatus.SOLVED
    assert natural_residual(A, b, f, lo, hi, friction_index, mu) <= 1e-8
    assert np.all(f[::3] >= 0.0)


def test_pivoting_refuses_friction_on_a_normal_that_can_pull():
    """A friction bound μ max(f_n, 0) on a normal with lo < 0 is not linear in f_n: invalid, f zero."""
    from dcol import _native

    A, b = np.eye(2), np.array([-1.0, 0.5])
    f, status, _, _ = _native.lcp.boxed_lemke(A, b, [-1.0, 0.0], [np.inf, 0.0], [-1, 0], [0.0, 0.5], 1e-10)
    assert status == LCPStatus.INVALID_PROBLEM and np.all(f == 0.0)


def test_sweeps_that_run_out_end_in_pivoting():
    """A rank-deficient friction problem with a single Gauss–Seidel sweep allowed, whose sets after that
    sweep give no solution: Lemke's method finishes the solve (solve_pgs_polished's fallback), checked
    from f and w = A f + b."""
    from dcol import _native

    rng = np.random.default_rng(7)
    A, b, lo, hi, friction_index, mu = contact_problem(rng, 12, rigid=True)
    swept, *_ = _native.lcp.pgs(A, b, lo, hi, friction_index, mu, np.zeros(b.size), 1, 1e-9, False)
    assert not _native.lcp.polish(A, b, lo, hi, friction_index, mu, swept, 1e-9)[1]
    solution = solve_boxed_lcp(A, b, lo, hi, friction_index=friction_index, mu=mu, max_iterations=1)
    assert solution.status == LCPStatus.SOLVED
    assert natural_residual(A, b, solution.f, lo, hi, friction_index, mu) <= 1e-8


def jump_worm_mid_jump():
    """The jump worm at 10 ms in the middle of a jump that DDP tried (its controls at the effort
    limits): four contacts on two links' bottom lines, whose normal rows agree to seven digits in
    pairs. The World, and q, v, tau."""
    from dcol.dynamics import World, load_dataset_robot

    world = World(load_dataset_robot("jump_worm"), dt=0.01)
    q = [0.047230491927128304, 0.14060947115236128, 0.7617312827391186, -0.7596971541401536]
    q += [-0.0020341285982916992, -0.01088720516123109, -0.6419280262843383]
    v = [2.0665345898096676, 3.1349042751121625, 19.136773833850473, -18.933360973953967]
    v += [-0.20341285985399793, -0.4243803703923259, -12.103437286139624]
    tau = [0.0, 0.0, 0.0, -1.7187499995706852, -1.718749999993688, -1.7187499993182573, -0.46874999955490004]
    return world, np.array(q), np.array(v), np.array(tau)


def test_pivoting_off_a_ray_on_near_duplicate_contacts():
    """The worm's four pushing contacts with their friction (8 rows, A of rank 5): Lemke's path on
    M + εI with ε = 1e-9 of A's diagonal ended on a ray, the shift lost in the tableau's round-off. The
    solve now starts again with larger shifts and ends at a solution, checked from f and w = A f + b."""
    from dcol import _native

    world, q, v, tau = jump_worm_mid_jump()
    _, A, b, bounds, _ = world.contact_problem(q, v, tau)
    rows = np.arange(4, 12)
    A, b, lo, hi = A[np.ix_(rows, rows)], b[rows], bounds.lo[rows], bounds.hi[rows]
    friction_index = np.where(bounds.friction_index[rows] >= 0, bounds.friction_index[rows] - rows[0], -1)
    mu = bounds.mu[rows]
    assert np.all(friction_index[1::2] == np.arange(0, 8, 2)) and np.linalg.matrix_rank(A) == 5
    f, status, _, _ = _native.lcp.boxed_lemke(A, b, lo, hi, friction_index, mu, 1e-10)
    assert status == LCPStatus.SOLVED
    assert natural_residual(A, b, f, lo, hi, friction_index, mu) <= 1e-12


def test_sets_whose_equations_disagree_end_in_pivoting():
    """The worm's step (above): Gauss–Seidel's sets after 16 sweeps clamp all four normals, whose
    equations a rank-deficient A makes disagree by 3e-7; the step stopped there with ITERATION_LIMIT.
    Lemke's method finds sets with two of the four contacts pushing: the step is SOLVED, checked from
    the step's problem (World.contact_problem) within the simulation's tolerance 1e-7."""
    world, q, v, tau = jump_worm_mid_jump()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        step = world.step(q, v, tau)
    _, A, b, bounds, _ = world.contact_problem(q, v, tau)
    f = step.lcp.f
    assert step.lcp.status == LCPStatus.SOLVED
    assert natural_residual(A, b, f, bounds.lo, bounds.hi, bounds.friction_index, bounds.mu) <= 1e-7


def relative_natural_residual(A, b, f, lo, hi):
    """The solvers' measure (native/lcp/lcp.hpp's natural_residual, without a floor), here in numpy:
    max_i |f_i − clamp(f_i − w_i / A_ii, lo_i, hi_i)| over the impulses' scale max(|f|∞, max_i |b_i| / A_ii)."""
    d = np.diag(A)
    w = A @ f + b
    scale = max(np.abs(f).max(), (np.abs(b) / d).max())
    return np.abs(f - np.clip(f - w / d, lo, hi)).max() / scale


# A badly scaled pair (cond A ≈ 3e10). One Gauss–Seidel sweep leaves an iterate whose sets verified
# within their tolerances, which measure w against |A|∞, and the solve said SOLVED for f with
# w = (−1.2e-4, −0.062): each w_i against A_ii, 2.8e-4 of the impulses' scale from a solution. Five
# interior-point iterations, polished on their sets (solve_lcp's stabilize), were SOLVED 5.5e-3 away.
BADLY_SCALED_A = np.array([[97.447591160344842, -0.18348721710514182], [-0.18348721710514182, 3.4549686930121178e-04]])
BADLY_SCALED_B = np.array([-0.03938101144927322, -0.06323632762950003])
BADLY_SCALED_SOLVES = {
    **{
        f"boxed Gauss–Seidel, {sweeps} sweeps": lambda A, b, tol, sweeps=sweeps: solve_boxed_lcp(
            A, b, np.zeros(2), np.full(2, np.inf), tol=tol, max_iterations=sweeps
        )
        for sweeps in (1, 2, 16)
    },
    "Gauss–Seidel, 1 sweep": lambda A, b, tol: solve_lcp(A, b, method="pgs", tol=tol, max_iterations=1),
    "interior point, 5 iterations": lambda A, b, tol: solve_lcp(A, b, method="ipm", tol=tol, max_iterations=5),
}


# A warm start from a nearby problem's solution (b perturbed by 1e-3 relative; cond A ≈ 6e5) whose
# sets verified on this problem, with a natural residual of 4.7e-5, and were taken as SOLVED.
WARM_A = np.array(
    [
        [1.8214899746779024e-02, 2.1068552310990370e-02, -4.8830971297093012e-01, -2.4041653618136150e00],
        [2.1068552310990370e-02, 2.0140899748872845e-01, 1.3580573811893297e00, -1.0849299101543012e01],
        [-4.8830971297093012e-01, 1.3580573811893297e00, 3.8631454014351959e01, -3.9425129344151060e01],
        [-2.4041653618136150e00, -1.0849299101543012e01, -3.9425129344151060e01, 9.5108671480448515e02],
    ]
)
WARM_B = np.array([-2.2081647877204693, -6.432259237589223, -0.5442409023130331, 0.10138579424378466])
WARM_B_BEFORE = np.array([-2.2103189268413326, -6.429937056950908, -0.5445970230247519, 0.10136910145650094])


def test_warm_start_counts_only_within_the_tolerance():
    """A warm start's sets solve the problem only when the solution on them is within tol (natural
    residual computed here); otherwise the solve starts afresh, and ends SOLVED within tol."""
    lo, hi, tol = np.zeros(4), np.full(4, np.inf), 1e-7
    previous = solve_boxed_lcp(WARM_A, WARM_B_BEFORE, lo, hi, tol=tol)
    solution = solve_boxed_lcp(WARM_A, WARM_B, lo, hi, tol=tol, warm_start=previous)
    residual = relative_natural_residual(WARM_A, WARM_B, solution.f, lo, hi)
    assert solution.status == LCPStatus.SOLVED and residual <= tol


@pytest.mark.parametrize("solve", BADLY_SCALED_SOLVES.values(), ids=BADLY_SCALED_SOLVES.keys())
def test_status_is_that_of_the_natural_residual(solve):
    """SOLVED only for an f whose natural residual (computed here) is within tol; this problem's
    solution has both entries clamping, f = −A⁻¹b."""
    A, b, tol = BADLY_SCALED_A, BADLY_SCALED_B, 1e-7
    lo, hi = np.zeros(2), np.full(2, np.inf)
    solution = solve(A, b, tol)
    residual = relative_natural_residual(A, b, solution.f, lo, hi)
    assert (solution.status == LCPStatus.SOLVED) == (residual <= tol)
    if solution.status == LCPStatus.SOLVED:
        assert solution.f == pytest.approx(np.linalg.solve(A, -b), rel=1e-6)
