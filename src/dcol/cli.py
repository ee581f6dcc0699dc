"""The ``dcol`` command."""

import argparse


def main(argv=None):
    """Entry point of the ``dcol`` console script; returns the exit status."""
    parser = argparse.ArgumentParser(prog="dcol", description="Differentiable collision detection.")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="proximity between one of each primitive, with a picture")
    demo.add_argument("--output", default="dcol-demo.png", help="picture to write (PNG), default %(default)s")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from .demo import run_demo

        run_demo(args.output)
    return 0
