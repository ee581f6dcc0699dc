"""MuJoCo's side of bench_simulation.py's comparison: the scenes dcol's World simulates, built as
MuJoCo models with the same contact settings, and the times of MuJoCo's step and of its
finite-difference step Jacobian.

A scene is a robot's URDF (MuJoCo's own URDF import: meshes collide as their convex hulls) or free
boxes, on a ground plane, with what dcol's World defaults to: Coulomb friction 0.5 on a friction
pyramid (MuJoCo's default cone), time step 1 ms, and no self-collision (a robot's geoms collide with
the ground and with other free bodies only). Every degree of freedom gets a motor of unit gear, so
that MuJoCo's control Jacobian is the one with respect to generalized forces τ, as dcol's.
"""

import re
import time

import mujoco
import numpy as np
from report import median_time

FRICTION = 0.5
TIMESTEP = 1e-3
# dcol's World(mesh_vertices=64): a mesh collides as the convex hull of at most this many vertices.
MESH_VERTICES = 64
# Collision filter bits: a pair collides when one's contype meets the other's conaffinity. Robot geoms
# have no affinity, so two of them never collide; the ground and free boxes collide with everything.
ROBOT_FILTER = (1, 0)
OBSTACLE_FILTER = (1, 1)
# Central differences' step, as bench_simulation.py's for dcol.
FD_EPSILON = 1e-6
# URDF import options: collision geometry only; fixed links stay bodies of their own (as dcol keeps
# them); bounds for the massless links of planar roots (three 1-dof joints in a chain), which MuJoCo
# refuses to move otherwise; and inertias that violate the triangle inequality made valid.
_IMPORT_OPTIONS = (
    '<mujoco><compiler discardvisual="true" fusestatic="false" balanceinertia="true" '
    'boundmass="1e-6" boundinertia="1e-9"/></mujoco>'
)


def urdf_spec(path, floating_joint=None, package_root=None):
    """A MuJoCo spec of a URDF file. `floating_joint`: the name of a free joint to give the root link
    (a floating base; MuJoCo's URDF import welds the root to the world). `package_root`: the folder
    `package://` mesh paths are relative to."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if package_root is not None:
        text = text.replace("package://", package_root.rstrip("/") + "/")
    text, found = re.subn(r"(<robot\b[^>]*>)", lambda match: match.group(1) + _IMPORT_OPTIONS, text, count=1)
    if not found:
        raise ValueError(f"{path}: no <robot> element")
    spec = mujoco.MjSpec.from_string(text)
    if floating_joint is not None:
        spec.worldbody.first_body().add_freejoint(name=floating_joint)
    for geom in spec.geoms:
        geom.contype, geom.conaffinity = ROBOT_FILTER
    return spec


def box_pile_spec(names, half, mass):
    """A MuJoCo spec of free cubes of side 2 half and the given mass (uniform density: inertia
    m (2 half)² / 6, as dcol's pile), one per name, their free joints named `<name>_free`."""
    spec = mujoco.MjSpec()
    for name in names:
        body = spec.worldbody.add_body(name=name)
        body.add_freejoint(name=f"{name}_free")
        geom = body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[half] * 3, mass=mass)
        geom.contype, geom.conaffinity = OBSTACLE_FILTER
    return spec


def compile_scene(spec):
    """The model of `spec` on a ground plane (its top face z = 0), with dcol's contact settings and a
    motor on every degree of freedom."""
    ground = spec.worldbody.add_geom(name="ground", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1])
    ground.contype, ground.conaffinity = OBSTACLE_FILTER
    for geom in spec.geoms:
        # condim 3: sliding friction only (no torsional or rolling friction), as dcol's contacts.
        geom.condim = 3
        geom.friction = [FRICTION, 0.0, 0.0]
    for mesh in spec.meshes:
        mesh.maxhullvert = MESH_VERTICES
    spec.option.timestep = TIMESTEP
    spec.option.gravity = [0.0, 0.0, -9.81]
    for joint in spec.joints:
        if joint.type == mujoco.mjtJoint.mjJNT_FREE:
            gears = np.eye(6)
        elif joint.type in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE):
            gears = np.eye(6)[:1]
        else:
            raise ValueError(f"joint {joint.name}: a ball joint has no counterpart in dcol's models")
        for gear in gears:
            spec.add_actuator(target=joint.name, trntype=mujoco.mjtTrn.mjTRN_JOINT, gear=gear)
    return spec.compile()


def set_configuration(model, data, joint_names, joint_q_index, q):
    """Sets MuJoCo's qpos from a dcol configuration, joint by joint by name (a free joint's position
    and quaternion (w, x, y, z) have the same layout in both); velocities to zero."""
    mujoco.mj_resetData(model, data)
    for name, start in zip(joint_names, joint_q_index):
        joint = model.joint(name).id
        width = {mujoco.mjtJoint.mjJNT_FREE: 7, mujoco.mjtJoint.mjJNT_BALL: 4}.get(int(model.jnt_type[joint]), 1)
        address = model.jnt_qposadr[joint]
        data.qpos[address : address + width] = q[start : start + width]
    mujoco.mj_forward(model, data)


def measure(model, data, settle, repeats, jacobian=True):
    """Settles `settle` steps, then the median times (s) of mj_step and of the centred
    finite-difference Jacobian ∂(q⁺, v⁺)/∂(q, v, τ) (mjd_transitionFD: state and control columns;
    None without `jacobian`) from the settled state, and the number of its contacts.

    Each timed step starts from the settled state with its warm start, as a step of a running
    simulation does."""
    for _ in range(settle):
        mujoco.mj_step(model, data)
    signature = mujoco.mjtState.mjSTATE_INTEGRATION
    state = np.empty(mujoco.mj_stateSize(model, signature))
    mujoco.mj_getState(model, data, state, signature)

    times = []
    for _ in range(repeats):
        mujoco.mj_setState(model, data, state, signature)
        start = time.perf_counter()
        mujoco.mj_step(model, data)
        times.append(time.perf_counter() - start)
    result = {"step": float(np.median(times))}
    mujoco.mj_setState(model, data, state, signature)
    mujoco.mj_forward(model, data)
    result["contacts"] = int(data.ncon)
    result["jacobian"] = None
    if jacobian:
        states = 2 * model.nv + model.na
        A, B = np.zeros((states, states)), np.zeros((states, model.nu))
        result["jacobian"] = median_time(
            lambda: mujoco.mjd_transitionFD(model, data, FD_EPSILON, True, A, B, None, None), repeats
        )
    return result
