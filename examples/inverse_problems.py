"""The inverse problems of Simple §IV-B by Gauss–Newton, with the simulator's Jacobians and with finite
differences of it.

* Eq. 14: a cube slides and spins on the ground for 0.2 s from a known initial velocity; from its
  final pose alone, and a guess 0.5 off, find the velocity again. The final pose tells the in-plane
  velocity and the spin; the velocity into the ground, and the tipping rates, are taken by the
  contact, so those three stay at the guess.
* Eq. 15: Unitree Go1 (example-robot-data) standing on its four feet: the twelve joint torques for
  which a step from rest ends at rest (zero acceleration through the contacts).

Each problem runs with jacobian="analytic" (the step Jacobians chained forward) and "3-point"
(scipy's central differences of the rollout); the script prints iterations, wall time and the final
error, and with --plot FILE draws the error against iterations and wall time and the cube's path
(matplotlib).

Run: python examples/inverse_problems.py [--plot inverse_problems.png]   (Go1 needs dcol[robots])
"""

import argparse
import time

import numpy as np

from dcol.dynamics import World, frame_placement, load_dataset_robot, load_example_robot, neutral, tangent_maps
from dcol.dynamics.optimization import rollout_least_squares

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--plot", default=None, help="write the figure to this file")
arguments = parser.parse_args()

# Eq. 14: the cube.
cube = load_dataset_robot("box")
cube_world = World(cube, dt=0.01)
cube_q0 = np.array([0.0, 0.0, 0.1, 1.0, 0.0, 0.0, 0.0])
known = np.array([2.0, 0.5, 0.0, 0.0, 0.0, 3.0])
cube_controls = np.zeros((20, 6))
observed = cube_world.rollout(cube_q0, known, cube_controls).q[-1]


def pose_error(q, v):
    """The final pose's coordinates minus the observed ones, and their Jacobian on [q (tangent); v]."""
    return q - observed, np.hstack([tangent_maps(cube, q)[0], np.zeros((7, 6))])


# Eq. 15: Go1 with its legs bent and its feet 5e-5 m into the ground (within the penetration the step
# leaves alone, so the contacts hold without being pushed out).
go1 = load_example_robot("go1")
stand = neutral(go1)
stand[7:] = np.tile([0.0, 0.9, -1.8], 4)
foot_radius = 0.02
stand[2] = (
    foot_radius - 5e-5 - min(frame_placement(go1, stand, f"{leg}_foot")[0][2] for leg in ("FR", "FL", "RR", "RL"))
)
go1_world = World(go1, dt=1e-3)
joints = np.vstack([np.zeros((6, 12)), np.eye(12)])  # S: the floating base is not actuated


def velocity_error(q, v):
    """The velocity after the step (the target is rest) and its Jacobian on [q (tangent); v]."""
    return v, np.hstack([np.zeros((18, 18)), np.eye(18)])


cube_guess = known + [0.2, -0.1, 0.0, 0.0, 0.0, 0.5]
problems = {
    "cube, eq. 14": lambda jacobian: rollout_least_squares(
        cube_world,
        cube_q0,
        cube_guess,
        cube_controls,
        pose_error,
        velocity_basis=np.eye(6)[:, [0, 1, 5]],  # vx, vy and the spin
        jacobian=jacobian,
    ),
    "Go1, eq. 15": lambda jacobian: rollout_least_squares(
        go1_world,
        stand,
        np.zeros(18),
        np.zeros((1, 12)),
        velocity_error,
        variables="controls",
        actuation=joints,
        jacobian=jacobian,
    ),
}
print("problem       Jacobian   iterations  wall time (ms)  final |residual|  error")
histories, estimates = {}, {}
for name, solve in problems.items():
    for jacobian in ("analytic", "3-point"):
        started = time.perf_counter()
        result = solve(jacobian)
        elapsed = time.perf_counter() - started
        residual = np.abs(result.residual).max()
        error = f"|v0 − known| {np.abs(result.x - known).max():.1e}" if name.startswith("cube") else ""
        print(f"{name:12s}  {jacobian:9s}  {result.iterations:10d}  {1e3 * elapsed:14.1f}  {residual:16.1e}  {error}")
        histories[f"{name}, {jacobian}"] = result.history
        estimates[f"{name}, {jacobian}"] = result.x

if arguments.plot:
    import matplotlib.pyplot as plt
    from optimization_plots import save

    figure, (by_iteration, by_time, paths) = plt.subplots(1, 3, figsize=(13, 3.8))
    for label, history in histories.items():
        norms = [np.sqrt(2.0 * p.cost) for p in history]
        by_iteration.semilogy([p.iteration for p in history], norms, marker="o", label=label)
        by_time.semilogy([1e3 * p.elapsed for p in history], norms, marker="o", label=label)
    by_iteration.set(xlabel="iteration", ylabel="‖residual‖")
    by_time.set(xlabel="wall time (ms)", ylabel="‖residual‖")
    by_iteration.legend(fontsize="small")
    # The cube's slide from the guess, the estimate and the known velocity: where its centre goes.
    guesses = {"guess": cube_guess, "known": known, "estimate (analytic)": estimates["cube, eq. 14, analytic"]}
    for label, velocity in guesses.items():
        path = cube_world.rollout(cube_q0, velocity, cube_controls).q
        paths.plot(path[:, 0], path[:, 1], marker=".", linestyle="--" if label == "known" else "-", label=label)
    paths.plot(*observed[:2], "k*", markersize=12, label="observed final position")
    paths.set(xlabel="x (m)", ylabel="y (m)", title="the cube's centre, eq. 14")
    paths.legend(fontsize="small")
    save(figure, arguments.plot)
