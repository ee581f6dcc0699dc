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
perturbed velocities, `--steps` steps each, world by world with World.rollout (one native call per
world) and by World.rollout_batch (native, one and two threads), beside Nimble's own World.step.

Two more tables compare with MuJoCo (mujoco_scenes.py builds its models) on the same scenes, both
simulators settled from the same state: the robots, Solo12 lying after a fall and piles of boxes,
with each side's contact count, step and step + Jacobian (MuJoCo's by centred differences) times;
then piles of growing size, with the exponent of step time against contacts. `--robots ""` runs
these alone, `--mujoco-scenes "" --piles ""` leaves them out.

Nimble runs in a subprocess of `--nimble-python`: its wheel (nimblephysics 0.10.52) needs numpy < 2
and must not share a process with torch, so give it an interpreter of its own:

    python -m venv /tmp/nimble-venv && /tmp/nimble-venv/bin/pip install "numpy<2" && \
        /tmp/nimble-venv/bin/pip install --no-deps nimblephysics

Run: python benchmarks/bench_simulation.py [--settle 200] [--repeats 20] [--robots cartpole,...]
         [--batch 32] [--worlds 8] [--steps 100] [--nimble-python /tmp/nimble-venv/bin/python]
         [--mujoco-scenes ur5,solo12_fallen,boxes8,...] [--piles 1,8,27,64] [--step-limit 1.0]
         [--markdown] [--quick]
"""

import argparse
import json
import os
import subprocess
import sys
import time
import warnings

# One thread throughout, as Nimble runs: OpenBLAS's threads cost more than they save on these small
# matrices (waking them up takes longer than the products). Set before numpy loads OpenBLAS.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np
from report import Table, median_of, median_time, parse_arguments, print_report

from dcol.dynamics import (
    ModelBuilder,
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
from dcol.geom import Box

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
    q[height_index] -= _lowest_point(world, q) + 1e-3
    return q


def _lowest_point(world, q):
    """The height of the lowest point of the model's shapes at configuration q (their bounding boxes')."""
    lower, _ = world.scene.bounding_boxes(*world.body_poses(q))
    moving = world.scene_body_of_model[world.scene.body_of_shape] >= 0
    return lower[moving, 2].min()


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
        "step": median_time(lambda: world.step_batch(*one, threads=1), repeats),
        "jacobian": median_time(lambda: world.step_batch(*one, derivatives=True, parameters=False, threads=1), repeats),
        "jacobian_params": median_time(lambda: world.step_batch(*one, derivatives=True, threads=1), repeats),
        "batched": median_time(
            lambda: world.step_batch(*many, derivatives=True, parameters=False, threads=1), max(3, repeats // 5)
        )
        / batch,
        "central": median_time(lambda: _central_differences(world, q, v, tau), max(3, repeats // 5)),
        "python_step": median_time(lambda: world.step(q, v, tau, warm_start=previous), repeats),
        "python_jacobian": median_time(
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
    result["jacobian_free"] = median_time(
        lambda: free.step_batch(*one, derivatives=True, parameters=False, threads=1), repeats
    )
    result["batched_free"] = (
        median_time(lambda: free.step_batch(*many, derivatives=True, parameters=False, threads=1), max(3, repeats // 5))
        / batch
    )
    return result


def measure_rollouts(world, state, worlds, steps):
    """Seconds per world-step of rollouts from `state` with perturbed velocities: World.rollout world by
    world, and World.rollout_batch on one and two threads."""
    nv = world.model.nv
    rng = np.random.default_rng(0)
    q0 = np.tile(state[0], (worlds, 1))
    v0 = state[1] + 1e-2 * rng.normal(size=(worlds, nv))
    taus = np.zeros((worlds, steps, nv))
    count = worlds * steps
    python = median_time(lambda: [world.rollout(q0[n], v0[n], taus[n]) for n in range(worlds)], 1) / count
    native = [median_time(lambda: world.rollout_batch(q0, v0, taus, threads=threads), 3) / count for threads in (1, 2)]
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


# --- MuJoCo on the same scenes -----------------------------------------------------------------------

# Robots of the tables above, a fallen Solo12 and piles of boxes (boxes<count>).
MUJOCO_SCENES = ("ur5", "talos", "solo12", "solo12_fallen", "boxes8", "boxes27") + DATASET
PILES = (1, 8, 27, 64, 125)
ROLLOUT_STEPS = 50  # steps per rollout in the MuJoCo tables' "dcol step"
FALL_STEPS = 500  # settling steps of the fallen Solo12 at least: its fall and the rest after it
BOX_HALF, BOX_MASS = 0.1, 1.0  # the tests' piles (tests/support/bodies.py box_pile_model)
# The fallen Solo12 starts rolled by this angle (rad) about x, its lowest point this high (m).
FALL_ROLL, FALL_HEIGHT = 1.2, 0.05


def box_pile(count):
    """`count` (a cube number n³) free cubes in n x n columns of n, at rest: (dcol Model, q0).

    Each column is stacked as the tests stack theirs (1 cm gaps, a few mm of sideways offset and
    a small yaw drawn with a fixed seed); the columns stand 5 cm apart, beyond the 1 cm contact
    margin, so that the contacts grow with the count as in a wide pile."""
    side = round(count ** (1 / 3))
    if side**3 != count:
        raise ValueError(f"a pile of {count} boxes: the count must be a cube")
    builder = ModelBuilder()
    inertia = BOX_MASS * (2 * BOX_HALF) ** 2 / 6 * np.eye(3)
    for i in range(count):
        builder.add_body(f"box{i}", parent=None, joint=f"box{i}_free", kind="floating", mass=BOX_MASS, inertia=inertia)
        builder.add_shape(f"box{i}", Box([BOX_HALF] * 3))
    rng = np.random.default_rng(0)
    gap, across = 0.01, 2 * BOX_HALF + 0.05
    q = []
    for i in range(count):
        column, level = divmod(i, side)
        x, y = across * (column % side), across * (column // side)
        yaw = rng.uniform(-0.1, 0.1)
        position = [x, y, BOX_HALF + gap + (2 * BOX_HALF + gap) * level] + np.r_[rng.uniform(-0.005, 0.005, 2), 0.0]
        q.append(np.r_[position, np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])
    return builder.build(), np.concatenate(q)


def mujoco_scene(name):
    """(dcol World, initial configuration at rest, MuJoCo model) of a scene of MUJOCO_SCENES or
    boxes<count>."""
    import mujoco_scenes  # only here: the tables above do not need MuJoCo

    if name.startswith("boxes"):
        model, q = box_pile(int(name.removeprefix("boxes")))
        spec = mujoco_scenes.box_pile_spec([f"box{i}" for i in range(model.nbodies)], BOX_HALF, BOX_MASS)
        return World(model, dt=1e-3, friction=0.5), q, mujoco_scenes.compile_scene(spec)
    robot = name.removesuffix("_fallen")
    model = _model(robot)
    world = World(model, dt=1e-3, friction=0.5)
    if name.endswith("_fallen"):
        q = neutral(model)
        q[3:7] = [np.cos(FALL_ROLL / 2), np.sin(FALL_ROLL / 2), 0.0, 0.0]
        q[2] += FALL_HEIGHT - _lowest_point(world, q)
    else:
        q = _placed(world, robot)
    floating_joint = model.joint_names[0] if model.joint_kinds[0] == "floating" else None
    spec = mujoco_scenes.urdf_spec(_urdf(robot), floating_joint, package_root=example_robot_data_dir())
    return world, q, mujoco_scenes.compile_scene(spec)


def measure_dcol_scene(world, q, settle, repeats, step_limit, jacobian=True):
    """Settles `settle` steps from rest with World.step (warm-started, as measure_dcol), then the
    median times (s) from the settled state of a step within a rollout (rollout_batch of
    ROLLOUT_STEPS, each step warm-started from the last, as mj_step is), of one native step without
    a warm start, and of step + Jacobian ∂(q⁺, v⁺)/∂(q, v, τ) (None without `jacobian`), and its
    contact count; None when a settling step takes longer than `step_limit` seconds."""
    model = world.model
    v, tau = np.zeros(model.nv), np.zeros(model.nv)
    previous = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(settle):
            start = time.perf_counter()
            previous = world.step(q, v, tau, warm_start=previous)
            if time.perf_counter() - start > step_limit:
                return None
            q, v = previous.q, previous.v
    one = (q[None], v[None], tau[None])
    controls = np.zeros((1, ROLLOUT_STEPS, model.nv))
    return {
        "contacts": int(world.step_batch(*one, threads=1).contacts[0]),
        "rollout": median_time(lambda: world.rollout_batch(q[None], v[None], controls, threads=1), repeats)
        / ROLLOUT_STEPS,
        "step": median_time(lambda: world.step_batch(*one, threads=1), repeats),
        "jacobian": median_time(lambda: world.step_batch(*one, derivatives=True, parameters=False, threads=1), repeats)
        if jacobian
        else None,
        "warnings": len(caught),
    }


def compare_with_mujoco(name, settle, repeats, step_limit, jacobian=True):
    """dcol's and MuJoCo's figures on one scene, both settled from the same state; or why not."""
    import mujoco
    import mujoco_scenes

    try:
        world, q, model = mujoco_scene(name)
    except ValueError as error:  # MuJoCo's compiler refused the model
        return {"error": str(error).splitlines()[0][:80]}
    if name.endswith("_fallen"):
        settle = max(settle, FALL_STEPS)
    dcol = measure_dcol_scene(world, q, settle, repeats, step_limit, jacobian)
    if dcol is None:
        return {"error": f"a dcol step took over {step_limit:g} s"}
    data = mujoco.MjData(model)
    set_configuration = mujoco_scenes.set_configuration
    set_configuration(model, data, world.model.joint_names, world.model.joint_q_index, q)
    return {"nv": world.model.nv, "dcol": dcol, "mujoco": mujoco_scenes.measure(model, data, settle, repeats, jacobian)}


def _ratio(value):
    """A ratio as a cell: one decimal, or two significant digits below 1."""
    return f"{value:.1f}x" if value >= 0.95 else f"{value:.2g}x"


def _step_cells(label, result):
    """The cells both MuJoCo tables open with: label, nv, each side's contacts, dcol's step in a
    rollout, MuJoCo's step, their ratio and dcol's cold step; or the error in the ratio's place."""
    if "error" in result:
        return [label, "", "", "", "", "", result["error"], ""]
    dcol, mujoco = result["dcol"], result["mujoco"]
    return [
        label,
        result["nv"],
        dcol["contacts"],
        mujoco["contacts"],
        f"{1e3 * dcol['rollout']:.3f}",
        f"{1e3 * mujoco['step']:.3f}",
        _ratio(dcol["rollout"] / mujoco["step"]),
        f"{1e3 * dcol['step']:.3f}",
    ]


def growth_exponent(contacts, times):
    """b of time ∝ contacts^b, least squares on log–log over the points with contacts; None below two."""
    points = [(c, t) for c, t in zip(contacts, times) if c > 0]
    if len(points) < 2:
        return None
    return float(np.polyfit(*np.log(np.array(points)).T, 1)[0])


def mujoco_tables(args):
    """The MuJoCo comparison's two tables: one row per scene, and piles of boxes of growing size."""
    scenes = [name for name in args.mujoco_scenes.split(",") if name]
    piles = [int(count) for count in args.piles.split(",") if count]
    results = {}
    for name in scenes:
        results[name] = compare_with_mujoco(name, args.settle, args.repeats, args.step_limit)
    for count in piles:
        if f"boxes{count}" not in results:
            results[f"boxes{count}"] = compare_with_mujoco(
                f"boxes{count}", args.settle, args.repeats, args.step_limit, jacobian=False
            )

    comparison = Table(
        [
            "scene",
            "nv",
            "dcol contacts",
            "MuJoCo contacts",
            "dcol step",
            "MuJoCo step",
            "dcol/MuJoCo",
            "dcol cold step",
            "dcol step+Jac",
            "MuJoCo FD Jac",
            "MuJoCo/dcol",
        ],
        caption=(
            f"dcol and MuJoCo on the same scenes, one thread, dt = 1 ms, μ = 0.5, ms per step "
            f"({median_of(args.repeats)}) after {args.settle} steps of settling from the same state "
            f"(the fallen Solo12: {max(args.settle, FALL_STEPS)} from a roll of {FALL_ROLL} rad): dcol's step "
            f"within a rollout (World.rollout_batch of {ROLLOUT_STEPS} steps, each warm-started from the last) "
            "beside MuJoCo's mj_step (warm-started); dcol's native World.step_batch for one state without a "
            "warm start (cold step) and with ∂(q⁺, v⁺)/∂(q, v, τ) beside MuJoCo's mjd_transitionFD (centred "
            "differences, the same Jacobian)"
        ),
    )
    comparison.notes.append(
        "Contacts are each simulator's own at the measured state: dcol's include speculative ones within its "
        "1 cm margin, MuJoCo's (margin 0) only touching ones; scenes whose counts differ much (a robot that fell "
        "differently) are not like for like."
    )
    for name in scenes:
        result = results[name]
        if "error" in result:
            comparison.add(*_step_cells(name, result), "", "", "")
            continue
        dcol, mujoco = result["dcol"], result["mujoco"]
        comparison.add(
            *_step_cells(name, result),
            f"{1e3 * dcol['jacobian']:.3f}",
            f"{1e3 * mujoco['jacobian']:.3f}",
            _ratio(mujoco["jacobian"] / dcol["jacobian"]),
        )
        if dcol["warnings"]:
            comparison.notes.append(f"{name}: {dcol['warnings']} warnings from dcol's contact solver while settling.")

    growth = Table(
        [
            "boxes",
            "nv",
            "dcol contacts",
            "MuJoCo contacts",
            "dcol step",
            "MuJoCo step",
            "dcol/MuJoCo",
            "dcol cold step",
        ],
        caption=(
            "Piles of boxes (columns of 0.2 m cubes, 1 kg), settled as above: ms per step within a rollout "
            "and without a warm start (cold) "
            f"({median_of(args.repeats)}); a pile is left out when one of dcol's settling steps takes over "
            f"{args.step_limit:g} s"
        ),
    )
    series = {"dcol": ([], []), "MuJoCo": ([], [])}
    for count in piles:
        result = results[f"boxes{count}"]
        growth.add(*_step_cells(count, result))
        if "error" in result:
            continue
        dcol, mujoco = result["dcol"], result["mujoco"]
        for label, contacts, step in (
            ("dcol", dcol["contacts"], dcol["rollout"]),
            ("MuJoCo", mujoco["contacts"], mujoco["step"]),
        ):
            series[label][0].append(contacts)
            series[label][1].append(step)
    exponents = {label: growth_exponent(*points) for label, points in series.items()}
    if all(exponent is not None for exponent in exponents.values()):
        growth.notes.append(
            "Step time ∝ contacts^b, least squares on log–log: "
            + ", ".join(f"{label} b = {exponent:.2f}" for label, exponent in exponents.items())
            + "."
        )
    return [comparison, growth]


def _spinning_box_energy(v, inertia):
    """Kinetic energy of free cubes from (T, 6) velocities [linear; angular], each half in a frame
    where the other's norm is the frame-free one (a cube's inertia is isotropic)."""
    return 0.5 * BOX_MASS * (v[:, :3] ** 2).sum(1) + 0.5 * inertia * (v[:, 3:] ** 2).sum(1)


def abuse_table(args):
    """Two of the reproducers of abuse that used to break the simulation, on dcol and on MuJoCo (the
    same scenes, one thread): the double pendulum started with its links through the ground slab, and a
    force-free box spinning at 50 rad/s."""
    import mujoco
    import mujoco_scenes

    table = Table(
        ["scene", "steps", "dcol ms", "MuJoCo ms", "dcol outcome", "MuJoCo outcome"],
        caption=(
            "Under abuse, one thread: total ms of each simulator's rollout (median of "
            f"{args.repeats}) and what became of the state"
        ),
    )
    # The shipped double pendulum, its pivot on the ground's top face and 2 m of links hanging through.
    steps = 100
    world = World(load_dataset_robot("double_pendulum"), dt=1e-3)
    q0 = np.array([0.3, 0.2])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = world.rollout_batch(q0[None], np.zeros((1, 2)), np.zeros((1, steps, 2)), threads=1)
    dcol_time = median_time(
        lambda: world.rollout_batch(q0[None], np.zeros((1, 2)), np.zeros((1, steps, 2)), threads=1), args.repeats
    )
    model = mujoco_scenes.compile_scene(mujoco_scenes.urdf_spec(dataset_robot_path("double_pendulum")))
    data = mujoco.MjData(model)

    def mujoco_rollout():
        mujoco.mj_resetData(model, data)
        data.qpos[:] = q0
        speeds = []
        for _ in range(steps):
            mujoco.mj_step(model, data)
            speeds.append(np.abs(data.qvel).max())
        return max(speeds)

    mujoco_speed = mujoco_rollout()
    table.add(
        "double pendulum 2 m through the ground",
        steps,
        f"{1e3 * dcol_time:.2f}",
        f"{1e3 * median_time(mujoco_rollout, args.repeats):.2f}",
        f"max {np.abs(result.v).max():.2f} rad/s, {len(caught)} solver warnings",
        f"max {mujoco_speed:.2f} rad/s",
    )

    # A force-free unit cube at 1 m/s spinning at 50 rad/s about z.
    steps, half = 10_000, 0.5
    inertia = BOX_MASS * (2 * half) ** 2 / 6
    builder = ModelBuilder(gravity=(0.0, 0.0, 0.0))
    builder.add_body("box", parent=None, joint="box_free", kind="floating", mass=BOX_MASS, inertia=inertia * np.eye(3))
    builder.add_shape("box", Box([half] * 3))
    world = World(builder.build(), dt=1e-3, ground=False)
    q0, v0 = np.r_[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0], np.r_[1.0, 0.0, 0.0, 0.0, 0.0, 50.0]
    taus = np.zeros((1, steps, 6))
    result = world.rollout_batch(q0[None], v0[None], taus, threads=1)
    dcol_time = median_time(lambda: world.rollout_batch(q0[None], v0[None], taus, threads=1), args.repeats)
    model = mujoco_scenes.compile_scene(mujoco_scenes.box_pile_spec(["box"], half, BOX_MASS))
    model.opt.gravity[:] = 0.0
    data = mujoco.MjData(model)

    def mujoco_spin():
        mujoco.mj_resetData(model, data)
        data.qpos[:] = [0.0, 0.0, 100.0, 1.0, 0.0, 0.0, 0.0]  # far above the ground plane
        data.qvel[:] = v0  # free joint: linear velocity in the world frame, angular in the body's
        velocities = np.empty((steps, 6))
        for t in range(steps):
            mujoco.mj_step(model, data)
            velocities[t] = data.qvel
        return velocities

    initial = _spinning_box_energy(v0[None], inertia)[0]
    drift = {
        "dcol": _spinning_box_energy(result.v[0], inertia) / initial - 1,
        "MuJoCo": _spinning_box_energy(mujoco_spin(), inertia) / initial - 1,
    }
    table.add(
        "free box spinning at 50 rad/s",
        steps,
        f"{1e3 * dcol_time:.2f}",
        f"{1e3 * median_time(mujoco_spin, args.repeats):.2f}",
        f"energy drift {np.abs(drift['dcol']).max():.1e}",
        f"energy drift {np.abs(drift['MuJoCo']).max():.1e}",
    )
    return table


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
    parser.add_argument(
        "--mujoco-scenes",
        default=",".join(MUJOCO_SCENES),
        help="scenes to compare with MuJoCo (robots, solo12_fallen, boxes<count>); empty for none",
    )
    parser.add_argument("--piles", default=",".join(map(str, PILES)), help="box counts (cubes) of the pile table")
    parser.add_argument(
        "--step-limit", type=float, default=1.0, help="leave out a scene where a dcol settling step takes longer (s)"
    )
    parser.add_argument(
        "--abuse", action=argparse.BooleanOptionalAction, default=True, help="the table of abuse reproducers"
    )
    args = parse_arguments(
        parser,
        dict(
            settle=20,
            repeats=1,
            robots="cartpole,half_cheetah,ur5",
            worlds=2,
            steps=5,
            batch=2,
            mujoco_scenes="ur5,solo12_fallen,boxes8",
            piles="1,8",
        ),
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
    robots = [name for name in args.robots.split(",") if name]
    for name in robots:
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
            "(World.rollout world by world, World.rollout_batch on one and two threads; speedup: World.rollout "
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
    tables = [steps, python, rollout] if robots else []
    if args.mujoco_scenes or args.piles:
        tables += mujoco_tables(args)
    if args.abuse:
        tables.append(abuse_table(args))
    print_report(
        "Simulation (bench_simulation.py)",
        tables,
        args,
        libraries=("MuJoCo",) if args.mujoco_scenes or args.piles or args.abuse else (),
        extra_versions={"Nimble": nimble_version(args.nimble_python)} if robots else None,
    )


if __name__ == "__main__":
    main()
