"""Geometry of dcol: convex primitives and differentiable collision detection (DCOL)."""

from .proximity import ProximityBatchResult, ProximityResult, proximity, proximity_batch
from .shapes import MAX_FACES, Box, Capsule, Cone, Cylinder, Ellipsoid, Polygon, Polytope, Shape, Sphere

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
    "proximity",
    "proximity_batch",
    "ProximityResult",
    "ProximityBatchResult",
]
