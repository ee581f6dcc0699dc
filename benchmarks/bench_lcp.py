"""LCP solve and gradient times against the QP route a user would otherwise take (cvxpy + Clarabel,
the problem compiled once with A's factor and b as parameters), in the same run.

Problems: Delassus-like A = J Jᵀ + 1e-3 I (J: n × (n + 2) Gaussian), b Gaussian — about half the
contacts clamp. Times are per problem, medians over repeats, one thread.
Usage: python benchmarks/bench_lcp.py [--sizes 5 20 50 100 200]
"""

import argparse
import os
import time

import cvxpy as cp
import numpy as np

from dcol.solvers import lcp_vjp, mlcp_vjp, solve_lcp, solve_mlcp


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5, 20, 50, 100, 200])
    args = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores; times in ms per problem (median)")
    print(f"{'n':>5}{'Lemke':>9}{'PGS':>9}{'IPM':>9}{'warm hit':>10}{'cvxpy QP':>10}{'QP/Lemke':>9}"
          f"{'vjp (clamping)':>16}{'vjp (KKT)':>11}{'KKT/clamping':>14}")
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
        print(f"{n:>5}{t_lemke * 1e3:>9.3f}{t_pgs * 1e3:>9.3f}{t_ipm * 1e3:>9.3f}{t_warm * 1e3:>10.3f}"
              f"{t_qp * 1e3:>10.3f}{t_qp / t_lemke:>9.1f}{t_vjp * 1e3:>16.3f}{t_kkt * 1e3:>11.3f}{t_kkt / t_vjp:>14.1f}")


if __name__ == "__main__":
    main()
