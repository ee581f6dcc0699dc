"""The simulation half of ``dcol demo``: a ball thrown at two boxes resting on the ground.

It simulates the scene with contact, friction and restitution, prints contact counts and energy as it
goes, backpropagates through the whole rollout to get the gradient of the far box's final position
with respect to the ball's initial velocity, plots positions, energy and contacts over time, and writes
the rollout as an animation in a self-contained HTML page (dcol.viz) beside the plot.
"""

import os
from pathlib import Path
from typing import Any

import numpy as np

from dcol.dynamics import Model, ModelBuilder, Rollout, World, crba
from dcol.geom import Box, Sphere
from dcol.solvers import LCPSolution
from dcol.typing import FloatArray, IntArray

__all__ = ["demo_model", "run_simulation_demo"]

HALF: float = 0.1  # box half extent (m)
BOX_MASS: float = 1.0
BALL_RADIUS: float = 0.08
BALL_MASS: float = 2.0
DT: float = 2e-3
STEPS: int = 250
_BALL_SPEED = 3.0  # m/s towards the boxes
_SLOW_MOTION = 4.0  # the animation plays the half-second impact over two seconds


def demo_model() -> tuple[Model, FloatArray, FloatArray]:
    """Two 0.2 m boxes side by side on the ground and a ball, each a free body with its centre of
    mass at its origin. Returns (Model, q0 (21,), v0 (18,))."""
    builder = ModelBuilder()
    box_inertia = BOX_MASS * (2 * HALF) ** 2 / 6 * np.eye(3)
    placements = {"near": [0.0, 0.0, HALF], "far": [0.25, 0.05, HALF]}
    for name in placements:
        builder.add_body(name, parent=None, joint=f"{name}_free", kind="floating", mass=BOX_MASS, inertia=box_inertia)
        builder.add_shape(name, Box([HALF, HALF, HALF]))
    builder.add_body(
        "ball",
        parent=None,
        joint="ball_free",
        kind="floating",
        mass=BALL_MASS,
        inertia=0.4 * BALL_MASS * BALL_RADIUS**2 * np.eye(3),
    )
    builder.add_shape("ball", Sphere(BALL_RADIUS))
    model = builder.build()
    identity = [1.0, 0.0, 0.0, 0.0]
    q0 = np.concatenate([np.r_[p, identity] for p in placements.values()] + [np.r_[-0.6, 0.02, 0.15, identity]])
    v0 = np.zeros(model.nv)
    v0[12] = _BALL_SPEED  # the ball's linear velocity, body frame = world frame at identity
    return model, q0, v0


def _energy(model: Model, q: FloatArray, v: FloatArray) -> float:
    """Kinetic ½ vᵀMv plus potential Σ m g z (centres of mass at the body origins)."""
    heights = q[2::7]
    return 0.5 * v @ crba(model, q) @ v - model.masses @ (model.gravity[2] * heights)


def run_simulation_demo(output_path: str | os.PathLike[str] = "dcol-demo-simulation.png") -> dict[str, Any]:
    """Simulate the demo scene, print contacts and energy, the gradient, plot, and animate.

    Returns
    -------
    dict with ``q`` (STEPS + 1, nq), ``v`` (STEPS + 1, nv), ``contacts`` (STEPS,) contact counts,
    ``energy`` (STEPS + 1,), ``gradient`` (3, 3) ∂(far box final position)/∂(ball initial linear
    velocity), ``output`` (pathlib.Path) and ``animation``, the HTML page's pathlib.Path (the plot's
    name with .html).

    Raises
    ------
    ImportError if matplotlib or viser is missing, after the tables are printed.
    """
    from .demo import _require_viz_extra  # one shared hint for the viz extra

    output = Path(output_path)
    model, q0, v0 = demo_model()
    world = World(model, dt=DT, friction=0.6, restitution=0.3)
    rollout = world.rollout(q0, v0, np.zeros((STEPS, model.nv)), derivatives=True)
    contacts = np.array([len(step.contacts) for step in rollout.steps])
    energy = np.array([_energy(model, q, v) for q, v in zip(rollout.q, rollout.v)])
    print(f"{'time (s)':>8s} {'contacts':>8s} {'energy (J)':>10s} {'near box x':>10s} {'far box x':>9s} {'ball x':>7s}")
    for t in range(0, STEPS + 1, STEPS // 10):
        count = contacts[min(t, STEPS - 1)]
        x = rollout.q[t, 0::7]
        print(f"{t * DT:8.3f} {count:8d} {energy[t]:10.4f} {x[0]:10.4f} {x[1]:9.4f} {x[2]:7.3f}")
    hits = np.mean([isinstance(step.lcp, LCPSolution) and step.lcp.warm_start_hit for step in rollout.steps])
    print(
        f"{STEPS} steps of {DT * 1e3:g} ms; in {100 * hits:.0f}% of them the contact solver started from the "
        "previous step's set of pushing contacts and found it still right (a warm start: no search)"
    )

    # ℓ = a component of the far box's final position; ∂ℓ/∂v0 by backpropagation through every step.
    gradient = np.zeros((3, 3))
    for axis in range(3):
        grad_q = np.zeros((STEPS + 1, model.nv))
        grad_q[-1, 6 + axis] = 1.0  # the far box's translation tangent (body axes; it barely turns)
        gradient[axis] = rollout.vjp(grad_q=grad_q).v[12:15]
    print("d(far box final position)/d(ball initial velocity), rows x y z, columns vx vy vz:")
    for name, row in zip("xyz", gradient):
        print(f"  {name}: " + " ".join(f"{value:9.4f}" for value in row))
    _require_viz_extra()
    from .viz import Viewer  # needs viser

    _plot(rollout, energy, contacts, output)
    print(f"plot written to {output}")
    with Viewer() as viewer:
        viewer.animate(rollout, world, name="demo", slow_motion=_SLOW_MOTION)
        animation = viewer.save_html(output.with_suffix(".html"))
    print(f"animation written to {animation}")
    return {
        "q": rollout.q,
        "v": rollout.v,
        "contacts": contacts,
        "energy": energy,
        "gradient": gradient,
        "output": output,
        "animation": animation,
    }


def _plot(rollout: Rollout, energy: FloatArray, contacts: IntArray, output: Path) -> None:
    from matplotlib.figure import Figure

    time = np.arange(len(energy)) * DT
    fig = Figure(figsize=(9, 7))
    positions, power, count = fig.subplots(3, 1, sharex=True)
    for index, name in enumerate(("near box", "far box", "ball")):
        positions.plot(time, rollout.q[:, 7 * index], label=name)
    positions.set(ylabel="x (m)", title="dcol demo: a ball thrown at two boxes")
    positions.legend(fontsize=8)
    power.plot(time, energy, color="black")
    power.set(ylabel="energy (J)")
    count.step(time[1:], contacts, color="crimson")
    count.set(ylabel="contacts", xlabel="time (s)")
    fig.tight_layout()
    fig.savefig(output, dpi=110)
