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

from dcol.solvers import lcp_jacobian, lcp_vjp, solve_lcp


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
    print(f"{'n':>5}{'Lemke':>10}{'PGS':>10}{'warm hit':>10}{'cvxpy QP':>11}{'QP/Lemke':>10}"
          f"{'jacobian':>10}{'vjp':>9}")
    rng = np.random.default_rng(0)
    for n in args.sizes:
        J = rng.normal(size=(n, n + 2))
        A = J @ J.T + 1e-3 * np.eye(n)
        b = rng.normal(size=n)
        repeats = max(3, min(50, 2000 // n))
        solution = solve_lcp(A, b)
        t_lemke = median_time(lambda: solve_lcp(A, b), repeats)
        t_pgs = median_time(lambda: solve_lcp(A, b, method="pgs", max_iterations=100000), repeats)
        # The next step's problem, slightly moved: the previous clamping set solves it.
        A_next, b_next = A + 1e-6 * np.eye(n), b + 1e-6
        t_warm = median_time(lambda: solve_lcp(A_next, b_next, warm_start=solution), repeats)
        qp = qp_route(n)
        qp(A, b)  # compile
        t_qp = median_time(lambda: qp(A, b), max(3, repeats // 5))
        grad_f = rng.normal(size=n)
        t_jacobian = median_time(lambda: lcp_jacobian(solution, A), repeats)
        t_vjp = median_time(lambda: lcp_vjp(solution, A, grad_f), repeats)
        print(f"{n:>5}{t_lemke * 1e3:>10.3f}{t_pgs * 1e3:>10.3f}{t_warm * 1e3:>10.3f}{t_qp * 1e3:>11.3f}"
              f"{t_qp / t_lemke:>10.1f}{t_jacobian * 1e3:>10.3f}{t_vjp * 1e3:>9.3f}")


if __name__ == "__main__":
    main()
