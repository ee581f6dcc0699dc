"""README.md's Python blocks run as pasted, each on its own, and print what their comments say.

A line ``print(...)  # → TEXT`` must print exactly TEXT; other comments are prose. Blocks that need an
optional extra's package (the example robots, Ray) skip without it."""

import contextlib
import io
import re
from pathlib import Path

import pytest

from tests.support.optional import example_robots_dir

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)
CHECKED_PRINT = re.compile(r"^(?P<indent>\s*)print\((?P<args>.*)\)\s*# → (?P<expected>.*)$")


def _checked(block: str) -> str:
    """The block with each checked print turned into a call that asserts its line."""
    lines = []
    for line in block.splitlines():
        match = CHECKED_PRINT.match(line)
        if match:
            line = f"{match['indent']}_check({match['expected']!r}, {match['args']})"
        lines.append(line)
    return "\n".join(lines)


def _check(expected: str, *values: object) -> None:
    printed = io.StringIO()
    print(*values, file=printed)
    assert printed.getvalue().rstrip("\n") == expected


def test_the_readme_has_checked_blocks():
    assert len(BLOCKS) >= 5
    assert sum(bool(CHECKED_PRINT.match(line)) for block in BLOCKS for line in block.splitlines()) >= 8


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs_on_its_own(index):
    block = BLOCKS[index]
    if "load_example_robot" in block:
        example_robots_dir()
    if "import ray" in block:
        pytest.importorskip("ray", reason="the block needs Ray: pip install 'dcol[distributed]'")
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(_checked(block), f"README.md block {index}", "exec"), {"_check": _check})
