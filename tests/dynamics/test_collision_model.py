"""dcol.dynamics.CollisionModel: a model's pair distances as functions of q.

Values against coal on example-robot-data robots (UR5, Panda, the floating-base Solo12 and Talos), with the shapes'
world poses from Pinocchio's own URDF parse and kinematics (only the convex hulls of the meshes, the input
geometry, are shared); q-Jacobians against central differences along q's tangent; a batch against its
configurations one at a time; the broadphase margin; bad input.
"""

import functools
import os

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import dcol.dynamics as dyn
from dcol import _native
from dcol.geom import Box, Capsule, Cylinder, Obstacle, Polytope, Sphere, proximity, signed_distance
from dcol.geom.rotations import rotation_matrix
from dcol.solvers import Status
from tests.support.distance_oracle import coal_distance
from tests.support.optional import example_robots_dir, oracle
from tests.support.pinocchio_oracle import PinocchioOracle

pin = oracle("pinocchio")
oracle("coal")
SHARE = example_robots_dir()
ROBOTS_DIR = os.path.join(SHARE, "example-robot-data", "robots")

# The robots compared, each with the SRDF whose disabled pairs it excludes (None: none).
ROBOTS = {
    "ur5": "ur_description/srdf/ur5.srdf",
    "panda": "panda_description/srdf/panda.srdf",
    "solo12": None,
    "talos": "talos_data/srdf/talos.srdf",
}
# Talos's 1166 pairs are slow on the sanitizer build, which runs the tests not marked slow.
ROBOT_NAMES = [pytest.param(name, marks=pytest.mark.slow) if name == "talos" else name for name in ROBOTS]
CONFIGURATIONS = 3
# URDF cylinders lie along their z axis, dcol's along x: the dcol shape's frame in the URDF geometry frame.
X_TO_Z = np.array([[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])


def obstacles():
    return [
        Obstacle(Box([0.3, 0.05, 0.4]), [0.45, 0.1, 0.3], [1.0, 0.0, 0.0, 0.0]),
        Obstacle(Sphere(0.15), [-0.2, 0.4, 0.5], [1.0, 0.0, 0.0, 0.0]),
        Obstacle(Capsule(0.05, 0.6), [0.0, -0.4, 0.2], [np.cos(0.3), 0.0, np.sin(0.3), 0.0]),
        # Cylinder pairs go to GJK with their features refined (gjk.cpp), no longer to the cone programs.
        Obstacle(Cylinder(0.08, 0.5), [0.3, -0.3, 0.45], [np.cos(0.4), np.sin(0.4), 0.0, 0.0]),
    ]


def exclusions(name):
    srdf = ROBOTS[name]
    return dyn.disabled_collision_pairs(os.path.join(ROBOTS_DIR, srdf)) if srdf else ()


@functools.cache
def robot(name):
    """(model, CollisionModel checking every pair, PinocchioOracle, Pinocchio's collision GeometryModel)."""
    model = dyn.load_example_robot(name)
    collision = dyn.CollisionModel(model, obstacles(), exclude=exclusions(name), margin=100.0)
    relative, floating = dyn.EXAMPLE_ROBOTS[name]
    urdf = os.path.join(ROBOTS_DIR, relative)
    reference = PinocchioOracle(urdf, floating, model)
    geometry = pin.buildGeomFromUrdf(reference.pmodel, urdf, pin.GeometryType.COLLISION, package_dirs=[SHARE])
    return model, collision, reference, geometry


def configurations(model, rng, count):
    return np.array([dyn.random_configuration(model, rng, position_range=0.2) for _ in range(count)])


def pinocchio_body_poses(name, q):
    """The world pose (r, R) of each collision object's body at q, from Pinocchio's placement of the URDF
    geometry and its kinematics: the geometry's frame in the world, less its pose in the body (a mesh's
    frame, or a primitive's, whose dcol shape is a URDF cylinder turned from z to x)."""
    model, collision, reference, geometry = robot(name)
    data = geometry.createData()
    pin.forwardKinematics(reference.pmodel, reference.pdata, reference.q_to_pin(q))
    pin.updateGeometryPlacements(reference.pmodel, reference.pdata, geometry, data)
    poses = []
    for object_name, shape in zip(collision.object_names, collision.shapes):
        if object_name.startswith("obstacle"):
            obstacle = collision.obstacles[int(object_name.split()[1])]
            poses.append((obstacle.r, rotation_matrix(obstacle.q)))
            continue
        entry = model.collision_shapes[len(poses)]
        if isinstance(entry.shape, dyn.MeshGeometry):
            frame_R, frame_p = entry.shape.offset_rotation, entry.shape.offset_position
        else:
            turn = X_TO_Z if isinstance(shape, Cylinder) else np.eye(3)
            frame_R, frame_p = shape.offset_rotation @ turn.T, shape.offset_position
        link, k = object_name.rsplit("/", 1)
        placement = data.oMg[geometry.getGeometryId(f"{link}_{k}")]
        body_R = placement.rotation @ frame_R.T
        poses.append((placement.translation - body_R @ frame_p, body_R))
    return poses


@pytest.mark.parametrize("name", ROBOT_NAMES)
def test_distances_match_coal(name, rng):
    model, collision, _, _ = robot(name)
    separated = penetrating = 0
    for q in configurations(model, rng, CONFIGURATIONS):
        result = collision.distances(q, jacobians=False)
        assert len(result.pair) == len(collision.pairs), "margin 100 m: the broadphase keeps every pair"
        poses = pinocchio_body_poses(name, q)
        for row, pair in enumerate(result.pair):
            a, b = collision.pairs[pair]
            what = f"{name} {collision.pair_names([pair])[0]}"
            assert result.status[row] in (Status.SOLVED, Status.SOLVED_INACCURATE), what
            try:
                shape_a, shape_b = collision.shapes[a], collision.shapes[b]
                distance, p_a, p_b, normal = coal_distance(shape_a, *poses[a], shape_b, *poses[b])
            except RuntimeError:  # coal's EPA failed on a penetrating pair: nothing to compare with
                continue
            mine = result.distance[row]
            if distance > 1e-4:
                separated += 1
                assert abs(mine - distance) <= 1e-6 * max(1.0, distance), f"{what}: {mine} vs coal {distance}"
                assert result.alpha[row] > 1.0, what
                # Witness points may be any of a face's; their difference is the distance along the normal. GJK
                # works on a mesh hull's vertex list, whose corners ConvexMesh merges within 1e-5 of its size
                # (coal is given the unmerged corners of its planes): near-coplanar faces then tilt a far pair's
                # witness by up to a few 1e-5 m.
                assert np.allclose(result.witness_b[row] - result.witness_a[row], p_b - p_a, atol=1e-4), what
                assert result.normal[row] @ normal > 1.0 - 1e-6, what
            elif distance < -1e-4:
                penetrating += 1
                assert result.alpha[row] < 1.0, what
                # Pairs with cores (polytopes, spheres, capsules) go to EPA, the least translation as coal's; the
                # cone program's depth (overlapping flat cores, cylinders) is along DCOL's normal, at least that.
                assert mine <= distance + 1e-6, f"{what}: {mine} vs coal {distance}"
                if isinstance(shape_a, Polytope) and isinstance(shape_b, Polytope):
                    assert abs(mine - distance) <= 1e-5, f"{what}: {mine} vs coal {distance}"
    assert separated > 10 * CONFIGURATIONS, f"{name}: too few separated pairs compared ({separated})"
    assert penetrating > 0, f"{name}: no penetrating pair compared (random configurations overlap some links)"


@pytest.mark.parametrize("name", ROBOT_NAMES)
def test_alpha_and_distances_match_the_cone_programs(name, rng):
    """α (every pair) and the distance (pairs apart) against dcol.geom.proximity and signed_distance, the cone
    programs on the shapes' planes, at Pinocchio's poses. GJK works on a mesh hull's vertex list, whose corners
    ConvexMesh merges within 1e-5 of its size: the two agree to that, not to the solvers' accuracy (exact
    polytopes: tests/geom/test_gjk_derivatives.py)."""
    model, collision, _, _ = robot(name)
    compared = 0
    for q in configurations(model, rng, 2):
        result = collision.distances(q, jacobians=False)
        poses = pinocchio_body_poses(name, q)
        for row, pair in enumerate(result.pair):
            a, b = collision.pairs[pair]
            pose_pair = (collision.shapes[a], *poses[a], collision.shapes[b], *poses[b])
            what = f"{name} {collision.pair_names([pair])[0]}"
            alpha = proximity(*pose_pair).alpha
            assert result.alpha[row] == pytest.approx(alpha, rel=1e-5), what
            if alpha > 1.0:  # links and obstacles of at most a metre
                assert result.distance[row] == pytest.approx(signed_distance(*pose_pair).distance, abs=1e-5), what
            compared += 1
    assert compared == 2 * len(collision.pairs)


def test_cone_method_agrees_with_gjk_apart(rng):
    """method="cone" (every pair by the cone programs) against the default on Panda's separated pairs: the same
    distances (to ConvexMesh's merged corners, as above) and q-Jacobians of the distance."""
    model, collision, _, _ = robot("panda")
    by_cone = dyn.CollisionModel(model, obstacles(), exclude=exclusions("panda"), margin=100.0, method="cone")
    q = configurations(model, rng, 1)[0]
    gjk, cone = collision.distances(q), by_cone.distances(q)
    np.testing.assert_array_equal(gjk.pair, cone.pair)
    apart = cone.distance > 1e-3
    assert apart.sum() > 20
    np.testing.assert_allclose(gjk.distance[apart], cone.distance[apart], atol=1e-5)
    np.testing.assert_allclose(gjk.alpha, cone.alpha, rtol=1e-5)
    np.testing.assert_allclose(gjk.jacobian.dense("distance")[apart], cone.jacobian.dense("distance")[apart], atol=1e-3)


@pytest.mark.parametrize("name", ROBOT_NAMES)
def test_jacobians_match_central_differences(name, rng):
    model, collision, _, _ = robot(name)
    q = configurations(model, rng, 1)[0]
    result = collision.distances(q)
    step = 1e-6
    fields = ("alpha", "distance", "witness_a", "witness_b", "normal")
    # Every column, so also those off a pair's dofs, which the sparse layout leaves out as zero.
    dense = {field: result.jacobian.dense(field) for field in fields}
    for k in range(model.nv):
        e = np.zeros(model.nv)
        e[k] = step
        plus = collision.distances(dyn.integrate(model, q, e), jacobians=False)
        minus = collision.distances(dyn.integrate(model, q, -e), jacobians=False)
        assert np.array_equal(plus.pair, result.pair) and np.array_equal(minus.pair, result.pair)
        for field in fields:
            numeric = (getattr(plus, field) - getattr(minus, field)) / (2 * step)
            analytic = dense[field][..., k]
            if field in ("witness_a", "witness_b", "normal"):
                # Witness points and normals move smoothly only where they are unique: pairs of curved
                # shapes, or apart at a vertex. Compare them where the two sides agree with each other.
                smooth = np.all(np.abs(getattr(plus, field) - getattr(minus, field)) < 1e-3, axis=-1)
                numeric, analytic = numeric[smooth], analytic[smooth]
            scale = np.maximum(1.0, np.abs(numeric))
            error = np.abs(analytic - numeric) / scale
            worst = np.unravel_index(np.argmax(error), error.shape) if error.size else ()
            assert error.size == 0 or error.max() < 2e-4, (
                f"{name} ∂{field}/∂v[{k}]: pair {collision.pair_names([result.pair[worst[0]]])}, "
                f"analytic {analytic[worst]}, central difference {numeric[worst]}"
            )


def test_floating_base_jacobian_is_in_the_tangent_space():
    """Solo12's base columns: the distance's change along the base's body-frame twist, each of its six."""
    model, collision, _, _ = robot("solo12")
    assert model.joint_kinds[0] == "floating" and model.nv == model.nq - 1
    q = dyn.neutral(model)
    q[2] = 0.35
    result = collision.distances(q)
    # A pure base translation along world z (body frame = world at the identity) moves each robot shape by
    # that much: an obstacle pair's distance changes by −n_z (robot first) and a self pair's not at all.
    robot_objects = len(collision.shapes) - len(collision.obstacles)
    obstacle_pair = collision.pairs[result.pair][:, 1] >= robot_objects
    assert np.any(obstacle_pair) and np.any(~obstacle_pair)
    distance_jacobian = result.jacobian.dense("distance")
    np.testing.assert_allclose(distance_jacobian[obstacle_pair, 2], -result.normal[obstacle_pair, 2], atol=1e-6)
    np.testing.assert_allclose(distance_jacobian[~obstacle_pair, :6], 0.0, atol=1e-6)


@pytest.mark.parametrize("name", ["panda", "talos"])
def test_each_pairs_jacobian_spans_its_bodies_dofs(name, rng):
    """A pair's sparse Jacobian is over exactly the dofs whose columns of its two bodies' frame Jacobians
    (dcol.dynamics.frame_jacobian, dense) are nonzero; an obstacle has none."""
    model, collision, _, _ = robot(name)
    q = configurations(model, rng, 1)[0]
    result = collision.distances(q)
    moving = {}
    for entry in model.collision_shapes:
        if entry.body >= 0 and entry.body not in moving:
            frame_jacobian = dyn.frame_jacobian(model, q, model.body_names[entry.body])
            moving[entry.body] = set(np.flatnonzero(np.any(frame_jacobian != 0.0, axis=0)))
    bodies = [entry.body for entry in model.collision_shapes] + [-1] * len(collision.obstacles)
    jacobian = result.jacobian
    assert jacobian.values.shape == (len(jacobian.dofs), 11)
    for row, pair in enumerate(result.pair):
        expected = set().union(*(moving.get(bodies[k], set()) for k in collision.pairs[pair]))
        dofs = jacobian.dofs[jacobian.start[row] : jacobian.start[row + 1]]
        assert list(dofs) == sorted(expected), collision.pair_names([pair])


@pytest.mark.parametrize("name", ROBOT_NAMES)
def test_hill_climbing_finds_the_scans_supports(name, rng):
    """CollisionModel finds a mesh's support points by hill climbing on its hull's vertex adjacency;
    dcol._native.gjk_distance_jacobian, given no adjacency, scans every vertex. On the same poses the two give the
    same α and distances (to rounding: among nearly tied vertices the climb may end on another one)."""
    model, collision, _, _ = robot(name)
    for q in configurations(model, rng, 2):
        result = collision.distances(q, jacobians=False)
        poses = pinocchio_body_poses(name, q)
        compared = 0
        for row, pair in enumerate(result.pair):
            a, b = collision.pairs[pair]
            quaternions = [np.roll(Rotation.from_matrix(poses[k][1]).as_quat(), 1) for k in (a, b)]
            pose_pair = (collision.shapes[a], poses[a][0], quaternions[0], collision.shapes[b], poses[b][0])
            scanned = _native.gjk_distance_jacobian(*pose_pair, quaternions[1])
            if scanned is None:  # the cone programs' pair in both
                continue
            what = f"{name} {collision.pair_names([pair])[0]}"
            assert result.alpha[row] == pytest.approx(scanned["alpha"], rel=1e-9), what
            assert result.distance[row] == pytest.approx(scanned["distance"], rel=1e-9, abs=1e-12), what
            compared += 1
        assert compared > 0.9 * len(result.pair)


@pytest.mark.parametrize("name", ROBOT_NAMES)
def test_alpha_alone_is_the_full_calls_alpha(name, rng):
    model, collision, _, _ = robot(name)
    Q = configurations(model, rng, 2)
    full, alone = collision.distances(Q), collision.distances(Q, signed_distance=False)
    np.testing.assert_array_equal(alone.pair, full.pair)
    np.testing.assert_allclose(alone.alpha, full.alpha, rtol=1e-12)
    # The gradient of DCOL's Lagrangian against the implicit function theorem's linear solve (which the
    # central differences check): two derivatives of the same smoothed solution, equal to its accuracy.
    np.testing.assert_allclose(alone.jacobian.dense("alpha"), full.jacobian.dense("alpha"), rtol=1e-5, atol=1e-5)
    assert alone.distance is None and alone.normal is None and alone.jacobian.values.shape[1] == 1
    with pytest.raises(ValueError, match="row must be one of \\['alpha'\\]"):
        alone.jacobian.dense("distance")


@pytest.mark.parametrize("threads", [1, 2])
def test_batch_equals_single(threads, rng):
    model, collision, _, _ = robot("panda")
    narrow = dyn.CollisionModel(model, obstacles(), exclude=exclusions("panda"), margin=0.02)
    Q = configurations(model, rng, 5)
    for checker in (collision, narrow):
        batch = checker.distances(Q, threads=threads)
        assert len(batch.start) == len(Q) + 1
        for n, q in enumerate(Q):
            single, part = checker.distances(q), batch.at(n)
            for field in ("pair", "alpha", "distance", "witness_a", "normal", "status"):
                np.testing.assert_array_equal(getattr(part, field), getattr(single, field), err_msg=field)
            for field in ("start", "dofs", "values"):
                np.testing.assert_array_equal(
                    getattr(part.jacobian, field), getattr(single.jacobian, field), err_msg=f"jacobian {field}"
                )


def test_margin_keeps_every_pair_within_it(rng):
    model, everything, _, _ = robot("panda")
    margin = 0.05
    narrow = dyn.CollisionModel(model, obstacles(), exclude=exclusions("panda"), margin=margin)
    np.testing.assert_array_equal(narrow.pairs, everything.pairs)  # the margin only changes which are checked
    for q in configurations(model, rng, 3):
        full = everything.distances(q, jacobians=False)
        kept = narrow.distances(q, jacobians=False)
        near = set(full.pair[full.distance <= margin].tolist())
        assert near <= set(kept.pair.tolist())
        assert len(kept.pair) < len(full.pair), "the broadphase dropped no pair"
        np.testing.assert_allclose(kept.distance, full.distance[np.isin(full.pair, kept.pair)], atol=1e-12)
    # An infinite margin checks every pair, as coal's computeDistances does.
    unbounded = dyn.CollisionModel(model, obstacles(), exclude=exclusions("panda"), margin=np.inf)
    np.testing.assert_array_equal(unbounded.distances(q, jacobians=False).pair, np.arange(len(everything.pairs)))


def test_pairs_exclude_parent_child_and_the_exclusion_list():
    model, _, _, _ = robot("panda")
    plain = dyn.CollisionModel(model)
    names = {frozenset((a.split("/")[0], b.split("/")[0])) for a, b in plain.pair_names()}
    assert frozenset(("panda_link1", "panda_link2")) not in names  # parent and child
    assert frozenset(("panda_link1", "panda_link3")) in names
    excluded = dyn.CollisionModel(model, exclude=[("panda_link3", "panda_link1")])
    assert len(excluded.pairs) < len(plain.pairs)
    assert frozenset(("panda_link1", "panda_link3")) not in {
        frozenset((a.split("/")[0], b.split("/")[0])) for a, b in excluded.pair_names()
    }
    # Without self collision: each moving shape against each obstacle (panda_link0 is fixed to the world).
    environment = dyn.CollisionModel(model, obstacles(), self_collision=False)
    moving = sum(entry.body >= 0 for entry in model.collision_shapes)
    assert len(environment.pairs) == moving * len(obstacles())
    assert all(b.startswith("obstacle") and not a.startswith("panda_link0") for a, b in environment.pair_names())


def test_bad_input_names_the_argument():
    model, collision, _, _ = robot("panda")
    with pytest.raises(ValueError, match=r"exclude\[0\]: link 'no_such_link' is not in the model"):
        dyn.CollisionModel(model, exclude=[("panda_link1", "no_such_link")])
    with pytest.raises(TypeError, match=r"exclude\[0\] must be a pair of link names"):
        dyn.CollisionModel(model, exclude=["panda_link1"])
    with pytest.raises(ValueError, match="Obstacle r must be finite"):
        dyn.CollisionModel(model, [Obstacle(Sphere(0.1), [0.0, np.nan, 0.0], [1.0, 0.0, 0.0, 0.0])])
    with pytest.raises(TypeError, match=r"obstacles\[0\] must be a dcol.geom.Obstacle"):
        dyn.CollisionModel(model, [Sphere(0.1)])
    with pytest.raises(ValueError, match="margin"):
        dyn.CollisionModel(model, margin=-1.0)
    with pytest.raises(ValueError, match=r"method must be one of \('gjk', 'cone'\), got 'epa'"):
        dyn.CollisionModel(model, method="epa")
    with pytest.raises(ValueError, match=r"q must have shape \(9,\) or \(N, 9\), got \(10,\)"):
        collision.distances(np.zeros(model.nq + 1))
    with pytest.raises(ValueError, match="q must be finite"):
        collision.distances(np.full(model.nq, np.nan))


def test_disabled_collision_pairs_reads_an_srdf(tmp_path):
    srdf = tmp_path / "robot.srdf"
    srdf.write_text(
        '<robot name="r"><disable_collisions link1="a" link2="b" reason="Adjacent"/>'
        '<group name="arm"/><disable_collisions link1="c" link2="a" reason="Never"/></robot>'
    )
    assert dyn.disabled_collision_pairs(srdf) == [("a", "b"), ("c", "a")]
    srdf.write_text('<robot name="r"><disable_collisions link1="a"/></robot>')
    with pytest.raises(ValueError, match="lacks link1 or link2"):
        dyn.disabled_collision_pairs(srdf)
