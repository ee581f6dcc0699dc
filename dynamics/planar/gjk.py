"""GJK (Gilbert–Johnson–Keerthi) in the plane: the distance and closest points of the convex hulls
of two point sets (a polygon's corners, a circle's centre), for the planar engine's narrowphase
(LCP-physics §A.6: GJK for disjoint shapes, the separating axes of contacts.py for interpenetrating
ones).

The search runs over the Minkowski difference A − B through its support points w = a_i − b_j, each
kept with its indices (i, j), so that the closest points and the features they lie on (a corner, or
the edge between two corners) are read off the final simplex (van den Bergen 2004, Catto 2010).
"""

from dataclasses import dataclass

import numpy as np

from dcol.typing import FloatArray

from .bodies import cross2

__all__ = ["Proximity", "closest_points"]

# Below this fraction of the shapes' size the origin is taken to be on the difference's boundary:
# the hulls touch, and the narrowphase treats them as overlapping (its separating axes give gap 0).
_TOUCHING = 1e-12


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


def _closest_on_segment(start: FloatArray, end: FloatArray) -> tuple[FloatArray, list[int]]:
    """Barycentric weights of the point of the segment closest to the origin, and which of the two
    ends (0, 1) it combines."""
    edge = end - start
    along = float(-(start @ edge) / (edge @ edge))
    if along <= 0.0:
        return np.ones(1), [0]
    if along >= 1.0:
        return np.ones(1), [1]
    return np.array([1.0 - along, along]), [0, 1]


def _closest_on_simplex(simplex: FloatArray, touching: float) -> tuple[FloatArray, list[int]]:
    """Weights of the point of the simplex (s, 2), s ≤ 3, closest to the origin and the rows it
    combines; a triangle that holds the origin keeps all three rows (weights are then unused)."""
    if len(simplex) == 1:
        return np.ones(1), [0]
    if len(simplex) == 2:
        return _closest_on_segment(simplex[0], simplex[1])
    following = np.roll(simplex, -1, axis=0)
    sides = cross2(following - simplex, -simplex)  # > 0 where the origin is left of an edge
    area = cross2(simplex[1] - simplex[0], simplex[2] - simplex[0])
    if abs(area) > touching and (np.all(sides >= 0.0) or np.all(sides <= 0.0)):
        return np.full(3, 1.0 / 3.0), [0, 1, 2]
    best: tuple[float, FloatArray, list[int]] | None = None
    for first in range(3):
        second = (first + 1) % 3
        weights, ends = _closest_on_segment(simplex[first], simplex[second])
        rows = [(first, second)[end] for end in ends]
        squared = float(np.sum((weights @ simplex[rows]) ** 2))
        if best is None or squared < best[0]:
            best = (squared, weights, rows)
    assert best is not None
    return best[1], best[2]


def closest_points(points_a: FloatArray, points_b: FloatArray) -> Proximity:
    """The distance and closest points of the convex hulls of points_a (k, 2) and points_b (l, 2),
    in one frame (for a circle, pass its centre and subtract the radius from the distance)."""
    scale = max(float(np.abs(points_a).max()), float(np.abs(points_b).max()), 1.0)
    touching = (_TOUCHING * scale) ** 2
    indices = [(0, 0)]
    # A pass adds a support point not in the simplex and the distance falls at each, so the search
    # ends; k·l passes, the number of the difference's candidate corners, guard it generously (and a
    # last one only reduces the simplex).
    for passes in range(len(points_a) * len(points_b) + 1):
        simplex = np.array([points_a[i] - points_b[j] for i, j in indices])
        weights, kept = _closest_on_simplex(simplex, touching)
        indices = [indices[row] for row in kept]
        closest = weights @ simplex[kept]
        squared = float(closest @ closest)
        overlapping = len(indices) == 3 or squared <= touching
        if overlapping or passes == len(points_a) * len(points_b):
            break
        support = (int(np.argmax(points_a @ -closest)), int(np.argmax(points_b @ closest)))
        # The distance lies between |closest| and the support point's reach along −closest, less
        # by this gap over |closest|: stop when the gap is round-off of the shapes' size.
        gain = squared - float(closest @ (points_a[support[0]] - points_b[support[1]]))
        if support in indices or gain <= 1e-12 * scale * np.sqrt(squared):
            break
        indices.append(support)
    point_a = weights @ points_a[[i for i, _ in indices]]
    point_b = weights @ points_b[[j for _, j in indices]]
    return Proximity(
        distance=0.0 if overlapping else float(np.linalg.norm(point_a - point_b)),
        point_a=point_a,
        point_b=point_b,
        corners_a=tuple(sorted({i for i, _ in indices})),
        corners_b=tuple(sorted({j for _, j in indices})),
        overlapping=overlapping,
    )
