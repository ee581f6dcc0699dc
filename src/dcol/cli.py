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
        "simulation's plot goes beside it as NAME-simulation.png",
    )
    commands.add_parser(
        "info", help="version, the proximity kernels this processor runs, cores and threads, extras installed"
    )
    return parser


# The optional extras and the packages each brings, whose versions `dcol info` reports.
_EXTRAS = {
    "viz": ("matplotlib",),
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
    int, the exit status: 0 on success, 1 if the demo cannot draw (matplotlib missing).
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
        try:
            run_demo(output)
            run_simulation_demo(output.with_name(output.stem + "-simulation" + output.suffix))
        except ImportError as err:  # matplotlib missing: a one-line hint, not a traceback
            print(f"dcol demo: {err}", file=sys.stderr)
            return 1
    return 0
