"""Swing the cart-pole up by DDP and by the cross-entropy method, as Nimble's Fig. 7 compares them.

The pole starts hanging (angle π) and should end upright (angle 0) at rest over the centre of the
rail after `--seconds`; only the cart is driven. DDP (iterative LQR on the step Jacobians of
World.step_batch) and CEM (sampled force sequences, one World.rollout_batch per iteration) minimize
the same quadratic cost from the same zero guess. The script prints, per method, the iterations, wall
time and final cost, the wall time each took to reach `--target` times DDP's final cost, and where
the pole ends; with --plot FILE it draws the cost against iterations and wall time and the pole's
angle (matplotlib).

Run: python examples/cartpole_swing_up.py [--seconds 2] [--plot swing_up.png]
"""

import argparse

import numpy as np

from dcol.dynamics import World, load_dataset_robot
from dcol.dynamics.optimization import QuadraticCost, cem, ddp

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--seconds", type=float, default=2.0, help="horizon")
parser.add_argument("--cem-iterations", type=int, default=60)
parser.add_argument("--target", type=float, default=2.0, help="the cost to reach, as a multiple of DDP's final cost")
parser.add_argument("--plot", default=None, help="write the figure to this file")
arguments = parser.parse_args()

world = World(load_dataset_robot("cartpole"), dt=0.02, ground=False)
steps = round(arguments.seconds / world.dt)
start_q, start_v = np.array([0.0, np.pi]), np.zeros(2)
cart_force = np.array([[1.0], [0.0]])  # τ = S u: the hinge is passive
# Weights on [cart x, pole angle, their speeds]; the final state weighs most.
cost = QuadraticCost(np.zeros(2), np.zeros(2), [0.1, 1.0, 0.01, 0.01], [1e-3], [10.0, 100.0, 10.0, 10.0])
guess = np.zeros((steps, 1))

results = {
    "DDP": ddp(world, start_q, start_v, guess, cost, actuation=cart_force),
    "CEM": cem(
        world,
        start_q,
        start_v,
        guess,
        cost,
        actuation=cart_force,
        spread=5.0,
        lower=-15.0,
        upper=15.0,
        hold=5,
        samples=64,
        elites=8,
        max_iterations=arguments.cem_iterations,
    ),
}
target = arguments.target * results["DDP"].cost
print(f"cart-pole swing-up, {steps} steps of {world.dt} s; target cost {target:.2f}")
print("method  iterations  wall time (s)  final cost  time to target (s)  final angle (rad)")
for name, result in results.items():
    reached = [p.elapsed for p in result.history if p.cost <= target]
    to_target = f"{reached[0]:.2f}" if reached else "not reached"
    angle = np.angle(np.exp(1j * result.q[-1, 1]))
    print(
        f"{name:6s}  {result.iterations:10d}  {result.history[-1].elapsed:13.2f}  {result.cost:10.2f}  "
        f"{to_target:>18s}  {angle:+17.3f}"
    )

if arguments.plot:
    import matplotlib.pyplot as plt

    figure, (by_iteration, by_time, angles) = plt.subplots(1, 3, figsize=(13, 3.8))
    for name, result in results.items():
        costs = [p.cost for p in result.history]
        by_iteration.semilogy([p.iteration for p in result.history], costs, label=name)
        by_time.semilogy([p.elapsed for p in result.history], costs, label=name)
        angles.plot(np.arange(steps + 1) * world.dt, result.q[:, 1], label=name)
    by_iteration.set(xlabel="iteration", ylabel="cost")
    by_time.set(xlabel="wall time (s)", ylabel="cost")
    angles.set(xlabel="time (s)", ylabel="pole angle (rad, 0 upright)")
    by_iteration.legend()
    figure.tight_layout()
    figure.savefig(arguments.plot)
    print(f"wrote {arguments.plot}")
