"""Meshes: loading, convex hulls as polytopes (frame at the centroid, offsets), convex decomposition
and its disk cache.

References are independent of dcol's mesh code: closed-form boxes and tetrahedra, dcol's own Box,
the L block's analytic membership, and Monte Carlo volumes.
"""

import os
import sys
import tracemalloc
import warnings

import numpy as np
import pytest
import trimesh
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

import dcol.geom.mesh as mesh_module
from dcol.geom import MAX_FACES, Box, Sphere, proximity, support_point
from dcol.geom.mesh import ConvexMesh, convex_decomposition, load_mesh
from tests.support.optional import oracle
from tests.support.topology import check_closed_solid

MESHES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "datasets", "meshes")
L_BLOCK = os.path.join(MESHES, "l_block.obj")
HALF = np.array([0.3, 0.2, 0.1])
POINT_CLOUD_PLY = (
    "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
    "end_header\n0 0 0\n1 0 0\n0 1 0\n"
)
NAN_OBJ = "v 0 0 0\nv 1 0 0\nv 0 nan 0\nv 0 0 1\nf 1 2 3\nf 1 3 4\nf 1 2 4\nf 2 3 4\n"
IDENTITY = [1.0, 0.0, 0.0, 0.0]
TETRAHEDRON = np.array([[1.0, 0.5, 0.2], [1.3, 0.5, 0.2], [1.0, 0.9, 0.2], [1.1, 0.6, 0.5]])  # tetrahedron.stl


def _rows(A, b):
    """Half-space rows (m, 4) normalized and sorted, to compare polytopes up to row order and scaling."""
    lengths = np.linalg.norm(A, axis=1, keepdims=True)
    rows = np.round(np.column_stack([A, b]) / lengths, 12)
    return rows[np.lexsort(rows.T[::-1])]


def _in_l_block(points):
    """(N,) bool: inside the L block (a 0.3 × 0.1 bar and a 0.1 × 0.1 bar on its left end, 0.1 deep)."""
    x, y, z = points.T
    in_box = (x >= 0) & (y >= 0) & (z >= 0) & (z <= 0.1)
    return in_box & (((x <= 0.3) & (y <= 0.1)) | ((x <= 0.1) & (y <= 0.2)))


def _inside_any(parts, points):
    """(N,) bool: body points inside at least one part."""
    inside = np.zeros(len(points), dtype=bool)
    for part in parts:
        local = (points - part.offset_position) @ part.offset_rotation  # body → shape frame
        inside |= np.all(local @ part.A.T <= part.b, axis=1)
    return inside


# load_mesh


@pytest.mark.parametrize("extension", ["obj", "stl", "ply", "off", "glb"])
def test_load_formats(tmp_path, extension):
    path = tmp_path / f"box.{extension}"
    trimesh.creation.box(2 * HALF).export(path)
    mesh = load_mesh(path)
    assert isinstance(mesh, trimesh.Trimesh)
    assert mesh.vertices.shape == (8, 3) and mesh.faces.shape == (12, 3)  # STL's corner copies merged
    assert mesh.is_volume and mesh.volume == pytest.approx(8 * np.prod(HALF), rel=1e-6)


def test_load_scene_is_one_mesh(tmp_path):
    path = tmp_path / "two.glb"
    far = trimesh.creation.box(2 * HALF, transform=trimesh.transformations.translation_matrix([3.0, 0.0, 0.0]))
    trimesh.Scene([trimesh.creation.box(2 * HALF), far]).export(path)
    mesh = load_mesh(str(path))
    assert len(mesh.faces) == 24 and mesh.volume == pytest.approx(16 * np.prod(HALF), rel=1e-6)


def test_load_dae_names_the_file(tmp_path):
    """DAE needs pycollada: without it an ImportError, with it this empty document is unreadable."""
    path = tmp_path / "scene.dae"
    path.write_text('<?xml version="1.0"?><COLLADA></COLLADA>')
    with pytest.raises((ImportError, ValueError), match="scene.dae"):
        load_mesh(path)


def test_load_datasets():
    for name, volume in [("l_block.obj", 0.004), ("u_block.obj", 0.005), ("tetrahedron.stl", 0.006)]:
        mesh = load_mesh(os.path.join(MESHES, name))
        assert mesh.is_volume and mesh.volume == pytest.approx(volume, rel=1e-6)


@pytest.mark.parametrize(
    "name, text, error, match",
    [
        ("missing.obj", None, FileNotFoundError, "not found"),
        ("garbage.obj", "this is not a mesh\n", ValueError, "no triangles"),
        ("empty.stl", "", ValueError, "no triangles"),
        ("points.ply", POINT_CLOUD_PLY, ValueError, "no triangles"),
        ("nan.obj", NAN_OBJ, ValueError, "non-finite"),
        ("mesh.unknown", "0 0 0\n", ValueError, "could not be read"),
    ],
)
def test_load_errors_name_the_file(tmp_path, name, text, error, match):
    path = tmp_path / name
    if text is not None:
        path.write_text(text)
    with pytest.raises(error, match=match) as info:
        load_mesh(path)
    assert name in str(info.value)


# ConvexMesh


def test_cube_mesh_equals_box():
    shape = ConvexMesh.from_mesh(trimesh.creation.box(2 * HALF))
    box = Box(HALF)
    np.testing.assert_allclose(_rows(shape.A, shape.b), _rows(box.A, box.b), atol=1e-12)
    np.testing.assert_allclose(shape.centroid, 0.0, atol=1e-15)
    assert shape.volume == pytest.approx(8 * np.prod(HALF), rel=1e-12)
    assert [len(face) for face in shape.faces] == [4] * 6 and shape.edges.shape == (12, 2)
    check_closed_solid(shape.A, shape.b, shape._topology)
    hull = shape.mesh
    assert hull.is_volume and hull.volume == pytest.approx(shape.volume, rel=1e-12)


def test_coplanar_triangles_merge_in_float32_files(tmp_path):
    """The chamfered box has 26 faces; stored rotated and moved in a float32 STL, its triangles'
    planes differ by round-off and must still merge, with every file vertex inside the polytope."""
    mesh = load_mesh(os.path.join(MESHES, "chamfered_box.stl"))
    assert len(ConvexMesh.from_mesh(mesh).b) == 26
    for seed in range(4):
        moved = mesh.copy()
        transform = np.eye(4)
        transform[:3, :3], transform[:3, 3] = Rotation.random(random_state=seed).as_matrix(), [1.0, 2.0, 3.0]
        moved.apply_transform(transform)
        moved.export(tmp_path / "moved.stl")
        shape = ConvexMesh.from_mesh(tmp_path / "moved.stl")
        assert sorted(len(face) for face in shape.faces) == [3] * 8 + [4] * 18
        assert len(shape.vertices) == 24 and len(shape.edges) == 48  # four faces meet at each corner
        points = load_mesh(tmp_path / "moved.stl").vertices - shape.centroid
        assert np.all(points @ shape.A.T <= shape.b + 1e-15)
        assert shape.volume == pytest.approx(mesh.volume, rel=1e-5)


def test_centroid_of_tetrahedron_off_the_origin():
    """The file's origin is outside the tetrahedron: the shape frame moves to its centroid."""
    shape = ConvexMesh.from_mesh(os.path.join(MESHES, "tetrahedron.stl"))
    centroid = TETRAHEDRON.mean(axis=0)  # a tetrahedron's volume centroid is its corners' mean
    np.testing.assert_allclose(shape.centroid, centroid, atol=1e-7)  # float32 file
    np.testing.assert_allclose(shape.offset_position, shape.centroid)
    assert np.all(shape.b > 0.0)
    corners = shape.vertices + shape.centroid
    assert np.max(np.min(np.linalg.norm(corners[:, None] - TETRAHEDRON[None], axis=2), axis=0)) < 1e-6
    assert shape.volume == pytest.approx(abs(np.linalg.det(TETRAHEDRON[1:] - TETRAHEDRON[0])) / 6, rel=1e-6)
    # Polytope.from_vertices needs the origin inside; ConvexMesh's does not.
    np.testing.assert_allclose(ConvexMesh.from_vertices(TETRAHEDRON).centroid, centroid, atol=1e-12)


@pytest.mark.parametrize("orientation", ["quaternion", "matrix"])
def test_offset_composes_with_centroid(orientation):
    """A mesh moved far from its origin, with the offset moved back, is the same body geometry."""
    rng = np.random.default_rng(7)
    points = rng.normal(size=(30, 3)) * [0.3, 0.2, 0.1]
    rotation = Rotation.random(random_state=3)
    q = rotation.as_quat(scalar_first=True) if orientation == "quaternion" else rotation.as_matrix()
    R, r, far = rotation.as_matrix(), np.array([0.1, -0.2, 0.3]), np.array([100.0, -50.0, 20.0])
    near = ConvexMesh(points, offset=(r, q))
    moved = ConvexMesh(points + far, offset=(r - R @ far, q))

    np.testing.assert_allclose(moved.centroid, near.centroid + far, atol=1e-9)
    np.testing.assert_allclose(moved.offset_position, near.offset_position, atol=1e-9)
    np.testing.assert_allclose(moved.offset_rotation, R, atol=1e-12)
    np.testing.assert_allclose(_rows(moved.A, moved.b), _rows(near.A, near.b), atol=1e-9)
    # Body frame: the hull's corners are the input points moved by the offset.
    hull_corners = points[ConvexHull(points).vertices] @ R.T + r
    body = near.mesh.vertices
    assert np.max(np.min(np.linalg.norm(body[:, None] - hull_corners[None], axis=2), axis=1)) < 1e-9

    # World: DCOL sees the same contact for both shapes at the same body pose.
    body_q, body_r, sphere_at = [0.9, 0.1, -0.2, 0.3], np.array([0.5, 0.0, 0.2]), np.array([1.2, 0.4, 0.1])
    a = proximity(near, body_r, body_q, Sphere(0.2), sphere_at, [1, 0, 0, 0])
    b = proximity(moved, body_r, body_q, Sphere(0.2), sphere_at, [1, 0, 0, 0])
    assert a.converged and b.converged
    assert b.alpha == pytest.approx(a.alpha, rel=1e-7) and b.p_a == pytest.approx(a.p_a, abs=1e-7)


def test_scale():
    shape = ConvexMesh.from_mesh(trimesh.creation.box([1.0, 1.0, 1.0]), scale=2 * HALF)
    np.testing.assert_allclose(_rows(shape.A, shape.b), _rows(Box(HALF).A, Box(HALF).b), atol=1e-12)
    assert ConvexMesh.from_mesh(L_BLOCK, scale=10.0).volume == pytest.approx(1000 * 0.005, rel=1e-12)


@pytest.mark.parametrize(
    "build, error, match",
    [
        (lambda: ConvexMesh.from_mesh(os.path.join(MESHES, "missing.obj")), FileNotFoundError, "missing.obj"),
        (lambda: ConvexMesh.from_mesh(trimesh.Trimesh(np.eye(3), np.zeros((0, 3), int))), ValueError, "no triangles"),
        (lambda: ConvexMesh(np.eye(3)), ValueError, "at least 4 points"),
        (lambda: ConvexMesh(np.c_[np.random.default_rng(0).normal(size=(10, 2)), np.ones(10)]), ValueError, "solid"),
        (lambda: ConvexMesh(np.outer(np.arange(6.0), [1.0, 2.0, 3.0])), ValueError, "solid"),
        (lambda: ConvexMesh.from_mesh(trimesh.creation.icosphere(3)), ValueError, f"MAX_FACES = {MAX_FACES}.*decimate"),
        (lambda: ConvexMesh(np.ones((5, 2))), ValueError, r"vertices must have shape \(m, 3\)"),
        (lambda: ConvexMesh.from_mesh(L_BLOCK, scale=[1.0, 0.0, 1.0]), ValueError, "scale must be nonzero"),
        (lambda: ConvexMesh.from_mesh(np.eye(3)), TypeError, "mesh_or_path"),
        (lambda: ConvexMesh(TETRAHEDRON, offset=np.zeros(3)), TypeError, "offset must be a pair"),
    ],
)
def test_convex_mesh_errors(build, error, match):
    with pytest.raises(error, match=match):
        build()


def test_a_mesh_that_is_not_convex_is_replaced_by_its_hull_with_one_warning():
    """The L block's inner corner lies inside its hull; a box, a float32 sphere (whose vertices qhull
    sees within rounding of its faces) and a subdivided box (vertices in the middle of flat faces) do not."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")  # Python's own: each message once per place that warns
        for _ in range(3):
            ConvexMesh.from_mesh(L_BLOCK)
    assert len(caught) == 1 and issubclass(caught[0].category, UserWarning)
    assert str(caught[0].message) == (
        f"mesh file {L_BLOCK!r} is not convex: dcol collides with its convex hull (convex_decomposition splits a "
        "mesh into convex parts)"
    )
    sphere = trimesh.creation.icosphere(2)
    sphere.vertices = (sphere.vertices * 3.0 + 100.0).astype(np.float32).astype(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for convex in (trimesh.creation.box([0.3, 0.2, 0.1]), sphere, trimesh.creation.box([1, 2, 3]).subdivide()):
            ConvexMesh.from_mesh(convex)


# convex_decomposition


@pytest.mark.parametrize("method, options", [("coacd", None), ("vhacd", {"resolution": 20000})])
def test_decomposition_of_l_block(tmp_path, method, options):
    oracle({"coacd": "coacd", "vhacd": "vhacdx"}[method])
    parts = convex_decomposition(L_BLOCK, method=method, cache_dir=tmp_path, options=options)
    assert len(parts) >= 2 and all(isinstance(part, ConvexMesh) for part in parts)
    for part in parts:  # each hull in the mesh's frame and bounds
        corners = part.mesh.vertices
        assert np.all(corners >= -1e-6) and np.all(corners <= [0.3 + 1e-6, 0.2 + 1e-6, 0.1 + 1e-6])
    samples = np.random.default_rng(1).uniform([0, 0, 0], [0.3, 0.2, 0.1], size=(100_000, 3))
    in_parts, in_block = _inside_any(parts, samples), _in_l_block(samples)
    box_volume = 0.3 * 0.2 * 0.1
    assert box_volume * in_parts.mean() == pytest.approx(0.004, rel=0.05)
    assert np.mean(in_parts != in_block) < 0.03


def test_decomposition_cache_hit(tmp_path, monkeypatch):
    oracle("coacd")
    first = convex_decomposition(L_BLOCK, cache_dir=tmp_path)
    assert len(list(tmp_path.glob("*.npz"))) == 1

    def fail(*args):
        raise AssertionError("the decomposition ran although its result is cached")

    monkeypatch.setitem(mesh_module._DECOMPOSERS, "coacd", ("coacd", fail))
    offset = (np.array([1.0, 2.0, 3.0]), [0.0, 0.0, 0.0, 1.0])  # not part of the key
    second = convex_decomposition(L_BLOCK, cache_dir=tmp_path, offset=offset)
    assert len(second) == len(first)
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a.A, b.A)
        np.testing.assert_array_equal(a.b, b.b)
        np.testing.assert_allclose(b.offset_position, offset[0] + [-1, -1, 1] * a.offset_position, atol=1e-12)
    # A damaged cache file is recomputed.
    monkeypatch.undo()
    cached = next(tmp_path.glob("*.npz"))
    cached.write_bytes(b"not an npz file")
    assert len(convex_decomposition(L_BLOCK, cache_dir=tmp_path)) == len(first)
    np.load(cached).close()

    # Other settings or another mesh are not in the cache.
    monkeypatch.setitem(mesh_module._DECOMPOSERS, "coacd", ("coacd", fail))
    with pytest.raises(AssertionError, match="although"):
        convex_decomposition(L_BLOCK, cache_dir=tmp_path, threshold=0.1)
    with pytest.raises(AssertionError, match="although"):
        convex_decomposition(L_BLOCK, cache_dir=tmp_path, scale=2.0)


def test_default_cache_dir_from_environment(tmp_path, monkeypatch):
    oracle("coacd")
    monkeypatch.setenv("DCOL_CACHE_DIR", str(tmp_path / "cache"))
    convex_decomposition(L_BLOCK)
    assert len(list((tmp_path / "cache").glob("*.npz"))) == 1


def test_convex_mesh_is_not_decomposed(tmp_path, monkeypatch):
    def fail(*args):
        raise AssertionError("a convex mesh was decomposed")

    monkeypatch.setitem(mesh_module._DECOMPOSERS, "coacd", ("coacd", fail))
    parts = convex_decomposition(os.path.join(MESHES, "chamfered_box.stl"), cache_dir=tmp_path)
    assert len(parts) == 1 and len(parts[0].b) == 26


def test_decomposition_needs_a_closed_mesh(tmp_path):
    open_box = trimesh.creation.box(2 * HALF)
    open_box.update_faces(np.arange(1, 12))
    open_box.export(tmp_path / "open.obj")
    with pytest.raises(ValueError, match="open.obj.*closed surface"):
        convex_decomposition(tmp_path / "open.obj", cache_dir=tmp_path)


def test_missing_package_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "coacd", None)  # import coacd now raises ImportError
    with pytest.raises(ImportError, match=r"dcol\[mesh\]"):
        convex_decomposition(L_BLOCK, cache_dir=tmp_path)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"method": "magic"}, ValueError, "method must be one of"),
        ({"threshold": 0.0}, ValueError, "threshold"),
        ({"threshold": "high"}, TypeError, "threshold"),
        ({"max_hulls": 0}, ValueError, "max_hulls"),
        ({"max_hull_vertices": 1000}, ValueError, "max_hull_vertices"),
        ({"options": {"callback": print}}, TypeError, "options"),
    ],
)
def test_decomposition_bad_settings(tmp_path, kwargs, error, match):
    with pytest.raises(error, match=match):
        convex_decomposition(L_BLOCK, cache_dir=tmp_path, **kwargs)


def _peak_memory(function):
    """Peak bytes numpy and Python allocate while function() runs (tracemalloc tracks numpy's arrays)."""
    tracemalloc.start()
    try:
        function()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_detailed_mesh_is_refused_before_a_large_allocation():
    """An 82k-face mesh (its hull has 81,920 faces over 40,962 vertices) is refused by its face count
    before the plane offsets, whose faces × points product would not fit in memory."""
    sphere = trimesh.creation.icosphere(6)

    def build():
        with pytest.raises(ValueError, match=f"81920 faces .*MAX_FACES = {MAX_FACES}"):
            ConvexMesh.from_mesh(sphere)

    bound = 200e6
    assert len(sphere.faces) * len(sphere.vertices) * 8 > 100 * bound  # the product's float64 bytes
    peak = _peak_memory(build)
    assert peak < bound, f"peak {peak / 1e6:.0f} MB"


def test_finely_tessellated_hull_takes_memory_of_its_size():
    """A 200-sided prism whose side faces carry 250,000 points: qhull keeps them all as coplanar points,
    and the plane offsets, a max over faces × points, must not hold that product at once. The hull is
    the prism's: 202 faces (the 200 unit side normals and ±z) and its closed-form volume."""
    sides, per_side = 200, 1250
    rng = np.random.default_rng(5)
    angles = 2 * np.pi * np.arange(sides + 1) / sides
    ring = np.column_stack([np.cos(angles), np.sin(angles)])
    t, z = rng.uniform(size=(sides, per_side, 1)), rng.uniform(-0.5, 0.5, size=(sides, per_side, 1))
    on_sides = np.concatenate([ring[:-1, None] * (1 - t) + ring[1:, None] * t, z], axis=2).reshape(-1, 3)
    corners = np.vstack([np.column_stack([ring[:-1], np.full(sides, h)]) for h in (-0.5, 0.5)])
    points = np.vstack([on_sides, corners])

    shapes = []
    bound = 40e6
    assert (sides + 2) * len(points) * 8 > 10 * bound  # the product's float64 bytes
    peak = _peak_memory(lambda: shapes.append(ConvexMesh(points)))
    assert peak < bound, f"peak {peak / 1e6:.0f} MB"

    shape = shapes[0]
    middles = angles[:-1] + np.pi / sides
    normals = np.vstack([np.column_stack([np.cos(middles), np.sin(middles), np.zeros(sides)]), [[0, 0, 1], [0, 0, -1]]])
    offsets = np.r_[np.full(sides, np.cos(np.pi / sides)), 0.5, 0.5]  # from the axis, the centroid's height
    lengths = np.linalg.norm(shape.A, axis=1)
    match = np.argmax(normals @ shape.A.T / lengths, axis=1)  # the hull's face nearest each prism face
    assert sorted(match) == list(range(sides + 2))
    # A merged facet may tilt by twice the coplanar tolerance (a millionth of the size) over its width.
    tilt = 2e-6 * np.linalg.norm(np.ptp(points, axis=0)) / (2 * np.sin(np.pi / sides))
    np.testing.assert_allclose(shape.A[match] / lengths[match, None], normals, rtol=0, atol=tilt)
    np.testing.assert_allclose(shape.b[match] / lengths[match], offsets, atol=1e-5)
    np.testing.assert_allclose(shape.centroid, 0.0, atol=1e-9)
    assert shape.volume == pytest.approx(sides / 2 * np.sin(2 * np.pi / sides), rel=1e-9)


@pytest.mark.parametrize(
    "side, center",
    [(2e12, [0.0, 0.0, 0.0]), (1e-6, [0.0, 0.0, 0.0]), (2.0, [1e9, -1e9, 1e9]), (2e12, [3e13, 0.0, -3e13])],
    ids=["1e12 m", "micrometre", "far off the origin", "1e12 m far off"],
)
def test_cubes_of_any_size_and_place(tmp_path, side, center):
    """A cube's hull is the cube, in metres or micrometres and far from its origin: trimesh merges a
    loaded mesh's vertices by rounding them to 1e-8 in int64, which overflowed for coordinates of
    1e12 and merged the cube into one point. The OBJ file has every coordinate's shortest repr."""
    center = np.array(center)
    signs = trimesh.creation.box([2.0, 2.0, 2.0])  # corners ±1 and the triangles between them
    corners = center + side / 2 * signs.vertices
    obj = "".join("v " + " ".join(repr(float(x)) for x in corner) + "\n" for corner in corners)
    obj += "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in signs.faces)
    (tmp_path / "cube.obj").write_text(obj)
    scale = side + np.abs(center).max()  # the coordinates' size: their rounding is relative to it
    for shape in (
        ConvexMesh.from_mesh(tmp_path / "cube.obj"),
        ConvexMesh.from_mesh(trimesh.Trimesh(corners, signs.faces, process=False)),
        ConvexMesh(corners),
    ):
        assert shape.volume == pytest.approx(side**3, rel=1e-9)
        np.testing.assert_allclose(shape.centroid, center, rtol=0, atol=1e-15 * scale)
        found = shape.vertices + shape.centroid
        assert len(found) == 8
        np.testing.assert_allclose(
            found[np.lexsort(found.T)], corners[np.lexsort(corners.T)], rtol=0, atol=1e-15 * scale
        )
        for direction in ([1.0, 1.0, 1.0], [-1.0, 0.5, -0.2], [0.3, -0.9, 0.1]):
            expected = center + side / 2 * np.sign(direction)
            np.testing.assert_allclose(
                support_point(shape, np.zeros(3), IDENTITY, direction), expected, atol=1e-15 * scale
            )
