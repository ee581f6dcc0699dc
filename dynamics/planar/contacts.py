"""Contact detection of the planar engine (LCP-physics §A.6): a bounding-circle broadphase and
narrowphases for circle–circle (§A.6.1), circle–polygon (§A.6.2: closest point outside, the
separating axis of least penetration inside) and polygon–polygon (separating axes, then the incident
edge clipped against the reference face, at most two points).

Two bodies are in contact where their signed distance is below the margin ε (§A.6). A contact's
normal points from body_b towards body_a, so that n · (velocity of a's point − velocity of b's point)
is the separating speed.
"""

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from dcol.typing import FloatArray

from .bodies import Body, Circle, Polygon, rotation

__all__ = ["Contact", "detect_contacts"]


@dataclass(frozen=True)
class Contact:
    """One contact point between body_a and body_b.

    normal : (2,) world-frame unit normal, from b towards a.
    point_a, point_b : (2,) the contact point on each body, in that body's frame.
    gap : signed distance along the normal (< 0: interpenetration).
    """

    body_a: int
    body_b: int
    normal: FloatArray
    point_a: FloatArray
    point_b: FloatArray
    gap: float


# (normal from b to a, world point on a, world point on b, gap)
WorldContact = tuple[FloatArray, FloatArray, FloatArray, float]


def _circle_circle(centre_a: FloatArray, radius_a: float, centre_b: FloatArray, radius_b: float) -> list[WorldContact]:
    """LCP-physics §A.6.1. Coincident centres have no normal; the world's y axis stands in."""
    offset = centre_a - centre_b
    distance = float(np.linalg.norm(offset))
    normal = offset / distance if distance > 0.0 else np.array([0.0, 1.0])
    return [(normal, centre_a - radius_a * normal, centre_b + radius_b * normal, distance - radius_a - radius_b)]


def _closest_boundary_point(point: FloatArray, vertices: FloatArray) -> FloatArray:
    """The point of the polygon's boundary closest to ``point`` (all in one frame)."""
    edges = np.roll(vertices, -1, axis=0) - vertices
    along = np.clip(np.sum((point - vertices) * edges, axis=1) / np.sum(edges * edges, axis=1), 0.0, 1.0)
    candidates = vertices + along[:, None] * edges
    return candidates[np.argmin(np.sum((candidates - point) ** 2, axis=1))]


def _circle_polygon(
    centre: FloatArray, radius: float, polygon: Polygon, angle: float, position: FloatArray
) -> list[WorldContact]:
    """LCP-physics §A.6.2, the circle as body a and the polygon as body b."""
    turn = rotation(angle)
    local = turn.T @ (centre - position)
    normals = polygon.normals()
    separations = np.sum((local - polygon.vertices) * normals, axis=1)
    face = int(np.argmax(separations))
    if separations[face] <= 0.0:  # centre inside: the face of least penetration
        local_normal = normals[face]
        on_polygon = local - separations[face] * local_normal
        gap = float(separations[face]) - radius
    else:
        on_polygon = _closest_boundary_point(local, polygon.vertices)
        offset = local - on_polygon
        distance = float(np.linalg.norm(offset))
        local_normal = offset / distance
        gap = distance - radius
    normal = turn @ local_normal
    return [(normal, centre - radius * normal, position + turn @ on_polygon, gap)]


def _clip(segment: FloatArray, direction: FloatArray, limit: float) -> FloatArray:
    """The part of the segment (2, 2) where x · direction ≤ limit (a segment of (0, 2) if none)."""
    excess = segment @ direction - limit
    if np.all(excess <= 0.0):
        return segment
    if np.all(excess > 0.0):
        return segment[:0]
    crossing = segment[0] + excess[0] / (excess[0] - excess[1]) * (segment[1] - segment[0])
    return np.stack([segment[0] if excess[0] <= 0.0 else crossing, segment[1] if excess[1] <= 0.0 else crossing])


def _deepest_face(reference: FloatArray, normals: FloatArray, other: FloatArray) -> tuple[int, float]:
    """The face of ``reference`` (world vertices (k, 2), outward normals (k, 2)) that separates it
    most from the polygon ``other``, and that separation (< 0: overlap along every face)."""
    separations = np.min(np.einsum("kjd,kd->kj", other[None, :, :] - reference[:, None, :], normals), axis=1)
    face = int(np.argmax(separations))
    return face, float(separations[face])


def _polygon_polygon(
    vertices_a: FloatArray, normals_a: FloatArray, vertices_b: FloatArray, normals_b: FloatArray, margin: float
) -> list[WorldContact]:
    """Separating axes of both polygons (world frame); the incident edge of the other polygon is
    clipped to the reference face's side planes and its points within the margin are contacts."""
    face_a, separation_a = _deepest_face(vertices_a, normals_a, vertices_b)
    face_b, separation_b = _deepest_face(vertices_b, normals_b, vertices_a)
    if max(separation_a, separation_b) > margin:
        return []
    reference_is_b = separation_b > separation_a + 1e-9 * (1.0 + abs(separation_a))
    if reference_is_b:
        reference, face, normals, incident, incident_normals = vertices_b, face_b, normals_b, vertices_a, normals_a
    else:
        reference, face, normals, incident, incident_normals = vertices_a, face_a, normals_a, vertices_b, normals_b
    normal = normals[face]
    start, end = reference[face], reference[(face + 1) % len(reference)]
    tangent = (end - start) / np.linalg.norm(end - start)
    edge = int(np.argmin(incident_normals @ normal))
    segment = np.stack([incident[edge], incident[(edge + 1) % len(incident)]])
    segment = _clip(segment, tangent, float(end @ tangent))
    if len(segment):
        segment = _clip(segment, -tangent, float(-start @ tangent))
    contacts = []
    for point in segment:
        separation = float((point - start) @ normal)
        if separation <= margin:
            on_face = point - separation * normal
            if reference_is_b:
                contacts.append((normal, point, on_face, separation))
            else:
                contacts.append((-normal, on_face, point, separation))
    return contacts


def _narrowphase(
    body_a: Body, pose_a: FloatArray, body_b: Body, pose_b: FloatArray, margin: float
) -> list[WorldContact]:
    shape_a, shape_b = body_a.shape, body_b.shape
    if isinstance(shape_a, Circle) and isinstance(shape_b, Circle):
        return _circle_circle(pose_a[1:], shape_a.radius, pose_b[1:], shape_b.radius)
    if isinstance(shape_a, Circle) and isinstance(shape_b, Polygon):
        return _circle_polygon(pose_a[1:], shape_a.radius, shape_b, pose_b[0], pose_b[1:])
    if isinstance(shape_a, Polygon) and isinstance(shape_b, Circle):
        swapped = _circle_polygon(pose_b[1:], shape_b.radius, shape_a, pose_a[0], pose_a[1:])
        return [(-normal, on_a, on_b, gap) for normal, on_b, on_a, gap in swapped]
    assert isinstance(shape_a, Polygon) and isinstance(shape_b, Polygon)
    turn_a, turn_b = rotation(pose_a[0]), rotation(pose_b[0])
    return _polygon_polygon(
        pose_a[1:] + shape_a.vertices @ turn_a.T,
        shape_a.normals() @ turn_a.T,
        pose_b[1:] + shape_b.vertices @ turn_b.T,
        shape_b.normals() @ turn_b.T,
        margin,
    )


def detect_contacts(
    bodies: tuple[Body, ...], positions: FloatArray, margin: float, skipped: frozenset[tuple[int, int]] = frozenset()
) -> list[Contact]:
    """The contacts (gap < margin) among bodies at positions (n, 3) of (angle, x, y) rows.

    Broadphase: the pairs whose bounding circles come within the margin, less the pairs (i, j),
    i < j, in ``skipped`` (bodies bound by a joint, bodies both welded to the world).
    """
    radii = np.array([body.shape.bounding_radius() for body in bodies])
    contacts = []
    for a, b in combinations(range(len(bodies)), 2):
        reach = radii[a] + radii[b] + margin
        if (a, b) in skipped or np.sum((positions[a, 1:] - positions[b, 1:]) ** 2) > reach**2:
            continue
        for normal, world_a, world_b, gap in _narrowphase(bodies[a], positions[a], bodies[b], positions[b], margin):
            if gap < margin:
                contacts.append(
                    Contact(
                        a,
                        b,
                        normal,
                        rotation(positions[a, 0]).T @ (world_a - positions[a, 1:]),
                        rotation(positions[b, 0]).T @ (world_b - positions[b, 1:]),
                        gap,
                    )
                )
    return contacts
