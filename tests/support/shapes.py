"""Seeded random shapes, poses and shape-pair configurations shared by the geometry tests."""

import numpy as np

from dcol.geom import Box, Capsule, Cone, Cylinder, Ellipsoid, Polygon, Polytope, Sphere
from tests.support.oracle import bounding_radii, rotation_matrix, shape_kind

KINDS = ["polytope", "capsule", "cylinder", "cone", "sphere", "ellipsoid", "polygon"]
REGIMES = ["penetrating", "near", "separated"]

# Directions (±1, ±1, ±1): half-spaces along all eight bound any polytope they are part of.
_OCTANTS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) / np.sqrt(3)


def random_quaternion(rng):
    """Random quaternion [w, x, y, z] of random norm in [0.5, 2]: the API must normalize it."""
    q = rng.normal(size=4)
    return q * rng.uniform(0.5, 2.0) / np.linalg.norm(q)


def random_offset(rng):
    """Random offset pose (r_off, q_off) of a shape inside its body."""
    return 0.5 * rng.normal(size=3), random_quaternion(rng)


def _random_polytope(rng, offset):
    variant = rng.integers(3)
    if variant == 0:
        return Box(rng.uniform(0.2, 1.5, size=3), offset=offset)
    if variant == 1:
        points = rng.normal(size=(int(rng.integers(6, 16)), 3))
        points *= rng.uniform(0.4, 1.5, size=(len(points), 1)) / np.linalg.norm(points, axis=1, keepdims=True)
        # An octahedron of radius 0.3 keeps the origin strictly inside the hull.
        return Polytope.from_vertices(np.vstack([points, 0.3 * np.eye(3), -0.3 * np.eye(3)]), offset=offset)
    normals = np.vstack([rng.normal(size=(int(rng.integers(2, 8)), 3)), _OCTANTS])
    return Polytope(normals, rng.uniform(0.3, 1.5, size=len(normals)), offset=offset)


def _random_polygon(rng, offset):
    # Edge normals spread around the circle (gaps below π) keep the polygon bounded.
    count = int(rng.integers(3, 9))
    angles = rng.uniform(0, 2 * np.pi) + 2 * np.pi * (np.arange(count) + rng.uniform(-0.2, 0.2, size=count)) / count
    C = np.column_stack([np.cos(angles), np.sin(angles)]) * rng.uniform(0.5, 2.0, size=(count, 1))
    return Polygon(C, rng.uniform(0.3, 1.5, size=count), rng.uniform(0.05, 0.4), offset=offset)


def random_shape(kind, rng, offset=False):
    """A random well-formed shape of the given kind, sizes about 0.1–2; with a random offset pose if asked."""
    offset = random_offset(rng) if offset else None
    if kind == "polytope":
        return _random_polytope(rng, offset)
    if kind == "capsule":
        return Capsule(rng.uniform(0.1, 1.0), rng.uniform(0.2, 2.0), offset=offset)
    if kind == "cylinder":
        return Cylinder(rng.uniform(0.1, 1.0), rng.uniform(0.2, 2.0), offset=offset)
    if kind == "cone":
        return Cone(rng.uniform(0.5, 2.0), rng.uniform(0.2, 1.2), offset=offset)
    if kind == "sphere":
        return Sphere(rng.uniform(0.2, 1.5), offset=offset)
    if kind == "ellipsoid":
        M = rng.normal(size=(3, 3))
        return Ellipsoid(M @ M.T + 0.3 * np.eye(3), offset=offset)
    if kind == "polygon":
        return _random_polygon(rng, offset)
    raise ValueError(kind)


def scaled_copy(shape, s=1.0, with_offset=True):
    """The shape rebuilt from its attributes with every length multiplied by s, with or without its offset pose."""
    offset = (s * shape.offset_position, shape.offset_rotation) if with_offset else None
    kind = shape_kind(shape)
    if kind == "polytope":
        return Polytope(shape.A, s * shape.b, offset=offset)
    if kind in ("capsule", "cylinder"):
        return type(shape)(s * shape.R, s * shape.L, offset=offset)
    if kind == "cone":
        return Cone(s * shape.H, shape.beta, offset=offset)
    if kind == "sphere":
        return Sphere(s * shape.R, offset=offset)
    if kind == "ellipsoid":
        return Ellipsoid(shape.P / s**2, offset=offset)
    return Polygon(shape.C, s * shape.d, s * shape.R, offset=offset)


def body_position(shape, origin, q):
    """Body position that puts the shape's own frame origin at ``origin`` for body orientation q."""
    return origin - rotation_matrix(q) @ shape.offset_position


def regime_distance(a, b, rng, regime):
    """A distance between the shape origins of a and b for the regime: "penetrating" (below the sum of
    their inner radii, so α < 1), "near" (between the sums of inner and outer radii) or "separated"
    (above the sum of the outer radii, so α > 1)."""
    (inner_a, outer_a), (inner_b, outer_b) = bounding_radii(a), bounding_radii(b)
    inner, outer = inner_a + inner_b, outer_a + outer_b
    return {
        "penetrating": rng.uniform(0.1, 0.9) * inner,
        "near": rng.uniform(inner, outer),
        "separated": rng.uniform(1.05, 2.5) * outer,
    }[regime]


def random_configuration(kind_a, kind_b, rng, regime, offsets=False):
    """Shapes a, b and body poses ``(a, r_a, q_a, b, r_b, q_b)`` with the shape origins a chosen distance apart.

    regime: "penetrating" (distance below the sum of the inner radii, so α < 1), "separated"
    (above the sum of the outer radii, so α > 1) or "near" (in between: touching is possible).
    """
    a, b = random_shape(kind_a, rng, offsets), random_shape(kind_b, rng, offsets)
    distance = regime_distance(a, b, rng, regime)
    direction = rng.normal(size=3)
    origin_a = rng.normal(size=3)
    origin_b = origin_a + distance * direction / np.linalg.norm(direction)
    q_a, q_b = random_quaternion(rng), random_quaternion(rng)
    return a, body_position(a, origin_a, q_a), q_a, b, body_position(b, origin_b, q_b), q_b
