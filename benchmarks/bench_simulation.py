"""Simulation: step time, full step-Jacobian time and central-difference Jacobian time per robot, in
the format of Nimble's Table III, and Nimble's own step + Jacobian time on the same URDF where the
`nimblephysics` wheel installs and runs (in a subprocess: it may crash).

Each robot stands (or lies) on the ground plane: it is placed with its lowest collision shape 1 mm
into the ground and simulated for `--settle` steps first, so the measured steps have contacts.
dcol's figures are the native World.step_batch, on one thread:
  * step: one call for one state, without derivatives;
  * step+Jac: one call with ∂(q⁺, v⁺)/∂(q, v, τ), what Nimble's figure computes (state and action
    Jacobians); +θ: the same with the parameter columns (10 per body + μ + e);
  * batched: per state, in calls of `--batch` states (a trajectory linearized at once);
  * central diff: the 6 nv perturbed steps of ∂(q⁺, v⁺)/∂(q, v, τ) in one step_batch call, and the
    speedup of step+Jac over it; FD err: the two's largest difference in the v and τ columns
    relative to the largest entry (∂/∂q is one-sided at resting contacts: see measure_dcol).
Nimble/dcol ratios compare Nimble's step + Jacobians to the one-call and the batched figures; where
Nimble's model finds no contact and dcol's does, also to dcol on that contact-free scene (no ground).
A second table has the Python World.step path (warm-started; Step.jacobians with θ).

A third table times rollouts without derivatives from the settled state: `--worlds` copies with
perturbed velocities, `--steps` steps each, by World.rollout in a Python loop and by
World.rollout_batch (native, one and two threads), beside Nimble's own World.step.

Nimble runs in a subprocess of `--nimble-python`: its wheel (nimblephysics 0.10.52) needs numpy < 2
and must not share a process with torch, so give it an interpreter of its own:

    python -m venv /tmp/nimble-venv && /tmp/nimble-venv/bin/pip install "numpy<2" && \
        /tmp/nimble-venv/bin/pip install --no-deps nimblephysics

Run: python benchmarks/bench_simulation.py [--settle 200] [--repeats 20] [--robots cartpole,...]
         [--batch 32] [--worlds 8] [--steps 100] [--nimble-python /tmp/nimble-venv/bin/python]
         [--markdown] [--quick]
"""

import argparse
import json
import os
import subprocess
import sys
import time

# One thread throughout, as Nimble runs: OpenBLAS's threads cost more than they save on these small
# matrices (waking them up takes longer than the products). Set before numpy loads OpenBLAS.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np
from report import Table, median_of, parse_arguments, print_report

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
    return os.path.join(example_robot_data_dir(), "example-robot-data", "robots", EXAMPLE_ROBOTS[name][0])


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
    lower, _ = world.scene.bounding_boxes(*world._body_kinematics(q)[:2])
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


def _central_differences(world, q, v, tau, eps=1e-6):
    """∂(q⁺, v⁺)/∂(q, v, τ) (2 nv, 3 nv) by central differences, the 6 nv perturbed steps in one
    World.step_batch call (the fastest finite differences dcol offers)."""
    model, nv = world.model, world.model.nv
    offsets = eps * np.vstack([np.eye(nv), -np.eye(nv)])
    count = 2 * nv
    qs = np.vstack([integrate(model, np.tile(q, (count, 1)), offsets), np.tile(q, (2 * count, 1))])
    vs = np.vstack([np.tile(v, (count, 1)), v + offsets, np.tile(v, (count, 1))])
    taus = np.vstack([np.tile(tau, (2 * count, 1)), tau + offsets])
    out = world.step_batch(qs, vs, taus, threads=1)
    plus = np.arange(nv)[:, None] + np.array([0, 2 * nv, 4 * nv])  # (nv, 3): the q, v, τ columns' + steps
    plus, minus = plus.T.ravel(), (plus + nv).T.ravel()
    columns = np.hstack([difference(model, out.q[minus], out.q[plus]), out.v[plus] - out.v[minus]])
    return columns.T / (2 * eps)


def _native_jacobian(world, q, v, tau, parameters):
    jac = world.step_batch(q[None], v[None], tau[None], derivatives=True, parameters=parameters, threads=1).jacobians
    return np.block([[jac.q_q[0], jac.q_v[0], jac.q_tau[0]], [jac.v_q[0], jac.v_v[0], jac.v_tau[0]]])


def measure_dcol(name, settle, repeats, batch):
    """Native one-call and batched step and step + Jacobian times, central differences by one batch
    call, their agreement, and the Python World.step path's times."""
    model = _model(name)
    world = World(model, dt=1e-3)
    q, v, tau = _placed(world, name), np.zeros(model.nv), np.zeros(model.nv)
    previous = None
    for _ in range(settle):
        previous = world.step(q, v, tau, warm_start=previous)
        q, v = previous.q, previous.v
    one = (q[None], v[None], tau[None])
    many = tuple(np.repeat(x, batch, axis=0) for x in one)
    result = {
        "nv": model.nv,
        "contacts": len(previous.contacts),
        "world": world,
        "state": (q, v),
        "step": _median_time(lambda: world.step_batch(*one, threads=1), repeats),
        "jacobian": _median_time(
            lambda: world.step_batch(*one, derivatives=True, parameters=False, threads=1), repeats
        ),
        "jacobian_params": _median_time(lambda: world.step_batch(*one, derivatives=True, threads=1), repeats),
        "batched": _median_time(
            lambda: world.step_batch(*many, derivatives=True, parameters=False, threads=1), max(3, repeats // 5)
        )
        / batch,
        "central": _median_time(lambda: _central_differences(world, q, v, tau), max(3, repeats // 5)),
        "python_step": _median_time(lambda: world.step(q, v, tau, warm_start=previous), repeats),
        "python_jacobian": _median_time(
            lambda: world.step(q, v, tau, warm_start=previous, derivatives=True).jacobians(), repeats
        ),
    }
    # Agreement on this configuration in the v and τ columns: a resting contact sits where its gap φ
    # is 0 to round-off (the speculative row lands it there), the kink of the stabilization term (rate
    # 1/Δt for φ > 0, β/Δt for φ < 0), so ∂/∂q is one-sided and central differences straddle it.
    finite, analytic = (
        J[:, model.nv :] for J in (_central_differences(world, q, v, tau), _native_jacobian(world, q, v, tau, False))
    )
    result["error"] = float(np.abs(finite - analytic).max() / max(1.0, np.abs(finite).max()))
    # The same state without the ground: the scene of a Nimble model that finds no contacts.
    free = World(model, dt=1e-3, ground=False)
    result["jacobian_free"] = _median_time(
        lambda: free.step_batch(*one, derivatives=True, parameters=False, threads=1), repeats
    )
    result["batched_free"] = (
        _median_time(
            lambda: free.step_batch(*many, derivatives=True, parameters=False, threads=1), max(3, repeats // 5)
        )
        / batch
    )
    return result


def measure_rollouts(world, state, worlds, steps):
    """Seconds per world-step of rollouts from `state` with perturbed velocities: a Python loop of
    World.rollout, and World.rollout_batch on one and two threads."""
    nv = world.model.nv
    rng = np.random.default_rng(0)
    q0 = np.tile(state[0], (worlds, 1))
    v0 = state[1] + 1e-2 * rng.normal(size=(worlds, nv))
    taus = np.zeros((worlds, steps, nv))
    count = worlds * steps
    python = _median_time(lambda: [world.rollout(q0[n], v0[n], taus[n]) for n in range(worlds)], 1) / count
    native = [_median_time(lambda: world.rollout_batch(q0, v0, taus, threads=threads), 3) / count for threads in (1, 2)]
    return python, native


# Nimble's core module only: the package's __init__ imports torch, whose native libraries break
# Nimble's (World() crashes) when both are loaded, and its wheel is built against numpy 1.x.
_NIMBLE_WORKER = r"""
import json, sys, time
import numpy as np
from nimblephysics_libs import _nimblephysics as nimble
urdf, ground, packages, repeats, settle = sys.argv[1:4] + [int(arg) for arg in sys.argv[4:6]]
world = nimble.simulation.World()
world.setGravity(np.array([0.0, 0.0, -9.81]))
world.setTimeStep(1e-3)
loader = nimble.utils.DartLoader()
loader.addPackageDirectory("example-robot-data", packages)  # its URDFs' package:// mesh URIs
robot = loader.parseSkeleton(urdf)
world.addSkeleton(robot)
world.addSkeleton(loader.parseSkeleton(ground))
for _ in range(settle):
    world.step()
def median(function):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return float(np.median(times))
def jacobians():
    snapshot = nimble.neural.forwardPass(world)
    snapshot.getStateJacobian(world)
    snapshot.getActionJacobian(world)
state = world.getState()
def step():
    world.setState(state)
    world.step()
result = {"jacobian": median(jacobians), "step": median(step), "dofs": robot.getNumDofs(),
          "contacts": world.getLastCollisionResult().getNumContacts()}
print(json.dumps(result))
"""


def measure_nimble(name, settle, repeats, python):
    """Nimble's forward pass + state and action Jacobians (seconds) and its contact count, or the
    reason it could not run."""
    try:
        result = subprocess.run(
            [
                python,
                "-c",
                _NIMBLE_WORKER,
                _urdf(name),
                str(dataset_robot_path("ground_plane")),
                os.path.join(example_robot_data_dir(), "example-robot-data"),
                str(repeats),
                str(settle),
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
    except subprocess.TimeoutExpired:
        return "timed out"
    if result.returncode != 0:
        lines = (result.stderr or "").strip().splitlines()
        if result.returncode < 0:
            return f"crashed (signal {-result.returncode})"
        return lines[-1][:60] if lines else f"exit {result.returncode}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def nimble_version(python):
    """nimblephysics' version in the interpreter that runs it, or why there is none."""
    command = "import importlib.metadata as m; print(m.version('nimblephysics'))"
    try:
        result = subprocess.run([python, "-c", command], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return "not run"
    return result.stdout.strip() if result.returncode == 0 else "not installed"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--settle", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--robots", default=",".join(DATASET + EXAMPLES))
    parser.add_argument("--worlds", type=int, default=8)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--batch", type=int, default=32, help="states per step_batch call in the 'batched' column")
    parser.add_argument(
        "--nimble-python",
        default=sys.executable,
        help="interpreter with nimblephysics and numpy<2 (see the module docstring)",
    )
    args = parse_arguments(
        parser, dict(settle=20, repeats=1, robots="cartpole,half_cheetah,ur5", worlds=2, steps=5, batch=2)
    )
    steps = Table(
        [
            "robot",
            "nv",
            "contacts",
            "step",
            "step+Jac",
            "+θ",
            "batched",
            "central diff",
            "speedup",
            "FD err",
            "Nimble step+Jac",
            "Nimble/dcol",
            "Nimble/batched",
            "Nimble nv",
            "Nimble contacts",
        ],
        caption=(
            f"dcol's native World.step_batch on one thread, dt = 1 ms, ms per state ({median_of(args.repeats)}; "
            f"batched: per state of {args.batch}); Nimble's step with its state and action Jacobians, "
            "and its ratio to dcol's step+Jac one call at a time and batched"
        ),
    )
    rollouts, python_rows = [], []
    for name in args.robots.split(","):
        result = measure_dcol(name, args.settle, args.repeats, args.batch)
        nimble = measure_nimble(name, args.settle, args.repeats, args.nimble_python)
        if isinstance(nimble, dict):
            nimble_cells = (
                f"{1e3 * nimble['jacobian']:.3f}",
                f"{nimble['jacobian'] / result['jacobian']:.1f}x",
                f"{nimble['jacobian'] / result['batched']:.1f}x",
                nimble["dofs"],
                nimble["contacts"],
            )
            if nimble["contacts"] == 0 and result["contacts"] > 0:  # the same, contact-free scene
                steps.notes.append(
                    f"{name}: Nimble's model finds no contact; dcol without ground: step+Jac "
                    f"{1e3 * result['jacobian_free']:.3f} ms, batched {1e3 * result['batched_free']:.4f} ms "
                    f"(Nimble/dcol {nimble['jacobian'] / result['jacobian_free']:.1f}x, "
                    f"{nimble['jacobian'] / result['batched_free']:.1f}x)."
                )
        else:
            nimble_cells = (nimble, "", "", "", "")
        steps.add(
            name,
            result["nv"],
            result["contacts"],
            f"{1e3 * result['step']:.3f}",
            f"{1e3 * result['jacobian']:.3f}",
            f"{1e3 * result['jacobian_params']:.3f}",
            f"{1e3 * result['batched']:.4f}",
            f"{1e3 * result['central']:.3f}",
            f"{result['central'] / result['jacobian']:.1f}x",
            f"{result['error']:.1e}",
            *nimble_cells,
        )
        python_rows.append((name, result))
        rollouts.append((name, measure_rollouts(result["world"], result["state"], args.worlds, args.steps), nimble))

    python = Table(
        ["robot", "step", "step+Jac (with θ)", "native +θ speedup"],
        caption="The same through World.step in Python (warm-started), ms per call (median)",
    )
    for name, result in python_rows:
        python.add(
            name,
            f"{1e3 * result['python_step']:.3f}",
            f"{1e3 * result['python_jacobian']:.3f}",
            f"{result['python_jacobian'] / result['jacobian_params']:.1f}x",
        )

    rollout = Table(
        ["robot", "World.rollout", "batch 1 thr", "batch 2 thr", "speedup", "Nimble World.step", "Nimble/batch 1 thr"],
        caption=(
            f"Rollouts: {args.worlds} worlds x {args.steps} steps, no derivatives; ms per world-step "
            "(World.rollout in a Python loop, World.rollout_batch on one and two threads; speedup: the loop "
            "over two threads)"
        ),
    )
    for name, (python_time, (one, two)), nimble in rollouts:
        nimble_cells = (
            (f"{1e3 * nimble['step']:.3f}", f"{nimble['step'] / one:.2f}x")
            if isinstance(nimble, dict)
            else (nimble, "")
        )
        rollout.add(
            name,
            f"{1e3 * python_time:.3f}",
            f"{1e3 * one:.3f}",
            f"{1e3 * two:.3f}",
            f"{python_time / two:.1f}x",
            *nimble_cells,
        )
    print_report(
        "Simulation (bench_simulation.py)",
        [steps, python, rollout],
        args,
        extra_versions={"Nimble": nimble_version(args.nimble_python)},
    )


if __name__ == "__main__":
    main()
