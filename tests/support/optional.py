"""The oracles of the ``[oracles]`` extra (cvxpy with Clarabel, diffcp, Pinocchio, coal,
example-robot-data, CoACD, V-HACD, shapely): large packages that only tests and benchmarks use. A test that
needs one is skipped, naming the extra, when it is missing; ``pip install ".[test,oracles]"`` runs them
all (README's test command and .ci/run do)."""

from types import ModuleType

import pytest


def oracle(module: str) -> ModuleType:
    """The module, imported, or the calling test (or, at import, its whole module) skipped with the
    command that installs it."""
    return pytest.importorskip(
        module, reason=f'{module} is missing: it is an oracle of the [oracles] extra, pip install ".[test,oracles]"'
    )


def example_robots_dir() -> str:
    """dcol.dynamics.example_robot_data_dir() (example-robot-data installs no importable module), or
    the calling test, or at import its whole module, skipped with the command that installs it."""
    from dcol.dynamics import example_robot_data_dir

    try:
        return example_robot_data_dir()
    except ValueError as err:
        pytest.skip(
            f'{err}; it is an oracle of the [oracles] extra, pip install ".[test,oracles]"', allow_module_level=True
        )
