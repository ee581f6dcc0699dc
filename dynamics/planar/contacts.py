"""Contact detection of the planar engine (LCP-physics §A.6): a bounding-circle broadphase and
narrowphases for circle–circle (§A.6.1), circle–polygon (§A.6.2: GJK's closest point of the polygon
to the centre outside, the separating axis of least penetration inside) and polygon–polygon
(separating axes, with GJK's distance where they leave it open, which also finds corners closest to
each other; then the incident edge clipped against the reference face, at most two points).

Two bodies are in contact where their signed distance is below the margin ε (§A.6). A contact's
normal points from body_b towards body_a, so that n · (velocity of a's point − velocity of b's point)
is the separating speed.
"""

from dataclasses import dataclass, replace

import numpy as np

from dcol.typing import FloatArray

from .bodies import PERPENDICULAR, Body, Circle, Polygon, rotation
from .gjk import closest_points

__all__ = [
    "Contact",
    "PointsFeature",
    "FaceFeature",
    "detect_contacts",
    "feature_geometry",
    "feature_jacobian",
    "feature_geometry_jacobian",
]


@dataclass(frozen=True)
class PointsFeature:
    """A normal along the line between two body-fixed points (circle centres, polygon corners), each
    padded by a radius (0 for a corner): point_a (2,) in a's frame, point_b (2,) in b's."""

    point_a: FloatArray
    radius_a: float
    point_b: FloatArray
    radius_b: float


@dataclass(frozen=True)
class FaceFeature:
    """A face of the reference body (b, or a when ``reference_is_b`` is False) against a point of
    the other, the incident body: a body-fixed point (a circle's centre padded by its radius, or a
    corner), or, with ``edge_end`` and ``side_point`` given, the point where the incident edge from
    incident_point to edge_end crosses the side plane of the face through its corner side_point (a
    corner that clipping moved along its edge).
    normal, face_point, side_point : the face's outward unit normal and corners, reference frame;
    incident_point, edge_end : (2,) in the incident body's frame."""

    reference_is_b: bool
    normal: FloatArray
    face_point: FloatArray
    incident_point: FloatArray
    radius: float = 0.0
    edge_end: FloatArray | None = None
    side_point: FloatArray | None = None


Feature = PointsFeature | FaceFeature


@dataclass(frozen=True)
class Contact:
    """One contact point between body_a and body_b.

    normal : (2,) world-frame unit normal, from b towards a.
    point_a, point_b : (2,) the contact point on each body, in that body's frame.
    gap : signed distance along the normal (< 0: interpenetration).
    feature : the features that made it, which its derivatives follow.
    """

    body_a: int
    body_b: int
    normal: FloatArray
    point_a: FloatArray
    point_b: FloatArray
    gap: float
    feature: Feature


# (normal from b to a, world arm of a, world arm of b, gap): arms from each body's centre.
Geometry = tuple[FloatArray, FloatArray, FloatArray, float]


def feature_geometry(feature: Feature, pose_a: FloatArray, pose_b: FloatArray) -> Geometry:
    """The contact a feature gives at poses (3,) of (angle, x, y): normal, arms, gap."""
    geometry, _ = _geometry_and_tangents(feature, pose_a, pose_b, np.zeros((0, 6)))
    return geometry


def feature_jacobian(feature: Feature, pose_a: FloatArray, pose_b: FloatArray) -> FloatArray:
    """∂(normal, arm_a, arm_b)/∂(pose_a, pose_b) (6, 6) of feature_geometry, poses (angle, x, y)."""
    _, jacobian = feature_geometry_jacobian(feature, pose_a, pose_b)
    return jacobian


def feature_geometry_jacobian(feature: Feature, pose_a: FloatArray, pose_b: FloatArray) -> tuple[Geometry, FloatArray]:
    """feature_geometry and feature_jacobian at once (one pass)."""
    geometry, tangents = _geometry_and_tangents(feature, pose_a, pose_b, np.eye(6))
    return geometry, tangents.T


def _geometry_and_tangents(
    feature: Feature, pose_a: FloatArray, pose_b: FloatArray, directions: FloatArray
) -> tuple[Geometry, FloatArray]:
    """feature_geometry and the derivatives of (normal, arm_a, arm_b) (k, 6) along each row of
    d(pose_a, pose_b) = directions (k, 6)."""
    if isinstance(feature, PointsFeature):
        return _points(feature, pose_a, pose_b, directions)
    return _face(feature, pose_a, pose_b, directions)


def _points(
    feature: PointsFeature, pose_a: FloatArray, pose_b: FloatArray, directions: FloatArray
) -> tuple[Geometry, FloatArray]:
    """_geometry_and_tangents of the line between two body-fixed points."""
    d_a, d_b = directions[:, :3], directions[:, 3:]
    arm_a, arm_b = rotation(pose_a[0]) @ feature.point_a, rotation(pose_b[0]) @ feature.point_b
    offset = pose_a[1:] + arm_a - pose_b[1:] - arm_b
    distance = float(np.linalg.norm(offset))
    # Coincident points have no normal; the world's y axis stands in, held fixed (zero derivative).
    normal = offset / distance if distance > 0.0 else np.array([0.0, 1.0])
    gap = distance - feature.radius_a - feature.radius_b
    geometry = (normal, arm_a - feature.radius_a * normal, arm_b + feature.radius_b * normal, gap)
    turned_a, turned_b = np.outer(d_a[:, 0], PERPENDICULAR @ arm_a), np.outer(d_b[:, 0], PERPENDICULAR @ arm_b)
    d_offset = d_a[:, 1:] + turned_a - d_b[:, 1:] - turned_b
    d_normal = (d_offset - np.outer(d_offset @ normal, normal)) / distance if distance > 0.0 else 0.0 * d_offset
    tangents = np.hstack([d_normal, turned_a - feature.radius_a * d_normal, turned_b + feature.radius_b * d_normal])
    return geometry, tangents


def _moving_point(pose: FloatArray, d_poses: FloatArray, local: FloatArray) -> tuple[FloatArray, FloatArray]:
    """A body-fixed point in the world (2,) and its derivatives (k, 2) along d_poses (k, 3)."""
    arm = rotation(pose[0]) @ local
    return pose[1:] + arm, d_poses[:, 1:] + np.outer(d_poses[:, 0], PERPENDICULAR @ arm)


def _face(
    feature: FaceFeature, pose_a: FloatArray, pose_b: FloatArray, directions: FloatArray
) -> tuple[Geometry, FloatArray]:
    """feature_geometry of a face feature and its derivatives (normal, arm_a, arm_b) (k, 6) along
    each row of d(pose_a, pose_b) = directions (k, 6)."""
    d_a, d_b = directions[:, :3], directions[:, 3:]
    (reference, d_reference), (incident, d_incident) = (
        ((pose_b, d_b), (pose_a, d_a)) if feature.reference_is_b else ((pose_a, d_a), (pose_b, d_b))
    )
    outward = rotation(reference[0]) @ feature.normal
    d_outward = np.outer(d_reference[:, 0], PERPENDICULAR @ outward)
    point, d_point = _moving_point(incident, d_incident, feature.incident_point)
    if feature.edge_end is None or feature.side_point is None:
        point, d_point = point - feature.radius * outward, d_point - feature.radius * d_outward
    else:  # where the edge crosses the side plane (x − side) · tangent = 0
        end, d_end = _moving_point(incident, d_incident, feature.edge_end)
        side, d_side = _moving_point(reference, d_reference, feature.side_point)
        tangent, d_tangent = PERPENDICULAR @ outward, d_outward @ PERPENDICULAR.T
        edge, d_edge = end - point, d_end - d_point
        along = ((side - point) @ tangent) / (edge @ tangent)
        d_along = (
            (d_side - d_point) @ tangent + d_tangent @ (side - point) - along * (d_edge @ tangent + d_tangent @ edge)
        ) / (edge @ tangent)
        point, d_point = point + along * edge, d_point + np.outer(d_along, edge) + along * d_edge
    face_point, d_face_point = _moving_point(reference, d_reference, feature.face_point)
    separation = float((point - face_point) @ outward)
    d_separation = (d_point - d_face_point) @ outward + d_outward @ (point - face_point)
    arm_incident, d_arm_incident = point - incident[1:], d_point - d_incident[:, 1:]
    arm_reference = point - separation * outward - reference[1:]
    d_arm_reference = d_point - np.outer(d_separation, outward) - separation * d_outward - d_reference[:, 1:]
    if feature.reference_is_b:
        return (outward, arm_incident, arm_reference, separation), np.hstack(
            [d_outward, d_arm_incident, d_arm_reference]
        )
    return (-outward, arm_reference, arm_incident, separation), np.hstack([-d_outward, d_arm_reference, d_arm_incident])


def _circle_circle(radius_a: float, radius_b: float) -> list[Feature]:
    """LCP-physics §A.6.1: the centres' line."""
    return [PointsFeature(np.zeros(2), radius_a, np.zeros(2), radius_b)]


def _circle_polygon(centre: FloatArray, radius: float, polygon: Polygon, pose: FloatArray) -> list[Feature]:
    """LCP-physics §A.6.2, the circle as body a and the polygon (at pose) as body b: GJK's closest
    point of the polygon to the centre (a corner, or a point of a face), or for a centre inside, the
    face of least penetration (separating axes)."""
    local = rotation(pose[0]).T @ (centre - pose[1:])
    vertices, normals = polygon.vertices, polygon.normals()
    proximity = closest_points(vertices, local[None, :])
    if proximity.overlapping:
        face = int(np.argmax(np.sum((local - vertices) * normals, axis=1)))
    elif len(proximity.corners_a) == 1:
        return [PointsFeature(np.zeros(2), radius, vertices[proximity.corners_a[0]], 0.0)]
    else:
        face = _edge(proximity.corners_a, len(vertices))
    return [FaceFeature(True, normals[face], vertices[face], np.zeros(2), radius)]


def _edge(corners: tuple[int, ...], count: int) -> int:
    """The index of the edge between two consecutive corners of a polygon of ``count`` corners."""
    first, second = corners
    return first if second == first + 1 else second


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
    polygon_a: Polygon, pose_a: FloatArray, polygon_b: Polygon, pose_b: FloatArray, margin: float
) -> list[Feature]:
    """Separating axes of both polygons; for polygons they leave apart, unless the other polygon's
    nearest corner lies over the reference face (then the face's separation is the distance), GJK's
    distance (the separation is only its lower bound): beyond the margin, no contact; two corners
    closest to each other, one contact along the line between them. Otherwise the incident edge of
    the other polygon is clipped to the reference face's side planes and its points within the
    margin are contacts."""
    world = []
    for polygon, pose in ((polygon_a, pose_a), (polygon_b, pose_b)):
        turn = rotation(pose[0])
        world.append((pose[1:] + polygon.vertices @ turn.T, polygon.normals() @ turn.T))
    (vertices_a, normals_a), (vertices_b, normals_b) = world
    face_a, separation_a = _deepest_face(vertices_a, normals_a, vertices_b)
    face_b, separation_b = _deepest_face(vertices_b, normals_b, vertices_a)
    if max(separation_a, separation_b) > margin:
        return []
    # a is the reference unless b's face separates clearly more, so that parallel faces (a tie) do
    # not swap roles on round-off.
    reference_is_b = separation_b > separation_a + 1e-9 * (1.0 + abs(separation_a))
    face = face_b if reference_is_b else face_a
    (reference, normals), (incident, incident_normals) = (world[1], world[0]) if reference_is_b else world
    reference_polygon, incident_polygon = (polygon_b, polygon_a) if reference_is_b else (polygon_a, polygon_b)
    normal = normals[face]
    start, end = reference[face], reference[(face + 1) % len(reference)]
    tangent = (end - start) / np.linalg.norm(end - start)
    nearest = incident[np.argmin((incident - start) @ normal)]
    over_face = 0.0 <= (nearest - start) @ tangent <= (end - start) @ tangent
    if max(separation_a, separation_b) >= 0.0 and not over_face:
        proximity = closest_points(vertices_a, vertices_b)
        if proximity.distance > margin:
            return []
        if not proximity.overlapping and len(proximity.corners_a) == len(proximity.corners_b) == 1:
            corner_a = polygon_a.vertices[proximity.corners_a[0]]
            corner_b = polygon_b.vertices[proximity.corners_b[0]]
            return [PointsFeature(corner_a, 0.0, corner_b, 0.0)]
    edge = int(np.argmin(incident_normals @ normal))
    corners = [edge, (edge + 1) % len(incident)]
    segment = _clip(incident[corners], tangent, float(end @ tangent))
    if len(segment):
        segment = _clip(segment, -tangent, float(-start @ tangent))
    found: list[Feature] = []
    local_normal, local_face = reference_polygon.normals()[face], reference_polygon.vertices[face]
    for index, point in enumerate(segment):  # clipping keeps the order of the edge's corners
        if (point - start) @ normal > margin:
            continue
        corner, other = incident_polygon.vertices[corners[index]], incident_polygon.vertices[corners[1 - index]]
        if np.array_equal(point, incident[corners[index]]):
            found.append(FaceFeature(reference_is_b, local_normal, local_face, corner))
            continue
        side = face if abs((point - start) @ tangent) < abs((point - end) @ tangent) else (face + 1) % len(reference)
        side_point = reference_polygon.vertices[side]
        found.append(
            FaceFeature(reference_is_b, local_normal, local_face, corner, edge_end=other, side_point=side_point)
        )
    return found


def _swapped(found: Feature) -> Feature:
    """The same contact with bodies a and b exchanged."""
    if isinstance(found, PointsFeature):
        return PointsFeature(found.point_b, found.radius_b, found.point_a, found.radius_a)
    return replace(found, reference_is_b=not found.reference_is_b)


def _narrowphase(body_a: Body, pose_a: FloatArray, body_b: Body, pose_b: FloatArray, margin: float) -> list[Feature]:
    shape_a, shape_b = body_a.shape, body_b.shape
    if isinstance(shape_a, Circle) and isinstance(shape_b, Circle):
        return _circle_circle(shape_a.radius, shape_b.radius)
    if isinstance(shape_a, Circle) and isinstance(shape_b, Polygon):
        return _circle_polygon(pose_a[1:], shape_a.radius, shape_b, pose_b)
    if isinstance(shape_a, Polygon) and isinstance(shape_b, Circle):
        return [_swapped(found) for found in _circle_polygon(pose_b[1:], shape_b.radius, shape_a, pose_a)]
    assert isinstance(shape_a, Polygon) and isinstance(shape_b, Polygon)
    return _polygon_polygon(shape_a, pose_a, shape_b, pose_b, margin)


def detect_contacts(
    bodies: tuple[Body, ...], positions: FloatArray, margin: float, skipped: frozenset[tuple[int, int]] = frozenset()
) -> list[Contact]:
    """The contacts (gap < margin) among bodies at positions (n, 3) of (angle, x, y) rows.

    Broadphase: the pairs whose bounding circles come within the margin, less the pairs (i, j),
    i < j, in ``skipped`` (bodies bound by a joint, bodies both welded to the world).
    """
    radii = np.array([body.shape.bounding_radius() for body in bodies])
    first, second = np.triu_indices(len(bodies), k=1)
    reach = radii[first] + radii[second] + margin
    near = np.sum((positions[first, 1:] - positions[second, 1:]) ** 2, axis=1) <= reach**2
    contacts = []
    for a, b in zip(first[near].tolist(), second[near].tolist()):
        if (a, b) in skipped:
            continue
        for feature in _narrowphase(bodies[a], positions[a], bodies[b], positions[b], margin):
            normal, arm_a, arm_b, gap = feature_geometry(feature, positions[a], positions[b])
            if gap < margin:
                turn_back_a, turn_back_b = rotation(positions[a, 0]).T, rotation(positions[b, 0]).T
                contacts.append(Contact(a, b, normal, turn_back_a @ arm_a, turn_back_b @ arm_b, gap, feature))
    return contacts
