"""Independent oracle for DCOL (DCOL §III), written from the DCOL paper and not from dcol's code.

DCOL eq. 9 is stated in cvxpy in world coordinates, one block of constraints per primitive
(DCOL eqs. 10, 12–13, 16–17, 19–22, 23, 25–26, and ``‖x − r‖ ≤ αR`` for the sphere) and solved by
Clarabel at tight tolerances. The pose and the sizes enter as cvxpy Parameters (DPP), so each kind
of shape pair is compiled once. Gauges (the smallest scaling whose shape holds a point), support
functions and bounding radii come in closed form where one exists.

Only the shapes' public attributes are read (``A``, ``b``, ``R``, ``L``, ``H``, ``beta``, ``P``,
``C``, ``d``, ``offset_position``, ``offset_rotation``); nothing of dcol is imported.
"""

import functools
import warnings

import numpy as np
from scipy.spatial import HalfspaceIntersection

from tests.support.optional import oracle

cp = oracle("cvxpy")

# Clarabel's tolerances, tightest first: 1e-10 is as far as it reliably certifies in double precision,
# and the rare problem it cannot certify there is retried looser (still far below the tests' 1e-6).
TOLERANCES = (1e-10, 1e-9, 1e-8)

_KIND_OF_CLASS = {
    "Polytope": "polytope",
    "Capsule": "capsule",
    "Cylinder": "cylinder",
    "Cone": "cone",
    "Sphere": "sphere",
    "Ellipsoid": "ellipsoid",
    "Polygon": "polygon",
}


def shape_kind(shape):
    """Kind name of a shape, read off its class hierarchy (Box counts as a polytope)."""
    for cls in type(shape).__mro__:
        if cls.__name__ in _KIND_OF_CLASS:
            return _KIND_OF_CLASS[cls.__name__]
    raise TypeError(f"unknown shape {shape!r}")


def rotation_matrix(q):
    """(3, 3) rotation of a quaternion [w, x, y, z] of any nonzero norm; a (3, 3) matrix is returned as is."""
    q = np.asarray(q, dtype=float)
    if q.shape == (3, 3):
        return q
    w, x, y, z = q / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def shape_frame(shape, r, q):
    """World origin (3,) and rotation (3, 3) of the shape's own frame: body pose composed with the offset."""
    Q_body = rotation_matrix(q)
    return np.asarray(r, dtype=float) + Q_body @ shape.offset_position, Q_body @ shape.offset_rotation


def face_count(shape):
    """Number of faces (polytope) or edges (padded polygon) of a shape; 0 for the other kinds."""
    kind = shape_kind(shape)
    return len(shape.b) if kind == "polytope" else len(shape.d) if kind == "polygon" else 0


# Membership x ∈ S(α) for one kind: cvxpy constraints in the variables (x, α) and a function that
# loads a shape with frame (r, Q) into the parameters. Products of parameters are precomputed
# (e.g. A Qᵀ r) so that every constraint stays DPP.


def _polytope(x, alpha, m):
    AQt, AQt_r, b = cp.Parameter((m, 3)), cp.Parameter(m), cp.Parameter(m)

    def load(shape, r, Q):
        AQt.value = shape.A @ Q.T
        AQt_r.value = AQt.value @ r
        b.value = shape.b

    return [AQt @ x - AQt_r <= alpha * b], load  # DCOL eq. 10


def _sphere(x, alpha, _):
    center, R = cp.Parameter(3), cp.Parameter(nonneg=True)

    def load(shape, r, Q):
        center.value, R.value = r, shape.R

    return [cp.norm(x - center) <= alpha * R], load


def _capsule(x, alpha, _, flat_ends=False):
    center, bx, bx_r = cp.Parameter(3), cp.Parameter(3), cp.Parameter()
    R, half_L = cp.Parameter(nonneg=True), cp.Parameter(nonneg=True)
    gamma = cp.Variable()
    constraints = [cp.norm(x - center - gamma * bx) <= alpha * R, cp.abs(gamma) <= alpha * half_L]  # DCOL eqs. 12, 13
    if flat_ends:
        constraints.append(cp.abs(bx @ x - bx_r) <= alpha * half_L)  # DCOL eqs. 16, 17

    def load(shape, r, Q):
        center.value, bx.value, bx_r.value = r, Q[:, 0], Q[:, 0] @ r
        R.value, half_L.value = shape.R, shape.L / 2

    return constraints, load


def _cylinder(x, alpha, m):
    return _capsule(x, alpha, m, flat_ends=True)


def _cone(x, alpha, _):
    # DCOL eq. 19 as E x̃ ∈ Q3 with E = diag(tan β, 1, 1), x̃ = Qᵀ(x − r) + α (3H/4) e1 (DCOL eq. 22);
    # DCOL eq. 20.
    EQt, EQt_r, v = cp.Parameter((3, 3)), cp.Parameter(3), cp.Parameter(3)
    bx, bx_r, quarter_H = cp.Parameter(3), cp.Parameter(), cp.Parameter(nonneg=True)
    y = EQt @ x - EQt_r + alpha * v
    constraints = [cp.norm(y[1:]) <= y[0], bx @ x - bx_r <= alpha * quarter_H]

    def load(shape, r, Q):
        E = np.diag([np.tan(shape.beta), 1.0, 1.0])
        EQt.value = E @ Q.T
        EQt_r.value = EQt.value @ r
        v.value = [0.75 * shape.H * np.tan(shape.beta), 0.0, 0.0]
        bx.value, bx_r.value, quarter_H.value = Q[:, 0], Q[:, 0] @ r, shape.H / 4

    return constraints, load


def _ellipsoid(x, alpha, _):
    UQt, UQt_r = cp.Parameter((3, 3)), cp.Parameter(3)

    def load(shape, r, Q):
        UQt.value = np.linalg.cholesky(shape.P).T @ Q.T  # P = Uᵀ U, U upper triangular
        UQt_r.value = UQt.value @ r

    return [cp.norm(UQt @ x - UQt_r) <= alpha], load  # DCOL eq. 23


def _polygon(x, alpha, m):
    center, Q_plane, R = cp.Parameter(3), cp.Parameter((3, 2)), cp.Parameter(nonneg=True)
    C, d = cp.Parameter((m, 2)), cp.Parameter(m)
    y = cp.Variable(2)

    def load(shape, r, Q):
        center.value, Q_plane.value, R.value = r, Q[:, :2], shape.R
        C.value, d.value = shape.C, shape.d

    return [cp.norm(x - center - Q_plane @ y) <= alpha * R, C @ y <= alpha * d], load  # DCOL eqs. 25, 26


_MEMBERSHIP = {
    "polytope": _polytope,
    "capsule": _capsule,
    "cylinder": _cylinder,
    "cone": _cone,
    "sphere": _sphere,
    "ellipsoid": _ellipsoid,
    "polygon": _polygon,
}


def membership(kind, face_count, x, alpha):
    """(constraints, load) stating x ∈ S(α) for a shape of this kind with face_count faces; α may be a
    cvxpy expression or a number (α = 1: the shape itself). ``load(shape, r, Q)`` sets the parameters
    for the shape with frame origin r (3,) and rotation Q (3, 3) in the world."""
    return _MEMBERSHIP[kind](x, alpha, face_count)


def solve(problem):
    """Solve a cvxpy problem with Clarabel at the tightest tolerance in TOLERANCES that it certifies."""
    for tol in TOLERANCES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "may be inaccurate": the status is checked below
            problem.solve(solver=cp.CLARABEL, tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol, max_iter=200)
        if problem.status == cp.OPTIMAL:
            return
    raise RuntimeError(f"oracle: Clarabel ended with status {problem.status}")


@functools.cache
def _proximity_problem(kind_a, faces_a, kind_b, faces_b):
    x, alpha = cp.Variable(3), cp.Variable()
    constraints_a, load_a = membership(kind_a, faces_a, x, alpha)
    constraints_b, load_b = membership(kind_b, faces_b, x, alpha)
    problem = cp.Problem(cp.Minimize(alpha), constraints_a + constraints_b + [alpha >= 0])  # DCOL eq. 9
    assert problem.is_dcp(dpp=True)
    return problem, x, alpha, load_a, load_b


def proximity_problem(a, b):
    """The compiled cvxpy problem (DCOL eq. 9) that proximity_oracle solves for shapes like a and b (cached by
    kind and face count), e.g. to read ``solver_stats`` after a solve."""
    return _proximity_problem(shape_kind(a), face_count(a), shape_kind(b), face_count(b))[0]


def proximity_oracle(a, r_a, q_a, b, r_b, q_b):
    """(α, x (3,)) of DCOL's problem (DCOL eq. 9) for shapes a, b at body poses (r, q), by cvxpy + Clarabel."""
    problem, x, alpha, load_a, load_b = _proximity_problem(shape_kind(a), face_count(a), shape_kind(b), face_count(b))
    load_a(a, *shape_frame(a, r_a, q_a))
    load_b(b, *shape_frame(b, r_b, q_b))
    solve(problem)
    return float(alpha.value), np.array(x.value)


@functools.cache
def _polygon_gauge_problem(m):
    w, C, d, R = cp.Parameter(3), cp.Parameter((m, 2)), cp.Parameter(m), cp.Parameter(nonneg=True)
    y, alpha = cp.Variable(2), cp.Variable()
    in_plane = np.vstack([np.eye(2), np.zeros((1, 2))])
    problem = cp.Problem(cp.Minimize(alpha), [cp.norm(w - in_plane @ y) <= alpha * R, C @ y <= alpha * d])
    return problem, alpha, (w, C, d, R)


def _polygon_gauge(shape, w):
    problem, alpha, parameters = _polygon_gauge_problem(len(shape.d))
    for parameter, value in zip(parameters, (w, shape.C, shape.d, shape.R)):
        parameter.value = value
    solve(problem)
    return float(alpha.value)


def _capsule_gauge(R, L, w):
    """Smallest α with dist(w, segment [−αL/2, αL/2] e1) ≤ αR."""
    a, rho = abs(w[0]), np.hypot(w[1], w[2])
    if rho * L >= 2 * a * R:  # closest segment point lies inside the scaled segment
        return rho / R
    # Root of (a − αL/2)² + ρ² = α²R² in (0, 2a/L), in the cancellation-free form.
    return 2 * (a * a + rho * rho) / (a * L + np.sqrt(4 * R * R * (a * a + rho * rho) - L * L * rho * rho))


def gauge(shape, r, q, point):
    """Smallest α ≥ 0 with ``point`` ∈ S(α) for the shape at body pose (r, q) (its gauge about its origin)."""
    origin, Q = shape_frame(shape, r, q)
    w = Q.T @ (np.asarray(point, dtype=float) - origin)
    kind = shape_kind(shape)
    if kind == "polytope":
        return max(0.0, float(np.max(shape.A @ w / shape.b)))
    if kind == "sphere":
        return float(np.linalg.norm(w) / shape.R)
    if kind == "ellipsoid":
        return float(np.sqrt(max(0.0, w @ shape.P @ w)))
    if kind == "cylinder":
        return float(max(2 * abs(w[0]) / shape.L, np.hypot(w[1], w[2]) / shape.R))
    if kind == "cone":
        lateral = (np.hypot(w[1], w[2]) / np.tan(shape.beta) - w[0]) / (0.75 * shape.H)  # DCOL eq. 19
        return float(max(0.0, lateral, w[0] / (0.25 * shape.H)))  # DCOL eq. 20
    if kind == "capsule":
        return float(_capsule_gauge(shape.R, shape.L, w))
    return _polygon_gauge(shape, w)


@functools.cache
def vertices(shape):
    """Vertices of a polytope (k, 3) or of the polygon inside a padded polygon (k, 2)."""
    normals, offsets = (shape.A, shape.b) if shape_kind(shape) == "polytope" else (shape.C, shape.d)
    return HalfspaceIntersection(np.c_[normals, -offsets], np.zeros(normals.shape[1])).intersections


def support(shape, r, q, direction, alpha=1.0):
    """Support function ``max {nᵀy : y ∈ S(α)}`` of the shape at body pose (r, q), scaled by α."""
    origin, Q = shape_frame(shape, r, q)
    n = np.asarray(direction, dtype=float)
    m = Q.T @ n
    kind = shape_kind(shape)
    if kind == "polytope":
        body = np.max(vertices(shape) @ m)
    elif kind == "sphere":
        body = shape.R * np.linalg.norm(m)
    elif kind == "ellipsoid":
        body = np.sqrt(m @ np.linalg.solve(shape.P, m))
    elif kind == "capsule":
        body = shape.L / 2 * abs(m[0]) + shape.R * np.linalg.norm(m)
    elif kind == "cylinder":
        body = shape.L / 2 * abs(m[0]) + shape.R * np.hypot(m[1], m[2])
    elif kind == "cone":
        base = shape.H / 4 * m[0] + shape.H * np.tan(shape.beta) * np.hypot(m[1], m[2])
        body = max(-0.75 * shape.H * m[0], base)
    else:
        body = np.max(vertices(shape) @ m[:2]) + shape.R * np.linalg.norm(m)
    return float(n @ origin + alpha * body)


def bounding_radii(shape):
    """(inner, outer): radii of the largest ball about the shape's origin inside it and the
    smallest one holding it."""
    kind = shape_kind(shape)
    if kind == "polytope":
        inner = np.min(shape.b / np.linalg.norm(shape.A, axis=1))
        return float(inner), float(np.max(np.linalg.norm(vertices(shape), axis=1)))
    if kind == "sphere":
        return shape.R, shape.R
    if kind == "ellipsoid":
        eigenvalues = np.linalg.eigvalsh(shape.P)
        return float(eigenvalues[-1] ** -0.5), float(eigenvalues[0] ** -0.5)
    if kind == "capsule":
        return shape.R, shape.R + shape.L / 2
    if kind == "cylinder":
        return min(shape.R, shape.L / 2), float(np.hypot(shape.R, shape.L / 2))
    if kind == "cone":
        H, beta = shape.H, shape.beta
        return min(H / 4, 0.75 * H * np.sin(beta)), max(0.75 * H, float(np.hypot(H / 4, H * np.tan(beta))))
    return shape.R, float(np.max(np.linalg.norm(vertices(shape), axis=1))) + shape.R
