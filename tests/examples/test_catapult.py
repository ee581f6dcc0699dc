"""examples/catapult.py: a free ball thrown by the catapult to hit a target at a given step (Nimble §VII),
at a reduced horizon."""

import numpy as np
from catapult import miss, throw

from dcol.dynamics.optimization import multiple_shooting


def test_multiple_shooting_throws_the_free_ball_onto_the_target():
    """30 steps, two intervals: the ball leaves the bucket and is within a centimetre of the target at
    the last step; the defects are closed and the trajectory is the simulator's for the torques. (At
    (1.0 m, 1.8 m) the iterates ran into the kinks of the arm's stop and of the ball's contacts, and
    which of them trust-constr stalled at was round-off's choice; the throw to this target converges
    to the same point with or without the misprediction projection's derivatives.)"""
    target = (0.8, 1.6)
    problem = throw(30, target)
    world = problem.world
    result = multiple_shooting(
        world, problem.start_q, problem.start_v, problem.guess, problem.cost, intervals=2, **problem.bounds
    )
    assert result.converged
    assert result.history[-1].constraint_violation < 1e-6
    assert miss(result, target) < 0.01
    assert np.abs(result.controls).max() <= world.model.effort_limits[0]
    rollout = world.rollout(problem.start_q, problem.start_v, result.taus)
    np.testing.assert_allclose(result.q, rollout.q, atol=1e-9)
    # In the bucket at the start, in flight at the end: the throw went through contact.
    assert rollout.contacts[0] > 0 and rollout.contacts[-1] == 0
