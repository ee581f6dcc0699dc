"""The quadrotor takes off from resting on the ground to a target height, by gradient descent on its
thrust with plain and with complementarity-aware gradients (Nimble §IV-D and Fig. 8).

The loss is the squared distance of the drone's height from `--target` after `--steps` steps of
`--dt` (Nimble's 500 steps of 10 ms by default); the controls are the thrust (the force along the
body's z axis, within [0, 20] N) at every step, from zero. Each iteration steps along the negative
gradient by the best of the step sizes rate × 2⁻ᵏ, k = 0…23, all rolled out in one
World.rollout_batch; none that raises the loss is taken, and of those as good as the best to
rounding the longest is. Resting on the ground, the drone's contacts clamp: a small change of thrust
changes nothing, so the plain gradient is zero (to rounding) and descent stalls where it starts.
The complementarity-aware gradient (Rollout.vjp with complementarity_aware=True) also tries each
step's contacts as if they could separate, keeps that when it gives the larger gradient, and asks
for more thrust: the loss stays flat while the thrust grows below the drone's weight (the steps that
change nothing are taken, as Nimble's SGD takes them), then drops once it lifts off. Over 5 s a
thrust a few per mille above the weight already overshoots the target, hence the 24 step sizes.
The loss only asks for the height at the last step, and the flight it finds may rise above the
target and come back down to it.

The script prints the first and last loss of both; with --plot FILE it draws the loss against
iterations and wall time and the height over time of the last iterate (matplotlib).

Run: python examples/quadrotor_takeoff.py [--dt 0.001 --rate 1e6] [--plot takeoff.png]
"""

import argparse
import time

import numpy as np

from dcol.dynamics import World, load_dataset_robot, neutral

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--steps", type=int, default=500)
parser.add_argument("--dt", type=float, default=0.01, help="time step (s)")
parser.add_argument("--target", type=float, default=0.5, help="height (m) after the last step")
parser.add_argument("--iterations", type=int, default=30)
parser.add_argument(
    "--rate", type=float, default=1e4, help="the largest step size (N per unit of gradient; 1e6 for 1 ms steps)"
)
parser.add_argument("--plot", default=None, help="write the figure to this file")
arguments = parser.parse_args()

model = load_dataset_robot("quadrotor")
world = World(model, dt=arguments.dt)
start = neutral(model)
start[2] = 0.025 - 5e-5  # the body's half height: resting, within the penetration the step leaves alone
steps = arguments.steps
thrust_axis = np.eye(6)[2]  # the base's force along body z (the body stays level: its z is the world's)
max_thrust = 20.0  # N, about twice the drone's weight
step_sizes = arguments.rate * 0.5 ** np.arange(24)
ROUNDING = 1e-9  # relative: losses this close are equal

losses, elapsed, first_gradients, heights_over_time = {}, {}, {}, {}
for aware in (False, True):
    name = "complementarity-aware" if aware else "plain"
    thrust = np.zeros(steps)
    losses[name], elapsed[name] = [], []
    started = time.perf_counter()
    for _ in range(arguments.iterations):
        rollout = world.rollout(start, np.zeros(6), thrust[:, None] * thrust_axis, derivatives=True)
        height = rollout.q[-1, 2]
        losses[name].append((height - arguments.target) ** 2)
        elapsed[name].append(time.perf_counter() - started)
        grad_q = np.zeros((steps + 1, 6))
        grad_q[-1, 2] = 2.0 * (height - arguments.target)
        gradient = rollout.vjp(grad_q, complementarity_aware=aware).tau @ thrust_axis
        first_gradients.setdefault(name, np.abs(gradient).max())
        trials = np.clip(thrust - step_sizes[:, None] * gradient, 0.0, max_thrust)
        heights = world.rollout_batch(
            np.tile(start, (len(trials), 1)), np.zeros((len(trials), 6)), trials[:, :, None] * thrust_axis
        ).q[:, -1, 2]
        trial_losses = (heights - arguments.target) ** 2
        # Resting, the loss changes only by rounding: of the step sizes as good as the best, the longest
        # is taken, so that the thrust keeps growing while the loss is flat (Nimble's SGD steps alike).
        best = np.flatnonzero(trial_losses <= trial_losses.min() * (1.0 + ROUNDING))[0]
        if trial_losses[best] <= losses[name][-1] * (1.0 + ROUNDING):
            thrust = trials[best]
    heights_over_time[name] = rollout.q[:, 2]
    print(
        f"{name:22s} loss {losses[name][0]:.4f} → {losses[name][-1]:.2e} in {arguments.iterations} iterations, "
        f"{time.perf_counter() - started:.1f} s, final height {height:.3f} m, mean thrust {thrust.mean():.3f} N, "
        f"first gradient's largest entry {first_gradients[name]:.1e}"
    )

if arguments.plot:
    import matplotlib.pyplot as plt
    from optimization_plots import save

    figure, (by_iteration, by_time, flight) = plt.subplots(1, 3, figsize=(13, 3.8))
    for name, values in losses.items():
        by_iteration.semilogy(values, marker="o", markersize=3, label=name)
        by_time.semilogy(elapsed[name], values, marker="o", markersize=3, label=name)
        flight.plot(np.arange(steps + 1) * world.dt, heights_over_time[name], label=name)
    flight.axhline(arguments.target, color="k", linestyle=":", label="target")
    by_iteration.set(xlabel="iteration", ylabel=f"(height after {steps} steps − target)² (m²)")
    by_time.set(xlabel="wall time (s)", ylabel="loss (m²)")
    flight.set(xlabel="time (s)", ylabel="height (m), last iterate")
    by_iteration.legend()
    flight.legend()
    save(figure, arguments.plot)
