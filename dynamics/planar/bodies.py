"""Planar rigid bodies (LCP-physics §A.2): shapes, mass, moment of inertia from the shape,
restitution and friction.

A body's pose is (angle, x, y) in maximal coordinates (LCP-physics eq. 7): the body frame is turned by
``angle`` (counter-clockwise, radians) and its origin, the centre of mass, is at (x, y).
"""

from dataclasses import dataclass, field

import numpy as np

from dcol.typing import ArrayLike, FloatArray
from dcol.validation import checked_array, checked_interval, checked_nonnegative, checked_positive

__all__ = ["Circle", "Polygon", "rectangle", "Body"]


def cross2(a: FloatArray, b: FloatArray) -> FloatArray:
    """The planar cross product a₁b₂ − a₂b₁ over the last axis (LCP-physics footnote 3)."""
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def rotation(angle: float) -> FloatArray:
    """R(angle) (2, 2): body-frame vectors to world-frame ones."""
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s], [s, c]])


def rotated(angles: FloatArray, vectors: FloatArray) -> FloatArray:
    """R(angles[i]) vectors[i] (k, 2), for angles (k,) and body-frame vectors (k, 2)."""
    c, s = np.cos(angles), np.sin(angles)
    return np.stack([c * vectors[:, 0] - s * vectors[:, 1], s * vectors[:, 0] + c * vectors[:, 1]], axis=1)


@dataclass(frozen=True)
class Circle:
    """A disk of the given radius, centred on its body's origin."""

    radius: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "radius", checked_positive(self.radius, "radius"))

    def unit_inertia(self) -> float:
        """Moment of inertia per unit mass about the centre: r²/2 (LCP-physics §A.2)."""
        return 0.5 * self.radius**2


@dataclass(frozen=True)
class Polygon:
    """A convex polygon from its corner points (k, 2), k ≥ 3, in order (either sense) in the body
    frame.

    The vertices are stored counter-clockwise and shifted so that the area centroid is the body's
    origin (the body's position is its centre of mass); ``offset`` (2,) is the centroid in the
    frame the points were given in. ValueError for fewer than three points, repeated or collinear
    points, or a polygon that is not convex.
    """

    points: ArrayLike
    vertices: FloatArray = field(init=False, repr=False)
    offset: FloatArray = field(init=False, repr=False)
    _normals: FloatArray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        points = checked_array(self.points, "points", ("k", 2))
        if len(points) < 3:
            raise ValueError(f"points must hold at least 3 corners, got {len(points)}")
        edges = np.roll(points, -1, axis=0) - points
        turns = cross2(edges, np.roll(edges, -1, axis=0))
        scale = np.abs(points).max()
        if np.abs(turns).min() <= 1e-12 * scale**2:
            raise ValueError("points must be distinct corners with no three consecutive ones collinear")
        # Convex and simple: every corner turns the same way and the turns add up to one revolution
        # (a star polygon turns the same way everywhere but goes round more than once).
        turning = np.arctan2(turns, np.sum(edges * np.roll(edges, -1, axis=0), axis=1))
        if not (np.all(turns > 0) or np.all(turns < 0)) or abs(turning.sum()) > 2.0 * np.pi + 1e-6:
            raise ValueError("points must be the corners of a convex polygon, in order")
        if turns[0] < 0:
            points = points[::-1]
        following = np.roll(points, -1, axis=0)
        doubled_areas = cross2(points, following)
        centroid = np.sum((points + following) * doubled_areas[:, None], axis=0) / (3.0 * doubled_areas.sum())
        vertices = points - centroid
        edges = np.roll(vertices, -1, axis=0) - vertices
        normals = np.stack([edges[:, 1], -edges[:, 0]], axis=1) / np.linalg.norm(edges, axis=1, keepdims=True)
        for array in (vertices, centroid, normals):
            array.setflags(write=False)
        object.__setattr__(self, "vertices", vertices)
        object.__setattr__(self, "offset", centroid)
        # The narrowphase asks for them at every contact test.
        object.__setattr__(self, "_normals", normals)

    def area(self) -> float:
        return 0.5 * float(np.sum(cross2(self.vertices, np.roll(self.vertices, -1, axis=0))))

    def unit_inertia(self) -> float:
        """Moment of inertia per unit mass about the centroid, of the uniform lamina: the sum over
        the triangles (origin, vᵢ, vᵢ₊₁) of their second moments, each
        |vᵢ × vᵢ₊₁| (vᵢ·vᵢ + vᵢ·vᵢ₊₁ + vᵢ₊₁·vᵢ₊₁) / 12, divided by the area."""
        v, w = self.vertices, np.roll(self.vertices, -1, axis=0)
        doubled_areas = cross2(v, w)
        second_moments = doubled_areas * (np.sum(v * v, axis=1) + np.sum(v * w, axis=1) + np.sum(w * w, axis=1))
        return float(second_moments.sum() / (6.0 * doubled_areas.sum()))

    def normals(self) -> FloatArray:
        """Outward unit normals (k, 2) of the edges vᵢ → vᵢ₊₁ (read-only)."""
        return self._normals


def rectangle(width: float, height: float) -> Polygon:
    """The rectangle width × height centred on its body's origin, sides along the body axes."""
    half_w, half_h = 0.5 * checked_positive(width, "width"), 0.5 * checked_positive(height, "height")
    return Polygon([(-half_w, -half_h), (half_w, -half_h), (half_w, half_h), (-half_w, half_h)])


Shape = Circle | Polygon


@dataclass(frozen=True)
class Body:
    """A rigid body (LCP-physics §A.2): its shape, mass m > 0, restitution k ∈ [0, 1] and
    friction μ ≥ 0. The moment of inertia 𝓘 about the centre of mass is ``moment_of_inertia`` > 0
    where given, else the uniform lamina's: m times the shape's unit inertia."""

    shape: Shape
    mass: float = 1.0
    restitution: float = 0.0
    friction: float = 0.0
    moment_of_inertia: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.shape, (Circle, Polygon)):
            raise TypeError(f"shape must be a Circle or a Polygon, got {type(self.shape).__name__}")
        object.__setattr__(self, "mass", checked_positive(self.mass, "mass"))
        object.__setattr__(self, "restitution", checked_interval(self.restitution, "restitution", 0.0, 1.0))
        object.__setattr__(self, "friction", checked_nonnegative(self.friction, "friction"))
        if self.moment_of_inertia is not None:
            object.__setattr__(self, "moment_of_inertia", checked_positive(self.moment_of_inertia, "moment_of_inertia"))

    @property
    def inertia(self) -> float:
        """𝓘: moment_of_inertia where given, else mass × the shape's unit inertia."""
        if self.moment_of_inertia is not None:
            return self.moment_of_inertia
        return self.mass * self.shape.unit_inertia()

    def mass_matrix(self) -> FloatArray:
        """𝓜_body = diag(𝓘, m, m) (3, 3), LCP-physics §A.2."""
        return np.diag([self.inertia, self.mass, self.mass])
