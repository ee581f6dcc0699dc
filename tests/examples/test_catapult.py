"""examples/catapult.py: a free ball thrown by the catapult to hit a target at a given step (Nimble §VII)."""

import numpy as np
import pytest
from catapult import miss, throw

from dcol.dynamics.optimization import ddp, multiple_shooting

TARGET = (2.5, 1.0)


def check_throw(problem, result):
    """Within 5 mm of the target at the last step, the torques within their bounds, the trajectory the
    simulator's for them, and the ball carried in the bucket at the start and in flight at the end."""
    world = problem.world
    assert miss(result, TARGET) < 0.005
    assert np.abs(result.controls).max() <= world.model.effort_limits[0]
    rollout = world.rollout(problem.start_q, problem.start_v, result.taus)
    np.testing.assert_allclose(result.q, rollout.q, atol=1e-9)
    assert rollout.contacts[0] > 0 and rollout.contacts[-1] == 0


@pytest.mark.parametrize("guess_torque", [40.0, 40.9])
def test_multiple_shooting_throws_the_free_ball_onto_the_target(guess_torque):
    """The example's throw (60 steps, two intervals) from two constant torques that both stop the arm
    on its upper limit at step 38, whose throws' band holds the target (the example's docstring says
    why a local method needs that): the defects are closed and the ball ends on the target."""
    problem = throw(60, TARGET, guess_torque)
    result = multiple_shooting(
        problem.world, problem.start_q, problem.start_v, problem.guess, problem.cost, intervals=2, **problem.bounds
    )
    assert result.converged
    assert result.history[-1].constraint_violation < 1e-6
    check_throw(problem, result)


def test_ddp_throws_the_free_ball_onto_the_target():
    """DDP from the example's guess reaches the same target."""
    problem = throw(60, TARGET)
    result = ddp(problem.world, problem.start_q, problem.start_v, problem.guess, problem.cost, **problem.bounds)
    assert result.converged
    check_throw(problem, result)
