"""Simulation: step time, full step-Jacobian time and central-difference Jacobian time per robot, in
the format of Nimble's Table III, and Nimble's own step + Jacobian time on the same URDF where the
`nimblephysics` wheel installs and runs (it is tried in a subprocess: it may crash).

Each robot stands (or lies) on the ground plane: it is placed with its lowest collision shape 1 mm
into the ground and simulated for `--settle` steps first, so the measured steps have contacts.
"Jacobian" is World.step(..., derivatives=True) followed by Step.jacobians(): ∂(q⁺, v⁺)/∂(q, v, τ)
and the parameter columns (10 per body + μ + e). "Central differences" are the 6 nv steps that
give ∂(q⁺, v⁺)/∂(q, v, τ) alone. Times are medians per call on one thread.

Run: python benchmarks/bench_simulation.py [--settle 200] [--repeats 20] [--robots cartpole,...]
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
from dcol.dynamics import (
    World,
    dataset_robot_path,
    difference,
    example_robot_data_dir,
    integrate,
    load_dataset_robot,
    load_example_robot,
    neutral,
)
from dcol.dynamics.robots import EXAMPLE_ROBOTS

DATASET = ("cartpole", "half_cheetah", "catapult", "jump_worm")
EXAMPLES = ("ur5", "solo12", "talos")
HEIGHT_JOINTS = {"half_cheetah": "rootz", "jump_worm": "rootz"}  # planar roots: the joint lifting them


def _model(name):
    return load_dataset_robot(name) if name in DATASET else load_example_robot(name)


def _urdf(name):
    if name in DATASET:
        return str(dataset_robot_path(name))
    return os.path.join(example_robot_data_dir(), EXAMPLE_ROBOTS[name][0])


def _placed(world, name):
    """Neutral configuration moved down (floating base or planar root) to 1 mm into the ground."""
    model = world.model
    q = neutral(model)
    if model.joint_kinds[0] == "floating":
        height_index = 2
    elif name in HEIGHT_JOINTS:
        height_index = model.joint_q_index[model.joint_names.index(HEIGHT_JOINTS[name])]
    else:
        return q
    r, quaternion = world._body_kinematics(q, False)[:2]
    lower, _ = world.scene.bounding_boxes(r, quaternion)
    moving = world.scene_body_of_model[world.scene.body_of_shape] >= 0
    q[height_index] -= lower[moving, 2].min() + 1e-3
    return q


def _median_time(function, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _central_differences(world, q, v, tau, previous, eps=1e-6):
    model = world.model
    for k in range(model.nv):
        e = np.zeros(model.nv)
        e[k] = eps
        for sign in (1.0, -1.0):
            world.step(integrate(model, q, sign * e), v, tau, warm_start=previous)
            world.step(q, v + sign * e, tau, warm_start=previous)
            world.step(q, v, tau + sign * e, warm_start=previous)


def measure_dcol(name, settle, repeats):
    model = _model(name)
    world = World(model, dt=1e-3)
    q, v, tau = _placed(world, name), np.zeros(model.nv), np.zeros(model.nv)
    previous = None
    for _ in range(settle):
        previous = world.step(q, v, tau, warm_start=previous)
        q, v = previous.q, previous.v

    def jacobians():
        world.step(q, v, tau, warm_start=previous, derivatives=True).jacobians()

    step = _median_time(lambda: world.step(q, v, tau, warm_start=previous), repeats)
    jacobian = _median_time(jacobians, repeats)
    central = _median_time(lambda: _central_differences(world, q, v, tau, previous), max(3, repeats // 5))
    # Agreement of the two on this configuration (inside a contact mode unless a contact is tied).
    J = world.step(q, v, tau, warm_start=previous, derivatives=True).jacobians()
    eps = 1e-6
    columns = []
    for k in range(model.nv):
        e = np.zeros(model.nv)
        e[k] = eps
        plus, minus = world.step(q, v + e, tau, warm_start=previous), world.step(q, v - e, tau, warm_start=previous)
        columns.append(np.r_[difference(model, minus.q, plus.q), plus.v - minus.v] / (2 * eps))
    finite = np.column_stack(columns)
    analytic = np.vstack([J.q_v, J.v_v])
    error = np.abs(finite - analytic).max() / max(1.0, np.abs(finite).max())
    return {"nv": model.nv, "contacts": len(previous.contacts), "step": step, "jacobian": jacobian,
            "central": central, "error": float(error)}


_NIMBLE_WORKER = r"""
import json, sys, time
import numpy as np
import nimblephysics as nimble
urdf, ground, repeats, settle = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
world = nimble.simulation.World()
world.setGravity([0.0, 0.0, -9.81])
world.setTimeStep(1e-3)
loader = nimble.utils.DartLoader()
world.addSkeleton(loader.parseSkeleton(urdf))
world.addSkeleton(loader.parseSkeleton(ground))
for _ in range(settle):
    world.step()
times = []
for _ in range(repeats):
    start = time.perf_counter()
    snapshot = nimble.neural.forwardPass(world)
    snapshot.getStateJacobian(world)
    snapshot.getActionJacobian(world)
    times.append(time.perf_counter() - start)
print(json.dumps({"jacobian": float(np.median(times))}))
"""


def measure_nimble(name, settle, repeats):
    """Nimble's forward pass + state and action Jacobians, or the reason it could not run."""
    try:
        result = subprocess.run(
            [sys.executable, "-c", _NIMBLE_WORKER, _urdf(name), str(dataset_robot_path("ground_plane")),
             str(repeats), str(settle)], capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return "timed out"
    if result.returncode != 0:
        lines = (result.stderr or "").strip().splitlines()
        if result.returncode < 0:
            return f"crashed (signal {-result.returncode})"
        return lines[-1][:60] if lines else f"exit {result.returncode}"
    return json.loads(result.stdout.strip().splitlines()[-1])["jacobian"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settle", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--robots", default=",".join(DATASET + EXAMPLES))
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores; dt = 1 ms; times are medians per call (ms)\n")
    header = (f"{'robot':14s} {'nv':>3s} {'contacts':>8s} {'step':>8s} {'step+Jac':>9s} {'central diff':>12s} "
              f"{'speedup':>8s} {'FD err':>8s}  Nimble step+Jac (ratio)")
    print(header)
    print("-" * len(header))
    for name in args.robots.split(","):
        result = measure_dcol(name, args.settle, args.repeats)
        nimble = measure_nimble(name, args.settle, args.repeats)
        if isinstance(nimble, float):
            nimble_text = f"{1e3 * nimble:9.3f} ({nimble / result['jacobian']:.1f}x)"
        else:
            nimble_text = nimble
        print(f"{name:14s} {result['nv']:3d} {result['contacts']:8d} {1e3 * result['step']:8.3f} "
              f"{1e3 * result['jacobian']:9.3f} {1e3 * result['central']:12.3f} "
              f"{result['central'] / result['jacobian']:7.1f}x {result['error']:8.1e}  {nimble_text}")


if __name__ == "__main__":
    main()
