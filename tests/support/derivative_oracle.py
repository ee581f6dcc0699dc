"""Independent derivative oracle for DCOL proximity (DCOL §II-B, §III), written from the DCOL paper
and not from dcol's code.

DCOL eq. 9 is written in the standard conic form of DCOL §II-A, ``min cᵀz s.t. h − G z ∈ K`` with
z = (x, α, slacks), one block of rows per primitive in world coordinates. It is solved once, at the
nominal input, by Clarabel, refined to machine precision by Newton's method (see _refine), and
differentiated by diffcp (``solve_and_derivative``, dense mode) at the refined solution; each column of
a Jacobian is diffcp's derivative applied to the derivative of the data (G, h) along one pose or
shape-parameter coordinate. No cone solve is finite-differenced.

Why not cvxpy's ``Problem.derivative()`` on tests/support/oracle.py's DPP problem: it differentiates at the
interior-point solution, whose x is only good to ~1e-5 (see _refine); measured against this oracle on
the seven shape pairs of the self-test, its Jacobians were off by up to 1e-5 relative in x and 3e-6 in α
(cvxpy 1.9.3, diffcp 1.1.9, Clarabel at 1e-10). Its canonicalization also adds epigraph variables
(``t ≥ ‖·‖``, ``t ≥ |γ|``) that are not unique where their constraint is inactive, so its solution could
not be refined into a regular one. Here every variable is unique at a generic optimum: the only slacks
are the capsule's γ (DCOL eq. 12) and the polygon's y (DCOL eq. 25), both pinned by their active
second-order cone, and the cylinder is written without γ, as ``‖Q[:, 1:]ᵀ(x − r)‖ ≤ αR`` with the flat
ends (DCOL eqs. 16, 17), since DCOL eq. 12 leaves γ free when a flat end carries the contact.

The data is bilinear in the shape frame (r, Q) and affine in each shape parameter (taking tan β for
the cone and the Cholesky factor U for the ellipsoid as the parameters), so its derivative along such
a line is the symmetric difference with unit step, exact up to rounding; the chain rules for β and P
and the rotation derivatives of the three parameterizations are analytic.

Conventions (docs/conventions.md):

- Poses ``(r, q)``: q = [w, x, y, z] of any nonzero norm. A shape with an offset pose
  (``offset_position``, ``offset_rotation``) has its own frame at origin ``r + Q(q) r_off`` with
  rotation ``Q(q) Q_off``; scaling is about that origin.
- Jacobian rows are ``[x0, x1, x2, α]``; columns are body a's coordinates, then body b's:
  ``"quaternion"``: (r 3, q 4) per body, the raw components of the given q, through the normalization
  q/‖q‖ (so the q columns times q vanish), as DCOL.jl; ``"mrp"``: (r 3, p 3) per body with p = v/(1 + w)
  the modified Rodrigues parameters of the unit quaternion ±q/‖q‖ whose w ≥ 0 (so ‖p‖ ≤ 1), for the
  rotation Q(p) = I + (8[p]×² + 4(1 − pᵀp)[p]×)/(1 + pᵀp)²; ``"rigid"``: (δp 3, δθ 3) per body for
  r ← r + δp, Q ← exp([δθ]×) Q (δθ in the world frame), at δ = 0.
- Degenerate configurations, where the derivative does not exist (a solution that is not unique or
  not strictly complementary: parallel faces in contact, a contact at a polytope vertex where more
  than three faces meet, as in the convex hull of random points), raise RuntimeError.

Accuracy, measured over 70 configurations (the seven shape pairs of tests/geom/test_derivative_oracle.py,
ten seeds each, both regimes, with and without offsets, all three parameterizations and the shape
parameters): the α rows agree with fourth-order central differences (step 1e-3) of proximity_oracle to
≤ 5e-7 relative, which is the noise of its α (~1e-11 absolute), and x, the contact points and the
normal agree with central differences (step 1e-4) of the refined solve to ≤ 3e-9. The two exceptions
were finite-difference artifacts: contacts within 2e-3 of an edge, where the 1e-3 step crosses a change
of active constraints (2e-5 and 1e-2 relative), while the 1e-4 step of the refined solve agreed there.

Only the shapes' public attributes are read; nothing of dcol is imported.
"""

import functools
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sparse

from tests.support.optional import oracle
from tests.support.oracle import TOLERANCES, rotation_matrix, shape_frame, shape_kind

diffcp = oracle("diffcp")

PARAMETERIZATIONS = ("quaternion", "mrp", "rigid")

# Shape parameters differentiated by shape_parameter_jacobian_oracle, by kind (public attribute names).
SHAPE_PARAMETERS = {
    "polytope": ("A", "b"),
    "sphere": ("R",),
    "capsule": ("R", "L"),
    "cylinder": ("R", "L"),
    "cone": ("H", "beta"),
    "ellipsoid": ("P",),
    "polygon": ("C", "d", "R"),
}


def _hat(v):
    """(3, 3) cross-product matrix [v]×."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def _quadratic_rotation(q):
    """(w² − vᵀv) I + 2 v vᵀ + 2 w [v]×: ‖q‖² times the rotation of q, a quadratic form in q."""
    w, v = q[0], q[1:]
    return (w * w - v @ v) * np.eye(3) + 2 * np.outer(v, v) + 2 * w * _hat(v)


def _quadratic_rotation_derivatives(q):
    """The four (3, 3) partial derivatives of _quadratic_rotation with respect to q = [w, x, y, z]."""
    w, v = q[0], q[1:]
    derivatives = [2 * w * np.eye(3) + 2 * _hat(v)]
    for e in np.eye(3):
        derivatives.append(-2 * (e @ v) * np.eye(3) + 2 * (np.outer(e, v) + np.outer(v, e)) + 2 * w * _hat(e))
    return derivatives


def mrp_of_quaternion(q):
    """(3,) modified Rodrigues parameters p = v/(1 + w) of the unit quaternion ±q/‖q‖ with w ≥ 0."""
    unit = np.asarray(q, dtype=float) / np.linalg.norm(q)
    if unit[0] < 0:
        unit = -unit
    return unit[1:] / (1 + unit[0])


def rotation_derivatives(q, parameterization):
    """Partial derivatives ∂Q/∂θ_k of the rotation at orientation q (4,) [w, x, y, z].

    Returns a list of (3, 3) arrays: 4 for "quaternion" (θ = the raw components of q, through q/‖q‖),
    3 for "mrp" (θ = p at mrp_of_quaternion(q)), 3 for "rigid" (θ = δθ of Q ← exp([δθ]×) Q at 0).
    """
    q = np.asarray(q, dtype=float)
    if q.shape != (4,):
        raise ValueError(f"derivatives need the orientation as a quaternion (4,), got shape {q.shape}")
    if parameterization == "quaternion":
        norm2 = q @ q
        Q = _quadratic_rotation(q) / norm2
        return [(dQ - 2 * q_k * Q) / norm2 for dQ, q_k in zip(_quadratic_rotation_derivatives(q), q)]
    if parameterization == "mrp":
        p = mrp_of_quaternion(q)
        s = p @ p
        # q(p) = [1 − pᵀp, 2p]/(1 + pᵀp) is a unit quaternion, so Q(p) is the quadratic form at q(p).
        q_of_p = np.r_[1 - s, 2 * p] / (1 + s)
        dq_dp = np.vstack([-4 * p / (1 + s) ** 2, 2 * np.eye(3) / (1 + s) - 4 * np.outer(p, p) / (1 + s) ** 2])
        partials = _quadratic_rotation_derivatives(q_of_p)
        return [sum(dq_dp[j, k] * partials[j] for j in range(4)) for k in range(3)]
    if parameterization == "rigid":
        Q = rotation_matrix(q)
        return [_hat(e) @ Q for e in np.eye(3)]
    raise ValueError(f"parameterization must be one of {PARAMETERIZATIONS}, got {parameterization!r}")


def _frame_directions(shape, q, parameterization):
    """Derivatives (δorigin (3,), δQ (3, 3)) of the shape frame along each pose coordinate of its body."""
    directions = [(e, np.zeros((3, 3))) for e in np.eye(3)]
    for dQ in rotation_derivatives(q, parameterization):
        directions.append((dQ @ shape.offset_position, dQ @ shape.offset_rotation))
    return directions


# Conic rows of x ∈ S(α) for one primitive, h − G [x; α; slacks] ∈ K, from the DCOL paper's standard forms.
# ``p`` holds the parameters the rows are affine in: polytope A, b; sphere R; capsule, cylinder R, L;
# cone H, tan_beta; ellipsoid U (P = UᵀU); polygon C, d, R. Returns (slack count, nonnegative rows
# (G, h), list of second-order cone blocks (G, h)), each G with columns (x 3, α, own slacks).


def _membership(kind, p, o, Q):
    zero3, no_rows = np.zeros(3), (np.zeros((0, 4)), np.zeros(0))
    if kind == "polytope":  # DCOL eq. 11
        AQt = p["A"] @ Q.T
        return 0, (np.c_[AQt, -p["b"]], AQt @ o), []
    if kind == "sphere":  # ‖x − r‖ ≤ αR
        soc = np.r_[[np.r_[zero3, -p["R"]]], np.c_[-np.eye(3), zero3]], np.r_[0.0, -o]
        return 0, no_rows, [soc]
    if kind == "capsule":  # DCOL eqs. 14, 15
        half_L = p["L"] / 2
        linear = np.array([[0, 0, 0, -half_L, 1.0], [0, 0, 0, -half_L, -1.0]]), np.zeros(2)
        soc = np.r_[[np.r_[zero3, -p["R"], 0.0]], np.c_[-np.eye(3), zero3, Q[:, 0]]], np.r_[0.0, -o]
        return 1, linear, [soc]
    if kind == "cylinder":  # DCOL eqs. 16, 17 and the radial cone without γ (module docstring)
        bx, half_L, radial = Q[:, 0], p["L"] / 2, Q[:, 1:].T
        linear = np.array([np.r_[bx, -half_L], np.r_[-bx, -half_L]]), np.r_[bx @ o, -bx @ o]
        soc = np.r_[[np.r_[zero3, -p["R"]]], np.c_[-radial, np.zeros(2)]], np.r_[0.0, -radial @ o]
        return 0, linear, [soc]
    if kind == "cone":  # DCOL eqs. 21, 22
        bx, H, EQt = Q[:, 0], p["H"], np.diag([p["tan_beta"], 1.0, 1.0]) @ Q.T
        linear = np.array([np.r_[bx, -H / 4]]), np.array([bx @ o])
        soc = np.c_[-EQt, [-0.75 * H * p["tan_beta"], 0.0, 0.0]], -EQt @ o
        return 0, linear, [soc]
    if kind == "ellipsoid":  # DCOL eq. 24
        UQt = p["U"] @ Q.T
        soc = np.r_[[np.r_[zero3, -1.0]], np.c_[-UQt, zero3]], np.r_[0.0, -UQt @ o]
        return 0, no_rows, [soc]
    if kind == "polygon":  # DCOL eqs. 27, 28
        m = len(p["d"])
        linear = np.c_[np.zeros((m, 3)), -p["d"], p["C"]], np.zeros(m)
        soc = np.r_[[np.r_[zero3, -p["R"], 0.0, 0.0]], np.c_[-np.eye(3), zero3, Q[:, :2]]], np.r_[0.0, -o]
        return 2, linear, [soc]
    raise ValueError(kind)


def _cholesky_upper(P):
    return np.linalg.cholesky((P + P.T) / 2).T


def _row_parameters(shape):
    """The parameters _membership reads, from the shape's public attributes."""
    kind = shape_kind(shape)
    if kind == "cone":
        return {"H": shape.H, "tan_beta": np.tan(shape.beta)}
    if kind == "ellipsoid":
        return {"U": _cholesky_upper(np.asarray(shape.P, dtype=float))}
    return {name: np.asarray(getattr(shape, name), dtype=float) for name in SHAPE_PARAMETERS[kind]}


def _parameter_directions(shape, name):
    """Derivatives of _row_parameters along each entry of the shape's attribute ``name``, in C order."""
    kind, value = shape_kind(shape), np.asarray(getattr(shape, name), dtype=float)
    if kind == "cone" and name == "beta":
        return [{"tan_beta": 1 / np.cos(value) ** 2}]
    if kind == "ellipsoid":
        # P enters through its symmetric part. For a symmetric dP, P = LLᵀ gives
        # L⁻¹ dP L⁻ᵀ = L⁻¹dL + (L⁻¹dL)ᵀ with L⁻¹dL lower triangular, so dL = L Φ(L⁻¹ dP L⁻ᵀ) where Φ keeps
        # the lower triangle and halves the diagonal.
        L = _cholesky_upper(value).T
        L_inv = np.linalg.inv(L)
        directions = []
        for index in np.ndindex(3, 3):
            dP = np.zeros((3, 3))
            dP[index] = 1.0
            inner = L_inv @ ((dP + dP.T) / 2) @ L_inv.T
            directions.append({"U": (L @ (np.tril(inner, -1) + np.diag(np.diag(inner)) / 2)).T})
        return directions
    directions = []
    for index in np.ndindex(value.shape):
        unit = np.zeros(value.shape)
        unit[index] = 1.0
        directions.append({name: unit})
    return directions


@dataclass(frozen=True)
class _Side:
    kind: str
    parameters: dict
    origin: np.ndarray
    Q: np.ndarray

    def moved(self, sign, parameters=None, origin=None, Q=None):
        """This side with sign × the given directions added (a missing direction stays put)."""
        return _Side(
            self.kind,
            {k: v + sign * parameters[k] if k in (parameters or {}) else v for k, v in self.parameters.items()},
            self.origin if origin is None else self.origin + sign * origin,
            self.Q if Q is None else self.Q + sign * Q,
        )


def _program(side_a, side_b):
    """Dense (G, h) of DCOL eq. 9 over z = (x, α, slacks of a, slacks of b), the cone dictionary in
    diffcp's (SCS) order — the nonnegative rows α ≥ 0, a's, b's, then a's and b's second-order cones —
    and the row indices that belong to a."""
    blocks = [_membership(side.kind, side.parameters, side.origin, side.Q) for side in (side_a, side_b)]
    n = 4 + blocks[0][0] + blocks[1][0]

    def widen(G, slack_start):
        full = np.zeros((G.shape[0], n))
        full[:, :4] = G[:, :4]
        full[:, slack_start : slack_start + G.shape[1] - 4] = G[:, 4:]
        return full

    starts = (4, 4 + blocks[0][0])
    linear = [(np.r_[[np.r_[np.zeros(3), -1.0, np.zeros(n - 4)]]], np.zeros(1))]  # α ≥ 0
    linear += [(widen(G, start), h) for (_, (G, h), _), start in zip(blocks, starts)]
    socs = [[(widen(G, start), h) for G, h in cones] for (_, _, cones), start in zip(blocks, starts)]
    rows = linear + socs[0] + socs[1]
    G, h = np.vstack([G for G, _ in rows]), np.concatenate([h for _, h in rows])

    sizes = [len(h) for _, h in rows]
    ends = np.cumsum(sizes)
    a_blocks = [1] + list(range(3, 3 + len(socs[0])))
    rows_a = np.concatenate([np.arange(ends[i] - sizes[i], ends[i]) for i in a_blocks])
    cones = {"l": sum(sizes[:3]), "q": sizes[3:]}
    return G, h, cones, rows_a


def _clarabel(G, h, c, cones):
    """(z, y, s) of ``min cᵀz s.t. h − G z = s ∈ K``, y the dual, by Clarabel through diffcp."""
    for tol in TOLERANCES:
        result = diffcp.solve_internal(
            sparse.csc_matrix(G), h, c, cones, solve_method="Clarabel", tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol
        )
        if result["info"]["status"] == "Solved":
            return result["x"], result["y"], result["s"]
    raise RuntimeError(f"derivative oracle: Clarabel ended with status {result['info']['status']}")


def _project(v, cones):
    """Projection of v onto K = K* (orthant, then second-order cones) and its Jacobian (m, m)."""
    projected, jacobian = np.maximum(v, 0.0), np.diag((v > 0).astype(float))
    start = cones["l"]
    for size in cones["q"]:
        block = slice(start, start + size)
        t, w = v[start], v[start + 1 : start + size]
        norm_w = np.linalg.norm(w)
        if norm_w <= t:
            projected[block], jacobian[block, block] = v[block], np.eye(size)
        elif norm_w <= -t:
            projected[block], jacobian[block, block] = 0.0, 0.0
        else:
            u, ratio = w / norm_w, t / norm_w
            projected[block] = (1 + ratio) / 2 * np.r_[norm_w, w]
            lateral = (1 + ratio) * np.eye(size - 1) - ratio * np.outer(u, u)
            jacobian[block, block] = np.block([[np.ones((1, 1)), u[None, :]], [u[:, None], lateral]]) / 2
        start += size
    return projected, jacobian


def _refine(G, h, c, cones, z, y, s):
    """Newton refinement of an interior-point solution (z, y, s) to machine precision.

    An interior-point method stops at a small duality gap, but the gap of a second-order cone block is
    quadratic in the misalignment of its primal and dual boundary directions, so x may be off by about
    the square root of the gap: 1e-6–1e-5 at Clarabel's 1e-10, too much to differentiate at. Newton's
    method on the residual map of the homogeneous embedding in v = y − s, with y = Π_K(v) and s = y − v
    complementary by construction (Busseti, Moursi, Boyd, "Solution refinement at regular points of conic
    problems", 2019), converges quadratically at a regular point: a unique, strictly complementary
    solution, which is also where the derivative of the solution map exists. Its Jacobian is full rank
    exactly there (generic configurations give σ_min/σ_max ≳ 5e-3, degenerate ones ~1e-17).
    """
    m, n = G.shape
    v = y - s
    scale = 1 + np.max(np.abs(h))
    for _ in range(8):
        y, dy_dv = _project(v, cones)
        residual = np.r_[G.T @ y + c, h - G @ z - (y - v), c @ z + h @ y]
        jacobian = np.block(
            [[np.zeros((n, n)), G.T @ dy_dv], [-G, np.eye(m) - dy_dv], [c[None, :], (h @ dy_dv)[None, :]]]
        )
        if np.max(np.abs(residual)) <= 1e-13 * scale:
            break
        step = np.linalg.lstsq(jacobian, -residual, rcond=None)[0]
        z, v = z + step[:n], v + step[n:]
    else:
        raise RuntimeError("derivative oracle: Newton refinement did not converge (the solution is not regular)")
    singular_values = np.linalg.svd(jacobian, compute_uv=False)
    if singular_values[-1] < 1e-8 * singular_values[0]:
        raise RuntimeError(
            "derivative oracle: degenerate configuration (the solution is not unique or not strictly "
            "complementary), so it has no derivative"
        )
    return z, y, y - v


class _Solution:
    """DCOL eq. 9 at the given input, solved by Clarabel and refined; the derivative of its solution map
    comes from diffcp on first use."""

    def __init__(self, a, r_a, q_a, b, r_b, q_b):
        self.shapes = (a, b)
        self.orientations = (q_a, q_b)
        self.sides = tuple(
            _Side(shape_kind(shape), _row_parameters(shape), *shape_frame(shape, r, q))
            for shape, r, q in ((a, r_a, q_a), (b, r_b, q_b))
        )
        self.G, self.h, self.cones, self.rows_a = _program(*self.sides)
        self.c = np.zeros(self.G.shape[1])
        self.c[3] = 1.0
        interior_point = _clarabel(self.G, self.h, self.c, self.cones)
        self.z, self.y, self.s = _refine(self.G, self.h, self.c, self.cones, *interior_point)

    @functools.cached_property
    def derivative(self):
        """diffcp's derivative map (dG, dh, dc) → (dz, dy, ds) at the refined solution.

        diffcp evaluates it at the solution of its own solve: SCS, warm-started at the refined solution,
        accepts it as is at eps 1e-12 (checked), so the derivative is taken at the refined point.
        """
        z, y, s, derivative, _ = diffcp.solve_and_derivative(
            sparse.csc_matrix(self.G),
            self.h,
            self.c,
            self.cones,
            warm_start=(self.z, self.y, self.s),
            mode="dense",
            solve_method="SCS",
            eps_abs=1e-12,
            eps_rel=1e-12,
        )
        moved = np.max(np.abs(np.r_[z - self.z, y - self.y, s - self.s]))
        if moved > 1e-10 * (1 + np.max(np.abs(np.r_[self.z, self.y]))):
            raise RuntimeError(f"derivative oracle: SCS moved the refined solution by {moved:.1e}")
        return derivative

    @property
    def margin(self):
        """Strict-complementarity margin of the solution: the distance of v = y − s from the points where
        the projection onto K is not differentiable (on the orthant |v_i| = s_i + y_i; on a second-order
        cone the distances |‖v1‖ ∓ v0|/√2 from the boundaries of K and −K). Zero at the degenerate
        configurations refused above; small near an edge or corner, where a constraint is almost active."""
        v, l = self.y - self.s, self.cones["l"]
        distances, start = list(np.abs(v[:l])), l
        for size in self.cones["q"]:
            head, tail = v[start], np.linalg.norm(v[start + 1 : start + size])
            distances += [abs(tail - head) / np.sqrt(2), abs(tail + head) / np.sqrt(2)]
            start += size
        return float(min(distances))

    @property
    def alpha(self):
        return float(self.z[3])

    @property
    def x(self):
        return self.z[:3].copy()

    def contact(self):
        """Values of contact_oracle."""
        alpha, x = self.alpha, self.x
        p_a, p_b = (side.origin + (x - side.origin) / alpha for side in self.sides)
        g = self.G[self.rows_a, :3].T @ self.y[self.rows_a]
        distance, normal = float(np.linalg.norm(p_a - p_b)), g / np.linalg.norm(g)
        return {"alpha": alpha, "x": x, "p_a": p_a, "p_b": p_b, "distance": distance, "normal": normal}

    def tangent(self, side, **direction):
        """(dz, dy, dG) along a direction of one side's frame (origin=, Q=) or row parameters (parameters=).

        The data is at most quadratic along these lines, so the unit-step symmetric difference is exact.
        """
        plus, minus = list(self.sides), list(self.sides)
        plus[side], minus[side] = self.sides[side].moved(1, **direction), self.sides[side].moved(-1, **direction)
        (G_plus, h_plus, _, _), (G_minus, h_minus, _, _) = _program(*plus), _program(*minus)
        dG, dh = (G_plus - G_minus) / 2, (h_plus - h_minus) / 2
        dz, dy, _ = self.derivative(sparse.csc_matrix(dG), dh, np.zeros(len(self.z)))
        return dz, dy, dG

    def pose_tangents(self, parameterization):
        """[(side, dz, dy, dG, δorigin)] along every pose coordinate of body a, then of body b."""
        tangents = []
        for side in (0, 1):
            for d_origin, dQ in _frame_directions(self.shapes[side], self.orientations[side], parameterization):
                tangents.append((side, *self.tangent(side, origin=d_origin, Q=dQ), d_origin))
        return tangents

    def normal_tangent(self, dy, dG):
        """Derivative of the unit normal along g = G_aᵀ y_a (x columns) from the tangents dy, dG."""
        g = self.G[self.rows_a, :3].T @ self.y[self.rows_a]
        dg = dG[self.rows_a, :3].T @ self.y[self.rows_a] + self.G[self.rows_a, :3].T @ dy[self.rows_a]
        n = g / np.linalg.norm(g)
        return (dg - n * (n @ dg)) / np.linalg.norm(g)


def contact_oracle(a, r_a, q_a, b, r_b, q_b):
    """Solution of this module's cone program, refined to machine precision (values only, no derivative).

    Parameters as proximity_jacobian_oracle, but q_a, q_b may also be (3, 3) rotation matrices.

    Returns
    -------
    dict: "alpha" float, "x" (3,), "p_a" (3,), "p_b" (3,) (DCOL eq. 29), "distance" float (DCOL eq. 30),
    "normal" (3,) unit, along G_aᵀ y_a on the x columns (y_a the dual variables of shape a's rows): the
    outward normal of scaled shape a at x, pointing from a to b.

    x is accurate to rounding here, while the interior-point solve of proximity_oracle (gap 1e-10) leaves
    errors up to ~1e-5 in x (see _refine): finite differences of x should be taken of this.
    """
    return _Solution(a, r_a, q_a, b, r_b, q_b).contact()


def proximity_jacobian_oracle(a, r_a, q_a, b, r_b, q_b, parameterization="quaternion"):
    """Jacobian of DCOL's solution (x, α) with respect to both body poses.

    Parameters
    ----------
    a, b : shapes (public attributes read as in tests/support/oracle.py).
    r_a, r_b : (3,) body positions; q_a, q_b : (4,) quaternions [w, x, y, z], any nonzero norm.
    parameterization : "quaternion", "mrp" or "rigid" (module docstring).

    Returns
    -------
    alpha : float; x : (3,) ndarray;
    J : (4, 14) for "quaternion" (columns r_a, q_a, r_b, q_b), (4, 12) for "mrp" (r_a, p_a, r_b, p_b)
        and "rigid" (δp_a, δθ_a, δp_b, δθ_b); rows (x0, x1, x2, α).

    Raises RuntimeError where the derivative does not exist (a solution that is not unique or not strictly
    complementary, e.g. parallel faces in contact or a contact at a polytope vertex where more than three
    faces meet).
    """
    solution = _Solution(a, r_a, q_a, b, r_b, q_b)
    J = np.column_stack([dz[:4] for _, dz, _, _, _ in solution.pose_tangents(parameterization)])
    return solution.alpha, solution.x, J


def proximity_gradient_oracle(a, r_a, q_a, b, r_b, q_b, parameterization="quaternion"):
    """∂α/∂(pose_a, pose_b) alone: (alpha float, gradient (14,) for "quaternion", (12,) otherwise),
    columns as in proximity_jacobian_oracle."""
    alpha, _, J = proximity_jacobian_oracle(a, r_a, q_a, b, r_b, q_b, parameterization)
    return alpha, J[3]


def shape_parameter_jacobian_oracle(a, r_a, q_a, b, r_b, q_b):
    """Jacobians of (x, α) with respect to the shapes' parameters, at the given poses.

    Returns
    -------
    alpha : float; x : (3,) ndarray;
    jacobians : dict keyed (side, name), side "a" or "b", name a public attribute of that shape
        (SHAPE_PARAMETERS: polytope A, b; sphere R; capsule, cylinder R, L; cone H, beta; ellipsoid P;
        polygon C, d, R), each an array of shape (4,) + shape of the attribute, rows (x0, x1, x2, α):
        e.g. ("a", "A") → (4, m, 3), ("a", "b") → (4, m), ("b", "R") → (4,).
        Ellipsoid P: [:, i, j] is the derivative with respect to P_ij as an independent entry of a general
        matrix entering through its symmetric part (P + Pᵀ)/2, so [:, i, j] equals [:, j, i] and any
        perturbation dP (symmetric or not) changes (x, α) by Σ_ij [:, i, j] dP_ij; moving one off-diagonal
        pair P_ij = P_ji together changes it by 2 [:, i, j].
        The offset pose is not differentiated.
    """
    solution = _Solution(a, r_a, q_a, b, r_b, q_b)
    jacobians = {}
    for side, shape in enumerate((a, b)):
        for name in SHAPE_PARAMETERS[shape_kind(shape)]:
            columns = [solution.tangent(side, parameters=d)[0][:4] for d in _parameter_directions(shape, name)]
            jacobians["ab"[side], name] = np.stack(columns, axis=-1).reshape((4,) + np.shape(getattr(shape, name)))
    return solution.alpha, solution.x, jacobians


def complementarity_margin(a, r_a, q_a, b, r_b, q_b):
    """The strict-complementarity margin of the solution of DCOL eq. 9 (_Solution.margin): how far the
    configuration is from one where the active constraints change."""
    return _Solution(a, r_a, q_a, b, r_b, q_b).margin


def contact_jacobian_oracle(a, r_a, q_a, b, r_b, q_b, parameterization="quaternion"):
    """Contact points (DCOL eq. 29), distance (DCOL eq. 30) and separating normal with their Jacobians to both poses.

    p_i = o_i + (x − o_i)/α with o_i the origin of shape i's own frame (body pose composed with the
    offset), distance = ‖p_a − p_b‖ (not differentiable at α = 1, where it is zero), normal as in
    contact_oracle; their derivatives by the chain rule from those of x, α, the dual variables and o_i.

    Returns
    -------
    values : dict as contact_oracle.
    jacobians : dict "p_a", "p_b", "normal" → (3, n) ndarray, "distance" → (n,) ndarray, "alpha" → (n,),
        "x" → (3, n); columns as in proximity_jacobian_oracle (n = 14 for "quaternion", 12 otherwise).
    """
    solution = _Solution(a, r_a, q_a, b, r_b, q_b)
    values = solution.contact()
    alpha, x = values["alpha"], values["x"]
    columns = {key: [] for key in ("alpha", "x", "p_a", "p_b", "normal")}
    for side, dz, dy, dG, d_origin in solution.pose_tangents(parameterization):
        dx, d_alpha = dz[:3], dz[3]
        columns["alpha"].append(d_alpha)
        columns["x"].append(dx)
        for i, key in enumerate(("p_a", "p_b")):
            origin, do = solution.sides[i].origin, d_origin if i == side else np.zeros(3)
            columns[key].append(do + (dx - do) / alpha - (x - origin) * d_alpha / alpha**2)
        columns["normal"].append(solution.normal_tangent(dy, dG))
    jacobians = {key: np.array(value).T for key, value in columns.items()}
    gap = values["p_a"] - values["p_b"]
    jacobians["distance"] = gap @ (jacobians["p_a"] - jacobians["p_b"]) / values["distance"]
    return values, jacobians
