"""The planar engine's example scripts: examples/planar_mass_inference.py recovers the mass it
simulated the observation with."""

import runpy
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_mass_inference_recovers_the_known_mass():
    example = runpy.run_path(str(EXAMPLES / "planar_mass_inference.py"), run_name="planar_mass_inference")
    true_mass = 2.5
    observed, _ = example["final_x"](true_mass)
    estimates = example["infer_mass"](observed, guess=1.0)
    assert estimates[-1] == pytest.approx(true_mass, abs=1e-4)
    assert len(estimates) < 10  # Gauss–Newton with exact derivatives converges fast
