"""The Python blocks of README.md and of the documentation's pages (docs/**/*.md) run as pasted, each
on its own, and print what their comments say.

A line ``print(...)  # → TEXT`` must print exactly TEXT; other comments are prose. Blocks that need an
optional extra's package (the example robots, Ray, viser) skip without it. A block that only includes
a file (pymdownx.snippets' ``--8<--``) shows an example script whole; the scripts take command-line
arguments and are not run here."""

import contextlib
import io
import re
from pathlib import Path

import pytest

from tests.support.optional import example_robots_dir

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", flags=re.DOTALL | re.MULTILINE)
SNIPPET = "--8<--"
CHECKED_PRINT = re.compile(r"^(?P<indent>\s*)print\((?P<args>.*)\)\s*# → (?P<expected>.*)$")
BLOCKS = {
    f"{page.relative_to(ROOT)} block {index}": block
    for page in PAGES
    for index, block in enumerate(
        block for block in FENCE.findall(page.read_text(encoding="utf-8")) if not block.startswith(SNIPPET)
    )
}


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


def _checked_prints(names: list[str]) -> int:
    return sum(bool(CHECKED_PRINT.match(line)) for name in names for line in BLOCKS[name].splitlines())


def test_the_pages_have_checked_blocks():
    readme = [name for name in BLOCKS if name.startswith("README.md ")]
    docs = [name for name in BLOCKS if name.startswith("docs")]
    assert len(readme) >= 1 and _checked_prints(readme) >= 2
    assert len(docs) >= 8 and _checked_prints(docs) >= 15


@pytest.mark.parametrize("name", list(BLOCKS))
def test_block_runs_on_its_own(name):
    block = BLOCKS[name]
    if "load_example_robot" in block:
        example_robots_dir()
    if "import ray" in block:
        pytest.importorskip("ray", reason="the block needs Ray: pip install 'dcol[distributed]'")
    if "dcol.viz" in block:
        pytest.importorskip("viser", reason="the block needs viser: pip install 'dcol[viz]'")
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(_checked(block), name, "exec"), {"_check": _check})
