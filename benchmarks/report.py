"""What the benchmark scripts share: a description of the run (date, machine, versions, thread
settings) and their result tables, printed as aligned plain text or as GitHub markdown.

A script collects its results as `Table`s and calls `print_report`; with `--markdown` the output is
one section of the documentation's performance page, docs/performance.md (see
update_performance.py): a heading, the line "measured <date> on <machine>", then the tables.
"""

import datetime
import importlib.metadata
import os
import platform
import statistics
import subprocess
import time
from dataclasses import dataclass, field

# Display names of the libraries the scripts compare against, and the distributions that carry them.
DISTRIBUTIONS = {
    "dcol": "dcol",
    "numpy": "numpy",
    "cvxpy": "cvxpy",
    "Clarabel": "clarabel",
    "diffcp": "diffcp",
    "coal": "coal",
    "Pinocchio": "pin",
    "MuJoCo": "mujoco",
    "pymunk": "pymunk",
}
# Environment variables that set the thread counts of numpy's BLAS and OpenMP code.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
# CPU features dcol's batch path chooses its SIMD width by at run time, worth knowing beside its figures.
CPU_FLAGS = {"avx2": "AVX2", "fma": "FMA", "avx512f": "AVX-512F"}


def cpu_description():
    """CPU model, logical core count and SIMD features, from /proc/cpuinfo where there is one."""
    model, flags = None, set()
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name" and model is None:
                    model = value.strip()
                elif key == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    model = model or platform.processor() or platform.machine()
    features = [name for flag, name in CPU_FLAGS.items() if flag in flags]
    return f"{model}, {os.cpu_count()} cores" + (f" ({', '.join(features)})" if features else "")


def library_version(name):
    """Installed version of a library by its display name (or distribution name), or 'not installed'."""
    try:
        return importlib.metadata.version(DISTRIBUTIONS.get(name, name))
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def source_commit():
    """Short commit of the checkout the benchmarks run from, when it is a git work tree."""
    try:
        result = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=os.path.dirname(os.path.abspath(__file__)),
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def thread_settings():
    """The BLAS/OpenMP thread variables set for this process, or that none is."""
    settings = [f"{name}={os.environ[name]}" for name in THREAD_VARIABLES if name in os.environ]
    return ", ".join(settings) if settings else "none of " + ", ".join(THREAD_VARIABLES) + " set"


def describe_run(libraries=(), extra_versions=None):
    """One line: 'measured <UTC date> on <machine>; Python …, dcol …, <libraries>; threads: …'.

    `libraries` are display names looked up in this interpreter; `extra_versions` maps names to
    versions found elsewhere (a library run in another interpreter)."""
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    commit = source_commit()
    versions = [f"Python {platform.python_version()}", f"dcol {library_version('dcol')}"]
    if commit:
        versions[-1] += f" (source at {commit})"
    versions += [f"{name} {library_version(name)}" for name in ("numpy", *libraries)]
    versions += [f"{name} {version}" for name, version in (extra_versions or {}).items()]
    machine = f"{cpu_description()}, {platform.system()} {platform.release()}"
    return f"measured {date} on {machine}; {', '.join(versions)}; threads: {thread_settings()}"


def fastest_of(runs):
    """How a figure taken as the fastest of `runs` runs is described in a caption."""
    return "one run" if runs == 1 else f"fastest of {runs} runs"


def median_time(function, repeats):
    """The median wall time (s) of `repeats` calls of function()."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def median_of(runs):
    """How a figure taken as the median of `runs` runs is described in a caption."""
    return "one run" if runs == 1 else f"median of {runs} runs"


@dataclass
class Table:
    """Rows of already formatted cells under column names. The first `label_columns` columns (names
    of what was measured) are left-aligned, the figures right-aligned. `caption` is printed above the
    table, `notes` below it."""

    columns: list
    rows: list = field(default_factory=list)
    caption: str = ""
    notes: list = field(default_factory=list)
    label_columns: int = 1

    def add(self, *cells):
        if len(cells) != len(self.columns):
            raise ValueError(f"{len(cells)} cells for {len(self.columns)} columns")
        self.rows.append([str(cell).strip() for cell in cells])


def render_text(table):
    """The table as the scripts printed it before: padded columns, a rule under the header."""
    widths = [max(len(row[i]) for row in [table.columns, *table.rows]) for i in range(len(table.columns))]

    def line(cells):
        padded = [
            cell.ljust(width) if i < table.label_columns else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(cells, widths))
        ]
        return "  ".join(padded).rstrip()

    header = line(table.columns)
    lines = [table.caption] if table.caption else []
    lines += [header, "-" * len(header), *map(line, table.rows), *table.notes]
    return "\n".join(lines)


def _markdown_cell(text):
    return text.replace("|", "\\|") if text else " "


def render_markdown(table):
    """The table in GitHub markdown: caption and notes as paragraphs around it."""
    lines = [table.caption, ""] if table.caption else []
    lines.append("| " + " | ".join(map(_markdown_cell, table.columns)) + " |")
    alignments = [" :--- " if i < table.label_columns else " ---: " for i in range(len(table.columns))]
    lines.append("|" + "|".join(alignments) + "|")
    lines += ["| " + " | ".join(map(_markdown_cell, row)) + " |" for row in table.rows]
    if table.notes:
        lines += ["", *table.notes]
    return "\n".join(lines)


QUICK_NOTE = "--quick run: for checking the script, not for figures"


def parse_arguments(parser, quick_settings):
    """Add --markdown and --quick to a script's parser and parse the command line.

    --quick makes `quick_settings` (option destination → value) the defaults, so that options given
    explicitly still count: the smallest run that shows the tables are well formed."""
    parser.add_argument("--markdown", action="store_true", help="print the results as GitHub markdown tables")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smallest settings, for checking the script, not for figures: " + describe_settings(quick_settings),
    )
    args = parser.parse_args()
    if args.quick:
        parser.set_defaults(**quick_settings)
        args = parser.parse_args()
    return args


def describe_settings(settings):
    return " ".join(f"--{name.replace('_', '-')} {value}" for name, value in settings.items())


def print_report(title, tables, args, libraries=(), extra_versions=None):
    """Print one benchmark's tables under its title and the description of this run (markdown when
    args.markdown)."""
    run = describe_run(libraries, extra_versions)
    if args.quick:
        title += f" ({QUICK_NOTE})"
    if args.markdown:
        parts = [f"### {title}", run, *map(render_markdown, tables)]
    else:
        parts = [f"{title}\n{run}", *map(render_text, tables)]
    print("\n\n".join(parts), flush=True)
