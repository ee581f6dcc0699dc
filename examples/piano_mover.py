"""DCOL §IV-A-1, the piano mover: a 2.6 m "piano" turns a 90° corner of a hallway whose walls are 1 m apart.

The piano is a thin rectangular prism moving in the plane (x, y, heading θ) as a double integrator,
the walls are three boxes, and every knot must keep α ≥ 1 against each wall. The solve starts, as in
the paper, from the piano resting at its initial pose.

Run: python examples/piano_mover.py [--knots 20] [--output piano_mover.png]
"""

import sys
from pathlib import Path

import numpy as np
from trajopt import TrajectoryProblem, outline, run_example

from dcol.geom import Box, Obstacle, collision_constraints

PIANO = Box([1.3, 0.025, 0.2])  # 2.6 m long; thin, as the paper's line segment
HORIZON = 6.0  # s


def wall(lower: list[float], upper: list[float]) -> Obstacle:
    """An axis-aligned box wall between two corners, 1 m tall about z = 0."""
    lower_array, upper_array = np.array(lower + [-0.5]), np.array(upper + [0.5])
    return Obstacle(Box((upper_array - lower_array) / 2), (upper_array + lower_array) / 2, [1.0, 0, 0, 0])


def wall_segments(start: list[float], end: list[float], thickness: float = 0.4) -> list[Obstacle]:
    """A wall as boxes of at most 1 m along it: α scales a box about its centre, so a few short boxes
    give a better scaled constraint near the corner than one long one."""
    start_array, end_array = np.array(start), np.array(end)
    count = int(np.ceil(np.linalg.norm(end_array - start_array)))
    along = (end_array - start_array) / count
    across = thickness * np.array([along[1], -along[0]]) / np.linalg.norm(along)  # to the wall's right
    return [
        wall(list(np.minimum(a, a + along + across)), list(np.maximum(a, a + along + across)))
        for a in (start_array + i * along for i in range(count))
    ]


# The first leg runs along x with 0 ≤ y ≤ 1, the second along y with 0 ≤ x ≤ 1; each wall is walked with
# the hallway on its left.
WALLS = (
    wall_segments([-5.0, 0.0], [1.0, 0.0])
    + wall_segments([1.0, 0.0], [1.0, 6.0])
    + wall_segments([0.0, 6.0], [0.0, 1.0])
    + wall_segments([0.0, 1.0], [-5.0, 1.0])
)


def piano_poses(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(K, 3) positions and (K, 4) quaternions of the piano at states (K, 6) = [x, y, θ, ẋ, ẏ, θ̇]."""
    positions = np.column_stack([states[:, 0], states[:, 1], np.zeros(len(states))])
    half = states[:, 2] / 2
    quaternions = np.column_stack([np.cos(half), np.zeros(len(states)), np.zeros(len(states)), np.sin(half)])
    return positions, quaternions


def collision(states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """α (N, 3) against the walls and ∂α/∂state (N, 3, 6): x, y are δp's first two columns and θ, a turn
    about world z, is δθ_z (the "rigid" columns)."""
    constraints = collision_constraints(PIANO, *piano_poses(states), WALLS, parameterization="rigid")
    d_alpha = np.zeros(constraints.alpha.shape + (6,))
    d_alpha[..., :3] = constraints.jacobian[..., [0, 1, 5]]
    return constraints.alpha, d_alpha


def build_problem(knots: int) -> TrajectoryProblem:
    dt = HORIZON / (knots - 1)

    def double_integrator(x: np.ndarray, u: np.ndarray) -> np.ndarray:
        return np.concatenate([x[:, :3] + dt * x[:, 3:] + 0.5 * dt**2 * u, x[:, 3:] + dt * u], axis=1)

    return TrajectoryProblem(
        dynamics=double_integrator,
        collision=collision,
        x_start=np.array([-2.0, 0.5, 0.0, 0, 0, 0]),
        x_goal=np.array([0.5, 3.0, np.pi / 2, 0, 0, 0]),
        knots=knots,
        u_reference=np.zeros(3),
        control_weight=np.ones(3),
        terminal_weight=np.full(6, 100.0),
        # Speeds bounded so that the piano moves less than a wall's thickness between constrained points.
        clearance=0.02,
        points_per_interval=2,
        state_bounds=(np.array([-np.inf] * 3 + [-3.0] * 3), np.array([np.inf] * 3 + [3.0] * 3)),
        control_bounds=(np.full(3, -5.0), np.full(3, 5.0)),
    )


def draw(states: np.ndarray, output: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 6))
    for obstacle in WALLS:
        ax.fill(*outline(obstacle.shape, obstacle.r, obstacle.q, (0, 1)).T, color="0.6")
    for r, q in zip(*piano_poses(states), strict=True):
        ax.plot(*outline(PIANO, r, q, (0, 1)).T, color="tab:red", lw=0.8)
    ax.set(xlim=(-4, 2), ylim=(-1, 5), aspect="equal", xlabel="x (m)", ylabel="y (m)", title="Piano mover (DCOL §IV-A)")
    fig.savefig(output, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    run_example("piano mover", build_problem, collision, draw, __doc__.splitlines()[0], sys.argv[1:], knots=20)
