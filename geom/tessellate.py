"""Triangle meshes of the primitives' boundaries, for display and export.

Every primitive is convex, so its mesh is the convex hull of points sampled on its boundary.
"""

import numpy as np
from scipy.spatial import ConvexHull, HalfspaceIntersection

from .rotations import rotation_matrix
from .shapes import Capsule, Cone, Cylinder, Ellipsoid, Polygon, Polytope, Sphere

__all__ = ["surface_mesh"]


def _unit_sphere(resolution):
    """(k, 3) points on the unit sphere (a latitude–longitude grid)."""
    polar = np.linspace(0.0, np.pi, resolution // 2 + 1)
    azimuth = np.linspace(0.0, 2 * np.pi, resolution, endpoint=False)
    p, a = np.meshgrid(polar, azimuth)
    return np.column_stack([np.sin(p).ravel() * np.cos(a).ravel(), np.sin(p).ravel() * np.sin(a).ravel(), np.cos(p).ravel()])


def _circle(radius, x, resolution):
    """(resolution, 3) points on the circle of the given radius in the plane at body x."""
    a = np.linspace(0.0, 2 * np.pi, resolution, endpoint=False)
    return np.column_stack([np.full(resolution, x), radius * np.cos(a), radius * np.sin(a)])


def _halfspace_vertices(normals, offsets):
    """Vertices of {y : normals y ≤ offsets}, which holds the origin strictly."""
    return HalfspaceIntersection(np.column_stack([normals, -offsets]), np.zeros(normals.shape[1])).intersections


def _boundary_points(shape, resolution):
    """(k, 3) body-frame points on the boundary whose convex hull is the shape (exactly for
    polytopes, a faceted inner approximation of curved shapes)."""
    if isinstance(shape, Polytope):
        return _halfspace_vertices(shape.A, shape.b)
    if isinstance(shape, Sphere):
        return shape.R * _unit_sphere(resolution)
    if isinstance(shape, Ellipsoid):
        upper = np.linalg.cholesky(shape.P).T  # yᵀPy = ‖U y‖²: y = U⁻¹ u maps the unit sphere onto it
        return np.linalg.solve(upper, _unit_sphere(resolution).T).T
    if isinstance(shape, Capsule):
        ball = shape.R * _unit_sphere(resolution)
        return np.vstack([ball + [shape.L / 2, 0, 0], ball - [shape.L / 2, 0, 0]])
    if isinstance(shape, Cylinder):
        return np.vstack([_circle(shape.R, shape.L / 2, resolution), _circle(shape.R, -shape.L / 2, resolution)])
    if isinstance(shape, Cone):
        base = _circle(shape.H * np.tan(shape.beta), shape.H / 4, resolution)
        return np.vstack([base, [[-0.75 * shape.H, 0.0, 0.0]]])
    if isinstance(shape, Polygon):
        corners = np.column_stack([_halfspace_vertices(shape.C, shape.d), np.zeros(len(shape.d))])
        ball = shape.R * _unit_sphere(max(8, resolution // 2))
        return (corners[:, None, :] + ball[None, :, :]).reshape(-1, 3)
    raise TypeError(f"surface_mesh does not know {type(shape).__name__}")


def surface_mesh(shape, r=None, q=None, resolution=24):
    """Closed triangle mesh of the shape's boundary, in the world at body pose (r, q).

    Parameters
    ----------
    shape : dcol.geom shape (its offset pose is applied).
    r : (3,) body position, default the origin.
    q : (4,) quaternion ``[w, x, y, z]`` or (3, 3) rotation matrix, default identity.
    resolution : int, points around each curved direction (≥ 8).

    Returns
    -------
    vertices : (V, 3) float64, on the boundary of the shape.
    faces : (F, 3) int64 indices into vertices, outward-oriented triangles.
    """
    if resolution < 8:
        raise ValueError(f"resolution must be at least 8, got {resolution}")
    points = _boundary_points(shape, int(resolution))
    hull = ConvexHull(points)
    used = np.unique(hull.simplices)
    remap = np.full(len(points), -1)
    remap[used] = np.arange(len(used))
    faces = remap[hull.simplices]
    # Orient every triangle outward (qhull does not): its normal must agree with the facet's.
    vertices = points[used]
    normals = np.cross(vertices[faces[:, 1]] - vertices[faces[:, 0]], vertices[faces[:, 2]] - vertices[faces[:, 0]])
    flip = np.einsum("ij,ij->i", normals, hull.equations[:, :3]) < 0
    faces[flip] = faces[flip][:, ::-1]

    Q_body = np.eye(3) if q is None else rotation_matrix(q, "q")
    r_body = np.zeros(3) if r is None else np.asarray(r, dtype=np.float64)
    Q = Q_body @ shape.offset_rotation
    origin = r_body + Q_body @ shape.offset_position
    return vertices @ Q.T + origin, faces.astype(np.int64)
