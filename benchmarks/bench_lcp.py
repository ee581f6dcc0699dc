"""LCP solve and gradient times against the QP route a user would otherwise take (cvxpy + Clarabel,
the problem compiled once with A's factor and b as parameters), in the same run; then the contact
NCP against cvxpy re-solving the cone QP until its De Saxcé term settles.

Problems: Delassus-like A = J Jᵀ + 1e-3 I (J: n × (n + 2) Gaussian), b Gaussian — about half the
contacts clamp. Times are per problem, medians over repeats, one thread.
Usage: python benchmarks/bench_lcp.py [--sizes 5 20 50 100 200] [--contacts 1 4 8] [--markdown] [--quick]
"""

import argparse
import time

import cvxpy as cp
import numpy as np
from report import Table, parse_arguments, print_report

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
    table = Table(
        ["contacts", "ADMM", "iterations", "cvxpy fixed point", "cvxpy/ADMM", "vjp"],
        caption="Contact NCP (Coulomb cones, De Saxcé): ms per problem (median)",
    )
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
        table.add(
            nc,
            f"{t_admm * 1e3:.2f}",
            solution.iterations,
            f"{t_cvxpy * 1e3:.2f}",
            f"{t_cvxpy / t_admm:.1f}",
            f"{t_vjp * 1e3:.3f}",
        )
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5, 20, 50, 100, 200], help="LCP sizes n")
    parser.add_argument("--contacts", type=int, nargs="+", default=[1, 4, 8], help="contact counts of the NCPs")
    args = parse_arguments(parser, dict(sizes=[5, 20], contacts=[1, 4]))
    table = Table(
        [
            "n",
            "Lemke",
            "PGS",
            "IPM",
            "warm hit",
            "cvxpy QP",
            "QP/Lemke",
            "vjp (clamping)",
            "vjp (KKT)",
            "KKT/clamping",
        ],
        caption="LCP: ms per problem (median)",
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
        # The KKT route: the LCP as the mixed LCP with F = −A, h = b, differentiated by LCP-physics eqs. 29–32.
        empty, G = np.zeros((0, 0)), np.zeros((n, 0))
        mlcp = solve_mlcp(empty, np.zeros(0), G, -A, b)
        t_kkt = median_time(lambda: mlcp_vjp(mlcp, empty, np.zeros(0), G, -A, b, grad_z=grad_f), repeats)
        table.add(
            n,
            f"{t_lemke * 1e3:.3f}",
            f"{t_pgs * 1e3:.3f}",
            f"{t_ipm * 1e3:.3f}",
            f"{t_warm * 1e3:.3f}",
            f"{t_qp * 1e3:.3f}",
            f"{t_qp / t_lemke:.1f}",
            f"{t_vjp * 1e3:.3f}",
            f"{t_kkt * 1e3:.3f}",
            f"{t_kkt / t_vjp:.1f}",
        )
    tables = [table, ncp_table(rng, args.contacts)]
    print_report("LCP and contact NCP (bench_lcp.py)", tables, args, libraries=("cvxpy", "Clarabel"))


if __name__ == "__main__":
    main()
