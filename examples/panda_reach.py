"""The Panda arm reaches over a wall to a target behind it, kept clear of the wall, the table and itself by
dcol.dynamics.CollisionModel's distances and their q-Jacobians (issue 26; needs the [robots] extra).

The decision variables are the arm's seven joint angles at N knots of a path (the fingers stay as they
are). The first knot is the start configuration, the last knot's tool centre point (panda_hand_tcp) must
be at the target, the joints keep within their limits, and every checked pair, the arm against the wall
and the table and against itself (less the pairs the Panda's SRDF disables), keeps a signed distance of
at least `clearance` at every knot: one CollisionModel.distances call over the N knots per evaluation
(GJK/EPA, exact derivatives), with the Jacobians in q. A pair farther apart than the margin (every pair
the broadphase leaves out is) gets the margin as its value with a zero gradient: satisfied, a lower
bound of the truth, and continuous as a pair moves away. A penetrating pair's value is not its signed
distance but PENETRATION_SCALE · (α − 1), DCOL's scaling (both are 0 at touching, so the value is
continuous): the signed distance's depth is EPA's minimum translation distance, whose normal flips to
the wall's far side once a link is past the wall's middle and then pulls the arm through; SLSQP's line
search stalled on it ("Positive directional derivative for linesearch"), where α's gradient keeps
pushing the shapes apart along the line between their centres. The cost is the path's length in joint
space, Σ ‖q_{k+1} − q_k‖². scipy's SLSQP solves it from the static guess (every knot at the start), as
the trajectory examples do (trajopt.py says why SLSQP).

SLSQP converges from the static guess at 5 knots. At 4 and 6 it stops short (its line search fails,
or it runs to its iteration limit), and which knot counts converge has changed with rounding-level
changes of the constraints (α's ray cast ending on another triangle of the same hull face): pairs
entering and leaving the margin make the constraint set non-smooth, and from the static guess SLSQP's
outcome turns on it.

Run: python examples/panda_reach.py [--knots 5] [--output /tmp/panda_reach.png]
"""

import argparse
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.optimize import Bounds, NonlinearConstraint, minimize

import dcol.dynamics as dyn
from dcol.geom import Box, Obstacle

ARM = slice(0, 7)  # the Panda's arm joints in q and v; the two finger joints follow
START = np.array([0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8, 0.02, 0.02])  # the hand up, before the wall
TARGET = np.array([0.66, 0.0, 0.12])  # behind the wall, just above the table
WALL = Obstacle(Box([0.02, 0.35, 0.15]), [0.5, 0.0, 0.15], [1.0, 0.0, 0.0, 0.0])
TABLE = Obstacle(Box([0.3, 0.5, 0.02]), [0.6, 0.0, -0.02], [1.0, 0.0, 0.0, 0.0])
CLEARANCE = 0.01  # m, at every knot
# m, the broadphase's: pairs farther apart are not computed. Wide enough that the first step from the
# static guess already sees the wall: with the wall beyond it the linearized problem would send the arm
# straight through it.
MARGIN = 0.3
# m per unit of α: a penetrating pair's constraint value is PENETRATION_SCALE · (α − 1), about its depth for
# links of a decimetre.
PENETRATION_SCALE = 0.1
TOOL = "panda_hand_tcp"


@dataclass(frozen=True)
class Reach:
    path: np.ndarray  # (N, 9) configurations
    iterations: int
    seconds: float
    evaluations: int  # collision-constraint evaluations (each: N knots' distances with q-Jacobians)
    converged: bool
    message: str
    target_error: float  # m, the last knot's tool point from the target
    smallest_distance: float  # m, over the knots' checked pairs


def problem_model() -> tuple[dyn.Model, dyn.CollisionModel]:
    panda = dyn.load_example_robot("panda")
    srdf = os.path.join(dyn.example_robot_data_dir(), "example-robot-data", "robots", "panda_description", "srdf")
    exclude = dyn.disabled_collision_pairs(os.path.join(srdf, "panda.srdf"))
    return panda, dyn.CollisionModel(panda, [WALL, TABLE], exclude=exclude, margin=MARGIN)


def solve(knots: int, max_iterations: int = 500) -> Reach:
    panda, collision = problem_model()
    pairs = len(collision.pairs)
    arm_lower, arm_upper = panda.lower_limits[ARM], panda.upper_limits[ARM]
    evaluations = 0

    def path_of(z: np.ndarray) -> np.ndarray:
        path = np.tile(START, (knots, 1))
        path[1:, ARM] = z.reshape(knots - 1, 7)
        return path

    def cost(z: np.ndarray) -> float:
        steps = np.diff(path_of(z)[:, ARM], axis=0)
        return float(np.sum(steps**2))

    def cost_gradient(z: np.ndarray) -> np.ndarray:
        arm = path_of(z)[:, ARM]
        steps = np.diff(arm, axis=0)  # (N − 1, 7)
        gradient = np.zeros_like(arm)
        gradient[1:] += 2.0 * steps
        gradient[:-1] -= 2.0 * steps
        return gradient[1:].ravel()

    def reach(z: np.ndarray) -> np.ndarray:
        return dyn.frame_placement(panda, path_of(z)[-1], TOOL)[0] - TARGET

    def reach_jacobian(z: np.ndarray) -> np.ndarray:
        jacobian = np.zeros((3, z.size))
        jacobian[:, -7:] = dyn.frame_jacobian(panda, path_of(z)[-1], TOOL)[:3, ARM]
        return jacobian

    # Each knot's every pair: its distance where that is below the margin (PENETRATION_SCALE · (α − 1) where it
    # penetrates), else the margin (every pair the broadphase leaves out is farther), with a zero gradient.
    cache: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}

    def distances(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        nonlocal evaluations
        key = z.tobytes()
        if key not in cache:
            evaluations += 1
            result = collision.distances(path_of(z)[1:], threads=os.cpu_count())
            values = np.full((knots - 1, pairs), MARGIN)
            jacobian = np.zeros((knots - 1, pairs, z.size))
            knot = np.repeat(np.arange(knots - 1), np.diff(result.start))
            near = result.distance < MARGIN  # farther pairs keep the margin: continuous where they leave
            knot, pair = knot[near], result.pair[near]
            inside = result.distance[near] < 0.0
            values[knot, pair] = np.where(inside, PENETRATION_SCALE * (result.alpha[near] - 1.0), result.distance[near])
            alpha_jacobian, distance_jacobian = result.jacobian.dense("alpha"), result.jacobian.dense("distance")
            gradient = np.where(inside[:, None], PENETRATION_SCALE * alpha_jacobian[near], distance_jacobian[near])
            columns = 7 * knot[:, None] + np.arange(7)
            jacobian[knot[:, None], pair[:, None], columns] = gradient[:, ARM]
            cache.clear()
            cache[key] = (values.ravel() - CLEARANCE, jacobian.reshape(-1, z.size))
        return cache[key]

    constraints = [
        NonlinearConstraint(reach, 0.0, 0.0, jac=reach_jacobian),
        NonlinearConstraint(lambda z: distances(z)[0], 0.0, np.inf, jac=lambda z: distances(z)[1]),
    ]
    bounds = Bounds(np.tile(arm_lower, knots - 1), np.tile(arm_upper, knots - 1))
    guess = np.tile(START[ARM], knots - 1)
    start = time.perf_counter()
    result = minimize(
        cost,
        guess,
        jac=cost_gradient,
        method="SLSQP",
        bounds=bounds,
        constraints=constraints,
        options={"maxiter": max_iterations, "ftol": 1e-8},
    )
    seconds = time.perf_counter() - start
    path = path_of(result.x)
    final = collision.distances(path, jacobians=False)
    return Reach(
        path=path,
        iterations=int(result.nit),
        seconds=seconds,
        evaluations=evaluations,
        converged=bool(result.success),
        message=str(result.message),
        target_error=float(np.linalg.norm(reach(result.x))),
        smallest_distance=float(final.distance.min()),
    )


def dense_smallest_distance(path: np.ndarray, per_interval: int = 10) -> float:
    """The smallest distance over every pair on the path linearly interpolated between knots."""
    _, collision = problem_model()
    fine = np.linspace(0, len(path) - 1, per_interval * (len(path) - 1) + 1)
    dense = np.stack([np.interp(fine, np.arange(len(path)), column) for column in path.T], axis=1)
    return float(collision.distances(dense, jacobians=False).distance.min())


def draw(path: np.ndarray, output: Path) -> None:
    """The arm's links (joint origins to the tool point) at each knot, the wall, the table and the target."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panda, _ = problem_model()
    frames = [f"panda_joint{k}" for k in range(1, 8)] + [TOOL]
    figure = plt.figure(figsize=(6, 5))
    axes = figure.add_subplot(projection="3d")
    colours = plt.cm.viridis(np.linspace(0, 1, len(path)))
    points = np.stack([dyn.frame_placement(panda, path, frame)[0] for frame in frames], axis=1)  # (N, 8, 3)
    for knot, colour in zip(points, colours):
        axes.plot(*knot.T, "-o", color=colour, markersize=2)
    for obstacle, colour in ((WALL, "tab:red"), (TABLE, "tab:gray")):
        half, centre = obstacle.shape.half_extents, obstacle.r
        corners = centre + half * np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
        for i, j in [(0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (1, 3), (4, 6), (5, 7), (0, 4), (1, 5), (2, 6), (3, 7)]:
            axes.plot(*corners[[i, j]].T, color=colour)
    axes.scatter(*TARGET, color="tab:orange", s=40, label="target")
    axes.set_xlabel("x (m)")
    axes.set_ylabel("y (m)")
    axes.set_zlabel("z (m)")
    axes.set_title("Panda reaching over a wall (knots from dark to light)")
    axes.legend()
    figure.savefig(output, dpi=120)
    plt.close(figure)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--knots", type=int, default=5)
    parser.add_argument("--output", type=Path, default=Path(tempfile.gettempdir()) / "panda_reach.png")
    args = parser.parse_args(argv)
    reach = solve(args.knots)
    status = "converged" if reach.converged else f"NOT converged ({reach.message})"
    print(
        f"Panda reach, {args.knots} knots: {status} in {reach.iterations} iterations, {reach.seconds:.2f} s "
        f"({1e3 * reach.seconds / max(reach.iterations, 1):.1f} ms per iteration, {reach.evaluations} distance "
        f"evaluations), tool point {1e3 * reach.target_error:.2f} mm from the target"
    )
    print(
        f"smallest distance at the knots {1e3 * reach.smallest_distance:.1f} mm (clearance {1e3 * CLEARANCE:.0f} mm), "
        f"on the path resampled between knots {1e3 * dense_smallest_distance(reach.path):.1f} mm"
    )
    draw(reach.path, args.output)
    print(f"picture: {args.output}")


if __name__ == "__main__":
    main()
