"""The ``dcol`` command (console script ``dcol``, also ``python -m dcol``)."""

import argparse
import sys
from collections.abc import Sequence


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dcol", description="Differentiable collision detection (DCOL).")
    commands = parser.add_subparsers(dest="command", required=True, metavar="command")
    demo = commands.add_parser(
        "demo",
        help="DCOL proximity between one of each primitive (table and picture), then a simulation with "
        "contact and its gradient (table and plot)",
    )
    demo.add_argument("--output", default="dcol-demo.png", metavar="PATH", help="PNG to write (default: %(default)s)")
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

        output = Path(args.output)
        try:
            run_demo(output)
            run_simulation_demo(output.with_name(output.stem + "-simulation" + output.suffix))
        except ImportError as err:  # matplotlib missing: a one-line hint, not a traceback
            print(f"dcol demo: {err}", file=sys.stderr)
            return 1
    return 0
