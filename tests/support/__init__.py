"""Oracles and helpers shared by the tests: import them as ``from tests.support.<module> import …``."""
