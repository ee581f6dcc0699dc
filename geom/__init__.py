"""Geometry of dcol: convex primitives and differentiable collision detection (DCOL)."""

from .constraints import CollisionConstraints, Obstacle, collision_constraints
from .contacts import ContactRule, ContactSet, contacts
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
from .distance import (
    DISTANCE_SETTINGS,
    DistanceJacobian,
    DistanceResult,
    distance_jacobian,
    distance_jacobian_batch,
    signed_distance,
    signed_distance_batch,
    support_point,
)
from .mesh import ConvexMesh, convex_decomposition, load_mesh
from .proximity import ProximityBatchResult, ProximityResult, proximity, proximity_batch
from .rotations import quaternion_from_xyzw
from .scene import Scene, SceneContacts
from .shapes import MAX_FACES, Box, Capsule, Cone, Cylinder, Ellipsoid, Polygon, Polytope, Shape, Sphere
from .topology import PolytopeTopology, polytope_topology

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
    "ConvexMesh",
    "MAX_FACES",
    "load_mesh",
    "convex_decomposition",
    "polytope_topology",
    "PolytopeTopology",
    "proximity",
    "proximity_batch",
    "quaternion_from_xyzw",
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
    "DISTANCE_SETTINGS",
    "shape_parameter_jacobian",
    "ShapeParameterJacobian",
    "signed_distance",
    "signed_distance_batch",
    "distance_jacobian",
    "distance_jacobian_batch",
    "DistanceResult",
    "DistanceJacobian",
    "support_point",
    "Obstacle",
    "collision_constraints",
    "CollisionConstraints",
    "contacts",
    "ContactSet",
    "ContactRule",
    "Scene",
    "SceneContacts",
]
