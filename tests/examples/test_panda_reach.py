"""examples/panda_reach.py at a reduced knot count: from the static guess the Panda's tool point reaches the
target behind the wall with every checked pair at least the clearance apart at the knots and the path clear
between them; the target error and the distances are measured by dcol.dynamics' kinematics and a fresh
CollisionModel call, not by the solver's own report."""

import numpy as np
import panda_reach
import pytest

import dcol.dynamics as dyn
from tests.support.optional import example_robots_dir

example_robots_dir()


@pytest.mark.slow
def test_reaches_the_target_clear_of_the_wall_table_and_itself():
    reach = panda_reach.solve(knots=5)
    assert reach.converged, reach.message
    panda, collision = panda_reach.problem_model()
    np.testing.assert_array_equal(reach.path[0], panda_reach.START)
    tool = dyn.frame_placement(panda, reach.path[-1], panda_reach.TOOL)[0]
    assert np.linalg.norm(tool - panda_reach.TARGET) < 1e-5
    # The static guess is not a solution: the tool starts far from the target, on the near side of the wall.
    start_tool = dyn.frame_placement(panda, panda_reach.START, panda_reach.TOOL)[0]
    assert np.linalg.norm(start_tool - panda_reach.TARGET) > 0.2
    at_knots = collision.distances(reach.path, jacobians=False)
    assert at_knots.distance.min() >= panda_reach.CLEARANCE - 1e-6
    assert panda_reach.dense_smallest_distance(reach.path) > 0.0
    lower, upper = panda.lower_limits, panda.upper_limits
    assert np.all(reach.path >= lower - 1e-9) and np.all(reach.path <= upper + 1e-9)
