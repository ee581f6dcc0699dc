"""Articulated rigid-body models: a kinematic tree of bodies, each moved by one joint.

A *body* is one movable joint and everything rigidly attached to it (URDF links joined by fixed
joints are lumped into one body, as Pinocchio does). Bodies are numbered so that a parent precedes
its children. Joint kinds and their coordinates:

``"revolute"`` / ``"continuous"``
    nq = nv = 1, q is the angle about the joint axis.
``"prismatic"``
    nq = nv = 1, q is the displacement along the joint axis.
``"floating"``
    nq = 7, nv = 6: q = [x, y, z, qw, qx, qy, qz] (pose of the body in its parent, quaternion scalar
    first as everywhere in dcol), v = [v; ω] the body-frame twist (Pinocchio's free-flyer).

Spatial vectors are [linear; angular]. Models are immutable; build them with :class:`ModelBuilder`
or :func:`dcol.dynamics.load_urdf`.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dcol import _native
from dcol.geom import Shape
from dcol.geom.rotations import checked_pose
from dcol.typing import ArrayLike, FloatArray, IntArray, Pose
from dcol.validation import checked_array, checked_instance, checked_nonnegative, float_array

if TYPE_CHECKING:
    from .urdf import MeshGeometry  # the URDF loader builds models with this module

__all__ = ["Model", "ModelBuilder", "BodyShape", "JOINT_KINDS"]

JOINT_KINDS: tuple[str, ...] = ("revolute", "continuous", "prismatic", "floating")
_NATIVE_KIND = {"revolute": 0, "continuous": 0, "prismatic": 1, "floating": 2}
_NQ = {"revolute": 1, "continuous": 1, "prismatic": 1, "floating": 7}
_NV = {"revolute": 1, "continuous": 1, "prismatic": 1, "floating": 6}
_JOINTS_SHOWN = 6  # joints a Model's repr names, the last included


@dataclass(frozen=True)
class BodyShape:
    """A collision or visual shape fixed in a body.

    body : int, index of the body (−1: the world).
    link : str, the URDF link (or builder name) the shape belongs to.
    shape : a :mod:`dcol.geom` shape whose offset is its pose in the body frame, or a
        :class:`dcol.dynamics.urdf.MeshGeometry`.
    """

    body: int
    link: str
    shape: Shape | MeshGeometry


def _placement(placement: Pose | None, name: str) -> tuple[FloatArray, FloatArray]:
    """(R (3, 3), p (3,)) from None or (position, quaternion-or-matrix)."""
    position, rotation = checked_pose(placement, name)
    return rotation, position


def check_inertia(mass: float, com: ArrayLike, inertia: ArrayLike, where: str) -> tuple[float, FloatArray, FloatArray]:
    """Validated (mass, com, rotational inertia about the com); `where` names the element in errors."""
    mass = checked_nonnegative(mass, f"{where}: mass")
    com = checked_array(com, f"{where}: centre of mass", (3,))
    inertia = checked_array(inertia, f"{where}: inertia", (3, 3))
    if not np.allclose(inertia, inertia.T, rtol=0.0, atol=1e-12 * max(1.0, np.abs(inertia).max())):
        raise ValueError(f"{where}: inertia must be symmetric")
    principal = np.linalg.eigvalsh(inertia)
    # Positive semidefinite, not definite: point masses and the tiny dummy inertias of real robots'
    # URDFs are singular (and some of the latter miss the triangle inequality; they load too).
    if principal.min() < -1e-9 * max(principal.max(), 1e-9):
        raise ValueError(f"{where}: inertia must be positive semidefinite, got principal moments {principal.tolist()}")
    return mass, com, 0.5 * (inertia + inertia.T)


def combine_inertias(
    parts: Sequence[tuple[float, FloatArray, FloatArray]],
) -> tuple[float, FloatArray, FloatArray]:
    """Mass, com and rotational inertia about the com of rigidly joined parts (mass, com, I_com)."""
    mass = float(sum(m for m, _, _ in parts))
    if mass == 0.0:
        return 0.0, np.zeros(3), np.zeros((3, 3)) + np.sum([I for _, _, I in parts], axis=0)
    com = np.sum([m * c for m, c, _ in parts], axis=0) / mass
    inertia = np.zeros((3, 3))
    for m, c, I in parts:
        d = c - com
        inertia += I + m * (d @ d * np.eye(3) - np.outer(d, d))  # parallel axis
    return mass, com, inertia


class Model:
    """Immutable articulated model (see the module docstring for the conventions).

    Attributes
    ----------
    name : str, the robot's name (a URDF's <robot name>; "" when none was given)
    nq, nv, nbodies : int
    joint_names, joint_kinds, body_names : list[str], one per body (body_names: the link the joint moves)
    parents : (nbodies,) int array, parent body of each body (−1: the world)
    joint_q_index, joint_v_index : (nbodies,) int arrays, first index of each joint in q and in v
    joint_rotations (nbodies, 3, 3), joint_positions (nbodies, 3) : pose of each joint frame in its
        parent body's frame at q = 0; joint_axes (nbodies, 3) : unit axes in the joint frames
    frame_names : list[str], every named frame (URDF links and joints)
    gravity : (3,) float64
    lower_limits, upper_limits : (nq,) float64 position limits (±inf where none; a floating base has none)
    velocity_limits, effort_limits, damping : (nv,) float64 (damping is not applied by the algorithms;
        the simulation applies it)
    masses : (nbodies,) ; coms : (nbodies, 3) ; rotational_inertias : (nbodies, 3, 3), about the centre
        of mass, in the body frame
    collision_shapes, visual_shapes : list[BodyShape]
    """

    name: str
    nq: int
    nv: int
    nbodies: int
    joint_names: list[str]
    joint_kinds: list[str]
    body_names: list[str]
    parents: IntArray
    joint_q_index: IntArray
    joint_v_index: IntArray
    joint_rotations: FloatArray
    joint_positions: FloatArray
    joint_axes: FloatArray
    frame_names: list[str]
    gravity: FloatArray
    lower_limits: FloatArray
    upper_limits: FloatArray
    velocity_limits: FloatArray
    effort_limits: FloatArray
    damping: FloatArray
    masses: FloatArray
    coms: FloatArray
    rotational_inertias: FloatArray
    collision_shapes: list[BodyShape]
    visual_shapes: list[BodyShape]

    def __init__(self, builder: ModelBuilder) -> None:
        bodies = builder._bodies
        frames = builder._frames
        self.name = builder._name
        self.nbodies = len(bodies)
        self.joint_names = [b["joint"] for b in bodies]
        self.joint_kinds = [b["kind"] for b in bodies]
        self.body_names = [b["name"] for b in bodies]
        self.parents = np.array([b["parent"] for b in bodies], dtype=np.int64)
        self.joint_q_index = np.cumsum([0] + [_NQ[k] for k in self.joint_kinds])[:-1].astype(np.int64)
        self.joint_v_index = np.cumsum([0] + [_NV[k] for k in self.joint_kinds])[:-1].astype(np.int64)
        self.nq = int(sum(_NQ[k] for k in self.joint_kinds))
        self.nv = int(sum(_NV[k] for k in self.joint_kinds))
        self.gravity = builder._gravity.copy()
        self.joint_rotations = np.array([b["placement"][0] for b in bodies], dtype=np.float64).reshape(
            self.nbodies, 3, 3
        )
        self.joint_positions = np.array([b["placement"][1] for b in bodies], dtype=np.float64).reshape(self.nbodies, 3)
        self.joint_axes = np.array([b["axis"] for b in bodies], dtype=np.float64).reshape(self.nbodies, 3)
        self.masses = np.array([b["mass"] for b in bodies], dtype=np.float64).reshape(self.nbodies)
        self.coms = np.array([b["com"] for b in bodies], dtype=np.float64).reshape(self.nbodies, 3)
        self.rotational_inertias = np.array([b["inertia"] for b in bodies], dtype=np.float64).reshape(
            self.nbodies, 3, 3
        )
        self.lower_limits = np.concatenate([b["lower"] for b in bodies]) if bodies else np.zeros(0)
        self.upper_limits = np.concatenate([b["upper"] for b in bodies]) if bodies else np.zeros(0)
        self.velocity_limits = np.concatenate([b["velocity_limit"] for b in bodies]) if bodies else np.zeros(0)
        self.effort_limits = np.concatenate([b["effort_limit"] for b in bodies]) if bodies else np.zeros(0)
        self.damping = np.concatenate([b["damping"] for b in bodies]) if bodies else np.zeros(0)
        self.frame_names = [f["name"] for f in frames]
        self._frame_index = {name: i for i, name in enumerate(self.frame_names)}
        self.collision_shapes = list(builder._collision)
        self.visual_shapes = list(builder._visual)
        self._frame_bodies = np.array([f["body"] for f in frames], dtype=np.int32)
        self._frame_rotations = np.array([f["placement"][0] for f in frames]).reshape(len(frames), 3, 3)
        self._frame_positions = np.array([f["placement"][1] for f in frames]).reshape(len(frames), 3)
        self._freeze()
        self._native = self._native_model()

    def _freeze(self) -> None:
        """Makes every array of the model read-only: models are immutable."""
        for value in vars(self).values():
            if isinstance(value, np.ndarray):
                value.setflags(write=False)

    def __getstate__(self) -> dict[str, Any]:
        # The native model is rebuilt from the arrays when unpickled.
        return {name: value for name, value in vars(self).items() if name != "_native"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        vars(self).update(state)
        self._freeze()  # pickle makes arrays writeable
        self._native = self._native_model()

    def _native_model(self) -> _native.dynamics.Model:
        return _native.dynamics.Model(
            parent=self.parents.astype(np.int32),
            kind=np.array([_NATIVE_KIND[k] for k in self.joint_kinds], dtype=np.int32),
            placement_R=self.joint_rotations,
            placement_p=self.joint_positions,
            axis=self.joint_axes,
            mass=self.masses,
            com=self.coms,
            rot_inertia=self.rotational_inertias,
            frame_body=self._frame_bodies,
            frame_R=self._frame_rotations,
            frame_p=self._frame_positions,
            gravity=self.gravity,
        )

    def with_inertial_parameters(self, params: ArrayLike) -> Model:
        """A copy of the model with other inertial parameters (nbodies, 10), in the order of
        :func:`dcol.dynamics.inertial_parameters`: [m, m c, I about the body origin (xx, xy, yy, xz,
        yz, zz)]. ValueError naming the body when one is not physically consistent."""
        params = checked_array(params, "params", (self.nbodies, 10))
        masses, coms, inertias = [], [], []
        for name, (m, *first_moment), (xx, xy, yy, xz, yz, zz) in zip(self.body_names, params[:, :4], params[:, 4:]):
            if m < 0.0 or m == 0.0 and np.any(first_moment):  # params are finite: checked above
                raise ValueError(f"params: body {name!r} mass must be ≥ 0 (> 0 with a first moment), got {m}")
            c = np.asarray(first_moment) / m if m > 0.0 else np.zeros(3)
            I_origin = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
            mass, com, inertia = check_inertia(
                m, c, I_origin - m * (c @ c * np.eye(3) - np.outer(c, c)), f"params: body {name!r}"
            )
            masses.append(mass)
            coms.append(com)
            inertias.append(inertia)
        model = copy.copy(self)
        model.masses, model.coms, model.rotational_inertias = np.array(masses), np.array(coms), np.array(inertias)
        model._freeze()
        model._native = model._native_model()
        _check_mass_matrix(model, "params: ")
        return model

    def frame_index(self, name: str) -> int:
        """Index of a named frame; ValueError naming the frame when there is none."""
        try:
            return self._frame_index[name]
        except (KeyError, TypeError):
            raise ValueError(f"frame {name!r} is not in the model (see Model.frame_names)") from None

    def __repr__(self) -> str:
        joints = [f"{name} ({kind})" for name, kind in zip(self.joint_names, self.joint_kinds)]
        if len(joints) > _JOINTS_SHOWN:  # the first ones and the last, so that the repr stays one line
            joints[_JOINTS_SHOWN - 1 : -1] = ["…"]
        return f"Model({self.name!r}, nq={self.nq}, nv={self.nv}, nbodies={self.nbodies}, joints: {', '.join(joints)})"


class ModelBuilder:
    """Builds a :class:`Model` body by body (parents first).

    Example
    -------
    >>> b = ModelBuilder()
    >>> link = b.add_body("link1", parent=None, joint="shoulder", kind="revolute", axis=(0, 1, 0),
    ...                   mass=1.0, com=(0, 0, -0.5), inertia=np.diag([0.1, 0.1, 0.01]))
    >>> model = b.build()
    """

    def __init__(self, gravity: ArrayLike = (0.0, 0.0, -9.81), *, name: str = "") -> None:
        """gravity : (3,) in the world frame. name : the robot's name (Model.name)."""
        self._name = checked_instance(name, "name", str, "")
        self._gravity = checked_array(gravity, "gravity", (3,))
        self._bodies: list[dict[str, Any]] = []
        self._frames: list[dict[str, Any]] = []
        self._body_index: dict[str, int] = {}
        self._collision: list[BodyShape] = []
        self._visual: list[BodyShape] = []

    def body_index(self, name: str | None) -> int:
        """Index of a body by name; None means the world (−1)."""
        if name is None:
            return -1
        if name not in self._body_index:
            raise ValueError(f"body {name!r} has not been added")
        return self._body_index[name]

    def add_body(
        self,
        name: str,
        *,
        parent: str | None,
        joint: str,
        kind: str,
        placement: Pose | None = None,
        axis: ArrayLike = (0.0, 0.0, 1.0),
        mass: float = 0.0,
        com: ArrayLike = (0.0, 0.0, 0.0),
        inertia: ArrayLike = ((0.0, 0.0, 0.0),) * 3,
        lower: ArrayLike | None = None,
        upper: ArrayLike | None = None,
        velocity_limit: ArrayLike | None = None,
        effort_limit: ArrayLike | None = None,
        damping: ArrayLike = 0.0,
    ) -> int:
        """Adds a body moved by a joint from `parent` (a body name, or None for the world).

        placement : (position (3,), orientation) of the joint frame in the parent body's frame at
            q = 0; the body frame is the joint frame.
        axis : (3,) joint axis in the joint frame (revolute, continuous, prismatic), normalized here.
        mass, com (3,), inertia (3, 3): the body's inertia, com and rotational inertia about the com
            in the body frame.
        lower, upper : position limits (1-dof joints); velocity_limit, effort_limit, damping: per dof.
        Returns the body index. The body's frame and its joint's frame are added as named frames.
        """
        if kind not in JOINT_KINDS:
            raise ValueError(f"joint {joint!r}: kind must be one of {JOINT_KINDS}, got {kind!r}")
        if name in self._body_index:
            raise ValueError(f"body {name!r} is added twice")
        parent_index = self.body_index(parent)
        if kind == "floating" and parent_index != -1:
            raise ValueError(f"joint {joint!r}: a floating joint must connect a body to the world")
        unit_axis = checked_array(axis, f"joint {joint!r} axis", (3,))
        norm = np.linalg.norm(unit_axis)
        if kind != "floating" and norm == 0.0:
            raise ValueError(f"joint {joint!r}: axis must be nonzero")
        unit_axis = unit_axis / norm if norm > 0.0 else np.array([0.0, 0.0, 1.0])
        mass, com, inertia = check_inertia(mass, com, inertia, f"body {name!r}")
        nq, nv = _NQ[kind], _NV[kind]
        unbounded = kind in ("continuous", "floating")

        def per_dof(value: ArrayLike | None, size: int, default: float, what: str) -> FloatArray:
            if value is None or unbounded and what in ("lower", "upper"):
                return np.full(size, default)
            name = f"joint {joint!r} {what}"
            array = float_array(value, name)  # one value for every dof, or one per dof
            return np.broadcast_to(checked_array(array, name, () if array.ndim == 0 else (size,), infinite=True), size)

        body: dict[str, Any] = {
            "name": name,
            "joint": joint,
            "kind": kind,
            "parent": parent_index,
            "placement": _placement(placement, f"joint {joint!r} placement"),
            "axis": unit_axis,
            "mass": mass,
            "com": com,
            "inertia": inertia,
            "lower": per_dof(lower, nq, -np.inf, "lower"),
            "upper": per_dof(upper, nq, np.inf, "upper"),
            "velocity_limit": per_dof(velocity_limit, nv, np.inf, "velocity"),
            "effort_limit": per_dof(effort_limit, nv, np.inf, "effort"),
            "damping": per_dof(damping, nv, 0.0, "damping"),
        }
        if np.any(body["lower"] > body["upper"]):
            raise ValueError(f"joint {joint!r}: lower limit exceeds upper limit")
        self._body_index[name] = len(self._bodies)
        self._bodies.append(body)
        self.add_frame(name, name)
        if joint != name:
            self.add_frame(joint, name)
        return self._body_index[name]

    def add_frame(self, name: str, body: str | None, placement: Pose | None = None) -> None:
        """Adds a named frame fixed in `body` (a body name, or None for the world) at `placement`."""
        if any(f["name"] == name for f in self._frames):
            raise ValueError(f"frame {name!r} is added twice")
        self._frames.append(
            {
                "name": name,
                "body": self.body_index(body),
                "placement": _placement(placement, f"frame {name!r} placement"),
            }
        )

    def add_shape(
        self, body: str | None, shape: Shape | MeshGeometry, *, link: str | None = None, collision: bool = True
    ) -> None:
        """Attaches a shape (its offset is its pose in the body frame) to `body` (name or None)."""
        entry = BodyShape(self.body_index(body), link if link is not None else (body or "world"), shape)
        (self._collision if collision else self._visual).append(entry)

    def build(self) -> Model:
        """The immutable Model. ValueError when some joint moves no inertia (M would be singular)."""
        model = Model(self)
        _check_mass_matrix(model, "")
        return model


def _check_mass_matrix(model: Model, where: str) -> None:
    """ValueError, prefixed by `where`, when some joint of the model moves no inertia: its block of
    the mass matrix would be singular, and the algorithms that solve with M would return NaN."""
    if not model.nv:
        return
    from .algorithms import crba, neutral  # algorithms import this module

    M = crba(model, neutral(model))
    scale = max(1.0, float(np.abs(M).max()))
    for body, (joint, first) in enumerate(zip(model.joint_names, model.joint_v_index)):
        last = first + _NV[model.joint_kinds[body]]
        block = M[first:last, first:last]
        if np.linalg.eigvalsh(block).min() <= 1e-12 * scale:
            raise ValueError(
                f"{where}joint {joint!r} moves no mass or inertia along its axis (singular mass matrix): the "
                f"bodies it moves (body {model.body_names[body]!r} and its descendants) need mass or inertia"
            )
