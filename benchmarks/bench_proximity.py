"""Time per DCOL proximity evaluation, averaged per primitive like DCOL Table I.

For every ordered pair of the seven primitives the same random pose pairs are solved by
- dcol's native batch path (`proximity_batch`, one thread and two threads),
- dcol's native one-pair solver, which single calls use (a batch given lists of shapes solves its
  pairs one at a time: the time of a single call without Python's share),
- one `proximity` call per pair from Python,
- cvxpy + Clarabel on the same problem (DCOL eq. 9), the test oracle of tests/support/oracle.py: compiled once per
  shape pair with the poses as parameters (the fastest cvxpy route), solved at gap and feasibility
  1e-10 (dcol's defaults: gap 1e-8, feasibility 1e-9); the whole re-solve and Clarabel's own solve
  time.
Every figure is the fastest of --repeats runs, as Python's timeit advises: a slower run measures
other processes' interference, not the code (this matters on shared machines). A primitive's row
averages the pairs in which it is shape a. Needs the `[oracles]` extra (cvxpy).

Run: python benchmarks/bench_proximity.py [--poses 10000] [--python-calls 2000] [--cvxpy-problems 10]
                                          [--repeats 3] [--markdown] [--quick]
"""

import argparse
import functools
import itertools
import os
import sys
import time

import numpy as np
from report import Table, fastest_of, parse_arguments, print_report

from dcol.geom import (
    Capsule,
    Cone,
    Cylinder,
    Ellipsoid,
    Polygon,
    Polytope,
    Sphere,
    proximity,
    proximity_batch,
)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tests.support.oracle import proximity_oracle, proximity_problem

HEXAGON = np.linspace(0, 2 * np.pi, 7)[:-1]
SHAPES = {
    "polytope": Polytope.from_vertices(
        np.array(
            [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1], [0.6, 0.6, 0.6], [-0.6, 0.6, -0.6]]
        )
    ),
    "capsule": Capsule(0.4, 1.5),
    "cylinder": Cylinder(0.5, 1.2),
    "cone": Cone(1.5, np.deg2rad(25)),
    "sphere": Sphere(0.7),
    "ellipsoid": Ellipsoid(np.diag([1.0, 4.0, 2.0])),
    "polygon": Polygon(np.column_stack([np.cos(HEXAGON), np.sin(HEXAGON)]), np.full(6, 0.6), 0.15),
}


def random_poses(rng, n):
    """Pose pairs with centre distances 0–4: a mix of penetrating and separated configurations."""
    direction = rng.normal(size=(n, 3))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    r_a = rng.normal(size=(n, 3))
    return r_a, rng.normal(size=(n, 4)), r_a + rng.uniform(0, 4, size=(n, 1)) * direction, rng.normal(size=(n, 4))


def time_batch(a, b, poses, threads):
    proximity_batch(a, *[p[:100] for p in poses[:2]], b, *[p[:100] for p in poses[2:]])  # warm up
    start = time.perf_counter()
    result = proximity_batch(a, poses[0], poses[1], b, poses[2], poses[3], threads=threads)
    elapsed = time.perf_counter() - start
    assert np.all(result.status == 0), "benchmark problems must all be solved"
    return elapsed / len(poses[0]), result.iterations.mean()


def time_one_pair_solver(a, b, poses):
    """Seconds per pair of a batch given as lists of shapes: the native loop calls the one-pair solver."""
    n = len(poses[0])
    start = time.perf_counter()
    proximity_batch([a] * n, poses[0], poses[1], [b] * n, poses[2], poses[3])
    return (time.perf_counter() - start) / n


def time_python_calls(a, b, poses, count):
    args = [(poses[0][i], poses[1][i], poses[2][i], poses[3][i]) for i in range(count)]
    start = time.perf_counter()
    for r_a, q_a, r_b, q_b in args:
        proximity(a, r_a, q_a, b, r_b, q_b)
    return (time.perf_counter() - start) / count


def best_of(repeats, measure):
    """The fastest of `repeats` runs of measure(), which returns a time or a tuple led by one."""
    return min(measure() for _ in range(repeats))


def time_cvxpy(a, b, poses, count):
    """Mean seconds per oracle re-solve and per Clarabel solve inside it."""
    proximity_oracle(a, poses[0][0], poses[1][0], b, poses[2][0], poses[3][0])  # compile once
    total, solver = 0.0, 0.0
    for i in range(count):
        start = time.perf_counter()
        proximity_oracle(a, poses[0][i], poses[1][i], b, poses[2][i], poses[3][i])
        total += time.perf_counter() - start
        solver += proximity_problem(a, b).solver_stats.solve_time
    return total / count, solver / count


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--poses", type=int, default=10_000, help="pose pairs per shape pair (batch path)")
    parser.add_argument("--python-calls", type=int, default=2_000, help="single calls per shape pair")
    parser.add_argument("--cvxpy-problems", type=int, default=10, help="cvxpy solves per shape pair")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each measurement; the fastest counts")
    args = parse_arguments(parser, dict(poses=200, python_calls=20, cvxpy_problems=1, repeats=1))
    best = functools.partial(best_of, args.repeats)
    rng = np.random.default_rng(0)

    rows = {name: [] for name in SHAPES}
    for (name_a, a), (_, b) in itertools.product(SHAPES.items(), SHAPES.items()):
        poses = random_poses(rng, args.poses)
        batch, iterations = best(lambda: time_batch(a, b, poses, threads=1))
        batch2, _ = best(lambda: time_batch(a, b, poses, threads=2))
        one_pair = best(lambda: time_one_pair_solver(a, b, poses))
        single = best(lambda: time_python_calls(a, b, poses, args.python_calls))
        cvx_total, cvx_solver = best(lambda: time_cvxpy(a, b, poses, args.cvxpy_problems))
        rows[name_a].append((batch, batch2, one_pair, single, cvx_total, cvx_solver, iterations))

    table = Table(
        [
            "primitive",
            "batch 1 thr",
            "batch 2 thr",
            "one-pair",
            "python call",
            "cvxpy",
            "clarabel",
            "cvxpy/batch",
            "clarabel/batch",
            "cvxpy/call",
            "iters",
        ],
        caption=(
            f"Time per pair averaged over the 7 partners of each primitive; {fastest_of(args.repeats)}; "
            f"cvxpy + Clarabel compiled once per shape pair, solved at gap and feasibility 1e-10"
        ),
    )

    def add_row(name, values):
        batch, batch2, one_pair, single, cvx_total, cvx_solver, iterations = values
        table.add(
            name,
            f"{batch * 1e6:.2f} µs",
            f"{batch2 * 1e6:.2f} µs",
            f"{one_pair * 1e6:.2f} µs",
            f"{single * 1e6:.2f} µs",
            f"{cvx_total * 1e3:.2f} ms",
            f"{cvx_solver * 1e6:.0f} µs",
            f"{cvx_total / batch:.0f}x",
            f"{cvx_solver / batch:.1f}x",
            f"{cvx_total / single:.0f}x",
            f"{iterations:.1f}",
        )

    means = [np.mean(values, axis=0) for values in rows.values()]
    for name, values in zip(rows, means):
        add_row(name, values)
    add_row("mean", np.mean(means, axis=0))
    print_report("Proximity (bench_proximity.py)", [table], args, libraries=("cvxpy", "Clarabel"))


if __name__ == "__main__":
    main()
