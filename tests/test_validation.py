"""Bad input gets a clear error naming the argument and the rule; never a crash or a silent NaN."""

import numpy as np
import pytest

from dcol.geom import Box, Capsule, Cone, Cylinder, Ellipsoid, Polygon, Polytope, Sphere, proximity, proximity_batch
from dcol.geom import MAX_FACES
from dcol.solvers import SolverSettings

IDENTITY = [1.0, 0.0, 0.0, 0.0]
SQUARE = np.array([[1.0, 0], [0, 1], [-1, 0], [0, -1]])


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda: Sphere(0.0), "R must be finite and > 0"),
        (lambda: Sphere(-1.0), "R must be finite and > 0"),
        (lambda: Sphere(np.nan), "R must be finite"),
        (lambda: Sphere(np.inf), "R must be finite"),
        (lambda: Capsule(1.0, 0.0), "L must be finite and > 0"),
        (lambda: Capsule(-1.0, 1.0), "R must be"),
        (lambda: Cylinder(1.0, -2.0), "L must be"),
        (lambda: Cone(0.0, 0.3), "H must be"),
        (lambda: Cone(1.0, 0.0), "beta must be"),
        (lambda: Cone(1.0, np.pi / 2), r"beta must be in \(0, pi/2\)"),
        (lambda: Cone(1.0, 2.0), "beta must be in"),
        (lambda: Ellipsoid(np.diag([1.0, -1.0, 1.0])), "P must be positive definite"),
        (lambda: Ellipsoid(np.diag([1.0, 0.0, 1.0])), "P must be positive definite"),
        (lambda: Ellipsoid(np.array([[1.0, 0.5, 0], [0, 1, 0], [0, 0, 1]])), "P must be symmetric"),
        (lambda: Ellipsoid(np.eye(2)), r"P must have shape \(3, 3\)"),
        (lambda: Ellipsoid(np.full((3, 3), np.nan)), "P must be finite"),
        (lambda: Box([1.0, 0.0, 1.0]), "half_extents must be > 0"),
        (lambda: Box([1.0, 1.0]), r"half_extents must have shape \(3,\)"),
        (lambda: Polytope(np.eye(3), np.ones(3)), "bounded"),  # an open octant
        (lambda: Polytope(np.vstack([np.eye(3), -np.eye(3)]), np.r_[np.ones(5), 0.0]), "b must be > 0"),
        (lambda: Polytope(np.vstack([np.eye(3), -np.eye(3)]), np.ones(5)), "b must have shape"),
        (lambda: Polytope(np.ones((6, 2)), np.ones(6)), r"A must have shape \(m, 3\)"),
        (lambda: Polytope(np.vstack([np.eye(3), -np.eye(3), [[0, 0, 0]]]), np.ones(7)), "A must not have zero rows"),
        (lambda: Polytope(np.vstack([np.eye(3), np.eye(3)]), np.ones(6)), "bounded"),  # a cone of directions open
        (lambda: Polytope.from_vertices(np.eye(3) + 1.0), "at least 4"),
        (lambda: Polytope.from_vertices(np.vstack([np.eye(3), np.eye(3) * 2]) + 1.0), "origin strictly inside"),
        (lambda: Polytope.from_vertices(np.c_[np.random.default_rng(0).normal(size=(8, 2)), np.zeros(8)]), "solid"),
        (lambda: Polygon(SQUARE, np.ones(4), 0.0), "R must be"),
        (lambda: Polygon(SQUARE, np.r_[1.0, 1.0, 1.0, -1.0], 0.1), "d must be > 0"),
        (lambda: Polygon(SQUARE[:2], np.ones(2), 0.1), "bounded"),
        (lambda: Polygon(np.ones((4, 3)), np.ones(4), 0.1), r"C must have shape \(m, 2\)"),
        (lambda: Sphere(1.0, offset=([0, 0, np.nan], IDENTITY)), "offset position must be finite"),
        (lambda: Sphere(1.0, offset=([0, 0, 0], [0, 0, 0, 0])), "offset orientation must be a nonzero quaternion"),
        (lambda: Sphere(1.0, offset=([0, 0, 0], 2 * np.eye(3))), "offset orientation must be a rotation matrix"),
    ],
)
def test_invalid_shapes_raise(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_wrong_types_raise_type_error():
    with pytest.raises(TypeError, match="R must be a real number"):
        Sphere("big")
    with pytest.raises(TypeError, match="A must be an array of real numbers"):
        Polytope([["a", "b", "c"]], [1.0])
    with pytest.raises(TypeError, match="offset must be a pair"):
        Sphere(1.0, offset=[0, 0, 0])


def test_too_many_faces():
    angles = np.linspace(0, 2 * np.pi, MAX_FACES + 2)[:-1]
    C = np.column_stack([np.cos(angles), np.sin(angles)])
    with pytest.raises(ValueError, match=f"at most {MAX_FACES}"):
        Polygon(C, np.ones(len(angles)), 0.1)


def test_largest_polytope_still_solves():
    """A polytope at the face limit takes the largest solver size class."""
    rng = np.random.default_rng(3)
    normals = rng.normal(size=(MAX_FACES, 3))
    big = Polytope(normals / np.linalg.norm(normals, axis=1, keepdims=True), np.ones(MAX_FACES))
    res = proximity(big, np.zeros(3), IDENTITY, big, [2.5, 0.3, 0.1], IDENTITY)
    assert res.converged and 1.0 < res.alpha < 1.3


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        (dict(r_a=[0, 0]), ValueError, r"r_a must have shape \(3,\)"),
        (dict(r_b=[0, 0, np.nan]), ValueError, "r_b must be finite"),
        (dict(q_a=[0, 0, 0, 0]), ValueError, "q_a must be a quaternion"),
        (dict(q_b=[1, 0, np.inf, 0]), ValueError, "q_b must be a quaternion"),
        (dict(q_a=[1, 0, 0]), ValueError, "q_a must be a quaternion"),
        (dict(q_b=2 * np.eye(3)), ValueError, "q_b must be a quaternion .* or a 3x3 rotation matrix"),
        (dict(q_a=np.diag([1.0, 1.0, -1.0])), ValueError, "q_a must be"),
        (dict(r_a="here"), TypeError, "r_a must be an array of real numbers"),
        (dict(a="sphere"), TypeError, "a must be a dcol.geom shape"),
        (dict(b=None), TypeError, "b must be a dcol.geom shape"),
    ],
)
def test_invalid_poses_raise(kwargs, error, match):
    args = dict(a=Sphere(1.0), r_a=np.zeros(3), q_a=IDENTITY, b=Sphere(1.0), r_b=[3.0, 0, 0], q_b=IDENTITY)
    args.update(kwargs)
    with pytest.raises(error, match=match):
        proximity(**args)


def test_invalid_batches_raise():
    s = Sphere(1.0)
    r, q = np.zeros((4, 3)), np.tile(IDENTITY, (4, 1))
    with pytest.raises(ValueError, match="r_b has 3 rows but r_a has 4"):
        proximity_batch(s, r, q, s, r[:3], q[:3])
    with pytest.raises(ValueError, match=r"q_a must have shape \(N, 4\) or \(N, 3, 3\) with N = 4"):
        proximity_batch(s, r, q[:3], s, r, q)
    with pytest.raises(ValueError, match=r"r_a must have shape \(N, 3\)"):
        proximity_batch(s, np.zeros(3), q, s, r, q)
    with pytest.raises(ValueError, match="a has 2 shapes but there are 4 poses"):
        proximity_batch([s, s], r, q, s, r, q)
    bad = q.copy()
    bad[2] = 0.0
    with pytest.raises(ValueError, match="pose 2: .*q_a, q_b must be a quaternion"):
        proximity_batch(s, r, q, s, r + 3.0, bad, threads=2)
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        proximity_batch(s, r, q, s, r, q, threads=0)


@pytest.mark.parametrize("field,value", [("feastol", 0.0), ("abstol", -1.0), ("reltol", 2.0), ("max_iter", -1)])
def test_invalid_settings_raise(field, value):
    with pytest.raises(ValueError, match=field):
        SolverSettings(**{field: value})
    settings = SolverSettings()
    with pytest.raises(ValueError, match=field):
        setattr(settings, field, value)
