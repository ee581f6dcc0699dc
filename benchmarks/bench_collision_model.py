"""A robot's collision distances as functions of q: dcol's CollisionModel (every pair's α, signed distance,
witness points and normal, with their q-Jacobians) against Pinocchio + coal's `computeDistances` (values
only), per robot (UR5, Panda, Talos from example-robot-data, each with its SRDF's disabled pairs left out).

Both check the same pairs of the same geometry: coal is given dcol's convex hulls of the collision meshes
(coal.Convex) at the same places in the same joints, with a few static obstacles beside the robot, and
computes every pair, and so does dcol in the main columns (margin = inf: its broadphase keeps them all); the
column "dcol, margin" times dcol's full call with the broadphase margin a user would set (NEAR_MARGIN, printed
in the caption), where the pairs farther apart cost nothing, beside the number of pairs it computes. Times
at one configuration (one call each) and per configuration in a batch of 100 (dcol: one native call;
Pinocchio: its Python loop over the configurations, as a user writes it), one thread. Needs the
`[oracles]` extra (Pinocchio, coal, example-robot-data).

Run: python benchmarks/bench_collision_model.py [--repeats 5] [--batch 100] [--markdown] [--quick]
"""

import argparse
import os
import sys

import numpy as np
import pinocchio as pin
from report import Table, median_of, median_time, parse_arguments, print_report

import dcol.dynamics as dyn
from dcol.geom import Box, Obstacle, Sphere
from dcol.geom.rotations import rotation_matrix

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tests.support.distance_oracle import coal_geometry
from tests.support.pinocchio_oracle import PinocchioOracle

# Robot → its SRDF under example-robot-data's robots folder.
ROBOTS = {
    "ur5": "ur_description/srdf/ur5.srdf",
    "panda": "panda_description/srdf/panda.srdf",
    "talos": "talos_data/srdf/talos.srdf",
}
OBSTACLES = [
    Obstacle(Box([0.3, 0.05, 0.4]), [0.6, 0.1, 0.3], [1.0, 0.0, 0.0, 0.0]),
    Obstacle(Sphere(0.15), [-0.3, 0.5, 0.6], [1.0, 0.0, 0.0, 0.0]),
]
NEAR_MARGIN = 0.05  # m: CollisionModel's default


def pinocchio_scene(name, model, collision):
    """(PinocchioOracle, GeometryModel, GeometryData): dcol's collision objects as coal geometry in the
    Pinocchio model of the same URDF, with dcol's pairs."""
    share = dyn.example_robot_data_dir()
    relative, floating = dyn.EXAMPLE_ROBOTS[name]
    reference = PinocchioOracle(os.path.join(share, "example-robot-data", "robots", relative), floating, model)
    geometry = pin.GeometryModel()
    robot_objects = len(collision.shapes) - len(collision.obstacles)
    for k, (object_name, shape) in enumerate(zip(collision.object_names, collision.shapes)):
        coal_shape, t, M = coal_geometry(shape)
        if k < robot_objects:  # in its body's joint frame (the world's for a fixed base's own links)
            body = model.collision_shapes[k].body
            joint = int(reference.joint_ids[body]) if body >= 0 else 0
            R, p = shape.offset_rotation, shape.offset_position
        else:
            obstacle = collision.obstacles[k - robot_objects]
            joint = 0
            R = rotation_matrix(obstacle.q) @ shape.offset_rotation
            p = obstacle.r + rotation_matrix(obstacle.q) @ shape.offset_position
        placement = pin.SE3(R @ M, p + R @ t)
        geometry.addGeometryObject(pin.GeometryObject(object_name, joint, placement, coal_shape))
    for a, b in collision.pairs:
        geometry.addCollisionPair(pin.CollisionPair(int(a), int(b)))
    return reference, geometry, geometry.createData()


def robot_rows(name, batch, repeats, rng):
    model = dyn.load_example_robot(name)
    srdf = os.path.join(dyn.example_robot_data_dir(), "example-robot-data", "robots", ROBOTS[name])
    exclude = dyn.disabled_collision_pairs(srdf)
    collision = dyn.CollisionModel(model, OBSTACLES, exclude=exclude, margin=np.inf)
    near = dyn.CollisionModel(model, OBSTACLES, exclude=exclude, margin=NEAR_MARGIN)
    reference, geometry, geometry_data = pinocchio_scene(name, model, collision)
    Q = np.array([dyn.random_configuration(model, rng, position_range=0.2) for _ in range(batch)])
    Q_pin = [reference.q_to_pin(q) for q in Q]

    def pinocchio_one(q_pin):
        pin.computeDistances(reference.pmodel, reference.pdata, geometry, geometry_data, q_pin)

    def pinocchio_batch():
        for q_pin in Q_pin:
            pinocchio_one(q_pin)

    single = {
        "dcol": median_time(lambda: collision.distances(Q[0]), repeats),
        "dcol values": median_time(lambda: collision.distances(Q[0], jacobians=False), repeats),
        "dcol alpha": median_time(lambda: collision.distances(Q[0], signed_distance=False), repeats),
        "dcol margin": median_time(lambda: near.distances(Q[0]), repeats),
        "coal": median_time(lambda: pinocchio_one(Q_pin[0]), repeats),
    }
    batched = {
        "dcol": median_time(lambda: collision.distances(Q), repeats) / batch,
        "dcol values": median_time(lambda: collision.distances(Q, jacobians=False), repeats) / batch,
        "dcol alpha": median_time(lambda: collision.distances(Q, signed_distance=False), repeats) / batch,
        "dcol margin": median_time(lambda: near.distances(Q), repeats) / batch,
        "coal": median_time(pinocchio_batch, repeats) / batch,
    }
    near_pairs = {"single": len(near.distances(Q[0], jacobians=False).pair)}
    near_pairs["batched"] = len(near.distances(Q, jacobians=False).pair) / batch
    # The two agree on every separated pair (tests/dynamics/test_collision_model.py checks the values).
    result = collision.distances(Q[0], jacobians=False)
    pinocchio_one(Q_pin[0])
    coal_distances = np.array([r.min_distance for r in geometry_data.distanceResults])[result.pair]
    apart = (coal_distances > 1e-4) & (result.distance > 1e-4)
    disagreement = float(np.max(np.abs(result.distance[apart] - coal_distances[apart]), initial=0.0))
    rows = []
    for what, times, computed in (
        ("one configuration", single, near_pairs["single"]),
        (f"per configuration of {batch}", batched, near_pairs["batched"]),
    ):
        rows.append(
            (
                name,
                model.nv,
                len(collision.pairs),
                what,
                f"{times['dcol'] * 1e6:.0f}",
                f"{times['dcol values'] * 1e6:.0f}",
                f"{times['dcol alpha'] * 1e6:.0f}",
                f"{times['dcol margin'] * 1e6:.0f} ({computed:.0f} pairs)",
                f"{times['coal'] * 1e6:.0f}",
                f"{times['dcol'] / times['coal']:.2f}",
                f"{times['dcol alpha'] / times['coal']:.2f}",
                f"{disagreement:.1e}",
            )
        )
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs of each measurement; the median counts")
    parser.add_argument("--batch", type=int, default=100, help="configurations of the batch")
    parser.add_argument("--robots", nargs="+", default=list(ROBOTS), choices=list(ROBOTS), help="robots to run")
    args = parse_arguments(parser, dict(repeats=1, batch=4, robots=["ur5"]))
    table = Table(
        [
            "robot",
            "nv",
            "pairs",
            "time of",
            "dcol",
            "dcol values",
            "dcol α",
            "dcol, margin",
            "coal",
            "dcol/coal",
            "dcol α/coal",
            "max |Δd| (m)",
        ],
        caption=(
            f"All pairs, µs, {median_of(args.repeats)}, one thread. dcol: α, signed distance, witness points "
            "and normal with their q-Jacobians (nv columns) of every pair; dcol values: the same without "
            "Jacobians; dcol α: DCOL's α and its q-Jacobian alone (signed_distance=False); dcol, margin: the full "
            f"call with the broadphase margin {NEAR_MARGIN} m (the others: margin = inf, every pair), and the "
            "pairs it computed (per configuration); coal: Pinocchio's "
            "computeDistances (kinematics, placements, distances) on the same convex geometry and pairs, values "
            "only. max |Δd|: largest difference of the two libraries' "
            "distances over the separated pairs at the first configuration"
        ),
    )
    rng = np.random.default_rng(0)
    for name in args.robots:
        for row in robot_rows(name, args.batch, args.repeats, rng):
            table.add(*row)
    print_report("Collision distances of a model (bench_collision_model.py)", [table], args, libraries=("pin", "coal"))


if __name__ == "__main__":
    main()
