"""Convex primitives of DCOL (DCOL §III-B), in their body frames.

Capsule and cylinder lie along body x with their segment ends / flat faces at x = ±L/2. The cone
lies along body x with its apex at x = −3H/4 and its base face at x = +H/4. Polytopes ``A y ≤ b``
and padded polygons (points within R of ``{(y1, y2, 0) : C y ≤ d}``) must contain the origin
strictly (b > 0, d > 0) and be bounded. Ellipsoids are ``yᵀ P y ≤ 1`` with P symmetric positive
definite. Every shape may sit at a fixed offset pose inside its body (``offset=(r, q)``); DCOL
scales a shape about the origin of its own frame.

Shapes are immutable: their arrays are read-only views.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar, Generic, NoReturn, TypeAlias, TypeVar, overload

import numpy as np
from scipy.optimize import linprog
from scipy.spatial import ConvexHull, HalfspaceIntersection

from dcol import _native
from dcol.typing import ArrayLike, FloatArray, IntArray, Pose
from dcol.validation import checked_array, checked_interval, checked_positive

from .rotations import checked_pose
from .topology import DEFAULT_TOLERANCE, polytope_topology

MAX_FACES: int = _native.MAX_FACES
"""The most faces (rows of A) a Polytope or ConvexMesh may have: the native solver's problems have
compile-time maximum sizes."""

__all__ = [
    "Shape",
    "Polytope",
    "Box",
    "Capsule",
    "Cylinder",
    "Cone",
    "Sphere",
    "Ellipsoid",
    "Polygon",
    "MAX_FACES",
    "ShapeOrShapes",
]


def _check_halfspaces(normals: FloatArray, offsets: FloatArray, normals_name: str, offsets_name: str) -> None:
    """The set {y : normals y ≤ offsets} (m rows each) must hold the origin strictly and be bounded."""
    m, dim = normals.shape
    if m > MAX_FACES:
        raise ValueError(f"{normals_name} has {m} faces; at most {MAX_FACES} are supported")
    if np.any(offsets <= 0.0):
        raise ValueError(f"{offsets_name} must be > 0 (the origin must be strictly inside the shape)")
    if np.any(np.linalg.norm(normals, axis=1) == 0.0):
        raise ValueError(f"{normals_name} must not have zero rows")
    # Bounded iff no direction u ≠ 0 has normals u ≤ 0. With full rank that holds exactly when some
    # λ > 0 has normalsᵀ λ = 0 (Stiemke's lemma); the LP maximizes the smallest λ_i with Σλ = 1.
    bounded = m > dim and np.linalg.matrix_rank(normals) == dim
    if bounded:
        lp = linprog(
            c=np.r_[np.zeros(m), -1.0],
            A_ub=np.c_[-np.eye(m), np.ones(m)],
            b_ub=np.zeros(m),
            A_eq=np.r_[np.c_[normals.T, np.zeros(dim)], [np.r_[np.ones(m), 0.0]]],
            b_eq=np.r_[np.zeros(dim), 1.0],
            bounds=[(0, None)] * m + [(None, None)],
            method="highs",
        )
        bounded = lp.status == 0 and -lp.fun > 1e-12
    if not bounded:
        raise ValueError(f"{normals_name}, {offsets_name} must describe a bounded set (the half-spaces leave it open)")


def polygon_corners(C: FloatArray, d: FloatArray) -> FloatArray:
    """(k, 2) float64 corners of the polygon {y : C y ≤ d} (origin strictly inside, bounded),
    counterclockwise, read-only."""
    points = HalfspaceIntersection(np.column_stack([C, -d]), np.zeros(2)).intersections
    corners = points[ConvexHull(points).vertices]  # in 2-D qhull lists the hull counterclockwise
    corners.setflags(write=False)
    return corners


T = TypeVar("T")


class Field(Generic[T]):
    """A read-only attribute of a shape: the value its constructor stored as ``_<name>``."""

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, shape: None, owner: type) -> Field[T]: ...
    @overload
    def __get__(self, shape: object, owner: type) -> T: ...
    def __get__(self, shape: object | None, owner: type) -> Field[T] | T:
        return self if shape is None else getattr(shape, "_" + self._name)

    def __set__(self, shape: object, value: object) -> NoReturn:
        raise AttributeError(f"{type(shape).__name__}.{self._name} is read-only: shapes are immutable")


class Shape:
    """Base class of the primitives. ``offset=(r, q)``: fixed pose of the shape in its body, r (3,)
    and q a quaternion (4,) ``[w, x, y, z]`` or a (3, 3) rotation matrix."""

    # The constructor's positional arguments, each kept as the attribute "_<name>": pickling and
    # copying replay the constructor with them, which rebuilds the native shape.
    _arguments: ClassVar[tuple[str, ...]] = ()

    def __init__(self, native: _native.Shape, length_scale: float, offset: Pose | None = None) -> None:
        position, rotation = checked_pose(offset, "offset")
        self._offset_position = position
        self._offset_rotation = rotation
        native.set_frame(length_scale, position, rotation)
        self._native = native

    offset_position = Field[FloatArray]("(3,) float64: position of the shape frame in its body.")
    offset_rotation = Field[FloatArray]("(3, 3) float64: orientation of the shape frame in its body.")

    def __reduce__(self) -> tuple[Callable[..., Shape], tuple[object, ...]]:
        arguments = tuple(getattr(self, "_" + name) for name in self._arguments)
        return _replayed, (type(self), arguments, (self._offset_position, self._offset_rotation))


def _replayed(kind: Callable[..., Shape], arguments: tuple[object, ...], offset: Pose) -> Shape:
    """A shape made again by its constructor, as pickled by Shape.__reduce__."""
    return kind(*arguments, offset=offset)


ShapeOrShapes: TypeAlias = "Shape | Sequence[Shape]"
"""The shape arguments of the batch functions: one shape for every pose, or one per pose."""


class Polytope(Shape):
    """Polytope ``{y : A y ≤ b}`` (DCOL §III-B1), with its vertices, edges and faces.

    A : (m, 3) float64 face normals (any length, nonzero); b : (m,) float64, b > 0; bounded.
    """

    _arguments: ClassVar[tuple[str, ...]] = ("A", "b")

    # Corners closer than this (relative to the size) are one; see dcol.geom.topology.
    _topology_tolerance: float = DEFAULT_TOLERANCE

    def __init__(self, A: ArrayLike, b: ArrayLike, *, offset: Pose | None = None) -> None:
        self._A = checked_array(A, "A", ("m", 3))
        self._b = checked_array(b, "b", (("len(A)", len(self._A)),))
        _check_halfspaces(self._A, self._b, "A", "b")
        self._topology = polytope_topology(self._A, self._b, tolerance=self._topology_tolerance)
        corners = self._topology.vertices - self._topology.vertices.mean(axis=0)
        thickness = np.linalg.svd(corners, compute_uv=False)[-1] if len(corners) >= 4 else 0.0
        if thickness <= self._topology_tolerance * np.abs(corners).max():
            raise ValueError("A, b must describe a solid: it is so thin that its corners merge")
        length_scale = float(np.max(self._b / np.linalg.norm(self._A, axis=1)))
        super().__init__(_native.Shape.polytope(self._A, self._b, self._topology.vertices), length_scale, offset)

    @classmethod
    def from_vertices(cls, V: ArrayLike, *, offset: Pose | None = None) -> Polytope:
        """Convex hull of the points V : (k, 3), k ≥ 4; the origin must lie strictly inside."""
        V = checked_array(V, "V", ("m", 3))
        if V.shape[0] < 4:
            raise ValueError(f"V must hold at least 4 points, got {V.shape[0]}")
        try:
            hull = ConvexHull(V)
        except Exception as err:  # qhull reports flat or degenerate point sets
            raise ValueError("V must span a solid (its points are coplanar or degenerate)") from err
        # qhull triangulates facets: merge the coplanar triangles' repeated planes.
        distinct: list[FloatArray] = []
        for plane in hull.equations:
            if not any(np.allclose(plane, kept, rtol=0.0, atol=1e-10 * (1.0 + abs(plane[3]))) for kept in distinct):
                distinct.append(plane)
        planes = np.array(distinct)
        if np.any(planes[:, 3] >= 0.0):
            raise ValueError("V must contain the origin strictly inside its convex hull")
        return cls(planes[:, :3], -planes[:, 3], offset=offset)

    A = Field[FloatArray]("(m, 3) float64 face normals.")
    b = Field[FloatArray]("(m,) float64 face offsets.")

    @property
    def vertices(self) -> FloatArray:
        """(k, 3) float64 corners in the shape frame, each once."""
        return self._topology.vertices

    @property
    def edges(self) -> IntArray:
        """(e, 2) int64 vertex index pairs, each edge once, smaller index first."""
        return self._topology.edges

    @property
    def faces(self) -> tuple[IntArray, ...]:
        """tuple of (n_f,) int64 vertex indices per row of A, counterclockwise seen from outside
        (fewer than 3 for a redundant row)."""
        return self._topology.faces

    @property
    def face_normals(self) -> FloatArray:
        """(m, 3) float64 unit outward normals (the rows of A normalized) in the shape frame."""
        return self._topology.face_normals

    def __repr__(self) -> str:
        return f"{type(self).__name__}(faces={len(self._b)})"


class Box(Polytope):
    """Axis-aligned box in its body frame, centred at the origin; half_extents : (3,), all > 0 (half
    the side lengths; :meth:`from_size` takes the side lengths, as trimesh and coal do)."""

    _arguments: ClassVar[tuple[str, ...]] = ("half_extents",)

    def __init__(self, half_extents: ArrayLike, *, offset: Pose | None = None) -> None:
        half = checked_array(half_extents, "half_extents", (3,))
        if np.any(half <= 0.0):
            raise ValueError("half_extents must be > 0")
        self._half_extents = half
        super().__init__(np.vstack([np.eye(3), -np.eye(3)]), np.r_[half, half], offset=offset)

    half_extents = Field[FloatArray]("(3,) float64 half side lengths.")

    @classmethod
    def from_size(cls, size: ArrayLike, *, offset: Pose | None = None) -> Box:
        """The box of side lengths size (3,), all > 0: ``Box(size / 2)``."""
        lengths = checked_array(size, "size", (3,))
        if np.any(lengths <= 0.0):
            raise ValueError("size must be > 0")
        return cls(0.5 * lengths, offset=offset)

    def __repr__(self) -> str:
        return f"Box(half_extents={self._half_extents.tolist()})"


class Capsule(Shape):
    """Points within R of the segment from (−L/2, 0, 0) to (L/2, 0, 0) (DCOL §III-B2)."""

    _arguments: ClassVar[tuple[str, ...]] = ("R", "L")

    def __init__(self, R: float, L: float, *, offset: Pose | None = None) -> None:
        self._R = checked_positive(R, "R")
        self._L = checked_positive(L, "L")
        super().__init__(_native.Shape.capsule(self._R, self._L), self._R + 0.5 * self._L, offset)

    R = Field[float]("float, radius.")
    L = Field[float]("float, segment length.")

    def __repr__(self) -> str:
        return f"Capsule(R={self._R}, L={self._L})"


class Cylinder(Shape):
    """Cylinder of radius R along body x with flat faces at x = ±L/2 (DCOL §III-B3)."""

    _arguments: ClassVar[tuple[str, ...]] = ("R", "L")

    def __init__(self, R: float, L: float, *, offset: Pose | None = None) -> None:
        self._R = checked_positive(R, "R")
        self._L = checked_positive(L, "L")
        super().__init__(_native.Shape.cylinder(self._R, self._L), float(np.hypot(self._R, 0.5 * self._L)), offset)

    R = Field[float]("float, radius.")
    L = Field[float]("float, length.")

    def __repr__(self) -> str:
        return f"Cylinder(R={self._R}, L={self._L})"


class Cone(Shape):
    """Cone of height H and half angle beta along body x: apex at x = −3H/4, base face of radius
    H tan(beta) at x = +H/4 (DCOL §III-B4)."""

    _arguments: ClassVar[tuple[str, ...]] = ("H", "beta")

    def __init__(self, H: float, beta: float, *, offset: Pose | None = None) -> None:
        self._H = checked_positive(H, "H")
        self._beta = checked_interval(beta, "beta", 0.0, 0.5 * np.pi, open_low=True, open_high=True)
        tan_beta = float(np.tan(self._beta))
        length_scale = max(0.75 * self._H, float(np.hypot(0.25 * self._H, self._H * tan_beta)))
        super().__init__(_native.Shape.cone(self._H, tan_beta), length_scale, offset)

    H = Field[float]("float, height.")
    beta = Field[float]("float, half angle in radians.")

    def __repr__(self) -> str:
        return f"Cone(H={self._H}, beta={self._beta})"


class Sphere(Shape):
    """Ball of radius R centred at the origin."""

    _arguments: ClassVar[tuple[str, ...]] = ("R",)

    def __init__(self, R: float, *, offset: Pose | None = None) -> None:
        self._R = checked_positive(R, "R")
        super().__init__(_native.Shape.sphere(self._R), self._R, offset)

    R = Field[float]("float, radius.")

    def __repr__(self) -> str:
        return f"Sphere(R={self._R})"


class Ellipsoid(Shape):
    """Ellipsoid ``{y : yᵀ P y ≤ 1}`` (DCOL §III-B5); P : (3, 3) symmetric positive definite."""

    _arguments: ClassVar[tuple[str, ...]] = ("P",)

    def __init__(self, P: ArrayLike, *, offset: Pose | None = None) -> None:
        P = checked_array(P, "P", (3, 3))
        if np.max(np.abs(P - P.T)) > 1e-12 * np.max(np.abs(P)):
            raise ValueError("P must be symmetric")
        eigenvalues = np.linalg.eigvalsh(P)
        if eigenvalues[0] <= 1e-14 * eigenvalues[-1]:
            raise ValueError("P must be positive definite")
        self._P = P
        upper = np.linalg.cholesky(P).T  # P = Uᵀ U, the U of DCOL eq. 23
        super().__init__(
            _native.Shape.ellipsoid(np.ascontiguousarray(upper)), 1.0 / float(np.sqrt(eigenvalues[0])), offset
        )

    P = Field[FloatArray]("(3, 3) float64 shape matrix.")

    def __repr__(self) -> str:
        return f"Ellipsoid(semi_axes={(1.0 / np.sqrt(np.linalg.eigvalsh(self._P))).tolist()})"


class Polygon(Shape):
    """Padded polygon (DCOL §III-B6): points within R of ``{(y1, y2, 0) : C y ≤ d}``.

    C : (m, 2) float64 edge normals in the body xy-plane; d : (m,) float64, d > 0; R > 0.
    """

    _arguments: ClassVar[tuple[str, ...]] = ("C", "d", "R")

    def __init__(self, C: ArrayLike, d: ArrayLike, R: float, *, offset: Pose | None = None) -> None:
        self._C = checked_array(C, "C", ("m", 2))
        self._d = checked_array(d, "d", (("len(C)", len(self._C)),))
        _check_halfspaces(self._C, self._d, "C", "d")
        self._corners = polygon_corners(self._C, self._d)
        self._R = checked_positive(R, "R")
        length_scale = float(np.max(self._d / np.linalg.norm(self._C, axis=1))) + self._R
        super().__init__(_native.Shape.polygon(self._C, self._d, self._R, self._corners), length_scale, offset)

    C = Field[FloatArray]("(m, 2) float64 edge normals.")
    d = Field[FloatArray]("(m,) float64 edge offsets.")
    corners = Field[FloatArray](
        """(k, 2) float64 corners of the unpadded polygon in the body xy-plane, counterclockwise."""
    )

    R = Field[float]("float, padding radius.")

    def __repr__(self) -> str:
        return f"Polygon(edges={len(self._d)}, R={self._R})"
