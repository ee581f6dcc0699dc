"""Surface meshes: vertices on the boundary, closed and outward, volume converging, poses applied.

The checks are independent of dcol's geometry code: each shape's boundary is described by a closed
form written here (a gauge or a distance that equals 1 exactly on the boundary), rotations come
from scipy, and volumes from textbook formulas.
"""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from dcol.geom import Box, Capsule, Cone, Cylinder, Ellipsoid, Polygon, Polytope, Sphere
from dcol.geom.tessellate import surface_mesh

# An irregular convex pentagon (counterclockwise) around the origin, as vertices; the shape gets
# its edges as C y <= d, plus one redundant half-plane that must not change anything.
PENTAGON = np.array([[0.9, -0.2], [0.6, 0.7], [-0.3, 0.8], [-0.8, 0.1], [-0.2, -0.6]])
PENTAGON_EDGES = np.roll(PENTAGON, -1, axis=0) - PENTAGON
PENTAGON_NORMALS = np.column_stack([PENTAGON_EDGES[:, 1], -PENTAGON_EDGES[:, 0]])
PENTAGON_NORMALS /= np.linalg.norm(PENTAGON_NORMALS, axis=1, keepdims=True)
PENTAGON_OFFSETS = np.einsum("ij,ij->i", PENTAGON_NORMALS, PENTAGON)

# A box [-0.6, 0.6] x [-0.4, 0.4] x [-0.5, 0.5] with its (+, +, +) corner cut off: faces with
# 3, 4 and 5 vertices, so qhull has to triangulate non-triangular facets.
CUT = 0.3
HALF = np.array([0.6, 0.4, 0.5])
CORNERS = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * HALF
CUT_BOX_VERTICES = np.vstack([CORNERS[:-1], HALF - CUT * np.eye(3)])
CUT_BOX_VOLUME = 8 * np.prod(HALF) - CUT**3 / 6


def _polygon_distance(points):
    """(N,) distances of body points (N, 3) to the pentagon {(y1, y2, 0)} (filled)."""
    planar = points[:, None, :2]
    to_point = planar - PENTAGON  # (N, k, 2)
    cross = PENTAGON_EDGES[:, 0] * to_point[..., 1] - PENTAGON_EDGES[:, 1] * to_point[..., 0]
    outside = cross < 0.0  # right of a counterclockwise edge
    t = np.clip(np.einsum("nkj,kj->nk", to_point, PENTAGON_EDGES) / np.sum(PENTAGON_EDGES**2, axis=1), 0.0, 1.0)
    to_edge = np.linalg.norm(to_point - t[..., None] * PENTAGON_EDGES, axis=2).min(axis=1)
    in_plane = np.where(outside.any(axis=1), to_edge, 0.0)
    return np.hypot(in_plane, points[:, 2])


def _segment_distance(points, half_length):
    """(N,) distances of points (N, 3) to the segment from (-half_length, 0, 0) to (half_length, 0, 0)."""
    nearest = np.zeros_like(points)
    nearest[:, 0] = np.clip(points[:, 0], -half_length, half_length)
    return np.linalg.norm(points - nearest, axis=1)


def _shoelace_area(vertices):
    x, y = vertices.T
    return 0.5 * abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))


R, L, H, BETA = 0.35, 1.3, 1.2, 0.45
ELLIPSOID_P = np.array([[2.0, 0.3, 0.0], [0.3, 5.0, 0.4], [0.0, 0.4, 1.0]])

# kind: (shape, boundary(body points (N, 3)) -> (N,) equal to 1 on the boundary, volume)
CASES = {
    "box": (
        Box(HALF),
        lambda p: np.max(np.abs(p) / HALF, axis=1),
        8 * np.prod(HALF),
    ),
    "polytope": (
        Polytope.from_vertices(CUT_BOX_VERTICES),
        # The cut plane through the three points HALF - CUT e_i is sum(p) = sum(HALF) - CUT.
        lambda p: np.maximum(np.max(np.abs(p) / HALF, axis=1), np.sum(p, axis=1) / (np.sum(HALF) - CUT)),
        CUT_BOX_VOLUME,
    ),
    "sphere": (
        Sphere(R),
        lambda p: np.linalg.norm(p, axis=1) / R,
        4 / 3 * np.pi * R**3,
    ),
    "ellipsoid": (
        Ellipsoid(ELLIPSOID_P),
        lambda p: np.sqrt(np.einsum("ni,ij,nj->n", p, ELLIPSOID_P, p)),
        4 / 3 * np.pi / np.sqrt(np.linalg.det(ELLIPSOID_P)),
    ),
    "capsule": (
        Capsule(R, L),
        lambda p: _segment_distance(p, L / 2) / R,
        np.pi * R**2 * L + 4 / 3 * np.pi * R**3,
    ),
    "cylinder": (
        Cylinder(R, L),
        lambda p: np.maximum(np.abs(p[:, 0]) / (L / 2), np.hypot(p[:, 1], p[:, 2]) / R),
        np.pi * R**2 * L,
    ),
    "cone": (
        Cone(H, BETA),
        # Smallest scaling about the origin that holds p: base plane x <= αH/4 and slant
        # |p_yz| <= tan(β) (x + 3αH/4) (DCOL eqs. 19–20).
        lambda p: np.maximum(p[:, 0] / (H / 4), (np.hypot(p[:, 1], p[:, 2]) / np.tan(BETA) - p[:, 0]) / (3 * H / 4)),
        np.pi * (H * np.tan(BETA)) ** 2 * H / 3,
    ),
    "polygon": (
        Polygon(np.vstack([PENTAGON_NORMALS, [0.6, 0.8]]), np.r_[PENTAGON_OFFSETS, 5.0], R / 2),
        lambda p: _polygon_distance(p) / (R / 2),
        # Slab over the pentagon, half cylinders along its edges, a whole ball at the corners.
        2 * (R / 2) * _shoelace_area(PENTAGON)
        + np.pi * (R / 2) ** 2 / 2 * np.sum(np.linalg.norm(PENTAGON_EDGES, axis=1))
        + 4 / 3 * np.pi * (R / 2) ** 3,
    ),
}
KINDS = list(CASES)

POSE_R = np.array([0.4, -1.2, 2.5])
POSE_Q = 1.7 * np.array([0.8, 0.1, -0.3, 0.5])  # not unit: surface_mesh must normalize


def _rotation(q):
    return Rotation.from_quat(q, scalar_first=True).as_matrix()


def _mesh_volume(vertices, faces):
    """Enclosed volume by the divergence theorem (positive for outward triangles)."""
    a, b, c = (vertices[faces[:, i]] for i in range(3))
    return np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("resolution", [8, 13, 24, 50])
def test_vertices_lie_on_the_boundary(kind, resolution):
    shape, boundary, _ = CASES[kind]
    vertices, faces = surface_mesh(shape, POSE_R, POSE_Q, resolution=resolution)
    assert vertices.dtype == np.float64 and vertices.shape[1] == 3
    assert faces.dtype == np.int64 and faces.shape[1] == 3
    body = (vertices - POSE_R) @ _rotation(POSE_Q)
    np.testing.assert_allclose(boundary(body), 1.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind", KINDS)
def test_mesh_is_closed_and_outward(kind):
    shape, _, _ = CASES[kind]
    vertices, faces = surface_mesh(shape, POSE_R, POSE_Q)
    assert set(np.unique(faces)) == set(range(len(vertices)))
    # Closed and consistently wound: every directed edge occurs once and its reverse once.
    directed = np.vstack([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]])
    as_set = {tuple(e) for e in directed}
    assert len(as_set) == len(directed)
    assert all((j, i) in as_set for i, j in as_set)
    assert len(vertices) - len(directed) // 2 + len(faces) == 2  # Euler: a sphere-like surface
    # Outward: the shape is convex around its frame origin, so each normal points away from it.
    a, b, c = (vertices[faces[:, i]] for i in range(3))
    normals = np.cross(b - a, c - a)
    assert np.all(np.linalg.norm(normals, axis=1) > 1e-12)
    assert np.all(np.einsum("ij,ij->i", normals, a - POSE_R) > 0.0)


@pytest.mark.parametrize("kind", ["box", "polytope"])
def test_polytopes_are_exact(kind):
    shape, _, volume = CASES[kind]
    vertices, faces = surface_mesh(shape)
    expected = CORNERS if kind == "box" else CUT_BOX_VERTICES
    assert len(vertices) == len(expected)
    np.testing.assert_allclose(np.sort(vertices, axis=0), np.sort(expected, axis=0), atol=1e-12)
    assert _mesh_volume(vertices, faces) == pytest.approx(volume, rel=1e-12)


@pytest.mark.parametrize("kind", [k for k in KINDS if k not in ("box", "polytope")])
def test_volume_converges_to_closed_form(kind):
    shape, _, volume = CASES[kind]
    errors = [volume - _mesh_volume(*surface_mesh(shape, resolution=n)) for n in (16, 32, 64, 128)]
    # Inscribed polyhedra (vertices on a convex surface) lie inside: the error is positive and
    # shrinks about fourfold per doubling (second order in the facet size).
    assert all(e > 0 for e in errors)
    assert all(finer < coarser / 3 for coarser, finer in zip(errors, errors[1:]))
    assert errors[-1] < 2e-3 * volume


@pytest.mark.parametrize("kind", KINDS)
def test_pose_is_applied(kind):
    shape, _, _ = CASES[kind]
    body, faces = surface_mesh(shape)
    world, world_faces = surface_mesh(shape, POSE_R, POSE_Q)
    np.testing.assert_array_equal(world_faces, faces)
    np.testing.assert_allclose(world, body @ _rotation(POSE_Q).T + POSE_R, atol=1e-12)
    from_matrix, _ = surface_mesh(shape, POSE_R, _rotation(POSE_Q))
    np.testing.assert_allclose(from_matrix, world, atol=1e-12)


def test_offset_pose_is_applied():
    """The shape frame sits at r + Q r_off with rotation Q Q_off."""
    r_off, q_off = np.array([0.3, -0.2, 0.5]), np.array([0.9, -0.2, 0.4, 0.1])
    offset_cone, cone = Cone(H, BETA, offset=(r_off, q_off)), CASES["cone"][0]
    Q = _rotation(POSE_Q)
    vertices, _ = surface_mesh(offset_cone, POSE_R, POSE_Q)
    frame_r, frame_Q = POSE_R + Q @ r_off, Q @ _rotation(q_off)
    expected, _ = surface_mesh(cone, frame_r, frame_Q)
    np.testing.assert_allclose(vertices, expected, atol=1e-12)
    np.testing.assert_allclose(CASES["cone"][1]((vertices - frame_r) @ frame_Q), 1.0, atol=1e-12)


def test_bad_arguments():
    with pytest.raises(ValueError, match="resolution"):
        surface_mesh(Sphere(1.0), resolution=4)
    with pytest.raises(TypeError, match="resolution"):
        surface_mesh(Sphere(1.0), resolution=12.5)
    with pytest.raises(ValueError, match="q"):
        surface_mesh(Sphere(1.0), np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="r"):
        surface_mesh(Sphere(1.0), [0.0, np.nan, 0.0])
    with pytest.raises(TypeError, match="object"):
        surface_mesh(object())
