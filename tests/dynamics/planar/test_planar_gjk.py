"""The planar narrowphase's GJK (dcol.dynamics.planar.gjk) on random convex polygons and circles:
distances and closest points against shapely's, and against the separating axes (SAT) of the same
pairs: both find the same pairs overlapping, SAT's largest face separation is a lower bound of the
distance and equals it where a corner is closest to a face. And the narrowphase built on them:
polygon contacts exactly within the margin with the true distance as their gap, corners apart
beyond the margin, and circle–polygon contacts at the closest feature."""

import numpy as np
import pytest
from scipy.spatial import ConvexHull

from dcol.dynamics.planar import Body, Circle, Polygon, detect_contacts, rectangle
from dcol.dynamics.planar.bodies import rotation
from dcol.dynamics.planar.gjk import closest_points
from tests.support.optional import oracle

shapely = oracle("shapely")
shapely_ops = oracle("shapely.ops")


def random_polygon(rng):
    points = rng.normal(size=(int(rng.integers(3, 9)), 2)) * rng.uniform(0.2, 1.5, size=2)
    return Polygon(points[ConvexHull(points).vertices])


def placed(polygon, rng, spread):
    angle, centre = rng.uniform(-np.pi, np.pi), rng.uniform(-spread, spread, size=2)
    return centre + polygon.vertices @ rotation(angle).T


def sat_separation(vertices_a, vertices_b):
    """The largest separation of one polygon from the other along a face normal of either."""

    def along_faces(reference, other):
        edges = np.roll(reference, -1, axis=0) - reference
        normals = np.stack([edges[:, 1], -edges[:, 0]], axis=1) / np.linalg.norm(edges, axis=1)[:, None]
        return np.max(np.min(np.einsum("kjd,kd->kj", other[None] - reference[:, None], normals), axis=1))

    return max(along_faces(vertices_a, vertices_b), along_faces(vertices_b, vertices_a))


def test_hull_hull_distance_and_closest_points_match_shapely_and_sat():
    rng = np.random.default_rng(7)
    separated = overlapping = corner_to_face = 0
    for _ in range(400):
        vertices_a = placed(random_polygon(rng), rng, 2.0)
        vertices_b = placed(random_polygon(rng), rng, 2.0)
        proximity = closest_points(vertices_a, vertices_b)
        hull_a, hull_b = shapely.Polygon(vertices_a), shapely.Polygon(vertices_b)
        reference = hull_a.distance(hull_b)
        sat = sat_separation(vertices_a, vertices_b)
        if abs(sat) < 1e-9:
            continue  # touching: either answer is right
        assert proximity.overlapping == (sat < 0.0) == hull_a.intersects(hull_b)
        if proximity.overlapping:
            overlapping += 1
            assert proximity.distance == 0.0
            continue
        separated += 1
        assert proximity.distance == pytest.approx(reference, rel=1e-10, abs=1e-12)
        assert np.linalg.norm(proximity.point_a - proximity.point_b) == pytest.approx(reference, rel=1e-10)
        assert hull_a.distance(shapely.Point(proximity.point_a)) < 1e-10
        assert hull_b.distance(shapely.Point(proximity.point_b)) < 1e-10
        assert sat <= proximity.distance + 1e-12
        if sorted((len(proximity.corners_a), len(proximity.corners_b))) == [1, 2]:
            corner_to_face += 1
            assert sat == pytest.approx(proximity.distance, rel=1e-10)
    assert min(separated, overlapping, corner_to_face) > 50


def test_point_hull_distance_matches_shapely():
    """The circle–polygon case: the hull against a circle's centre."""
    rng = np.random.default_rng(8)
    inside = 0
    for _ in range(300):
        vertices = placed(random_polygon(rng), rng, 0.5)
        centre = rng.uniform(-2.0, 2.0, size=2)
        proximity = closest_points(vertices, centre[None, :])
        hull = shapely.Polygon(vertices)
        assert proximity.overlapping == hull.contains(shapely.Point(centre))
        inside += proximity.overlapping
        if not proximity.overlapping:
            assert proximity.distance == pytest.approx(hull.distance(shapely.Point(centre)), rel=1e-10)
            assert hull.exterior.distance(shapely.Point(proximity.point_a)) < 1e-10
            np.testing.assert_allclose(proximity.point_b, centre, rtol=1e-15)
    assert inside > 20


def test_corners_apart_beyond_the_margin_are_no_contact():
    """Two squares turned 45°, corner to corner: their faces' separation is below their distance,
    so separating axes alone would report a contact up to √2 margins apart; GJK's distance does not,
    and within the margin the contact is the line between the corners, its gap their distance."""
    diamond, margin = Body(rectangle(1, 1)), 1e-2
    half_diagonal = np.sqrt(0.5)
    for distance, contacts in ((1.2 * margin, 0), (0.5 * margin, 1)):
        positions = np.array([[np.pi / 4, 0, 0], [np.pi / 4, 2 * half_diagonal + distance, 0]])
        found = detect_contacts((diamond, diamond), positions, margin)
        assert len(found) == contacts
        if found:
            assert found[0].gap == pytest.approx(distance, rel=1e-9)
            np.testing.assert_allclose(found[0].normal, [-1.0, 0.0], atol=1e-12)


def test_circle_polygon_contacts_follow_the_closest_feature():
    """A circle near a corner of a box meets the corner (normal along the centres' line to it), near
    a face meets the face (normal the face's), with its centre inside meets the shallowest face."""
    circle, box = Body(Circle(0.25)), Body(rectangle(2, 1))
    box_pose = [0.0, 0.0, 0.0]
    for centre, normal, gap in (
        ([1.1, 0.6], np.array([0.1, 0.1]) / np.hypot(0.1, 0.1), np.hypot(0.1, 0.1) - 0.25),
        ([0.3, 0.7], [0.0, 1.0], 0.2 - 0.25),
        ([0.9, 0.1], [1.0, 0.0], -0.1 - 0.25),
    ):
        (contact,) = detect_contacts((circle, box), np.array([[0.0, *centre], box_pose]), 1e-3)
        np.testing.assert_allclose(contact.normal, normal, atol=1e-12)
        assert contact.gap == pytest.approx(gap, abs=1e-12)


def test_polygon_contacts_appear_within_the_margin_with_the_true_distance():
    """Random polygon pairs moved apart to a distance of 0.02 to 2 margins along their closest
    points' line (shapely's): the narrowphase (separating axes, GJK where they leave the distance
    open) finds a contact exactly when that distance is within the margin, its smallest gap the
    distance."""
    rng = np.random.default_rng(9)
    margin = 1e-2
    inside = outside = 0
    for _ in range(200):
        polygons = [random_polygon(rng), random_polygon(rng)]
        positions = np.column_stack([rng.uniform(-np.pi, np.pi, 2), rng.uniform(-2.0, 2.0, (2, 2))])

        def hull(index):
            return shapely.Polygon(positions[index, 1:] + polygons[index].vertices @ rotation(positions[index, 0]).T)

        if hull(0).intersects(hull(1)):
            continue
        point_a, point_b = (np.array(point.coords[0]) for point in shapely_ops.nearest_points(hull(0), hull(1)))
        distance = float(np.linalg.norm(point_a - point_b))
        target = rng.uniform(0.02, 2.0) * margin
        positions[1, 1:] += (distance - target) * (point_a - point_b) / distance
        assert hull(0).distance(hull(1)) == pytest.approx(target, rel=1e-9)
        found = detect_contacts(tuple(Body(polygon) for polygon in polygons), positions, margin)
        assert bool(found) == (target < margin)
        if found:
            inside += 1
            assert min(contact.gap for contact in found) == pytest.approx(target, rel=1e-9)
        else:
            outside += 1
    assert min(inside, outside) > 50
