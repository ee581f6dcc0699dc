"""Swing the cart-pole, or the double-pendulum cart-pole, up by DDP, by multiple shooting and by the
cross-entropy method, as Nimble's Fig. 7 compares them.

The poles start hanging (angle π) and should end upright (angle 0) at rest over the centre of the
rail after `--seconds`; only the cart is driven. DDP (iterative LQR on the step Jacobians of
World.step_batch), multiple shooting (`--intervals` intervals, constrained Gauss–Newton in scipy's
trust-constr) and CEM (sampled force sequences, one World.rollout_batch per iteration) minimize the
same quadratic cost from the same zero guess; the local optimum each finds is its own. The script
prints, per method, the iterations, wall time and final cost, the wall time each took to reach
`--target` times DDP's final cost (multiple shooting: with its defects below 1e-6), where the poles
end and the largest force used; with --plot FILE it draws the cost against iterations and wall time
(multiple shooting's: of its trajectories with defects) and the poles' angles (matplotlib). The
single cart-pole is datasets/robots/cartpole.urdf; the double one (`--poles 2`), built here,
carries two 0.5 m, 0.1 kg poles on a 1 kg cart.

Run: python examples/cartpole_swing_up.py [--poles 2] [--seconds 2] [--intervals 10] [--plot swing_up.png]
"""

import argparse

import numpy as np

from dcol.dynamics import ModelBuilder, World, load_dataset_robot
from dcol.dynamics.optimization import QuadraticCost, cem, ddp, multiple_shooting

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--poles", type=int, choices=(1, 2), default=1)
parser.add_argument("--seconds", type=float, default=2.0, help="horizon")
parser.add_argument("--intervals", type=int, default=10, help="multiple shooting's intervals")
parser.add_argument("--cem-iterations", type=int, default=60)
parser.add_argument("--target", type=float, default=2.0, help="the cost to reach, as a multiple of DDP's final cost")
parser.add_argument("--plot", default=None, help="write the figure to this file")
arguments = parser.parse_args()


def double_cartpole():
    """A cart on a rail along x and two poles hinged about y, upright at angle 0 (uniform rods)."""
    mass, length = 0.1, 0.5
    rod = dict(mass=mass, com=(0, 0, length / 2), inertia=np.diag([mass * length**2 / 12] * 2 + [1e-6]))
    builder = ModelBuilder(name="double_cartpole")
    builder.add_body(
        "cart", parent=None, joint="slider", kind="prismatic", axis=(1, 0, 0), mass=1.0, inertia=0.01 * np.eye(3)
    )
    builder.add_body("pole1", parent="cart", joint="hinge1", kind="revolute", axis=(0, 1, 0), damping=0.01, **rod)
    upper_end = ((0, 0, length), (1, 0, 0, 0))
    builder.add_body(
        "pole2",
        parent="pole1",
        joint="hinge2",
        kind="revolute",
        axis=(0, 1, 0),
        placement=upper_end,
        damping=0.01,
        **rod,
    )
    return builder.build()


if arguments.poles == 1:
    model = load_dataset_robot("cartpole")
    # Weights on [cart x, pole angle, their speeds]; the final state weighs most.
    weights = dict(state_weights=[0.1, 1.0, 0.01, 0.01], final_weights=[10.0, 100.0, 10.0, 10.0])
    control_weight, spread = 1e-3, 20.0
else:
    model = double_cartpole()
    # Only the final state: a running cost on the angles holds the poles down at the start.
    weights = dict(state_weights=np.zeros(6), final_weights=[10.0, 1000.0, 1000.0, 100.0, 100.0, 100.0])
    control_weight, spread = 1e-4, 30.0
world = World(model, dt=0.02, ground=False)
steps = round(arguments.seconds / world.dt)
nv = model.nv
start_q, start_v = np.r_[0.0, np.pi, np.zeros(nv - 2)], np.zeros(nv)
cart_force = np.eye(nv)[:, :1]  # τ = S u: the hinges are passive
bound = 100.0  # N, CEM's samples' range: wider than the forces DDP ends with
cost = QuadraticCost(np.zeros(nv), np.zeros(nv), control_weights=[control_weight], **weights)
guess = np.zeros((steps, 1))

results = {
    "DDP": ddp(world, start_q, start_v, guess, cost, actuation=cart_force),
    "multiple shooting": multiple_shooting(
        world, start_q, start_v, guess, cost, intervals=arguments.intervals, actuation=cart_force, max_iterations=500
    ),
    "CEM": cem(
        world,
        start_q,
        start_v,
        guess,
        cost,
        actuation=cart_force,
        spread=spread,
        lower=-bound,
        upper=bound,
        hold=5,
        samples=64,
        elites=8,
        max_iterations=arguments.cem_iterations,
    ),
}
target = arguments.target * results["DDP"].cost
print(f"{arguments.poles}-pole cart-pole swing-up, {steps} steps of {world.dt} s; target cost {target:.2f}")
print("method             iterations  wall time (s)  final cost  time to target (s)  largest force (N)  final angles")
for name, result in results.items():
    # Multiple shooting's iterates are trajectories with defects: only a feasible one reaches the target.
    reached = [p.elapsed for p in result.history if p.cost <= target and p.constraint_violation < 1e-6]
    to_target = f"{reached[0]:.2f}" if reached else "not reached"
    angles = np.angle(np.exp(1j * result.q[-1, 1:]))  # wrapped to (−π, π]
    print(
        f"{name:17s}  {result.iterations:10d}  {result.history[-1].elapsed:13.2f}  {result.cost:10.2f}  "
        f"{to_target:>18s}  {np.abs(result.controls).max():17.1f}  {np.array2string(angles, precision=4)}"
    )

if arguments.plot:
    from optimization_plots import cost_figure, save

    figure, poles = cost_figure(results)
    for name, result in results.items():
        for pole in range(1, nv):
            poles.plot(np.arange(steps + 1) * world.dt, result.q[:, pole], label=f"{name}, pole {pole}")
    poles.set(xlabel="time (s)", ylabel="pole angle (rad, 0 upright)")
    poles.legend()
    save(figure, arguments.plot)
