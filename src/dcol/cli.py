"""The ``dcol`` command (console script ``dcol``, also ``python -m dcol``)."""

import argparse
import sys
from collections.abc import Sequence


def _parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(prog="dcol", description="Differentiable collision detection (DCOL).")
    parser.add_argument("--version", action="version", version=f"dcol {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="command")
    demo = commands.add_parser(
        "demo",
        help="DCOL proximity between one of each primitive (table and picture), then a simulation with "
        "contact and its gradient (table and plot)",
    )
    demo.add_argument(
        "--output",
        default="dcol-demo.png",
        metavar="PATH",
        help="PNG to write, its folder made if missing, .png added without a suffix (default: %(default)s); the "
        "simulation's plot goes beside it as NAME-simulation.png, its animation as NAME-simulation.html",
    )
    view = commands.add_parser(
        "view",
        help="a robot in the browser: writes a self-contained HTML page (or serves it) of its visual geometry, "
        "optionally its collision geometry and its contacts with the ground",
    )
    view.add_argument(
        "robot",
        metavar="ROBOT_OR_URDF",
        help="a URDF file, or the name of one of dcol's robots (cartpole, half_cheetah, ...) or of "
        "example-robot-data's (talos, panda, ur5, ...)",
    )
    view.add_argument(
        "--q", nargs="+", type=float, metavar="Q", help="the configuration, nq numbers (default: the neutral one)"
    )
    view.add_argument(
        "--output", metavar="PATH", help="HTML file to write, its folder made if missing (default: ROBOT.html)"
    )
    view.add_argument(
        "--serve",
        action="store_true",
        help="serve the page on http://127.0.0.1:PORT until Ctrl-C instead of writing it",
    )
    view.add_argument("--port", type=int, default=8080, help="the port of --serve (default: %(default)s)")
    view.add_argument(
        "--collision", action="store_true", help="also draw the collision geometry (the convex hulls dcol collides)"
    )
    view.add_argument(
        "--contacts",
        action="store_true",
        help="draw the contacts with the ground; without --q a floating base is first set down on the ground",
    )
    view.add_argument(
        "--floating-base", action="store_true", help="for a URDF file: attach its root link by a floating joint"
    )
    commands.add_parser(
        "info", help="version, the proximity kernels this processor runs, cores and threads, extras installed"
    )
    return parser


# The optional extras and the packages each brings, whose versions `dcol info` reports.
_EXTRAS = {
    "viz": ("matplotlib", "viser"),
    "torch": ("torch",),
    "mesh": ("coacd", "vhacdx"),
    "robots": ("example-robot-data",),
}


def _info() -> str:
    """What `dcol info` prints: the versions, the native kernels in use, the machine's cores and the
    extras installed."""
    import importlib.metadata
    import os
    import platform

    import numpy as np

    from . import __version__, _native

    kernel, lanes = _native.proximity_kernel_info()
    lines = [
        f"dcol {__version__} (Python {platform.python_version()}, numpy {np.__version__})",
        f"proximity kernels: {kernel}, {lanes} pose pairs at once in a batch",
        f"cores: {os.cpu_count()}; batch functions run on threads=1 unless given threads=",
    ]
    for extra, packages in _EXTRAS.items():
        versions = []
        for package in packages:
            try:
                versions.append(f"{package} {importlib.metadata.version(package)}")
            except importlib.metadata.PackageNotFoundError:
                versions.append(f"{package} missing")
        lines.append(f"extra [{extra}]: {', '.join(versions)}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``dcol`` command.

    Parameters
    ----------
    argv : list of str, optional, the arguments after the program name (default ``sys.argv[1:]``).

    Returns
    -------
    int, the exit status: 0 on success, 1 if the demo or the viewer cannot draw (the viz extra
    missing), 2 if dcol view cannot load its robot (unknown name, missing mesh, bad URDF or --q).
    """
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "info":
        print(_info())
    if args.command == "demo":
        from pathlib import Path

        from .demo import run_demo
        from .simulation_demo import run_simulation_demo

        # The names the files really get: matplotlib adds .png to a name without a suffix.
        output = Path(args.output)
        if not output.suffix:
            output = output.with_suffix(".png")
        output.parent.mkdir(parents=True, exist_ok=True)
        missing: ImportError | None = None
        simulation_output = output.with_name(output.stem + "-simulation" + output.suffix)
        for run, path in ((run_demo, output), (run_simulation_demo, simulation_output)):
            try:
                run(path)
            except ImportError as err:  # the viz extra missing: the tables are printed, the pictures not
                missing = err
        if missing is not None:
            print(f"dcol demo: {missing} (the tables above need no extra)", file=sys.stderr)
            return 1
    if args.command == "view":
        return _view(args)
    return 0


def _view(args: argparse.Namespace) -> int:
    """``dcol view``: the robot's page written to --output (default ROBOT.html) or served."""
    from pathlib import Path

    from .viz import robot_viewer

    try:
        viewer = robot_viewer(
            args.robot,
            args.q,
            collision=args.collision,
            contacts=args.contacts,
            floating_base=True if args.floating_base else None,
            port=args.port if args.serve else 0,
        )
    except ImportError as err:  # viser missing: a one-line hint, not a traceback
        print(f"dcol view: {err}", file=sys.stderr)
        return 1
    except (ValueError, OSError) as err:  # unknown robot, missing mesh file, bad URDF or configuration
        print(f"dcol view: {err}", file=sys.stderr)
        return 2
    if args.serve:
        viewer.serve()
        return 0
    with viewer:
        output = viewer.save_html(args.output or Path(args.robot).stem + ".html")
    print(f"page written to {output}")
    return 0
