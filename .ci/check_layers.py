"""Checks that each layer of native/ includes only the layers below it.

A layer is a folder of native/; a file names another layer's header as "layer/header.hpp"
(includes are written from native/'s root). Prints every include that breaks the order and
exits 1 if there is one.
"""

import re
import sys
from pathlib import Path

# The layers each layer may include besides itself (docs/architecture.md).
ALLOWED = {
    "core": set(),
    "conic": {"core"},
    "lcp": {"core", "conic"},
    "dynamics": {"core"},
    "geometry": {"core", "conic"},
    "kernels": {"core", "conic", "geometry"},
    "contact": {"core", "conic", "geometry"},
    "simulation": {"core", "conic", "geometry", "contact", "lcp", "dynamics"},
    "planar": {"core", "lcp"},
    "python": {"core", "conic", "geometry", "kernels", "contact", "lcp", "dynamics", "simulation", "planar"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def violations(native: Path) -> list[str]:
    found = []
    sources = sorted(p for p in native.rglob("*") if p.suffix in {".hpp", ".cpp", ".h", ".cc"})
    for path in sources:
        relative = path.relative_to(native)
        if len(relative.parts) < 2:
            found.append(f"{relative}: sources belong in a layer folder, not at the top of native/")
            continue
        layer = relative.parts[0]
        if layer not in ALLOWED:
            found.append(f"{relative}: {layer}/ is not a known layer (add it to .ci/check_layers.py)")
            continue
        for included in INCLUDE.findall(path.read_text(encoding="utf-8")):
            target = included.split("/")[0]
            if "/" not in included or not (native / included).is_file():
                found.append(f'{relative}: #include "{included}" must name a header as "layer/header.hpp"')
            elif target != layer and target not in ALLOWED[layer]:
                found.append(f'{relative}: {layer} may not include {target} ("{included}")')
    return found


def main() -> int:
    native = Path(__file__).resolve().parent.parent / "native"
    problems = violations(native)
    for problem in problems:
        print(problem)
    print(f"include layers: {len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
