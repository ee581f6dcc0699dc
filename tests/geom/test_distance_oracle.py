"""Checks that make tests/support/distance_oracle.py trustworthy: coal behaves as distance_oracle assumes (frames,
signs, normals), and the oracle's sources (cvxpy, coal, closed forms, the support-function search) agree
with each other where each is meant to hold."""

import itertools

import numpy as np
import pytest

from dcol.geom import Box, Capsule, Cone, Cylinder, Polytope, Sphere
from tests.support.distance_oracle import (
    closed_form_distance,
    coal_distance,
    euclidean_distance,
    segment_closest_points,
    separation,
    signed_distance,
)
from tests.support.optional import oracle
from tests.support.oracle import bounding_radii, gauge, rotation_matrix, shape_frame, shape_kind, vertices
from tests.support.shapes import (
    KINDS,
    body_position,
    random_configuration,
    random_offset,
    random_quaternion,
    random_shape,
)

coal = oracle("coal")

IDENTITY = (np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0]))
STRICTLY_CONVEX = {"sphere", "ellipsoid"}  # a pair with one of these has a unique closest pair
# Witness points of the iterative sources (cvxpy, GJK, the search) on curved surfaces: they stop at a gap of
# ~1e-11 in the distance (or its square), which grows only quadratically as a point slides along the
# surface, so the points are good to ~1e-5. Tight checks of points use closed forms or membership.
POINT_TOL = 1e-4


def posed(a, b, rng, distance):
    """(a, r_a, q_a, b, r_b, q_b): random body orientations, shape origins `distance` apart in a random direction."""
    direction = rng.normal(size=3)
    origin_a = rng.normal(size=3)
    origin_b = origin_a + distance * direction / np.linalg.norm(direction)
    q_a, q_b = random_quaternion(rng), random_quaternion(rng)
    return a, body_position(a, origin_a, q_a), q_a, b, body_position(b, origin_b, q_b), q_b


def separated(a, b, rng):
    return posed(a, b, rng, rng.uniform(1.05, 2.0) * (bounding_radii(a)[1] + bounding_radii(b)[1]))


def assert_same_answer(found, expected, distance_tol, point_tol):
    """found, expected: (distance, p_a, p_b, normal) tuples."""
    np.testing.assert_allclose(found[0], expected[0], rtol=0, atol=distance_tol)
    np.testing.assert_allclose(found[3], expected[3], rtol=0, atol=point_tol)
    np.testing.assert_allclose(found[1], expected[1], rtol=0, atol=point_tol)
    np.testing.assert_allclose(found[2], expected[2], rtol=0, atol=point_tol)


# --- coal's conventions, probed on coal directly -------------------------------------------------------------


def coal_nearest(geometry, probe, radius=0.1):
    """coal's (distance, nearest point on geometry, normal) to a small sphere at probe, geometry at the origin."""
    request, result = coal.DistanceRequest(), coal.DistanceResult()
    request.gjk_tolerance = 1e-12  # the default 1e-6 leaves the ellipsoid's point 5e-4 off
    probe_transform = coal.Transform3s(np.eye(3), np.asarray(probe, dtype=float))
    distance = coal.distance(geometry, coal.Transform3s(), coal.Sphere(radius), probe_transform, request, result)
    return distance, np.array(result.getNearestPoint1()), np.array(result.normal)


@pytest.mark.parametrize(
    "geometry, probe, nearest",
    [
        (coal.Cone(1.0, 2.0), [0, 0, 3], [0, 0, 1]),  # apex at +h/2
        (coal.Cone(1.0, 2.0), [0, 0, -3], [0, 0, -1]),  # base face at −h/2 ...
        (coal.Cone(1.0, 2.0), [3, 0, -1], [1, 0, -1]),  # ... with the radius at its rim
        (coal.Capsule(0.5, 2.0), [0, 0, 3], [0, 0, 1.5]),  # segment along z, full length 2
        (coal.Capsule(0.5, 2.0), [3, 0, 0], [0.5, 0, 0]),
        (coal.Cylinder(0.5, 2.0), [0, 0, 3], [0, 0, 1]),  # faces at ±h/2
        (coal.Box(2.0, 4.0, 6.0), [3, 0, 0], [1, 0, 0]),  # full side lengths
        (coal.Ellipsoid(1.0, 2.0, 3.0), [0, 4, 0], [0, 2, 0]),  # radii
    ],
)
def test_coal_shape_frames(geometry, probe, nearest):
    distance, point, _ = coal_nearest(geometry, probe)
    np.testing.assert_allclose(point, nearest, atol=POINT_TOL)
    np.testing.assert_allclose(distance, np.linalg.norm(np.subtract(probe, nearest)) - 0.1, atol=1e-9)


def test_coal_transform_and_quaternion_order(rng):
    # Transform3s(R, t) maps p to R p + t; coal.Quaternion(w, x, y, z) takes the scalar first, like dcol.
    q, t, p = random_quaternion(rng), rng.normal(size=3), rng.normal(size=3)
    R = rotation_matrix(q)
    np.testing.assert_allclose(coal.Transform3s(R, t).transform(p), R @ p + t, atol=1e-14)
    unit = q / np.linalg.norm(q)
    np.testing.assert_allclose(coal.Transform3s(coal.Quaternion(*unit), t).getRotation(), R, atol=1e-14)


@pytest.mark.parametrize("offset, expected", [(2.0, 0.5), (1.2, -0.3)])
def test_coal_sign_and_normal(offset, expected):
    # Spheres of radii 1 and 0.5, the second at +x: normal +x (from the first to the second), negative
    # distance under penetration, and p2 − p1 = distance · normal in both cases.
    request, result = coal.DistanceRequest(), coal.DistanceResult()
    transform = coal.Transform3s(np.eye(3), np.array([offset, 0.0, 0.0]))
    distance = coal.distance(coal.Sphere(1.0), coal.Transform3s(), coal.Sphere(0.5), transform, request, result)
    assert distance == pytest.approx(expected, abs=1e-12)
    np.testing.assert_allclose(result.normal, [1, 0, 0], atol=1e-12)
    difference = np.subtract(result.getNearestPoint2(), result.getNearestPoint1())
    np.testing.assert_allclose(difference, distance * np.array(result.normal), atol=1e-12)


def test_coal_penetration_needs_signed_distance():
    # A box and a capsule (no pair-specific routine): without enable_signed_distance coal reports 0 and NaN.
    def box_capsule(signed):
        request, result = coal.DistanceRequest(), coal.DistanceResult()
        request.enable_signed_distance = signed
        box, capsule = coal.Box(2.0, 2.0, 2.0), coal.Capsule(0.2, 1.0)
        capsule_transform = coal.Transform3s(np.eye(3), np.array([0.3, 0.8, 0.1]))
        distance = coal.distance(box, coal.Transform3s(), capsule, capsule_transform, request, result)
        return distance, np.array(result.normal)

    distance, normal = box_capsule(False)
    assert distance == 0.0 and np.all(np.isnan(normal))
    distance, normal = box_capsule(True)
    assert distance == pytest.approx(-0.4, abs=1e-9)
    np.testing.assert_allclose(normal, [0, 1, 0], atol=1e-9)


# --- coal_geometry's frames: dcol's shapes probed through coal_distance ---------------------------------------


@pytest.mark.parametrize(
    "shape, probe, nearest",
    [
        (Cone(2.0, np.pi / 4), [-2.5, 0, 0], [-1.5, 0, 0]),  # apex at −3H/4
        (Cone(2.0, np.pi / 4), [1.5, 0, 3], [0.5, 0, 2]),  # base rim at x = H/4, radius H tan β
        (Capsule(0.5, 2.0), [3, 0, 0], [1.5, 0, 0]),  # segment along x with ends at ±L/2
        (Cylinder(0.5, 2.0), [0, 0, 3], [0, 0, 0.5]),
        (Box([1.0, 2.0, 3.0]), [0, 5, 0], [0, 2, 0]),
    ],
)
def test_coal_geometry_matches_dcol_frames(shape, probe, nearest):
    probe_sphere = Sphere(0.1)
    distance, p_a, _, _ = coal_distance(shape, *IDENTITY, probe_sphere, np.array(probe, dtype=float), IDENTITY[1])
    np.testing.assert_allclose(p_a, nearest, atol=POINT_TOL)
    assert distance == pytest.approx(np.linalg.norm(np.subtract(probe, nearest)) - 0.1, abs=1e-9)


# --- separated shapes: cvxpy, coal and the support-function search ---------------------------------------------


@pytest.mark.parametrize("kind_a, kind_b", list(itertools.combinations_with_replacement(KINDS, 2)))
def test_separated_cvxpy_and_coal_agree(kind_a, kind_b, rng):
    for _ in range(2):
        configuration = random_configuration(kind_a, kind_b, rng, "separated", offsets=True)
        a, r_a, q_a, b, r_b, q_b = configuration
        distance, p_a, p_b = euclidean_distance(*configuration)
        coal_d, coal_a, coal_b, normal = coal_distance(*configuration)
        assert coal_d == pytest.approx(distance, rel=1e-7)
        # coal's witness points are a closest pair: in the shapes, as far apart as the cvxpy minimum, and
        # along coal's normal, which is itself certified by its supporting planes being that far apart.
        assert gauge(a, r_a, q_a, coal_a) <= 1 + 1e-7 and gauge(b, r_b, q_b, coal_b) <= 1 + 1e-7
        assert np.linalg.norm(coal_b - coal_a) == pytest.approx(distance, rel=1e-7)
        np.testing.assert_allclose(coal_b - coal_a, coal_d * normal, atol=1e-9)
        assert separation(*configuration, normal) == pytest.approx(distance, rel=1e-7)
        if {kind_a, kind_b} & STRICTLY_CONVEX:
            np.testing.assert_allclose(p_a, coal_a, atol=POINT_TOL)
            np.testing.assert_allclose(p_b, coal_b, atol=POINT_TOL)


@pytest.mark.parametrize("kind_a, kind_b", [("polytope", "cone"), ("cylinder", "ellipsoid"), ("capsule", "polygon")])
def test_search_finds_the_cvxpy_distance_when_separated(kind_a, kind_b, rng):
    configuration = random_configuration(kind_a, kind_b, rng, "separated", offsets=True)
    found = signed_distance(*configuration)
    assert found[0] == pytest.approx(euclidean_distance(*configuration)[0], abs=1e-9)
    np.testing.assert_allclose(found[3], coal_distance(*configuration)[3], atol=1e-5)  # as flat as the points


@pytest.mark.parametrize("kind_a, kind_b", [("polytope", "ellipsoid"), ("cylinder", "cone"), ("capsule", "polygon")])
def test_cvxpy_stays_accurate_near_contact(kind_a, kind_b, rng):
    # Sliding b towards a along the normal of the closest pair keeps that pair closest: the gap is known.
    a, r_a, q_a, b, r_b, q_b = random_configuration(kind_a, kind_b, rng, "separated", offsets=True)
    distance, _, _, normal = coal_distance(a, r_a, q_a, b, r_b, q_b)
    for gap in (1e-2, 1e-4):
        slid = euclidean_distance(a, r_a, q_a, b, r_b - (distance - gap) * normal, q_b)[0]
        assert slid == pytest.approx(gap, abs=1e-9)


# --- closed forms ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "a0, a1, b0, b1, distance",
    [
        ([-1, 0, 0], [1, 0, 0], [0, -1, 1], [0, 1, 1], 1.0),  # skew, interior points
        ([-1, 0, 0], [1, 0, 0], [2, -1, 1], [2, 1, 1], np.sqrt(2.0)),  # skew, an end point
        ([0, 0, 0], [1, 0, 0], [0.5, 1, 0], [2, 1, 0], 1.0),  # parallel, overlapping
        ([0, 0, 0], [1, 0, 0], [3, 1, 0], [2, 1, 0], np.sqrt(2.0)),  # parallel, apart
        ([0.5, 1, 0], [0.5, 1, 0], [0, 0, 0], [1, 0, 0], 1.0),  # point and segment
        ([0, 0, 0], [0, 0, 0], [1, 2, 2], [1, 2, 2], 3.0),  # two points
    ],
)
def test_segment_closest_points(a0, a1, b0, b1, distance):
    s, t = segment_closest_points(a0, a1, b0, b1)
    assert np.linalg.norm(t - s) == pytest.approx(distance, abs=1e-14)
    for point, start, end in ((s, a0, a1), (t, b0, b1)):  # on their segments
        along = np.subtract(end, start)
        u = 0.0 if along @ along == 0 else (point - start) @ along / (along @ along)
        assert -1e-14 <= u <= 1 + 1e-14
        np.testing.assert_allclose(point, np.add(start, u * along), atol=1e-14)


def random_box(rng):
    return Box(rng.uniform(0.2, 1.5, size=3), offset=random_offset(rng))


# (shape a, shape b) makers for each closed-form pair; boxes are built here since support.shapes' polytopes are general.
CLOSED_FORM_PAIRS = {
    "sphere-sphere": lambda rng: (random_shape("sphere", rng, True), random_shape("sphere", rng, True)),
    "sphere-capsule": lambda rng: (random_shape("sphere", rng, True), random_shape("capsule", rng, True)),
    "capsule-capsule": lambda rng: (random_shape("capsule", rng, True), random_shape("capsule", rng, True)),
    "box-sphere": lambda rng: (random_box(rng), random_shape("sphere", rng, True)),
    "sphere-box": lambda rng: (random_shape("sphere", rng, True), random_box(rng)),
    "cylinder-sphere": lambda rng: (random_shape("cylinder", rng, True), random_shape("sphere", rng, True)),
}


@pytest.mark.parametrize("pair", CLOSED_FORM_PAIRS)
def test_closed_forms_when_separated(pair, rng):
    for _ in range(3):
        configuration = separated(*CLOSED_FORM_PAIRS[pair](rng), rng)
        expected = closed_form_distance(*configuration)
        assert euclidean_distance(*configuration)[0] == pytest.approx(expected[0], abs=1e-9)
        # These pairs have routines of their own in coal, exact rather than iterative: tight points.
        assert_same_answer(coal_distance(*configuration), expected, distance_tol=1e-9, point_tol=1e-8)


def overlapping_sphere(shape, r, q, rng, inside):
    """A sphere overlapping the shape (a box or cylinder), its centre inside the shape or outside near a face."""
    origin, Q = shape_frame(shape, r, q)
    if shape_kind(shape) == "cylinder":
        extent = np.array([shape.L / 2, shape.R / np.sqrt(2), shape.R / np.sqrt(2)])
    else:
        extent = shape.half_extents
    w = extent * rng.uniform(-0.9, 0.9, size=3)
    if not inside:  # out through one face: 1.1 times its distance from the centre (R for the cylinder's side)
        axis = rng.integers(3)
        reach = shape.R if shape_kind(shape) == "cylinder" and axis > 0 else extent[axis]
        w[axis] = 1.1 * reach * np.sign(w[axis])
    sphere = Sphere(rng.uniform(0.3, 1.0))
    q_sphere = random_quaternion(rng)
    return sphere, body_position(sphere, origin + Q @ w, q_sphere), q_sphere


@pytest.mark.parametrize("pair", ["sphere-sphere", "sphere-capsule", "capsule-capsule"])
def test_penetrating_swept_spheres_coal_matches_closed_form(pair, rng):
    kinds = pair.split("-")
    for _ in range(4):
        configuration = random_configuration(*kinds, rng, "penetrating", offsets=True)
        expected = closed_form_distance(*configuration)
        assert expected[0] < 0
        assert_same_answer(coal_distance(*configuration), expected, distance_tol=1e-9, point_tol=1e-9)


@pytest.mark.parametrize("inside", [True, False])
def test_penetrating_box_sphere_coal_matches_closed_form(inside, rng):
    for _ in range(4):
        box, r_box, q_box = random_box(rng), rng.normal(size=3), random_quaternion(rng)
        configuration = (box, r_box, q_box, *overlapping_sphere(box, r_box, q_box, rng, inside))
        expected = closed_form_distance(*configuration)
        assert expected[0] < 0
        assert_same_answer(coal_distance(*configuration), expected, distance_tol=1e-9, point_tol=1e-9)


@pytest.mark.parametrize("inside", [True, False])
def test_penetrating_cylinder_sphere_search_matches_closed_form(inside, rng):
    # Not against coal: its sphere–cylinder routine is wrong when the centre is inside (see coal_distance).
    for _ in range(2):
        cylinder, r, q = random_shape("cylinder", rng, True), rng.normal(size=3), random_quaternion(rng)
        configuration = (cylinder, r, q, *overlapping_sphere(cylinder, r, q, rng, inside))
        expected = closed_form_distance(*configuration)
        assert expected[0] < 0
        assert_same_answer(signed_distance(*configuration), expected, distance_tol=1e-9, point_tol=POINT_TOL)


@pytest.mark.parametrize("pair", ["sphere-capsule", "capsule-capsule"])
def test_penetrating_search_matches_closed_form(pair, rng):
    for _ in range(2):
        configuration = random_configuration(*pair.split("-"), rng, "penetrating", offsets=True)
        assert_same_answer(signed_distance(*configuration), closed_form_distance(*configuration), 1e-9, POINT_TOL)


def test_penetrating_box_sphere_search_matches_closed_form(rng):
    box, r_box, q_box = random_box(rng), rng.normal(size=3), random_quaternion(rng)
    configuration = (box, r_box, q_box, *overlapping_sphere(box, r_box, q_box, rng, inside=True))
    assert_same_answer(signed_distance(*configuration), closed_form_distance(*configuration), 1e-9, POINT_TOL)


# --- padded polygons ----------------------------------------------------------------------------------------


def test_padded_polygon_against_sphere_when_separated(rng):
    # The padded polygon is the flat polygon grown by R, and the sphere its centre c grown by R_s, so their
    # distance is dist(c, flat polygon) − R − R_s = hypot(c3, in-plane distance) − R − R_s in the polygon's
    # frame. The in-plane distance comes from a polytope, the prism over the polygon, and a tiny probe at c.
    for _ in range(3):
        polygon, sphere = random_shape("polygon", rng, True), random_shape("sphere", rng, True)
        configuration = separated(polygon, sphere, rng)
        _, r, q, _, r_sphere, q_sphere = configuration
        origin, Q = shape_frame(polygon, r, q)
        centre = shape_frame(sphere, r_sphere, q_sphere)[0]
        c3 = (Q.T @ (centre - origin))[2]
        height = abs(c3) + 1.0  # so that the prism's caps are never nearest
        A = np.block([[polygon.C, np.zeros((len(polygon.d), 1))], [np.array([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]])]])
        prism = Polytope(A, np.r_[polygon.d, height, height], offset=(polygon.offset_position, polygon.offset_rotation))
        probe = Sphere(1e-9)
        in_plane = euclidean_distance(prism, r, q, probe, centre, IDENTITY[1])[0] + probe.R
        expected = np.hypot(c3, in_plane) - polygon.R - sphere.R
        assert euclidean_distance(*configuration)[0] == pytest.approx(expected, abs=1e-8)
        assert coal_distance(*configuration)[0] == pytest.approx(expected, abs=1e-8)


def test_padded_polygon_against_sphere_above_it_when_penetrating(rng):
    # Centre above the polygon's interior, off its plane: the distance is |c3| − R − R_s.
    for _ in range(2):
        polygon = random_shape("polygon", rng, True)
        r, q = rng.normal(size=3), random_quaternion(rng)
        origin, Q = shape_frame(polygon, r, q)
        corners = vertices(polygon)
        weights = rng.dirichlet(np.ones(len(corners)))
        sphere = Sphere(rng.uniform(0.2, 0.6))
        c3 = rng.choice([-1, 1]) * rng.uniform(0.2, 0.8) * (polygon.R + sphere.R)
        w = np.r_[0.9 * weights @ corners, c3]
        q_sphere = random_quaternion(rng)
        configuration = (polygon, r, q, sphere, body_position(sphere, origin + Q @ w, q_sphere), q_sphere)
        found = signed_distance(*configuration)
        assert found[0] == pytest.approx(abs(c3) - polygon.R - sphere.R, abs=1e-9)
        np.testing.assert_allclose(found[3], np.sign(c3) * Q[:, 2], atol=1e-6)  # out of the plane on b's side
