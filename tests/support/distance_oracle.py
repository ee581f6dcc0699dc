"""Independent oracles for the exact Euclidean distance, witness points and penetration of two convex shapes.

Sources that share no code with dcol and little with each other:

- ``euclidean_distance``: ``min ‖p_a − p_b‖`` over p_a ∈ a, p_b ∈ b as a cone program in cvxpy, solved by
  Clarabel at tight tolerances, with tests/support/oracle.py's membership constraints (the constraints of
  DCOL §III-B with the scaling α fixed to 1). Overlapping shapes give 0: it cannot see penetration.
- ``signed_distance``: the signed distance is ``max over unit n of separation(n)``, the gap between the
  shapes' supporting planes of normal n (closed-form support functions), for separated and penetrating
  shapes alike; found by a direction search and checked against ``euclidean_distance``.
- ``coal_distance``: the coal library (GJK; EPA or a pair-specific routine under penetration) on the shapes
  rebuilt by ``coal_geometry``. Trustworthy for separated shapes; under penetration see its docstring.
- ``closed_form_distance``: sphere–sphere, sphere–capsule, capsule–capsule (segment–segment closest
  points), box–sphere and cylinder–sphere (point–box, point–cylinder), signed.

Conventions (coal's as well, verified in tests/geom/test_distance_oracle.py): a signed distance is negative
under penetration (penetration depth = −distance); the normal n is a unit vector pointing from a to b; the
witness points satisfy ``p_b − p_a = distance · n`` (under penetration p_a is the point of a deepest inside
b and p_b the point of b deepest inside a). Poses are (r (3,), q (4,) [w, x, y, z] or (3, 3)) of the bodies;
a shape's frame is its body pose composed with its offset, as in tests/support/oracle.py.

Accuracy: distances to about 1e-10 (absolute) from cvxpy, the closed forms and the search, and from coal
for separated shapes. Witness points on curved surfaces only to about 1e-6 (coal) and 1e-5 (cvxpy): both
stop at a gap of ~1e-11 in the distance (or its square), which grows only quadratically as a point slides
along the surface. The closed forms give exact points. To test witness points beyond that, check that they
lie in the shapes (``oracle.gauge`` ≤ 1) and are the oracle's distance apart, as the tests do for coal's.

Only the shapes' public attributes are read, as in tests/support/oracle.py; nothing of dcol is imported.
"""

import functools

import numpy as np
from scipy.optimize import minimize
from scipy.spatial import ConvexHull

from tests.support.optional import oracle
from tests.support.oracle import face_count, membership, shape_frame, shape_kind, solve, support, vertices

cp, coal = oracle("cvxpy"), oracle("coal")

# --- cvxpy ---------------------------------------------------------------------------------------------------


@functools.cache
def _distance_problem(kind_a, faces_a, kind_b, faces_b):
    p_a, p_b = cp.Variable(3), cp.Variable(3)
    constraints_a, load_a = membership(kind_a, faces_a, p_a, 1.0)
    constraints_b, load_b = membership(kind_b, faces_b, p_b, 1.0)
    problem = cp.Problem(cp.Minimize(cp.norm(p_a - p_b)), constraints_a + constraints_b)
    assert problem.is_dcp(dpp=True)
    return problem, p_a, p_b, load_a, load_b


def euclidean_distance(a, r_a, q_a, b, r_b, q_b):
    """Euclidean distance between shapes a and b at body poses (r (3,), q (4,) [w, x, y, z] or (3, 3)).

    Returns (distance: float ≥ 0, p_a: (3,) float64, p_b: (3,) float64): a closest pair of points in the
    world, p_a in a and p_b in b. Overlapping shapes give distance 0 and some common point twice (up to
    the solver's tolerance): this formulation has no notion of penetration depth.
    """
    problem, p_a, p_b, load_a, load_b = _distance_problem(shape_kind(a), face_count(a), shape_kind(b), face_count(b))
    load_a(a, *shape_frame(a, r_a, q_a))
    load_b(b, *shape_frame(b, r_b, q_b))
    solve(problem)
    return float(problem.value), np.array(p_a.value), np.array(p_b.value)


# --- separation and the direction search ---------------------------------------------------------------------


def separation(a, r_a, q_a, b, r_b, q_b, normal):
    """Gap ``min_{y ∈ b} n·y − max_{x ∈ a} n·x = −h_a(n) − h_b(−n)`` between the supporting planes of a and b
    with unit normal n (normal: (3,), any nonzero length, from a to b), from closed-form support functions.

    It is at most the signed distance, with equality at the normal of the closest pair of separated shapes
    and at that of the minimal separating translation of penetrating ones: the signed distance is
    ``max over unit n of separation(n)`` in both cases.
    """
    n = np.asarray(normal, dtype=float) / np.linalg.norm(normal)
    return -support(a, r_a, q_a, n) - support(b, r_b, q_b, -n)


def _fibonacci_sphere(count):
    """(count, 3) nearly uniform unit vectors (spacing about sqrt(4π / count) rad)."""
    i = np.arange(count) + 0.5
    z = 1.0 - 2.0 * i / count
    azimuth = np.pi * (1.0 + np.sqrt(5.0)) * i
    return np.c_[np.sqrt(1.0 - z * z) * np.cos(azimuth), np.sqrt(1.0 - z * z) * np.sin(azimuth), z]


# Search grid and seeds: 1000 directions are ~0.11 rad apart; the 6 best that are mutually 0.3 rad apart
# seed local searches, so that near-equal local maxima (two faces of a box about as deep) are all refined.
_DIRECTIONS = _fibonacci_sphere(1000)
_SEEDS, _SEED_SPREAD = 6, 0.3


def _maximize_near(f, seed):
    """(max, argmax) of f over unit vectors near the unit vector seed: Nelder–Mead in the tangent plane,
    which copes with the kinks the support functions of polytopes have."""
    e1 = np.cross(seed, [1.0, 0.0, 0.0] if abs(seed[0]) < 0.9 else [0.0, 1.0, 0.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(seed, e1)

    def unit(u):
        v = seed + u[0] * e1 + u[1] * e2
        return v / np.linalg.norm(v)

    options = {"xatol": 1e-11, "fatol": 1e-15, "maxiter": 2000, "initial_simplex": [[0, 0], [0.05, 0], [0, 0.05]]}
    result = minimize(lambda u: -f(unit(u)), np.zeros(2), method="Nelder-Mead", options=options)
    return -result.fun, unit(result.x)


def signed_distance(a, r_a, q_a, b, r_b, q_b):
    """Signed distance of shapes a and b (penetrating or not) as the maximum of ``separation`` over directions.

    Returns (distance: float, p_a: (3,), p_b: (3,), normal: (3,) unit, from a to b) in the world.

    A search, not a certificate: the best directions of a 1000-point grid seed local maximizations and the
    best result wins, so a maximum narrower than the grid spacing could be missed. The normal is then
    checked: sliding b along it to a gap of 1 must give a cvxpy distance of 1 (true exactly when the normal
    is that of a closest or deepest pair), and cvxpy's closest pair there gives the witness points (to
    cvxpy's accuracy, ~1e-5). Raises RuntimeError if the check fails.
    """
    f = functools.partial(separation, a, r_a, q_a, b, r_b, q_b)
    values = np.array([f(n) for n in _DIRECTIONS])
    seeds = []
    for i in np.argsort(values)[::-1]:
        if all(_DIRECTIONS[i] @ seed < np.cos(_SEED_SPREAD) for seed in seeds):
            seeds.append(_DIRECTIONS[i])
            if len(seeds) == _SEEDS:
                break
    distance, normal = max((_maximize_near(f, seed) for seed in seeds), key=lambda found: found[0])
    shift = (1.0 - distance) * normal
    gap, p_a, p_b = euclidean_distance(a, r_a, q_a, b, np.asarray(r_b, dtype=float) + shift, q_b)
    if abs(gap - 1.0) > 1e-7:
        raise RuntimeError(f"signed_distance: the direction found is not a contact normal (slid gap {gap} ≠ 1)")
    return float(distance), p_a, p_b - shift, normal


# --- coal ----------------------------------------------------------------------------------------------------

# Coal's capsule, cylinder and cone lie along their z axis, centred; dcol's lie along x. Columns: coal's
# axes in dcol's shape frame (z → x, then x → y and y → z, a proper rotation).
_Z_TO_X = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
# Coal's cone has its base at z = −h/2 and apex at z = +h/2; dcol's apex is at −x: z → −x, x → y, y → −z.
_Z_TO_MINUS_X = np.array([[0.0, 0.0, -1.0], [1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])


def _coal_convex(points, faces):
    """coal.Convex on points (k, 3) with triangles faces (f, 3) of indices into points."""
    coal_points, coal_faces = coal.StdVec_Vec3s(), coal.StdVec_Triangle()
    for point in points:
        coal_points.append(np.array(point, dtype=float))
    for i, j, k in faces:
        coal_faces.append(coal.Triangle(int(i), int(j), int(k)))
    return coal.Convex(coal_points, coal_faces)


def _hull_convex(points):
    """coal.Convex of the convex hull of points (k, 3). This coal build has no qhull (coal.WITH_QHULL is
    False, so no coal.Convex.convexHull): scipy's hull supplies the triangles, turned to face outward."""
    hull = ConvexHull(points)
    faces = hull.simplices.copy()
    for face, plane in zip(faces, hull.equations):
        a, b, c = points[face]
        if np.cross(b - a, c - a) @ plane[:3] < 0:
            face[[1, 2]] = face[[2, 1]]
    # Keep only the hull's vertices: a point no triangle uses would be outside coal's neighbour graph.
    used = np.unique(faces)
    renumber = np.zeros(len(points), dtype=int)
    renumber[used] = np.arange(len(used))
    return _coal_convex(points[used], renumber[faces])


def _flat_polygon_convex(corners):
    """Flat coal.Convex of the convex polygon with corners (k, 2) in the xy-plane, as a fan of triangles."""
    centred = corners - corners.mean(axis=0)
    ordered = corners[np.argsort(np.arctan2(centred[:, 1], centred[:, 0]))]
    return _coal_convex(np.c_[ordered, np.zeros(len(ordered))], [(0, i, i + 1) for i in range(1, len(ordered) - 1)])


def coal_geometry(shape):
    """The shape as a coal collision geometry.

    Returns (geometry, t: (3,) float64, M: (3, 3) float64): a point z of the geometry's frame is at
    ``t + M z`` in dcol's shape frame (the pose of coal's frame in dcol's). Every kind is covered: the padded
    polygon is a flat coal.Convex whose swept-sphere radius is the padding R.
    """
    kind, origin, identity = shape_kind(shape), np.zeros(3), np.eye(3)
    if kind == "polytope":
        if hasattr(shape, "half_extents"):  # a dcol Box; coal.Box takes full side lengths
            return coal.Box(*(2.0 * shape.half_extents)), origin, identity
        return _hull_convex(vertices(shape)), origin, identity
    if kind == "sphere":
        return coal.Sphere(shape.R), origin, identity
    if kind == "capsule":
        return coal.Capsule(shape.R, shape.L), origin, _Z_TO_X  # (radius, full length of the segment)
    if kind == "cylinder":
        return coal.Cylinder(shape.R, shape.L), origin, _Z_TO_X
    if kind == "cone":
        # (base radius, height); coal's centre is halfway between dcol's apex (x = −3H/4) and base (x = H/4).
        return coal.Cone(shape.H * np.tan(shape.beta), shape.H), np.array([-shape.H / 4, 0.0, 0.0]), _Z_TO_MINUS_X
    if kind == "ellipsoid":
        # yᵀ P y ≤ 1 with P = V diag(λ) Vᵀ is the ellipsoid of radii λ^(−1/2) along the columns of V.
        eigenvalues, V = np.linalg.eigh(shape.P)
        V[:, 2] *= np.linalg.det(V)  # a rotation, not a reflection
        return coal.Ellipsoid(*(1.0 / np.sqrt(eigenvalues))), origin, V
    geometry = _flat_polygon_convex(vertices(shape))
    geometry.setSweptSphereRadius(shape.R)
    return geometry, origin, identity


def coal_transform(shape, r, q, t, M):
    origin, Q = shape_frame(shape, r, q)
    return coal.Transform3s(Q @ M, origin + Q @ t)  # (rotation matrix, translation): no quaternion order to get wrong


def _coal_request():
    request = coal.DistanceRequest()
    # Without it, penetrating pairs that coal has no pair-specific routine for give 0 and NaN points.
    request.enable_signed_distance = True
    # GJK stops on an absolute duality gap of the squared distance, so its distance error is about
    # 1e-11 / (2 · distance): 5e-9 at a distance of 1e-3. The Nesterov-accelerated variant because the
    # default one at this tolerance sometimes stopped with points 1e-8 to 1e-7 outside cones and cylinders.
    request.gjk_variant = coal.GJKVariant.NesterovAcceleration
    request.gjk_convergence_criterion = coal.GJKConvergenceCriterion.DualityGap
    request.gjk_convergence_criterion_type = coal.GJKConvergenceCriterionType.Absolute
    request.gjk_tolerance = 1e-11
    request.gjk_max_iterations = 1000
    # EPA keeps coal's defaults (tolerance 1e-6, 64 iterations): tighter settings make it fail more often.
    return request


def coal_distance(a, r_a, q_a, b, r_b, q_b):
    """Signed distance of shapes a and b by coal (3.0.3), in this module's conventions, which are coal's own:
    ``DistanceResult.normal`` points from the first object to the second, ``getNearestPoint2() −
    getNearestPoint1() = min_distance · normal``, and penetration gives a negative ``min_distance``.

    Returns (distance: float, p_a: (3,), p_b: (3,), normal: (3,)) in the world.

    Separated shapes: reliable; distances to ~1e-10 relative at distances of order 1 (GJK's error grows like
    1/distance, see _coal_request), witness points to ~1e-6 on curved surfaces, and exact for sphere–sphere,
    sphere–capsule, capsule–capsule, box–sphere and cylinder–sphere, which coal has routines of its own for.
    Penetrating shapes: reliable only for the first four of these, which the tests check against closed
    forms. Coal's sphere–cylinder routine reports too deep a penetration when the sphere's centre is inside
    the cylinder, and its EPA (every other pair) sometimes fails, raised here as a RuntimeError, or stops at
    a depth that is not the minimal one (errors of order 1 seen with curved shapes). Use
    ``signed_distance`` for penetration.
    """
    geometry_a, t_a, M_a = coal_geometry(a)
    geometry_b, t_b, M_b = coal_geometry(b)
    transform_a = coal_transform(a, r_a, q_a, t_a, M_a)
    transform_b = coal_transform(b, r_b, q_b, t_b, M_b)
    result = coal.DistanceResult()
    distance = coal.distance(geometry_a, transform_a, geometry_b, transform_b, _coal_request(), result)
    p_a, p_b, normal = (np.array(v) for v in (result.getNearestPoint1(), result.getNearestPoint2(), result.normal))
    if not (abs(distance) < 1e300 and np.all(np.isfinite(np.r_[p_a, p_b, normal]))):  # EPA failure: −DBL_MAX
        raise RuntimeError(f"coal_distance: coal failed (distance {distance})")
    return float(distance), p_a, p_b, normal


# --- closed forms --------------------------------------------------------------------------------------------


def segment_closest_points(a0, a1, b0, b1):
    """A closest pair (s (3,), t (3,)) of points on the segments [a0, a1] and [b0, b1] (either may be a point).

    ‖a0 + u (a1 − a0) − b0 − v (b1 − b0)‖² is convex in (u, v) ∈ [0, 1]²: its minimum is the stationary
    point if that lies inside the square, else on an edge, where it is a clamped projection. Comparing all
    these candidates needs no case analysis.
    """
    a0, a1, b0, b1 = (np.asarray(p, dtype=float) for p in (a0, a1, b0, b1))
    da, db = a1 - a0, b1 - b0

    def project(point, start, direction):  # parameter of the segment point nearest to `point`
        length2 = direction @ direction
        return 0.0 if length2 == 0.0 else float(np.clip((point - start) @ direction / length2, 0.0, 1.0))

    candidates = [(u, project(a0 + u * da, b0, db)) for u in (0.0, 1.0)]
    candidates += [(project(b0 + v * db, a0, da), v) for v in (0.0, 1.0)]
    gram = np.array([[da @ da, -da @ db], [-da @ db, db @ db]])
    if np.linalg.det(gram) > 1e-14 * gram[0, 0] * gram[1, 1]:  # not parallel: a single stationary point
        u, v = np.linalg.solve(gram, [da @ (b0 - a0), -db @ (b0 - a0)])
        if 0.0 <= u <= 1.0 and 0.0 <= v <= 1.0:
            candidates.append((u, v))
    pairs = [(a0 + u * da, b0 + v * db) for u, v in candidates]
    return min(pairs, key=lambda pair: np.linalg.norm(pair[0] - pair[1]))


def point_box(point, half_extents):
    """Signed distance from a point (k,) to the box |y_i| ≤ half_extents_i (k,), in the box's frame (any k).

    Returns (distance: float, nearest: (k,), normal: (k,)): distance < 0 inside; nearest is the nearest point
    of the box's surface and normal the unit outward normal there (outside, the direction from nearest to
    the point; inside, the normal of the nearest face, ties going to the first axis).
    """
    point, h = np.asarray(point, dtype=float), np.asarray(half_extents, dtype=float)
    outside = point - np.clip(point, -h, h)
    if np.any(outside != 0.0):
        distance = float(np.linalg.norm(outside))
        return distance, point - outside, outside / distance
    depths = h - np.abs(point)
    axis = int(np.argmin(depths))
    normal = np.zeros_like(point)
    normal[axis] = 1.0 if point[axis] >= 0.0 else -1.0
    nearest = point.copy()
    nearest[axis] = normal[axis] * h[axis]
    return -float(depths[axis]), nearest, normal


def point_cylinder(point, R, L):
    """Signed distance from a point (3,) to dcol's cylinder (radius R along x, faces at x = ±L/2), in its frame.

    Returns (distance, nearest (3,), normal (3,)) as point_box. In the half-plane through the axis and the
    point the cylinder is the rectangle |x| ≤ L/2, |ρ| ≤ R, so this is point_box in (x, ρ).
    """
    x, y, z = np.asarray(point, dtype=float)
    rho = np.hypot(y, z)
    radial = np.array([0.0, y, z]) / rho if rho > 0.0 else np.array([0.0, 1.0, 0.0])  # on the axis any will do
    distance, (nearest_x, nearest_rho), (normal_x, normal_rho) = point_box([x, rho], [L / 2, R])
    axial = np.array([1.0, 0.0, 0.0])
    return distance, nearest_x * axial + nearest_rho * radial, normal_x * axial + normal_rho * radial


def _core_segment(shape, r, q):
    """World end points and radius of a sphere (a point) or capsule (a segment) inflated by its radius."""
    origin, Q = shape_frame(shape, r, q)
    half = Q[:, 0] * shape.L / 2 if shape_kind(shape) == "capsule" else np.zeros(3)
    return origin - half, origin + half, shape.R


def _swept_spheres(a, r_a, q_a, b, r_b, q_b):
    # The Minkowski difference is the cores' one inflated by R_a + R_b, so the signed distance is the cores'
    # distance minus the radii, under penetration too as long as the cores do not meet.
    *core_a, R_a = _core_segment(a, r_a, q_a)
    *core_b, R_b = _core_segment(b, r_b, q_b)
    s, t = segment_closest_points(*core_a, *core_b)
    core_distance = np.linalg.norm(t - s)
    if core_distance == 0.0:
        raise ValueError("closed form: the cores intersect, the normal is not determined")
    normal = (t - s) / core_distance
    return float(core_distance - R_a - R_b), s + R_a * normal, t - R_b * normal, normal


_POINT_DISTANCE = {
    "box": lambda shape, w: point_box(w, shape.half_extents),
    "cylinder": lambda shape, w: point_cylinder(w, shape.R, shape.L),
}


def _sphere_against(shape, r, q, sphere, r_sphere, q_sphere):
    # Likewise the sphere is its centre inflated by R: the centre's signed distance minus R.
    origin, Q = shape_frame(shape, r, q)
    centre = shape_frame(sphere, r_sphere, q_sphere)[0]
    distance, nearest, normal = _POINT_DISTANCE[_closed_form_kind(shape)](shape, Q.T @ (centre - origin))
    normal = Q @ normal
    return distance - sphere.R, origin + Q @ nearest, centre - sphere.R * normal, normal


def _closed_form_kind(shape):
    return "box" if hasattr(shape, "half_extents") else shape_kind(shape)


def closed_form_distance(a, r_a, q_a, b, r_b, q_b):
    """Signed distance of sphere–sphere, sphere–capsule, capsule–capsule, box–sphere and cylinder–sphere
    pairs (either order), penetrating or not.

    Returns (distance, p_a (3,), p_b (3,), normal (3,) from a to b) as coal_distance. Raises ValueError for
    other pairs, and for sphere/capsule pairs whose centres or segments meet (no normal is determined there,
    and the depth of crossing capsules depends on more than the segments' distance).
    """
    kinds = _closed_form_kind(a), _closed_form_kind(b)
    if set(kinds) <= {"sphere", "capsule"}:
        return _swept_spheres(a, r_a, q_a, b, r_b, q_b)
    if kinds[1] == "sphere" and kinds[0] in _POINT_DISTANCE:
        return _sphere_against(a, r_a, q_a, b, r_b, q_b)
    if kinds[0] == "sphere" and kinds[1] in _POINT_DISTANCE:
        distance, p_b, p_a, normal = _sphere_against(b, r_b, q_b, a, r_a, q_a)
        return distance, p_a, p_b, -normal
    raise ValueError(f"closed form: no formula for {kinds[0]}–{kinds[1]}")
