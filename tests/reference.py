"""Independent reference for DCOL: problem (9) written in cvxpy, in world coordinates, straight from
the constraints of paper §III-B, and solved by Clarabel at tight tolerances.

Only the shapes' public attributes are read; nothing of dcol's solver or problem assembly is used.
"""

import cvxpy as cp
import numpy as np

from dcol.geom import Capsule, Cone, Cylinder, Ellipsoid, Polygon, Polytope, Sphere

CLARABEL_TIGHT = dict(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)


def rotation(q):
    """(3, 3) rotation matrix of a quaternion [w, x, y, z] of any nonzero norm, or a matrix as is."""
    q = np.asarray(q, dtype=float)
    if q.shape == (3, 3):
        return q
    w, x, y, z = q / np.linalg.norm(q)
    return np.array(
        [
            [w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z],
        ]
    )


def shape_frame(shape, r, q):
    """World position and rotation of the shape's own frame (body pose composed with the offset)."""
    Q_body = rotation(q)
    return np.asarray(r, float) + Q_body @ shape.offset_position, Q_body @ shape.offset_rotation


def scaled_constraints(shape, r, Q, x, alpha):
    """cvxpy constraints ``x ∈ S(α)`` for the shape with frame (r, Q), eqs. (10)–(28)."""
    bx = Q[:, 0]
    if isinstance(shape, Polytope):  # (10)
        return [shape.A @ Q.T @ (x - r) <= alpha * shape.b]
    if isinstance(shape, Sphere):
        return [cp.norm(x - r) <= alpha * shape.R]
    if isinstance(shape, (Capsule, Cylinder)):  # (12), (13)
        gamma = cp.Variable()
        cons = [
            cp.norm(x - (r + gamma * bx)) <= alpha * shape.R,
            gamma <= alpha * shape.L / 2,
            -alpha * shape.L / 2 <= gamma,
        ]
        if isinstance(shape, Cylinder):  # (16), (17)
            cons += [bx @ (x - r) >= -alpha * shape.L / 2, bx @ (x - r) <= alpha * shape.L / 2]
        return cons
    if isinstance(shape, Cone):  # (19), (20)
        x_tilde = Q.T @ (x - r) + alpha * (3 * shape.H / 4) * np.array([1.0, 0.0, 0.0])
        return [cp.norm(x_tilde[1:]) <= np.tan(shape.beta) * x_tilde[0], bx @ (x - r) <= alpha * shape.H / 4]
    if isinstance(shape, Ellipsoid):  # (23)
        U = np.linalg.cholesky(shape.P).T
        return [cp.norm(U @ Q.T @ (x - r)) <= alpha]
    if isinstance(shape, Polygon):  # (25), (26)
        y = cp.Variable(2)
        return [cp.norm(x - (r + Q[:, :2] @ y)) <= alpha * shape.R, shape.C @ y <= alpha * shape.d]
    raise TypeError(f"no reference constraints for {type(shape).__name__}")


def reference_proximity(a, r_a, q_a, b, r_b, q_b):
    """(α, x) of problem (9) by cvxpy + Clarabel."""
    x, alpha = cp.Variable(3), cp.Variable()
    ra, Qa = shape_frame(a, r_a, q_a)
    rb, Qb = shape_frame(b, r_b, q_b)
    constraints = scaled_constraints(a, ra, Qa, x, alpha) + scaled_constraints(b, rb, Qb, x, alpha) + [alpha >= 0]
    cp.Problem(cp.Minimize(alpha), constraints).solve(**CLARABEL_TIGHT)
    return float(alpha.value), np.array(x.value)


def containing_scale(shape, r, q, point):
    """Smallest α with ``point ∈ S(α)`` (the gauge of the shape about its origin)."""
    alpha = cp.Variable()
    r_frame, Q = shape_frame(shape, r, q)
    cp.Problem(cp.Minimize(alpha), scaled_constraints(shape, r_frame, Q, np.asarray(point, float), alpha)).solve(
        **CLARABEL_TIGHT
    )
    return float(alpha.value)
