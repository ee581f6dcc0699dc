"""The examples are scripts, not a package: their folder goes on sys.path so the tests import them as the
scripts import their shared helper (trajopt)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
