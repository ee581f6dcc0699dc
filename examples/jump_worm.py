"""The jump-worm, lying on the ground, jumps to be as high as it can at the end of the horizon: DDP
through contact against the cross-entropy method (Nimble §VII).

The worm's four joints are driven within their effort limits (5 N m); its planar root (x, z, pitch)
is free. The cost asks for its root at `--height` after `--steps` steps of 10 ms, with a small
effort term; both methods start from zero torques. The script prints, per method, the iterations,
wall time, final cost and the root's height at the end; with --plot FILE it draws the cost against
iterations and wall time and the root's height over time (matplotlib).

Run: python examples/jump_worm.py [--steps 60] [--plot jump_worm.png]
"""

import argparse

import numpy as np

from dcol.dynamics import World, load_dataset_robot
from dcol.dynamics.optimization import QuadraticCost, cem, ddp

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--steps", type=int, default=60)
parser.add_argument("--height", type=float, default=1.0, help="the root's height (m) asked for at the end")
parser.add_argument("--plot", default=None, help="write the figure to this file")
arguments = parser.parse_args()

model = load_dataset_robot("jump_worm")
world = World(model, dt=0.01)
# Settled on the ground: the start is where the worm comes to rest from q = 0.
start = world.rollout(np.zeros(model.nq), np.zeros(model.nv), np.zeros((50, model.nv))).q[-1]
joints = np.vstack([np.zeros((3, 4)), np.eye(4)])  # τ = S u: the root is not driven
limits = np.asarray(model.effort_limits)[3:]
target = start.copy()
target[1] = arguments.height  # rootz
final_weights = np.zeros(2 * model.nv)
final_weights[1] = 100.0
cost = QuadraticCost(target, np.zeros(model.nv), np.zeros(2 * model.nv), np.full(4, 1e-4), final_weights)
guess = np.zeros((arguments.steps, 4))
bounds = dict(actuation=joints, lower=-limits, upper=limits)

results = {
    "DDP": ddp(world, start, np.zeros(model.nv), guess, cost, **bounds),
    "CEM": cem(
        world,
        start,
        np.zeros(model.nv),
        guess,
        cost,
        spread=3.0,
        hold=5,
        samples=64,
        elites=8,
        max_iterations=30,
        **bounds,
    ),
}
print(f"jump-worm, {arguments.steps} steps of {world.dt} s, root height asked for: {arguments.height} m")
print("method  iterations  wall time (s)  final cost  final height (m)")
for name, result in results.items():
    print(
        f"{name:6s}  {result.iterations:10d}  {result.history[-1].elapsed:13.2f}  {result.cost:10.3f}  "
        f"{result.q[-1, 1]:16.3f}"
    )

if arguments.plot:
    from optimization_plots import cost_figure, save

    figure, heights = cost_figure(results)
    for name, result in results.items():
        heights.plot(np.arange(arguments.steps + 1) * world.dt, result.q[:, 1], label=name)
    heights.set(xlabel="time (s)", ylabel="root height (m)")
    save(figure, arguments.plot)
