"""The catapult throws a free ball to hit a target at a given time step: multiple shooting against the
cross-entropy method (Nimble §VII and Fig. 7), DDP alongside.

The catapult is datasets/robots/catapult.urdf (a 1 m arm on a revolute joint, its torque within the
URDF's 300 N m), with a lip added at the bucket's outer edge so that the ball stays in the bucket
while the arm swings, and a free ball (5 cm, 0.1 kg) resting in the bucket: the model has a floating
joint, nq = 8, nv = 7. The cost asks for the ball's centre at `--target` after `--steps` steps of
10 ms, with a small effort term. Every method starts from a constant torque that lifts the arm
(`--guess`): from zero torque the arm rests on its lower limit and the ball in the bucket, contacts
that clamp and give a zero gradient (as the drone's in quadrotor_takeoff.py).

Where the ball can land decides which targets a local method reaches. Pressed into the lip by the
swing, the ball leaves the bucket only when the arm hits its upper limit (1.75 rad), always in about
the same direction, and then flies as a projectile. Were the stop's time continuous, the release
speed and the flight's duration would reach a two-dimensional set of positions at the last step;
with 10 ms steps the arm stops at a whole step, and the torques that stop it at a given step k reach
only a narrow band around one line (release speeds along the release direction, the flight's
duration fixed at T − k steps). The bands of consecutive stop steps lie side by side, apart by what
one more step of flight adds to the gravity drop, joined by a steep fold where the stop moves by a
step; multiple shooting and DDP mostly stay in the band of their guess's stop step, and stall at its
edge when the target lies outside it. The default guess, 40 N m (about three times what holds the
arm and the ball up), stops the arm at step 38, whose band holds the default target (2.5 m, 1 m); a
guess that stops the arm a step or more earlier or later can leave the target outside its band (try
--guess 50).

The script prints, per method, the iterations, wall time, final cost, how far the ball is from the
target at the last step, whether the method's stopping test held and, for multiple shooting, the
largest defect left between its intervals; with --plot FILE it draws the cost against iterations and wall time and the
ball's path (matplotlib).

Run: python examples/catapult.py [--guess 40] [--intervals 2] [--plot catapult.png]
"""

import argparse
from typing import NamedTuple

import numpy as np

from dcol.dynamics import ModelBuilder, World, load_dataset_robot
from dcol.dynamics.optimization import QuadraticCost, cem, ddp, multiple_shooting
from dcol.geom import Box, Sphere

BALL_RADIUS, BALL_MASS = 0.05, 0.1


def catapult_and_ball():
    """The dataset's catapult, a lip on its bucket, and a free ball: one ModelBuilder model."""
    catapult = load_dataset_robot("catapult")
    builder = ModelBuilder(gravity=catapult.gravity, name="catapult_and_ball")
    builder.add_body(
        "arm",
        parent=None,
        joint="arm_joint",
        kind="revolute",
        placement=(catapult.joint_positions[0], catapult.joint_rotations[0]),
        axis=catapult.joint_axes[0],
        mass=catapult.masses[0],
        com=catapult.coms[0],
        inertia=catapult.rotational_inertias[0],
        lower=catapult.lower_limits,
        upper=catapult.upper_limits,
        damping=catapult.damping,
        effort_limit=catapult.effort_limits,
        velocity_limit=catapult.velocity_limits,
    )
    for entry in catapult.collision_shapes:
        builder.add_shape(None if entry.body < 0 else "arm", entry.shape, link=entry.link)
    # The bucket plate is 0.2 m wide, centred 1 m out along −x and 4 cm up: a 12 cm lip at its outer edge.
    builder.add_shape("arm", Box([0.01, 0.1, 0.06], offset=((-1.11, 0.0, 0.08), (1.0, 0.0, 0.0, 0.0))), link="lip")
    ball_inertia = 0.4 * BALL_MASS * BALL_RADIUS**2 * np.eye(3)
    builder.add_body("ball", parent=None, joint="ball_free", kind="floating", mass=BALL_MASS, inertia=ball_inertia)
    builder.add_shape("ball", Sphere(BALL_RADIUS))
    return builder.build()


class Throw(NamedTuple):
    """The problem: the world, the start (arm horizontal, ball in the bucket), the cost, the guess
    (T, 1) and the optimizers' keyword arguments (the arm's torque as the one control, its bounds)."""

    world: World
    start_q: np.ndarray
    start_v: np.ndarray
    cost: QuadraticCost
    guess: np.ndarray
    bounds: dict


def throw(steps, target, guess_torque=40.0):
    """The ball's centre asked at target (x, z) after `steps` steps of 10 ms; the guess holds the arm's
    torque at guess_torque (N m) throughout."""
    model = catapult_and_ball()
    world = World(model, dt=0.01)
    # The arm horizontal, the ball on the bucket plate (its top at 0.71 m).
    start_q = np.r_[0.0, -1.0, 0.0, 0.71 + BALL_RADIUS, 1.0, 0.0, 0.0, 0.0]
    target_q = np.r_[0.0, target[0], 0.0, target[1], 1.0, 0.0, 0.0, 0.0]
    final_weights = np.zeros(2 * model.nv)
    final_weights[1:4] = 1000.0  # the ball's position; its orientation and the arm are free
    cost = QuadraticCost(target_q, np.zeros(model.nv), np.zeros(2 * model.nv), [1e-6], final_weights)
    guess = np.full((steps, 1), guess_torque)
    limit = float(model.effort_limits[0])
    arm_torque = np.eye(model.nv)[:, :1]  # τ = S u: only the arm is driven
    bounds = dict(actuation=arm_torque, lower=-limit, upper=limit)
    return Throw(world, start_q, np.zeros(model.nv), cost, guess, bounds)


def miss(result, target):
    """How far (m) the ball's centre ends from target (x, z)."""
    return float(np.hypot(result.q[-1, 1] - target[0], result.q[-1, 3] - target[1]))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--guess", type=float, default=40.0, help="the guess's constant torque (N m)")
    parser.add_argument("--intervals", type=int, default=2, help="multiple shooting's intervals")
    parser.add_argument("--target", type=float, nargs=2, default=(2.5, 1.0), help="the ball's x and z (m) at the end")
    parser.add_argument("--cem-iterations", type=int, default=60)
    parser.add_argument("--plot", default=None, help="write the figure to this file")
    arguments = parser.parse_args()

    problem = throw(arguments.steps, arguments.target, arguments.guess)
    start = (problem.world, problem.start_q, problem.start_v, problem.guess, problem.cost)
    results = {
        "multiple shooting": multiple_shooting(
            *start, intervals=arguments.intervals, max_iterations=500, **problem.bounds
        ),
        "CEM": cem(
            *start,
            spread=50.0,
            hold=5,
            samples=64,
            elites=8,
            max_iterations=arguments.cem_iterations,
            **problem.bounds,
        ),
        "DDP": ddp(*start, **problem.bounds),
    }
    target_x, target_z = arguments.target
    print(
        f"catapult, {arguments.steps} steps of {problem.world.dt} s, the ball asked at x = {target_x} m, "
        f"z = {target_z} m, from a constant {arguments.guess} N m (multiple shooting: {arguments.intervals} intervals)"
    )
    print("method             iterations  wall time (s)  final cost  ball's miss (mm)  converged  largest defect")
    for name, result in results.items():
        # Only multiple shooting has defects between intervals; the other methods roll out one trajectory.
        defect = f"{result.history[-1].constraint_violation:.1e}" if name == "multiple shooting" else "-"
        print(
            f"{name:17s}  {result.iterations:10d}  {result.history[-1].elapsed:13.2f}  {result.cost:10.4f}  "
            f"{1e3 * miss(result, arguments.target):16.1f}  {str(result.converged):9s}  {defect:>14s}"
        )

    if arguments.plot:
        from optimization_plots import cost_figure, save

        figure, path = cost_figure(results)
        for name, result in results.items():
            path.plot(result.q[:, 1], result.q[:, 3], label=name)
        path.plot([target_x], [target_z], "k*", markersize=12, label="target")
        path.set(xlabel="ball x (m)", ylabel="ball z (m)", aspect="equal")
        path.legend(loc="lower center", fontsize="small")
        save(figure, arguments.plot)


if __name__ == "__main__":
    main()
