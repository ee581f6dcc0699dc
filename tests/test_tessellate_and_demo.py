"""Surface meshes lie on the shapes' boundaries and close up; the demo runs end to end."""

import subprocess
import sys

import numpy as np
import pytest

from dcol.geom import Box, Capsule, Cone, Cylinder, Ellipsoid, Polygon, Sphere
from dcol.geom.tessellate import surface_mesh

from reference import rotation

SQUARE = np.array([[1.0, 0], [0, 1], [-1, 0], [0, -1]])


def gauge(shape, p):
    """Closed-form scaling at which a body-frame point p lies on the shape's boundary."""
    if isinstance(shape, Box):
        return np.max(np.abs(p) / shape.half_extents)
    if isinstance(shape, Sphere):
        return np.linalg.norm(p) / shape.R
    if isinstance(shape, Ellipsoid):
        return np.sqrt(p @ shape.P @ p)
    if isinstance(shape, Capsule):
        on_axis = np.clip(p[0], -shape.L / 2, shape.L / 2)
        return np.linalg.norm(p - [on_axis, 0, 0]) / shape.R  # valid for points near the surface
    if isinstance(shape, Cylinder):
        return max(abs(p[0]) / (shape.L / 2), np.hypot(p[1], p[2]) / shape.R)
    if isinstance(shape, Cone):
        radius = (p[0] + 0.75 * shape.H) * np.tan(shape.beta)
        return max(p[0] / (shape.H / 4), np.hypot(p[1], p[2]) / radius if radius > 0 else 1.0)
    if isinstance(shape, Polygon):  # square |y|∞ ≤ 1 padded by R
        nearest = np.r_[np.clip(p[:2], -1, 1), 0.0]
        return np.linalg.norm(p - nearest) / shape.R
    raise TypeError(shape)


SHAPES = [
    Box([0.5, 1.0, 0.3]),
    Sphere(0.7),
    Ellipsoid(np.diag([1.0, 4.0, 0.25])),
    Capsule(0.3, 1.5),
    Cylinder(0.4, 1.2),
    Cone(1.2, 0.4),
    Polygon(SQUARE, np.ones(4), 0.2),
]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: type(s).__name__)
def test_vertices_on_boundary_and_mesh_closed(shape):
    r, q = np.array([0.3, -1.0, 2.0]), np.array([0.8, 0.1, -0.3, 0.5])
    vertices, faces = surface_mesh(shape, r, q)
    body = (vertices - r) @ rotation(q)
    assert all(gauge(shape, p) == pytest.approx(1.0, abs=1e-9) for p in body)
    # Closed: every edge is shared by exactly two triangles.
    edges = np.sort(np.vstack([faces[:, [0, 1]], faces[:, [1, 2]], faces[:, [2, 0]]]), axis=1)
    _, counts = np.unique(edges, axis=0, return_counts=True)
    assert np.all(counts == 2)


@pytest.mark.parametrize(
    "shape,volume",
    [
        (Sphere(0.7), 4 / 3 * np.pi * 0.7**3),
        (Ellipsoid(np.diag([1.0, 4.0, 0.25])), 4 / 3 * np.pi * 1.0 * 0.5 * 2.0),
        (Capsule(0.3, 1.5), np.pi * 0.3**2 * 1.5 + 4 / 3 * np.pi * 0.3**3),
        (Cylinder(0.4, 1.2), np.pi * 0.4**2 * 1.2),
        (Cone(1.2, 0.4), np.pi * (1.2 * np.tan(0.4)) ** 2 * 1.2 / 3),
        (Box([0.5, 1.0, 0.3]), 8 * 0.5 * 1.0 * 0.3),
    ],
    ids=lambda v: type(v).__name__ if not isinstance(v, float) else "",
)
def test_volume_converges_with_resolution(shape, volume):
    """Divergence theorem on the outward-oriented mesh approaches the closed-form volume."""

    def mesh_volume(resolution):
        v, f = surface_mesh(shape, resolution=resolution)
        return np.einsum("ij,ij->i", v[f[:, 0]], np.cross(v[f[:, 1]], v[f[:, 2]])).sum() / 6

    coarse, fine = mesh_volume(16), mesh_volume(96)
    assert abs(fine - volume) <= abs(coarse - volume) + 1e-12
    assert fine == pytest.approx(volume, rel=5e-3)


def test_offset_pose_is_applied():
    r_off, q_off = np.array([0.5, 0.0, 0.0]), np.array([0.0, 0.0, 0.0, 1.0])
    offset, plain = Cone(1.0, 0.3, offset=(r_off, q_off)), Cone(1.0, 0.3)
    v_offset, _ = surface_mesh(offset, [1.0, 2.0, 3.0])
    v_plain, _ = surface_mesh(plain, [1.5, 2.0, 3.0], q_off)
    np.testing.assert_allclose(np.sort(v_offset, axis=0), np.sort(v_plain, axis=0), atol=1e-12)


def test_demo_runs(tmp_path, capsys):
    from dcol.demo import run_demo

    summary = run_demo(tmp_path / "demo.png")
    assert len(summary["pairs"]) == 21
    assert all(res.converged for _, _, res in summary["pairs"])
    assert (tmp_path / "demo.png").stat().st_size > 10_000
    assert "21 pairs" in capsys.readouterr().out


def test_demo_command_line(tmp_path):
    out = tmp_path / "cli.png"
    done = subprocess.run([sys.executable, "-m", "dcol", "demo", "--output", str(out)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert out.exists() and "polytope-capsule" in done.stdout
