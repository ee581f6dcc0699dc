"""DCOL §IV-A-2: a quadrotor flies through a hallway with 12 obstacles, its body outer-approximated by a sphere.

The classic quadrotor model: state [r, p, v, ω] (position, modified Rodrigues parameters of the
attitude, world velocity, body angular velocity), controls the four rotor thrusts; the hallway's walls
are bounds on y and z. The solve starts, as in the paper, from the quadrotor hovering at its start.

Run: python examples/quadrotor_hallway.py [--knots 12] [--output quadrotor_hallway.png]
"""

import sys
from pathlib import Path

import numpy as np
from trajopt import TrajectoryProblem, mrp_rotation, outline, rigid_body_derivative, rk4, run_example

from dcol.geom import Box, Cylinder, Obstacle, Sphere, collision_constraints

BODY = Sphere(0.3)  # outer approximation of the airframe
MASS, INERTIA = 0.5, np.diag([0.0023, 0.0023, 0.004])  # kg, kg m²
ARM, DRAG = 0.175, 0.0245  # m; rotor torque per unit thrust, m
GRAVITY = np.array([0.0, 0.0, -9.81])
HORIZON = 5.0  # s
HALL = 1.8  # m: the hallway spans |y| ≤ HALL, |z| ≤ HALL; the body's centre, |y|, |z| ≤ HALL − its radius
UPRIGHT = [np.cos(np.pi / 4), 0.0, -np.sin(np.pi / 4), 0.0]  # a cylinder's axis (body x) along world z
OBSTACLES = [
    Obstacle(shape, position, orientation)
    for shape, position, orientation in [
        (Sphere(0.5), [1.5, 0.0, 0.0], [1.0, 0, 0, 0]),
        (Cylinder(0.3, 3.0), [2.3, 0.8, 0.0], UPRIGHT),
        (Box([0.3, 0.3, 0.3]), [2.6, -0.6, -0.5], [1.0, 0, 0, 0]),
        (Cylinder(0.25, 3.0), [3.4, -0.2, 0.0], [np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)]),
        (Sphere(0.4), [4.2, 0.6, 0.6], [1.0, 0, 0, 0]),
        (Box([0.4, 0.3, 0.5]), [4.5, -0.5, 0.4], [0.9, 0.0, 0.0, 0.3]),
        (Cylinder(0.3, 3.0), [5.3, 0.0, 0.0], UPRIGHT),
        (Sphere(0.45), [6.0, -0.8, -0.6], [1.0, 0, 0, 0]),
        (Box([0.3, 0.6, 0.3]), [6.4, 0.6, -0.6], [1.0, 0, 0, 0]),
        (Cylinder(0.25, 3.0), [7.2, 0.3, 0.0], UPRIGHT),
        (Sphere(0.5), [8.0, -0.4, 0.5], [1.0, 0, 0, 0]),
        (Box([0.3, 0.3, 0.3]), [8.6, 0.5, -0.3], [0.9, 0.2, 0.0, 0.3]),
    ]
]


def collision(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """α (N, 12) of the body sphere against the obstacles and ∂α/∂state (N, 12, 12): a sphere's α does
    not depend on its attitude, so only the position's columns δp are nonzero."""
    attitudes = np.tile([1.0, 0, 0, 0], (len(states), 1))
    constraints = collision_constraints(BODY, states[:, :3], attitudes, OBSTACLES, parameterization="rigid")
    d_alpha = np.zeros(constraints.alpha.shape + (12,))
    d_alpha[..., :3] = constraints.jacobian[..., :3]
    return constraints.alpha, d_alpha


def quadrotor_derivative(x: np.ndarray, u: np.ndarray) -> np.ndarray:
    """ẋ of the quadrotor with rotor thrusts u (K, 4), rotors 1–4 at +x, +y, −x, −y of the body."""
    thrust = np.sum(u, axis=1)
    force = MASS * GRAVITY + np.einsum("kij,kj->ki", mrp_rotation(x[:, 3:6]), np.outer(thrust, [0.0, 0.0, 1.0]))
    torque = np.stack(
        [ARM * (u[:, 1] - u[:, 3]), ARM * (u[:, 2] - u[:, 0]), DRAG * (u[:, 0] - u[:, 1] + u[:, 2] - u[:, 3])], axis=1
    )
    return rigid_body_derivative(x, force, torque, MASS, INERTIA)


def build_problem(knots: int) -> TrajectoryProblem:
    hover = np.full(4, -MASS * GRAVITY[2] / 4)
    # Speeds bounded so that the body moves less than an obstacle's width between constrained points.
    # Body rates bounded: between knots RK4 takes a single step of HORIZON / (knots − 1), which follows the
    # attitude only at moderate rates; without the bound, where the solve ends depends on rounding (BLAS's
    # thread count).
    # The walls bound the body's centre a radius inside them, so that the body itself stays in the hallway.
    inside = HALL - BODY.R
    lower = np.concatenate([[-1.0, -inside, -inside], np.full(3, -0.5), np.full(3, -3.0), np.full(3, -5.0)])
    upper = -lower
    upper[:3] = [11.0, inside, inside]
    return TrajectoryProblem(
        dynamics=rk4(quadrotor_derivative, HORIZON / (knots - 1)),
        collision=collision,
        x_start=np.zeros(12),
        x_goal=np.concatenate([[10.0, 0.0, 0.0], np.zeros(9)]),
        knots=knots,
        u_reference=hover,
        control_weight=np.ones(4),
        terminal_weight=np.full(12, 1000.0),
        state_bounds=(lower, upper),
        control_bounds=(np.zeros(4), 4 * hover),
    )


def draw(states: np.ndarray, output: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 1, figsize=(10, 6))
    for ax, plane, label in ((axes[0], (0, 1), "y (m)"), (axes[1], (0, 2), "z (m)")):
        for obstacle in OBSTACLES:
            ax.fill(*outline(obstacle.shape, obstacle.r, obstacle.q, plane).T, color="0.6")
        for r in states[:, :3]:
            ax.plot(*outline(BODY, r, np.array([1.0, 0, 0, 0]), plane).T, color="tab:blue", lw=0.6)
        ax.set(xlim=(-1, 11), ylim=(-HALL, HALL), aspect="equal", xlabel="x (m)", ylabel=label)
    axes[0].set_title("Quadrotor through a hallway (DCOL §IV-A): top and side views")
    fig.savefig(output, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    run_example("quadrotor hallway", build_problem, collision, draw, __doc__.splitlines()[0], sys.argv[1:], knots=12)
