"""Closed triangle meshes of the primitives' boundaries, for display and export.

Every primitive is convex, so its mesh is the convex hull of points placed exactly on its
boundary (DCOL §III-B for the body-frame definitions): the polytope's vertices, rings on the
curved surfaces. Curved shapes come out as inscribed faceted approximations whose vertices lie on
the true surface.
"""

import numpy as np
from scipy.spatial import ConvexHull

from dcol.typing import ArrayLike, FloatArray, IntArray
from dcol.validation import checked_array, checked_integer, is_integer

from .rotations import rotation_matrix
from .shapes import Capsule, Cone, Cylinder, Ellipsoid, Polygon, Polytope, Shape, Sphere

__all__ = ["surface_mesh"]

_MIN_RESOLUTION = 8


def _ring(radius: float, x: float, resolution: int) -> FloatArray:
    """(resolution, 3) float64 points on the circle of the given radius about body x, at height x."""
    azimuth = np.linspace(0.0, 2.0 * np.pi, resolution, endpoint=False)
    return np.column_stack([np.full(resolution, x), radius * np.cos(azimuth), radius * np.sin(azimuth)])


def _unit_hemisphere(resolution: int, equator: bool = True) -> FloatArray:
    """(k, 3) float64 points on the unit hemisphere x ≥ 0: its pole (1, 0, 0) and rings of
    ``resolution`` points at elevations from the equator (x = 0 exactly, kept if ``equator``) up."""
    elevations = np.linspace(0.0, 0.5 * np.pi, max(2, resolution // 4) + 1)[:-1]
    if not equator:
        elevations = elevations[1:]
    rings = [_ring(np.cos(e), np.sin(e), resolution) for e in elevations]
    return np.vstack([[[1.0, 0.0, 0.0]], *rings])


def _mirror_x(points: FloatArray) -> FloatArray:
    """(k, 3) float64 copy of points reflected through the body yz plane."""
    return points * [-1.0, 1.0, 1.0]


def _unit_sphere(resolution: int) -> FloatArray:
    """(k, 3) float64 points on the unit sphere, poles on body ±x."""
    return np.vstack([_unit_hemisphere(resolution), _mirror_x(_unit_hemisphere(resolution, equator=False))])


def _padded_polygon_points(shape: Polygon, resolution: int) -> FloatArray:
    """(k, 3) float64 points on the boundary of a padded polygon.

    Around each corner c the padding is a piece of the sphere of radius R about c, and only the
    directions of c's normal cone (between the normals of its two edges, and ±z) reach the boundary
    there. Sampling just that cone keeps every point exactly at distance R from the polygon; both
    edge normals are sampled so the flat sides between neighbouring corners come out exact.
    """
    corners_2d = shape.corners
    edges = np.roll(corners_2d, -1, axis=0) - corners_2d  # edge i runs from corner i to corner i+1
    normal_angles = np.arctan2(-edges[:, 0], edges[:, 1])  # outward normal of a ccw edge (e_y, -e_x)
    elevations = np.linspace(-0.5 * np.pi, 0.5 * np.pi, 2 * max(2, resolution // 4) + 1)[1:-1]
    points = []
    for i, corner in enumerate(corners_2d):
        start = normal_angles[i - 1]
        turn = (normal_angles[i] - start) % (2.0 * np.pi)  # exterior angle at the corner, in (0, pi)
        azimuth = start + np.linspace(0.0, turn, int(np.ceil(turn * resolution / (2.0 * np.pi))) + 1)
        a, e = (grid.ravel() for grid in np.meshgrid(azimuth, elevations))
        directions = np.column_stack([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)])
        center = np.array([corner[0], corner[1], 0.0])
        points.append(center + shape.R * np.vstack([directions, [[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]]]))
    return np.vstack(points)


def _boundary_points(shape: Shape, resolution: int) -> FloatArray:
    """(k, 3) float64 body-frame points on the shape's boundary whose convex hull is the mesh."""
    if isinstance(shape, Polytope):
        return shape.vertices
    if isinstance(shape, Sphere):
        return shape.R * _unit_sphere(resolution)
    if isinstance(shape, Ellipsoid):
        # P = V diag(λ) Vᵀ maps the unit sphere onto yᵀPy = 1 by y = V diag(λ^-1/2) u; eigh sorts λ
        # ascending, so the sphere's poles land on the ends of the longest axis.
        eigenvalues, eigenvectors = np.linalg.eigh(shape.P)
        return _unit_sphere(resolution) / np.sqrt(eigenvalues) @ eigenvectors.T
    if isinstance(shape, Capsule):
        cap = shape.R * _unit_hemisphere(resolution)
        half = [0.5 * shape.L, 0.0, 0.0]
        return np.vstack([cap + half, _mirror_x(cap + half)])
    if isinstance(shape, Cylinder):
        return np.vstack([_ring(shape.R, 0.5 * shape.L, resolution), _ring(shape.R, -0.5 * shape.L, resolution)])
    if isinstance(shape, Cone):
        base = _ring(shape.H * np.tan(shape.beta), 0.25 * shape.H, resolution)
        return np.vstack([base, [[-0.75 * shape.H, 0.0, 0.0]]])
    if isinstance(shape, Polygon):
        return _padded_polygon_points(shape, resolution)
    raise TypeError(f"surface_mesh does not know shapes of type {type(shape).__name__}")


def surface_mesh(
    shape: Shape, r: ArrayLike | None = None, q: ArrayLike | None = None, resolution: int = 24
) -> tuple[FloatArray, IntArray]:
    """Closed triangle mesh of a shape's boundary, in the world at body pose (r, q).

    The shape's offset pose is applied: its own frame sits at ``r + Q r_off`` with rotation
    ``Q Q_off``. Polytopes (and boxes) are exact; curved shapes are inscribed polyhedra whose
    vertices lie on the true surface, finer as ``resolution`` grows.

    Parameters
    ----------
    shape : dcol.geom shape (Polytope, Box, Capsule, Cylinder, Cone, Sphere, Ellipsoid, Polygon).
    r : (3,) float64 body position, default the origin.
    q : (4,) float64 quaternion ``[w, x, y, z]`` of any nonzero norm, or (3, 3) rotation matrix;
        default the identity.
    resolution : int ≥ 8, number of points around each full circle of a curved surface.

    Returns
    -------
    vertices : (V, 3) float64 world coordinates, every one on the shape's boundary.
    faces : (F, 3) int64 indices into vertices; triangles wound counterclockwise seen from
        outside, each edge shared by exactly two of them.
    """
    if not is_integer(resolution):  # a float is the wrong kind here, not a count out of range
        raise TypeError(f"resolution must be an integer, got {resolution!r}")
    resolution = checked_integer(resolution, "resolution", minimum=_MIN_RESOLUTION)
    Q_body = np.eye(3) if q is None else rotation_matrix(q, "q")
    r_body = np.zeros(3) if r is None else checked_array(r, "r", (3,))

    points = _boundary_points(shape, resolution)
    hull = ConvexHull(points)
    # Points inside the hull or repeated (polytope vertices where more than three faces meet) are
    # not on any triangle: keep only the used ones and renumber.
    used = np.unique(hull.simplices)
    renumber = np.empty(len(points), dtype=np.int64)
    renumber[used] = np.arange(len(used))
    vertices, faces = points[used], renumber[hull.simplices]
    # qhull does not orient its triangles: flip those whose normal disagrees with the facet's.
    normals = np.cross(vertices[faces[:, 1]] - vertices[faces[:, 0]], vertices[faces[:, 2]] - vertices[faces[:, 0]])
    inward = np.einsum("ij,ij->i", normals, hull.equations[:, :3]) < 0.0
    faces[inward] = faces[inward][:, ::-1]

    Q = Q_body @ shape.offset_rotation
    origin = r_body + Q_body @ shape.offset_position
    return vertices @ Q.T + origin, faces
