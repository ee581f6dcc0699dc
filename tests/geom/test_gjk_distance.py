"""GJK/EPA signed distance (dcol._native.gjk_distance, the contacts' narrow phase for polytopes,
spheres, capsules and padded polygons, and by their support functions for cylinders, cones and
ellipsoids) on random shapes at random poses.

Apart it must agree with the cone-program signed distance (dcol.geom.signed_distance, solved
tightly); touching, it must certify itself (witnesses on the support planes, the planes' gap the
distance) and stay above the cone program's touching value, a lower bound. Overlapping, EPA gives the
minimum translation distance, which for a polytope against a polytope, a sphere or a capsule whose
cores overlap is the cores' least overlap over the separating-axis candidates (the cores' face
normals and the cross products of their edge directions, computed here in numpy from the shapes'
faces and edges) plus the radii; the cone program's depth along DCOL's normal is an upper bound on it.
"""

import numpy as np
import pytest

from dcol import _native
from dcol.geom import Box, Capsule, Polytope, Sphere, signed_distance
from dcol.solvers import SolverSettings
from tests.support.oracle import rotation_matrix, support
from tests.support.shapes import random_quaternion, random_shape

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


def random_polytope(rng):
    return random_hull(rng) if rng.random() < 0.7 else Box(rng.uniform(0.1, 1.0, 3))


def core(shape, r, q):
    """The shape's core: world points (k, 3), edge directions (e, 3), face normals (f, 3), and its radius."""
    R, none = rotation_matrix(q), np.zeros((0, 3))
    if isinstance(shape, Polytope):
        v = np.asarray(r) + shape.vertices @ R.T
        return v, v[shape.edges[:, 1]] - v[shape.edges[:, 0]], shape.A @ R.T, 0.0
    if isinstance(shape, Sphere):
        return np.asarray(r)[None], none, none, shape.R
    assert isinstance(shape, Capsule)
    ends = np.asarray(r) + np.outer([-0.5, 0.5], shape.L * R[:, 0])
    return ends, ends[1:] - ends[:1], none, shape.R


def core_overlap(a, r_a, q_a, b, r_b, q_b):
    """The least overlap of the two shapes' cores over the separating-axis candidates, and the two radii:
    when it is positive, the cores' minimum translation distance (≤ 0: the cores are apart)."""
    va, ea, fa, rad_a = core(a, r_a, q_a)
    vb, eb, fb, rad_b = core(b, r_b, q_b)
    crossed = np.cross(ea[:, None, :], eb[None, :, :]).reshape(-1, 3)
    u = np.vstack([fa, fb, crossed[np.linalg.norm(crossed, axis=1) > 1e-9]])
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    ha, hb = va @ u.T, vb @ u.T
    return np.minimum(ha.max(0) - hb.min(0), hb.max(0) - ha.min(0)).min(), rad_a + rad_b


def assert_certificate(config, found, atol=1e-9):
    """The witnesses lie on the two shapes' support planes along the normal, the planes' gap is the
    distance, and apart the witnesses are that far apart along the normal; for polytopes they lie in
    the shapes: a pair of points and a pair of planes at the same distance, which no pair can beat."""
    a, r_a, q_a, b, r_b, q_b = config
    n, p_a, p_b = found["normal"], found["p_a"], found["p_b"]
    assert np.linalg.norm(n) == pytest.approx(1.0, abs=1e-12)
    for shape, r, q, p in ((a, r_a, q_a, p_a), (b, r_b, q_b, p_b)):
        if isinstance(shape, Polytope):
            assert np.all(shape.A @ (rotation_matrix(q).T @ (p - r)) <= shape.b + atol)
    top_a, bottom_b = support(a, r_a, q_a, n), -support(b, r_b, q_b, -n)
    assert n @ p_a == pytest.approx(top_a, abs=atol) and n @ p_b == pytest.approx(bottom_b, abs=atol)
    assert bottom_b - top_a == pytest.approx(found["distance"], abs=atol)
    if found["distance"] > 0.0:
        np.testing.assert_allclose(p_b - p_a, found["distance"] * n, rtol=0, atol=atol)


def placed(shapes, rng, regime):
    """The shapes at random poses, b moved along the cone program's normal so that they are apart by
    1 mm – 1 m or touching, or moved towards a to overlap."""
    r_a, q_a, q_b = rng.normal(size=3), random_quaternion(rng), random_quaternion(rng)
    r_b = r_a + 4.0 * rng.normal(size=3)
    if regime == "overlapping":
        r_b = r_a + rng.uniform(0.0, 0.3) * (r_b - r_a) / np.linalg.norm(r_b - r_a)
        return shapes[0], r_a, q_a, shapes[1], r_b, q_b
    reference = signed_distance(shapes[0], r_a, q_a, shapes[1], r_b, q_b, settings=TIGHT)
    gap = 10.0 ** rng.uniform(-3.0, 0.0) if regime == "apart" else 0.1
    r_b = r_b + (gap - reference.distance) * reference.normal
    if regime == "touching":  # from 10 cm apart, where the cone program's distance is Euclidean and exact
        reference = signed_distance(shapes[0], r_a, q_a, shapes[1], r_b, q_b, settings=TIGHT)
        r_b = r_b - reference.distance * reference.normal
    return shapes[0], r_a, q_a, shapes[1], r_b, q_b


KINDS = ["polytope", "sphere", "capsule", "polygon"]


def random_pair(rng, kinds=KINDS):
    return [random_polytope(rng) if kind == "polytope" else random_shape(kind, rng) for kind in rng.choice(kinds, 2)]


def solved_pairs(seed, regime, trials=80):
    """(trial, configuration, cone-program distance, GJK's converged result) of random pairs."""
    rng = np.random.default_rng(seed)
    for trial in range(trials):
        config = placed(random_pair(rng), rng, regime)
        found = _native.gjk_distance(*config)
        assert found["converged"], trial
        yield trial, config, signed_distance(*config, settings=TIGHT), found


def test_gjk_matches_the_cone_program_apart():
    for trial, config, reference, found in solved_pairs(24, "apart"):
        assert found["distance"] == pytest.approx(reference.distance, abs=1e-9), trial
        assert_certificate(config, found)
        # The cone program's normal is its distance cone's dual variable, accurate to its tolerances.
        np.testing.assert_allclose(found["normal"], reference.normal, atol=1e-5)


def test_gjk_certifies_touching_shapes():
    """Shapes moved to touch along the cone program's normal from 10 cm apart. Within 1 + 1e-5 of
    touching the cone-program distance is the support planes' gap along DCOL's normal, a lower bound
    on the distance (distance.hpp): GJK's distance is never below it."""
    for trial, config, reference, found in solved_pairs(25, "touching"):
        assert abs(found["distance"]) <= 1e-8, trial  # placed to the cone program's accuracy
        assert reference.distance <= found["distance"] + 1e-9, trial
        # Where the closest features are not a face of the Minkowski difference, the normal is the
        # direction of a gap of 1e-9 and carries its rounding.
        assert_certificate(config, found, atol=1e-8)


def test_epa_gives_the_minimum_translation_distance_when_overlapping():
    """A polytope overlapping a polytope, a sphere or a capsule. Where the cores overlap, the depth is
    their least overlap plus the radii; where only the radii reach across (a sphere's centre outside
    the polytope), GJK's core distance less the radii, which the certificate checks."""
    rng = np.random.default_rng(26)
    cores_overlapping = 0
    for trial in range(80):
        shapes = [random_polytope(rng), random_pair(rng, ["polytope", "sphere", "capsule"])[0]]
        config = placed(shapes[:: 1 if trial % 2 else -1], rng, "overlapping")
        found = _native.gjk_distance(*config)
        assert found["converged"], trial
        depth, radii = core_overlap(*config)
        if depth > 0.0:
            cores_overlapping += 1
            assert found["distance"] == pytest.approx(-(depth + radii), abs=1e-9), trial
        assert found["distance"] < 0.0
        assert_certificate(config, found)
        # The cone program's depth is measured along DCOL's normal: never less than the least one.
        assert signed_distance(*config, settings=TIGHT).distance <= found["distance"] + 1e-9, trial
    assert cores_overlapping >= 40


def test_overlapping_flat_cores_are_left_to_the_cone_program():
    """Two capsules whose axes cross: their cores' difference is flat, EPA has no solid to grow in (the
    contacts take such capsules in closed form)."""
    identity, turned = [1.0, 0.0, 0.0, 0.0], [np.cos(0.5), 0.0, 0.0, np.sin(0.5)]
    found = _native.gjk_distance(Capsule(0.2, 1.0), np.zeros(3), identity, Capsule(0.1, 1.0), np.zeros(3), turned)
    assert not found["converged"]


def test_gjk_on_round_shapes_matches_the_cone_program_apart():
    """Cylinders, cones and ellipsoids by their support functions, against any shape: GJK approaches a
    curved surface instead of ending on a vertex, and stops when a step gains less than 1e-10 of the
    distance. Its distance then agrees with the cone program's to far below the contacts' needs; its
    normal, the direction of the simplex's closest point, less closely (a curved surface's closest point
    moves to first order as the normal turns, the distance only to second order). Overlapping, EPA may
    stop at its polytope's size limit on a curved surface and say so (the contacts then take the cone
    program); where it converges its depth is never more than the cone program's along DCOL's normal."""
    rng = np.random.default_rng(27)
    overlapping_converged = 0
    for trial in range(90):
        kinds = [rng.choice(["cylinder", "cone", "ellipsoid"]), rng.choice(KINDS + ["cylinder", "cone", "ellipsoid"])]
        shapes = [random_polytope(rng) if kind == "polytope" else random_shape(kind, rng) for kind in kinds]
        regime = ["apart", "touching", "overlapping"][trial % 3]
        config = placed(shapes[:: 1 if trial % 2 else -1], rng, regime)
        found = _native.gjk_distance(*config)
        reference = signed_distance(*config, settings=TIGHT)
        if regime == "apart":
            assert found["converged"], (trial, kinds)
            assert found["distance"] == pytest.approx(reference.distance, rel=1e-7, abs=1e-12), (trial, kinds)
            np.testing.assert_allclose(found["normal"], reference.normal, atol=1e-4)
        elif found["converged"]:
            overlapping_converged += regime == "overlapping"
            assert reference.distance <= found["distance"] + 1e-9, (trial, kinds)
    assert overlapping_converged >= 20


@pytest.mark.parametrize("exponent", [100, 154, 155, 200, 300])
def test_shapes_far_apart_keep_finite_distances_and_contacts(exponent):
    """Two spheres 10^exponent m apart along (2, −1, 2)/3: GJK's distance and the contact's separation
    are the centres' distance less the radii (squared lengths of 10¹⁵⁵ overflow; GJK scales its
    coordinates first, and the point–point rule its difference vector)."""
    from dcol.geom import contacts

    identity, u = [1.0, 0.0, 0.0, 0.0], np.array([2.0, -1.0, 2.0]) / 3.0
    a, b = Sphere(0.5), Sphere(0.25)
    far = 10.0**exponent
    expected = far - 0.75  # |far · u| = far, u being a unit vector
    found = _native.gjk_distance(a, np.zeros(3), identity, b, far * u, identity)
    assert found["converged"] and found["distance"] == pytest.approx(expected, rel=1e-12)
    np.testing.assert_allclose(found["normal"], u, atol=1e-12)
    contact = contacts(a, np.zeros(3), identity, b, far * u, identity, margin=2.0 * far)
    assert len(contact) == 1 and contact.separation[0] == pytest.approx(expected, rel=1e-12)
    np.testing.assert_allclose(contact.normal[0], u, atol=1e-12)
