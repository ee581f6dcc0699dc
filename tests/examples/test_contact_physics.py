"""examples/contact_physics.py: DCOL §IV-B's twelve bodies through dcol.dynamics.ScalingContactSimulator (whose
physics tests/dynamics/test_scaling_contact.py checks), run as a user runs it, at a reduced horizon."""

import numpy as np
from contact_physics import main, simulate


def test_the_script_runs_the_twelve_bodies_and_draws_them(tmp_path, capsys):
    run = simulate(seconds=2.0, seed=0)
    assert np.isfinite(run.positions).all() and np.isfinite(run.energy).all()
    assert run.worst_violation.max() < 1e-6
    assert run.energy[-1] < 0.5 * run.energy[0]  # the bodies met at the origin and the impacts took energy out
    main(["--seconds", "0.5", "--output", str(tmp_path / "contact_physics.png")])
    printed = capsys.readouterr().out
    assert "50 steps of 0.01 s" in printed and "largest violation of α ≥ 1 over the run" in printed
    assert (tmp_path / "contact_physics.png").stat().st_size > 0
