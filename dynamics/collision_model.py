"""Distances of a model's collision geometry to itself and to static obstacles, as functions of q.

A :class:`CollisionModel` holds a model's collision shapes (meshes by their convex hulls, as
:class:`dcol.dynamics.World` takes them), static obstacles (:class:`dcol.geom.Obstacle`) and the pairs
of them to check: every two shapes of different bodies except a body and its parent (the joint holds
them together) and the pairs of links a user excludes (an SRDF's ``disable_collisions``, see
:func:`disabled_collision_pairs`), and every moving shape against every obstacle. Its
:meth:`~CollisionModel.distances` gives, for one configuration or a batch (a trajectory's knots), per pair
whose bounding boxes grown by half the margin overlap (every pair within the margin, so that far pairs cost
nothing), DCOL's α (DCOL eq. 9), the signed distance with its witness points and normal and their
Jacobians with respect to q: the pair's derivatives along
its two bodies' rigid motions [δp; δθ] chained with the bodies' frame Jacobians, natively, so the columns
are q's tangent space (nv; a floating base's body-frame twist, as :func:`dcol.dynamics.integrate` steps
it), sparse by pair: each pair only over the dofs that move its two objects (:class:`PairJacobians`, whose
``dense`` gives all nv columns). One native call per batch, the GIL released, configurations spread over threads.

Pairs of polytopes (meshes' hulls), spheres, capsules, padded polygons and cylinders go to GJK/EPA for the distance
and to a GJK ray cast for α, without a cone program (a cylinder's features refined to rounding); the others (cones,
ellipsoids, and overlapping shapes whose cores are flat) to the cone programs of :func:`dcol.geom.proximity`
and :func:`dcol.geom.signed_distance` (docs/collision-constraints.md says which computes what).
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from dcol import _native
from dcol.geom import DISTANCE_SETTINGS, Obstacle, Shape
from dcol.geom.rotations import rotation_matrix
from dcol.printing import summary_repr
from dcol.solvers import SolverSettings
from dcol.typing import ArrayLike, FloatArray, Int8Array, IntArray
from dcol.validation import checked_instance, checked_interval, checked_threads

from .algorithms import checked_configurations
from .model import Model
from .simulation import _convex

__all__ = ["CollisionModel", "CollisionDistances", "PairJacobians", "disabled_collision_pairs"]

# Rows of the native Jacobian per pair: α, the distance, witness_a (3), witness_b (3), the normal (3).
_JACOBIAN_ROWS: dict[str, int | slice] = {
    "alpha": 0,
    "distance": 1,
    "witness_a": slice(2, 5),
    "witness_b": slice(5, 8),
    "normal": slice(8, 11),
}


@dataclass(frozen=True)
class PairJacobians:
    """The q-Jacobians of :meth:`CollisionModel.distances`' K pairs, sparse by pair.

    A pair's values depend on q only through the dofs that move its two objects (the joints of their bodies'
    chains up to the root; none for an obstacle), so each pair keeps those columns alone: pair k's are the dofs
    ``dofs[start[k]:start[k + 1]]`` (ascending) and ``values[start[k]:start[k + 1]]`` holds, one line per dof,
    the derivatives of its R rows along it. :meth:`dense` expands them to all nv columns.

    nv : int, the dimension of q's tangent (the dense Jacobians' columns).
    start : (K + 1,) int64, pair k's entries are ``start[k]:start[k + 1]``.
    dofs : (E,) int32, each entry's dof (column of the dense Jacobian).
    values : (E, R) float64, each entry's derivatives of the pair's rows: R = 11, α, the distance, witness_a
        (3), witness_b (3) and the normal (3); R = 1, α alone (``signed_distance=False``).
    """

    nv: int
    start: IntArray
    dofs: IntArray
    values: FloatArray

    __repr__ = summary_repr

    def pairs(self) -> IntArray:
        """(E,) int64, each entry's pair (its row of the result)."""
        return np.repeat(np.arange(len(self.start) - 1), np.diff(self.start))

    def dense(self, row: str | None = None) -> FloatArray:
        """The Jacobians with all nv columns (zero off each pair's dofs): (K, R, nv), or of one row, ``"alpha"``
        or ``"distance"`` (K, nv), ``"witness_a"``, ``"witness_b"`` or ``"normal"`` (K, 3, nv)."""
        rows: int | slice = slice(None)
        if row is not None:
            names = list(_JACOBIAN_ROWS)[: 1 if self.values.shape[1] == 1 else None]
            if row not in names:
                raise ValueError(f"row must be one of {names} or None, got {row!r}")
            rows = _JACOBIAN_ROWS[row]
        part = self.values[:, rows]
        out = np.zeros((len(self.start) - 1, *part.shape[1:], self.nv))
        if part.ndim == 1:
            out[self.pairs(), self.dofs] = part
        else:
            out[self.pairs(), :, self.dofs] = part
        return out

    def at(self, pairs: slice) -> PairJacobians:
        """The entries of a run of pairs (start from 0)."""
        start = self.start[pairs.start : pairs.stop + 1]
        entries = slice(int(start[0]), int(start[-1]))
        return PairJacobians(self.nv, start - start[0], self.dofs[entries], self.values[entries])


@dataclass(frozen=True)
class CollisionDistances:
    """The checked pairs of :meth:`CollisionModel.distances`, K rows over all configurations.

    start : (N + 1,) int64, configuration n's rows are ``start[n]:start[n + 1]`` (N = 1 for one q).
    pair : (K,) int32, each row's index into :attr:`CollisionModel.pairs` (ascending per configuration).
    alpha : (K,) float64, DCOL's α (> 1: apart).
    status : (K,) int8, the dcol.solvers.Status of each pair's solve.
    distance : (K,) float64, signed distance (> 0 apart, < 0 penetrating: minus the depth, EPA's minimum
        translation distance, or along DCOL's normal where the cone program answers);
        None with signed_distance=False, as are the witness points and the normal.
    witness_a, witness_b : (K, 3) float64, witness points on the pair's first and second object (world).
    normal : (K, 3) float64, unit normal from the first object to the second.
    jacobian : :class:`PairJacobians`, the rows' derivatives with respect to q in q's tangent, sparse by pair
        (``jacobian.dense("alpha")`` is ∂α/∂q (K, nv)); None with jacobians=False.
    """

    start: IntArray
    pair: IntArray
    alpha: FloatArray
    status: Int8Array
    distance: FloatArray | None
    witness_a: FloatArray | None
    witness_b: FloatArray | None
    normal: FloatArray | None
    jacobian: PairJacobians | None

    __repr__ = summary_repr

    def at(self, n: int) -> CollisionDistances:
        """The rows of configuration n alone (start = [0, count])."""
        if not 0 <= n < len(self.start) - 1:
            raise IndexError(f"n must be in [0, {len(self.start) - 1}), got {n}")
        rows = slice(int(self.start[n]), int(self.start[n + 1]))

        def part(array: FloatArray | None) -> FloatArray | None:
            return None if array is None else array[rows]

        return CollisionDistances(
            start=np.array([0, rows.stop - rows.start], dtype=np.int64),
            pair=self.pair[rows],
            alpha=self.alpha[rows],
            status=self.status[rows],
            distance=part(self.distance),
            witness_a=part(self.witness_a),
            witness_b=part(self.witness_b),
            normal=part(self.normal),
            jacobian=None if self.jacobian is None else self.jacobian.at(rows),
        )


def disabled_collision_pairs(srdf: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """The link pairs of an SRDF file's ``<disable_collisions link1=… link2=…/>`` elements, in file order,
    for :class:`CollisionModel`'s ``exclude``."""
    root = ET.parse(srdf).getroot()
    pairs = []
    for element in root.iter("disable_collisions"):
        link1, link2 = element.get("link1"), element.get("link2")
        if link1 is None or link2 is None:
            raise ValueError(f"srdf: a <disable_collisions> element lacks link1 or link2 ({srdf})")
        pairs.append((link1, link2))
    return pairs


def _checked_exclusions(model: Model, exclude: Iterable[tuple[str, str]]) -> set[frozenset[str]]:
    links = set(model.frame_names)
    excluded = set()
    for k, entry in enumerate(exclude):
        if not (isinstance(entry, Sequence) and len(entry) == 2 and all(isinstance(name, str) for name in entry)):
            raise TypeError(f"exclude[{k}] must be a pair of link names, got {entry!r}")
        for name in entry:
            if name not in links:
                raise ValueError(f"exclude[{k}]: link {name!r} is not in the model (see Model.frame_names)")
        excluded.add(frozenset(entry))
    return excluded


_METHODS = ("gjk", "cone")


def _checked_method(method: object) -> str:
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    return str(method)


class CollisionModel:
    """A model's collision shapes and static obstacles, and the pairs of them to check (module docstring).

    Parameters
    ----------
    model : dcol.dynamics.Model with collision shapes (a URDF loaded with its geometry).
    obstacles : sequence of dcol.geom.Obstacle, static shapes at fixed poses (default none).
    exclude : pairs (link1, link2) of link names never checked against each other, e.g.
        :func:`disabled_collision_pairs` of an SRDF file.
    margin : m ≥ 0; every pair closer than this is checked (and some farther: the broadphase grows each
        shape's bounding box by margin / 2). Pairs not checked are farther than the margin. inf checks every
        pair.
    self_collision : whether the model's shapes are checked against each other (default True).
    mesh_vertices : mesh collision geometry becomes the convex hull of at most this many of its vertices.
    settings : dcol.solvers.SolverSettings of the solves, default dcol.geom.DISTANCE_SETTINGS.
    method : "gjk" (default): pairs of polytopes, spheres, capsules, padded polygons and cylinders by GJK/EPA
        and α's ray cast (module docstring), exact derivatives; where the witness points are not unique (faces
        parallel to each other) they are those of the features GJK ends on. "cone": every pair
        by the cone programs, slower, whose derivatives are the barrier-smoothed problems' (an average over
        such witnesses).

    Attributes
    ----------
    model, obstacles, margin
    object_names : list[str], one per collision object: ``"<link>/<k>"`` for a link's k-th collision
        shape (the model's shapes first, in Model.collision_shapes order), ``"obstacle <j>"`` after them.
    shapes : list[dcol.geom.Shape], each object's shape (its offset: the pose in its body, or in its
        obstacle's frame).
    pairs : (P, 2) int64, the object pairs (a < b) checked when their bounding boxes overlap.
    """

    model: Model
    obstacles: tuple[Obstacle, ...]
    margin: float
    object_names: list[str]
    shapes: list[Shape]
    pairs: IntArray

    def __init__(
        self,
        model: Model,
        obstacles: Sequence[Obstacle] = (),
        *,
        exclude: Iterable[tuple[str, str]] = (),
        margin: float = 0.05,
        self_collision: bool = True,
        mesh_vertices: int = 64,
        settings: SolverSettings | None = None,
        method: str = "gjk",
    ) -> None:
        if not isinstance(model, Model):
            raise TypeError(f"model must be a dcol.dynamics.Model, got {type(model).__name__}")
        if not isinstance(obstacles, Sequence):
            raise TypeError("obstacles must be a sequence of dcol.geom.Obstacle")
        for j, obstacle in enumerate(obstacles):
            if not isinstance(obstacle, Obstacle):
                raise TypeError(f"obstacles[{j}] must be a dcol.geom.Obstacle, got {type(obstacle).__name__}")
        self.model, self.obstacles = model, tuple(obstacles)
        self.margin = checked_interval(margin, "margin", 0.0, np.inf)
        excluded = _checked_exclusions(model, exclude)
        entries = model.collision_shapes
        if not entries and not self.obstacles:
            raise ValueError("model has no collision shapes (load the URDF with geometry=True)")
        shape_count: dict[str, int] = {}
        self.object_names, self.shapes = [], []
        for entry in entries:
            self.object_names.append(f"{entry.link}/{shape_count.get(entry.link, 0)}")
            shape_count[entry.link] = shape_count.get(entry.link, 0) + 1
            self.shapes.append(_convex(entry.shape, mesh_vertices))
        self.object_names += [f"obstacle {j}" for j in range(len(self.obstacles))]
        self.shapes += [obstacle.shape for obstacle in self.obstacles]

        # Scene bodies: the model's bodies with shapes, the world's shapes (body −1), one per obstacle.
        body_of = [entry.body for entry in entries]
        scene_bodies = sorted(set(body_of))
        scene_of = {body: k for k, body in enumerate(scene_bodies)}
        body_frame = [model.frame_index(model.body_names[b]) if b >= 0 else -1 for b in scene_bodies]
        static_r = [np.zeros(3)] * len(scene_bodies)
        static_R = [np.eye(3)] * len(scene_bodies)
        for j, obstacle in enumerate(self.obstacles):
            body_frame.append(-1)
            static_r.append(obstacle.r)
            static_R.append(rotation_matrix(obstacle.q, f"obstacles[{j}] q"))
        shape_body = [scene_of[b] for b in body_of] + [len(scene_bodies) + j for j in range(len(self.obstacles))]

        parents = model.parents
        links = [entry.link for entry in entries]
        pairs = []
        for a in range(len(entries)):
            for b in range(a + 1, len(entries)) if self_collision else ():
                body_a, body_b = body_of[a], body_of[b]
                adjacent = (body_b >= 0 and parents[body_b] == body_a) or (body_a >= 0 and parents[body_a] == body_b)
                if body_a != body_b and not adjacent and frozenset((links[a], links[b])) not in excluded:
                    pairs.append((a, b))
            if body_of[a] >= 0:  # the world's shapes are static like the obstacles
                pairs += [(a, len(entries) + j) for j in range(len(self.obstacles))]
        self.pairs = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        self.pairs.setflags(write=False)
        self._native = _native.dynamics.CollisionModel(
            model._native,
            self.shapes,
            np.array(shape_body, dtype=np.int32),
            np.array(body_frame, dtype=np.int32),
            np.array(static_r, dtype=np.float64).reshape(-1, 3),
            np.array(static_R, dtype=np.float64).reshape(-1, 3, 3),
            self.pairs.astype(np.int32),
            self.margin,
            checked_instance(settings, "settings", SolverSettings, DISTANCE_SETTINGS),
            _checked_method(method) == "gjk",
        )

    def pair_names(self, pairs: ArrayLike | None = None) -> list[tuple[str, str]]:
        """The object names of pairs (indices into :attr:`pairs`; default all of them)."""
        indices = np.arange(len(self.pairs)) if pairs is None else np.asarray(pairs, dtype=np.int64).reshape(-1)
        return [(self.object_names[a], self.object_names[b]) for a, b in self.pairs[indices]]

    def distances(
        self,
        q: ArrayLike,
        *,
        signed_distance: bool = True,
        jacobians: bool = True,
        threads: int | None = None,
    ) -> CollisionDistances:
        """α, signed distances, witness points and normals of the pairs the broadphase keeps, with their
        Jacobians with respect to q.

        Parameters
        ----------
        q : (nq,) one configuration or (N, nq) a batch (floating joints' quaternions nonzero).
        signed_distance : False computes DCOL's α and its Jacobian alone (the distance fields of the result
            are then None).
        jacobians : whether to compute the Jacobians (default True), sparse by pair (:class:`PairJacobians`).
        threads : worker threads over the configurations (default 1).

        Returns
        -------
        CollisionDistances, the rows of all configurations (its ``start`` splits them).
        """
        rows, _ = checked_configurations(self.model, q)
        out = self._native.distances(rows, bool(jacobians), bool(signed_distance), checked_threads(threads))
        return CollisionDistances(
            start=out["start"],
            pair=out["pair"],
            alpha=out["alpha"],
            status=out["status"],
            distance=out.get("distance"),
            witness_a=out.get("witness_a"),
            witness_b=out.get("witness_b"),
            normal=out.get("normal"),
            jacobian=PairJacobians(self.model.nv, out["jacobian_start"], out["jacobian_dofs"], out["jacobian"])
            if jacobians
            else None,
        )

    def __repr__(self) -> str:
        return (
            f"CollisionModel({self.model.name!r}, {len(self.shapes) - len(self.obstacles)} shapes, "
            f"{len(self.obstacles)} obstacles, {len(self.pairs)} pairs, margin={self.margin})"
        )
