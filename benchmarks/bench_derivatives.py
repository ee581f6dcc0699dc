"""Time to differentiate DCOL proximity next to the time to evaluate it, averaged per primitive.

For every ordered pair of the seven primitives (shapes of bench_proximity.py) the same random pose
pairs go through dcol's native batch path, one thread:
- evaluate: proximity_batch at the derivative settings (central path at μ = 1e-9), and at the default
  settings for reference;
- proximity_gradient_batch (∂α only), proximity_jacobian_batch (∂(x, α), 4×14) and
  contact_jacobian_batch (also contact points, distance, normal);
- proximity_jacobian_batch with barrier = 0 (exact derivatives, one pose pair at a time), and the
  share of pose pairs where they exist (the others are flagged SMOOTHED);
- central differences of proximity_batch: the 28 solves a 4×14 Jacobian needs, as one batch;
- diffcp: tests/derivative_oracle.py's proximity_jacobian_oracle on a few pose pairs (Clarabel solve,
  refinement and diffcp's derivative along the 14 pose coordinates), what a user differentiating the
  cone program with diffcp would run.
A primitive's row averages the pairs in which it is shape a. Needs the `[oracles]` extra (diffcp).

Run: python benchmarks/bench_derivatives.py [--poses 4000] [--diffcp-problems 2] [--markdown] [--quick]
"""

import argparse
import os
import sys
import time

import numpy as np

from dcol.geom import (
    DERIVATIVE_SETTINGS,
    contact_jacobian_batch,
    proximity_batch,
    proximity_gradient_batch,
    proximity_jacobian_batch,
)
from dcol.solvers import SolverSettings, Status

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench_proximity import SHAPES, random_poses
from report import Table, parse_arguments, print_report

from tests.support.derivative_oracle import proximity_jacobian_oracle


def per_pair(function, poses, repeat=1):
    function(*[p[:50] for p in poses])  # warm up
    start = time.perf_counter()
    for _ in range(repeat):
        result = function(*poses)
    return (time.perf_counter() - start) / repeat / len(poses[0]), result


def central_difference_poses(poses, step=1e-6):
    """The 28 perturbed pose pairs of a central-difference 4×14 Jacobian, for every pose pair."""
    blocks = []
    for array_index, width in ((0, 3), (1, 4), (2, 3), (3, 4)):
        for k in range(width):
            for sign in (1.0, -1.0):
                moved = [p.copy() for p in poses]
                moved[array_index][:, k] += sign * step
                blocks.append(moved)
    return [np.concatenate([block[i] for block in blocks]) for i in range(4)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--poses", type=int, default=4000, help="pose pairs per shape pair")
    parser.add_argument("--diffcp-problems", type=int, default=2, help="diffcp Jacobians per shape pair")
    args = parse_arguments(parser, dict(poses=100, diffcp_problems=1))
    rng = np.random.default_rng(3)
    names = list(SHAPES)
    rows = {name: [] for name in names}
    for name_a in names:
        for name_b in names:
            a, b = SHAPES[name_a], SHAPES[name_b]
            poses = random_poses(rng, args.poses)

            def call(function, **kwargs):
                return lambda r_a, q_a, r_b, q_b: function(a, r_a, q_a, b, r_b, q_b, **kwargs)

            t_default, _ = per_pair(call(proximity_batch), poses)
            t_eval, values = per_pair(call(proximity_batch, settings=DERIVATIVE_SETTINGS), poses)
            t_grad, _ = per_pair(call(proximity_gradient_batch), poses)
            t_jac, jac = per_pair(call(proximity_jacobian_batch), poses)
            t_contact, _ = per_pair(call(contact_jacobian_batch), poses)
            t_exact, exact = per_pair(call(proximity_jacobian_batch, settings=SolverSettings()), poses)
            fd_poses = central_difference_poses([p[: args.poses // 10] for p in poses])
            t_fd, _ = per_pair(call(proximity_batch, settings=DERIVATIVE_SETTINGS), fd_poses)
            t_fd *= 28  # per Jacobian
            solved = np.mean(jac.status == Status.SOLVED)
            start, done = time.perf_counter(), 0
            for i in range(args.diffcp_problems):
                try:
                    proximity_jacobian_oracle(a, poses[0][i], poses[1][i], b, poses[2][i], poses[3][i])
                    done += 1
                except RuntimeError:
                    pass
            t_diffcp = (time.perf_counter() - start) / max(done, 1)
            rows[name_a].append(
                (
                    t_default,
                    t_eval,
                    t_grad,
                    t_jac,
                    t_contact,
                    t_fd,
                    t_diffcp,
                    t_exact,
                    values.iterations.mean(),
                    solved,
                    np.mean(exact.status == Status.SOLVED),
                )
            )
    table = Table(
        [
            "shape a",
            "eval def",
            "eval μ",
            "grad",
            "jac",
            "contact",
            "jac-eval",
            "c.diff",
            "diffcp",
            "c.diff/jac",
            "diffcp/jac",
            "iters",
            "exact",
            "exact %",
        ],
        caption="µs per pose pair, one thread; a primitive's row averages the 7 pairs in which it is shape a",
    )

    def add_row(label, m):
        us = m[:8] * 1e6
        table.add(
            label,
            f"{us[0]:.2f}",
            f"{us[1]:.2f}",
            f"{us[2]:.2f}",
            f"{us[3]:.2f}",
            f"{us[4]:.2f}",
            f"{us[3] - us[1]:.2f}",
            f"{us[5]:.1f}",
            f"{us[6]:.0f}",
            f"{us[5] / us[3]:.1f}",
            f"{us[6] / us[3]:.0f}",
            f"{m[8]:.1f}",
            f"{us[7]:.2f}",
            f"{100 * m[10]:.1f}",
        )

    totals = [np.mean(rows[name], axis=0) for name in names]
    for name, m in zip(names, totals):
        add_row(name, m)
    add_row("mean", np.mean(totals, axis=0))
    table.notes.append(f"Jacobians solved: {100 * np.mean([r[9] for rs in rows.values() for r in rs]):.2f}%")
    print_report("Derivatives (bench_derivatives.py)", [table], args, libraries=("diffcp", "Clarabel"))


if __name__ == "__main__":
    main()
