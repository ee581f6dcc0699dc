"""DCOL §IV-B, Fig. 6: twelve convex bodies of mixed primitive types thrown towards the origin, simulated
at 100 Hz by complementarity time stepping whose contact constraint is DCOL's α(q⁺) ≥ 1, one per pair.

The simulator is dcol.dynamics.ScalingContactSimulator (its module docstring gives the step: Newton's
method on the complementarity problem in the velocities, one dcol.solvers.solve_lcp per iteration). It is
a simulator of its own rather than a contact model of dcol.dynamics.World: with no friction and one point
per pair it cannot hold a resting contact the way World's manifolds do. This script sets up DCOL's scene
(no gravity; each body a solid of 1 kg whose inertia dcol.dynamics.solid_inertia gives from its shape),
runs it, prints the largest violation of α ≥ 1 and the energy, and draws the paths and the energy.

Run: python examples/contact_physics.py [--seconds 3.5] [--output contact_physics.png]
"""

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from dcol.dynamics import ScalingContactRollout, ScalingContactSimulator
from dcol.geom import Box, Capsule, Cone, Cylinder, Ellipsoid, Polygon, Shape

DT = 0.01  # s: 100 Hz, as DCOL Fig. 6
MASS = 1.0  # kg, every body
SHAPES: list[Shape] = [
    Box([0.4, 0.3, 0.25]),
    Capsule(R=0.25, L=0.6),
    Cylinder(R=0.3, L=0.6),
    Cone(H=0.9, beta=np.deg2rad(25.0)),
    Ellipsoid(np.diag([1 / 0.45**2, 1 / 0.3**2, 1 / 0.25**2])),
    Polygon(C=np.array([[1.0, 0], [0, 1], [-1, 0], [0, -1]]), d=np.full(4, 0.3), R=0.1),
] * 2


def initial_state(rng: np.random.Generator, arrival: float = 2.0) -> tuple[np.ndarray, ...]:
    """Bodies at random places 3–5 m from the origin, apart, at random attitudes and spins (body frame),
    flying straight at the origin so as to reach it at t = arrival: positions, quaternions, velocities,
    angular velocities."""
    pairs = np.triu_indices(len(SHAPES), 1)
    while True:
        directions = rng.normal(size=(len(SHAPES), 3))
        r = directions / np.linalg.norm(directions, axis=1, keepdims=True) * rng.uniform(3.0, 5.0, (len(SHAPES), 1))
        if np.min(np.linalg.norm(r[pairs[0]] - r[pairs[1]], axis=1)) > 1.5:  # farther apart than any two bodies reach
            break
    q = Rotation.random(len(SHAPES), random_state=rng).as_quat(scalar_first=True)
    return r, q, -r / arrival, rng.normal(scale=1.0, size=(len(SHAPES), 3))


def simulate(seconds: float = 3.5, seed: int = 0) -> ScalingContactRollout:
    """The twelve bodies for ``seconds``; RuntimeError (from the rollout) if a step does not converge."""
    simulator = ScalingContactSimulator(SHAPES, MASS, dt=DT, gravity=(0.0, 0.0, 0.0))
    return simulator.rollout(*initial_state(np.random.default_rng(seed)), steps=round(seconds / DT))


def draw(run: ScalingContactRollout, output: Path) -> None:
    """The bodies' centres' paths in the xy-plane, and the energy over time."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (paths, energy) = plt.subplots(1, 2, figsize=(11, 5))
    for body in range(run.positions.shape[1]):
        line = paths.plot(*run.positions[:, body, :2].T, lw=1.0)[0]
        paths.plot(*run.positions[0, body, :2], "o", color=line.get_color())
    paths.set(aspect="equal", xlabel="x (m)", ylabel="y (m)", title="Centres' paths (dots: start)")
    energy.plot(np.arange(len(run.energy)) * DT, run.energy)
    energy.set(xlabel="t (s)", ylabel="kinetic energy (J)", title="Energy: contacts are inelastic")
    fig.savefig(output, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, default=Path(tempfile.gettempdir()) / "contact_physics.png")
    args = parser.parse_args(argv)
    run = simulate(args.seconds, args.seed)
    newton = run.newton_iterations
    print(f"{len(newton)} steps of {DT} s, Newton iterations per step: mean {newton.mean():.1f}, max {newton.max()}")
    print(f"largest violation of α ≥ 1 over the run: {max(run.worst_violation.max(), 0.0):.1e}")
    print(f"kinetic energy: {run.energy[0]:.3f} J at the start, {run.energy[-1]:.3f} J at the end")
    draw(run, args.output)
    print(f"picture: {args.output}")


if __name__ == "__main__":
    main(sys.argv[1:])
