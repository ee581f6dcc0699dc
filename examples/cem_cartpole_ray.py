"""Swing the cart-pole up by the cross-entropy method, its samples' rollouts spread over a Ray cluster.

Each iteration draws `--samples` open-loop force sequences for the cart (held for `--hold` steps each)
from a Gaussian, rolls them all out with dcol.dynamics.distributed.rollout_many (one native batch
per chunk, on the cluster's workers), keeps the cheapest tenth and refits the Gaussian to it. The
rollouts are those of World.rollout_batch bit for bit, so the run is the same on one machine or
many.

Run: python examples/cem_cartpole_ray.py                      # a local Ray instance on this machine
     python examples/cem_cartpole_ray.py --address auto       # the cluster `ray start` made here
     python examples/cem_cartpole_ray.py --address HOST:6379  # a remote cluster's head
(pip install ".[distributed]")
"""

import argparse
import os

import numpy as np

from dcol.dynamics import World, load_dataset_robot

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--address", default=None, help="a running Ray cluster's address (default: start a local one)")
parser.add_argument("--samples", type=int, default=256, help="force sequences per iteration")
parser.add_argument("--iterations", type=int, default=12)
parser.add_argument("--hold", type=int, default=10, help="steps each force is held")
parser.add_argument("--seconds", type=float, default=2.5, help="horizon")
arguments = parser.parse_args()

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # before Ray starts
import ray  # noqa: E402

from dcol.dynamics.distributed import rollout_many  # noqa: E402

ray.init(address=arguments.address)

# The pole hangs down (q = [cart x, pole angle], angle 0 upright); no ground, the rail holds the cart.
world = World(load_dataset_robot("cartpole"), dt=0.01, ground=False)
steps = round(arguments.seconds / world.dt)
knots = -(-steps // arguments.hold)
start_q, start_v = np.array([0.0, np.pi]), np.zeros(2)
max_force = 15.0  # N on the cart; the hinge is passive


def controls(forces):
    """(S, knots) cart forces → (S, steps, nv) joint forces, each held for `hold` steps."""
    held = np.repeat(forces, arguments.hold, axis=1)[:, :steps]
    return np.stack([held, np.zeros_like(held)], axis=-1)


def costs(q, v, forces):
    """Per sample: the pole's height below upright and the cart's distance from the centre over the
    trajectory, the final speeds, and the effort."""
    upright = 1.0 - np.cos(q[:, :, 1])
    running = upright.sum(axis=1) + (q[:, :, 0] ** 2).sum(axis=1)
    final = 10.0 * upright[:, -1] + 1.0 * (v[:, -1] ** 2).sum(axis=1)
    return running + 100.0 * final + 1e-3 * (forces**2).sum(axis=1)


rng = np.random.default_rng(0)
mean, spread = np.zeros(knots), np.full(knots, max_force / 2)
elites = max(2, arguments.samples // 10)
for iteration in range(arguments.iterations):
    forces = np.clip(mean + spread * rng.standard_normal((arguments.samples, knots)), -max_force, max_force)
    samples = len(forces)
    rollouts = rollout_many(world, np.tile(start_q, (samples, 1)), np.tile(start_v, (samples, 1)), controls(forces))
    cost = costs(rollouts.q, rollouts.v, forces)
    best = np.argsort(cost)[:elites]
    mean, spread = forces[best].mean(axis=0), forces[best].std(axis=0) + 0.05
    angle = np.angle(np.exp(1j * rollouts.q[best[0], -1, 1]))  # wrapped to (−π, π]
    print(f"iteration {iteration:2d}: best cost {cost[best[0]]:9.2f}, its final pole angle {angle:+.3f} rad")

final = world.rollout_batch(start_q[None], start_v[None], controls(mean[None]))
angle = np.angle(np.exp(1j * final.q[0, -1, 1]))
print(f"the mean sequence ends with the pole at {angle:+.3f} rad from upright, cart at {final.q[0, -1, 0]:+.3f} m")
ray.shutdown()
