"""Contact generation: time per shape pair for each contact rule, and whole scenes of N bodies, dcol
against coal (hpp-fcl's successor, the non-differentiable library a user would otherwise pick).

Per rule: M copies of one configuration, spaced far apart in one scene, so both libraries run their
native loop over M pairs: dcol's `Scene.contacts` (signed distance, witness features, contact
frames; with and without derivatives) and coal's DynamicAABBTree manager `collide` with contacts
enabled (points, normals, depths; no derivatives). Scenes: N random shapes (spheres, boxes, capsules,
cylinders, ellipsoids, polytopes) at a fixed density, all contacts at the given poses, both
libraries updating their broadphase from the poses each time; the growth rate is the time ratio per
tenfold N. Needs the `[oracles]` extra (coal).

Run: python benchmarks/bench_contacts.py [--pairs 2000] [--repeats 5] [--markdown] [--quick]
"""

import argparse
import os
import sys
import time

import coal
import numpy as np
from report import Table, fastest_of, parse_arguments, print_report

from dcol.geom import Box, Capsule, Cylinder, Ellipsoid, Polytope, Scene, Sphere

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tests.support.distance_oracle import coal_geometry, coal_transform

IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])
TILT = np.array([np.cos(0.3), np.sin(0.3), 0.0, 0.0])  # 0.6 rad about x

# (name, shape a, pose a, shape b, pose b): touching within 0.01 so both libraries report contacts.
RULES = [
    ("sphere-sphere (point-point)", Sphere(0.5), [0, 0, 0], IDENTITY, Sphere(0.4), [0.6, 0.5, 0.3], IDENTITY),
    (
        "sphere on box face (face-point)",
        Box([0.5, 0.5, 0.5]),
        [0, 0, 0],
        IDENTITY,
        Sphere(0.3),
        [0.1, 0.2, 0.79],
        IDENTITY,
    ),
    (
        "sphere on box edge (edge-point)",
        Box([0.5, 0.5, 0.5]),
        [0, 0, 0],
        IDENTITY,
        Sphere(0.3),
        [0.7, 0.1, 0.7],
        IDENTITY,
    ),
    (
        "capsules crossing (edge-edge)",
        Capsule(0.2, 1.0),
        [0, 0, 0],
        IDENTITY,
        Capsule(0.2, 1.0),
        [0, 0, 0.39],
        [np.cos(0.6), 0, 0, np.sin(0.6)],
    ),
    (
        "capsule on box face (2 face-point)",
        Box([0.5, 0.5, 0.5]),
        [0, 0, 0],
        IDENTITY,
        Capsule(0.1, 0.6),
        [0, 0, 0.59],
        IDENTITY,
    ),
    (
        "box on slab (4 face-point)",
        Box([1.0, 1.0, 0.2]),
        [0, 0, 0],
        IDENTITY,
        Box([0.3, 0.3, 0.3]),
        [0.1, 0, 0.49],
        IDENTITY,
    ),
    (
        "box edges crossed (edge-edge)",
        Box([0.5, 0.5, 0.5]),
        [0, 0, 0],
        [np.cos(np.pi / 8), np.sin(np.pi / 8), 0, 0],
        Box([0.5, 0.5, 0.5]),
        [0, 0, 1.35],
        [np.cos(np.pi / 8), 0, np.sin(np.pi / 8), 0],
    ),
    (
        "cylinder standing on box face (4 face-point)",
        Box([0.5, 0.5, 0.5]),
        [0, 0, 0],
        IDENTITY,
        Cylinder(0.2, 0.6),
        [0, 0, 0.79],
        [np.sqrt(0.5), 0, -np.sqrt(0.5), 0],
    ),
    (
        "cylinder lying on box face (2 face-point)",
        Box([0.5, 0.5, 0.5]),
        [0, 0, 0],
        IDENTITY,
        Cylinder(0.1, 0.6),
        [0, 0, 0.59],
        IDENTITY,
    ),
    ("cylinder-sphere (distance rule)", Cylinder(0.4, 1.0), [0, 0, 0], IDENTITY, Sphere(0.3), [0, 0, 0.69], IDENTITY),
]


def coal_objects(shapes, r, q):
    """coal CollisionObjects of the shapes at body poses (r, q) (one body per shape)."""
    objects = []
    for shape, position, orientation in zip(shapes, r, q):
        geometry, t, M = coal_geometry(shape)
        objects.append(
            (coal.CollisionObject(geometry, coal_transform(shape, position, orientation, t, M)), shape, t, M)
        )
    return objects


def coal_set_poses(manager, objects, r, q):
    """coal: set every object's pose from Python (what a user holding pose arrays does) and update."""
    for (obj, shape, t, M), position, orientation in zip(objects, r, q):
        obj.setTransform(coal_transform(shape, position, orientation, t, M))
    manager.update()


def coal_collide(manager):
    """coal: all contacts of the registered objects at their current poses; returns the contact count."""
    callback = coal.CollisionCallBackDefault()
    callback.data.request.num_max_contacts = 1_000_000
    callback.data.request.security_margin = 0.0
    manager.collide(callback)
    return callback.data.result.numContacts()


def best_time(function, repeats):
    function()  # warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        value = function()
        times.append(time.perf_counter() - start)
    return min(times), value


def coal_manager(objects):
    manager = coal.DynamicAABBTreeCollisionManager()
    for obj, *_ in objects:
        manager.registerObject(obj)
    manager.setup()
    return manager


def per_rule(pairs, repeats):
    table = Table(
        ["configuration", "contacts", "dcol", "dcol+deriv", "coal", "coal/dcol"],
        caption=(
            f"Per pair, {pairs} copies of each configuration in one scene, one thread, µs per pair, "
            f"{fastest_of(repeats)} (dcol: poses in, contacts out; coal: collide at poses already set; "
            "contacts: dcol's/coal's per pair)"
        ),
    )
    for name, a, p_a, q_a, b, p_b, q_b in RULES:
        scene = Scene()
        shapes, r, q = [], [], []
        for k in range(pairs):
            spot = np.array([10.0 * (k % 50), 10.0 * (k // 50), 0.0])
            for shape, position, orientation in ((a, p_a, q_a), (b, p_b, q_b)):
                scene.add_body(shape)
                shapes.append(shape)
                r.append(spot + position)
                q.append(orientation)
        r, q = np.array(r), np.array(q, dtype=float)
        dcol_time, found = best_time(lambda: scene.contacts(r, q, margin=0.01), repeats)
        deriv_time, _ = best_time(lambda: scene.contacts(r, q, margin=0.01, derivatives=True), repeats)
        objects = coal_objects(shapes, r, q)
        manager = coal_manager(objects)
        coal_time, coal_count = best_time(lambda: coal_collide(manager), repeats)
        scale = 1e6 / pairs
        table.add(
            name,
            f"{len(found) // pairs}/{coal_count // pairs}",
            f"{dcol_time * scale:.2f}",
            f"{deriv_time * scale:.2f}",
            f"{coal_time * scale:.2f}",
            f"{coal_time / dcol_time:.2f}",
        )
    return table


def random_polytope(rng):
    """Hull of 12 points at radius 0.3 and a small octahedron that keeps the origin inside."""
    points = rng.normal(size=(12, 3))
    points *= 0.3 / np.linalg.norm(points, axis=1, keepdims=True)
    return Polytope.from_vertices(np.vstack([points, 0.1 * np.eye(3), -0.1 * np.eye(3)]))


def random_scene(count, rng):
    makers = [
        lambda: Sphere(rng.uniform(0.2, 0.5)),
        lambda: Box(rng.uniform(0.15, 0.4, size=3)),
        lambda: Capsule(rng.uniform(0.1, 0.3), rng.uniform(0.3, 0.8)),
        lambda: Cylinder(rng.uniform(0.15, 0.35), rng.uniform(0.3, 0.8)),
        lambda: Ellipsoid(np.diag(1.0 / rng.uniform(0.2, 0.5, size=3) ** 2)),
        lambda: random_polytope(rng),
    ]
    shapes = [makers[i % len(makers)]() for i in range(count)]
    side = 1.6 * count ** (1 / 3)  # about one neighbour within reach per shape
    r = rng.uniform(0, side, size=(count, 3))
    q = rng.normal(size=(count, 4))
    return shapes, r, q / np.linalg.norm(q, axis=1, keepdims=True)


def scenes(repeats, counts):
    table = Table(
        ["N", "pairs", "dcol", "growth", "coal", "growth", "coal/dcol", "coal collide"],
        caption=(
            "Whole scenes: all contacts at new poses (setting the poses, broadphase, narrow phase), one thread, "
            f"ms, {fastest_of(repeats)} (coal's poses are set by a Python loop over the objects; "
            "coal collide alone in its own column; growth: time ratio per tenfold N)"
        ),
    )
    previous = None
    rng = np.random.default_rng(0)
    for count in counts:
        shapes, r, q = random_scene(count, rng)
        scene = Scene()
        for shape in shapes:
            scene.add_body(shape)
        dcol_time, found = best_time(lambda: scene.contacts(r, q), repeats)
        objects = coal_objects(shapes, r, q)
        manager = coal_manager(objects)
        coal_time, _ = best_time(lambda: (coal_set_poses(manager, objects, r, q), coal_collide(manager)), repeats)
        collide_time, _ = best_time(lambda: coal_collide(manager), repeats)
        pairs = len(set(zip(found.shape_a.tolist(), found.shape_b.tolist())))
        growth = ("", "") if previous is None else (f"{dcol_time / previous[0]:.1f}", f"{coal_time / previous[1]:.1f}")
        table.add(
            count,
            pairs,
            f"{dcol_time * 1e3:.3f}",
            growth[0],
            f"{coal_time * 1e3:.3f}",
            growth[1],
            f"{coal_time / dcol_time:.2f}",
            f"{collide_time * 1e3:.3f}",
        )
        previous = (dcol_time, coal_time)
    return table


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000, help="copies of each configuration in its scene")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each measurement; the fastest counts")
    parser.add_argument(
        "--scene-sizes", type=int, nargs="+", default=[10, 100, 1000], help="shape counts N of the whole scenes"
    )
    args = parse_arguments(parser, dict(pairs=20, repeats=1, scene_sizes=[10, 100]))
    tables = [per_rule(args.pairs, args.repeats), scenes(args.repeats, args.scene_sizes)]
    print_report("Contacts (bench_contacts.py)", tables, args, libraries=("coal",))


if __name__ == "__main__":
    main()
