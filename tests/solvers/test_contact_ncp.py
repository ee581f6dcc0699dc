"""The Coulomb-cone contact NCP (Simple eq. 1) and its implicit gradients by mode, against
closed forms, the cone-constrained QP in cvxpy/Clarabel at the solution's De Saxcé term, and central
differences."""

import numpy as np
import pytest

from dcol.solvers import (
    ContactMode,
    LCPStatus,
    ncp_jvp,
    ncp_vjp,
    project_onto_friction_cone,
    solve_contact_ncp,
)
from tests.support.optional import oracle

cp = oracle("cvxpy")

M, MU = 2.0, 0.5


@pytest.mark.parametrize(
    "g, mode",
    [
        ([0.1, -0.05, -1.0], ContactMode.STICKING),
        ([2.0, 0.3, -1.0], ContactMode.SLIDING),
        ([0.501, 0.0, -1.0], ContactMode.SLIDING),  # barely: it keeps 0.001 of its tangential velocity
        ([0.3, 0.2, 0.5], ContactMode.BREAKING),
    ],
)
def test_point_mass_closed_forms(g, mode):
    """A point mass m on the ground (G = I/m): separating, it feels nothing; sticking, the impulse
    stops it, λ = −m g; sliding, λ_n = −m g_n and λ_t = −μ λ_n g_t/‖g_t‖ (maximal dissipation)."""
    g = np.array(g)
    solution = solve_contact_ncp(np.eye(3) / M, g, MU)
    assert solution.status == LCPStatus.SOLVED and solution.modes[0] == mode
    if mode == ContactMode.BREAKING:
        expected, d_mu = np.zeros(3), np.zeros(3)
    elif mode == ContactMode.STICKING:
        expected, d_mu = -M * g, np.zeros(3)
    else:
        normal = -M * g[2]
        direction = g[:2] / np.linalg.norm(g[:2])
        expected = np.r_[-MU * normal * direction, normal]
        d_mu = np.r_[-normal * direction, 0.0]
    assert np.allclose(solution.impulses, expected, atol=1e-8)
    assert np.allclose(ncp_jvp(solution, np.eye(3) / M, np.zeros((3, 3)), np.zeros(3), dmu=[1.0]), d_mu, atol=1e-8)
    if mode == ContactMode.STICKING:
        d_g = np.stack([ncp_jvp(solution, np.eye(3) / M, np.zeros((3, 3)), e) for e in np.eye(3)], 1)
        assert np.allclose(d_g, -M * np.eye(3), atol=1e-8)


def test_cone_projection():
    mu = np.array([0.5, 0.5, 0.5])
    points = np.array([[0.1, 0.0, 1.0], [0.0, 0.0, -1.0], [2.0, 0.0, 1.0]])
    projected = project_onto_friction_cone(points, mu)
    assert np.allclose(projected[0], points[0]) and np.allclose(projected[1], 0.0)
    # The third lands on the boundary, and the step is normal to it (orthogonal to the projection).
    assert np.isclose(np.linalg.norm(projected[2, :2]), 0.5 * projected[2, 2])
    assert np.isclose((points[2] - projected[2]) @ projected[2], 0.0)


def contact_problem(rng, contacts, columns=40):
    J = rng.normal(size=(3 * contacts, columns))
    G = J @ J.T / columns + 1e-3 * np.eye(3 * contacts)
    g = rng.normal(size=3 * contacts)
    g[2::3] = rng.normal(size=contacts) - 0.5
    return G, g, rng.uniform(0.3, 0.9, contacts)


@pytest.mark.parametrize("seed", range(4))
def test_solution_is_the_cone_qp_minimizer_at_its_de_saxce_term(seed):
    """With s = Γ(v*) fixed, λ* minimizes ½λᵀGλ + (g + s)ᵀλ over the product of friction cones
    (second-order cones in cvxpy, solved by Clarabel)."""
    rng = np.random.default_rng(seed)
    G, g, mu = contact_problem(rng, 3 + seed)
    solution = solve_contact_ncp(G, g, mu)
    assert solution.status == LCPStatus.SOLVED
    v = solution.velocities.reshape(-1, 3)
    s = np.zeros_like(v)
    s[:, 2] = mu * np.linalg.norm(v[:, :2], axis=1)
    lam = cp.Variable(g.size)
    cones = [cp.SOC(mu[i] * lam[3 * i + 2], lam[3 * i : 3 * i + 2]) for i in range(mu.size)]
    cp.Problem(cp.Minimize(0.5 * cp.quad_form(lam, cp.psd_wrap(G)) + (g + s.ravel()) @ lam), cones).solve(
        solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10
    )
    assert np.allclose(solution.impulses, lam.value, atol=1e-6)


def problem_in_the_interior_of_its_modes(rng, contacts):
    """A problem whose contacts are clear of their mode boundaries, with sticking and sliding ones."""
    while True:
        G, g, mu = contact_problem(rng, contacts)
        solution = solve_contact_ncp(G, g, mu, tol=1e-13, max_iterations=20000)
        lam = solution.impulses.reshape(-1, 3)
        v = solution.velocities.reshape(-1, 3)
        modes = solution.modes
        margins = np.where(
            modes == ContactMode.BREAKING,
            v[:, 2],
            np.where(
                modes == ContactMode.STICKING,
                mu * lam[:, 2] - np.linalg.norm(lam[:, :2], axis=1),
                np.minimum(np.linalg.norm(v[:, :2], axis=1), lam[:, 2]),
            ),
        )
        if (
            solution.status == LCPStatus.SOLVED
            and margins.min() > 2e-2
            and {ContactMode.STICKING, ContactMode.SLIDING} <= set(modes.tolist())
        ):
            return (G, g, mu), solution


def test_gradients_match_central_differences():
    rng = np.random.default_rng(11)
    (G, g, mu), solution = problem_in_the_interior_of_its_modes(rng, 4)
    dG = rng.normal(size=G.shape)
    dG = 0.1 * (dG + dG.T)
    dg, dmu = rng.normal(size=g.size), 0.1 * rng.normal(size=mu.size)
    eps = 1e-6

    def solve(t):
        return solve_contact_ncp(G + t * dG, g + t * dg, mu + t * dmu, tol=1e-14, max_iterations=50000).impulses

    expected = (solve(eps) - solve(-eps)) / (2 * eps)
    assert np.allclose(ncp_jvp(solution, G, dG, dg, dmu), expected, atol=1e-5 * max(1.0, np.abs(expected).max()))


def test_vjp_is_the_transpose_of_jvp():
    rng = np.random.default_rng(12)
    (G, g, mu), solution = problem_in_the_interior_of_its_modes(rng, 5)
    dG, dg, dmu = rng.normal(size=G.shape), rng.normal(size=g.size), rng.normal(size=mu.size)
    grad = rng.normal(size=g.size)
    cot = ncp_vjp(solution, G, grad)
    assert np.isclose(
        grad @ ncp_jvp(solution, G, dG, dg, dmu), np.sum(cot.G * dG) + cot.g @ dg + cot.mu @ dmu, rtol=1e-10
    )


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="g must have shape"):
        solve_contact_ncp(np.eye(3), np.ones(4), 0.5)
    with pytest.raises(ValueError, match="mu must be ≥ 0"):
        solve_contact_ncp(np.eye(3), np.ones(3), -0.1)
    with pytest.raises(ValueError, match="symmetric"):
        solve_contact_ncp(np.triu(np.ones((3, 3))), np.ones(3), 0.5)
    with pytest.raises(ValueError, match="positive semidefinite"):
        solve_contact_ncp(-np.eye(3), np.ones(3), 0.5)


def test_many_contacts_on_a_rigid_body_rank_deficient_delassus():
    """A unit cube (unit mass, inertia I/6) landing flat on 15 points of its bottom face while sliding
    along x: G = J M⁻¹ Jᵀ (45 × 45) has rank 6. The NCP's conditions hold, checked here from λ and v,
    and the velocities equal those of the cone QP at the solution's De Saxcé term (cvxpy/Clarabel:
    the impulses are not unique, Gλ is)."""
    corners = [(x, y) for x in (-0.5, 0.0, 0.5) for y in (-0.5, -0.25, 0.0, 0.25, 0.5)]
    rows = []
    for x, y in corners:
        lever = np.array([x, y, -0.5])  # from the centre of mass to the contact
        for direction in np.eye(3):  # t1 = x, t2 = y, normal = z
            rows.append(np.r_[direction, np.cross(lever, direction)])  # velocity of the point: v + ω × r
    J = np.array(rows)
    M_inv = np.diag([1.0, 1.0, 1.0, 6.0, 6.0, 6.0])
    G = J @ M_inv @ J.T
    assert np.linalg.matrix_rank(G) == 6
    g = J @ np.array([0.5, 0.0, -0.2, 0.0, 0.0, 0.0])
    mu = np.full(len(corners), 0.4)
    solution = solve_contact_ncp(G, g, mu)
    assert solution.status == LCPStatus.SOLVED
    lam, v = solution.impulses.reshape(-1, 3), solution.velocities.reshape(-1, 3)
    assert np.allclose(solution.velocities, G @ solution.impulses + g, atol=1e-12)
    slip = np.linalg.norm(v[:, :2], axis=1)
    scale = np.abs(lam).max()
    assert np.all(np.linalg.norm(lam[:, :2], axis=1) <= mu * lam[:, 2] + 1e-9 * scale)  # λ ∈ K
    assert np.all(v[:, 2] >= -1e-9)  # no approach, and v + Γ(v) ∈ K* (its tangential part is v_t)
    assert np.abs(np.sum(lam[:, :2] * v[:, :2], axis=1) + lam[:, 2] * (v[:, 2] + mu * slip)).max() <= 1e-9
    s = np.zeros_like(v)
    s[:, 2] = mu * slip
    x = cp.Variable(g.size)
    cones = [cp.SOC(mu[i] * x[3 * i + 2], x[3 * i : 3 * i + 2]) for i in range(mu.size)]
    cp.Problem(cp.Minimize(0.5 * cp.quad_form(x, cp.psd_wrap(G)) + (g + s.ravel()) @ x), cones).solve(
        solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10
    )
    assert np.allclose(G @ x.value + g, solution.velocities, atol=1e-6)


def test_a_problem_without_solution_is_reported_with_finite_impulses():
    """Fifteen random contact frames on six degrees of freedom with free normal velocities outside
    the range of J: no impulses stop every contact. The solve says so and returns finite numbers
    (its penalty once grew until the iterates overflowed to NaN)."""
    rng = np.random.default_rng(5)
    J = rng.normal(size=(45, 6))
    g = J @ rng.normal(size=6)
    g[2::3] -= 0.5
    G, mu = J @ J.T, rng.uniform(0.3, 0.9, 15)
    # A solution needs λ ∈ K with every normal velocity (Gλ + g)_n ≥ 0: Clarabel finds no such λ.
    lam = cp.Variable(g.size)
    cones = [cp.SOC(mu[i] * lam[3 * i + 2], lam[3 * i : 3 * i + 2]) for i in range(mu.size)]
    feasibility = cp.Problem(cp.Minimize(0), cones + [(G @ lam + g)[2::3] >= 0])
    feasibility.solve(solver=cp.CLARABEL)
    assert feasibility.status == cp.INFEASIBLE
    solution = solve_contact_ncp(G, g, mu)
    assert solution.status != LCPStatus.SOLVED and solution.residual > 1e-3
    assert np.all(np.isfinite(solution.impulses)) and np.all(np.isfinite(solution.velocities))


def test_arguments_of_the_wrong_kind_are_named():
    """Complex derivative arguments were cast to real (numpy drops the imaginary parts); a complex rho
    ended in float()'s message, a negative one in an INVALID_PROBLEM status."""
    G, g = np.eye(3), np.array([0.0, 0.0, -1.0])
    solution = solve_contact_ncp(G, g, MU)
    imaginary = np.array([0.0, 0.0, 1e-3j])
    calls = {
        "G": lambda: ncp_vjp(solution, G + 0j, np.ones(3)),
        "dG": lambda: ncp_jvp(solution, G, np.zeros((3, 3)) + 0j, np.zeros(3)),
        "dg": lambda: ncp_jvp(solution, G, np.zeros((3, 3)), imaginary),
        "dmu": lambda: ncp_jvp(solution, G, np.zeros((3, 3)), np.zeros(3), dmu=[1j]),
        "grad_impulses": lambda: ncp_vjp(solution, G, imaginary),
    }
    for name, call in calls.items():
        with pytest.raises(TypeError, match=f"^{name} must be an array of real numbers, got complex ones"):
            call()
    with pytest.raises(TypeError, match="rho must be a real number, got 1j"):
        solve_contact_ncp(G, g, MU, rho=1j)
    with pytest.raises(ValueError, match="rho must be finite and > 0, got -1.0"):
        solve_contact_ncp(G, g, MU, rho=-1.0)
