"""LCP solve and gradient times against the QP route a user would otherwise take (cvxpy + Clarabel,
the problem compiled once with A's factor and b as parameters), in the same run; then the contact
NCP against cvxpy re-solving the cone QP until its De Saxcé term settles.

Problems: Delassus-like A = J Jᵀ + 1e-3 I (J: n × (n + 2) Gaussian), b Gaussian — about half the
contacts clamp. Times are per problem, medians over repeats, one thread.
Usage: python benchmarks/bench_lcp.py [--sizes 5 20 50 100 200]
"""

import argparse
import os
import time

import cvxpy as cp
import numpy as np

from dcol.solvers import lcp_vjp, mlcp_vjp, ncp_vjp, solve_contact_ncp, solve_lcp, solve_mlcp


def median_time(call, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def qp_route(n):
    """min ½‖Lᵀf‖² + bᵀf s.t. f ≥ 0 with A = L Lᵀ, compiled once (DPP parameters L, b)."""
    L = cp.Parameter((n, n))
    b = cp.Parameter(n)
    f = cp.Variable(n)
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(L.T @ f) + b @ f), [f >= 0])

    def solve(A, b_value):
        L.value = np.linalg.cholesky(A)
        b.value = b_value
        problem.solve(solver=cp.CLARABEL)
        return f.value

    return solve


def cvxpy_ncp_route(G, g, mu, iterations=50, tol=1e-8):
    """The contact NCP the way a cvxpy user would: the cone QP with the De Saxcé term fixed, re-solved
    until that term stops changing (compiled once, the term as a parameter)."""
    nc = mu.size
    s = cp.Parameter(g.size)
    lam = cp.Variable(g.size)
    cones = [cp.SOC(mu[i] * lam[3 * i + 2], lam[3 * i : 3 * i + 2]) for i in range(nc)]
    problem = cp.Problem(cp.Minimize(0.5 * cp.quad_form(lam, cp.psd_wrap(G)) + (g + s) @ lam), cones)
    s.value = np.zeros(g.size)
    for _ in range(iterations):
        problem.solve(solver=cp.CLARABEL)
        v = (G @ lam.value + g).reshape(nc, 3)
        new = np.zeros((nc, 3))
        new[:, 2] = mu * np.linalg.norm(v[:, :2], axis=1)
        if np.abs(new.ravel() - s.value).max() <= tol:
            break
        s.value = new.ravel()
    return lam.value


def ncp_table(rng, contact_counts):
    print("\ncontact NCP (Coulomb cones, De Saxcé): ms per problem (median)")
    print(f"{'contacts':>9}{'ADMM':>9}{'iterations':>12}{'cvxpy fixed point':>19}{'ratio':>8}{'vjp':>9}")
    for nc in contact_counts:
        J = rng.normal(size=(3 * nc, 40))
        G = J @ J.T / 40 + 1e-3 * np.eye(3 * nc)
        g = rng.normal(size=3 * nc)
        g[2::3] -= 0.5
        mu = np.full(nc, 0.6)
        solution = solve_contact_ncp(G, g, mu)
        t_admm = median_time(lambda: solve_contact_ncp(G, g, mu), 5)
        t_cvxpy = median_time(lambda: cvxpy_ncp_route(G, g, mu), 3)
        grad = rng.normal(size=g.size)
        t_vjp = median_time(lambda: ncp_vjp(solution, G, grad), 10)
        print(
            f"{nc:>9}{t_admm * 1e3:>9.2f}{solution.iterations:>12}{t_cvxpy * 1e3:>19.2f}"
            f"{t_cvxpy / t_admm:>8.1f}{t_vjp * 1e3:>9.3f}"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5, 20, 50, 100, 200])
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores; times in ms per problem (median)")
    print(
        f"{'n':>5}{'Lemke':>9}{'PGS':>9}{'IPM':>9}{'warm hit':>10}{'cvxpy QP':>10}{'QP/Lemke':>9}"
        f"{'vjp (clamping)':>16}{'vjp (KKT)':>11}{'KKT/clamping':>14}"
    )
    rng = np.random.default_rng(0)
    for n in args.sizes:
        J = rng.normal(size=(n, n + 2))
        A = J @ J.T + 1e-3 * np.eye(n)
        b = rng.normal(size=n)
        repeats = max(3, min(50, 2000 // n))
        solution = solve_lcp(A, b)
        t_lemke = median_time(lambda: solve_lcp(A, b), repeats)
        t_pgs = median_time(lambda: solve_lcp(A, b, method="pgs", max_iterations=100000), repeats)
        t_ipm = median_time(lambda: solve_lcp(A, b, method="ipm"), repeats)
        # The next step's problem, slightly moved: the previous clamping set solves it.
        A_next, b_next = A + 1e-6 * np.eye(n), b + 1e-6
        t_warm = median_time(lambda: solve_lcp(A_next, b_next, warm_start=solution), repeats)
        qp = qp_route(n)
        qp(A, b)  # compile
        t_qp = median_time(lambda: qp(A, b), max(3, repeats // 5))
        grad_f = rng.normal(size=n)
        t_vjp = median_time(lambda: lcp_vjp(solution, A, grad_f), repeats)
        # The KKT route: the LCP as the mixed LCP with F = −A, h = b, differentiated by eqs. 29–32.
        empty, G = np.zeros((0, 0)), np.zeros((n, 0))
        mlcp = solve_mlcp(empty, np.zeros(0), G, -A, b)
        t_kkt = median_time(lambda: mlcp_vjp(mlcp, empty, np.zeros(0), G, -A, b, grad_z=grad_f), repeats)
        print(
            f"{n:>5}{t_lemke * 1e3:>9.3f}{t_pgs * 1e3:>9.3f}{t_ipm * 1e3:>9.3f}{t_warm * 1e3:>10.3f}"
            f"{t_qp * 1e3:>10.3f}{t_qp / t_lemke:>9.1f}{t_vjp * 1e3:>16.3f}{t_kkt * 1e3:>11.3f}{t_kkt / t_vjp:>14.1f}"
        )
    ncp_table(rng, [1, 4, 8])


if __name__ == "__main__":
    main()
