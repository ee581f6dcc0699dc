"""Rollouts over Ray (dcol.dynamics.distributed) against one process: throughput in world-steps per
second, the overhead of a Ray task, the chunk size that makes it small, and a projection to 8 and 64
machines.

`--worlds` copies of `--robot` (default the half-cheetah, dropped onto the ground, so its steps have
contacts) roll out `--steps` steps under random forces, in three workloads:
  * rollout: the trajectories alone (rollout_many / World.rollout_batch);
  * + Jacobians: every step's Jacobians with their θ blocks, sent back (derivatives=True);
  * vjp: the rollouts with derivatives and the vector–Jacobian product of a loss on each, of which
    only the cotangents come back (rollout_vjp_many / rollout_batch(derivatives=True).vjp).
Each runs in one process (rollout_batch on one thread, then two) and on a local Ray cluster of one
worker, then two (ray.init(num_cpus=k), one chunk per worker). The single-process batch is what a
user without Ray would run; Ray on one machine pays the overhead that a cluster's extra machines
have to earn back.

Overhead: with one worker the tasks run one after another, so the time beyond the single process's
(one thread) is overhead alone; the rollouts run in chunks of 1, 2, 4, … worlds, and the overhead per
task is taken from the run with the most tasks. The chunk size above which it is below 5 % follows
from that and a world's rollout time, for each workload, beside the measured fractions.

Projection (stated as one, not measured): M machines like this one, two workers each, run
M × (the two-worker throughput measured here); it holds when each worker's chunk is at least the
5 % chunk size (so a call needs at least 2 M times as many worlds) and the network moves a chunk's
bytes (printed) faster than the chunk computes.

Run on a quiet machine: python benchmarks/bench_distributed.py [--robot half_cheetah] [--worlds 256]
    [--steps 100] [--repeats 5] [--chunks 1,2,4,8,16,32,64] [--markdown] [--quick]
(pip install ".[distributed]")
"""

import argparse
import math
import os

# One BLAS thread, as the other benchmarks: the vjp's products are small matrices, and the workers
# (which inherit the variable) must not share the cores among more threads than asked for.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import numpy as np
import ray
from report import Table, median_of, median_time, parse_arguments, print_report

from dcol.dynamics import World, load_dataset_robot, neutral
from dcol.dynamics.distributed import rollout_many, rollout_vjp_many

WORKLOADS = ("rollout", "+ Jacobians", "vjp")
MACHINES = (8, 64)
SMALL_OVERHEAD = 0.05


def make_batch(robot, worlds, steps):
    """The world and (q0, v0, taus, grad_q) of `worlds` rollouts: the robot just above the ground (a
    planar root's height lowered, a floating base raised), random velocities and forces."""
    floating = robot in ("box", "quadrotor")
    model = load_dataset_robot(robot)
    world = World(model, dt=2e-3)
    rng = np.random.default_rng(0)
    q0 = np.tile(neutral(model), (worlds, 1))
    if robot == "half_cheetah":
        q0[:, 1] = rng.uniform(-0.2, -0.1, worlds)
    elif floating:
        q0[:, 2] = rng.uniform(0.1, 0.3, worlds)
    v0 = rng.normal(scale=0.3, size=(worlds, model.nv))
    taus = rng.normal(size=(worlds, steps, model.nv))
    grad_q = rng.normal(size=(worlds, steps + 1, model.nv))
    return world, (q0, v0, taus), grad_q


def single_process(world, batch, grad_q, threads):
    """workload → a function running it in this process on `threads` threads."""
    return {
        "rollout": lambda: world.rollout_batch(*batch, threads=threads, progress=False),
        "+ Jacobians": lambda: world.rollout_batch(*batch, derivatives=True, threads=threads, progress=False),
        "vjp": lambda: world.rollout_batch(*batch, derivatives=True, threads=threads, progress=False).vjp(grad_q),
    }


def on_ray(world, batch, grad_q, chunk):
    """workload → a function running it on the Ray cluster in chunks of `chunk` worlds."""
    return {
        "rollout": lambda: rollout_many(world, *batch, chunk=chunk),
        "+ Jacobians": lambda: rollout_many(world, *batch, derivatives=True, chunk=chunk),
        "vjp": lambda: rollout_vjp_many(world, *batch, grad_q, chunk=chunk),
    }


def timed(functions, repeats):
    """Median times of each function, after one call that starts the workers and fills caches."""
    times = {}
    for name, function in functions.items():
        function()
        times[name] = median_time(function, repeats)
    return times


def bytes_per_world(world, steps):
    """workload → (bytes sent, bytes returned) per world: inputs and results as float64 (contact
    counts int32)."""
    nq, nv, params = world.model.nq, world.model.nv, world.num_params
    inputs = 8 * (nq + nv + steps * nv)
    trajectory = 8 * (steps + 1) * (nq + nv) + 4 * steps
    jacobians = 8 * steps * (6 * nv * nv + 2 * nv * params)
    cotangents = 8 * (2 * nv + steps * nv + params)
    return {
        "rollout": (inputs, trajectory),
        "+ Jacobians": (inputs, trajectory + jacobians),
        "vjp": (inputs + 8 * (steps + 1) * nv, cotangents),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robot", default="half_cheetah")
    parser.add_argument("--worlds", type=int, default=256)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--chunks", default="1,2,4,8,16,32,64", help="chunk sizes of the overhead table")
    args = parse_arguments(parser, dict(worlds=4, steps=5, repeats=1, chunks="1,2,4"))
    world, batch, grad_q = make_batch(args.robot, args.worlds, args.steps)
    world_steps = args.worlds * args.steps
    chunks = sorted({min(int(size), args.worlds) for size in args.chunks.split(",")})

    columns = {
        f"1 process, {t} thread{'s' * (t > 1)}": timed(single_process(world, batch, grad_q, t), args.repeats)
        for t in (1, 2)
    }
    overhead_times = {}
    for workers in (1, 2):
        ray.init(num_cpus=workers, include_dashboard=False)
        try:
            columns[f"Ray, {workers} worker{'s' * (workers > 1)}"] = timed(
                on_ray(world, batch, grad_q, math.ceil(args.worlds / workers)), args.repeats
            )
            if workers == 1:
                for size in chunks:
                    overhead_times[size] = timed(
                        {"rollout": on_ray(world, batch, grad_q, size)["rollout"]}, args.repeats
                    )
        finally:
            ray.shutdown()

    throughput = Table(
        ["workload", *columns],
        caption=(
            f"{args.robot}: {args.worlds} worlds × {args.steps} steps, world-steps per second "
            f"({median_of(args.repeats)}; Ray: one chunk per worker)"
        ),
    )
    for workload in WORKLOADS:
        throughput.add(workload, *(f"{world_steps / times[workload]:,.0f}" for times in columns.values()))

    single = columns["1 process, 1 thread"]
    overhead = Table(
        ["chunk (worlds)", "tasks", "time (ms)", "overhead"],
        caption=(
            f"rollout on one Ray worker, in chunks, against one process on one thread "
            f"({single['rollout'] * 1e3:.1f} ms)"
        ),
    )
    tasks = {size: math.ceil(args.worlds / size) for size in chunks}
    extra = {size: overhead_times[size]["rollout"] - single["rollout"] for size in chunks}
    for size in chunks:
        time = overhead_times[size]["rollout"]
        overhead.add(size, tasks[size], f"{time * 1e3:.1f}", f"{extra[size] / single['rollout']:.1%}")
    # Per task: the slope of the time over the task count, which leaves out what a call costs once
    # (pickling the world, the first contact with the cluster).
    most, fewest = chunks[0], chunks[-1]
    if tasks[most] > tasks[fewest]:
        task_cost = (extra[most] - extra[fewest]) / (tasks[most] - tasks[fewest])
    else:
        task_cost = extra[most] / tasks[most]
    task_cost = max(task_cost, 0.0)
    small = [size for size in chunks if extra[size] < SMALL_OVERHEAD * single["rollout"]]
    overhead.notes.append(
        f"overhead per task {task_cost * 1e3:.2f} ms (slope between chunks of {most} and {fewest}); "
        f"the smallest chunk measured below {SMALL_OVERHEAD:.0%}: {small[0] if small else 'none'}"
    )

    traffic = bytes_per_world(world, args.steps)
    projection = Table(
        [
            "workload",
            "5 % chunk (worlds)",
            "sent / returned per world",
            *(f"{m} machines (world-steps/s)" for m in MACHINES),
            *(f"worlds per call, {m}" for m in MACHINES),
        ],
        caption=(
            "PROJECTION, not a measurement: M machines like this one, two workers each, at M × the two-worker "
            "throughput above, given chunks of at least the 5 % size (worlds per call ≥ 2 M × that) and a "
            "network that moves a chunk's bytes faster than it computes"
        ),
    )
    two_workers = columns["Ray, 2 workers"]
    measured_chunk = math.ceil(args.worlds / 2)
    for workload in WORKLOADS:
        world_time = single[workload] / args.worlds
        chunk = max(1, math.ceil(task_cost / (SMALL_OVERHEAD * world_time)))
        sent, returned = traffic[workload]
        projection.add(
            workload,
            chunk,
            f"{sent / 1e3:.1f} kB / {returned / 1e3:.1f} kB",
            *(f"{m * world_steps / two_workers[workload]:,.0f}" for m in MACHINES),
            *(f"{2 * m * chunk:,}" for m in MACHINES),
        )
        if measured_chunk < chunk:
            projection.notes.append(
                f"{workload}: the two-worker figure was measured in chunks of {measured_chunk} worlds, below the 5 % "
                f"chunk: it carries more overhead than the projection assumes (pessimistic)"
            )
    print_report(
        "Rollouts over Ray (bench_distributed.py)",
        [throughput, overhead, projection],
        args,
        extra_versions={"Ray": ray.__version__},
    )


if __name__ == "__main__":
    main()
