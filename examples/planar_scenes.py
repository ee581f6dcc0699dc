"""Three scenes of the planar engine: a chain of four hinged links swinging from the horizontal into
a wall, a pyramid of six boxes resting on the ground, and a billiards break (ten touching balls hit
by a cue ball, seen from above).

The script prints, for each scene, the largest joint error and the deepest interpenetration over the
run, how many steps the chain touched the wall, how far the stack's boxes moved, and for the break
the total momentum before and after (the contacts' impulses are internal, so it is kept). With
--plot FILE it draws snapshots of the scenes (matplotlib).

Run: python examples/planar_scenes.py [--steps 300] [--plot planar_scenes.png]
"""

import argparse

import numpy as np

from dcol.dynamics.planar import Body, Circle, FixedJoint, Hinge, PlanarWorld, Polygon, rectangle

LINK_LENGTH, LINKS = 0.5, 4


def chain_against_a_wall() -> tuple[PlanarWorld, np.ndarray]:
    """A wall (body 0, welded to the world) left of a chain hung from the world point (0, 2)."""
    wall = Body(rectangle(0.2, 3.0), restitution=0.3, friction=0.3)
    links = [Body(rectangle(LINK_LENGTH, 0.08), mass=0.5, restitution=0.3, friction=0.3) for _ in range(LINKS)]
    half = LINK_LENGTH / 2
    joints = [FixedJoint(0, None, (-0.55, 1.5)), Hinge(1, (-half, 0.0), None, (0.0, 2.0))]
    joints += [Hinge(i + 1, (-half, 0.0), i, (half, 0.0)) for i in range(1, LINKS)]
    positions = [[0.0, -0.55, 1.5]] + [[0.0, half + i * LINK_LENGTH, 2.0] for i in range(LINKS)]
    return PlanarWorld((wall, *links), tuple(joints), dt=0.005), np.array(positions)


def pyramid() -> tuple[PlanarWorld, np.ndarray]:
    """Six 0.4 m boxes stacked three, two and one on a ground welded to the world (body 0), each
    row resting 0.1 mm above the one below and half a box to the side."""
    side, gap = 0.4, 1e-4
    ground = Body(rectangle(4.0, 1.0), friction=0.6)
    centres = [
        ((column - (2 - row) / 2) * (side + 0.02), side / 2 + gap + row * (side + gap))
        for row in range(3)
        for column in range(3 - row)
    ]
    boxes = tuple(Body(rectangle(side, side), mass=1.0, friction=0.6) for _ in centres)
    positions = np.array([[0.0, 0.0, -0.5]] + [[0.0, x, y] for x, y in centres])
    return PlanarWorld((ground, *boxes), (FixedJoint(0, None, (0.0, -0.5)),), dt=0.01), positions


def billiards_break() -> tuple[PlanarWorld, np.ndarray, np.ndarray]:
    """Ten touching balls racked in a triangle and a cue ball rolling at them; no gravity."""
    radius = 0.0285
    rack = [(row * radius * np.sqrt(3), (2 * k - row) * radius) for row in range(4) for k in range(row + 1)]
    centres = [(-0.6, 0.0)] + [(0.3 + x, y) for x, y in rack]
    balls = tuple(Body(Circle(radius), mass=0.17, restitution=0.9) for _ in centres)
    positions = np.array([[0.0, x, y] for x, y in centres])
    velocities = np.zeros_like(positions)
    velocities[0, 1] = 4.0
    return PlanarWorld(balls, gravity=(0.0, 0.0), dt=0.002, contact_margin=1e-4), positions, velocities


def run(world: PlanarWorld, positions: np.ndarray, velocities: np.ndarray, steps: int) -> dict:
    """The trajectory of positions (steps + 1, n, 3), the final velocities, the number of steps
    solved with contacts, and the largest joint error and the deepest interpenetration over the run."""
    trajectory, joint_error, penetration, touching = [positions], 0.0, 0.0, 0
    for _ in range(steps):
        step = world.step(positions, velocities)
        positions, velocities = step.positions, step.velocities
        trajectory.append(positions)
        touching += bool(step.contacts)
        joint_error = max(joint_error, float(np.abs(world.equality_error(positions)).max(initial=0.0)))
        penetration = max(penetration, max((-c.gap for c in world.contacts(positions)), default=0.0))
    return dict(
        trajectory=np.array(trajectory),
        velocities=velocities,
        touching=touching,
        joint_error=joint_error,
        penetration=penetration,
    )


def outline(body: Body, pose: np.ndarray) -> np.ndarray:
    """The body's outline (k, 2) in the world at pose (angle, x, y)."""
    shape = body.shape
    if isinstance(shape, Polygon):
        local = np.vstack([shape.vertices, shape.vertices[:1]])
    else:
        angles = np.linspace(0.0, 2 * np.pi, 33)
        local = shape.radius * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    c, s = np.cos(pose[0]), np.sin(pose[0])
    return pose[1:] + local @ np.array([[c, s], [-s, c]])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=300, help="steps of each scene")
    parser.add_argument("--plot", default=None, help="write the figure to this file")
    arguments = parser.parse_args()

    chain, chain_start = chain_against_a_wall()
    swing = run(chain, chain_start, np.zeros_like(chain_start), arguments.steps)
    print(
        f"chain: {swing['touching']} steps touching the wall, largest joint error {swing['joint_error']:.2e} m, "
        f"deepest penetration {swing['penetration']:.2e} m"
    )

    stack, stack_start = pyramid()
    rest = run(stack, stack_start, np.zeros_like(stack_start), arguments.steps)
    moved = np.abs(rest["trajectory"][-1] - stack_start).max()
    print(f"stack: boxes moved {moved:.2e} at most, deepest penetration {rest['penetration']:.2e} m")

    table, balls, cue = billiards_break()
    masses = np.array([body.mass for body in table.bodies])
    shot = run(table, balls, cue, arguments.steps)
    before, after = masses @ cue[:, 1:], masses @ shot["velocities"][:, 1:]
    print(f"break: momentum before {before}, after {after}, deepest penetration {shot['penetration']:.2e} m")

    if arguments.plot:
        import matplotlib.pyplot as plt

        figure, (left, middle, right) = plt.subplots(1, 3, figsize=(14, 4.5))
        for axes, world, result in ((left, chain, swing), (middle, stack, rest), (right, table, shot)):
            snapshots = np.linspace(0, len(result["trajectory"]) - 1, 5).astype(int)
            for shade, index in zip(np.linspace(0.25, 1.0, len(snapshots)), snapshots):
                for body, pose in zip(world.bodies, result["trajectory"][index]):
                    axes.plot(*outline(body, pose).T, color=plt.cm.viridis(shade), linewidth=1)
            axes.set_aspect("equal")
        left.set_title("hinged chain swinging into a wall")
        middle.set_title("a pyramid of boxes at rest")
        right.set_title("billiards break (seen from above)")
        figure.tight_layout()
        figure.savefig(arguments.plot)


if __name__ == "__main__":
    main()
