"""Geometry of dcol: convex primitives and differentiable collision detection (DCOL)."""

from .derivatives import (
    DERIVATIVE_SETTINGS,
    ContactJacobian,
    ProximityGradient,
    ProximityJacobian,
    ShapeParameterJacobian,
    contact_jacobian,
    contact_jacobian_batch,
    proximity_gradient,
    proximity_gradient_batch,
    proximity_jacobian,
    proximity_jacobian_batch,
    shape_parameter_jacobian,
)
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
    "proximity_jacobian",
    "proximity_gradient",
    "contact_jacobian",
    "proximity_jacobian_batch",
    "proximity_gradient_batch",
    "contact_jacobian_batch",
    "ProximityJacobian",
    "ProximityGradient",
    "ContactJacobian",
    "DERIVATIVE_SETTINGS",
    "shape_parameter_jacobian",
    "ShapeParameterJacobian",
]
