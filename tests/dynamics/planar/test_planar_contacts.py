"""Contact detection of the planar engine (LCP-physics §A.6) on cases computed by hand: normals
from body b towards body a, contact points in each body's frame, signed gaps."""

import numpy as np
import pytest

from dcol.dynamics.planar import Body, Circle, Polygon, detect_contacts, rectangle
from dcol.dynamics.planar.contacts import FaceFeature, PointsFeature, feature_geometry, feature_jacobian

MARGIN = 1e-3


def contacts_of(shape_a, pose_a, shape_b, pose_b):
    return detect_contacts((Body(shape_a), Body(shape_b)), np.array([pose_a, pose_b], dtype=float), MARGIN)


def check(contact, normal, point_a, point_b, gap):
    np.testing.assert_allclose(contact.normal, normal, atol=1e-12)
    np.testing.assert_allclose(contact.point_a, point_a, atol=1e-12)
    np.testing.assert_allclose(contact.point_b, point_b, atol=1e-12)
    assert contact.gap == pytest.approx(gap, abs=1e-12)


def test_circle_circle_overlapping_with_b_turned():
    """Centres 1.5 apart, radii 1: gap −0.5, n = (−1, 0); b turned by 90° sees its point (−1, 0) of
    the world as (0, 1) in its frame (LCP-physics §A.6.1)."""
    (contact,) = contacts_of(Circle(1.0), (0, 0, 0), Circle(1.0), (np.pi / 2, 1.5, 0))
    check(contact, (-1, 0), (1, 0), (0, 1), -0.5)


def test_circle_above_a_box():
    (contact,) = contacts_of(Circle(0.5), (0.3, 0.2, 0.9), rectangle(2, 1), (0, 0, 0))
    turn_back = np.array([[np.cos(0.3), np.sin(0.3)], [-np.sin(0.3), np.cos(0.3)]])
    check(contact, (0, 1), turn_back @ [0, -0.5], (0.2, 0.5), -0.1)


def test_circle_centre_inside_a_box_uses_the_face_of_least_penetration():
    """Centre (0.9, 0.3) in the 2 × 1 box: the right face is 0.1 away, the top one 0.2 (§A.6.2)."""
    (contact,) = contacts_of(Circle(0.25), (0, 0.9, 0.3), rectangle(2, 1), (0, 0, 0))
    check(contact, (1, 0), (-0.25, 0), (1.0, 0.3), -0.1 - 0.25)


def test_circle_touching_a_corner_of_a_turned_box():
    """The box turned by 90° is 1 wide and 2 high; its corner (0.5, 1) and the centre 0.5 away along
    the diagonal."""
    centre = np.array([0.5, 1.0]) + 0.5 * np.array([1, 1]) / np.sqrt(2)
    (contact,) = contacts_of(Circle(0.5), (0, *centre), rectangle(2, 1), (np.pi / 2, 0, 0))
    normal = np.array([1, 1]) / np.sqrt(2)
    check(contact, normal, -0.5 * normal, (1.0, -0.5), 0.0)


def test_box_resting_on_a_box_gives_two_points():
    contacts = contacts_of(rectangle(1, 1), (0, 0.2, 0.95), rectangle(2, 1), (0, 0, 0))
    assert len(contacts) == 2
    contacts.sort(key=lambda c: c.point_b[0])
    check(contacts[0], (0, 1), (-0.5, -0.5), (-0.3, 0.5), -0.05)
    check(contacts[1], (0, 1), (0.5, -0.5), (0.7, 0.5), -0.05)


def test_box_below_a_box_flips_the_normal():
    """The same pair with the wide box as body a: the normal still points from b to a."""
    contacts = contacts_of(rectangle(2, 1), (0, 0, 0), rectangle(1, 1), (0, 0.2, 0.95))
    contacts.sort(key=lambda c: c.point_a[0])
    check(contacts[0], (0, -1), (-0.3, 0.5), (-0.5, -0.5), -0.05)
    check(contacts[1], (0, -1), (0.7, 0.5), (0.5, -0.5), -0.05)


def test_diamond_corner_on_a_box_gives_one_point():
    """A unit square turned by 45° with its lowest corner 0.02 into the top face y = 0.5."""
    half_diagonal = np.sqrt(0.5)
    (contact,) = contacts_of(rectangle(1, 1), (np.pi / 4, 0.1, 0.48 + half_diagonal), rectangle(2, 1), (0, 0, 0))
    check(contact, (0, 1), (-0.5, -0.5), (0.1, 0.5), -0.02)


def test_triangle_edge_against_a_box_edge_clips_to_the_overlap():
    """A triangle with its lower edge on the box's top face, overhanging its right end: the contact
    points span the overlap, from the triangle's corner to the box's (the body's origin is the
    triangle's centroid, so the pose puts it at ``offset`` to leave the corners where given)."""
    triangle = Polygon([(0.5, 0.49), (1.5, 0.49), (1.0, 1.5)])
    contacts = contacts_of(triangle, (0, *triangle.offset), rectangle(2, 1), (0, 0, 0))
    contacts.sort(key=lambda c: c.point_a[0])
    world_a = [c.point_a[0] + triangle.offset[0] for c in contacts]
    np.testing.assert_allclose(world_a, [0.5, 1.0], atol=1e-12)
    assert contacts[0].feature.edge_end is not None  # clipped at the triangle's side plane
    assert contacts[1].feature.edge_end is None  # the box's corner
    assert all(c.gap == pytest.approx(-0.01, abs=1e-12) for c in contacts)


@pytest.mark.parametrize(
    "shape_a, pose_a",
    [(Circle(0.5), (0, 0, 1.0 + 2 * MARGIN)), (rectangle(1, 1), (0.0, 0.0, 1.0 + 2 * MARGIN))],
)
def test_no_contact_beyond_the_margin(shape_a, pose_a):
    assert contacts_of(shape_a, pose_a, rectangle(2, 1), (0, 0, 0)) == []


def test_contact_within_the_margin_has_a_positive_gap():
    (contact,) = contacts_of(Circle(0.5), (0, 0, 1.0 + 0.5 * MARGIN), rectangle(2, 1), (0, 0, 0))
    assert contact.gap == pytest.approx(0.5 * MARGIN, abs=1e-12)


def test_broadphase_skips_far_and_excluded_pairs():
    bodies = (Body(Circle(0.5)), Body(Circle(0.5)), Body(Circle(0.5)))
    positions = np.array([[0, 0, 0], [0, 0.9, 0], [0, 50.0, 0]], dtype=float)
    assert [(c.body_a, c.body_b) for c in detect_contacts(bodies, positions, MARGIN)] == [(0, 1)]
    assert detect_contacts(bodies, positions, MARGIN, frozenset({(0, 1)})) == []


@pytest.mark.parametrize(
    "feature",
    [
        PointsFeature(np.zeros(2), 0.5, np.zeros(2), 0.3),
        PointsFeature(np.array([0.2, -0.1]), 0.0, np.array([-0.4, 0.3]), 0.25),
        FaceFeature(True, np.array([0.6, 0.8]), np.array([0.3, 0.4]), np.zeros(2), 0.2),
        FaceFeature(False, np.array([0.0, -1.0]), np.array([0.5, -0.5]), np.array([0.3, 0.7]), 0.0),
        FaceFeature(
            True,
            np.array([0.0, 1.0]),
            np.array([-1.0, 0.5]),
            np.array([-0.3, -0.2]),
            edge_end=np.array([0.4, -0.3]),
            side_point=np.array([1.0, 0.5]),
        ),
    ],
)
def test_feature_jacobian_matches_central_differences(feature):
    """∂(normal, arm_a, arm_b)/∂(pose_a, pose_b) of the contact geometry a feature gives."""
    rng = np.random.default_rng(5)
    poses = rng.normal(size=6)
    eps = 1e-6
    expected = np.stack(
        [
            (
                np.concatenate(feature_geometry(feature, *np.split(poses + eps * e, 2))[:3])
                - np.concatenate(feature_geometry(feature, *np.split(poses - eps * e, 2))[:3])
            )
            / (2 * eps)
            for e in np.eye(6)
        ],
        axis=1,
    )
    np.testing.assert_allclose(feature_jacobian(feature, *np.split(poses, 2)), expected, atol=1e-8)
