"""DCOL §IV-B, Fig. 6: twelve convex bodies of mixed primitive types thrown towards the origin, simulated
at 100 Hz by complementarity time stepping whose contact constraint is DCOL's α(q⁺) ≥ 1, one per pair.

Each step solves for the velocities V⁺ (linear and angular, world frame) of
    M (V⁺ − V) = Jᵀ λ,   0 ≤ λ ⊥ α(q⁺) − 1 ≥ 0,   q⁺ = (r + Δt v⁺, exp(Δt [ω⁺]×) Q),
with J = ∂α/∂q at q⁺ in the "rigid" columns [δp, δθ] of both bodies: a nonlinear complementarity
problem in V⁺. Newton's method (Josephy's) linearizes α around the current V⁺, which leaves an LCP in λ
(dcol.solvers.solve_lcp) per iteration, and stops once every α(q⁺) ≥ 1 to tolerance and V⁺ has settled.

It lives in examples/, not in dcol.dynamics.World: it has no friction and one point per pair, so it
cannot hold a resting contact the way World's manifolds do; its purpose is to show α as a contact
constraint. There is no gravity, and each body's inertia is isotropic (that of a ball of the body's
size), so that free flight keeps ω and the energy exactly and any change of energy is the contacts'.

Run: python examples/contact_physics.py [--seconds 3.5] [--output contact_physics.png]
"""

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from dcol.geom import Box, Capsule, Cone, Cylinder, Ellipsoid, Polygon, Shape, proximity_gradient_batch
from dcol.solvers import LCPStatus, solve_lcp

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
SIZES = np.array([0.45, 0.55, 0.45, 0.6, 0.4, 0.4] * 2)  # m, radius of the ball whose inertia each body takes


@dataclass(frozen=True)
class Run:
    """positions (T + 1, B, 3), quaternions (T + 1, B, 4), energy (T + 1,) J, worst_violation: the largest
    1 − α over every pair and step (≤ 0 when no pair ever overlapped), newton_iterations (T,)."""

    positions: np.ndarray
    quaternions: np.ndarray
    energy: np.ndarray
    worst_violation: float
    newton_iterations: np.ndarray


def initial_state(rng: np.random.Generator, arrival: float = 2.0) -> tuple[np.ndarray, ...]:
    """Bodies at random places 3–5 m from the origin, apart, at random attitudes and spins, flying straight
    at the origin so as to reach it at t = arrival."""
    pairs = np.triu_indices(len(SHAPES), 1)
    while True:
        directions = rng.normal(size=(len(SHAPES), 3))
        r = directions / np.linalg.norm(directions, axis=1, keepdims=True) * rng.uniform(3.0, 5.0, (len(SHAPES), 1))
        if np.min(np.linalg.norm(r[pairs[0]] - r[pairs[1]], axis=1)) > 1.5:  # farther apart than any two bodies reach
            break
    q = Rotation.random(len(SHAPES), random_state=rng).as_quat(scalar_first=True)
    return r, q, -r / arrival, rng.normal(scale=1.0, size=(len(SHAPES), 3))


def advance(r: np.ndarray, q: np.ndarray, v: np.ndarray, omega: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The poses after one step at velocities (v, ω): r + Δt v and exp(Δt [ω]×) Q."""
    turned = Rotation.from_rotvec(DT * omega) * Rotation.from_quat(q, scalar_first=True)
    return r + DT * v, turned.as_quat(scalar_first=True)


def simulate(seconds: float = 3.5, seed: int = 0, tolerance: float = 1e-9, max_newton: int = 30) -> Run:
    """Run the twelve bodies for ``seconds``; raises RuntimeError if a step's LCP fails or Newton's method
    does not reach α ≥ 1 − tolerance within max_newton iterations."""
    bodies = len(SHAPES)
    first, second = np.triu_indices(bodies, 1)
    inverse_mass = np.concatenate([np.full(3, 1.0 / MASS), np.full(3, 0.0)])
    inverse_inertia = 1.0 / (0.4 * MASS * SIZES**2)  # solid ball: I = 2/5 m ρ²
    inverse_m = np.stack([np.concatenate([inverse_mass[:3], np.full(3, w)]) for w in inverse_inertia]).ravel()

    def energy(v: np.ndarray, omega: np.ndarray) -> float:
        return float(0.5 * MASS * np.sum(v**2) + 0.5 * np.sum(0.4 * MASS * SIZES**2 * np.sum(omega**2, axis=1)))

    r, q, v, omega = initial_state(np.random.default_rng(seed))
    positions, quaternions, energies, iterations = [r], [q], [energy(v, omega)], []
    worst = -np.inf
    for _ in range(round(seconds / DT)):
        free = np.concatenate([v, omega], axis=1).ravel()  # no forces: the free velocities are the current ones
        velocities = free.copy()
        for newton in range(1, max_newton + 1):
            r_next, q_next = advance(r, q, velocities.reshape(-1, 6)[:, :3], velocities.reshape(-1, 6)[:, 3:])
            result = proximity_gradient_batch(
                [SHAPES[i] for i in first],
                r_next[first],
                q_next[first],
                [SHAPES[j] for j in second],
                r_next[second],
                q_next[second],
                parameterization="rigid",
            )
            alpha = np.asarray(result.alpha)
            J = np.zeros((len(first), 6 * bodies))
            for row, (i, j) in enumerate(zip(first, second, strict=True)):
                J[row, 6 * i : 6 * i + 6] = result.gradient[row, :6]
                J[row, 6 * j : 6 * j + 6] = result.gradient[row, 6:]
            # α(V) ≈ α + Δt J (V − V_k), V = V_free + M⁻¹ Jᵀ λ: the LCP w = A λ + b of this Newton step.
            A = DT * (J * inverse_m) @ J.T
            b = alpha - 1.0 + DT * J @ (free - velocities)
            lcp = solve_lcp(A, b)
            if lcp.status != LCPStatus.SOLVED:
                raise RuntimeError(f"the contact LCP failed: {lcp.status.name}")
            updated = free + inverse_m * (J.T @ lcp.f)
            settled = np.max(np.abs(updated - velocities)) <= 1e-10 * max(1.0, np.max(np.abs(velocities)))
            velocities = updated
            if settled and alpha.min() >= 1.0 - tolerance:
                iterations.append(newton)
                break
        else:
            raise RuntimeError(f"Newton's method did not converge in {max_newton} iterations (min α {alpha.min()})")
        worst = max(worst, 1.0 - alpha.min())
        v, omega = velocities.reshape(-1, 6)[:, :3], velocities.reshape(-1, 6)[:, 3:]
        r, q = r_next, q_next
        positions.append(r)
        quaternions.append(q)
        energies.append(energy(v, omega))
    return Run(np.array(positions), np.array(quaternions), np.array(energies), float(worst), np.array(iterations))


def draw(run: Run, output: Path) -> None:
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
    print(f"largest violation of α ≥ 1 over the run: {max(run.worst_violation, 0.0):.1e}")
    print(f"kinetic energy: {run.energy[0]:.3f} J at the start, {run.energy[-1]:.3f} J at the end")
    draw(run, args.output)
    print(f"picture: {args.output}")


if __name__ == "__main__":
    main(sys.argv[1:])
