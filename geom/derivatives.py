"""Derivatives of DCOL proximity with respect to both body poses (DCOL §II-B, §III).

They come from the implicit function theorem at the interior-point solution, in the native core (one
small linear solve per output at the final iterate, no finite differences). What they differentiate
is the barrier-smoothed problem: the solve ends on the central path at ``settings.barrier`` = μ, the
minimizer of α − μ Σ log(s) over the cone constraints' slacks s. Away from edges and corners that is
the exact problem (DCOL eq. 9) up to O(μ); across an edge or corner, where the exact derivative jumps, the
barrier blends the two sides smoothly over a region that grows with μ. A larger μ gives smoother
derivatives and a less exact α and x. A smaller μ is not always more exact: on the central path a
second-order cone's slack lies ~μ from the cone's boundary, and a vector of doubles places it only to
~1e-16 of its size, so rounding costs digits in proportion to 1/μ. Against diffcp's derivatives of the
exact problem (tests/test_proximity_derivatives.py) the smoothing's share grows like μ/m², m the
strict-complementarity margin (small when the contact is near an edge or corner), and the rounding's
like 1e-16/μ. The default μ = 1e-9, in the problem's normalized units (so independent of the shapes'
size), balances the two: α within ~4e-9 relative of the exact value, x within ~3e-7 of the shapes'
size, derivatives within a median 4e-8 of diffcp's and at most ~5e-6 away from edges (m ≥ 0.1), and
within 1e-6 of central differences of the values. A cone's slack is of the size of α, so that distance
is ~μ/α of it: far apart the rounding's share grows like α/μ until, past α/μ ~ 1e15, the rows of x keep
no digit. The solve therefore raises μ to 1e-11 α where that is more (α above ~100 at the default μ):
shapes 10⁷ sizes apart then get derivatives within ~1e-4 of central differences (median 2e-6), as a
few hundred sizes apart, and a smoothing no larger relative to α than the default μ's at α = 100.

``barrier=0`` (``SolverSettings()``) asks for the exact problem's derivatives instead (native/
exact_kkt.hpp): the solve goes to the central point at μ = 1e-9, the constraints' roles there (an
orthant row active or not; a cone's slack inside, at its apex or on its boundary) fix the KKT
equations of the exact problem, Newton's method solves them, and their linearization is
differentiated. α and x are then exact to rounding and the derivatives agree with diffcp's to ~1e-10,
one pose pair at a time, at a few times the smoothed derivatives' cost. Where the exact derivative does
not exist (no strict complementarity, multipliers not unique: face on face, an edge along a face,
a polytope vertex of more than three faces on a face, coincident origins) or the roles are too near
to changing to tell (a margin below ~1e-4), the result's status is ``Status.SMOOTHED`` and it holds the
smoothed derivatives at the default μ = 1e-9 instead. The signed-distance derivatives
(dcol.geom.distance) need barrier > 0.

Columns of every Jacobian: body a's pose, then body b's, in one of three parameterizations
(docs/conventions.md): ``"quaternion"`` (r 3, q 4: the raw components of the given quaternion, through its
normalization, as DCOL.jl), ``"mrp"`` (r 3, p 3: modified Rodrigues parameters p = v/(1 + w) of the
unit quaternion with w ≥ 0) and ``"rigid"`` (δp 3, δθ 3 for r ← r + δp, Q ← exp([δθ]×) Q in the world
frame). "quaternion" and "mrp" need the orientations as quaternions; "rigid" also takes rotation
matrices.

The functions of this module default to ``"quaternion"``, DCOL.jl's layout, so that a port of DCOL.jl
code gets the same matrices; the signed-distance derivatives (dcol.geom.distance) default to
``"rigid"``, the columns of the contacts and of the dynamics layer they feed. Pass
``parameterization=`` to choose.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np

from dcol import _native
from dcol.printing import summary_repr
from dcol.solvers import SolverSettings, Status
from dcol.typing import ArrayLike, FloatArray, Int8Array, Int32Array
from dcol.validation import checked_array, checked_instance, checked_threads

from .shapes import Capsule, Cone, Cylinder, Ellipsoid, Polygon, Polytope, Shape, ShapeOrShapes, Sphere

__all__ = [
    "DERIVATIVE_SETTINGS",
    "ProximityJacobian",
    "ProximityGradient",
    "ContactJacobian",
    "proximity_jacobian",
    "proximity_gradient",
    "contact_jacobian",
    "proximity_jacobian_batch",
    "proximity_gradient_batch",
    "contact_jacobian_batch",
    "ShapeParameterJacobian",
    "shape_parameter_jacobian",
]

_GRADIENT, _JACOBIAN, _CONTACT = 1, 2, 3  # DerivativeRequest of the native core

DERIVATIVE_SETTINGS = SolverSettings(barrier=1e-9, centrality_tol=1e-5)
"""Default solver settings of the derivative functions: the central path at μ = 1e-9, reached to 1e-5
(relative; the solver converges quadratically there, so this costs a fraction of an iteration over
1e-4). See the module docstring for the choice of μ."""


@dataclass(frozen=True)
class ProximityJacobian:
    """α, x and J = ∂(x, α)/∂(pose_a, pose_b): (4, P) with rows (x0, x1, x2, α), P = 14 for
    "quaternion", 12 otherwise (leading N axis on every field in the batch functions)."""

    alpha: float | FloatArray
    x: FloatArray
    jacobian: FloatArray
    status: Status | Int8Array
    iterations: int | Int32Array

    __repr__ = summary_repr


@dataclass(frozen=True)
class ProximityGradient:
    """α and ∂α/∂(pose_a, pose_b), (P,)."""

    alpha: float | FloatArray
    gradient: FloatArray
    status: Status | Int8Array
    iterations: int | Int32Array

    __repr__ = summary_repr


@dataclass(frozen=True)
class ContactJacobian:
    """Proximity values with the Jacobians of each with respect to (pose_a, pose_b) (P columns).

    alpha float, d_alpha (P,); x (3,), d_x (3, P); p_a, p_b (3,) contact points (DCOL eq. 29), d_p_a, d_p_b
    (3, P); distance float (DCOL eq. 30), d_distance (P,) (not differentiable at α = 1, where the distance is
    zero: there d_distance is the derivative of the side with α > 1); normal (3,) unit, from a to b,
    d_normal (3, P); status, iterations. In the batch functions every field has a leading N axis.
    """

    alpha: float | FloatArray
    x: FloatArray
    p_a: FloatArray
    p_b: FloatArray
    distance: float | FloatArray
    normal: FloatArray
    d_alpha: FloatArray
    d_x: FloatArray
    d_p_a: FloatArray
    d_p_b: FloatArray
    d_distance: FloatArray
    d_normal: FloatArray
    status: Status | Int8Array
    iterations: int | Int32Array

    __repr__ = summary_repr


def checked_derivative_settings(
    settings: SolverSettings | None, default: SolverSettings = DERIVATIVE_SETTINGS, exact_allowed: bool = True
) -> SolverSettings:
    """The solver settings of a derivative function: default when None; with exact_allowed=False a
    barrier of 0 (exact derivatives) is refused."""
    settings = checked_instance(settings, "settings", SolverSettings, default)
    if settings.barrier <= 0.0 and not exact_allowed:
        raise ValueError("settings.barrier must be > 0 for these derivatives (see dcol.geom.derivatives)")
    return settings


# _batch and _single leave the parameterization to the native check, whose error names it.
def _batch(
    a: ShapeOrShapes,
    r_a: ArrayLike,
    q_a: ArrayLike,
    b: ShapeOrShapes,
    r_b: ArrayLike,
    q_b: ArrayLike,
    request: int,
    parameterization: str,
    settings: SolverSettings | None,
    threads: int | None,
) -> dict[str, Any]:
    return _native.proximity_batch(
        a,
        r_a,
        q_a,
        b,
        r_b,
        q_b,
        checked_derivative_settings(settings),
        checked_threads(threads),
        request,
        parameterization,
    )


def _single(
    a: Shape,
    r_a: ArrayLike,
    q_a: ArrayLike,
    b: Shape,
    r_b: ArrayLike,
    q_b: ArrayLike,
    request: int,
    parameterization: str,
    settings: SolverSettings | None,
) -> tuple[Any, ...]:
    """One pose pair's derivatives: the fields of the request's result class, in order."""
    return _native.proximity_derivatives(
        a,
        r_a,
        q_a,
        b,
        r_b,
        q_b,
        checked_derivative_settings(settings),
        request,
        parameterization,
    )


def _proximity_jacobian(out: dict[str, Any]) -> ProximityJacobian:
    """ProximityJacobian from the native arrays (the contact points' and distance's are dropped)."""
    jacobian = np.concatenate([out["d_x"], out["d_alpha"][..., None, :]], axis=-2)
    return ProximityJacobian(out["alpha"], out["x"], jacobian, out["status"], out["iterations"])


def proximity_jacobian(
    a: Shape,
    r_a: ArrayLike,
    q_a: ArrayLike,
    b: Shape,
    r_b: ArrayLike,
    q_b: ArrayLike,
    *,
    parameterization: str = "quaternion",
    settings: SolverSettings | None = None,
) -> ProximityJacobian:
    """α, x and their Jacobian J = ∂(x, α)/∂(pose_a, pose_b) (DCOL.jl's ``proximity_jacobian``).

    Parameters
    ----------
    a, b : dcol.geom shapes. r_a, r_b : (3,) positions. q_a, q_b : (4,) quaternions ``[w, x, y, z]``
        (or (3, 3) rotation matrices with ``parameterization="rigid"``).
    parameterization : "quaternion" (default, as DCOL.jl: J is (4, 14)), "mrp" or "rigid" (J is (4, 12));
        module docstring. (distance_jacobian defaults to "rigid".)
    settings : SolverSettings, default DERIVATIVE_SETTINGS (barrier = 0: exact; module docstring).

    Returns
    -------
    ProximityJacobian: alpha float, x (3,), jacobian (4, P) rows (x0, x1, x2, α), status, iterations.
    """
    return ProximityJacobian(*_single(a, r_a, q_a, b, r_b, q_b, _JACOBIAN, parameterization, settings))


def proximity_gradient(
    a: Shape,
    r_a: ArrayLike,
    q_a: ArrayLike,
    b: Shape,
    r_b: ArrayLike,
    q_b: ArrayLike,
    *,
    parameterization: str = "quaternion",
    settings: SolverSettings | None = None,
) -> ProximityGradient:
    """α and ∂α/∂(pose_a, pose_b) alone, from the gradient of the Lagrangian at the optimum (no linear
    solve). Parameters as :func:`proximity_jacobian` (parameterization "quaternion" by default: P = 14);
    returns ProximityGradient (gradient (P,))."""
    return ProximityGradient(*_single(a, r_a, q_a, b, r_b, q_b, _GRADIENT, parameterization, settings))


def contact_jacobian(
    a: Shape,
    r_a: ArrayLike,
    q_a: ArrayLike,
    b: Shape,
    r_b: ArrayLike,
    q_b: ArrayLike,
    *,
    parameterization: str = "quaternion",
    settings: SolverSettings | None = None,
) -> ContactJacobian:
    """Contact points (DCOL eq. 29), distance (DCOL eq. 30), normal, α and x with their Jacobians to both poses.

    Parameters as :func:`proximity_jacobian` (parameterization "quaternion" by default: P = 14); returns
    ContactJacobian.
    """
    return ContactJacobian(*_single(a, r_a, q_a, b, r_b, q_b, _CONTACT, parameterization, settings))


def proximity_jacobian_batch(
    a: ShapeOrShapes,
    r_a: ArrayLike,
    q_a: ArrayLike,
    b: ShapeOrShapes,
    r_b: ArrayLike,
    q_b: ArrayLike,
    *,
    parameterization: str = "quaternion",
    settings: SolverSettings | None = None,
    threads: int | None = None,
) -> ProximityJacobian:
    """:func:`proximity_jacobian` for N pose pairs in one native call (arguments as
    dcol.geom.proximity_batch; parameterization "quaternion" by default: P = 14); every field of the
    result has a leading N axis."""
    return _proximity_jacobian(_batch(a, r_a, q_a, b, r_b, q_b, _JACOBIAN, parameterization, settings, threads))


def proximity_gradient_batch(
    a: ShapeOrShapes,
    r_a: ArrayLike,
    q_a: ArrayLike,
    b: ShapeOrShapes,
    r_b: ArrayLike,
    q_b: ArrayLike,
    *,
    parameterization: str = "quaternion",
    settings: SolverSettings | None = None,
    threads: int | None = None,
) -> ProximityGradient:
    """:func:`proximity_gradient` for N pose pairs in one native call; gradient is (N, P), P = 14 with the
    default parameterization "quaternion"."""
    out = _batch(a, r_a, q_a, b, r_b, q_b, _GRADIENT, parameterization, settings, threads)
    return ProximityGradient(out["alpha"], out["d_alpha"], out["status"], out["iterations"])


def contact_jacobian_batch(
    a: ShapeOrShapes,
    r_a: ArrayLike,
    q_a: ArrayLike,
    b: ShapeOrShapes,
    r_b: ArrayLike,
    q_b: ArrayLike,
    *,
    parameterization: str = "quaternion",
    settings: SolverSettings | None = None,
    threads: int | None = None,
) -> ContactJacobian:
    """:func:`contact_jacobian` for N pose pairs in one native call (parameterization "quaternion" by
    default: P = 14); leading N axis on every field."""
    return ContactJacobian(**_batch(a, r_a, q_a, b, r_b, q_b, _CONTACT, parameterization, settings, threads))


@dataclass(frozen=True)
class ShapeParameterJacobian:
    """α, x and the derivatives of (x, α) with respect to the shapes' parameters.

    jacobians : dict keyed (side, name), side "a" or "b", name the shape's attribute: polytope (and
        box) "A", "b"; sphere "R"; capsule, cylinder "R", "L"; cone "H", "beta"; ellipsoid "P"; polygon
        "C", "d", "R"; plus "theta" for a polytope given a parameterization. Each is (4,) + the
        attribute's shape, rows (x0, x1, x2, α): e.g. ("a", "A") is (4, m, 3), ("b", "R") is (4,).
        Ellipsoid P: [:, i, j] is the derivative with respect to P_ij as an entry of a general matrix
        entering through its symmetric part (P + Pᵀ)/2, so [:, i, j] = [:, j, i].
    """

    alpha: float
    x: FloatArray
    jacobians: dict[tuple[str, str], FloatArray]
    status: Status
    iterations: int

    __repr__ = summary_repr


def _named_parameters(shape: Shape, jacobian: FloatArray) -> dict[str, FloatArray]:
    """The native (4, count) block of one shape as {name: (4,) + attribute shape}."""
    if isinstance(shape, Polytope):
        m = len(shape.b)
        return {"A": jacobian[:, : 3 * m].reshape(4, m, 3), "b": jacobian[:, 3 * m :]}
    if isinstance(shape, Polygon):
        m = len(shape.d)
        return {"C": jacobian[:, : 2 * m].reshape(4, m, 2), "d": jacobian[:, 2 * m : 3 * m], "R": jacobian[:, 3 * m]}
    if isinstance(shape, Sphere):
        return {"R": jacobian[:, 0]}
    if isinstance(shape, (Capsule, Cylinder)):
        return {"R": jacobian[:, 0], "L": jacobian[:, 1]}
    if isinstance(shape, Cone):
        return {"H": jacobian[:, 0], "beta": jacobian[:, 1]}
    if isinstance(shape, Ellipsoid):
        # The native core differentiates the upper Cholesky factor U (P = UᵀU). For a symmetric dP,
        # dU = Φ(U⁻ᵀ dP U⁻¹) U with Φ keeping the upper triangle and halving the diagonal, so
        # ⟨Ū, dU⟩ = ⟨U⁻¹ S U⁻ᵀ, dP⟩ with S the symmetric matrix of Φ's adjoint applied to Ū Uᵀ.
        U = np.linalg.cholesky(shape.P).T
        U_inv = np.linalg.inv(U)
        out = np.empty((4, 3, 3))
        for row in range(4):
            Y = jacobian[row].reshape(3, 3) @ U.T
            strict = np.triu(Y, 1)
            S = 0.5 * (strict + strict.T + np.diag(np.diag(Y)))
            out[row] = U_inv @ S @ U_inv.T
        return {"P": out}
    raise TypeError(f"unknown shape {type(shape).__name__}")


def _polytope_parameterization(
    shape: Shape, dA_dtheta: ArrayLike, db_dtheta: ArrayLike, side: str
) -> tuple[FloatArray, FloatArray]:
    """(dA/dθ (m, 3, p), db/dθ (m, p)) checked against the polytope of one side."""
    if not isinstance(shape, Polytope):
        raise TypeError(f"theta_{side} is for polytopes; shape {side} is a {type(shape).__name__}")
    faces = ("len(A)", len(shape.b))
    dA = checked_array(dA_dtheta, f"theta_{side} dA/dθ", (faces, 3, "p"))
    db = checked_array(db_dtheta, f"theta_{side} db/dθ", (faces, ("p", dA.shape[2])))
    return dA, db


def shape_parameter_jacobian(
    a: Shape,
    r_a: ArrayLike,
    q_a: ArrayLike,
    b: Shape,
    r_b: ArrayLike,
    q_b: ArrayLike,
    *,
    theta_a: tuple[ArrayLike, ArrayLike] | None = None,
    theta_b: tuple[ArrayLike, ArrayLike] | None = None,
    settings: SolverSettings | None = None,
) -> ShapeParameterJacobian:
    """Derivatives of (x, α) with respect to each shape's own parameters at one pose pair.

    Parameters
    ----------
    a, b : dcol.geom shapes; r_a, r_b : (3,); q_a, q_b : (4,) quaternions or (3, 3) rotation matrices.
    theta_a, theta_b : optional, for a polytope A(θ) y ≤ b(θ) of the user's own parameterization:
        (dA/dθ (m, 3, p), db/dθ (m, p)) at the current θ; the result then holds (side, "theta") (4, p).
    settings : SolverSettings, default DERIVATIVE_SETTINGS (barrier = 0: exact; module docstring).

    Returns
    -------
    ShapeParameterJacobian. The offset poses are not differentiated.
    """
    out = _native.shape_parameter_jacobian(a, r_a, q_a, b, r_b, q_b, checked_derivative_settings(settings))
    jacobians: dict[tuple[str, str], FloatArray] = {}
    for side, shape, theta in (("a", a, theta_a), ("b", b, theta_b)):
        named = _named_parameters(shape, out[side])
        jacobians.update({(side, name): value for name, value in named.items()})
        if theta is not None:
            dA, db = _polytope_parameterization(shape, *theta, side)
            jacobians[side, "theta"] = np.einsum("kmj,mjp->kp", named["A"], dA) + named["b"] @ db
    return ShapeParameterJacobian(out["alpha"], out["x"], jacobians, out["status"], out["iterations"])
