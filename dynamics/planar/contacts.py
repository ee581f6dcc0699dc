"""Contact detection of the planar engine (LCP-physics §A.6), native (native/planar/contacts.hpp):
a bounding-circle broadphase and narrowphases for circle–circle (§A.6.1), circle–polygon (§A.6.2:
GJK's closest point of the polygon to the centre outside, the separating axis of least penetration
inside) and polygon–polygon (separating axes, with GJK's distance where they leave it open, which
also finds corners closest to each other; then the incident edge clipped against the reference
face, at most two points). The contact geometry of a feature and its derivatives with respect to the
poses are native too (native/planar/contact_geometry.hpp); this module holds the features
and contacts as Python values.

Two bodies are in contact where their signed distance is below the margin ε (§A.6). A contact's
normal points from body_b towards body_a, so that n · (velocity of a's point − velocity of b's point)
is the separating speed.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dcol import _native
from dcol.typing import FloatArray

from .bodies import Body, Circle, Polygon, rotated

__all__ = [
    "Contact",
    "PointsFeature",
    "FaceFeature",
    "detect_contacts",
    "feature_geometry",
    "feature_jacobian",
    "feature_geometry_jacobian",
    "features_geometry",
    "native_shapes",
    "contacts_from_records",
    "skipped_matrix",
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

# Native detection's contacts: pairs (K, 2), kinds (K,), reference_is_b (K,), data (K, 12), geometry (K, 7).
ContactRecords = tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32], FloatArray, FloatArray]

# The kinds of feature record the native geometry takes (native/planar/contact_geometry.hpp).
_POINTS, _FACE, _CLIPPED_FACE = 0, 1, 2


def feature_record(feature: Feature) -> tuple[int, bool, FloatArray]:
    """A feature as the native contact geometry takes it: its kind (0 points, 1 face, 2 clipped
    face), whether body b is the reference, and its numbers (12,): point_a, radius_a, point_b,
    radius_b for points; normal, face_point, incident_point, radius, edge_end, side_point for a face."""
    data = np.zeros(12)
    if isinstance(feature, PointsFeature):
        data[:6] = (*feature.point_a, feature.radius_a, *feature.point_b, feature.radius_b)
        return _POINTS, True, data
    data[:7] = (*feature.normal, *feature.face_point, *feature.incident_point, feature.radius)
    if feature.edge_end is None or feature.side_point is None:
        return _FACE, feature.reference_is_b, data
    data[7:11] = (*feature.edge_end, *feature.side_point)
    return _CLIPPED_FACE, feature.reference_is_b, data


def features_geometry(
    features: Sequence[Feature], poses_a: FloatArray, poses_b: FloatArray, *, jacobians: bool = False
) -> tuple[FloatArray, FloatArray | None]:
    """The contacts of K features at poses (K, 3) of (angle, x, y) of their bodies a and b, in one
    native call: rows (K, 7) of (normal (2), arm_a (2), arm_b (2), gap), and with ``jacobians``
    ∂(normal, arm_a, arm_b)/∂(pose_a, pose_b) (K, 6, 6) (else None)."""
    records = [feature_record(feature) for feature in features]
    return _native.planar.feature_geometry(
        np.array([kind for kind, _, _ in records], dtype=np.int32),
        np.array([reference_is_b for _, reference_is_b, _ in records], dtype=np.int32),
        np.array([data for _, _, data in records]).reshape(len(records), 12),
        np.asarray(poses_a, dtype=np.float64).reshape(len(records), 3),
        np.asarray(poses_b, dtype=np.float64).reshape(len(records), 3),
        jacobians,
    )


def _geometry(row: FloatArray) -> Geometry:
    return row[:2], row[2:4], row[4:6], float(row[6])


def feature_geometry(feature: Feature, pose_a: FloatArray, pose_b: FloatArray) -> Geometry:
    """The contact a feature gives at poses (3,) of (angle, x, y): normal, arms, gap."""
    rows, _ = features_geometry([feature], pose_a, pose_b)
    return _geometry(rows[0])


def feature_jacobian(feature: Feature, pose_a: FloatArray, pose_b: FloatArray) -> FloatArray:
    """∂(normal, arm_a, arm_b)/∂(pose_a, pose_b) (6, 6) of feature_geometry, poses (angle, x, y)."""
    _, jacobian = feature_geometry_jacobian(feature, pose_a, pose_b)
    return jacobian


def feature_geometry_jacobian(feature: Feature, pose_a: FloatArray, pose_b: FloatArray) -> tuple[Geometry, FloatArray]:
    """feature_geometry and feature_jacobian at once (one pass)."""
    rows, jacobians = features_geometry([feature], pose_a, pose_b, jacobians=True)
    assert jacobians is not None
    return _geometry(rows[0]), jacobians[0]


def _feature(kind: int, reference_is_b: int, data: FloatArray) -> Feature:
    """The feature of a native record (the inverse of feature_record)."""
    if kind == _POINTS:
        return PointsFeature(data[0:2], float(data[2]), data[3:5], float(data[5]))
    clipped = kind == _CLIPPED_FACE
    return FaceFeature(
        bool(reference_is_b),
        data[0:2],
        data[2:4],
        data[4:6],
        float(data[6]),
        edge_end=data[7:9] if clipped else None,
        side_point=data[9:11] if clipped else None,
    )


def native_shapes(bodies: Sequence[Body]) -> _native.planar.Shapes:
    """The bodies' shapes as the native contact detection takes them."""
    polygons = [body.shape for body in bodies if isinstance(body.shape, Polygon)]
    return _native.planar.Shapes(
        np.array([body.shape.radius if isinstance(body.shape, Circle) else 0.0 for body in bodies]),
        np.array([len(body.shape.vertices) if isinstance(body.shape, Polygon) else 0 for body in bodies], np.int32),
        np.vstack([polygon.vertices for polygon in polygons] or [np.zeros((0, 2))]),
        np.vstack([polygon.normals() for polygon in polygons] or [np.zeros((0, 2))]),
    )


def skipped_matrix(bodies: int, skipped: frozenset[tuple[int, int]]) -> npt.NDArray[np.int32]:
    """The pairs (i, j), i < j, not tested for contact, as the (bodies, bodies) flags native detection
    takes."""
    flags = np.zeros((bodies, bodies), dtype=np.int32)
    for first, second in skipped:
        flags[first, second] = 1
    return flags


def contacts_from_records(records: ContactRecords, positions: FloatArray) -> list[Contact]:
    """The contacts of native detection's records (pairs (K, 2), kinds (K,), reference_is_b (K,),
    data (K, 12), geometry (K, 7)) at positions (n, 3)."""
    pairs, kinds, reference_is_b, data, rows = records
    # The arms back in each body's frame: R(−angle) arm.
    points_a = rotated(-positions[pairs[:, 0], 0], rows[:, 2:4])
    points_b = rotated(-positions[pairs[:, 1], 0], rows[:, 4:6])
    return [
        Contact(a, b, rows[k, :2], points_a[k], points_b[k], float(rows[k, 6]), _feature(kind, reference, data[k]))
        for k, (a, b, kind, reference) in enumerate(zip(*pairs.T.tolist(), kinds.tolist(), reference_is_b.tolist()))
    ]


def detect_contacts(
    bodies: tuple[Body, ...], positions: FloatArray, margin: float, skipped: frozenset[tuple[int, int]] = frozenset()
) -> list[Contact]:
    """The contacts (gap < margin) among bodies at positions (n, 3) of (angle, x, y) rows, detected
    natively (native/planar/contacts.hpp).

    Broadphase: the pairs whose bounding circles come within the margin, less the pairs (i, j),
    i < j, in ``skipped`` (bodies bound by a joint, bodies both welded to the world).
    """
    positions = np.ascontiguousarray(positions, dtype=np.float64)
    records = _native.planar.detect_contacts(
        native_shapes(bodies), positions, margin, skipped_matrix(len(bodies), skipped)
    )
    return contacts_from_records(records, positions)
