"""Planar engine (dcol.dynamics.planar): step and step-gradient time against the number of bodies,
beside pymunk (a 2-D engine users know, not differentiable) on the same scenes in the same run, and
batch throughput in scenes per second.

The scenes are stacks of 0.4 m boxes (1 kg, μ = 0.5, no restitution), five to a column, the columns
1 m apart on a static ground, started resting 0.1 mm apart and settled for `--settle` steps of
10 ms by each engine before the timed steps, so the timed steps have their contacts (two per box).
  * dcol step: PlanarWorld.step from the settled state (dynamics LCP by the interior point, Euler,
    post-stabilization); step+grad: the step and PlanarWorld.step_vjp of a cotangent on the next
    positions and velocities (∂ of state, forces, masses, inertias, restitution, friction, anchors;
    native, on the forward solve's prepared KKT system);
  * pymunk: Space.step(dt), its defaults (10 solver iterations) with the collision slop set to dcol's
    contact margin and each shape's friction √0.5 (pymunk multiplies the two shapes' coefficients,
    dcol takes their mean);
  * batch: PlanarWorld.step_batch (and step_batch_vjp) of B copies of the `--batch-bodies` scene,
    each with its own small random velocities, in scenes per second, on one thread and on
    `--threads` (step_batch and step_batch_vjp run each scene's native step and backward pass
    without the GIL, the scenes split over the threads).

Run: python benchmarks/bench_planar.py [--bodies 1 2 5 10 20 50 100] [--batches 1 64 1024]
         [--batch-bodies 5] [--threads 1 2] [--settle 50] [--repeats 5] [--markdown] [--quick]
"""

import argparse
import os

# One thread, as pymunk steps: OpenBLAS's threads cost more than they save on these small matrices.
# Set before numpy loads OpenBLAS.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import numpy as np
from report import Table, median_of, median_time, parse_arguments, print_report

from dcol.dynamics.planar import Body, FixedJoint, PlanarWorld, rectangle

DT, SIDE, GAP, MASS, FRICTION, COLUMN_HEIGHT, COLUMN_SPACING = 0.01, 0.4, 1e-4, 1.0, 0.5, 5, 1.0


def stack_layout(bodies):
    """The ground's width and each box's centre (bodies, 2) of the scene of `bodies` boxes."""
    columns = -(-bodies // COLUMN_HEIGHT)
    centres = []
    for index in range(bodies):
        column, level = divmod(index, COLUMN_HEIGHT)
        x = (column - (columns - 1) / 2) * COLUMN_SPACING
        centres.append([x, SIDE / 2 + GAP + level * (SIDE + GAP)])
    return columns * COLUMN_SPACING + 2.0, np.array(centres)


def dcol_scene(bodies):
    """The PlanarWorld (the ground first, welded to the world) and its start (positions, velocities)."""
    width, centres = stack_layout(bodies)
    ground = Body(rectangle(width, 1.0), friction=FRICTION)
    boxes = [Body(rectangle(SIDE, SIDE), mass=MASS, friction=FRICTION) for _ in range(bodies)]
    world = PlanarWorld((ground, *boxes), (FixedJoint(0, None, (0.0, -0.5)),), dt=DT)
    positions = np.vstack([[0.0, 0.0, -0.5], np.column_stack([np.zeros(bodies), centres])])
    return world, positions, np.zeros_like(positions)


def dcol_settled(bodies, settle):
    world, positions, velocities = dcol_scene(bodies)
    for _ in range(settle):
        step = world.step(positions, velocities)
        positions, velocities = step.positions, step.velocities
    return world, positions, velocities


def pymunk_settled(bodies, settle, margin):
    """The same scene as a pymunk Space, settled."""
    import pymunk

    width, centres = stack_layout(bodies)
    space = pymunk.Space()
    space.gravity = (0.0, -9.81)
    space.collision_slop = margin
    ground_body = pymunk.Body(body_type=pymunk.Body.STATIC)
    ground_body.position = (0.0, -0.5)
    ground = pymunk.Poly.create_box(ground_body, (width, 1.0))
    space.add(ground_body, ground)
    shapes = [ground]
    for x, y in centres:
        body = pymunk.Body(MASS, pymunk.moment_for_box(MASS, (SIDE, SIDE)))
        body.position = (float(x), float(y))
        box = pymunk.Poly.create_box(body, (SIDE, SIDE))
        space.add(body, box)
        shapes.append(box)
    for shape in shapes:
        shape.friction = np.sqrt(FRICTION)
        shape.elasticity = 0.0
    for _ in range(settle):
        space.step(DT)
    return space


def scaling_table(args, rng):
    table = Table(
        ["bodies", "contacts", "dcol step", "dcol step+grad", "pymunk step", "dcol/pymunk", "pymunk contacts"],
        caption=f"Box stacks: ms per step ({median_of(args.repeats)}), dt = 10 ms",
    )
    for bodies in args.bodies:
        world, positions, velocities = dcol_settled(bodies, args.settle)
        step = world.step(positions, velocities)
        grad_p, grad_v = rng.normal(size=positions.shape), rng.normal(size=positions.shape)

        def step_and_gradient():
            taken = world.step(positions, velocities)
            world.step_vjp(taken, positions, velocities, grad_v, grad_p)

        t_step = median_time(lambda: world.step(positions, velocities), args.repeats)
        t_grad = median_time(step_and_gradient, args.repeats)
        space = pymunk_settled(bodies, args.settle, world.contact_margin)
        t_pymunk = median_time(lambda: space.step(DT), max(args.repeats, 20))
        points = {}
        for body in space.bodies:
            # A pair of boxes is seen from both: key it by its shapes.
            body.each_arbiter(
                lambda arbiter: points.setdefault(
                    frozenset(map(id, arbiter.shapes)), len(arbiter.contact_point_set.points)
                )
            )
        table.add(
            bodies,
            len(step.contacts),
            f"{t_step * 1e3:.2f}",
            f"{t_grad * 1e3:.2f}",
            f"{t_pymunk * 1e3:.4f}",
            f"{t_step / t_pymunk:.0f}",
            sum(points.values()),
        )
    return table


def batch_table(args, rng):
    table = Table(
        ["scenes", "threads", "step: scenes/s", "step+grad: scenes/s"],
        caption=(
            f"Batches of the {args.batch_bodies}-box stack, PlanarWorld.step_batch (+ step_batch_vjp), "
            f"{median_of(args.repeats)}, one run from 1024 scenes on"
        ),
    )
    world, positions, velocities = dcol_settled(args.batch_bodies, args.settle)
    for scenes in args.batches:
        batch_positions = np.repeat(positions[None], scenes, axis=0)
        batch_velocities = velocities + 1e-3 * rng.normal(size=(scenes, *velocities.shape))
        batch_velocities[:, 0] = 0.0  # the ground stays welded
        grad = rng.normal(size=batch_positions.shape)
        repeats = 1 if scenes >= 1024 else args.repeats
        for threads in args.threads:

            def step_and_gradient():
                batch = world.step_batch(batch_positions, batch_velocities, threads=threads)
                world.step_batch_vjp(batch, batch_positions, batch_velocities, grad, grad, threads=threads)

            t_step = median_time(lambda: world.step_batch(batch_positions, batch_velocities, threads=threads), repeats)
            t_grad = median_time(step_and_gradient, repeats)
            table.add(scenes, threads, f"{scenes / t_step:.0f}", f"{scenes / t_grad:.0f}")
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", type=int, nargs="+", default=[1, 2, 5, 10, 20, 50, 100], help="boxes per scene")
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 64, 1024], help="scenes per batch")
    parser.add_argument("--batch-bodies", type=int, default=5, help="boxes in each scene of the batches")
    parser.add_argument(
        "--threads", type=int, nargs="+", default=sorted({1, os.cpu_count() or 1}), help="threads of the batches"
    )
    parser.add_argument("--settle", type=int, default=50, help="steps before the timed ones")
    parser.add_argument("--repeats", type=int, default=5)
    args = parse_arguments(
        parser, dict(bodies=[1, 2], batches=[1, 2], batch_bodies=2, settle=2, repeats=1, threads=[1, 2])
    )
    rng = np.random.default_rng(0)
    tables = [scaling_table(args, rng), batch_table(args, rng)]
    print_report("Planar engine (bench_planar.py)", tables, args, libraries=("pymunk",))


if __name__ == "__main__":
    main()
