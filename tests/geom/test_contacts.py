"""Contact generation (dcol.geom.contacts, Nimble App. C) against hand-worked closed forms and central
finite differences.

Every expected value is worked out here from the geometry of the configuration (which feature of which
body touches which, and where), never from dcol's outputs. The one exception is the DISTANCE rule, which
is defined through dcol.geom.signed_distance and is checked against it (and against a closed form where
the "ellipsoid" is a sphere).

Rule names read "feature of a, feature of b": POINT_FACE is a point of a over a face of b, FACE_POINT a
face of a under a point of b, and likewise for POINT_EDGE / EDGE_POINT.
"""

from collections import namedtuple

import numpy as np
import pytest
import trimesh

from dcol.geom import (
    Box,
    Capsule,
    Cone,
    ContactRule,
    ConvexMesh,
    Cylinder,
    Ellipsoid,
    Polytope,
    Sphere,
    contacts,
    signed_distance,
)
from dcol.solvers import SolverSettings, Status
from tests.support.distance_oracle import coal_distance
from tests.support.oracle import bounding_radii, rotation_matrix
from tests.support.shapes import random_configuration, random_quaternion

EX, EY, EZ = np.eye(3)
IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])
SQRT2, SQRT3 = np.sqrt(2.0), np.sqrt(3.0)
FIELDS = ("point", "normal", "tangent1", "tangent2", "separation")
# Value settings for central differences of the DISTANCE rule: solver noise must stay far below step².
TIGHT = SolverSettings(feastol=1e-11, abstol=1e-11, reltol=1e-11)

Rule = ContactRule
SWAPPED_RULE = {
    Rule.POINT_EDGE: Rule.EDGE_POINT,
    Rule.EDGE_POINT: Rule.POINT_EDGE,
    Rule.POINT_FACE: Rule.FACE_POINT,
    Rule.FACE_POINT: Rule.POINT_FACE,
}

Expected = namedtuple("Expected", "point normal separation rule")
# expected: a list with one entry per contact, an Expected or a tuple of acceptable alternatives.
# atol: tolerance of the values (closed-form rules are exact; DISTANCE goes through a cone solver).
# smooth: whether the configuration has derivatives (exactly coincident features do not).
Case = namedtuple("Case", "config expected margin atol smooth", defaults=(1e-9, True))


# --------------------------------------------------------------------------------------------------
# Rotations and the contact frame
# --------------------------------------------------------------------------------------------------


def unit(v):
    v = np.asarray(v, dtype=float)
    return v / np.linalg.norm(v)


def skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def quaternion_product(q1, q2):
    """Quaternion of Q(q1) Q(q2), both [w, x, y, z]."""
    w1, v1, w2, v2 = q1[0], np.asarray(q1[1:]), q2[0], np.asarray(q2[1:])
    return np.r_[w1 * w2 - v1 @ v2, w1 * v2 + w2 * v1 + np.cross(v1, v2)]


def axis_angle(axis, angle):
    """Quaternion of the rotation by ``angle`` about ``axis``, i.e. exp(angle [axis]×)."""
    return np.r_[np.cos(angle / 2), np.sin(angle / 2) * unit(axis)]


def rotation_between(u, v):
    """Quaternion of the minimal rotation taking direction u to direction v (not antiparallel)."""
    u, v = unit(u), unit(v)
    return unit(np.r_[1.0 + u @ v, np.cross(u, v)])


def contact_frame(n):
    """(tangent1, tangent2) of the spec: the minimal rotation taking world z to n applied to x and y
    (singular at n = −z, so no hand-frame case has that normal)."""
    nx, ny, nz = n
    s = 1.0 + nz
    return np.array([1 - nx * nx / s, -nx * ny / s, -nx]), np.array([-nx * ny / s, 1 - ny * ny / s, -ny])


# --------------------------------------------------------------------------------------------------
# The rules' closed forms (inflated features: a point or a segment with a radius ρ, 0 for polytopes)
# --------------------------------------------------------------------------------------------------


def closest_on_line(point, origin, direction):
    d = unit(direction)
    return origin + ((point - origin) @ d) * d


def inflated_points(c_a, rho_a, c_b, rho_b, rule=Rule.POINT_POINT):
    """POINT_POINT, and POINT_EDGE / EDGE_POINT once the segment's point is its line's closest point."""
    c_a, c_b = np.asarray(c_a, dtype=float), np.asarray(c_b, dtype=float)
    distance = np.linalg.norm(c_b - c_a)
    point = (c_a + c_b) / 2 if rho_a + rho_b == 0 else (rho_b * c_a + rho_a * c_b) / (rho_a + rho_b)
    return Expected(point, (c_b - c_a) / distance, distance - rho_a - rho_b, rule)


def crossing_edges(c_a, u, rho_a, c_b, v, rho_b, toward_b):
    """EDGE_EDGE from the two lines' closest points c_a, c_b (worked out by hand in each case) and the
    directions u, v. The normal's sign comes from ``toward_b`` (a direction from a to b), not from
    c_b − c_a, which flips when the edges have passed each other (penetration)."""
    c_a, c_b = np.asarray(c_a, dtype=float), np.asarray(c_b, dtype=float)
    # Guard the hand derivation: c_b − c_a is the lines' common perpendicular.
    assert abs((c_b - c_a) @ unit(u)) < 1e-12 and abs((c_b - c_a) @ unit(v)) < 1e-12
    n = unit(np.cross(u, v))
    n = n if n @ toward_b > 0 else -n
    point = (c_a + c_b) / 2 if rho_a + rho_b == 0 else (rho_b * c_a + rho_a * c_b) / (rho_a + rho_b)
    return Expected(point, n, n @ (c_b - c_a) - rho_a - rho_b, Rule.EDGE_EDGE)


def on_face(c, rho, m, plane_point, face_of):
    """POINT_FACE / FACE_POINT: point c of radius ρ over the face with outward unit normal m through
    plane_point, the face belonging to body ``face_of``; the normal points from a to b either way."""
    m = unit(m)
    separation = m @ (np.asarray(c) - plane_point) - rho
    if face_of == "a":
        return Expected(c - rho * m, m, separation, Rule.FACE_POINT)
    return Expected(c - rho * m, -m, separation, Rule.POINT_FACE)


def margin_for(gap):
    """The tightest natural margin: 0 when penetrating, a little above the gap when apart or touching
    (where a rounding-level positive separation must not drop the contact)."""
    return gap + 0.05 if gap >= 0 else 0.0


# --------------------------------------------------------------------------------------------------
# Hand-worked configurations, one per rule and situation (world = the hand frame; see `moved`)
# --------------------------------------------------------------------------------------------------

Q_ANY = axis_angle([1.0, 2.0, 3.0], 0.7)  # orientation of rotation-invariant shapes (spheres)
Q_CAPSULE = axis_angle([0.2, 0.5, 1.0], 0.9)
R_CAPSULE = np.array([0.3, -0.2, 0.1])
Q_CORNER_UP = quaternion_product(axis_angle(EZ, 0.3), rotation_between([1, 1, 1], EZ))  # cube corner (h,h,h) → +z
Q_EDGE_UP = axis_angle(EX, np.pi / 4)  # box edge (y, z) = (h, h) → top, along x at z = h√2
TETRAHEDRON = np.array([[0.0, 0.0, -1.0], [1.0, 0.0, 0.5], [-0.5, 0.8, 0.5], [-0.5, -0.8, 0.5]])


def sphere_sphere(gap):
    c_a, u = np.array([0.1, 0.2, 0.3]), np.array([2.0, -1.0, 2.0]) / 3
    c_b = c_a + (0.8 + gap) * u
    return Case(
        (Sphere(0.5), c_a, Q_ANY, Sphere(0.3), c_b, IDENTITY), [inflated_points(c_a, 0.5, c_b, 0.3)], margin_for(gap)
    )


def sphere_on_box_face(gap):
    # Sphere over the box's +z face (z = 0.5): normal +z, point = centre − R z.
    c = np.array([0.2, -0.1, 0.5 + 0.3 + gap])
    return Case(
        (Box([1.0, 0.7, 0.5]), np.zeros(3), IDENTITY, Sphere(0.3), c, Q_ANY),
        [on_face(c, 0.3, EZ, np.array([0, 0, 0.5]), "a")],
        margin_for(gap),
    )


def sphere_beside_rotated_box(gap):
    # a: sphere; b: box turned 0.4 about z, the sphere beside b's +x face: the normal is minus that
    # face's outward normal m = (cos 0.4, sin 0.4, 0).
    R = rotation_matrix(axis_angle(EZ, 0.4))
    r_b = np.array([0.2, 0.1, -0.3])
    c = r_b + R @ [0.6 + 0.3 + gap, 0.2, -0.1]
    return Case(
        (Sphere(0.3), c, Q_ANY, Box([0.6, 0.8, 0.4]), r_b, axis_angle(EZ, 0.4)),
        [on_face(c, 0.3, R @ EX, r_b + R @ [0.6, 0, 0], "b")],
        margin_for(gap),
    )


def sphere_over_box_edge(gap):
    # Centre in the normal wedge of the edge y = 0.7, z = 0.5 (along x): direction (0, sin β, cos β).
    direction = np.array([0.0, np.sin(0.6), np.cos(0.6)])
    c = np.array([0.3, 0.7, 0.5]) + (0.3 + gap) * direction
    on_edge = closest_on_line(c, np.array([0.0, 0.7, 0.5]), EX)
    return Case(
        (Box([1.0, 0.7, 0.5]), np.zeros(3), IDENTITY, Sphere(0.3), c, Q_ANY),
        [inflated_points(on_edge, 0.0, c, 0.3, Rule.EDGE_POINT)],
        margin_for(gap),
    )


def sphere_over_box_corner(gap):
    # Centre in the corner's normal octant: point = the corner, normal from it to the centre.
    corner = np.array([1.0, 0.7, 0.5])
    c = corner + (0.3 + gap) * np.array([1.0, 2.0, 2.0]) / 3
    return Case(
        (Box([1.0, 0.7, 0.5]), np.zeros(3), IDENTITY, Sphere(0.3), c, Q_ANY),
        [inflated_points(corner, 0.0, c, 0.3)],
        margin_for(gap),
    )


def capsule_side_sphere(gap):
    # Sphere off the capsule's side at body x = 0.4, along a body direction ⊥ the axis (pipe–sphere).
    Q = rotation_matrix(Q_CAPSULE)
    c_b = R_CAPSULE + Q @ [0.4, 0.0, 0.0] + (0.5 + gap) * (Q @ [0.0, np.cos(0.4), np.sin(0.4)])
    c_a = closest_on_line(c_b, R_CAPSULE, Q @ EX)
    return Case(
        (Capsule(0.2, 2.0), R_CAPSULE, Q_CAPSULE, Sphere(0.3), c_b, Q_ANY),
        [inflated_points(c_a, 0.2, c_b, 0.3, Rule.EDGE_POINT)],
        margin_for(gap),
    )


def capsule_cap_sphere(gap):
    # Sphere beyond the +x end of the segment (direction with a positive body x component).
    Q = rotation_matrix(Q_CAPSULE)
    w = np.array([np.cos(0.7), np.sin(0.7) * np.cos(0.4), np.sin(0.7) * np.sin(0.4)])
    end = R_CAPSULE + Q @ [1.0, 0.0, 0.0]
    c_b = end + (0.5 + gap) * (Q @ w)
    return Case(
        (Capsule(0.2, 2.0), R_CAPSULE, Q_CAPSULE, Sphere(0.3), c_b, Q_ANY),
        [inflated_points(end, 0.2, c_b, 0.3)],
        margin_for(gap),
    )


def capsule_cap_cap(gap):
    # a's +x end (1, 0, 0); b (axis d_b) starts at e_b = (1,0,0) + t w. The two end points are the closest
    # pair: (e_b − end)·(−x) ≤ 0 (w_x > 0) and (end − e_b)·d_b ≤ 0 (w·d_b = 0.48 > 0).
    w, d_b = np.array([0.8, 0.6, 0.0]), np.array([0.6, 0.0, 0.8])
    e_b = EX + (0.45 + gap) * w
    return Case(
        (Capsule(0.2, 2.0), np.zeros(3), IDENTITY, Capsule(0.25, 1.0), e_b + 0.5 * d_b, rotation_between(EX, d_b)),
        [inflated_points(EX, 0.2, e_b, 0.25)],
        margin_for(gap),
    )


def capsules_crossing(gap, kind=Capsule):
    # a along x through 0; b along (cos θ, sin θ, 0) through (x0, y0, h). b's line meets the plane y = 0
    # at x* = x0 − y0 cot θ, so the common perpendicular is vertical at (x*, 0). Two cylinders lying so
    # touch along the same perpendicular: their side lines are their axes inflated by R.
    theta, x0, y0, h = 1.1, 0.2, -0.3, 0.45 + gap
    v = np.array([np.cos(theta), np.sin(theta), 0.0])
    x_star = x0 - y0 / np.tan(theta)
    return Case(
        (kind(0.2, 2.0), np.zeros(3), IDENTITY, kind(0.25, 2.4), np.array([x0, y0, h]), axis_angle(EZ, theta)),
        [crossing_edges([x_star, 0, 0], EX, 0.2, [x_star, 0, h], v, 0.25, EZ)],
        margin_for(gap),
    )


def capsules_parallel(height):
    # a: x ∈ [−1, 1]; b: x ∈ [0.2, 1.8] at (y, z) = (0.1, height). Overlap [0.2, 1]: b's end over a's
    # segment (EDGE_POINT) and a's end under b's segment (POINT_EDGE), both with the same normal.
    r_b = np.array([1.0, 0.1, height])
    b_end, a_end = np.array([0.2, 0.1, height]), EX
    expected = [
        inflated_points(closest_on_line(b_end, np.zeros(3), EX), 0.2, b_end, 0.3, Rule.EDGE_POINT),
        inflated_points(a_end, 0.2, closest_on_line(a_end, r_b, EX), 0.3, Rule.POINT_EDGE),
    ]
    gap = np.hypot(0.1, height) - 0.5
    return Case(
        (Capsule(0.2, 2.0), np.zeros(3), IDENTITY, Capsule(0.3, 1.6), r_b, axis_angle(EX, 0.7)),
        expected,
        margin_for(gap),
    )


def box_vertex_capsule_side(offset):
    # A cube of half size 0.4 stood on a corner: its top vertex v = r_a + (0, 0, 0.4√3). The capsule's
    # axis passes near above it; offsets keep v − (closest axis point) within 17° of +z, inside the
    # vertex's normal cone (half-angle ≥ 35°), so the vertex is the closest feature.
    r_a = np.array([0.1, 0.2, 0.0])
    v = r_a + [0.0, 0.0, 0.4 * SQRT3]
    r_b = v + offset
    on_axis = closest_on_line(v, r_b, [np.cos(0.8), np.sin(0.8), 0.0])
    return Case(
        (Box([0.4, 0.4, 0.4]), r_a, Q_CORNER_UP, Capsule(0.15, 2.0), r_b, axis_angle(EZ, 0.8)),
        [inflated_points(v, 0.0, on_axis, 0.15, Rule.POINT_EDGE)],
        margin_for(np.linalg.norm(on_axis - v) - 0.15),
    )


def box_edge_capsule(gap):
    # Box (1, 0.5, 0.5) turned 45° about x: top edge along x at z = 0.5√2. The capsule crosses above it
    # along (cos θ, sin θ, 0) through (x0, y0, z0); closest points at x* = x0 − y0 cot θ (edge–pipe).
    theta, x0, y0 = 0.9, 0.1, 0.25
    top, z0 = 0.5 * SQRT2, 0.5 * SQRT2 + 0.2 + gap
    x_star = x0 - y0 / np.tan(theta)
    v = np.array([np.cos(theta), np.sin(theta), 0.0])
    return Case(
        (
            Box([1.0, 0.5, 0.5]),
            np.zeros(3),
            Q_EDGE_UP,
            Capsule(0.2, 2.0),
            np.array([x0, y0, z0]),
            axis_angle(EZ, theta),
        ),
        [crossing_edges([x_star, 0, top], EX, 0.0, [x_star, 0, z0], v, 0.2, EZ)],
        margin_for(gap),
    )


def on_box_top(shape, centre, orientation, points, rho, margin):
    """A shape at (centre, orientation) over the +z face (z = 0.3) of the box (1, 0.8, 0.3) at the origin,
    touching it at the points (each inflated by ρ): FACE_POINT contacts at their own depths."""
    return Case(
        (Box([1.0, 0.8, 0.3]), np.zeros(3), IDENTITY, shape, centre, orientation),
        [on_face(point, rho, EZ, np.array([0, 0, 0.3]), "a") for point in points],
        margin,
    )


def capsule_on_box_face(gap):
    # Capsule lying on the +z face (z = 0.3) along 30°: one contact under each segment end.
    centre = np.array([0.1, 0.2, 0.3 + 0.2 + gap])
    direction = np.array([np.cos(np.pi / 6), np.sin(np.pi / 6), 0.0])
    ends = [centre + 0.6 * direction, centre - 0.6 * direction]
    return on_box_top(Capsule(0.2, 1.2), centre, axis_angle(EZ, np.pi / 6), ends, 0.2, margin_for(gap))


Q_AXIS_UP = axis_angle(EY, -np.pi / 2)  # body x (a cylinder's or cone's axis) → world +z, body y → y


def rim_samples(centre, radius, rotation, count=4):
    """The world points of a flat cap's rim samples: the rim of the given centre and radius around body
    x, at angles 2πk/count from body y (the contact rules' square inscribed in a flat cap)."""
    angles = 2 * np.pi * np.arange(count) / count
    local = np.stack([np.zeros(count), radius * np.cos(angles), radius * np.sin(angles)], 1)
    return [centre + rotation @ y for y in local]


def cylinder_standing_on_box_face(gap):
    # Cylinder (R 0.2, L 0.6) on its cap on the +z face (z = 0.3), yawed 0.4: every rim sample of its
    # bottom cap over the face at the same height, each a FACE_POINT contact.
    rotation = axis_angle(EZ, 0.4)
    orientation = quaternion_product(rotation, Q_AXIS_UP)
    centre = np.array([0.1, 0.2, 0.3 + 0.3 + gap])
    rim = rim_samples(centre - [0.0, 0.0, 0.3], 0.2, rotation_matrix(orientation))
    return on_box_top(Cylinder(0.2, 0.6), centre, orientation, rim, 0.0, margin_for(gap))


def cylinder_leaning_on_box_face(gap):
    # The standing cylinder (R 0.2, L 0.6) tilted by φ = 0.3 about y: its axis a = (sin φ, 0, cos φ), its
    # bottom cap's rim lowest at c + R d, d = (cos φ, 0, −sin φ), gap above the face z = 0.3. Its rim
    # square turned to the face: that point, the two at c ± R y (R sin φ higher) and the opposite one
    # (2 R sin φ higher, beyond the margin): FACE_POINT contacts at their own depths.
    phi, radius = 0.3, 0.2
    orientation = quaternion_product(axis_angle(EY, phi), Q_AXIS_UP)
    axis, down = np.array([np.sin(phi), 0.0, np.cos(phi)]), np.array([np.cos(phi), 0.0, -np.sin(phi)])
    centre = np.array([0.1, 0.2, 0.3 + gap + 0.3 * np.cos(phi) + radius * np.sin(phi)])
    cap = centre - 0.3 * axis
    points = [cap + radius * down, cap + radius * EY, cap - radius * EY]
    return on_box_top(Cylinder(radius, 0.6), centre, orientation, points, 0.0, gap + radius * np.sin(phi) + 0.02)


def cylinder_lying_on_box_face(gap):
    # Cylinder (R 0.2, L 1.2) on its side on the +z face (z = 0.3) along 30°: its bottom line's two ends,
    # each an axis end inflated by R (as a capsule's).
    centre = np.array([0.1, 0.2, 0.3 + 0.2 + gap])
    direction = np.array([np.cos(np.pi / 6), np.sin(np.pi / 6), 0.0])
    ends = [centre + 0.6 * direction, centre - 0.6 * direction]
    orientation = quaternion_product(axis_angle(EZ, np.pi / 6), axis_angle(EX, 0.3))  # rolled 0.3 about its axis
    return on_box_top(Cylinder(0.2, 1.2), centre, orientation, ends, 0.2, margin_for(gap))


def cone_base_on_box_face(gap):
    # Cone (H 0.8, β 0.4) on its base (x = ¼H in its frame, radius H tan β) on the +z face (z = 0.3):
    # the base's rim samples, each a FACE_POINT contact.
    H, beta = 0.8, 0.4
    orientation = quaternion_product(axis_angle(EZ, 0.7), axis_angle(EY, np.pi / 2))  # body x → −z
    centre = np.array([-0.1, 0.1, 0.3 + 0.25 * H + gap])
    rim = rim_samples(centre + [0.0, 0.0, -0.25 * H], H * np.tan(beta), rotation_matrix(orientation))
    return on_box_top(Cone(H, beta), centre, orientation, rim, 0.0, margin_for(gap))


def capsule_axes_crossing():
    # a along x, b along (cos θ, sin θ, 0), both through the origin: the axes cross, and the least
    # translation parting them is along ±z (their common perpendicular) by the sum of the radii.
    theta = 1.1
    v = np.array([np.cos(theta), np.sin(theta), 0.0])
    expected = [(Expected(np.zeros(3), EZ, -0.45, Rule.EDGE_EDGE), Expected(np.zeros(3), -EZ, -0.45, Rule.EDGE_EDGE))]
    return Case(
        (Capsule(0.2, 2.0), np.zeros(3), IDENTITY, Capsule(0.25, 2.4), 0.3 * v, axis_angle(EZ, theta)),
        expected,
        0.0,
        smooth=False,
    )


def box_on_slab(yaw, gap):
    # Box (0.5, 0.3, 0.2) turned by yaw about z over a slab's top face z = 0.1: its 4 bottom corners.
    R = rotation_matrix(axis_angle(EZ, yaw))
    r_b = np.array([0.2, -0.3, 0.1 + 0.2 + gap])
    corners = [r_b + R @ [sx * 0.5, sy * 0.3, -0.2] for sx in (-1, 1) for sy in (-1, 1)]
    return Case(
        (Box([3.0, 3.0, 0.1]), np.zeros(3), IDENTITY, Box([0.5, 0.3, 0.2]), r_b, axis_angle(EZ, yaw)),
        [on_face(c, 0.0, EZ, np.array([0, 0, 0.1]), "a") for c in corners],
        margin_for(gap),
    )


def boxes_stacked(gap):
    # Equal cubes, b straight above a: the top and bottom squares coincide in projection, so each corner
    # may come as a's vertex under b's face (POINT_FACE, at z = 0.5) or b's over a's (FACE_POINT, at
    # 0.5 + gap).
    r_b = np.array([0.0, 0.0, 1.0 + gap])
    expected = []
    for sx in (-1, 1):
        for sy in (-1, 1):
            lower, upper = np.array([0.5 * sx, 0.5 * sy, 0.5]), np.array([0.5 * sx, 0.5 * sy, 0.5 + gap])
            expected.append(
                (on_face(upper, 0.0, EZ, np.array([0, 0, 0.5]), "a"), on_face(lower, 0.0, -EZ, r_b - [0, 0, 0.5], "b"))
            )
    return Case(
        (Box([0.5, 0.5, 0.5]), np.zeros(3), IDENTITY, Box([0.5, 0.5, 0.5]), r_b, IDENTITY),
        expected,
        margin_for(gap),
        smooth=False,
    )


def plus_sign(gap):
    # A (2 × 0.4 in x, y) under B (0.4 × 2): no corner of either lies inside the other's face; A's long
    # edges y = ±0.2 cross B's long edges x = ±0.2 at the 4 corners of the overlap square.
    top_a, bottom_b = 0.2, 0.2 + gap
    expected = [
        crossing_edges([sx * 0.2, sy * 0.2, top_a], EX, 0.0, [sx * 0.2, sy * 0.2, bottom_b], EY, 0.0, EZ)
        for sx in (-1, 1)
        for sy in (-1, 1)
    ]
    return Case(
        (Box([1.0, 0.2, 0.2]), np.zeros(3), IDENTITY, Box([0.2, 1.0, 0.2]), np.array([0, 0, 0.4 + gap]), IDENTITY),
        expected,
        margin_for(gap),
    )


def box_edges_crossed(theta, gap):
    # A (1, 0.3, 0.3) edge up: top edge along x at z = 0.3√2. B (1, 0.25, 0.25) edge down (45° about x puts
    # its edge (y, z) = (−h, −h) at the bottom, z = −0.25√2) and turned θ about z; centre (x0, y0, z0).
    x0, y0 = 0.15, -0.1
    top_a = 0.3 * SQRT2
    z0 = top_a + 0.25 * SQRT2 + gap
    v = np.array([np.cos(theta), np.sin(theta), 0.0])
    x_star = x0 - y0 / np.tan(theta)
    q_b = quaternion_product(axis_angle(EZ, theta), axis_angle(EX, np.pi / 4))
    return Case(
        (Box([1.0, 0.3, 0.3]), np.zeros(3), Q_EDGE_UP, Box([1.0, 0.25, 0.25]), np.array([x0, y0, z0]), q_b),
        [crossing_edges([x_star, 0, top_a], EX, 0.0, [x_star, 0, z0 - 0.25 * SQRT2], v, 0.0, EZ)],
        margin_for(gap),
    )


def tetrahedron_tip_on_box(gap):
    # Tip (0, 0, −1) down; a tilt of 0.2 keeps the other vertices ≥ 1.2 above it.
    q_b = quaternion_product(axis_angle(EZ, 0.7), axis_angle(EX, 0.2))
    tip_offset = rotation_matrix(q_b) @ [0.0, 0.0, -1.0]
    r_b = np.array([0.1, 0.2, 0.3 + gap]) - tip_offset
    return Case(
        (Box([2.0, 2.0, 0.3]), np.zeros(3), IDENTITY, Polytope.from_vertices(TETRAHEDRON), r_b, q_b),
        [on_face(r_b + tip_offset, 0.0, EZ, np.array([0, 0, 0.3]), "a")],
        margin_for(gap),
    )


def box_corner_under_slab(gap):
    # The corner-up cube's top vertex under a slab's bottom face (outward −z, so the normal is +z).
    r_a = np.array([0.1, 0.2, 0.0])
    v = r_a + [0.0, 0.0, 0.4 * SQRT3]
    r_b = np.array([-0.3, 0.4, v[2] + gap + 0.2])
    return Case(
        (Box([0.4, 0.4, 0.4]), r_a, Q_CORNER_UP, Box([2.0, 2.0, 0.2]), r_b, IDENTITY),
        [on_face(v, 0.0, -EZ, r_b - [0, 0, 0.2], "b")],
        margin_for(gap),
    )


def tilted_box_sunk_into_box(depth):
    # B (half sides 0.1, 0.08, 0.05), yawed 0.5 and tilted 3° about a horizontal axis, sunk by `depth` (its
    # deepest corner) into the top face z = 0.1 of A, wide enough to hold B's footprint: A's top face is the
    # axis of least overlap, B's bottom the incident face, and each of its four corners is a contact under
    # A's face at its own depth (the overlap is a patch, not its deepest corner).
    q_b = quaternion_product(axis_angle([1.0, 0.4, 0.0], np.radians(3.0)), axis_angle(EZ, 0.5))
    corners = [rotation_matrix(q_b) @ [sx * 0.1, sy * 0.08, -0.05] for sx in (-1, 1) for sy in (-1, 1)]
    r_b = np.array([0.05, -0.03, 0.1 - depth - min(c[2] for c in corners)])
    corners = [r_b + c for c in corners]
    assert max(c[2] for c in corners) < 0.1  # every corner of the incident face under A's face
    return Case(
        (Box([0.3, 0.3, 0.1]), np.zeros(3), IDENTITY, Box([0.1, 0.08, 0.05]), r_b, q_b),
        [on_face(c, 0.0, EZ, np.array([0, 0, 0.1]), "a") for c in corners],
        margin_for(-depth),
    )


def round_ellipsoid_sphere(gap):
    # An ellipsoid with P = I/0.4² is a sphere: no rule, so DISTANCE, whose value here has a closed form.
    c_a, u = np.array([0.3, -0.1, 0.2]), np.array([1.0, 2.0, 2.0]) / 3
    c_b = c_a + (0.7 + gap) * u
    point = ((c_a + 0.4 * u) + (c_b - 0.3 * u)) / 2
    return Case(
        (Ellipsoid(np.eye(3) / 0.16), c_a, Q_ANY, Sphere(0.3), c_b, IDENTITY),
        [Expected(point, u, gap, Rule.DISTANCE)],
        margin_for(gap),
        atol=1e-6,
    )


CASES = {
    "sphere-sphere apart": lambda: sphere_sphere(0.2),
    "sphere-sphere penetrating": lambda: sphere_sphere(-0.2),
    "sphere on box face apart": lambda: sphere_on_box_face(0.1),
    "sphere on box face penetrating": lambda: sphere_on_box_face(-0.1),
    "sphere beside rotated box apart": lambda: sphere_beside_rotated_box(0.08),
    "sphere beside rotated box penetrating": lambda: sphere_beside_rotated_box(-0.05),
    "sphere over box edge apart": lambda: sphere_over_box_edge(0.15),
    "sphere over box edge penetrating": lambda: sphere_over_box_edge(-0.1),
    "sphere over box corner apart": lambda: sphere_over_box_corner(0.12),
    "sphere over box corner penetrating": lambda: sphere_over_box_corner(-0.08),
    "capsule side-sphere apart": lambda: capsule_side_sphere(0.2),
    "capsule side-sphere penetrating": lambda: capsule_side_sphere(-0.1),
    "capsule cap-sphere apart": lambda: capsule_cap_sphere(0.1),
    "capsule cap-sphere penetrating": lambda: capsule_cap_sphere(-0.1),
    "capsule cap-cap apart": lambda: capsule_cap_cap(0.15),
    "capsule cap-cap penetrating": lambda: capsule_cap_cap(-0.1),
    "capsules crossing apart": lambda: capsules_crossing(0.15),
    "capsules crossing penetrating": lambda: capsules_crossing(-0.1),
    "capsules parallel apart": lambda: capsules_parallel(0.6),
    "capsules parallel penetrating": lambda: capsules_parallel(0.4),
    "box vertex-capsule side apart": lambda: box_vertex_capsule_side(np.array([0.1, -0.05, 0.35])),
    "box vertex-capsule side penetrating": lambda: box_vertex_capsule_side(np.array([0.03, -0.02, 0.12])),
    "box edge-capsule apart": lambda: box_edge_capsule(0.1),
    "box edge-capsule penetrating": lambda: box_edge_capsule(-0.05),
    "capsule on box face apart": lambda: capsule_on_box_face(0.05),
    "capsule on box face penetrating": lambda: capsule_on_box_face(-0.03),
    "cylinder standing on box face apart": lambda: cylinder_standing_on_box_face(0.04),
    "cylinder standing on box face penetrating": lambda: cylinder_standing_on_box_face(-0.02),
    "cylinder leaning on box face apart": lambda: cylinder_leaning_on_box_face(0.01),
    "cylinder leaning on box face penetrating": lambda: cylinder_leaning_on_box_face(-0.01),
    "cylinder lying on box face apart": lambda: cylinder_lying_on_box_face(0.05),
    "cylinder lying on box face penetrating": lambda: cylinder_lying_on_box_face(-0.03),
    "cylinders crossing apart": lambda: capsules_crossing(0.15, Cylinder),
    "cylinders crossing penetrating": lambda: capsules_crossing(-0.1, Cylinder),
    "cone base on box face apart": lambda: cone_base_on_box_face(0.03),
    "cone base on box face penetrating": lambda: cone_base_on_box_face(-0.02),
    "capsule axes crossing": capsule_axes_crossing,
    "box on slab apart": lambda: box_on_slab(0.0, 0.05),
    "box on slab rotated penetrating": lambda: box_on_slab(0.3, -0.01),
    "boxes stacked touching": lambda: boxes_stacked(0.0),
    "boxes stacked apart": lambda: boxes_stacked(0.02),
    "plus sign apart": lambda: plus_sign(0.03),
    "plus sign penetrating": lambda: plus_sign(-0.01),
    "box edges crossed 90 apart": lambda: box_edges_crossed(np.pi / 2, 0.1),
    "box edges crossed 90 penetrating": lambda: box_edges_crossed(np.pi / 2, -0.04),
    "box edges crossed 65 apart": lambda: box_edges_crossed(np.radians(65), 0.07),
    "tetrahedron tip on box apart": lambda: tetrahedron_tip_on_box(0.06),
    "tetrahedron tip on box penetrating": lambda: tetrahedron_tip_on_box(-0.02),
    "box corner under slab apart": lambda: box_corner_under_slab(0.04),
    "box corner under slab penetrating": lambda: box_corner_under_slab(-0.03),
    "tilted box sunk 1.5 cm into a box": lambda: tilted_box_sunk_into_box(0.015),
    "tilted box sunk 3 cm into a box": lambda: tilted_box_sunk_into_box(0.03),
    "round ellipsoid-sphere apart": lambda: round_ellipsoid_sphere(0.1),
    "round ellipsoid-sphere penetrating": lambda: round_ellipsoid_sphere(-0.1),
}


# --------------------------------------------------------------------------------------------------
# Moving and swapping configurations; comparing contact sets
# --------------------------------------------------------------------------------------------------

Q_MOTION, T_MOTION = unit([0.8, 0.3, -0.4, 0.35]), np.array([0.7, -1.1, 0.4])


def moved(case, q_motion=Q_MOTION, t=T_MOTION, scale=1.7):
    """The case after one rigid motion (R, t) of both bodies: points and normals move with the world,
    separations and rules do not; tangents are recomputed from the moved normal (they are a function
    of it, not equivariant). The quaternions come out with norm ``scale``: the API normalizes them."""
    R = rotation_matrix(q_motion)
    a, r_a, q_a, b, r_b, q_b = case.config
    config = (
        a,
        R @ r_a + t,
        scale * quaternion_product(q_motion, q_a),
        b,
        R @ r_b + t,
        scale * quaternion_product(q_motion, q_b),
    )

    def move(e):
        return Expected(R @ e.point + t, R @ e.normal, e.separation, e.rule)

    expected = [tuple(map(move, alternatives(entry))) for entry in case.expected]
    return case._replace(config=config, expected=expected)


def swapped(case):
    """The case with bodies a and b exchanged: same points and separations, opposite normals, mirrored rules."""
    a, r_a, q_a, b, r_b, q_b = case.config

    def swap(e):
        return Expected(e.point, -e.normal, e.separation, SWAPPED_RULE.get(e.rule, e.rule))

    expected = [tuple(map(swap, alternatives(entry))) for entry in case.expected]
    return case._replace(config=(b, r_b, q_b, a, r_a, q_a), expected=expected)


def variant(case, how):
    if how == "hand frame":  # readable: every normal here is away from −z, where the frame is singular
        return case
    if how == "moved":
        return moved(case)
    return swapped(moved(case))  # after the motion no normal is ±z, so the swapped frames are defined


def alternatives(entry):
    """An entry of Case.expected as a tuple of acceptable Expected contacts."""
    return (entry,) if isinstance(entry, Expected) else tuple(entry)


def nearest(points, target):
    return int(np.argmin(np.linalg.norm(points - target, axis=1)))


def assert_frames(result):
    """Unit normals; (tangent1, tangent2, normal) right-handed orthonormal and as the spec's formula."""
    K = len(result)
    for key in ("point", "normal", "tangent1", "tangent2"):
        assert getattr(result, key).shape == (K, 3), key
    assert result.separation.shape == result.rule.shape == (K,)
    assert result.rule.dtype == np.int8
    for n, t1, t2 in zip(result.normal, result.tangent1, result.tangent2):
        frame = np.column_stack([t1, t2, n])
        np.testing.assert_allclose(frame.T @ frame, np.eye(3), rtol=0, atol=1e-12)
        assert np.linalg.det(frame) == pytest.approx(1.0, abs=1e-12)
        expected_t1, expected_t2 = contact_frame(n)
        # 1e-10: the formula divides by 1 + n_z, which amplifies rounding for normals near −z.
        np.testing.assert_allclose(t1, expected_t1, rtol=0, atol=1e-10)
        np.testing.assert_allclose(t2, expected_t2, rtol=0, atol=1e-10)


def assert_contacts(result, expected, atol=1e-9):
    """The contact set holds exactly the expected contacts, matched by nearest point (order is free)."""
    assert len(result) == len(expected), (len(result), [Rule(r).name for r in result.rule])
    assert_frames(result)
    matched = set()
    for entry in expected:
        group = alternatives(entry)
        i = nearest(result.point, group[0].point)
        assert i not in matched, "two expected contacts matched the same contact"
        matched.add(i)
        candidates = [e for e in group if e.rule == result.rule[i]]
        assert candidates, f"rule {Rule(result.rule[i]).name}, expected {[e.rule.name for e in group]}"
        e = min(candidates, key=lambda c: np.linalg.norm(result.normal[i] - c.normal))  # either sign, if both are
        np.testing.assert_allclose(result.point[i], e.point, rtol=0, atol=atol)
        np.testing.assert_allclose(result.normal[i], e.normal, rtol=0, atol=atol)
        assert result.separation[i] == pytest.approx(e.separation, abs=atol)
        t1, t2 = contact_frame(e.normal)
        np.testing.assert_allclose(result.tangent1[i], t1, rtol=0, atol=atol)
        np.testing.assert_allclose(result.tangent2[i], t2, rtol=0, atol=atol)


# --------------------------------------------------------------------------------------------------
# 1. Every rule in closed form; 3. frames
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["hand frame", "moved", "swapped"])
@pytest.mark.parametrize("name", list(CASES))
def test_rule_matches_its_closed_form(name, how):
    case = variant(CASES[name](), how)
    assert_contacts(contacts(*case.config, margin=case.margin), case.expected, case.atol)


@pytest.mark.parametrize(
    "kinds, regimes",
    [
        # Ellipsoids are smooth: one contact wherever they touch.
        (("ellipsoid", "sphere"), ("separated", "penetrating")),
        (("cylinder", "ellipsoid"), ("separated", "penetrating")),
        (("polytope", "ellipsoid"), ("separated", "penetrating")),
        # A cylinder's or a cone's rim point or apex nearest: no cap or side line faces the other shape.
        # (Deep random overlaps may put a side line or a cap on a face: the cases above cover those.)
        (("cylinder", "polytope"), ("separated",)),
        (("cone", "capsule"), ("separated",)),
        (("polytope", "cone"), ("separated",)),
    ],
)
def test_smooth_or_generic_contacts_give_one_distance_contact(kinds, regimes):
    # The DISTANCE rule is defined through signed_distance: normal, separation, midpoint of the witnesses.
    for regime in regimes:
        rng = np.random.default_rng(31)
        config = random_configuration(*kinds, rng, regime, offsets=True)
        reference = signed_distance(*config)
        margin = max(float(reference.distance), 0.0) + 0.1
        expected = [Expected((reference.p_a + reference.p_b) / 2, reference.normal, reference.distance, Rule.DISTANCE)]
        assert_contacts(contacts(*config, margin=margin), expected, atol=1e-6)


def test_frames_over_random_directions():
    # Sphere pairs in many directions, and along the axes (+z must give tangents x and y).
    rng = np.random.default_rng(5)
    directions = np.vstack([rng.normal(size=(40, 3)), np.eye(3), [[-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]]])
    for direction in directions:
        u = unit(direction)
        result = contacts(Sphere(0.4), np.zeros(3), IDENTITY, Sphere(0.5), 0.8 * u, IDENTITY)
        assert len(result) == 1
        np.testing.assert_allclose(result.normal[0], u, rtol=0, atol=1e-12)
        assert_frames(result)
        if u[2] == 1.0:
            np.testing.assert_allclose(np.r_[result.tangent1[0], result.tangent2[0]], np.r_[EX, EY], rtol=0, atol=1e-15)


# --------------------------------------------------------------------------------------------------
# 2. margin
# --------------------------------------------------------------------------------------------------


def test_margin_selects_contacts_by_separation():
    for case in (sphere_sphere(0.1), box_on_slab(0.3, 0.1), round_ellipsoid_sphere(0.1)):
        assert len(contacts(*case.config)) == 0  # the default margin 0 keeps only touching contacts
        empty = contacts(*case.config, margin=0.05)
        assert len(empty) == 0
        assert empty.point.shape == (0, 3) and empty.separation.shape == (0,)
        assert_contacts(contacts(*case.config, margin=0.2), case.expected, case.atol)


# --------------------------------------------------------------------------------------------------
# 4. Derivatives: central differences over the 12 rigid columns, and Nimble's §V structure
# --------------------------------------------------------------------------------------------------


def perturbed(config, column, step):
    """The configuration after a rigid perturbation along one of the 12 columns [δp_a, δθ_a, δp_b, δθ_b]:
    r ← r + step e_k, or Q ← exp(step [e_k]×) Q (world frame, about the body origin)."""
    a, r_a, q_a, b, r_b, q_b = config
    poses = [
        [np.asarray(r_a, dtype=float), np.asarray(q_a, dtype=float)],
        [np.asarray(r_b, dtype=float), np.asarray(q_b, dtype=float)],
    ]
    body, k = divmod(column, 6)
    if k < 3:
        poses[body][0] = poses[body][0] + step * np.eye(3)[k]
    else:
        poses[body][1] = quaternion_product(axis_angle(np.eye(3)[k - 3], step), poses[body][1])
    return a, *poses[0], b, *poses[1]


def central_differences(config, base, margin, step=1e-6, settings=None):
    """Central differences {field: (K, 3, 12) or (K, 12)} of every contact of ``base``, each followed
    into the perturbed sets by nearest point (and required to keep its rule)."""
    columns = {field: [] for field in FIELDS}
    for column in range(12):
        sides = []
        for sign in (1.0, -1.0):
            result = contacts(*perturbed(config, column, sign * step), margin=margin, settings=settings)
            assert len(result) == len(base), (column, sign)
            order = [nearest(result.point, p) for p in base.point]
            assert len(set(order)) == len(order)
            np.testing.assert_array_equal(result.rule[order], base.rule)
            sides.append({field: getattr(result, field)[order] for field in FIELDS})
        for field in FIELDS:
            columns[field].append((sides[0][field] - sides[1][field]) / (2 * step))
    return {field: np.stack(values, axis=-1) for field, values in columns.items()}


def relative_error(value, reference):
    return np.max(np.abs(value - reference)) / max(np.max(np.abs(reference)), 1e-9)


SMOOTH_CASES = [name for name in CASES if CASES[name]().smooth]


def generic_instance(name):
    """The hand configuration after a random rigid motion (and, for every other case, with a and b
    swapped), so that no derivative vanishes by axis alignment alone. Normals are kept away from −z,
    where the frame's 1/(1 + n_z) would cost the tangents' central differences their digits."""
    index = list(CASES).index(name)
    rng = np.random.default_rng(1000 + index)
    while True:
        case = moved(CASES[name](), unit(random_quaternion(rng)), rng.normal(size=3), scale=1.0)
        case = swapped(case) if index % 2 else case
        if all(e.normal[2] > -0.7 for entry in case.expected for e in alternatives(entry)):
            return case


@pytest.mark.parametrize("name", SMOOTH_CASES)
def test_derivatives_match_central_differences(name):
    case = generic_instance(name)
    result = contacts(*case.config, margin=case.margin, derivatives=True)
    assert_contacts(result, case.expected, case.atol)
    K = len(result)
    for field in FIELDS[:4]:
        assert getattr(result, "d_" + field).shape == (K, 3, 12), field
    assert result.d_separation.shape == (K, 12)
    if result.rule[0] == Rule.DISTANCE:
        # Solver-based: central differences of tightly solved values against the barrier-smoothed
        # derivatives (which match to ~2e-5 relative, see dcol.geom.DISTANCE_SETTINGS).
        reference, tolerance = central_differences(case.config, result, case.margin, settings=TIGHT), 1e-4
    else:
        # Closed-form rules: the values are exact, so central differences are good to ~1e-9.
        reference, tolerance = central_differences(case.config, result, case.margin), 1e-5
    for field in FIELDS:
        assert relative_error(getattr(result, "d_" + field), reference[field]) <= tolerance, field


def test_face_contact_normal_depends_only_on_the_face_body_rotation():
    # Nimble §V / App. C: in a vertex–face contact the face's body sets the normal and the vertex's
    # body the point. Slab a (face), box b (vertices): closed forms of every rigid column.
    case = box_on_slab(0.3, -0.01)
    _, r_a, _, _, r_b, _ = case.config
    result = contacts(*case.config, margin=case.margin, derivatives=True)
    assert len(result) == 4 and np.all(result.rule == Rule.FACE_POINT)
    zero = np.zeros((3, 3))
    for i in range(4):
        n, p = result.normal[i], result.point[i]
        d_normal, d_point, d_separation = result.d_normal[i], result.d_point[i], result.d_separation[i]
        # The normal: a's face normal, turned by δθ_a (δn = δθ_a × n), blind to everything else.
        for block, value in ((slice(0, 3), zero), (slice(3, 6), -skew(n)), (slice(6, 9), zero), (slice(9, 12), zero)):
            np.testing.assert_allclose(d_normal[:, block], value, rtol=0, atol=1e-12)
        assert np.linalg.norm(d_normal[:, 3:6]) > 1.0
        # The point: b's vertex, carried by b's motion (δp = δp_b + δθ_b × (p − r_b)).
        for block, value in ((slice(0, 6), np.zeros((3, 6))), (slice(6, 9), np.eye(3)), (slice(9, 12), -skew(p - r_b))):
            np.testing.assert_allclose(d_point[:, block], value, rtol=0, atol=1e-12)
        # The separation n·(p − x_face): δ = −n·δp_a + (n × (p − r_a))·δθ_a + n·δp_b + ((p − r_b) × n)·δθ_b.
        expected = np.r_[-n, np.cross(n, p - r_a), n, np.cross(p - r_b, n)]
        np.testing.assert_allclose(d_separation, expected, rtol=0, atol=1e-12)


def test_sphere_sphere_normal_turns_with_translation():
    # The contrast to the face contact: n = (c_b − c_a)/d moves with either centre, δn = (I − n nᵀ) δc / d;
    # rotations of the spheres move nothing; the point is the ρ-weighted mix of the centres.
    case = sphere_sphere(-0.2)
    _, c_a, _, _, c_b, _ = case.config
    result = contacts(*case.config, derivatives=True)
    assert len(result) == 1
    d = np.linalg.norm(c_b - c_a)
    n = (c_b - c_a) / d
    projector = (np.eye(3) - np.outer(n, n)) / d
    zero = np.zeros((3, 3))
    expected_normal = np.hstack([-projector, zero, projector, zero])
    expected_point = np.hstack([0.3 / 0.8 * np.eye(3), zero, 0.5 / 0.8 * np.eye(3), zero])
    np.testing.assert_allclose(result.d_normal[0], expected_normal, rtol=0, atol=1e-12)
    assert np.linalg.norm(result.d_normal[0][:, 6:9]) > 1.0
    np.testing.assert_allclose(result.d_point[0], expected_point, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.d_separation[0], np.r_[-n, 0, 0, 0, n, 0, 0, 0], rtol=0, atol=1e-12)


# --------------------------------------------------------------------------------------------------
# 5. Stability of the witness-hull manifold
# --------------------------------------------------------------------------------------------------


def test_box_on_slab_manifold_is_stable_under_tiny_perturbations():
    # Far inside the feature tolerance the manifold must not flicker: same 4 corners, moved ~1e-9.
    case = box_on_slab(0.3, -0.01)
    a, r_a, q_a, b, r_b, q_b = case.config
    base = contacts(*case.config, margin=case.margin)
    assert_contacts(base, case.expected)
    rng = np.random.default_rng(17)
    for _ in range(25):
        jolt = [quaternion_product(np.r_[1.0, 0.5e-9 * rng.normal(size=3)], q) for q in (q_a, q_b)]
        result = contacts(
            a, r_a + 1e-9 * rng.normal(size=3), jolt[0], b, r_b + 1e-9 * rng.normal(size=3), jolt[1], margin=case.margin
        )
        assert len(result) == 4
        assert np.all(result.rule == Rule.FACE_POINT)
        for p in base.point:
            assert np.linalg.norm(result.point[nearest(result.point, p)] - p) <= 1e-8


# --------------------------------------------------------------------------------------------------
# 6. Meshes
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("gap", [0.03, -0.005])
def test_convex_mesh_cube_on_slab_touches_at_its_bottom_corners(gap):
    # trimesh's box is centred on its frame, which is the ConvexMesh's body frame.
    half = np.array([0.3, 0.2, 0.15])
    cube = ConvexMesh.from_mesh(trimesh.creation.box(extents=2 * half))
    q_b = axis_angle(EZ, -0.5)
    R = rotation_matrix(q_b)
    r_b = np.array([0.4, -0.2, 0.1 + half[2] + gap])
    corners = [r_b + R @ [sx * half[0], sy * half[1], -half[2]] for sx in (-1, 1) for sy in (-1, 1)]
    expected = [on_face(c, 0.0, EZ, np.array([0, 0, 0.1]), "a") for c in corners]
    result = contacts(Box([2.0, 2.0, 0.1]), np.zeros(3), IDENTITY, cube, r_b, q_b, margin=margin_for(gap))
    assert_contacts(result, expected)


def test_convex_mesh_icosphere_touches_at_its_lowest_vertex():
    mesh = trimesh.creation.icosphere(subdivisions=1, radius=0.5)
    q_b = axis_angle([0.2, 0.1, 0.9], 0.3)
    heights = (rotation_matrix(q_b) @ mesh.vertices.T)[2]
    lowest = np.argsort(heights)
    # One vertex clearly lowest, the next beyond the margin too: a single contact whatever the tolerance.
    assert heights[lowest[1]] - heights[lowest[0]] > 0.05
    r_b = np.array([-0.2, 0.3, 0.1 + 0.04 - heights[lowest[0]]])  # 0.04 above the slab's top z = 0.1
    tip = r_b + rotation_matrix(q_b) @ mesh.vertices[lowest[0]]
    result = contacts(Box([2.0, 2.0, 0.1]), np.zeros(3), IDENTITY, ConvexMesh.from_mesh(mesh), r_b, q_b, margin=0.06)
    assert_contacts(result, [on_face(tip, 0.0, EZ, np.array([0, 0, 0.1]), "a")])


# --------------------------------------------------------------------------------------------------
# 7. Bad input
# --------------------------------------------------------------------------------------------------


def test_bad_arguments_are_refused():
    box, sphere = Box([1.0, 1.0, 1.0]), Sphere(0.5)
    good = {"r_a": np.zeros(3), "q_a": IDENTITY, "r_b": np.array([0.0, 0.0, 1.4]), "q_b": IDENTITY}

    def call(margin=0.0, feature_tolerance=1e-3, **pose):
        p = {**good, **pose}
        return contacts(
            box, p["r_a"], p["q_a"], sphere, p["r_b"], p["q_b"], margin=margin, feature_tolerance=feature_tolerance
        )

    assert len(call(margin=0.0, feature_tolerance=0.1)) == 1  # the upper end of (0, 0.1] is allowed
    for name, bad in (
        ("r_a", [np.nan, 0, 0]),
        ("q_a", [1.0, 0, np.inf, 0]),
        ("r_b", [0, np.inf, 1.4]),
        ("q_b", [np.nan, 0, 0, 1.0]),
    ):
        with pytest.raises(ValueError, match=name):
            call(**{name: np.array(bad, dtype=float)})
    for margin in (-0.1, np.nan, np.inf):
        with pytest.raises(ValueError, match="margin"):
            call(margin=margin)
    for tolerance in (0.0, -1e-3, 0.2, np.nan):
        with pytest.raises(ValueError, match="feature_tolerance"):
            call(feature_tolerance=tolerance)


def test_nearly_flush_stacked_boxes_give_a_face_manifold():
    """A cube resting on another, offset 5 cm along x and tilted 4e-4 rad (a state from a simulated
    pile): the contacts lie on the overlap's edges with normals along z and separations of a fraction
    of a millimetre. (This once gave two point–edge contacts with sideways normals and 15 cm of
    penetration: parallel top and bottom edges side by side were taken as overlapping.)"""
    cube = Box([0.1, 0.1, 0.1])
    r_a, q_a = [-7.11e-06, -1.46e-07, 0.1], [1.0, -1.47e-10, -2.52e-11, -7.32e-07]
    r_b, q_b = [0.0498694, -7.05e-07, 0.2999798], [0.9999999794, -3.95e-09, -2.0196e-04, 1.8566e-05]
    found = contacts(cube, r_a, q_a, cube, r_b, q_b, margin=1e-2)
    assert len(found) >= 2
    assert np.all(np.abs(found.normal[:, 2]) > 0.999)
    assert np.all(np.abs(found.separation) < 1e-3)


def test_box_edge_nearly_parallel_to_a_cylinder_gives_contacts_on_both():
    """A box 3.6 mm below a cylinder lying on it, the box's edge along y within 0.1° of the cylinder's
    axis (a state of a simulated column under the contact NCP at 5 ms, found by a random search over
    the stacks-and-piles fuzz property): the two segments cross in the witness plane but their lines in
    space come closest
    far outside them. This gave one contact 20.6 mm deep at (−14.5, −24.9, 17.0) m, from the edge–edge
    rule's closest points of the lines, and the column's pair read 2 cm sunk for a step. Now the
    segments are taken as parallel: the contacts lie on both shapes, the smallest separation is coal's
    distance."""
    box = Box([0.08344035100954128, 0.04879583254623217, 0.09254750230827201])
    cylinder = Cylinder(0.16152186078972816, 0.18979050523421395)
    r_box = np.array([-0.007117716042171739, -0.19543488528782357, 1.088607913511247])
    q_box = np.array([0.8798355427739024, -0.16047029594558315, 0.32200280782310226, -0.31056866156283])
    r_cylinder = np.array([0.06952729545137531, -0.07077886223210078, 1.3346992307711465])
    q_cylinder = np.array([0.8080326833942013, -0.26076036999373003, 0.1325480927484941, 0.5113885168013025])
    found = contacts(box, r_box, q_box, cylinder, r_cylinder, q_cylinder, margin=1e-2)
    coal_value = coal_distance(box, r_box, q_box, cylinder, r_cylinder, q_cylinder)[0]
    assert found.separation.min() == pytest.approx(coal_value, abs=1e-5)
    assert np.all(found.separation <= 1e-2)
    # Every contact point lies within both shapes' bounding spheres.
    for shape, centre in ((box, r_box), (cylinder, r_cylinder)):
        assert np.all(np.linalg.norm(found.point - centre, axis=1) <= bounding_radii(shape)[1] + 1e-2)


@pytest.mark.parametrize("kind", ["polytope", "capsule", "sphere", "polygon", "box", "mesh"])
def test_shapes_on_a_box_face_agree_with_the_signed_distance(kind):
    """Shapes resting on, hovering over and sunk slightly into a box face, where the contacts take the
    witness normal from the box's face (its separating axis) instead of the cone program: the normal
    of every contact and the smallest separation against dcol.geom.signed_distance, which solves the
    cone programs (DCOL's normal when they overlap). The box is turned, and is a on half of the cases."""
    from tests.support.shapes import random_quaternion, random_shape

    rng = np.random.default_rng(11)
    for trial in range(40):
        if kind == "box":
            shape = Box(rng.uniform(0.05, 0.2, 3))
        elif kind == "mesh":
            shape = ConvexMesh.from_mesh(trimesh.creation.icosphere(subdivisions=1, radius=rng.uniform(0.05, 0.2)))
        else:
            shape = random_shape(kind, rng)
        slab = Box([10.0, 8.0, rng.uniform(0.1, 0.3)])  # wide enough for any random shape over it
        q_slab = random_quaternion(rng)
        R = rotation_matrix(q_slab)
        q_shape = random_quaternion(rng)
        # Placed over the slab's top face (its +z side), then moved along the face normal to the wanted gap.
        r_shape = R @ [rng.uniform(-0.5, 0.5), rng.uniform(-0.4, 0.4), 0.0] + R[:, 2] * 12.0
        gap = [0.004, 0.0, -0.003][trial % 3]
        r_shape = r_shape - R[:, 2] * (
            signed_distance(shape, r_shape, q_shape, slab, np.zeros(3), q_slab).distance - gap
        )
        pair = (shape, r_shape, q_shape, slab, np.zeros(3), q_slab)
        if trial % 2:
            pair = pair[3:] + pair[:3]
        reference = signed_distance(*pair)
        result = contacts(*pair, margin=0.01)
        assert len(result) >= 1, trial
        np.testing.assert_allclose(result.normal, np.tile(reference.normal, (len(result), 1)), atol=1e-6)
        assert result.separation.min() == pytest.approx(reference.distance, abs=1e-6), trial


@pytest.mark.parametrize("gap", [0.0, 0.0005, -0.0005])
def test_flush_boxes_shifted_along_a_side_touch_at_four_corners(gap):
    """A cube on an equal cube shifted 1 mm along x: the bottom cube's top corners at x = 0.1 lie on the
    upper cube's face, the upper cube's bottom corners at x = −0.099 on the lower's face, and all four
    sit on the faces' common sides (y = ±0.1). Four contacts, two of each kind (closed form); two would
    leave the upper cube balanced on a line."""
    top = 0.2
    upper = np.array([0.001, 0.0, top + 0.1 + gap])
    result = contacts(Box([0.1] * 3), [0.0, 0.0, 0.1], IDENTITY, Box([0.1] * 3), upper, IDENTITY, margin=0.01)
    lower_face, upper_face = np.array([0.0, 0.0, top]), np.array([0.0, 0.0, top + gap])
    expected = [on_face([0.1, y, top], 0.0, -EZ, upper_face, "b") for y in (-0.1, 0.1)]
    expected += [on_face([-0.099, y, top + gap], 0.0, EZ, lower_face, "a") for y in (-0.1, 0.1)]
    assert_contacts(result, expected)


@pytest.mark.parametrize("distance", [1e9, 1e155, 1e300])
def test_shapes_far_apart_have_no_contacts_at_any_distance(distance):
    """Every pair of kinds with centres 10⁹–10³⁰⁰ m apart: no contacts, SOLVED (their bounding boxes
    are apart; the solve's squared distances overflowed beyond 10¹⁵⁴ and gave a fake overlap)."""
    shapes = [Sphere(1.0), Box([1.0, 0.5, 0.7]), Capsule(0.3, 1.0), Ellipsoid(np.diag([1.0, 4.0, 9.0]))]
    identity = [1.0, 0.0, 0.0, 0.0]
    for a in shapes:
        for b in shapes:
            found = contacts(a, np.zeros(3), identity, b, [distance, distance, 0.0], identity, margin=1.0)
            assert len(found) == 0 and found.status == Status.SOLVED, (type(a).__name__, type(b).__name__)


def test_contacts_carry_the_status_of_their_solve():
    """A touching pair reports its solve's SOLVED with its contact (a sphere of radius 1 resting on a
    box's top face: separation 0 at the top face's centre, closed form)."""
    found = contacts(Sphere(1.0), [0.0, 0.0, 2.0], [1, 0, 0, 0], Box([1.0, 1.0, 1.0]), np.zeros(3), [1, 0, 0, 0])
    assert found.status == Status.SOLVED and len(found) == 1
    np.testing.assert_allclose(found.separation, [0.0], atol=1e-7)
    np.testing.assert_allclose(found.point[0, 2], 1.0, atol=1e-7)
