"""Planar bodies (LCP-physics §A.2): moments of inertia against the closed forms of the lamina, the
polygon's centring and orientation, and the errors of bad input."""

import numpy as np
import pytest

from dcol.dynamics.planar import Body, Circle, Polygon, rectangle


def test_circle_inertia_is_half_m_r_squared():
    assert Body(Circle(0.3), mass=2.0).inertia == pytest.approx(0.5 * 2.0 * 0.3**2, rel=1e-15)


def test_rectangle_inertia_is_m_w2_plus_h2_over_12():
    body = Body(rectangle(2.0, 0.5), mass=3.0)
    assert body.inertia == pytest.approx(3.0 * (2.0**2 + 0.5**2) / 12.0, rel=1e-14)
    assert body.shape.area() == pytest.approx(1.0, rel=1e-15)


def test_right_triangle_about_its_centroid():
    """Legs a and b: centroid at (a/3, b/3), I = m (a² + b²) / 18."""
    a, b, mass = 3.0, 2.0, 1.5
    triangle = Polygon([(0.0, 0.0), (a, 0.0), (0.0, b)])
    np.testing.assert_allclose(triangle.offset, [a / 3, b / 3], atol=1e-15)
    np.testing.assert_allclose(triangle.vertices.mean(axis=0), [0.0, 0.0], atol=1e-15)
    assert Body(triangle, mass).inertia == pytest.approx(mass * (a**2 + b**2) / 18.0, rel=1e-14)


def test_regular_hexagon_given_clockwise():
    """Side s: I = 5 m s² / 12; clockwise corners are stored counter-clockwise."""
    side = 0.7
    angles = -np.arange(6) * np.pi / 3  # clockwise
    hexagon = Polygon(side * np.stack([np.cos(angles), np.sin(angles)], axis=1) + [5.0, -2.0])
    assert hexagon.area() == pytest.approx(1.5 * np.sqrt(3) * side**2, rel=1e-14)
    assert Body(hexagon, 2.0).inertia == pytest.approx(5.0 * 2.0 * side**2 / 12.0, rel=1e-13)
    np.testing.assert_allclose(hexagon.offset, [5.0, -2.0], atol=1e-14)
    normals = hexagon.normals()
    midpoints = 0.5 * (hexagon.vertices + np.roll(hexagon.vertices, -1, axis=0))
    assert np.all(np.sum(normals * midpoints, axis=1) > 0)  # outward


@pytest.mark.parametrize(
    "points, message",
    [
        ([(0, 0), (2, 0), (1, 0.5), (2, 2), (0, 2)], "convex polygon"),
        ([(np.cos(t), np.sin(t)) for t in np.arange(5) * 4 * np.pi / 5], "convex polygon"),  # pentagram
        ([(0, 0), (1, 0), (2, 0), (1, 1)], "collinear"),
        ([(0, 0), (1, 0)], "at least 3"),
        ([(0, 0), (1, 0), (np.nan, 1)], "points must be finite"),
    ],
)
def test_bad_polygons_are_refused(points, message):
    with pytest.raises(ValueError, match=message):
        Polygon(points)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(mass=0.0), "mass must be finite and > 0"),
        (dict(mass=np.nan), "mass must be finite and > 0"),
        (dict(restitution=1.5), r"restitution must be in \[0, 1\]"),
        (dict(friction=-0.1), "friction must be finite and ≥ 0"),
        (dict(moment_of_inertia=0.0), "moment_of_inertia must be finite and > 0"),
    ],
)
def test_bad_body_parameters_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Body(Circle(1.0), **kwargs)


def test_bad_shapes_are_named():
    with pytest.raises(ValueError, match="radius must be finite and > 0"):
        Circle(0.0)
    with pytest.raises(TypeError, match="shape must be a Circle or a Polygon"):
        Body("disk")  # type: ignore[arg-type]
