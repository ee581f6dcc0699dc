"""``python -m dcol``: the same as the ``dcol`` command."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
