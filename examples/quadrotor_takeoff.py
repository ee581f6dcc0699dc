"""The quadrotor takes off from resting on the ground to a target height, by gradient descent on its
thrust with plain and with complementarity-aware gradients (Nimble §IV-D and Fig. 8).

The loss is the squared distance of the drone's height from `--target` after `--steps` steps of
1 ms; the controls are the thrust (the force along the body's z axis, within [0, 20] N) at every
step, from zero. Each iteration steps along the negative gradient by the best of the step sizes
rate × 2⁻ᵏ, k = 0…11, all rolled out in one World.rollout_batch (none that raises the loss is
taken). Resting on the ground, the drone's contacts clamp: a small change of thrust changes
nothing, so the plain gradient is zero (to rounding) and descent stalls where it starts. The
complementarity-aware gradient (Rollout.vjp with complementarity_aware=True) also tries each step's
contacts as if they could separate, keeps that when it gives the larger gradient, and escapes. The
script prints the first and last loss of both; with --plot FILE it draws the loss per iteration
(matplotlib).

Run: python examples/quadrotor_takeoff.py [--steps 500] [--plot takeoff.png]
"""

import argparse
import time

import numpy as np

from dcol.dynamics import World, load_dataset_robot, neutral

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--steps", type=int, default=500)
parser.add_argument("--target", type=float, default=0.5, help="height (m) after the last step")
parser.add_argument("--iterations", type=int, default=30)
parser.add_argument("--rate", type=float, default=1e6, help="the largest step size (N per unit of gradient)")
parser.add_argument("--plot", default=None, help="write the figure to this file")
arguments = parser.parse_args()

model = load_dataset_robot("quadrotor")
world = World(model, dt=1e-3)
start = neutral(model)
start[2] = 0.025 - 5e-5  # the body's half height: resting, within the penetration the step leaves alone
steps = arguments.steps
thrust_axis = np.eye(6)[2]  # the base's force along body z (the body stays level: its z is the world's)
max_thrust = 20.0  # N, about twice the drone's weight
step_sizes = arguments.rate * 0.5 ** np.arange(12)

losses, first_gradients = {}, {}
for aware in (False, True):
    name = "complementarity-aware" if aware else "plain"
    thrust = np.zeros(steps)
    losses[name] = []
    started = time.perf_counter()
    for _ in range(arguments.iterations):
        rollout = world.rollout(start, np.zeros(6), thrust[:, None] * thrust_axis, derivatives=True)
        height = rollout.q[-1, 2]
        losses[name].append((height - arguments.target) ** 2)
        grad_q = np.zeros((steps + 1, 6))
        grad_q[-1, 2] = 2.0 * (height - arguments.target)
        gradient = rollout.vjp(grad_q, complementarity_aware=aware).tau @ thrust_axis
        first_gradients.setdefault(name, np.abs(gradient).max())
        trials = np.clip(thrust - step_sizes[:, None] * gradient, 0.0, max_thrust)
        heights = world.rollout_batch(
            np.tile(start, (len(trials), 1)), np.zeros((len(trials), 6)), trials[:, :, None] * thrust_axis
        ).q[:, -1, 2]
        best = np.argmin((heights - arguments.target) ** 2)
        if (heights[best] - arguments.target) ** 2 < losses[name][-1]:
            thrust = trials[best]
    print(
        f"{name:22s} loss {losses[name][0]:.4f} → {losses[name][-1]:.2e} in {arguments.iterations} iterations, "
        f"{time.perf_counter() - started:.1f} s, final height {height:.3f} m, mean thrust {thrust.mean():.3f} N, "
        f"first gradient's largest entry {first_gradients[name]:.1e}"
    )

if arguments.plot:
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    for name, values in losses.items():
        axes.plot(values, marker="o", label=name)
    axes.set(xlabel="iteration", ylabel=f"(height after {steps} steps − target)² (m²)")
    axes.legend()
    figure.tight_layout()
    figure.savefig(arguments.plot)
    print(f"wrote {arguments.plot}")
