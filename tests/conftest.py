"""Fixtures shared by the tests; helpers and oracles live in tests/support."""

import os

import numpy as np
import pytest

# The Ray clusters the tests start (tests/dynamics/test_distributed.py, README's block) send no usage
# reports; set before any of them starts.
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")


def pytest_addoption(parser):
    # Here rather than in tests/fuzz: options must be declared by a conftest pytest reads at start-up,
    # and `pytest tests` reads this one.
    parser.addoption(
        "--fuzz-long",
        action="store_true",
        default=False,
        help="run tests/fuzz with its long profile (many more random examples; same as DCOL_FUZZ=long)",
    )


def pytest_configure(config):
    # Before collection: the fuzz modules read the profile when their decorators run.
    if config.getoption("--fuzz-long"):
        os.environ["DCOL_FUZZ"] = "long"


def pytest_terminal_summary(terminalreporter):
    from tests.support import fuzz

    if fuzz.LONG and fuzz.TALLY:
        terminalreporter.write_sep("=", "fuzz outcomes per family")
        for line in fuzz.tally_table():
            terminalreporter.write_line(line)


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)
