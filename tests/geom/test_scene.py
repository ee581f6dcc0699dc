"""Scenes: the broadphase against brute force, filtering, and the scene's contacts against the pairwise
functions."""

import numpy as np
import pytest

from dcol.geom import Box, Capsule, Scene, Sphere, contacts, signed_distance_batch, support_point
from dcol.geom.tessellate import surface_mesh
from tests.support.shapes import KINDS, random_quaternion, random_shape


def random_scene(count, rng, density=1.0):
    """A scene of `count` single-shape bodies of every kind, scattered in a cube sized for the density."""
    scene = Scene()
    for i in range(count):
        scene.add_body(random_shape(KINDS[i % len(KINDS)], rng, offset=i % 5 == 0))
    side = 2.0 * (count / density) ** (1 / 3)
    r = rng.uniform(0.0, side, size=(count, 3))
    q = np.array([random_quaternion(rng) for _ in range(count)])
    return scene, r, q


def brute_force_overlaps(lower, upper):
    """All pairs i < j of boxes that overlap (touching counts), by comparing every pair."""
    overlap = np.all((lower[:, None, :] <= upper[None, :, :]) & (lower[None, :, :] <= upper[:, None, :]), axis=2)
    i, j = np.nonzero(np.triu(overlap, k=1))
    return set(zip(i.tolist(), j.tolist()))


def test_broadphase_finds_exactly_the_brute_force_pairs_among_1000_shapes():
    rng = np.random.default_rng(1)
    scene, r, q = random_scene(1000, rng)
    for margin in (0.0, 0.2):
        lower, upper = scene.bounding_boxes(r, q, margin=margin)
        found = scene.candidate_pairs(r, q, margin=margin)
        assert len(found) > 100
        assert set(map(tuple, found.tolist())) == brute_force_overlaps(lower, upper)
        assert len(set(map(tuple, found.tolist()))) == len(found)  # each pair once


def test_bounding_boxes_hold_their_shapes_tightly():
    rng = np.random.default_rng(2)
    scene, r, q = random_scene(len(KINDS) * 3, rng)
    lower, upper = scene.bounding_boxes(r, q, margin=0.1)
    for index, (shape, body) in enumerate(zip(scene.shapes, scene.body_of_shape)):
        vertices = surface_mesh(shape, r[body], q[body], resolution=64)[0]
        assert np.all(vertices >= lower[index] + 0.05 - 1e-9) and np.all(vertices <= upper[index] - 0.05 + 1e-9)
        # Tight: the farthest surface point along each axis reaches the box (up to the faceting).
        size = np.ptp(vertices, axis=0).max()
        assert np.all(vertices.max(axis=0) >= upper[index] - 0.05 - 2e-2 * size)
        assert np.all(vertices.min(axis=0) <= lower[index] + 0.05 + 2e-2 * size)
        for axis in range(3):
            assert np.isclose(support_point(shape, r[body], q[body], np.eye(3)[axis])[axis], upper[index, axis] - 0.05)


def test_scene_contacts_cover_exactly_the_pairs_within_the_margin():
    rng = np.random.default_rng(3)
    scene, r, q = random_scene(300, rng, density=2.0)
    margin = 0.05
    found = scene.contacts(r, q, margin=margin, threads=2)
    pairs_with_contacts = set(zip(found.shape_a.tolist(), found.shape_b.tolist()))
    # Brute force: the signed distance of every pair of the scene.
    i, j = np.triu_indices(len(scene.shapes), k=1)
    shapes, body = scene.shapes, scene.body_of_shape
    distances = signed_distance_batch(
        [shapes[k] for k in i], r[body[i]], q[body[i]], [shapes[k] for k in j], r[body[j]], q[body[j]], threads=2
    ).distance
    within = set(zip(i[distances <= margin].tolist(), j[distances <= margin].tolist()))
    assert len(within) > 20
    assert pairs_with_contacts == within


def test_scene_contacts_are_the_pairwise_contacts():
    rng = np.random.default_rng(4)
    scene, r, q = random_scene(200, rng, density=2.0)
    found = scene.contacts(r, q, margin=0.02, derivatives=True)
    shapes, body = scene.shapes, scene.body_of_shape
    for a, b in sorted(set(zip(found.shape_a.tolist(), found.shape_b.tolist())))[:15]:
        pair = contacts(
            shapes[a], r[body[a]], q[body[a]], shapes[b], r[body[b]], q[body[b]], margin=0.02, derivatives=True
        )
        rows = (found.shape_a == a) & (found.shape_b == b)
        assert np.all(found.body_a[rows] == body[a]) and np.all(found.body_b[rows] == body[b])
        for field in ("point", "normal", "separation", "rule", "d_point", "d_normal", "d_separation"):
            np.testing.assert_array_equal(getattr(found, field)[rows], getattr(pair, field))


def test_bodies_with_several_shapes_and_filters():
    q = np.tile([1.0, 0.0, 0.0, 0.0], (4, 1))
    scene = Scene()
    # Body 0: two overlapping boxes (never tested against each other); body 1 rests on both.
    scene.add_body(
        [
            Box([0.5, 0.5, 0.5], offset=([-0.4, 0, 0], [1, 0, 0, 0])),
            Box([0.5, 0.5, 0.5], offset=([0.4, 0, 0], [1, 0, 0, 0])),
        ]
    )
    scene.add_body(Box([1.0, 0.3, 0.1]))
    scene.add_body(Sphere(0.2), group=2, mask=2)  # collides only with group-2 bodies
    scene.add_body(Capsule(0.1, 0.5), group=2)
    r = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.6], [0.0, 0.0, 0.85], [0.3, 0.0, 0.75]])
    found = scene.contacts(r, q, margin=0.01)
    bodies = set(zip(found.body_a.tolist(), found.body_b.tolist()))
    assert (0, 0) not in bodies
    assert (0, 1) in bodies and (1, 3) in bodies
    assert (1, 2) not in bodies  # sphere's mask 2 excludes the group-1 slab
    assert (2, 3) in bodies
    # The slab rests across the tops of both boxes of body 0: a flat contact on each.
    assert np.sum((found.body_a == 0) & (found.body_b == 1)) >= 8
    scene.exclude(3, 2)
    filtered = scene.contacts(r, q, margin=0.01)
    bodies = set(zip(filtered.body_a.tolist(), filtered.body_b.tolist()))
    assert (2, 3) not in bodies and (0, 1) in bodies


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda s: s.contacts(np.zeros((2, 3)), np.tile([1.0, 0, 0, 0], (2, 1))), ValueError, "body"),
        (lambda s: s.contacts(np.zeros((3, 3)), np.tile([1.0, 0, 0, 0], (2, 1))), ValueError, "q"),
        (lambda s: s.contacts(np.full((3, 3), np.nan), np.tile([1.0, 0, 0, 0], (3, 1))), ValueError, "pose 0"),
        (lambda s: s.contacts(np.zeros((3, 3)), np.tile([1.0, 0, 0, 0], (3, 1)), margin=-1.0), ValueError, "margin"),
        (lambda s: s.add_body([]), TypeError, "shapes"),
        (lambda s: s.add_body(Sphere(1.0), group=-1), ValueError, "group"),
        (lambda s: s.exclude(0, 7), ValueError, "body_j"),
    ],
)
def test_bad_input_is_named(call, error, match):
    scene = Scene()
    for _ in range(3):
        scene.add_body(Sphere(0.5))
    with pytest.raises(error, match=match):
        call(scene)
