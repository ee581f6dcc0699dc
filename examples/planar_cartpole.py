"""Balancing and swinging up a planar cart-pole by gradient-based control through the planar engine.

The cart slides on a rail (AxisConstraint holds its y and its angle), the pole is hinged to it. Two
tasks, each 60 steps of horizontal forces on the cart found by L-BFGS with the gradient of the whole
rollout from dcol.dynamics.planar.torch (the KKT backward pass of each step's LCP):

* balance: the pole starts 0.4 rad from upright; over 1.2 s the forces minimise the pole's squared
  angle and rate plus small costs on the cart's travel and the forces;
* swing-up: the pole starts hanging (0.05 rad off straight down, so that the gradient is not zero by
  symmetry); over 2.4 s the forces minimise its height below upright, 1 − cos θ, weighted towards
  the end, plus the same small costs, and end it upright and slow.

The script prints the cost per iteration and the pole's angle at the end; with --plot FILE it draws
the angle and the force against time (matplotlib).

Run: python examples/planar_cartpole.py [--task balance|swing-up] [--iterations 3] [--plot planar_cartpole.png]
"""

import argparse
from collections.abc import Callable

import numpy as np
import torch

from dcol.dynamics.planar import AxisConstraint, Body, Hinge, PlanarWorld, rectangle
from dcol.dynamics.planar import torch as planar_torch

STEPS, START_ANGLE, POLE_LENGTH = 60, 0.4, 1.0
SWING_UP_START, SWING_UP_DT = np.pi - 0.05, 0.04
CART, POLE = 0, 1

Cost = Callable[[PlanarWorld, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


def cart_pole(start_angle: float = START_ANGLE, dt: float = 0.02) -> tuple[PlanarWorld, torch.Tensor, torch.Tensor]:
    """The world (no ground: the rail carries the cart) and the start: cart at rest at the origin,
    the pole at rest start_angle from upright (angle 0 is upright, π hanging)."""
    bodies = (Body(rectangle(0.4, 0.2), mass=1.0), Body(rectangle(0.05, POLE_LENGTH), mass=0.2))
    half = POLE_LENGTH / 2
    joints = (
        AxisConstraint(CART, "y", 0.0),
        AxisConstraint(CART, "angle", 0.0),
        Hinge(POLE, (0.0, -half), CART, (0, 0)),
    )
    world = PlanarWorld(bodies, joints, dt=dt, post_stabilization=False)
    pole = [start_angle, -half * np.sin(start_angle), half * np.cos(start_angle)]
    positions = torch.tensor([[0.0, 0.0, 0.0], pole], dtype=torch.float64)
    return world, positions, torch.zeros(2, 3, dtype=torch.float64)


def rollout(world: PlanarWorld, positions: torch.Tensor, velocities: torch.Tensor, pushes: torch.Tensor):
    """The trajectories (STEPS + 1, 2, 3) under horizontal pushes (STEPS,) on the cart."""
    forces = torch.zeros(STEPS, 2, 3, dtype=torch.float64)
    forces[:, CART, 1] = pushes
    return planar_torch.rollout(world, positions, velocities, forces)


def cost(world: PlanarWorld, positions: torch.Tensor, velocities: torch.Tensor, pushes: torch.Tensor) -> torch.Tensor:
    """The balancing task's cost."""
    all_positions, all_velocities = rollout(world, positions, velocities, pushes)
    angle, rate, travel = all_positions[1:, POLE, 0], all_velocities[1:, POLE, 0], all_positions[1:, CART, 1]
    return (angle**2).sum() + 0.1 * (rate**2).sum() + 0.1 * (travel**2).sum() + 1e-3 * (pushes**2).sum()


def swing_up_cost(
    world: PlanarWorld, positions: torch.Tensor, velocities: torch.Tensor, pushes: torch.Tensor
) -> torch.Tensor:
    """The swing-up's cost: 1 − cos θ (any number of turns counts as upright) weighted by (t/T)²,
    the same for the rate squared a hundredth as much, small travel and force costs, and terminal
    terms that ask for upright and at rest."""
    all_positions, all_velocities = rollout(world, positions, velocities, pushes)
    angle, rate, travel = all_positions[1:, POLE, 0], all_velocities[1:, POLE, 0], all_positions[1:, CART, 1]
    weights = torch.linspace(0.0, 1.0, STEPS, dtype=torch.float64) ** 2
    running = (weights * (1 - torch.cos(angle))).sum() + 0.01 * (weights * rate**2).sum()
    small = 0.01 * (travel**2).sum() + 1e-4 * (pushes**2).sum()
    return running + small + 20 * (1 - torch.cos(angle[-1])) + 2 * rate[-1] ** 2


def optimise(
    task_cost: Cost, world: PlanarWorld, positions: torch.Tensor, velocities: torch.Tensor, iterations: int
) -> tuple[torch.Tensor, list[float]]:
    """The pushes (STEPS,) after ``iterations`` L-BFGS iterations from zero, and the cost before
    each iteration and after the last."""
    pushes = torch.zeros(STEPS, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.LBFGS([pushes], max_iter=20, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        optimizer.zero_grad()
        value = task_cost(world, positions, velocities, pushes)
        value.backward()
        return value

    costs = []
    for _ in range(iterations):
        costs.append(float(optimizer.step(closure).detach()))
        print(f"cost {costs[-1]:.4f}")
    costs.append(float(task_cost(world, positions, velocities, pushes.detach())))
    return pushes.detach(), costs


def balance(iterations: int) -> tuple[torch.Tensor, list[float]]:
    """The balancing task's pushes and costs (see optimise)."""
    return optimise(cost, *cart_pole(), iterations)


def swing_up(iterations: int) -> tuple[torch.Tensor, list[float]]:
    """The swing-up's pushes and costs (see optimise)."""
    return optimise(swing_up_cost, *cart_pole(SWING_UP_START, SWING_UP_DT), iterations)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", choices=("balance", "swing-up"), default="balance")
    parser.add_argument("--iterations", type=int, default=3, help="L-BFGS iterations (20 evaluations each at most)")
    parser.add_argument("--plot", default=None, help="write the figure to this file")
    arguments = parser.parse_args()
    if arguments.task == "balance":
        pushes, costs = balance(arguments.iterations)
        world, positions, velocities = cart_pole()
    else:
        pushes, costs = swing_up(arguments.iterations)
        world, positions, velocities = cart_pole(SWING_UP_START, SWING_UP_DT)
    all_positions, _ = rollout(world, positions, velocities, pushes)
    final = float(np.angle(np.exp(1j * float(all_positions[-1, POLE, 0]))))  # in (−π, π]: turns do not count
    print(f"cost {costs[0]:.4f} → {costs[-1]:.4f}; pole angle at the end {final:.2e} rad from upright")
    if arguments.plot:
        import matplotlib.pyplot as plt

        unpushed, _ = rollout(world, positions, velocities, torch.zeros(STEPS, dtype=torch.float64))
        time = world.dt * np.arange(STEPS + 1)
        figure, (upper, lower) = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
        upper.plot(time, unpushed[:, POLE, 0].numpy(), "--", label="no force")
        upper.plot(time, all_positions[:, POLE, 0].numpy(), label="optimised forces")
        upper.set_ylabel("pole angle (rad, 0 upright)")
        upper.legend()
        lower.step(time[:-1], pushes.numpy(), where="post")
        lower.set_xlabel("t (s)")
        lower.set_ylabel("force on the cart (N)")
        figure.tight_layout()
        figure.savefig(arguments.plot)


if __name__ == "__main__":
    main()
