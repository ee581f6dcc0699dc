"""Random shapes and poses shared by the tests (seeded, so every run sees the same cases)."""

import numpy as np
import pytest

from dcol.geom import Box, Capsule, Cone, Cylinder, Ellipsoid, Polygon, Polytope, Sphere

KINDS = ["polytope", "capsule", "cylinder", "cone", "sphere", "ellipsoid", "polygon"]


def random_shape(kind, rng):
    """A random, well-formed shape of the given kind, sizes about 0.2–2."""
    if kind == "polytope":
        if rng.random() < 0.3:
            return Box(rng.uniform(0.2, 1.5, size=3))
        points = rng.normal(size=(int(rng.integers(6, 20)), 3))
        points *= rng.uniform(0.3, 1.5, size=(len(points), 1)) / np.linalg.norm(points, axis=1, keepdims=True)
        # An octahedron inside keeps the origin strictly interior.
        return Polytope.from_vertices(np.vstack([points, 0.2 * np.eye(3), -0.2 * np.eye(3)]))
    if kind == "capsule":
        return Capsule(rng.uniform(0.1, 1.0), rng.uniform(0.2, 2.0))
    if kind == "cylinder":
        return Cylinder(rng.uniform(0.1, 1.0), rng.uniform(0.2, 2.0))
    if kind == "cone":
        return Cone(rng.uniform(0.5, 2.0), rng.uniform(0.2, 1.2))
    if kind == "sphere":
        return Sphere(rng.uniform(0.2, 1.5))
    if kind == "ellipsoid":
        M = rng.normal(size=(3, 3))
        return Ellipsoid(M @ M.T + 0.5 * np.eye(3))
    if kind == "polygon":
        angles = np.sort(rng.uniform(0, 2 * np.pi, size=int(rng.integers(3, 9))))
        angles = np.r_[angles, angles[0] + 2 * np.pi]
        # Edge normals spread around the circle keep the polygon bounded.
        if np.max(np.diff(angles)) >= np.pi:
            angles = np.linspace(0, 2 * np.pi, 6)[:-1] + rng.uniform(0, 1)
        else:
            angles = angles[:-1]
        C = np.column_stack([np.cos(angles), np.sin(angles)])
        return Polygon(C, rng.uniform(0.3, 1.5, size=len(angles)), rng.uniform(0.05, 0.4))
    raise ValueError(kind)


def random_quaternion(rng):
    """Random quaternion of random (nonzero) norm: the API must normalize it."""
    q = rng.normal(size=4)
    return q * rng.uniform(0.5, 2.0) / np.linalg.norm(q)


@pytest.fixture
def rng():
    return np.random.default_rng(20261122)
