"""Triangle meshes as dcol shapes: loading, convex hulls and convex decomposition.

DCOL works on convex primitives (DCOL §III-B), so a mesh enters as the polytope of its convex hull
(:class:`ConvexMesh`), or, when it is not convex, as a list of such hulls from an approximate convex
decomposition (CoACD or V-HACD, optional extra ``dcol[mesh]``), which is cached on disk because it
takes seconds to minutes.

Mesh files put their origin anywhere, often outside the hull, while a polytope must hold the origin
of its own frame strictly inside. A ConvexMesh therefore puts its frame at the hull's volume
centroid and folds that shift into the shape's offset pose in the body, so the body frame stays the
mesh's frame (moved by the user's ``offset``, if any).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import json
import math
import os
import tempfile
import warnings
import zipfile
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
from scipy.spatial import ConvexHull

from dcol.progress import progress_bar
from dcol.typing import ArrayLike, FloatArray, IntArray, Pose
from dcol.validation import checked_array, checked_integer, checked_interval

from .rotations import checked_pose
from .shapes import MAX_FACES, Polytope

if TYPE_CHECKING:
    import trimesh

MeshOrPath: TypeAlias = "trimesh.Trimesh | str | os.PathLike[str]"

__all__ = ["load_mesh", "ConvexMesh", "convex_decomposition"]

# Hull facets whose points are within this distance (relative to the hull's size) of one plane are
# one face. Float32 files (STL, GLB) round coordinates by ~6e-8 of their magnitude, which tilts the
# triangles of a flat face apart; a millionth of the size is far below any shape detail.
_COPLANAR_TOLERANCE = 1e-6

# Merged planes pass within the coplanar tolerance of their points, so corners where more than
# three of them meet (a chamfered box's) spread by a few times that: the topology merges them back.
_TOPOLOGY_TOLERANCE = 10.0 * _COPLANAR_TOLERANCE

# A closed mesh whose volume is within this fraction of its hull's volume is convex.
_CONVEX_TOLERANCE = 1e-6

# A mesh triangle deeper inside the convex hull than this fraction of the hull's size makes the mesh
# not convex (ConvexMesh.from_mesh warns); shallower dents are rounding of flat or curved faces.
_DENT_DEPTH = 1e-4

# load_mesh merges vertices closer than this fraction of the mesh's size, as trimesh merges those
# within 1e-8 m, but independent of the units.
_MERGE_TOLERANCE = 1e-8

# Largest rounded coordinate of the merge: int64 holds up to 9.2e18.
_MERGE_RANGE = 1e18

# Points per block of the plane offsets' (faces × points) products: MAX_FACES × this many float64
# stay a few megabytes, however many points the hull keeps.
_OFFSET_BLOCK = 1024


def load_mesh(path: str | os.PathLike[str]) -> trimesh.Trimesh:
    """Triangle mesh from a file, scenes flattened into one mesh.

    Parameters
    ----------
    path : str or os.PathLike to an OBJ, STL, PLY, OFF, GLB/GLTF or DAE file (any format trimesh
        reads; DAE needs the ``pycollada`` package).

    Returns
    -------
    trimesh.Trimesh with vertices (V, 3) float64 and faces (F, 3) int64, F ≥ 1, in the file's
    units and frame; vertices at the same position are merged (so STL files come out closed).

    Raises
    ------
    FileNotFoundError if there is no such file; ValueError if it is not a readable mesh, holds no
    triangles or has non-finite coordinates; ImportError if its format needs a missing package.
    """
    import trimesh  # on first use: it would add ~0.2 s to importing dcol.geom

    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"mesh file {path!r} not found")
    try:
        # Unprocessed, so that NaN vertices are reported instead of silently dropped with their faces.
        mesh = trimesh.load_mesh(path, process=False)
    except ImportError as err:
        raise ImportError(f"reading mesh file {path!r} needs a package that is not installed: {err}") from err
    except Exception as err:  # trimesh raises many kinds for unknown or corrupt files
        raise ValueError(f"mesh file {path!r} could not be read as a triangle mesh: {err}") from err
    if len(mesh.faces) == 0:
        raise ValueError(f"mesh file {path!r} holds no triangles")
    if not np.all(np.isfinite(mesh.vertices)):
        raise ValueError(f"mesh file {path!r} has non-finite vertex coordinates (NaN or inf)")
    # Texture seams and per-face normals split vertices; merge them so the surface is connected.
    mesh.merge_vertices(merge_tex=True, merge_norm=True, digits_vertex=_merge_digits(mesh.vertices))
    return mesh


def _merge_digits(vertices: FloatArray) -> int:
    """Decimal places to which trimesh rounds the vertices (V, 3) to merge them: a grid finer than
    _MERGE_TOLERANCE of the mesh's size, as long as the rounded coordinates fit in int64 (with
    trimesh's fixed 8 places, coordinates beyond about 9e10 overflow and every vertex merges into one)."""
    largest = float(np.max(np.abs(vertices)))
    # The size relative to the largest coordinate, in [0, 2√3]: the size itself may overflow.
    spread = float(np.linalg.norm(np.ptp(vertices / largest, axis=0))) if largest > 0.0 else 0.0
    if spread == 0.0:  # all vertices at one point: any grid merges them
        return 0
    fine = math.ceil(-math.log10(_MERGE_TOLERANCE * spread * largest))
    return min(fine, math.floor(math.log10(_MERGE_RANGE / largest)))


def _mesh_argument(mesh_or_path: MeshOrPath, name: str) -> tuple[trimesh.Trimesh, str]:
    """(trimesh.Trimesh, description for messages) from a mesh or a file path."""
    import trimesh  # on first use: it would add ~0.2 s to importing dcol.geom

    if isinstance(mesh_or_path, trimesh.Trimesh):
        if len(mesh_or_path.faces) == 0:
            raise ValueError(f"{name} holds no triangles")
        if not np.all(np.isfinite(mesh_or_path.vertices)):
            raise ValueError(f"{name} has non-finite vertex coordinates (NaN or inf)")
        return mesh_or_path, name
    if isinstance(mesh_or_path, (str, os.PathLike)):
        return load_mesh(mesh_or_path), f"mesh file {os.fspath(mesh_or_path)!r}"
    raise TypeError(f"{name} must be a trimesh.Trimesh or a path to a mesh file, got {type(mesh_or_path).__name__}")


def _scaled_vertices(vertices: ArrayLike, scale: ArrayLike | None) -> FloatArray:
    """(V, 3) float64 vertices times scale: None, a number or (3,) per-axis factors, all nonzero."""
    if scale is None:
        return np.asarray(vertices, dtype=np.float64)
    factors = checked_array(scale, "scale", ()) if np.ndim(scale) == 0 else checked_array(scale, "scale", (3,))
    if np.any(factors == 0.0):
        raise ValueError(f"scale must be nonzero, got {scale!r}")
    return np.asarray(vertices, dtype=np.float64) * factors


def _solid_hull(points: FloatArray, name: str) -> ConvexHull:
    """qhull hull of points (k, 3), k ≥ 4, that must enclose a volume, nearly coplanar facets merged."""
    if len(points) < 4:
        raise ValueError(f"{name} must hold at least 4 points, got {len(points)}")
    size = np.linalg.norm(np.ptp(points, axis=0))
    try:
        # C-n: qhull merges neighbouring facets while a facet's centrum is within n of the other's plane.
        hull = ConvexHull(points, qhull_options=f"Qc Qt C-{_COPLANAR_TOLERANCE * size:.6g}")
    except Exception as err:  # qhull reports flat or degenerate point sets
        raise ValueError(f"{name} must span a solid (its points are coplanar, collinear or coincident)") from err
    if hull.volume <= 1e-12 * size**3:
        raise ValueError(f"{name} must span a solid (its convex hull is flat)")
    return hull


def _farthest_points(points: FloatArray, count: int) -> FloatArray:
    """At most count of the points (k, 3): the farthest from their mean first, then each the farthest
    from those already picked."""
    if len(points) <= count:
        return points
    picked = [int(np.argmax(np.linalg.norm(points - points.mean(0), axis=1)))]
    distance = np.linalg.norm(points - points[picked[0]], axis=1)
    for _ in range(count - 1):
        picked.append(int(np.argmax(distance)))
        distance = np.minimum(distance, np.linalg.norm(points - points[picked[-1]], axis=1))
    return points[picked]


def _dented(vertices: FloatArray, faces: IntArray, hull: ConvexMesh) -> bool:
    """Whether some triangle (t, 3) of vertices (V, 3), in the frame hull was made in, lies inside the
    hull deeper than _DENT_DEPTH of its size: whether the mesh is not convex. A triangle's centroid is
    on the boundary only if the whole triangle lies in one face of the hull, so the centroids are tested."""
    depth = _DENT_DEPTH * np.linalg.norm(np.ptp(vertices, axis=0))
    unit = np.linalg.norm(hull.A, axis=1)
    for start in range(0, len(faces), _OFFSET_BLOCK):  # in blocks, as in _plane_offsets
        centroids = vertices[faces[start : start + _OFFSET_BLOCK]].mean(axis=1) - hull.centroid
        distances = (centroids @ hull.A.T - hull.b) / unit  # ≤ 0 inside each plane
        if np.any(distances.max(axis=1) < -depth):
            return True
    return False


def _volume_and_centroid(hull: ConvexHull) -> tuple[float, FloatArray]:
    """Volume (float) and (3,) float64 volume centroid of the hull: tetrahedra from an inner point
    to each of its triangles."""
    inner = hull.points[hull.vertices].mean(axis=0)
    corners = hull.points[hull.simplices] - inner  # (t, 3, 3)
    volumes = np.abs(np.linalg.det(corners)) / 6.0
    return volumes.sum(), inner + volumes @ corners.sum(axis=1) / (4.0 * volumes.sum())


def _facet_normals(hull: ConvexHull) -> FloatArray:
    """(m, 3) float64 unit outward normals of the hull's faces, one per qhull facet (whose triangles
    all carry the facet's plane)."""
    normals = np.unique(hull.equations, axis=0)[:, :3]
    return normals / np.linalg.norm(normals, axis=1, keepdims=True)


def _plane_offsets(hull: ConvexHull, centroid: FloatArray, normals: FloatArray) -> FloatArray:
    """(m,) float64 offsets of the planes of the given normals in the frame at centroid, each through
    the outermost point along its normal: a merged facet's points are only nearly coplanar, and the
    polytope must still hold them all."""
    # Vertices and the points qhull kept as coplanar with a facet: the only ones that can be outermost.
    candidates = np.union1d(hull.vertices, hull.coplanar[:, 0])
    # In blocks of points: a finely tessellated mesh keeps most of its points as coplanar ones, and
    # all of them at once would make a (faces × points) product far larger than the hull.
    offsets = np.full(len(normals), -np.inf)
    for start in range(0, len(candidates), _OFFSET_BLOCK):
        points = hull.points[candidates[start : start + _OFFSET_BLOCK]] - centroid
        offsets = np.maximum(offsets, np.max(normals @ points.T, axis=1))
    return offsets


def _fan_triangles(faces: tuple[IntArray, ...]) -> IntArray:
    """(t, 3) int64 triangles fanning each polygon of faces (those with ≥ 3 vertices)."""
    polygons = [face for face in faces if len(face) >= 3]
    return np.vstack([np.column_stack([np.full(len(p) - 2, p[0]), p[1:-1], p[2:]]) for p in polygons])


class ConvexMesh(Polytope):
    """Convex hull of a point cloud or mesh as a polytope ``{y : A y ≤ b}`` (DCOL §III-B1).

    The shape's own frame sits at the hull's volume centroid, axes parallel to the input's frame:
    a body point is ``offset_position + offset_rotation @ y`` for a shape-frame point y, where the
    input's points x are ``centroid + y`` and the input frame is placed in the body by ``offset``.

    Parameters
    ----------
    vertices : (k, 3) float64 points, k ≥ 4, not all in one plane; the origin may be anywhere.
    offset : optional pair (r, q): pose of the points' frame in the body, r (3,) and q a
        quaternion (4,) ``[w, x, y, z]`` or a (3, 3) rotation matrix.

    Raises
    ------
    ValueError
        When the points span no solid or the hull has more than MAX_FACES faces after merging
        coplanar triangles.
    """

    _topology_tolerance: float = _TOPOLOGY_TOLERANCE

    def __init__(self, vertices: ArrayLike, *, offset: Pose | None = None) -> None:
        self._build(checked_array(vertices, "vertices", ("m", 3)), offset, "vertices")

    @classmethod
    def from_vertices(cls, V: ArrayLike, *, offset: Pose | None = None) -> ConvexMesh:
        """Same as ``ConvexMesh(V, offset=offset)`` (the origin need not be inside)."""
        return cls(V, offset=offset)

    @classmethod
    def from_mesh(
        cls,
        mesh_or_path: MeshOrPath,
        *,
        scale: ArrayLike | None = None,
        offset: Pose | None = None,
        max_vertices: int | None = None,
    ) -> ConvexMesh:
        """Convex hull of a mesh's vertices.

        Parameters
        ----------
        mesh_or_path : trimesh.Trimesh, or a path to a mesh file (see :func:`load_mesh`).
        scale : None, a number or (3,) float64 per-axis factors (nonzero) applied to the mesh's
            vertices first, e.g. a URDF ``<mesh scale>``.
        offset : optional pair (r, q): pose of the (scaled) mesh frame in the body.
        max_vertices : optional int ≥ 4: keep at most this many hull vertices, picked by farthest-point
            sampling (an inner approximation of the hull, for detailed meshes whose hull has more than
            MAX_FACES faces).

        Returns
        -------
        ConvexMesh whose body frame is the mesh frame moved by offset. A UserWarning (once per mesh
        and caller) says so when the mesh is not convex: part of its surface inside its hull.
        """
        mesh, name = _mesh_argument(mesh_or_path, "mesh_or_path")
        points = _scaled_vertices(mesh.vertices, scale)
        hull_points = points
        if max_vertices is not None:
            count = checked_integer(max_vertices, "max_vertices", minimum=4)
            hull_points = _farthest_points(points[_solid_hull(points, name).vertices], count)
        hull = cls._from_points(hull_points, offset, name)
        if _dented(points, np.asarray(mesh.faces, dtype=np.int64), hull):
            warnings.warn(
                f"{name} is not convex: dcol collides with its convex hull (convex_decomposition splits a mesh "
                "into convex parts)",
                UserWarning,
                stacklevel=2,
            )
        return hull

    @classmethod
    def _from_points(cls, points: FloatArray, offset: Pose | None, name: str) -> ConvexMesh:
        """Like the constructor, with ``name`` for the points in error messages."""
        shape = cls.__new__(cls)
        shape._build(points, offset, name)
        return shape

    def __reduce__(self) -> tuple[Callable[..., ConvexMesh], tuple[object, ...]]:
        # The planes and the frame as they are: a hull computed again could differ in its last bits.
        offset = (self.offset_position, self.offset_rotation)
        return _restored_mesh, (type(self), self.A, self.b, offset, self._centroid, self._volume)

    def _build(self, points: FloatArray, offset: Pose | None, name: str) -> None:
        hull = _solid_hull(points, name)
        volume, centroid = _volume_and_centroid(hull)
        # The face count is checked before the offsets, whose (faces × points) product a detailed
        # mesh would make too large for memory.
        A = _facet_normals(hull)
        if len(A) > MAX_FACES:
            raise ValueError(
                f"the convex hull of {name} has {len(A)} faces after merging coplanar triangles; at most "
                f"MAX_FACES = {MAX_FACES} are supported: decimate the mesh (e.g. trimesh's "
                "simplify_quadric_decimation) or split it with convex_decomposition(..., max_hull_vertices=...)"
            )
        b = _plane_offsets(hull, centroid, A)
        position, rotation = checked_pose(offset, "offset")
        super().__init__(A, b, offset=(position + rotation @ centroid, rotation))
        centroid.setflags(write=False)
        self._centroid = centroid
        self._volume = float(volume)

    @property
    def centroid(self) -> FloatArray:
        """(3,) float64 hull's volume centroid in the input's frame (before offset): the shift of
        the shape frame from the input frame. Without an offset it is ``offset_position``."""
        return self._centroid

    @property
    def volume(self) -> float:
        """float, volume of the hull."""
        return self._volume

    @property
    def mesh(self) -> trimesh.Trimesh:
        """trimesh.Trimesh of the hull in the body frame, triangles wound outward (a new copy each time)."""
        import trimesh  # on first use: it would add ~0.2 s to importing dcol.geom

        vertices = self.vertices @ self.offset_rotation.T + self.offset_position
        return trimesh.Trimesh(vertices, _fan_triangles(self.faces), process=False)

    def __repr__(self) -> str:
        return f"ConvexMesh(faces={len(self.b)}, vertices={len(self.vertices)}, volume={self._volume:.6g})"


def _restored_mesh(
    kind: type[ConvexMesh], A: FloatArray, b: FloatArray, offset: Pose, centroid: FloatArray, volume: float
) -> ConvexMesh:
    """A convex mesh as pickled by ConvexMesh.__reduce__: its polytope, frame, centroid and volume."""
    mesh = kind.__new__(kind)
    Polytope.__init__(mesh, A, b, offset=offset)
    mesh._centroid = centroid
    mesh._volume = volume
    return mesh


def _missing_backend(package: str) -> ImportError:
    return ImportError(
        f"convex decomposition needs the {package!r} package: pip install 'dcol[mesh]' (or pip install {package})"
    )


def _import_backend(package: str) -> ModuleType:
    try:
        return importlib.import_module(package)
    except ImportError as err:
        raise _missing_backend(package) from err


def _backend_version(package: str) -> str:
    """Installed version of the method's package: results of another version may differ."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError as err:
        raise _missing_backend(package) from err


def _run_coacd(
    vertices: FloatArray,
    faces: IntArray,
    threshold: float,
    max_hulls: int | None,
    max_hull_vertices: int,
    options: dict[str, Any],
) -> list[FloatArray]:
    """Hull vertex arrays from CoACD (Wei et al. 2022, collision-aware concavity)."""
    coacd = _import_backend("coacd")
    coacd.set_log_level("error")  # its default prints progress to stdout
    settings = {
        "threshold": threshold,
        "max_convex_hull": -1 if max_hulls is None else max_hulls,
        "decimate": True,
        "max_ch_vertex": max_hull_vertices,
        **options,
    }
    return [vertices for vertices, _ in coacd.run_coacd(coacd.Mesh(vertices, faces), **settings)]


def _run_vhacd(
    vertices: FloatArray,
    faces: IntArray,
    threshold: float,
    max_hulls: int | None,
    max_hull_vertices: int,
    options: dict[str, Any],
) -> list[FloatArray]:
    """Hull vertex arrays from V-HACD 4 (the ``vhacdx`` bindings)."""
    vhacdx = _import_backend("vhacdx")
    # vhacdx takes VTK-style polygons: a vertex count before each face's indices.
    polygons = np.column_stack([np.full(len(faces), 3), faces]).ravel().astype(np.uint32)
    settings = {
        "minimumVolumePercentErrorAllowed": 100.0 * threshold,
        "maxNumVerticesPerCH": max_hull_vertices,
        **({} if max_hulls is None else {"maxConvexHulls": max_hulls}),
        **options,
    }
    return [vertices for vertices, _ in vhacdx.compute_vhacd(vertices, polygons, **settings)]


# method → (package, decomposer); a decomposer maps (vertices, faces, threshold, max_hulls,
# max_hull_vertices, options) to a list of (k, 3) float64 hull vertex arrays in the mesh frame.
_DECOMPOSERS: dict[str, tuple[str, Callable[..., list[FloatArray]]]] = {
    "coacd": ("coacd", _run_coacd),
    "vhacd": ("vhacdx", _run_vhacd),
}


def _default_cache_dir() -> str:
    return os.environ.get("DCOL_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "dcol", "decompositions")


def _cache_key(vertices: FloatArray, faces: IntArray, method: str, settings: dict[str, Any]) -> str:
    """sha256 hex digest of the mesh arrays, the method, its package version and its settings."""
    digest = hashlib.sha256()
    digest.update(np.ascontiguousarray(vertices, dtype="<f8").tobytes())
    digest.update(np.ascontiguousarray(faces, dtype="<i8").tobytes())
    digest.update(json.dumps({"method": method, **settings}, sort_keys=True).encode())
    return digest.hexdigest()


def _load_cached(path: str) -> list[FloatArray] | None:
    """List of (k, 3) float64 hull vertex arrays from a cache file, or None if absent or unreadable."""
    try:
        with np.load(path) as data:
            return [data[f"hull_{i}"] for i in range(len(data.files))]
    except (OSError, ValueError, KeyError, zipfile.BadZipFile):
        return None


def _store_cached(path: str, hulls: list[FloatArray]) -> None:
    """Write the hull vertex arrays atomically, so a concurrent reader never sees half a file."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=os.path.dirname(path), suffix=".npz", delete=False) as file:
        arrays: dict[str, Any] = {f"hull_{i}": hull for i, hull in enumerate(hulls)}
        np.savez_compressed(file, **arrays)
    os.replace(file.name, path)


def _decomposition_settings(
    method: str,
    threshold: float,
    max_hulls: int | None,
    max_hull_vertices: int,
    options: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """Validated settings as a JSON-able dict (they go into the cache key)."""
    if method not in _DECOMPOSERS:
        raise ValueError(f"method must be one of {list(_DECOMPOSERS)}, got {method!r}")
    settings = {
        "threshold": checked_interval(threshold, "threshold", 0.0, 1.0, open_low=True),
        "max_hulls": None if max_hulls is None else checked_integer(max_hulls, "max_hulls", minimum=1),
        # A hull with k vertices has at most 2k − 4 triangles, which must fit in MAX_FACES.
        "max_hull_vertices": checked_integer(
            max_hull_vertices, "max_hull_vertices", minimum=4, maximum=(MAX_FACES + 4) // 2
        ),
        "options": {} if options is None else dict(options),
    }
    try:
        json.dumps(settings["options"])
    except TypeError as err:
        raise TypeError("options must map names to numbers, strings or booleans") from err
    return settings


def _closed_volume(vertices: FloatArray, faces: IntArray, name: str) -> float:
    """float, volume enclosed by the triangles faces (F, 3) int64 of vertices (V, 3) float64, which
    must form a closed, consistently wound surface."""
    import trimesh  # on first use: it would add ~0.2 s to importing dcol.geom

    mesh = trimesh.Trimesh(vertices, faces, process=False)
    if not (mesh.is_watertight and mesh.is_winding_consistent):
        raise ValueError(
            f"{name} must be a closed surface (watertight and consistently wound) for convex decomposition: "
            "repair it (e.g. trimesh.repair.fill_holes) or use ConvexMesh.from_mesh for its convex hull"
        )
    return abs(float(mesh.volume))  # inward winding gives a negative volume


def convex_decomposition(
    mesh_or_path: MeshOrPath,
    *,
    method: str = "coacd",
    threshold: float = 0.05,
    max_hulls: int | None = None,
    max_hull_vertices: int = 64,
    scale: ArrayLike | None = None,
    offset: Pose | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    options: Mapping[str, Any] | None = None,
    progress: bool | None = None,
) -> list[ConvexMesh]:
    """Approximate convex decomposition of a closed mesh into ConvexMesh parts of one body.

    Parameters
    ----------
    mesh_or_path : trimesh.Trimesh, or a path to a mesh file (see :func:`load_mesh`); must be a
        closed surface (watertight, consistently wound).
    method : "coacd" (CoACD, package ``coacd``) or "vhacd" (V-HACD 4, package ``vhacdx``); both
        come with ``pip install 'dcol[mesh]'``.
    threshold : float in (0, 1], the method's error tolerance: CoACD's concavity threshold, or
        for V-HACD the allowed volume error as a fraction (its minimumVolumePercentErrorAllowed
        is 100 × threshold).
    max_hulls : None or int ≥ 1, most parts to return (None: CoACD unbounded, V-HACD its default 64).
    max_hull_vertices : int in [4, (MAX_FACES + 4) // 2], most vertices per part, so that each
        part fits in MAX_FACES faces.
    scale : None, a number or (3,) float64 per-axis factors applied to the mesh's vertices first.
    offset : optional pair (r, q): pose of the (scaled) mesh frame in the body.
    cache_dir : folder for cached results; default ``$DCOL_CACHE_DIR`` or
        ``~/.cache/dcol/decompositions``.
    options : dict of further keyword arguments for ``coacd.run_coacd`` or
        ``vhacdx.compute_vhacd`` (e.g. ``{"seed": 1}``), overriding the ones above.
    progress : None (default), True or False: a progress bar (:mod:`dcol.progress`) through the
        decomposition and then the parts' hulls, shown by default when the method runs (not for a
        cached result or a convex mesh) and standard error is a terminal.

    Returns
    -------
    list of ConvexMesh, each with the mesh frame (moved by offset) as body frame. A mesh that is
    already convex (its volume within 1e-6 of its hull's) gives its single hull without running
    the method.

    Notes
    -----
    Results are cached in ``cache_dir`` as ``<sha256>.npz`` holding each part's hull vertices
    (k, 3) float64 in the mesh frame; the hash covers the scaled vertices (float64) and faces
    (int64), the method, its package version and every setting, so any change recomputes. The
    offset is applied afterwards and is not part of the key.

    Raises
    ------
    ValueError for an open or inconsistently wound mesh or bad settings; ImportError when the
    method's package is missing.
    """
    settings = _decomposition_settings(method, threshold, max_hulls, max_hull_vertices, options)
    mesh, name = _mesh_argument(mesh_or_path, "mesh_or_path")
    vertices = _scaled_vertices(mesh.vertices, scale)
    faces = np.asarray(mesh.faces, dtype=np.int64)
    mesh_volume = _closed_volume(vertices, faces, name)
    hull_volume, _ = _volume_and_centroid(_solid_hull(vertices, name))
    if hull_volume - mesh_volume <= _CONVEX_TOLERANCE * mesh_volume:
        return [ConvexMesh._from_points(vertices, offset, name)]

    package, decompose = _DECOMPOSERS[method]
    key = _cache_key(vertices, faces, method, {**settings, "version": _backend_version(package)})
    path = os.path.join(os.fspath(cache_dir) if cache_dir is not None else _default_cache_dir(), f"{key}.npz")
    hulls = _load_cached(path)
    # The method's run is one call that reports nothing: the bar names it while it runs (its first
    # unit), then counts the parts' hulls. A cached result (a total of 1 below a minimum of 2) shows
    # no bar by default.
    with progress_bar(
        1, progress, minimum=1 if hulls is None else 2, description=f"{method} on {name}", unit="part"
    ) as bar:
        if hulls is None:
            hulls = [
                np.asarray(h, dtype=np.float64)
                for h in decompose(
                    vertices,
                    faces,
                    settings["threshold"],
                    settings["max_hulls"],
                    settings["max_hull_vertices"],
                    settings["options"],
                )
            ]
            _store_cached(path, hulls)
        bar.reset(total=len(hulls))
        bar.set_description(f"hulls of the {method} parts of {name}")
        parts = []
        for i, hull in enumerate(hulls):
            parts.append(ConvexMesh._from_points(hull, offset, f"part {i} of the decomposition of {name}"))
            bar.update()
    return parts
