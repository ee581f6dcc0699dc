"""The documentation site builds with ``mkdocs build --strict`` (a broken link, anchor or docstring
fails it), and its API pages document every public name of dcol's packages.

.ci/run builds the site too; this test makes a plain pytest run catch a broken page, and checks what
a successful build does not: griffe, which reads the docstrings, silently leaves out a name it cannot
place (a function named like its own module), so each package's ``__all__`` is looked up on its page.
Skips, naming the extra, without the site's tools."""

import ast
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

for _module in ("mkdocs", "material", "mkdocstrings_handlers.python"):
    pytest.importorskip(
        _module, reason=f'{_module} is missing: the site\'s tools are the [docs] extra, pip install ".[docs]"'
    )

ROOT = Path(__file__).resolve().parents[1]
# API page of each documented module, by the site's path.
API_PAGES = {
    "dcol.geom": "api/geom",
    "dcol.geom.torch": "api/geom",
    "dcol.solvers": "api/solvers",
    "dcol.dynamics": "api/dynamics",
    "dcol.dynamics.torch": "api/dynamics",
    "dcol.dynamics.distributed": "api/dynamics",
    "dcol.dynamics.planar": "api/dynamics",
    "dcol.dynamics.planar.torch": "api/dynamics",
    "dcol.dynamics.optimization": "api/dynamics",
    "dcol.viz": "api/viz",
    "dcol.progress": "api/progress",
}
# Functions named like the modules that define them, which docs/api/geom.md documents from where
# they are defined (their anchors are those paths).
SHADOWED = {"dcol.geom.proximity": "dcol._native.proximity", "dcol.geom.contacts": "dcol.geom.contacts.contacts"}


def _public_names(module: str) -> list[str]:
    """The module's __all__, read from its source without importing it (dcol.geom.torch and
    dcol.dynamics.torch import PyTorch)."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(target, "id", None) == "__all__" for target in node.targets):
            return list(ast.literal_eval(node.value))
    raise AssertionError(f"{module} has no __all__")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(output)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, f"mkdocs build --strict failed:\n{built.stderr}"
    return output


@pytest.mark.parametrize("module", list(API_PAGES))
def test_the_api_pages_document_every_public_name(site, module):
    page = (site / API_PAGES[module] / "index.html").read_text(encoding="utf-8")
    anchors = set(re.findall(r'\bid="([^"]+)"', page))
    missing = [
        name for name in _public_names(module) if SHADOWED.get(f"{module}.{name}", f"{module}.{name}") not in anchors
    ]
    assert not missing, f"{API_PAGES[module]} lacks {missing}"
