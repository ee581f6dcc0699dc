"""Rigid-body algorithms: dcol against Pinocchio on robots of example-robot-data, in the same run.

Two tables, a block of rows per robot:
  * native: both libraries' C++ in one process (bench_dynamics_native.cpp, compiled here against
    Pinocchio's headers from the `pin` wheel and Eigen from `cmeel-eigen`), µs per call;
  * Python: one call through each library's Python API, and dcol's batched call per state.

Needs: pip install ".[bench]"   (and g++).
Usage: python benchmarks/bench_dynamics.py [--iterations 20000] [--batch 1000] [--markdown] [--quick]
"""

import argparse
import glob
import hashlib
import os
import subprocess
import sys
import sysconfig
import tempfile
import timeit

import numpy as np
import pinocchio as pin
from report import Table, parse_arguments, print_report

import dcol.dynamics as dd

HERE = os.path.dirname(os.path.abspath(__file__))
PREFIX = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix")
SHARE = os.path.join(PREFIX, "share")
ROBOTS = [
    ("UR5", "ur_description/urdf/ur5_robot.urdf", False),
    ("Panda", "panda_description/urdf/panda.urdf", False),
    ("Solo12", "solo_description/robots/solo12.urdf", True),
    ("Talos", "talos_data/robots/talos_reduced.urdf", True),
]
KIND_CODE = {"revolute": 0, "continuous": 0, "prismatic": 1, "floating": 2}


def write_model(model, path):
    """dcol's parsed model as text for the C++ benchmark (one line per body)."""
    with open(path, "w") as f:
        f.write(f"{model.nbodies} {' '.join(repr(float(g)) for g in model.gravity)}\n")
        for b in range(model.nbodies):
            fields = [
                model.parents[b],
                KIND_CODE[model.joint_kinds[b]],
                *model.joint_rotations[b].ravel(),
                *model.joint_positions[b],
                *model.joint_axes[b],
                model.masses[b],
                *model.coms[b],
                *model.rotational_inertias[b].ravel(),
            ]
            f.write(" ".join(repr(float(x)) if not isinstance(x, (int, np.integer)) else str(x) for x in fields) + "\n")


def compile_native():
    """The benchmark binary, compiled once per version of its source (cached in the temp folder)."""
    source = os.path.join(HERE, "bench_dynamics_native.cpp")
    digest = hashlib.sha256()
    # The dynamics layer and the core it includes.
    headers = [glob.glob(os.path.join(HERE, "..", "native", layer, "*.hpp")) for layer in ("core", "dynamics")]
    for path in [source] + sorted(sum(headers, [])):
        with open(path, "rb") as f:
            digest.update(f.read())
    binary = os.path.join(tempfile.gettempdir(), f"dcol_bench_dynamics_{digest.hexdigest()[:16]}")
    if os.path.exists(binary):
        return binary
    command = [
        "g++",
        "-std=c++17",
        "-O3",
        "-DNDEBUG",
        "-o",
        binary,
        source,
        f"-I{os.path.join(HERE, '..', 'native')}",
        f"-I{os.path.join(PREFIX, 'include')}",
        f"-I{os.path.join(PREFIX, 'include', 'eigen3')}",
        f"-L{os.path.join(PREFIX, 'lib')}",
        f"-Wl,-rpath,{os.path.join(PREFIX, 'lib')}",
        "-lpinocchio_default",
        "-Wno-deprecated-declarations",
        "-Wno-ignored-attributes",
        # Pinocchio's exported compile definitions (its joint variant outgrows Boost.MPL's defaults).
        "-DBOOST_MPL_LIMIT_LIST_SIZE=30",
        "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30",
        "-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS",
        "-DBOOST_FUSION_INVOKE_MAX_ARITY=12",
        # Pinocchio's algorithms as its library ships them (instantiated in libpinocchio_default).
        "-DPINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION",
    ]
    print("compiling the native benchmark (a few minutes, once)...", file=sys.stderr, flush=True)
    subprocess.run(command, check=True)
    return binary


def python_table(model, pin_model, batch):
    rng = np.random.default_rng(0)
    q = np.array([dd.integrate(model, dd.neutral(model), 0.5 * rng.normal(size=model.nv)) for _ in range(batch)])
    v, a = rng.normal(size=(2, batch, model.nv))
    pq = pin.integrate(pin_model, pin.neutral(pin_model), 0.5 * rng.normal(size=pin_model.nv))
    pv, pa = rng.normal(size=(2, pin_model.nv))
    pdata = pin_model.createData()
    cases = [
        (
            "RNEA",
            lambda: dd.rnea(model, q[0], v[0], a[0]),
            lambda: pin.rnea(pin_model, pdata, pq, pv, pa),
            lambda: dd.rnea(model, q, v, a),
        ),
        (
            "ABA",
            lambda: dd.aba(model, q[0], v[0], a[0]),
            lambda: pin.aba(pin_model, pdata, pq, pv, pa),
            lambda: dd.aba(model, q, v, a),
        ),
        (
            "ABA derivatives",
            lambda: dd.aba_derivatives(model, q[0], v[0], a[0]),
            lambda: pin.computeABADerivatives(pin_model, pdata, pq, pv, pa),
            lambda: dd.aba_derivatives(model, q, v, a),
        ),
    ]
    rows = []
    for name, ours, theirs, batched in cases:
        t_ours = min(timeit.repeat(ours, number=2000, repeat=3)) / 2000 * 1e6
        t_theirs = min(timeit.repeat(theirs, number=2000, repeat=3)) / 2000 * 1e6
        t_batch = min(timeit.repeat(batched, number=5, repeat=3)) / 5 / batch * 1e6
        rows.append((name, t_ours, t_theirs, t_batch))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=20000, help="calls per native measurement")
    parser.add_argument("--batch", type=int, default=1000, help="states per batched Python call")
    args = parse_arguments(parser, dict(iterations=100, batch=10))
    native = Table(
        ["robot", "algorithm", "dcol", "Pinocchio", "dcol/Pinocchio"],
        caption="Both libraries' C++ in one process: µs per call (best of 3 runs), one thread",
        label_columns=2,
    )
    python = Table(
        ["robot", "algorithm", "dcol", "Pinocchio", "dcol/Pinocchio", "dcol batch/state"],
        caption=f"Through the Python APIs: µs per call (best of 3), and per state of dcol's batched call "
        f"({args.batch} states), one thread",
        label_columns=2,
    )
    with tempfile.TemporaryDirectory() as workdir:
        binary = compile_native()
        for name, relative, floating in ROBOTS:
            path = os.path.join(SHARE, "example-robot-data", "robots", relative)
            model = dd.load_urdf(path, floating_base=floating, package_dirs=[SHARE], geometry=False)
            pin_model = (
                pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
            )
            pin_model.gravity.linear = model.gravity
            model_file = os.path.join(workdir, f"{name}.txt")
            write_model(model, model_file)
            output = subprocess.run(
                [binary, model_file, str(args.iterations)], check=True, capture_output=True, text=True
            ).stdout
            robot = f"{name} (nq={model.nq}, nv={model.nv})"
            for index, line in enumerate(output.strip().splitlines()):
                algorithm, ours, theirs = line.split("\t")
                native.add(
                    robot if index == 0 else "",
                    algorithm,
                    f"{float(ours):.3f}",
                    f"{float(theirs):.3f}",
                    f"{float(ours) / float(theirs):.2f}",
                )
            for index, (algorithm, ours, theirs, per_state) in enumerate(python_table(model, pin_model, args.batch)):
                python.add(
                    robot if index == 0 else "",
                    algorithm,
                    f"{ours:.2f}",
                    f"{theirs:.2f}",
                    f"{ours / theirs:.2f}",
                    f"{per_state:.3f}",
                )
    compiler = subprocess.run(["g++", "-dumpfullversion"], capture_output=True, text=True).stdout.strip()
    print_report(
        "Rigid-body dynamics (bench_dynamics.py)",
        [native, python],
        args,
        libraries=("Pinocchio",),
        extra_versions={"g++": compiler},
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
