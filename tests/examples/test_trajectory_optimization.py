"""The trajectory optimizations of DCOL §IV-A (examples/piano_mover.py, quadrotor_hallway.py,
cone_through_opening.py) at reduced knot counts, and the derivatives their transcription uses."""

import cone_through_opening
import numpy as np
import piano_mover
import pytest
import quadrotor_hallway
from threadpoolctl import threadpool_limits
from trajopt import complex_step_jacobians, resample, solve


def central_differences(function, x: np.ndarray, step: float = 1e-6) -> np.ndarray:
    """(…, len(x)) derivative of function at x by central differences, one coordinate at a time."""
    columns = []
    for j in range(len(x)):
        delta = np.zeros_like(x)
        delta[j] = step
        columns.append((function(x + delta) - function(x - delta)) / (2 * step))
    return np.stack(columns, axis=-1)


def test_dynamics_jacobians_against_central_differences():
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.normal(size=3), 0.3 * rng.normal(size=3), rng.normal(size=6)])
    u = rng.uniform(0.5, 2.0, size=4)
    dynamics = quadrotor_hallway.build_problem(10).dynamics
    A, B = complex_step_jacobians(dynamics, x[None], u[None])
    np.testing.assert_allclose(A[0], central_differences(lambda y: dynamics(y[None], u[None])[0], x), atol=1e-6)
    np.testing.assert_allclose(B[0], central_differences(lambda w: dynamics(x[None], w[None])[0], u), atol=1e-6)


@pytest.mark.parametrize(
    "example, state",
    [
        (piano_mover, np.array([-0.6, 0.45, 0.5, 0, 0, 0])),
        (cone_through_opening, np.concatenate([[-0.5, 0.2, -0.1], [0.1, -0.2, 0.3], np.zeros(6)])),
        (quadrotor_hallway, np.concatenate([[2.0, 0.2, -0.3], [0.1, 0.0, 0.2], np.zeros(6)])),
    ],
)
def test_collision_jacobians_in_state_coordinates(example, state):
    d_alpha = example.collision(state[None])[1][0]
    expected = central_differences(lambda x: example.collision(x[None])[0][0], state)
    np.testing.assert_allclose(d_alpha, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize(
    "example, knots, blas_threads",
    [
        (piano_mover, 20, None),
        (quadrotor_hallway, 12, None),
        (quadrotor_hallway, 12, 1),
        (cone_through_opening, 12, None),
    ],
)
def test_converges_collision_free_from_the_static_guess(example, knots, blas_threads):
    """blas_threads: BLAS's threads during the solve (None: as configured). The quadrotor's solve runs on one
    thread too: BLAS sums in another order with another thread count, and the solution must not hinge on it."""
    problem = example.build_problem(knots)
    with threadpool_limits(limits=blas_threads, user_api="blas"):
        solution = solve(problem)
    assert solution.converged, solution.message
    assert solution.violation < 1e-6
    # Clear at the knots and on a resampling ten times denser than the knots, where no constraint was imposed.
    assert example.collision(solution.states)[0].min() >= 1.0 - 1e-6
    assert example.collision(resample(solution.states, 10))[0].min() >= 1.0
    assert solution.goal_error < 0.05


def test_the_cone_cannot_pass_the_opening_sideways():
    """The premise of the cone's example: in its start and goal attitude, centred in the opening, it
    overlaps the wall, so a collision-free solution has turned it."""
    sideways_in_the_opening = cone_through_opening.build_problem(12).x_start.copy()
    sideways_in_the_opening[:3] = 0.0
    assert cone_through_opening.collision(sideways_in_the_opening[None])[0].min() < 1.0
