"""The jump-worm, lying on the ground, jumps to be as high as it can at the end of the horizon: DDP
through contact (with the step's own and with complementarity-aware linearizations) against the
cross-entropy method (Nimble §VII).

The worm's four joints are driven within their effort limits (5 N m); its planar root (x, z, pitch)
is free. The cost is minus the root's height gained after `--steps` steps of 10 ms (a linear final
term, QuadraticCost's final_gradient) plus a small effort term; both methods start from zero torques.
The script prints, per method, the iterations, wall time, final cost, the root's height at the end and
the joints' largest speed; with --plot FILE it draws the cost against iterations and wall time and the
root's height over time (matplotlib).

With the step's own Jacobians DDP takes no step from rest: the worm lies on its links' bottom lines,
every contact clamped, and the clamping sets held give the root's height no sensitivity to the
torques. With complementarity_aware=True its backward pass linearizes each step at the sets
relabeled from the value's gradient (Nimble §IV-D, as the quadrotor's gradients), and it jumps.

Read the heights as what the simulation allows, not as a jump the worm could make: the methods spin
the joints far beyond the URDF's velocity limit, which World does not enforce and these optimizers,
bounding controls only, cannot. At those speeds a joint turns through a large angle in one 10 ms step,
and stepping the coordinates no longer keeps the centre of mass on a ballistic path in flight: the
optimizers climb on that discretization error. Halving the step does not remove it (the joints spin
faster still); a physical jump needs a joint-speed bound as a state constraint.

Run: python examples/jump_worm.py [--steps 60] [--plot jump_worm.png]
"""

import argparse

import numpy as np

from dcol.dynamics import World, load_dataset_robot
from dcol.dynamics.optimization import QuadraticCost, cem, ddp

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--steps", type=int, default=60)
parser.add_argument("--plot", default=None, help="write the figure to this file")
arguments = parser.parse_args()

model = load_dataset_robot("jump_worm")
world = World(model, dt=0.01)
# Settled on the ground: the start is where the worm comes to rest from q = 0.
start = world.rollout(np.zeros(model.nq), np.zeros(model.nv), np.zeros((50, model.nv))).q[-1]
joints = np.vstack([np.zeros((3, 4)), np.eye(4)])  # τ = S u: the root is not driven
limits = np.asarray(model.effort_limits)[3:]
# ℓ = −(z_T − z_0) + ½ Σ 1e-4 ‖u_t‖²: the height gained (rootz is the state's second coordinate), no target.
height_gained = -np.eye(2 * model.nv)[1]
no_weights = np.zeros(2 * model.nv)
cost = QuadraticCost(start, np.zeros(model.nv), no_weights, np.full(4, 1e-4), no_weights, height_gained)
guess = np.zeros((arguments.steps, 4))
bounds = dict(actuation=joints, lower=-limits, upper=limits)

results = {
    "DDP": ddp(world, start, np.zeros(model.nv), guess, cost, **bounds),
    "DDP, aware": ddp(world, start, np.zeros(model.nv), guess, cost, complementarity_aware=True, **bounds),
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
print(f"jump-worm, {arguments.steps} steps of {world.dt} s, root resting at {start[1]:.3f} m")
speed_limit = float(np.max(model.velocity_limits[3:]))
print(f"joint speeds: the URDF's limit is {speed_limit:g} rad/s")
print("method      iterations  wall time (s)  final cost  final height (m)  converged  largest joint speed")
for name, result in results.items():
    print(
        f"{name:10s}  {result.iterations:10d}  {result.history[-1].elapsed:13.2f}  {result.cost:10.3f}  "
        f"{result.q[-1, 1]:16.3f}  {str(result.converged):9s}  {np.abs(result.v[:, 3:]).max():.0f} rad/s"
    )

if arguments.plot:
    from optimization_plots import cost_figure, save

    figure, heights = cost_figure(results)
    for name, result in results.items():
        heights.plot(np.arange(arguments.steps + 1) * world.dt, result.q[:, 1], label=name)
    heights.set(xlabel="time (s)", ylabel="root height (m)")
    save(figure, arguments.plot)
