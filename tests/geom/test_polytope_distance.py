"""GJK/EPA signed distance of two polytopes (dcol._native.polytope_distance, the contacts' narrow phase
for polytope pairs) on random hulls at random poses.

Apart and touching it must agree with the cone-program signed distance (dcol.geom.signed_distance,
solved tightly). Overlapping, EPA gives the minimum translation distance, which for polytopes is the
least overlap over the separating-axis candidates (both shapes' face normals and the cross products of
their edge directions), computed here in numpy from the hulls' faces and edges; the cone program's
depth along DCOL's normal is an upper bound on it.
"""

import numpy as np
import pytest

from dcol import _native
from dcol.geom import Box, Polytope, Sphere, signed_distance
from dcol.solvers import SolverSettings
from tests.support.oracle import rotation_matrix
from tests.support.shapes import random_quaternion

TIGHT = SolverSettings(feastol=1e-12, abstol=1e-12, reltol=1e-12)


def random_hull(rng):
    """A polytope: the hull of 5–20 random points around the origin, stretched along random axes."""
    while True:
        points = rng.normal(size=(rng.integers(5, 21), 3))
        points *= rng.uniform(0.2, 1.0) / np.linalg.norm(points, axis=1, keepdims=True)
        points = points @ np.diag(rng.uniform(0.3, 1.5, 3)) @ np.linalg.qr(rng.normal(size=(3, 3)))[0]
        try:
            return Polytope.from_vertices(points)
        except ValueError:  # the origin outside the hull of a lopsided draw
            continue


def world_points(shape, r, q):
    return np.asarray(r) + shape.vertices @ rotation_matrix(q).T


def world_edges(shape, q):
    v = shape.vertices @ rotation_matrix(q).T
    return v[shape.edges[:, 1]] - v[shape.edges[:, 0]]


def least_overlap(a, r_a, q_a, b, r_b, q_b):
    """The minimum translation distance of two overlapping polytopes over the separating-axis candidates."""
    va, vb = world_points(a, r_a, q_a), world_points(b, r_b, q_b)
    axes = [a.A @ rotation_matrix(q_a).T, b.A @ rotation_matrix(q_b).T]
    crossed = np.cross(world_edges(a, q_a)[:, None, :], world_edges(b, q_b)[None, :, :]).reshape(-1, 3)
    axes.append(crossed[np.linalg.norm(crossed, axis=1) > 1e-9])
    u = np.vstack(axes)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    ha, hb = va @ u.T, vb @ u.T
    overlap = np.minimum(ha.max(0) - hb.min(0), hb.max(0) - ha.min(0))
    return overlap.min()


def placed(rng, regime):
    """Two random hulls (or boxes) at random poses, b moved along the cone program's normal so that
    they are apart by 1 mm – 1 m or touching, or moved towards a to overlap."""
    shapes = [random_hull(rng) if rng.random() < 0.7 else Box(rng.uniform(0.1, 1.0, 3)) for _ in range(2)]
    r_a, q_a, q_b = rng.normal(size=3), random_quaternion(rng), random_quaternion(rng)
    r_b = r_a + 3.0 * rng.normal(size=3)
    reference = signed_distance(shapes[0], r_a, q_a, shapes[1], r_b, q_b, settings=TIGHT)
    if regime == "overlapping":
        r_b = r_a + rng.uniform(0.0, 0.3) * (r_b - r_a) / np.linalg.norm(r_b - r_a)
        return shapes[0], r_a, q_a, shapes[1], r_b, q_b
    gap = 10.0 ** rng.uniform(-3.0, 0.0) if regime == "apart" else 0.1
    r_b = r_b + (gap - reference.distance) * reference.normal
    if regime == "touching":  # from 10 cm apart, where the cone program's distance is Euclidean and exact
        reference = signed_distance(shapes[0], r_a, q_a, shapes[1], r_b, q_b, settings=TIGHT)
        r_b = r_b - reference.distance * reference.normal
    return shapes[0], r_a, q_a, shapes[1], r_b, q_b


def assert_certificate(config, found, atol=1e-9):
    """The witnesses lie in their shapes and on the shapes' support planes along the normal, the planes'
    gap is the distance, and (apart) the witnesses are that far apart along the normal: a pair of
    points and a pair of planes at the same distance, which no other pair can beat."""
    a, r_a, q_a, b, r_b, q_b = config
    n, p_a, p_b = found["normal"], found["p_a"], found["p_b"]
    assert np.linalg.norm(n) == pytest.approx(1.0, abs=1e-12)
    for shape, r, q, p in ((a, r_a, q_a, p_a), (b, r_b, q_b, p_b)):
        assert np.all(shape.A @ (rotation_matrix(q).T @ (p - r)) <= shape.b + atol)
    top_a, bottom_b = (world_points(a, r_a, q_a) @ n).max(), (world_points(b, r_b, q_b) @ n).min()
    assert n @ p_a == pytest.approx(top_a, abs=atol) and n @ p_b == pytest.approx(bottom_b, abs=atol)
    assert bottom_b - top_a == pytest.approx(found["distance"], abs=atol)
    if found["distance"] > 0.0:
        np.testing.assert_allclose(p_b - p_a, found["distance"] * n, rtol=0, atol=atol)


def test_gjk_matches_the_cone_program_apart():
    rng = np.random.default_rng(24)
    for trial in range(60):
        config = placed(rng, "apart")
        reference = signed_distance(*config, settings=TIGHT)
        found = _native.polytope_distance(*config)
        assert found["converged"], trial
        assert found["distance"] == pytest.approx(reference.distance, abs=1e-9), trial
        assert_certificate(config, found)
        # The cone program's normal is its distance cone's dual variable, accurate to its tolerances.
        np.testing.assert_allclose(found["normal"], reference.normal, atol=1e-5)


def test_gjk_certifies_touching_shapes():
    """Shapes moved to touch along the cone program's normal from 10 cm apart. Within 1 + 1e-5 of
    touching the cone-program distance is the support planes' gap along DCOL's normal, a lower bound
    on the distance (distance.hpp): GJK's distance is never below it."""
    rng = np.random.default_rng(25)
    for trial in range(60):
        config = placed(rng, "touching")
        reference = signed_distance(*config, settings=TIGHT)
        found = _native.polytope_distance(*config)
        assert found["converged"], trial
        assert abs(found["distance"]) <= 1e-8, trial  # placed to the cone program's accuracy
        assert reference.distance <= found["distance"] + 1e-9, trial
        # Where the closest features are not a face of the Minkowski difference, the normal is the
        # direction of a gap of 1e-9 and carries its rounding.
        assert_certificate(config, found, atol=1e-8)


def test_epa_gives_the_minimum_translation_distance_when_overlapping():
    rng = np.random.default_rng(26)
    for trial in range(60):
        config = placed(rng, "overlapping")
        found = _native.polytope_distance(*config)
        assert found["converged"], trial
        depth = least_overlap(*config)
        assert depth > 0.0
        assert found["distance"] == pytest.approx(-depth, abs=1e-9), trial
        # Moving b by the depth along the normal brings the shapes to touch.
        a, r_a, q_a, b, r_b, q_b = config
        n = found["normal"]
        gap = (world_points(b, r_b, q_b) @ n).min() - (world_points(a, r_a, q_a) @ n).max()
        assert gap == pytest.approx(found["distance"], abs=1e-9), trial
        # The cone program's depth is measured along DCOL's normal: never less than the least one.
        assert signed_distance(*config, settings=TIGHT).distance <= found["distance"] + 1e-9, trial


def test_polytope_distance_refuses_other_shapes():
    identity = [1.0, 0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="b must be a polytope"):
        _native.polytope_distance(Box([1.0, 1.0, 1.0]), np.zeros(3), identity, Sphere(1.0), np.ones(3), identity)
