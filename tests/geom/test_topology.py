"""Polytope topology from half-spaces: closed-form solids, degenerate corners, redundant rows, random hulls.

Every result is checked against the definition (vertices feasible and on ≥ 3 planes, faces on
their planes and counterclockwise about their outward normals, edges the polygons' sides, each
shared by two faces, V − E + F = 2), and against known vertex sets where the solid has a closed form.
"""

import itertools

import numpy as np
import pytest
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

from dcol.geom import Box, Polytope
from dcol.geom.topology import PolytopeTopology, polytope_topology
from tests.support.topology import check_closed_solid, check_topology

SIGNS = np.array(list(itertools.product([-1.0, 1.0], repeat=3)))
BOX_HALF = np.array([0.6, 0.4, 0.25])
# Square pyramid: base z = -0.5 of half width 1.5, apex (0, 0, 1) on four planes.
PYRAMID_A = np.array([[0.0, 0.0, -1.0], [1.0, 0.0, 1.0], [-1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [0.0, -1.0, 1.0]])
PYRAMID_B = np.array([0.5, 1.0, 1.0, 1.0, 1.0])
PYRAMID_VERTICES = np.array([[-1.5, -1.5, -0.5], [1.5, -1.5, -0.5], [1.5, 1.5, -0.5], [-1.5, 1.5, -0.5], [0, 0, 1.0]])


def _same_points(actual, expected, atol=1e-9):
    """Whether two (k, 3) point sets are equal up to order."""
    if actual.shape != expected.shape:
        return False
    distances = np.linalg.norm(actual[:, None, :] - expected[None, :, :], axis=2)
    return bool(np.all(distances.min(axis=0) < atol) and np.all(distances.min(axis=1) < atol))


def test_box():
    box = Box(BOX_HALF)
    topology = polytope_topology(box.A, box.b)
    assert isinstance(topology, PolytopeTopology)
    check_closed_solid(box.A, box.b, topology)
    assert _same_points(topology.vertices, SIGNS * BOX_HALF)
    assert len(topology.edges) == 12 and [len(f) for f in topology.faces] == [4] * 6


def test_pyramid_apex_is_one_vertex():
    topology = polytope_topology(PYRAMID_A, PYRAMID_B)
    check_closed_solid(PYRAMID_A, PYRAMID_B, topology)
    assert _same_points(topology.vertices, PYRAMID_VERTICES)
    assert [len(f) for f in topology.faces] == [4, 3, 3, 3, 3]
    assert len(topology.edges) == 8


def test_octahedron_corners_on_four_planes():
    A, b = SIGNS, np.full(8, 0.7)
    topology = polytope_topology(A, b)
    check_closed_solid(A, b, topology)
    assert _same_points(topology.vertices, 0.7 * np.vstack([np.eye(3), -np.eye(3)]))
    assert len(topology.edges) == 12 and [len(f) for f in topology.faces] == [3] * 8


@pytest.mark.parametrize("seed", range(5))
def test_rotated_scaled_degenerate_solids(seed):
    """Round-off of a rotation spreads the four-plane corners apart: they must still merge."""
    rng = np.random.default_rng(seed)
    R = Rotation.random(random_state=seed).as_matrix()
    for A, b, vertices, count in [
        (PYRAMID_A, PYRAMID_B, PYRAMID_VERTICES, 5),
        (SIGNS, np.full(8, 0.7), 0.7 * np.vstack([np.eye(3), -np.eye(3)]), 6),
    ]:
        scale = 10.0 ** rng.uniform(-3, 3)
        A_rotated = (A @ R.T) * rng.uniform(0.5, 2.0, size=(len(A), 1))  # rows of any length
        b_scaled = scale * b * np.linalg.norm(A_rotated, axis=1) / np.linalg.norm(A, axis=1)
        topology = polytope_topology(A_rotated, b_scaled)
        check_closed_solid(A_rotated, b_scaled, topology)
        assert len(topology.vertices) == count
        assert _same_points(topology.vertices / scale, vertices @ R.T)


def test_redundant_rows_keep_their_place():
    """Extra rows touching the box at a corner, along an edge, not at all, and a repeated face."""
    box = Box(BOX_HALF)
    extra_A = np.array([[1.0, 1.0, 1.0], [0.0, 1.0, 1.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    extra_b = np.array([BOX_HALF.sum(), BOX_HALF[1] + BOX_HALF[2], 2.0, 2 * BOX_HALF[2]])
    A, b = np.vstack([box.A, extra_A]), np.r_[box.b, extra_b]
    topology = polytope_topology(A, b)
    polygons, _ = check_topology(A, b, topology)
    assert [len(f) for f in topology.faces] == [4] * 6 + [1, 2, 0, 4]
    assert topology.vertices[topology.faces[6][0]] == pytest.approx(BOX_HALF)
    assert sorted(topology.faces[9].tolist()) == sorted(topology.faces[2].tolist())  # +z face twice
    # Apart from the repeated +z face, the box's own counts.
    assert len(topology.vertices) == 8 and len(topology.edges) == 12 and polygons == 7


@pytest.mark.parametrize("seed", range(8))
def test_random_hulls(seed):
    """Hulls of random points (general position) and of random half-spaces: vertices as qhull's."""
    rng = np.random.default_rng(100 + seed)
    points = rng.normal(size=(int(rng.integers(8, 60)), 3))
    points = np.vstack([points, 0.2 * np.eye(3), -0.2 * np.eye(3)])  # keep the origin inside
    shape = Polytope.from_vertices(points)
    topology = polytope_topology(shape.A, shape.b)
    check_closed_solid(shape.A, shape.b, topology)
    assert _same_points(topology.vertices, points[ConvexHull(points).vertices])

    normals = np.vstack([rng.normal(size=(int(rng.integers(4, 30)), 3)), SIGNS])
    offsets = rng.uniform(0.3, 1.5, size=len(normals))
    # Some random rows are redundant; in general position they miss the polytope entirely.
    check_closed_solid(normals, offsets, polytope_topology(normals, offsets))


@pytest.mark.parametrize(
    "A, b, match",
    [
        (np.eye(3), np.ones(3), "bounded"),
        (np.vstack([np.eye(3), -np.eye(3)[:2]]), np.ones(5), "bounded"),
        (np.vstack([np.eye(3), -np.eye(3)]), np.r_[np.ones(5), 0.0], "b must be > 0"),
        (np.vstack([np.eye(3), -np.eye(3), np.zeros((1, 3))]), np.ones(7), "zero rows"),
        (np.ones((6, 2)), np.ones(6), r"A must have shape \(m, 3\)"),
        (np.vstack([np.eye(3), -np.eye(3)]), np.ones(5), r"b must have shape \(6,\)"),
    ],
)
def test_bad_input(A, b, match):
    with pytest.raises(ValueError, match=match):
        polytope_topology(A, b)


def test_bad_tolerance():
    box = Box(BOX_HALF)
    with pytest.raises(ValueError, match=r"tolerance must be in \(0, 0.01\]"):
        polytope_topology(box.A, box.b, tolerance=0.0)
    with pytest.raises(TypeError, match="tolerance must be a real number"):
        polytope_topology(box.A, box.b, tolerance="loose")
