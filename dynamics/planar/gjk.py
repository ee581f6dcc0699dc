"""GJK (Gilbert–Johnson–Keerthi) in the plane: the distance and closest points of the convex hulls
of two point sets (a polygon's corners, a circle's centre), for the planar engine's narrowphase
(LCP-physics §A.6: GJK for disjoint shapes, separating axes for interpenetrating ones). The search
is native (native/planar/gjk.hpp), where the narrowphase calls it; this is its Python face.

The search runs over the Minkowski difference A − B through its support points w = a_i − b_j, each
kept with its indices (i, j), so that the closest points and the features they lie on (a corner, or
the edge between two corners) are read off the final simplex (van den Bergen 2004, Catto 2010).
"""

from dataclasses import dataclass

from dcol import _native
from dcol.typing import FloatArray
from dcol.validation import checked_array

__all__ = ["Proximity", "closest_points"]


@dataclass(frozen=True)
class Proximity:
    """The closest points of two convex hulls A and B.

    distance : ≥ 0, zero when the hulls touch or overlap (``overlapping``).
    point_a, point_b : (2,) the closest points, on A and on B (for overlapping hulls: a point of the
        final simplex, not a witness of any depth).
    corners_a, corners_b : the indices of the points of each set that the closest point combines:
        one for a corner, two (consecutive corners of a polygon) for a point inside an edge.
    """

    distance: float
    point_a: FloatArray
    point_b: FloatArray
    corners_a: tuple[int, ...]
    corners_b: tuple[int, ...]
    overlapping: bool


def closest_points(points_a: FloatArray, points_b: FloatArray) -> Proximity:
    """The distance and closest points of the convex hulls of points_a (k, 2) and points_b (l, 2),
    in one frame (for a circle, pass its centre and subtract the radius from the distance)."""
    points_a = checked_array(points_a, "points_a", ("k", 2))
    points_b = checked_array(points_b, "points_b", ("l", 2))
    distance, point_a, point_b, corners_a, corners_b, overlapping = _native.planar.closest_points(points_a, points_b)
    return Proximity(distance, point_a, point_b, tuple(corners_a), tuple(corners_b), overlapping)
