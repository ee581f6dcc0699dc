"""Vertices, edges and faces of a polytope ``{y : A y ≤ b}`` given by its half-spaces.

The polytope of a :class:`dcol.geom.Polytope` (DCOL §III-B1) is stored as half-spaces only; this
module recovers its boundary for display, export and mesh processing. Vertices where more than
three planes meet (a pyramid's apex, an octahedron's corners) come out once, and redundant rows of
A (touching the polytope at a vertex, along an edge or not at all) keep their place in ``faces``.
"""

from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import HalfspaceIntersection, cKDTree

from dcol.typing import ArrayLike, BoolArray, FloatArray, IntArray
from dcol.validation import checked_array, checked_interval

__all__ = ["PolytopeTopology", "polytope_topology", "DEFAULT_TOLERANCE"]

# Corners closer than this, relative to the polytope's size, are one by default: far above the
# round-off of intersecting three planes, far below any feature worth keeping.
DEFAULT_TOLERANCE: float = 1e-8


@dataclass(frozen=True)
class PolytopeTopology:
    """Boundary of a polytope ``{y : A y ≤ b}``; every array is read-only.

    vertices : (k, 3) float64, each distinct corner once.
    edges : (e, 2) int64 pairs of vertex indices, each edge once, ``edges[:, 0] < edges[:, 1]``.
    faces : tuple of m (n_f,) int64 arrays, one per row of A in order: the indices of the vertices
        on that row's plane, counterclockwise seen from outside (about ``face_normals[f]``). A
        redundant row gives fewer than 3 indices (a vertex, an edge, or none).
    face_normals : (m, 3) float64 unit outward normals, ``A[f] / ‖A[f]‖``.
    """

    vertices: FloatArray
    edges: IntArray
    faces: tuple[IntArray, ...]
    face_normals: FloatArray


def _cluster_labels(points: FloatArray, tolerance: float) -> tuple[IntArray, int]:
    """Group points that are chained by distances ≤ tolerance.

    Parameters
    ----------
    points : (n, d) float64.
    tolerance : float ≥ 0.

    Returns
    -------
    labels : (n,) int64 group of each point, numbered 0 … count − 1.
    count : int, number of groups.
    """
    pairs = cKDTree(points).query_pairs(tolerance, output_type="ndarray")
    n = len(points)
    graph = coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    count, labels = connected_components(graph, directed=False)
    return labels.astype(np.int64), count


def _corners(A: FloatArray, b: FloatArray, relative_tolerance: float) -> tuple[FloatArray, BoolArray, float]:
    """Corners of {y : A y ≤ b}, each once, and which planes they are on.

    qhull intersects the planes in threes (or more, where it sees more meet), so a corner on more
    than three planes may come out several times with round-off differences: merge those copies,
    and take a corner's planes from qhull's incidences rather than from distances, which keeps the
    faces consistent with each other when nearly coincident corners merge.

    Returns (k, 3) float64 vertices (each merged corner at its copies' mean), (m, k) bool
    incidence of the rows that bound the polytope (redundant rows all False), and the merging
    distance (float).
    """
    try:
        # An open set's dual hull has facets through the origin: corners at infinity, not an error here.
        with np.errstate(divide="ignore", invalid="ignore"):
            intersection = HalfspaceIntersection(np.column_stack([A, -b]), np.zeros(3))
    except Exception as err:  # qhull reports flat or open sets
        raise ValueError("A, b must describe a bounded solid with the origin strictly inside") from err
    points = intersection.intersections
    if not np.all(np.isfinite(points)):
        raise ValueError("A, b must describe a bounded set (the half-spaces leave it open)")
    distance = relative_tolerance * np.max(np.linalg.norm(points, axis=1))
    labels, count = _cluster_labels(points, distance)
    vertices = np.zeros((count, 3))
    np.add.at(vertices, labels, points)
    vertices /= np.bincount(labels, minlength=count)[:, None]
    planes = intersection.dual_facets
    on_plane = np.zeros((len(A), count), dtype=bool)
    on_plane[np.concatenate(planes), np.repeat(labels, [len(p) for p in planes])] = True
    return vertices, on_plane, distance


def _plane_basis(normals: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(m, 3), (m, 3) float64 unit vectors u, w with (u, w, n) right-handed and orthonormal."""
    # Crossing with the axis least aligned with n keeps u well conditioned.
    axes = np.eye(3)[np.argmin(np.abs(normals), axis=1)]
    u = np.cross(normals, axes)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    return u, np.cross(normals, u)


def _ordered_faces(
    vertices: FloatArray, normals: FloatArray, on_plane: BoolArray
) -> tuple[IntArray, IntArray, IntArray]:
    """Vertex indices of every face, counterclockwise about its normal.

    vertices : (k, 3) float64; normals : (m, 3) float64 unit; on_plane : (m, k) bool.
    Returns (p,) int64 face of each entry, (p,) int64 vertex of each entry, grouped by face and in
    counterclockwise order within a face, and (m,) int64 vertex count of each face.
    """
    face, vertex = np.nonzero(on_plane)
    counts = np.bincount(face, minlength=len(normals))
    centers = np.zeros((len(normals), 3))
    np.add.at(centers, face, vertices[vertex])
    centers /= np.maximum(counts, 1)[:, None]
    u, w = _plane_basis(normals)
    radial = vertices[vertex] - centers[face]
    # The centre of a convex polygon's corners is inside it, so the angles about it are distinct.
    angle = np.arctan2(np.einsum("ij,ij->i", radial, w[face]), np.einsum("ij,ij->i", radial, u[face]))
    order = np.lexsort((angle, face))
    return face[order], vertex[order], counts


def _polygon_edges(face: IntArray, vertex: IntArray, counts: IntArray) -> IntArray:
    """(e, 2) int64 distinct sides of the faces with at least 3 vertices, smaller index first.

    face, vertex, counts : as returned by _ordered_faces.
    """
    starts = np.cumsum(counts) - counts
    position = np.arange(len(vertex)) - starts[face]
    following = vertex[starts[face] + (position + 1) % counts[face]]
    polygon = counts[face] >= 3  # shorter faces are redundant rows touching an edge or a vertex
    sides = np.sort(np.column_stack([vertex, following])[polygon], axis=1)
    return np.unique(sides, axis=0).reshape(-1, 2)


ArrayT = TypeVar("ArrayT", bound=np.ndarray)


def _read_only(array: ArrayT) -> ArrayT:
    array.setflags(write=False)
    return array


def polytope_topology(A: ArrayLike, b: ArrayLike, *, tolerance: float = DEFAULT_TOLERANCE) -> PolytopeTopology:
    """Vertices, edges and faces of the polytope ``{y : A y ≤ b}``.

    Parameters
    ----------
    A : (m, 3) float64 face normals (any nonzero length).
    b : (m,) float64 face offsets, > 0: the origin is strictly inside. The polytope must be
        bounded (as :class:`dcol.geom.Polytope` checks).
    tolerance : float in (0, 0.01], relative to the polytope's radius (its farthest corner from
        the origin): corners closer than this merge into one (at their mean), and a redundant
        row's plane touches a corner within this distance. Raise it for planes that only nearly
        meet in one point, e.g. fitted to float32 data.

    Returns
    -------
    PolytopeTopology with ``faces[f]`` the face of row f. A corner on more than three planes is
    one vertex; a redundant row's face has fewer than 3 vertices (possibly none).
    """
    A = checked_array(A, "A", ("m", 3))
    b = checked_array(b, "b", (A.shape[0],))
    if np.any(b <= 0.0):
        raise ValueError("b must be > 0 (the origin must be strictly inside the polytope)")
    lengths = np.linalg.norm(A, axis=1)
    if np.any(lengths == 0.0):
        raise ValueError("A must not have zero rows")
    tolerance = checked_interval(tolerance, "tolerance", 0.0, 0.01, open_low=True)
    normals, offsets = A / lengths[:, None], b / lengths
    vertices, on_plane, distance = _corners(A, b, tolerance)
    # Redundant rows meet the polytope at most in a corner or an edge: find those by distance.
    redundant = ~on_plane.any(axis=1)
    on_plane[redundant] = np.abs(normals[redundant] @ vertices.T - offsets[redundant, None]) <= distance
    face, vertex, counts = _ordered_faces(vertices, normals, on_plane)
    faces = tuple(_read_only(f) for f in np.split(vertex.astype(np.int64), np.cumsum(counts)[:-1]))
    return PolytopeTopology(
        vertices=_read_only(vertices),
        edges=_read_only(_polygon_edges(face, vertex, counts).astype(np.int64)),
        faces=faces,
        face_normals=_read_only(normals),
    )
