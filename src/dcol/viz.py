"""dcol's geometry and simulations in a web browser: shapes, scenes, robots, contacts, DCOL's witness
points and scaled shapes, and rollouts as animations with a time slider.

Design note. The viewer is built on viser (the ``viz`` extra). Of the maintained packages that draw
3-D scenes in a browser from Python, viser both serves a live page (:meth:`Viewer.serve`) and writes a
self-contained HTML file (:meth:`Viewer.save_html`): its three.js client and the recorded scene are
inlined in the page, which needs no server and no network and plays a recording with a time slider,
pause and speed control. meshcat's static HTML plays offline too, but its Python package has had no
release since 2021 and its export goes through a separate server process; trimesh's HTML fetches
three.js from the network and does not animate. viser keeps its scene on its server, so a Viewer
starts one on a free loopback port even when it only writes files.

Everything is drawn in world coordinates, z up (docs/conventions.md). Shapes are tessellated by
:func:`dcol.geom.tessellate.surface_mesh` (curved ones as inscribed polyhedra). A robot's bodies are
frame nodes posed by the model's forward kinematics (:func:`dcol.dynamics.frame_placement`), with
their geometry as children in the body frame, so an animation moves only the body frames. Node names
are paths: everything an ``add_*`` call or :meth:`Viewer.animate` draws lies under ``/NAME``.
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from dcol.dynamics import BatchRollout, Model, Rollout, Step, World, frame_placement, neutral
from dcol.dynamics.urdf import MeshGeometry
from dcol.geom import ContactSet, DistanceResult, ProximityResult, Scene, Shape, proximity
from dcol.geom.rotations import rotation_matrix
from dcol.geom.tessellate import surface_mesh
from dcol.typing import ArrayLike, FloatArray, IntArray
from dcol.validation import checked_array, checked_integer, checked_interval, checked_positive, float_array, shape_error

if TYPE_CHECKING:
    import viser

__all__ = ["Viewer", "show", "robot_viewer"]

_MISSING_VISER = 'dcol.viz draws with viser, which is not installed: pip install "dcol[viz]"'

# Colours (RGB, 0–255): tab10 for shapes and scene bodies, one grey for robot visuals, a translucent
# orange for collision geometry so it reads as an overlay on the visuals.
_PALETTE = (
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
)
_VISUAL_COLOR = (170, 178, 190)
_COLLISION_COLOR = (255, 140, 0)
_COLLISION_OPACITY = 0.5
_SCALED_OPACITY = 0.3
_CONTACT_COLOR = (214, 39, 40)
_NORMAL_COLOR = (20, 40, 160)
_WITNESS_COLOR = (0, 0, 0)
_RESOLUTION = 32  # points around each full circle of a curved surface

# Arrows and points are sized relative to the scene: normals a tenth of its diagonal (visible, yet
# short beside the shapes), points and arrow heads fractions of the normals' length.
_NORMAL_FRACTION = 0.1
_DEFAULT_NORMAL_LENGTH = 0.1  # m, before anything sized the scene
_POINT_FRACTION = 0.12
_SHAFT_FRACTION = 0.03
_HEAD_RADIUS_FRACTION = 0.08
_HEAD_LENGTH_FRACTION = 0.25

# The last frame of an animation stays on screen this long (s) before the page loops to the start.
_FINAL_HOLD = 1.0
# The ground grid: cells of 10 cm, sections of 1 m, at least 2 m across and twice the robot's reach.
_GRID_CELL = 0.1
_GRID_SECTION = 1.0
_GRID_MIN_SIZE = 2.0
# The camera looks at the centre of everything drawn from this direction (front right, above),
# at a distance of this many times the bounding box's diagonal.
_CAMERA_DIRECTION = np.array([1.0, -1.6, 0.9]) / np.linalg.norm([1.0, -1.6, 0.9])
_CAMERA_DISTANCE = 0.8


def _checked_name(name: object) -> str:
    if not isinstance(name, str) or not name or "/" in name:
        raise ValueError(f"name must be a non-empty string without '/', got {name!r}")
    return name


def _checked_color(color: ArrayLike | None, default: tuple[int, int, int]) -> tuple[int, int, int]:
    """An RGB triple of integers in [0, 255] (default for None)."""
    if color is None:
        return default
    values = float_array(color, "color")
    if values.shape != (3,) or not np.all((values >= 0) & (values <= 255) & (values == np.round(values))):
        raise ValueError(f"color must be 3 integers in [0, 255] (red, green, blue), got {color!r}")
    red, green, blue = (int(v) for v in values)
    return red, green, blue


def _checked_opacity(opacity: object) -> float | None:
    """None (opaque) or a number in (0, 1]."""
    return None if opacity is None else checked_interval(opacity, "opacity", 0.0, 1.0, open_low=True)


def _unique_labels(names: Sequence[str | None], fallback: str) -> list[str]:
    """Node labels for named things: the name ('/' replaced), ``fallback + index`` without one, and
    ``_index`` appended to a repeated label so no two nodes collide."""
    labels = [(name or f"{fallback}{i}").replace("/", "_") for i, name in enumerate(names)]
    return [label if labels.count(label) == 1 else f"{label}_{i}" for i, label in enumerate(labels)]


def _body_frame_mesh(geometry: Shape | MeshGeometry) -> tuple[FloatArray, IntArray]:
    """Triangle mesh (vertices (V, 3) float64, faces (F, 3) int64) of a model's geometry in its body
    frame: a shape tessellated with its offset, a mesh file loaded, scaled and placed by its offset."""
    if isinstance(geometry, MeshGeometry):
        mesh = geometry.load()
        vertices = mesh.vertices @ geometry.offset_rotation.T + geometry.offset_position
        return vertices, np.asarray(mesh.faces, dtype=np.int64)
    return surface_mesh(geometry, resolution=_RESOLUTION)


def _check_something_drawn(visual: bool, collision: bool | None) -> None:
    if not visual and collision is False:
        raise ValueError("visual=False and collision=False leave nothing to draw")


def _collision_geometry(robot: Model | World) -> list[tuple[int, Shape | MeshGeometry]]:
    """(model body, geometry) of what collides: a World's scene shapes (meshes as the convex hulls it
    collides with; its ground left out, the viewer draws a grid), or a Model's collision geometry as
    declared (mesh files as they are)."""
    if isinstance(robot, Model):
        return [(entry.body, entry.shape) for entry in robot.collision_shapes]
    scene, model_body = robot.scene, robot.scene_body_of_model
    ground = [robot.ground and model_body[s] < 0 and name == "ground" for s, name in enumerate(scene.body_names)]
    return [
        (int(model_body[body]), shape) for shape, body in zip(scene.shapes, scene.body_of_shape) if not ground[body]
    ]


@dataclass
class _Animation:
    """Frames shown at playback times (F,) float64 ascending, from 0; show(j) puts frame j on screen."""

    times: FloatArray
    show: Callable[[int], None]
    current: int = field(default=0)

    def show_at(self, t: float) -> None:
        frame = max(0, int(np.searchsorted(self.times, t, side="right")) - 1)
        if frame != self.current:
            self.current = frame
            self.show(frame)


class _RobotNodes:
    """A model's geometry under frame nodes, one per body and group (visual, collision)."""

    def __init__(self, viewer: Viewer, root: str, robot: Model | World, visual: bool, collision: bool | None) -> None:
        model = robot.model if isinstance(robot, World) else robot
        groups: list[tuple[str, list[tuple[int, Shape | MeshGeometry]], tuple[int, int, int], float | None]] = []
        if visual:
            visuals = [(entry.body, entry.shape) for entry in model.visual_shapes]
            groups.append(("visual", visuals, _VISUAL_COLOR, None))
        if collision or (collision is None and not (visual and model.visual_shapes)):
            groups.append(("collision", _collision_geometry(robot), _COLLISION_COLOR, _COLLISION_OPACITY))
        self.model = model
        labels = dict(zip([-1, *range(model.nbodies)], _unique_labels(["world", *model.body_names], "body")))
        # (model body, frame node) per drawn body; body-frame vertices per model body for the bounds.
        self._frames: list[tuple[int, Any]] = []
        self._points: dict[int, list[FloatArray]] = {}
        scene = viewer._server.scene
        for group, items, color, opacity in groups:
            for body in sorted({body for body, _ in items}):
                self._frames.append((body, scene.add_frame(f"{root}/{group}/{labels[body]}", show_axes=False)))
            for k, (body, geometry) in enumerate(items):
                vertices, faces = _body_frame_mesh(geometry)
                scene.add_mesh_simple(
                    f"{root}/{group}/{labels[body]}/{k}", vertices, faces, color=color, opacity=opacity
                )
                self._points.setdefault(body, []).append(vertices)
        self.bodies = sorted({body for body, _ in self._frames if body >= 0})

    def poses(self, q: FloatArray) -> dict[int, tuple[FloatArray, FloatArray]]:
        """Per drawn model body, its positions (F, 3) and quaternions (F, 4) at configurations q (F, nq)."""
        return {body: frame_placement(self.model, q, self.model.body_names[body]) for body in self.bodies}

    def show(self, poses: dict[int, tuple[FloatArray, FloatArray]], frame: int) -> None:
        for body, node in self._frames:
            if body >= 0:
                node.position, node.wxyz = poses[body][0][frame], poses[body][1][frame]

    def extent(self, poses: dict[int, tuple[FloatArray, FloatArray]], frame: int) -> FloatArray:
        """(V, 3) float64 world points of all drawn geometry at the frame (world-fixed bodies included)."""
        points = []
        for body, body_points in self._points.items():
            vertices = np.vstack(body_points)
            if body >= 0:
                position, quaternion = poses[body][0][frame], poses[body][1][frame]
                vertices = vertices @ rotation_matrix(quaternion).T + position
            points.append(vertices)
        return np.vstack(points)


def _add_normals(scene: Any, node: str, points: ArrayLike, normals: ArrayLike, length: float) -> Any:
    """Arrows of the given length (m) from points (K, 3) along unit normals (K, 3), as one node."""
    starts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    ends = starts + length * np.asarray(normals, dtype=np.float64).reshape(-1, 3)
    return scene.add_arrows(
        node,
        np.stack([starts, ends], axis=1),
        colors=_NORMAL_COLOR,
        shaft_radius=_SHAFT_FRACTION * length,
        head_radius=_HEAD_RADIUS_FRACTION * length,
        head_length=_HEAD_LENGTH_FRACTION * length,
    )


class _ContactNodes:
    """Contact points and normal arrows under one node, replaced as the contacts change."""

    def __init__(self, viewer: Viewer, root: str, normal_length: float) -> None:
        self._scene = viewer._server.scene
        self._root = root
        self._length = normal_length
        self._nodes: list[Any] = []

    def show(self, contacts: ContactSet | None) -> None:
        if contacts is None or len(contacts) == 0:
            for node in self._nodes:
                node.visible = False
            return
        length = self._length
        self._nodes = [
            self._scene.add_point_cloud(
                f"{self._root}/points",
                np.asarray(contacts.point, dtype=np.float32),
                colors=_CONTACT_COLOR,
                point_size=_POINT_FRACTION * length,
                point_shape="circle",
                precision="float32",
            ),
            _add_normals(self._scene, f"{self._root}/normals", contacts.point, contacts.normal, length),
        ]


class Viewer:
    """A 3-D scene for the browser: shapes, scenes, robots, contacts and rollouts, written as one
    HTML file that plays offline (:meth:`save_html`) or served live (:meth:`serve`).

    Each ``add_*`` method and :meth:`animate` draws under the node ``/NAME`` (``name``: unique, without
    '/'; by default the kind of object and a number) and returns that node's name. Use as a context
    manager, or call :meth:`close`, to stop the server.

    Parameters
    ----------
    host : str, the address the live page is served on (default loopback only).
    port : int, its port; 0 (default) takes a free one (see :attr:`url`).

    Raises
    ------
    ImportError
        Naming the ``viz`` extra, when viser is not installed.
    """

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0) -> None:
        try:
            import viser
        except ImportError as err:
            raise ImportError(_MISSING_VISER) from err
        port = checked_integer(port, "port", minimum=0, maximum=65535)
        with contextlib.redirect_stdout(io.StringIO()):  # viser's banner; serve() says where the page is
            self._server: viser.ViserServer = viser.ViserServer(host=host, port=port, verbose=False)
        self._lower = np.full(3, np.inf)
        self._upper = np.full(3, -np.inf)
        self._names: set[str] = set()
        self._counts: dict[str, int] = {}
        self._animations: list[_Animation] = []
        self._closed = False

    @property
    def url(self) -> str:
        """str, the address of the live page."""
        return f"http://{self._server.get_host()}:{self._server.get_port()}"

    def close(self) -> None:
        """Stops the server (files written stay valid); closing again does nothing."""
        if not self._closed:
            self._closed = True
            with contextlib.redirect_stdout(io.StringIO()):
                self._server.stop()

    def __enter__(self) -> Viewer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- bookkeeping ----------------------------------------------------------------------------------

    def _claim(self, name: str | None, kind: str) -> str:
        """The root node of a new object: ``/name``, or ``/kindN`` with the next free N."""
        if name is None:
            while name is None or name in self._names:
                self._counts[kind] = self._counts.get(kind, -1) + 1
                name = f"{kind}{self._counts[kind]}"
        elif _checked_name(name) in self._names:
            raise ValueError(f"name {name!r} is already drawn in this viewer")
        self._names.add(name)
        return "/" + name

    def _include(self, points: ArrayLike) -> None:
        """Grows the box that frames the camera to hold points (N, 3)."""
        points = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        if len(points):
            self._lower = np.minimum(self._lower, points.min(axis=0))
            self._upper = np.maximum(self._upper, points.max(axis=0))

    def _normal_length(self, normal_length: float | None) -> float:
        if normal_length is not None:
            return checked_positive(normal_length, "normal_length")
        if not np.all(np.isfinite(self._lower)):
            return _DEFAULT_NORMAL_LENGTH
        return _NORMAL_FRACTION * float(np.linalg.norm(self._upper - self._lower)) or _DEFAULT_NORMAL_LENGTH

    def _next_color(self) -> tuple[int, int, int]:
        return _PALETTE[len(self._names) % len(_PALETTE)]

    def _mesh(
        self, node: str, vertices: FloatArray, faces: IntArray, color: tuple[int, int, int], opacity: float | None
    ) -> None:
        self._server.scene.add_mesh_simple(node, vertices, faces, color=color, opacity=opacity)
        self._include(vertices)

    # --- what can be drawn ------------------------------------------------------------------------------

    def add_shape(
        self,
        shape: Shape,
        r: ArrayLike | None = None,
        q: ArrayLike | None = None,
        *,
        name: str | None = None,
        color: ArrayLike | None = None,
        opacity: float | None = None,
    ) -> str:
        """Draws a dcol.geom shape (a ConvexMesh too) at body pose (r, q), its offset applied.

        Parameters
        ----------
        shape : a dcol.geom shape.
        r : (3,) float64 body position, default the origin.
        q : (4,) float64 quaternion ``[w, x, y, z]`` or (3, 3) rotation matrix, default the identity.
        color : (3,) integers in [0, 255], default the next colour of a palette.
        opacity : float in (0, 1], default opaque.
        """
        if not isinstance(shape, Shape):
            raise TypeError(f"shape must be a dcol.geom shape, got {type(shape).__name__}")
        color = _checked_color(color, self._next_color())
        opacity = _checked_opacity(opacity)
        root = self._claim(name, "shape")
        self._mesh(root, *surface_mesh(shape, r, q, resolution=_RESOLUTION), color, opacity)
        return root

    def add_scene(
        self, scene: Scene, r: ArrayLike, q: ArrayLike, *, name: str | None = None, opacity: float | None = None
    ) -> str:
        """Draws every shape of a dcol.geom.Scene at its body's pose, one colour per body.

        Parameters
        ----------
        scene : dcol.geom.Scene with B bodies.
        r : (B, 3) float64 body positions.
        q : (B, 4) float64 quaternions ``[w, x, y, z]`` or (B, 3, 3) rotation matrices.
        opacity : float in (0, 1], default opaque.

        Notes
        -----
        Nodes: ``/NAME/BODY/K`` for the K-th shape of the scene, BODY the body's name (or ``bodyI``).
        """
        if not isinstance(scene, Scene):
            raise TypeError(f"scene must be a dcol.geom.Scene, got {type(scene).__name__}")
        count = scene.num_bodies
        positions = checked_array(r, "r", (("num_bodies", count), 3))
        orientations = float_array(q, "q")
        if orientations.shape not in ((count, 4), (count, 3, 3)):
            raise shape_error("q", [(("num_bodies", count), 4), (("num_bodies", count), 3, 3)], orientations.shape)
        opacity = _checked_opacity(opacity)
        root = self._claim(name, "scene")
        labels = _unique_labels(scene.body_names, "body")
        for k, (shape, body) in enumerate(zip(scene.shapes, scene.body_of_shape)):
            vertices, faces = surface_mesh(shape, positions[body], orientations[body], resolution=_RESOLUTION)
            self._mesh(f"{root}/{labels[body]}/{k}", vertices, faces, _PALETTE[body % len(_PALETTE)], opacity)
        return root

    def add_robot(
        self,
        robot: Model | World,
        q: ArrayLike | None = None,
        *,
        name: str | None = None,
        visual: bool = True,
        collision: bool | None = None,
    ) -> str:
        """Draws a model at configuration q: its visual geometry, its collision geometry, or both.

        Parameters
        ----------
        robot : dcol.dynamics.Model, or a World, whose collision geometry is then the convex hulls its
            contacts are computed on (a Model's is its declared geometry, mesh files as they are), and
            whose ground (if any) is drawn as a grid.
        q : (nq,) float64 configuration, default :func:`dcol.dynamics.neutral`.
        visual : bool, draw the visual geometry (nodes ``/NAME/visual/BODY/K``).
        collision : bool, draw the collision geometry, translucent (``/NAME/collision/BODY/K``);
            None (default) draws it only where the model has no visual geometry.
        """
        model = self._robot_model(robot)
        configuration = neutral(model) if q is None else checked_array(q, "q", (("nq", model.nq),))
        _check_something_drawn(visual, collision)
        root = self._claim(name, "robot")
        nodes = _RobotNodes(self, root, robot, visual, collision)
        poses = nodes.poses(configuration[None])
        nodes.show(poses, 0)
        self._include(nodes.extent(poses, 0))
        self._add_ground(root, robot)
        return root

    @staticmethod
    def _robot_model(robot: object) -> Model:
        if isinstance(robot, World):
            return robot.model
        if isinstance(robot, Model):
            return robot
        raise TypeError(f"robot must be a dcol.dynamics Model or World, got {type(robot).__name__}")

    def _add_ground(self, root: str, robot: Model | World) -> None:
        """A World's ground as a grid under what is drawn so far (no box: it would dwarf the robot)."""
        if not (isinstance(robot, World) and robot.ground):
            return
        center = 0.5 * (self._lower + self._upper)
        reach = float(np.max(self._upper[:2] - self._lower[:2]))
        size = max(_GRID_MIN_SIZE, 2.0 * reach)
        self._server.scene.add_grid(
            f"{root}/ground",
            width=size,
            height=size,
            cell_size=_GRID_CELL,
            section_size=_GRID_SECTION,
            position=(center[0], center[1], robot.ground_height),
        )

    def add_contacts(self, contacts: ContactSet, *, name: str | None = None, normal_length: float | None = None) -> str:
        """Draws contact points (``/NAME/points``) and their normals as arrows from a to b
        (``/NAME/normals``): a dcol.geom.ContactSet, a scene's SceneContacts or a step's contacts.

        normal_length : float > 0, the arrows' length in metres; default a tenth of the diagonal of
            what is drawn so far.
        """
        if not isinstance(contacts, ContactSet):
            raise TypeError(f"contacts must be a dcol.geom.ContactSet, got {type(contacts).__name__}")
        length = self._normal_length(normal_length)
        root = self._claim(name, "contacts")
        _ContactNodes(self, root, length).show(contacts)
        self._include(contacts.point)
        return root

    def add_proximity(
        self,
        a: Shape,
        r_a: ArrayLike,
        q_a: ArrayLike,
        b: Shape,
        r_b: ArrayLike,
        q_b: ArrayLike,
        *,
        result: ProximityResult | DistanceResult | None = None,
        scaled: bool = False,
        name: str | None = None,
        normal_length: float | None = None,
    ) -> str:
        """Draws two shapes with their witness points and normal, and optionally DCOL's shapes scaled by α.

        Parameters
        ----------
        a, b : dcol.geom shapes; r_a, r_b : (3,) positions; q_a, q_b : (4,) quaternions or (3, 3).
        result : the pair's dcol.geom.ProximityResult (DCOL's p_a, p_b, DCOL eq. 29) or DistanceResult
            (the closest points); default :func:`dcol.geom.proximity` of the pair.
        scaled : bool, also draw each shape scaled by α about the origin of its own frame (DCOL §III:
            the scaled shapes touch at DCOL's point x, drawn too), translucent.
        normal_length : float > 0, the normal's length (m); default as :meth:`add_contacts`.

        Notes
        -----
        Nodes: ``/NAME/a``, ``/NAME/b``, with scaled ``/NAME/a_scaled``, ``/NAME/b_scaled``; the points
        ``/NAME/witness`` (p_a, p_b, and x when scaled), ``/NAME/segment`` between p_a and p_b, and
        ``/NAME/normal`` at p_a, from a to b.
        """
        for shape, label in ((a, "a"), (b, "b")):
            if not isinstance(shape, Shape):
                raise TypeError(f"{label} must be a dcol.geom shape, got {type(shape).__name__}")
        if result is None:
            result = proximity(a, r_a, q_a, b, r_b, q_b)
        elif not isinstance(result, (ProximityResult, DistanceResult)):
            raise TypeError(f"result must be a ProximityResult or a DistanceResult, got {type(result).__name__}")
        if scaled and not isinstance(result, ProximityResult):
            raise ValueError("scaled=True draws DCOL's scaled shapes, which need a ProximityResult as result")
        first = len(self._names)
        root = self._claim(name, "proximity")
        alpha = float(result.alpha)
        witness = [np.asarray(result.p_a), np.asarray(result.p_b)]
        for k, (label, shape, r, q) in enumerate((("a", a, r_a, q_a), ("b", b, r_b, q_b))):
            color = _PALETTE[(first + k) % len(_PALETTE)]
            vertices, faces = surface_mesh(shape, r, q, resolution=_RESOLUTION)
            self._mesh(f"{root}/{label}", vertices, faces, color, 0.6 if scaled else None)
            if scaled:
                # The shape's own frame origin, about which DCOL scales it.
                origin = np.asarray(r, dtype=np.float64) + rotation_matrix(q) @ shape.offset_position
                self._mesh(
                    f"{root}/{label}_scaled", origin + alpha * (vertices - origin), faces, color, _SCALED_OPACITY
                )
        if isinstance(result, ProximityResult) and scaled:
            witness.append(np.asarray(result.x))
        length = self._normal_length(normal_length)
        scene = self._server.scene
        points = np.array(witness, dtype=np.float32)
        scene.add_point_cloud(
            f"{root}/witness", points, colors=_WITNESS_COLOR, point_size=_POINT_FRACTION * length, point_shape="circle"
        )
        scene.add_line_segments(
            f"{root}/segment", points[None, :2], colors=_WITNESS_COLOR, thickness=0.2 * _POINT_FRACTION * length
        )
        _add_normals(scene, f"{root}/normal", witness[0], result.normal, length)
        return root

    def animate(
        self,
        rollout: Rollout | BatchRollout,
        world: World,
        *,
        name: str | None = None,
        visual: bool = True,
        collision: bool | None = None,
        contacts: bool | None = None,
        slow_motion: float = 1.0,
        frame_rate: float = 60.0,
        normal_length: float | None = None,
    ) -> str:
        """Draws a rollout of a world as an animation: the robot moving, and each step's contacts.

        Parameters
        ----------
        rollout : World.rollout's Rollout (q (T + 1, nq), and its steps' contacts when it kept them:
            ``keep_steps=True`` or ``derivatives=True``), or rollout_batch's BatchRollout (N
            trajectories, drawn as N robots under ``/NAME/I``; it keeps no contacts).
        world : the World that made it (its model, time step and ground).
        visual, collision : as :meth:`add_robot`.
        contacts : bool, draw each step's contacts (those at its start; none on the final state) under
            ``/NAME/contacts``; None (default): when the rollout kept its steps.
        slow_motion : float > 0, the page plays the rollout this many times slower than real time (its
            time slider reads simulated time × slow_motion).
        frame_rate : float > 0, frames per second of playback: states are taken every
            round(1 / (frame_rate × dt × slow_motion)) steps (at least 1), and the final one.
        """
        if not isinstance(world, World):
            raise TypeError(f"world must be a dcol.dynamics.World, got {type(world).__name__}")
        if isinstance(rollout, Rollout):
            trajectories, steps = rollout.q[None], _kept_steps(rollout)
        elif isinstance(rollout, BatchRollout):
            trajectories, steps = rollout.q, None
        else:
            raise TypeError(f"rollout must be a Rollout or a BatchRollout, got {type(rollout).__name__}")
        if contacts and steps is None:
            raise ValueError(
                "contacts=True needs each step's contacts: a Rollout of World.rollout(..., keep_steps=True) "
                "(a BatchRollout keeps none)"
            )
        if trajectories.shape[-1] != world.model.nq:
            raise ValueError(
                f"rollout has configurations of {trajectories.shape[-1]} numbers, world's model nq = {world.model.nq}"
            )
        slow_motion = checked_positive(slow_motion, "slow_motion")
        frame_rate = checked_positive(frame_rate, "frame_rate")
        _check_something_drawn(visual, collision)
        last = trajectories.shape[1] - 1
        stride = max(1, round(1.0 / (frame_rate * world.dt * slow_motion)))
        frames = np.unique(np.r_[np.arange(0, last + 1, stride), last])
        root = self._claim(name, "rollout")
        robots, poses = [], []
        for i, trajectory in enumerate(trajectories):
            robot = _RobotNodes(self, root if steps is not None else f"{root}/{i}", world, visual, collision)
            robot_poses = robot.poses(trajectory[frames])
            self._include(robot.extent(robot_poses, 0))
            for position, _ in robot_poses.values():
                self._include(position)  # the bodies' paths, so the camera frames the whole motion
            robots.append(robot)
            poses.append(robot_poses)
        contact_nodes = None
        if contacts is not False and steps is not None:
            contact_nodes = _ContactNodes(self, f"{root}/contacts", self._normal_length(normal_length))
        step_contacts = [steps[k].contacts if steps is not None and k < last else None for k in frames]

        def show(frame: int) -> None:
            for robot, robot_poses in zip(robots, poses):
                robot.show(robot_poses, frame)
            if contact_nodes is not None:
                contact_nodes.show(step_contacts[frame])

        show(0)
        self._animations.append(_Animation(frames * world.dt * slow_motion, show))
        self._add_ground(root, world)
        return root

    # --- output -----------------------------------------------------------------------------------------

    def _timeline(self) -> FloatArray:
        """(K,) float64 playback times at which some animation changes frame, from 0."""
        return np.unique(np.concatenate([[0.0], *(animation.times for animation in self._animations)]))

    def _place_camera(self) -> None:
        """Points the initial camera at the centre of everything drawn, from the front right, above."""
        if not np.all(np.isfinite(self._lower)):
            return
        center = 0.5 * (self._lower + self._upper)
        diagonal = max(float(np.linalg.norm(self._upper - self._lower)), _DEFAULT_NORMAL_LENGTH)
        camera = self._server.initial_camera
        camera.look_at = center
        camera.position = center + _CAMERA_DISTANCE * diagonal * _CAMERA_DIRECTION

    def save_html(self, path: str | Path) -> Path:
        """Writes the scene as one self-contained HTML page (its folder made if missing) that opens
        offline in any browser; animations play with a time slider, pause and speed control, the last
        frame held a moment before they loop. Returns the path as a pathlib.Path."""
        output = Path(path)
        output.parent.mkdir(parents=True, exist_ok=True)
        self._place_camera()
        timeline = self._timeline()
        for animation in self._animations:
            animation.show_at(0.0)
        recording = self._server.get_scene_serializer()
        for previous, now in zip(timeline[:-1], timeline[1:]):
            recording.insert_sleep(float(now - previous))
            for animation in self._animations:
                animation.show_at(float(now))
        if self._animations:
            recording.insert_sleep(_FINAL_HOLD)
        output.write_text(recording.as_html(), encoding="utf-8")
        return output

    def serve(self, seconds: float | None = None) -> None:
        """Serves the live page at :attr:`url` (printed) for this many seconds, or until Ctrl-C
        (None), then stops the server. Animations get a time slider and a button that plays them."""
        duration = None if seconds is None else checked_positive(seconds, "seconds")
        self._place_camera()
        if self._animations:
            self._add_time_controls()
        print(f"dcol viewer at {self.url} ({'Ctrl-C stops it' if duration is None else f'for {duration:g} s'})")
        try:
            if duration is None:
                _sleep_forever()
            else:
                time.sleep(duration)
        except KeyboardInterrupt:
            pass
        finally:
            self.close()

    def _add_time_controls(self) -> None:
        timeline = self._timeline()
        gui = self._server.gui
        step = float(np.min(np.diff(timeline))) if len(timeline) > 1 else 1.0
        slider = gui.add_slider("time (s)", min=0.0, max=float(timeline[-1]), step=step, initial_value=0.0)
        play = gui.add_button("play")

        @slider.on_update
        def _(_: object) -> None:
            for animation in self._animations:
                animation.show_at(slider.value)

        @play.on_click
        def _(_: object) -> None:
            for previous, now in zip(timeline[:-1], timeline[1:]):
                time.sleep(float(now - previous))
                for animation in self._animations:
                    animation.show_at(float(now))


def _kept_steps(rollout: Rollout) -> list[Step] | None:
    """The rollout's Step objects, or None when it ran without keeping them."""
    try:
        return rollout.steps
    except ValueError:  # World.rollout keeps them only with keep_steps or derivatives
        return None


def _sleep_forever() -> None:
    while True:
        time.sleep(3600.0)


def robot_viewer(
    robot: str,
    q: ArrayLike | None = None,
    *,
    collision: bool = False,
    contacts: bool = False,
    floating_base: bool | None = None,
    port: int = 0,
) -> Viewer:
    """A Viewer showing one robot, as ``dcol view`` does.

    Parameters
    ----------
    robot : str, a URDF file or a robot's name (:func:`dcol.dynamics.load_robot`).
    q : (nq,) float64 configuration, default the neutral one.
    collision : bool, also draw the collision geometry (the convex hulls contacts are computed on).
    contacts : bool, set the robot in a World with a ground and draw its contacts with it; a floating
        base at the default q is first lowered (or raised) until its lowest collision point touches
        the ground.
    floating_base : bool, for a URDF file: attach its root link by a floating joint (names take
        their usual base).
    port : int, the live page's port (0: a free one).
    """
    from dcol.dynamics import load_robot

    model = load_robot(robot) if floating_base is None else load_robot(robot, floating_base=floating_base)
    configuration = neutral(model) if q is None else checked_array(q, "q", (("nq", model.nq),)).copy()
    viewer = Viewer(port=port)
    try:
        if not (collision or contacts):
            viewer.add_robot(model, configuration, name="robot")
            return viewer
        world = World(model)
        floating = model.nbodies > 0 and model.joint_kinds[0] == "floating"
        if contacts and q is None and floating:
            moving = world.scene_body_of_model >= 0
            lower, _ = world.scene.bounding_boxes(*world.body_poses(configuration))
            lowest = lower[moving[world.scene.body_of_shape], 2].min()
            configuration[model.joint_q_index[0] + 2] += world.ground_height - lowest
        viewer.add_robot(world, configuration, name="robot", collision=collision)
        if contacts:
            found = world.scene.contacts(
                *world.body_poses(configuration),
                margin=world.contact_margin,
                feature_tolerance=world.feature_tolerance,
            )
            viewer.add_contacts(found, name="contacts")
    except BaseException:
        viewer.close()
        raise
    return viewer


def show(item: object, *args: Any, path: str | Path | None = None, **kwargs: Any) -> Viewer:
    """One call to look at one thing: a Viewer with the item drawn, written to ``path`` (an HTML file)
    or else served until Ctrl-C, and returned (its server stopped).

    item and the arguments that follow it, by the item's type:
    a dcol.geom shape, r, q → :meth:`Viewer.add_shape`; a Scene, r, q → :meth:`Viewer.add_scene`;
    a Model or World, q → :meth:`Viewer.add_robot`; a Rollout or BatchRollout, world →
    :meth:`Viewer.animate`; a ContactSet → :meth:`Viewer.add_contacts`. Keywords go to the same method.
    """
    adders: tuple[tuple[type | tuple[type, ...], Callable[[Viewer], Callable[..., str]]], ...] = (
        (Shape, lambda viewer: viewer.add_shape),
        (Scene, lambda viewer: viewer.add_scene),
        ((Model, World), lambda viewer: viewer.add_robot),
        ((Rollout, BatchRollout), lambda viewer: viewer.animate),
        (ContactSet, lambda viewer: viewer.add_contacts),
    )
    adder = next((adder for kind, adder in adders if isinstance(item, kind)), None)
    if adder is None:
        raise TypeError(
            "item must be a dcol.geom shape, Scene or ContactSet, a dcol.dynamics Model or World, or a "
            f"Rollout or BatchRollout, got {type(item).__name__}"
        )
    viewer = Viewer()
    try:
        adder(viewer)(item, *args, **kwargs)
        if path is not None:
            viewer.save_html(path)
        else:
            viewer.serve()
    finally:
        viewer.close()
    return viewer
