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
    return parser


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
