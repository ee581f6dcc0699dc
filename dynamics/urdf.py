"""URDF loading: links, joints (revolute, continuous, prismatic, fixed), inertials, limits, damping,
collision and visual geometry (box, sphere, cylinder, mesh), with an optional floating base.

Links joined by fixed joints are lumped into one body (their inertias combined in the body frame)
and stay available as named frames, as do all joints. Mesh files are found through ``package://``
URIs (a folder named after the package under one of ``package_dirs``, then under one of the folders
of the ``ROS_PACKAGE_PATH`` environment variable, as ROS and Pinocchio find them), ``file://`` URIs,
absolute paths and paths relative to the URDF file.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from dcol.geom.mesh import load_mesh
from dcol.geom.shapes import Box, Cylinder, Shape, Sphere
from dcol.typing import ArrayLike, FloatArray

from .model import Model, ModelBuilder, check_inertia, combine_inertias

if TYPE_CHECKING:
    import trimesh

__all__ = ["load_urdf", "MeshGeometry"]

_JOINT_KINDS: dict[str, str | None] = {
    "revolute": "revolute",
    "continuous": "continuous",
    "prismatic": "prismatic",
    "fixed": None,
}


@dataclass(frozen=True)
class MeshGeometry:
    """A mesh file attached to a body.

    path : str, resolved absolute path; scale : (3,) float64; offset_position (3,), offset_rotation
    (3, 3): pose of the mesh frame in the body frame.
    """

    path: str
    scale: tuple[float, ...]
    offset_position: FloatArray
    offset_rotation: FloatArray

    def load(self) -> trimesh.Trimesh:
        """The scaled mesh as a trimesh.Trimesh in the mesh frame (scenes loaded as one mesh)."""
        mesh = load_mesh(self.path)
        mesh.apply_scale(np.asarray(self.scale))
        return mesh


def _numbers(text: str | None, count: int, where: str, default: ArrayLike | None = None) -> FloatArray:
    if text is None:
        if default is None:
            raise ValueError(f"{where} is missing")
        return np.array(default, dtype=np.float64)
    try:
        values = np.array([float(t) for t in text.split()], dtype=np.float64)
    except ValueError as err:
        raise ValueError(f"{where} must be {count} numbers, got {text!r}") from err
    if values.shape != (count,) or not np.all(np.isfinite(values)):
        raise ValueError(f"{where} must be {count} finite numbers, got {text!r}")
    return values


def _rpy_matrix(rpy: FloatArray) -> FloatArray:
    """URDF fixed-axis roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll)."""
    (cr, cp, cy), (sr, sp, sy) = np.cos(rpy), np.sin(rpy)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def _origin(element: ET.Element, where: str) -> tuple[FloatArray, FloatArray]:
    """(R, p) of an element's <origin> (identity when absent)."""
    origin = element.find("origin")
    if origin is None:
        return np.eye(3), np.zeros(3)
    xyz = _numbers(origin.get("xyz"), 3, f"{where} <origin xyz>", (0.0, 0.0, 0.0))
    rpy = _numbers(origin.get("rpy"), 3, f"{where} <origin rpy>", (0.0, 0.0, 0.0))
    return _rpy_matrix(rpy), xyz


def _compose(a: tuple[FloatArray, FloatArray], b: tuple[FloatArray, FloatArray]) -> tuple[FloatArray, FloatArray]:
    return a[0] @ b[0], a[0] @ b[1] + a[1]


def _inertial(link: ET.Element, name: str) -> tuple[float, FloatArray, FloatArray]:
    """(mass, com, rotational inertia about the com) of a link in the link frame; zero when absent."""
    inertial = link.find("inertial")
    if inertial is None:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    where = f"link {name!r} <inertial>"
    mass = inertial.find("mass")
    if mass is None or mass.get("value") is None:
        raise ValueError(f"{where}: <mass value=...> is missing")
    inertia = inertial.find("inertia")
    if inertia is None:
        raise ValueError(f"{where}: <inertia> is missing")
    entries = {}
    for key in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"):
        try:
            entries[key] = float(inertia.get(key, "0"))
        except ValueError as err:
            raise ValueError(f"{where}: <inertia {key}> must be a number") from err
    I_frame = np.array(
        [
            [entries["ixx"], entries["ixy"], entries["ixz"]],
            [entries["ixy"], entries["iyy"], entries["iyz"]],
            [entries["ixz"], entries["iyz"], entries["izz"]],
        ]
    )
    R, p = _origin(inertial, where)
    value = _numbers(mass.get("value"), 1, f"{where} <mass value>")[0]
    return check_inertia(float(value), p, R @ I_frame @ R.T, where)


def _resolve(filename: str, where: str, base_dir: str | None, package_dirs: Sequence[str]) -> str:
    if filename.startswith("package://"):
        relative = filename[len("package://") :]
        package, _, rest = relative.partition("/")
        candidates = []
        for directory in package_dirs:
            candidates += [os.path.join(directory, package, rest), os.path.join(directory, rest)]
        if base_dir is not None:
            candidates.append(os.path.join(base_dir, rest))
    elif filename.startswith("file://"):
        candidates = [filename[len("file://") :]]
    elif os.path.isabs(filename):
        candidates = [filename]
    else:
        candidates = [os.path.join(base_dir or os.getcwd(), filename)]
    for path in candidates:
        if os.path.isfile(path):
            return os.path.abspath(path)
    raise ValueError(
        f"{where}: mesh file {filename!r} not found (looked in {candidates}; pass package_dirs or set ROS_PACKAGE_PATH)"
    )


def _geometry(
    element: ET.Element,
    where: str,
    to_body: tuple[FloatArray, FloatArray],
    base_dir: str | None,
    package_dirs: Sequence[str],
) -> Shape | MeshGeometry:
    """A dcol.geom shape or MeshGeometry posed in the body frame, or None for unsupported types."""
    geometry = element.find("geometry")
    if geometry is None or len(geometry) == 0:
        raise ValueError(f"{where}: <geometry> is missing")
    pose = _compose(to_body, _origin(element, where))
    shape = geometry[0]
    try:
        if shape.tag == "box":
            return Box(0.5 * _numbers(shape.get("size"), 3, f"{where} <box size>"), offset=(pose[1], pose[0]))
        if shape.tag == "sphere":
            return Sphere(float(shape.get("radius", "")), offset=(pose[1], pose[0]))
        if shape.tag == "cylinder":
            # URDF cylinders lie along z, dcol's along x: turn x onto z.
            x_to_z = np.array([[0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
            radius, length = float(shape.get("radius", "")), float(shape.get("length", ""))
            return Cylinder(radius, length, offset=(pose[1], pose[0] @ x_to_z))
    except (TypeError, ValueError) as err:
        raise ValueError(f"{where} <{shape.tag}>: {err}") from err
    if shape.tag == "mesh":
        filename = shape.get("filename")
        if filename is None:
            raise ValueError(f"{where} <mesh>: filename is missing")
        path = _resolve(filename, where, base_dir, package_dirs)
        scale = tuple(_numbers(shape.get("scale"), 3, f"{where} <mesh scale>", (1.0, 1.0, 1.0)))
        return MeshGeometry(path, scale, pose[1], pose[0])
    raise ValueError(f"{where}: geometry <{shape.tag}> is not supported (box, sphere, cylinder, mesh)")


def _combined(parts: list[tuple[float, FloatArray, FloatArray]]) -> dict[str, Any]:
    mass, com, inertia = combine_inertias(parts)
    return {"mass": mass, "com": com, "inertia": inertia}


def _joint_properties(joint: ET.Element, kind: str) -> dict[str, Any]:
    """Axis, limits and damping of a movable joint as ModelBuilder.add_body keywords."""
    where = f"joint {joint.get('name')!r}"
    axis_element = joint.find("axis")
    axis = _numbers(
        axis_element.get("xyz") if axis_element is not None else None, 3, f"{where} <axis xyz>", (1.0, 0.0, 0.0)
    )
    if not np.any(axis):
        raise ValueError(f"{where}: <axis xyz> must be nonzero")
    properties = {"axis": axis}
    limit = joint.find("limit")
    if limit is not None:
        for key, attribute in (
            ("lower", "lower"),
            ("upper", "upper"),
            ("velocity_limit", "velocity"),
            ("effort_limit", "effort"),
        ):
            if limit.get(attribute) is not None:
                properties[key] = _numbers(limit.get(attribute), 1, f"{where} <limit {attribute}>")[0]
    elif kind != "continuous":
        raise ValueError(f"{where}: a {kind} joint needs a <limit>")
    dynamics = joint.find("dynamics")
    if dynamics is not None:
        properties["damping"] = _numbers(dynamics.get("damping"), 1, f"{where} <dynamics damping>", (0.0,))[0]
    return properties


def _parse(source: str | bytes | os.PathLike[str]) -> tuple[ET.Element, str | None]:
    """The root element of a URDF given as XML text or bytes, or as a file path, and the folder
    relative mesh paths start from (None for XML given directly)."""
    if isinstance(source, (bytes, bytearray)):
        document: str | bytes = bytes(source)  # the XML itself: its declaration or BOM names the encoding
        base_dir = None
    elif isinstance(source, (str, os.PathLike)):
        text = os.fspath(source)
        xml = text.lstrip("\ufeff \t\r\n")  # an XML declaration must open the document
        if xml.startswith("<"):
            document, base_dir = xml, None
        elif os.path.isfile(text):
            with open(text, "rb") as file:
                document = file.read()
            base_dir = os.path.dirname(os.path.abspath(text))
        else:
            raise ValueError(f"URDF file {text!r} not found")
    else:
        raise TypeError(f"source must be a path or the URDF's XML (str or bytes), got {type(source).__name__}")
    try:
        root = ET.fromstring(document)
    except ET.ParseError as err:
        raise ValueError(f"URDF is not well-formed XML: {err}") from err
    xacro = "{http://www.ros.org/wiki/xacro}"
    for element in root.iter():
        if str(element.tag).startswith(xacro) or any("${" in value for value in element.attrib.values()):
            raise ValueError("this is a xacro file, not a URDF: expand it first (xacro FILE > FILE.urdf)")
    return root, base_dir


def load_urdf(
    source: str | bytes | os.PathLike[str],
    *,
    floating_base: bool = False,
    package_dirs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] = (),
    gravity: ArrayLike = (0.0, 0.0, -9.81),
    geometry: bool = True,
) -> Model:
    """Loads a URDF into a :class:`~dcol.dynamics.Model`.

    source : path to a .urdf file, or the URDF XML itself as a string or bytes (a byte-order mark
        is allowed).
    floating_base : bool, attach the root link to the world by a floating joint named "root_joint"
        (else the root link is fixed to the world).
    package_dirs : folders searched for ``package://NAME/...`` mesh URIs (as ``DIR/NAME/...``), before
        the folders of the ``ROS_PACKAGE_PATH`` environment variable (separated by os.pathsep).
    geometry : bool, load collision and visual geometry (mesh files must then exist).

    Raises ValueError naming the offending element for malformed URDFs: not XML, no <robot>, links
    or joints without names or repeated, a joint naming an unknown link, a link with two parents, no
    single root or a cycle, unsupported joint types, bad <origin>/<axis>/<limit> values, an
    inertial without mass or inertia or with a non-physical inertia, missing mesh files.
    """
    root, base_dir = _parse(source)
    if root.tag != "robot":
        raise ValueError(f"URDF root element must be <robot>, got <{root.tag}>")
    folders = [str(d) for d in ([package_dirs] if isinstance(package_dirs, (str, os.PathLike)) else package_dirs)]
    folders += [folder for folder in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if folder]

    links: dict[str, ET.Element] = {}
    for element in root.findall("link"):
        name = element.get("name")
        if not name:
            raise ValueError("a <link> has no name")
        if name in links:
            raise ValueError(f"link {name!r} is defined twice")
        links[name] = element
    if not links:
        raise ValueError("URDF has no <link>")

    # Per link: the joints to its children (with the child's name), the joint from its parent and
    # the parent's name.
    children: dict[str, list[tuple[ET.Element, str]]] = {name: [] for name in links}
    parent_joint: dict[str, ET.Element] = {}
    parent_link: dict[str, str] = {}
    joint_names: set[str] = set()
    for joint in root.findall("joint"):
        name = joint.get("name")
        if not name:
            raise ValueError("a <joint> has no name")
        if name in joint_names:
            raise ValueError(f"joint {name!r} is defined twice")
        joint_names.add(name)
        kind = joint.get("type")
        if kind not in _JOINT_KINDS:
            raise ValueError(f"joint {name!r}: type {kind!r} is not supported (revolute, continuous, prismatic, fixed)")
        ends = {}
        for role in ("parent", "child"):
            end = joint.find(role)
            link = end.get("link") if end is not None else None
            if link is None or link not in links:
                raise ValueError(f"joint {name!r}: {role} link {link!r} is not defined")
            ends[role] = link
        parent, child = ends["parent"], ends["child"]
        if child in parent_joint:
            raise ValueError(
                f"link {child!r} is the child of two joints ({parent_joint[child].get('name')!r}, {name!r})"
            )
        parent_joint[child] = joint
        parent_link[child] = parent
        children[parent].append((joint, child))

    roots = [name for name in links if name not in parent_joint]
    if not roots:
        raise ValueError(
            f"URDF has no root link: every link is some joint's child, so the joints {sorted(joint_names)} form a cycle"
        )
    if len(roots) > 1:
        raise ValueError(f"URDF must have exactly one root link, found {roots}")

    root_link = roots[0]
    visited = {root_link}
    stack = [root_link]
    order = []
    while stack:  # depth first, children in file order
        link = stack.pop()
        order.append(link)
        for joint, child in reversed(children[link]):
            if child in visited:
                raise ValueError(f"joint {joint.get('name')!r} closes a cycle at link {child!r}")
            visited.add(child)
            stack.append(child)
    if len(visited) != len(links):
        raise ValueError(f"links {sorted(set(links) - visited)} are not connected to the root (a cycle)")

    # Which body carries each link and where, then each body's inertia summed over its links.
    root_body = root_link if floating_base else None
    to_body: dict[str, tuple[str | None, tuple[FloatArray, FloatArray]]] = {
        root_link: (root_body, (np.eye(3), np.zeros(3)))
    }
    inertia_parts: dict[str | None, list[tuple[float, FloatArray, FloatArray]]] = {root_body: []}
    movable = []
    for link in order[1:]:
        joint = parent_joint[link]
        parent_body, parent_pose = to_body[parent_link[link]]
        placement = _compose(parent_pose, _origin(joint, f"joint {joint.get('name')!r}"))
        kind = _JOINT_KINDS[joint.get("type", "")]
        if kind is None:
            to_body[link] = (parent_body, placement)
        else:
            to_body[link] = (link, (np.eye(3), np.zeros(3)))
            inertia_parts[link] = []
            movable.append((link, joint, kind, parent_body, placement))
    for link in order:
        body, (R, p) = to_body[link]
        mass, com, inertia = _inertial(links[link], link)
        inertia_parts[body].append((mass, R @ com + p, R @ inertia @ R.T))

    builder = ModelBuilder(gravity=gravity, name=root.get("name", ""))
    if floating_base:
        builder.add_body(
            root_link, parent=None, joint="root_joint", kind="floating", **_combined(inertia_parts[root_link])
        )
    else:
        builder.add_frame(root_link, None)
    for link, joint, kind, parent_body, placement in movable:
        builder.add_body(
            link,
            parent=parent_body,
            joint=joint.get("name", ""),
            kind=kind,
            placement=(placement[1], placement[0]),
            **_joint_properties(joint, kind),
            **_combined(inertia_parts[link]),
        )
    for link in order[1:]:
        joint = parent_joint[link]
        body, (R, p) = to_body[link]
        if _JOINT_KINDS[joint.get("type", "")] is None:
            builder.add_frame(joint.get("name", ""), body, (p, R))
            builder.add_frame(link, body, (p, R))

    if geometry:
        for link in order:
            body, pose = to_body[link]
            for tag, collision in (("collision", True), ("visual", False)):
                for k, element in enumerate(links[link].findall(tag)):
                    shape = _geometry(element, f"link {link!r} <{tag}> {k}", pose, base_dir, folders)
                    builder.add_shape(body, shape, link=link, collision=collision)
    return builder.build()
