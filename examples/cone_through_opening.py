"""DCOL §IV-A-3: a cone with full translational and attitude control passes a square opening in a wall
made of four prisms.

Sideways, as it starts and ends, the cone is longer than the opening is wide; only pointing through
the opening does it fit, so the optimizer has to slew it on the way. The state is [r, p, v, ω] with p
the modified Rodrigues parameters of the attitude, the controls a world force and a body torque, and
the solve starts from the cone resting at its initial pose. Besides the effort and the terminal cost,
each knot's state is drawn towards the straight line from start to goal (TrajectoryProblem.state_weight,
as DCOL.jl's examples track a straight-line reference): that line runs through the opening, and without
it the solver settles with the cone pressed against the wall. The wall's four prisms frame the opening
rather than fill a large wall: α scales each prism about its own centre, so α ≥ 1 + clearance against a
prism several metres across would close the opening by far more than the clearance.

Run: python examples/cone_through_opening.py [--knots 15] [--output cone_through_opening.png]
"""

import sys
from pathlib import Path

import numpy as np
from trajopt import (
    TrajectoryProblem,
    mrp_to_quaternion,
    outline,
    rigid_body_derivative,
    rk4,
    run_example,
)

from dcol.geom import Box, Cone, Obstacle, collision_constraints

CONE = Cone(H=2.0, beta=np.deg2rad(15.0))  # base 1.07 m across, 2 m long
MASS, INERTIA = 1.0, np.diag([0.1, 0.4, 0.4])
OPENING = 0.7  # half width of the square opening in the wall at x = 0
WALL_EDGE = 2.5  # half width of the wall, 0.4 m thick
HORIZON = 5.0  # s
# The four prisms of the wall: above and below the opening across the whole wall, left and right of it.
BAR = (WALL_EDGE - OPENING) / 2  # half width of a prism across the opening's side
WALL = [
    Obstacle(Box([0.2, WALL_EDGE, BAR]), [0.0, 0.0, sign * (OPENING + BAR)], [1.0, 0, 0, 0]) for sign in (1, -1)
] + [Obstacle(Box([0.2, BAR, OPENING]), [0.0, sign * (OPENING + BAR), 0.0], [1.0, 0, 0, 0]) for sign in (1, -1)]
SIDEWAYS = np.array([0.0, 0.0, np.tan(np.pi / 8)])  # MRP of a quarter turn about z: the cone's axis along y


def collision(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """α (N, 4) against the wall and ∂α/∂state (N, 4, 12) from the "mrp" columns [r, p], which are the
    state's own first six coordinates while |p| ≤ 1 (the quaternion with w ≥ 0)."""
    constraints = collision_constraints(
        CONE, states[:, :3], mrp_to_quaternion(states[:, 3:6]), WALL, parameterization="mrp"
    )
    d_alpha = np.zeros(constraints.alpha.shape + (12,))
    d_alpha[..., :6] = constraints.jacobian
    return constraints.alpha, d_alpha


def build_problem(knots: int) -> TrajectoryProblem:
    def derivative(x: np.ndarray, u: np.ndarray) -> np.ndarray:
        return rigid_body_derivative(x, u[:, :3], u[:, 3:], MASS, INERTIA)

    rest = np.zeros(12)
    # |p_i| ≤ 0.5 keeps |p| < 1, where the "mrp" columns are the derivatives in these coordinates.
    # Speeds bounded so that the cone moves less than the wall's thickness between constrained points.
    # The origin kept within 0.5 m of the wall's edge: the cone cannot pass around the wall.
    side = WALL_EDGE - 0.5
    lower = np.concatenate([[-4.0, -side, -side], np.full(3, -0.5), np.full(3, -2.5), np.full(3, -3.0)])
    return TrajectoryProblem(
        dynamics=rk4(derivative, HORIZON / (knots - 1)),
        collision=collision,
        x_start=np.concatenate([[-3.0, 0.0, 0.0], SIDEWAYS, rest[6:]]),
        x_goal=np.concatenate([[3.0, 0.0, 0.0], SIDEWAYS, rest[6:]]),
        knots=knots,
        u_reference=np.zeros(6),
        control_weight=np.ones(6),
        terminal_weight=np.full(12, 1000.0),
        state_bounds=(lower, -lower),
        control_bounds=(np.full(6, -10.0), np.full(6, 10.0)),
        state_weight=np.ones(12),
    )


def draw(states: np.ndarray, output: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 5))
    quaternions = mrp_to_quaternion(states[:, 3:6])
    for ax, plane, title in ((axes[0], (0, 1), "top view"), (axes[1], (0, 2), "side view")):
        for obstacle in WALL:
            ax.fill(*outline(obstacle.shape, obstacle.r, obstacle.q, plane).T, color="0.6")
        for r, q in zip(states[::2, :3], quaternions[::2], strict=True):
            ax.plot(*outline(CONE, r, q, plane).T, color="tab:orange", lw=0.8)
        ax.set(
            xlim=(-4.5, 4.5),
            ylim=(-WALL_EDGE, WALL_EDGE),
            aspect="equal",
            xlabel="x (m)",
            title=f"Cone through an opening, {title}",
        )
    axes[0].set_ylabel("y (m)")
    axes[1].set_ylabel("z (m)")
    # Looking along x, where the top and side views hide it: the opening, and the cone at the knots
    # whose origin is within a cone's length of the wall.
    for obstacle in WALL:
        axes[2].fill(*outline(obstacle.shape, obstacle.r, obstacle.q, (1, 2)).T, color="0.6")
    for r, q in zip(states[:, :3], quaternions, strict=True):
        if abs(r[0]) < CONE.H:
            axes[2].plot(*outline(CONE, r, q, (1, 2)).T, color="tab:orange", lw=0.8)
    axes[2].set(
        xlim=(-WALL_EDGE, WALL_EDGE),
        ylim=(-WALL_EDGE, WALL_EDGE),
        aspect="equal",
        xlabel="y (m)",
        ylabel="z (m)",
        title="front view, near the wall",
    )
    fig.savefig(output, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    run_example(
        "cone through an opening", build_problem, collision, draw, __doc__.splitlines()[0], sys.argv[1:], knots=15
    )
