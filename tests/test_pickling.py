"""Every public object and result of dcol survives pickle and copy.deepcopy: shapes, solver settings,
the results of dcol.geom, dcol.solvers and dcol.dynamics, scenes, models and worlds. A copy has the
original's type and state, field by field (arrays bit for bit), and behaves as the original: shapes
and scenes give the same contacts, models and worlds the same steps, bit for bit."""

import copy
import dataclasses
import enum
import os
import pickle
import warnings

import numpy as np
import pytest
import trimesh

import dcol.dynamics as dd
import dcol.geom as dg
import dcol.solvers as ds

IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])
QUATERNION = np.array([0.9, 0.1, -0.3, 0.2]) / np.linalg.norm([0.9, 0.1, -0.3, 0.2])
BOX = dg.Box([0.3, 0.2, 0.1], offset=([0.05, 0.0, 0.0], QUATERNION))
BALL = dg.Sphere(0.25)
# Pose pairs of the box and the ball, touching (contacts) or apart (proximity, distances).
TOUCHING = (BOX, np.zeros(3), IDENTITY, BALL, np.array([0.0, 0.0, 0.3]), QUATERNION)
APART = (BOX, np.zeros(3), IDENTITY, BALL, np.array([0.6, 0.2, 0.3]), QUATERNION)
BATCH = (BOX, np.zeros((2, 3)), np.tile(IDENTITY, (2, 1)), BALL, np.array([[0.6, 0.2, 0.3], [0.0, 0.0, 0.3]]))
BATCH = (*BATCH, np.tile(QUATERNION, (2, 1)))
SCENE_POSES = (np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.3]]), np.tile(IDENTITY, (2, 1)))


def _scene():
    scene = dg.Scene()
    scene.add_body([BOX, dg.Capsule(0.05, 0.4)], name="arm")
    scene.add_body(BALL, name="ball", group=2)
    return scene


def _box_world(**kwargs):
    return dd.World(dd.load_dataset_robot("box"), **kwargs)


def _box_state():
    """A box resting on a corner, spinning: contacts, friction and a nontrivial step."""
    q = dd.neutral(dd.load_dataset_robot("box"))
    q[:3] = [0.0, 0.0, 0.12]
    q[3:] = QUATERNION
    return q, np.array([0.1, -0.2, -0.3, 0.5, 0.2, -0.1])


def _step(derivatives, **kwargs):
    q, v = _box_state()
    return _box_world(**kwargs).step(q, v, derivatives=derivatives)


def _rollout(derivatives, keep_steps=False):
    q, v = _box_state()
    return _box_world().rollout(q, v, np.zeros((3, 6)), derivatives=derivatives, keep_steps=keep_steps)


def _lcp():
    A = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 1.5]])
    return A, np.array([-1.0, 0.3, -0.5])


def _boxed_lcp():
    A, b = _lcp()
    return ds.solve_boxed_lcp(A, b, [0.0, -0.2, -0.2], [np.inf, 0.2, 0.2], friction_index=[-1, 0, 0], mu=[0, 0.5, 0.5])


def _mlcp():
    # min ½ xᵀx − (2, 1)ᵀx subject to x₀ ≤ 1, x₀ + x₁ = 1.5.
    return np.eye(2), np.array([-2.0, -1.0]), np.array([[1.0, 0.0]]), np.zeros((1, 1)), np.array([1.0])


def _ncp():
    return np.eye(3) + 0.1, np.array([0.3, -0.1, -1.0]), 0.5


def _scaling_contact():
    ground = dg.Obstacle(dg.Box([1.0, 1.0, 0.5]), [0.0, 0.0, -0.5], IDENTITY)
    return dd.ScalingContactSimulator([BOX, BALL], [1.0, 2.0], inertias=np.eye(3) * 0.05, obstacles=[ground])


# The tilted box falling onto the ground and the ball onto the box: both pairs push in the first step.
SCALING_CONTACT_STATE = (
    np.array([[0.0, 0.0, 0.35], [0.0, 0.0, 0.82]]),
    np.array([QUATERNION, IDENTITY]),
    np.array([[0.0, 0.0, -1.0], [0.1, 0.0, -2.0]]),
    np.array([[0.5, -0.2, 1.0], [0.0, 0.0, 0.0]]),
)


# name → a function making the object (a new one for each call).
OBJECTS = {
    "Box": lambda: BOX,
    "Sphere": lambda: BALL,
    "Capsule": lambda: dg.Capsule(0.1, 0.3),
    "Cylinder": lambda: dg.Cylinder(0.1, 0.3, offset=([0.0, 0.1, 0.0], np.eye(3))),
    "Cone": lambda: dg.Cone(0.5, 0.3),
    "Ellipsoid": lambda: dg.Ellipsoid(np.diag([4.0, 9.0, 16.0]) + 0.5),
    "Polygon": lambda: dg.Polygon(np.array([[1.0, 0], [-1, 0], [0, 1], [0, -1]]), np.array([0.2, 0.3, 0.1, 0.4]), 0.05),
    "Polytope": lambda: dg.Polytope(np.vstack([np.eye(3), -np.eye(3)]), np.array([1.0, 2.0, 1.0, 1.5, 1.0, 0.5])),
    "ConvexMesh": lambda: dg.ConvexMesh.from_mesh(trimesh.creation.icosphere(1), scale=[0.3, 0.2, 0.1]),
    "SolverSettings": lambda: ds.SolverSettings(feastol=3e-10, max_iter=17, barrier=1e-9, centrality_tol=1e-5),
    "ProximityResult": lambda: dg.proximity(*APART),
    "ProximityBatchResult": lambda: dg.proximity_batch(*BATCH),
    "ProximityJacobian": lambda: dg.proximity_jacobian(*APART),
    "ProximityGradient": lambda: dg.proximity_gradient_batch(*BATCH),
    "ContactJacobian": lambda: dg.contact_jacobian(*TOUCHING),
    "ShapeParameterJacobian": lambda: dg.shape_parameter_jacobian(*APART),
    "DistanceResult": lambda: dg.signed_distance_batch(*BATCH),
    "DistanceJacobian": lambda: dg.distance_jacobian(*APART),
    "ContactSet": lambda: dg.contacts(*TOUCHING, derivatives=True),
    "PolytopeTopology": lambda: dg.polytope_topology(BOX.A, BOX.b),
    "Scene": _scene,
    "SceneContacts": lambda: _scene().contacts(*SCENE_POSES, derivatives=True),
    "ConeSolution": lambda: ds.solve_cone_program([1.0, 1.0], -np.eye(2), [0.0, 0.0], {"l": 2, "q": []}),
    "LCPSolution": lambda: ds.solve_lcp(*_lcp()),
    "LCPSolution boxed": _boxed_lcp,
    "LCPCotangents": lambda: ds.lcp_vjp(_boxed_lcp(), _lcp()[0], [1.0, 0.5, -0.2]),
    "MLCPSolution": lambda: ds.solve_mlcp(*_mlcp(), A=[[1.0, 1.0]]),
    "NCPSolution": lambda: ds.solve_contact_ncp(*_ncp()),
    "NCPCotangents": lambda: ds.ncp_vjp(ds.solve_contact_ncp(*_ncp()), _ncp()[0], [0.1, 0.2, 0.3]),
    "Model": lambda: dd.load_dataset_robot("double_pendulum"),
    "World": _box_world,
    "World ncp": lambda: _box_world(contact_model="ncp"),
    "Step": lambda: _step(False),
    "Step with derivatives": lambda: _step(True),
    "Step ncp with derivatives": lambda: _step(True, contact_model="ncp"),
    "StepJacobians": lambda: _step(True).jacobians(),
    "ContactProblem": lambda: _box_world().contact_problem(*_box_state()),
    "Rollout": lambda: _rollout(False),
    "Rollout with its steps": lambda: _rollout(False, keep_steps=True),
    "Rollout with derivatives": lambda: _rollout(True),
    "BatchStep": lambda: _box_world().step_batch(*(x[None] for x in _box_state()), derivatives=True),
    "BatchRollout": lambda: _box_world().rollout_batch(*(x[None] for x in _box_state()), np.zeros((1, 3, 6))),
    "ScalingContactSimulator": _scaling_contact,
    "ScalingContactStep": lambda: _scaling_contact().step(*SCALING_CONTACT_STATE),
    "ScalingContactRollout": lambda: _scaling_contact().rollout(*SCALING_CONTACT_STATE, steps=3),
}


def _assert_same(copied, original, where):
    """copied has original's type and state: arrays equal bit for bit (NaN where NaN) with the same
    dtype, containers and fields recursively, other objects by the state they pickle."""
    assert type(copied) is type(original), where
    if isinstance(original, np.ndarray):
        assert (copied.dtype, copied.shape) == (original.dtype, original.shape), where
        np.testing.assert_array_equal(copied, original, err_msg=where, strict=True)
    elif isinstance(original, (list, tuple)):  # NamedTuples too
        assert len(copied) == len(original), where
        for i, (c, o) in enumerate(zip(copied, original)):
            _assert_same(c, o, f"{where}[{i}]")
    elif isinstance(original, dict):
        assert copied.keys() == original.keys(), where
        for key, value in original.items():
            _assert_same(copied[key], value, f"{where}[{key!r}]")
    elif isinstance(original, (float, np.floating)):
        assert copied == original or (np.isnan(copied) and np.isnan(original)), where
    elif isinstance(original, (int, str, bytes, set, frozenset, type(None), enum.Enum, np.generic, type)):
        assert copied == original, where
    elif dataclasses.is_dataclass(original):
        for field in dataclasses.fields(original):
            _assert_same(getattr(copied, field.name), getattr(original, field.name), f"{where}.{field.name}")
    elif type(original).__reduce__ is not object.__reduce__:  # shapes, settings, native results
        _assert_same(copied.__reduce__()[1], original.__reduce__()[1], f"{where} (pickled)")
    else:  # models and worlds leave their native objects out of their state
        _assert_same(copied.__getstate__(), original.__getstate__(), f"{where}.__dict__")


def _assert_same_behaviour(copied, original, name):
    """What the copy computes is what the original computes, bit for bit."""
    if isinstance(original, dg.Shape):
        for direction in ([1.0, 0.0, 0.0], [0.3, -0.5, 0.8]):
            support = [dg.support_point(shape, [0.1, 0.2, 0.3], QUATERNION, direction) for shape in (copied, original)]
            _assert_same(*support, f"{name} support point")
        probe = (dg.Sphere(0.3), [1.4, 0.3, -0.2], IDENTITY)
        _assert_same(*(dg.proximity(shape, np.zeros(3), IDENTITY, *probe) for shape in (copied, original)), name)
    elif isinstance(original, ds.SolverSettings):
        _assert_same(*(dg.proximity(*APART, settings=settings) for settings in (copied, original)), name)
    elif isinstance(original, dg.Scene):
        _assert_same(*(scene.contacts(*SCENE_POSES) for scene in (copied, original)), f"{name} contacts")
    elif isinstance(original, dd.Model):
        assert not any(value.flags.writeable for value in vars(copied).values() if isinstance(value, np.ndarray))
        q, v = np.array([0.4, -1.1]), np.array([0.3, 0.7])
        _assert_same(*(dd.aba(model, q, v, np.zeros(2)) for model in (copied, original)), f"{name} aba")
        _assert_same(*(dd.World(model, ground=False).step(q, v) for model in (copied, original)), f"{name} step")
    elif isinstance(original, dd.World):
        steps = [world.step(*_box_state(), derivatives=True) for world in (copied, original)]
        _assert_same(*steps, f"{name} step")
        _assert_same(*(step.jacobians() for step in steps), f"{name} step Jacobians")
    elif isinstance(original, dd.Step) and original._linearization is not None:
        _assert_same(*(step.jacobians() for step in (copied, original)), f"{name} Jacobians")
        _assert_same(*(step.vjp(np.ones(6), np.ones(6)) for step in (copied, original)), f"{name} vjp")
    elif isinstance(original, dd.ScalingContactSimulator):
        _assert_same(*(simulator.step(*SCALING_CONTACT_STATE) for simulator in (copied, original)), f"{name} step")
    elif isinstance(original, dd.Rollout) and original._steps and original.steps[0]._linearization is not None:
        gradients = (np.ones((4, 6)), np.ones((4, 6)))
        _assert_same(*(rollout.vjp(*gradients) for rollout in (copied, original)), f"{name} vjp")


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_pickle_and_deepcopy_give_an_equal_object(name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a solver stopped at its iteration limit would make a poor case
        original = OBJECTS[name]()
    # Both copies before any use: using an object fills its caches.
    copies = {"pickle": pickle.loads(pickle.dumps(original)), "deepcopy": copy.deepcopy(original)}
    for how, copied in copies.items():
        assert copied is not original
        _assert_same(copied, original, f"{name} by {how}")
    for how, copied in copies.items():
        _assert_same_behaviour(copied, original, f"{name} by {how}")


MESHES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "datasets", "meshes")


def _disturbed_start(model, rng):
    """A configuration near the neutral one (every joint moved a little, along the tangent) and a velocity."""
    q = dd.integrate(model, dd.neutral(model), rng.normal(scale=0.1, size=model.nv))
    return q, rng.normal(scale=0.5, size=model.nv)


def _assert_same_rollouts(copied, original, q0, v0, taus, where):
    """Both worlds' rollouts with every step's Jacobians, bit for bit."""
    runs = [world.rollout_batch(q0[None], v0[None], taus[None], derivatives=True) for world in (copied, original)]
    _assert_same(*runs, f"{where} rollout")


@pytest.mark.parametrize("robot", sorted(dd.DATASET_ROBOTS))
def test_every_dataset_robot_pickles_to_a_world_that_steps_the_same(robot):
    """dcol's own robots on the ground: the model and the world pickle to equal objects, and a world
    of either copy rolls out (20 steps under random forces, Jacobians included) as the original
    (every robot that has a joint to move)."""
    model = dd.load_dataset_robot(robot)
    world = dd.World(model, dt=2e-3)
    for original in (model, world):
        _assert_same(pickle.loads(pickle.dumps(original)), original, robot)
    if model.nv == 0:
        return  # the ground plane alone: nothing moves
    rng = np.random.default_rng(30)
    q0, v0 = _disturbed_start(model, rng)
    taus = rng.normal(size=(20, model.nv))
    _assert_same_rollouts(pickle.loads(pickle.dumps(world)), world, q0, v0, taus, robot)
    rebuilt = dd.World(pickle.loads(pickle.dumps(model)), dt=2e-3)
    _assert_same_rollouts(rebuilt, world, q0, v0, taus, f"{robot} from the copied model")


def test_a_mesh_scene_and_a_world_of_meshes_pickle_to_equal_ones(tmp_path):
    """A scene of mesh hulls (a chamfered box, a tetrahedron whose file's origin is outside it) gives the
    same contacts after a round trip; a world whose body's collision geometry is a mesh file rolls out
    the same from its copy, the file gone (the copy carries the hull, not the path)."""
    box_mesh = os.path.join(MESHES, "chamfered_box.stl")
    scene = dg.Scene()
    scene.add_body(dg.ConvexMesh.from_mesh(box_mesh), name="box")
    scene.add_body(dg.ConvexMesh.from_mesh(os.path.join(MESHES, "tetrahedron.stl")), name="tetrahedron")
    poses = (np.array([[0.0, 0.0, 0.0], [-1.0, -0.6, -0.38]]), np.tile(IDENTITY, (2, 1)))
    copied = pickle.loads(pickle.dumps(scene))
    _assert_same(copied, scene, "mesh scene")
    contacts = [s.contacts(*poses, derivatives=True) for s in (copied, scene)]
    assert len(contacts[1]) > 0
    _assert_same(*contacts, "mesh scene contacts")

    mesh_file = tmp_path / "body.stl"
    mesh_file.write_bytes(open(box_mesh, "rb").read())
    urdf = f"""<robot name="mesh_body"><link name="body">
        <inertial><mass value="2"/><inertia ixx="0.02" iyy="0.03" izz="0.04" ixy="0" ixz="0" iyz="0"/></inertial>
        <collision><geometry><mesh filename="{mesh_file}"/></geometry></collision></link></robot>"""
    world = dd.World(dd.load_urdf(urdf, floating_base=True), dt=2e-3)
    pickled = pickle.dumps(world)
    mesh_file.unlink()
    copied_world = pickle.loads(pickled)
    _assert_same(copied_world, world, "mesh world")  # before any use fills the worlds' caches
    q0 = np.array([0.0, 0.0, 0.12, *QUATERNION])
    v0 = np.array([0.3, 0.0, -0.5, 0.2, 1.0, 0.0])
    taus = np.zeros((30, 6))
    assert world.rollout_batch(q0[None], v0[None], taus[None]).contacts.max() > 0
    _assert_same_rollouts(copied_world, world, q0, v0, taus, "mesh world")
