"""examples/catapult.py: a free ball thrown by the catapult to hit a target at a given step (Nimble §VII),
at a reduced horizon."""

import numpy as np
from catapult import miss, throw

from dcol.dynamics.optimization import multiple_shooting


def test_multiple_shooting_throws_the_free_ball_onto_the_target():
    """30 steps, two intervals: the ball leaves the bucket and is within a centimetre of the target at
    the last step; the defects are closed and the trajectory is the simulator's for the torques. The
    guess is 100 N m, not the example's 50: in 30 steps 50 N m leaves the ball in the bucket, where the
    throw's gradient is flat, and a constant 100 N m throws it to about (1.73 m, 1.41 m), near the
    target. (Targets higher up, which the iterates reached before a free body's straight update, were
    reachable only through a spinning ball's flight bending upwards.)"""
    target = (2.0, 1.35)
    problem = throw(30, target)
    problem = problem._replace(guess=np.full_like(problem.guess, 100.0))
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
