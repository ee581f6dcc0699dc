"""Mixed LCP by an interior-point method, and its KKT backward pass (LCP-physics App. B,
LCP-physics eqs. 24–32, after Mattingley & Boyd 2012 and OptNet):

    M x + Aᵀ y + Gᵀ z + q = 0,   A x = 0,   G x + F z + s = h,   s ≥ 0, z ≥ 0, sᵀz = 0.

The physics step's LCP (LCP-physics eq. 23) has this form with M the mass matrix, A the equality-constraint
Jacobian, G the contact and friction Jacobians and F the friction-cone coupling; a plain LCP
w = A f + b is the case n = p = 0, F = −A, h = b (z = f, s = w).

Backward pass: at the solution, differentiating the three equations with the complementarity row
written as D(z)(G x + F z − h) = 0 gives the KKT matrix
``K = [M  Gᵀ  Aᵀ; D(z)G  D(Gx + Fz − h) + D(z)F  0; A  0  0]`` (LCP-physics eq. 28, with the D(z) on F
that the differential carries). With ``[d_x; d_z; d_y] = K⁻ᵀ [∂ℓ/∂x; ∂ℓ/∂z; ∂ℓ/∂y]`` (LCP-physics
eq. 29), LCP-physics eq. 32 gives the cotangents of every input. Valid where the solution is strictly
complementary; the interior point's last iterate stands in for the exact solution (its s∘z is ≤ tol).
There Gx + Fz − h = −s, so K is the interior point's Newton matrix with its middle rows scaled by
D(z), and the native solve factorizes that (with M diagonal, by the Schur complement on (z, y) the
forward solves use) and returns [d_x; z∘d_z; d_y].
"""

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from dcol import _native
from dcol.printing import summary_repr
from dcol.typing import ArrayLike, FloatArray
from dcol.validation import checked_array, checked_iterations, checked_positive

from .lcp import LCPStatus, returned_status

__all__ = ["MLCPSolution", "MLCPCotangents", "solve_mlcp", "mlcp_vjp"]


@dataclass(frozen=True)
class MLCPSolution:
    """x (n,), y (p,), z (m,), s (m,) float64; status : LCPStatus; iterations : int;
    residual : float (largest scaled residual of LCP-physics eq. 24 or the mean s∘z)."""

    x: FloatArray
    y: FloatArray
    z: FloatArray
    s: FloatArray
    status: LCPStatus
    iterations: int
    residual: float

    __repr__ = summary_repr


class MLCPCotangents(NamedTuple):
    """∂ℓ/∂(M, q, A, G, F, h), shaped like the inputs (LCP-physics eq. 32)."""

    M: FloatArray
    q: FloatArray
    A: FloatArray
    G: FloatArray
    F: FloatArray
    h: FloatArray


def _problem(
    M: ArrayLike, q: ArrayLike, G: ArrayLike, F: ArrayLike, h: ArrayLike, A: ArrayLike | None
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    q = checked_array(q, "q", ("n",))
    h = checked_array(h, "h", ("m",))
    n, m = (("len(q)", q.size),), (("len(h)", h.size),)
    return (
        checked_array(M, "M", n + n),
        q,
        np.zeros((0, q.size)) if A is None else checked_array(A, "A", ("p",) + n),
        checked_array(G, "G", m + n),
        checked_array(F, "F", m + m),
        h,
    )


def solve_mlcp(
    M: ArrayLike,
    q: ArrayLike,
    G: ArrayLike,
    F: ArrayLike,
    h: ArrayLike,
    *,
    A: ArrayLike | None = None,
    tol: float = 1e-10,
    max_iterations: int = 100,
) -> MLCPSolution:
    """Solve the mixed LCP of the module docstring by the primal-dual interior-point method.

    M : (n, n), q : (n,), G : (m, n), F : (m, m), h : (m,), A : (p, n) or None (no equalities).
    tol : stopping tolerance on the scaled residuals and on the mean complementarity sᵀz / m.
    Returns an MLCPSolution; status ITERATION_LIMIT or INVALID_PROBLEM (a singular Newton system)
    when it did not converge.
    """
    M, q, A, G, F, h = _problem(M, q, G, F, h, A)
    tol = checked_positive(tol, "tol")
    limit = checked_iterations(max_iterations)
    x, y, z, s, status, iterations, residual = _native.lcp.mlcp_ipm(M, q, A, G, F, h, tol, limit)
    return MLCPSolution(x, y, z, s, returned_status(status, x, y, z, s), iterations, residual)


def mlcp_vjp(
    solution: MLCPSolution,
    M: ArrayLike,
    q: ArrayLike,
    G: ArrayLike,
    F: ArrayLike,
    h: ArrayLike,
    *,
    A: ArrayLike | None = None,
    grad_x: ArrayLike | None = None,
    grad_z: ArrayLike | None = None,
    grad_y: ArrayLike | None = None,
) -> MLCPCotangents:
    """MLCPCotangents from ∂ℓ/∂x (n,), ∂ℓ/∂z (m,), ∂ℓ/∂y (p,) (omitted: zero), LCP-physics eqs. 29–32."""
    M, q, A, G, F, h = _problem(M, q, G, F, h, A)
    n, m, p = q.size, h.size, A.shape[0]
    x, y, z = solution.x, solution.y, solution.z
    rhs = np.concatenate(
        [
            np.zeros(size) if grad is None else checked_array(grad, name, ((length, size),))
            for grad, name, length, size in (
                (grad_x, "grad_x", "len(q)", n),
                (grad_z, "grad_z", "len(h)", m),
                (grad_y, "grad_y", "len(A)", p),
            )
        ]
    )
    try:
        adjoint = _native.lcp.mlcp_kkt_adjoint(M, A, G, F, z, solution.s, rhs)
    except ValueError as err:  # the KKT matrix is singular, as numpy's solve would say
        raise np.linalg.LinAlgError(str(err)) from err
    d_x, z_d_z, d_y = adjoint[:n], adjoint[n : n + m], adjoint[n + m :]
    return MLCPCotangents(
        M=-0.5 * (np.outer(d_x, x) + np.outer(x, d_x)),
        q=-d_x,
        A=-(np.outer(d_y, x) + np.outer(y, d_x)),
        G=-(np.outer(z_d_z, x) + np.outer(z, d_x)),
        F=-np.outer(z_d_z, z),
        h=z_d_z,
    )
