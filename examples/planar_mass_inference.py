"""Inferring an unknown mass from an observed collision through the planar engine (the parameter
learning experiment of LCP-physics, de Avila Belbute-Peres et al. 2018).

A disk of known mass rolls into a resting disk of unknown mass; from where both are after 1 s, find
that mass again. The residual (the two final x positions minus the observed ones) and its derivative
with respect to the mass come from a rollout of PlanarWorld.step and its reverse mode
(PlanarWorld.step_vjp, the KKT backward pass of each step's LCP); Gauss–Newton takes the steps.
The script prints the estimate and the residual per iteration, and with --plot FILE draws the
disks' paths for the guess and for the estimate (matplotlib).

Run: python examples/planar_mass_inference.py [--plot planar_mass_inference.png]
"""

import argparse

import numpy as np

from dcol.dynamics.planar import Body, Circle, PlanarWorld

STEPS = 100
START_POSITIONS = np.array([[0.0, -1.0, 0.0], [0.0, 0.5, 0.0]])
START_VELOCITIES = np.array([[0.0, 2.0, 0.0], [0.0, 0.0, 0.0]])


def world_with(mass: float) -> PlanarWorld:
    bodies = (Body(Circle(0.3), 1.0, restitution=0.8), Body(Circle(0.4), mass, restitution=0.8))
    return PlanarWorld(bodies, gravity=(0.0, 0.0), dt=0.01)


def final_x(mass: float) -> tuple[np.ndarray, list]:
    """The disks' x positions after STEPS steps, and the (positions, velocities, step) of each step."""
    world, positions, velocities, tape = world_with(mass), START_POSITIONS, START_VELOCITIES, []
    for _ in range(STEPS):
        step = world.step(positions, velocities)
        tape.append((positions, velocities, step))
        positions, velocities = step.positions, step.velocities
    return positions[:, 1], tape


def x_derivative(mass: float, tape: list) -> np.ndarray:
    """∂(final x of each disk)/∂(second disk's mass) (2,): one reverse sweep per disk."""
    world, derivative = world_with(mass), np.zeros(2)
    for disk in range(2):
        grad_positions, grad_velocities = np.zeros((2, 3)), np.zeros((2, 3))
        grad_positions[disk, 1] = 1.0
        for positions, velocities, step in reversed(tape):
            cot = world.step_vjp(step, positions, velocities, grad_velocities, grad_positions)
            grad_positions, grad_velocities = cot.positions, cot.velocities
            derivative[disk] += cot.mass[1]
    return derivative


def infer_mass(observed: np.ndarray, guess: float, iterations: int = 20, tol: float = 1e-10) -> list[float]:
    """Gauss–Newton on the mass from the observed final x positions (2,); the estimates, guess first."""
    estimates = [guess]
    for _ in range(iterations):
        x, tape = final_x(estimates[-1])
        residual, jacobian = x - observed, x_derivative(estimates[-1], tape)
        print(f"mass {estimates[-1]:.10f}  residual {np.linalg.norm(residual):.3e}")
        if np.linalg.norm(residual) < tol:
            break
        estimates.append(estimates[-1] - float(jacobian @ residual / (jacobian @ jacobian)))
    return estimates


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plot", default=None, help="write the figure to this file")
    arguments = parser.parse_args()
    true_mass, guess = 2.5, 1.0
    observed, _ = final_x(true_mass)
    estimates = infer_mass(observed, guess)
    print(f"true mass {true_mass}, estimate {estimates[-1]:.10f}")
    if arguments.plot:
        import matplotlib.pyplot as plt

        figure, axes = plt.subplots(figsize=(7, 3))
        for mass, style in ((guess, "--"), (estimates[-1], "-")):
            _, tape = final_x(mass)
            for disk in range(2):
                axes.plot(
                    [positions[disk, 1] for positions, _, _ in tape], style, label=f"disk {disk}, m₂ = {mass:.4f}"
                )
        axes.set_xlabel("step")
        axes.set_ylabel("x (m)")
        axes.legend()
        figure.tight_layout()
        figure.savefig(arguments.plot)
