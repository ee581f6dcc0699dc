"""Linear complementarity problems and their gradients by the clamping set (Nimble §IV, App. B).

The LCP: find f with ``w = A f + b``, ``f ≥ 0``, ``w ≥ 0``, ``fᵀw = 0``. Each index is *clamping*
(f > 0, w = 0), *separating* (f = 0, w > 0) or *tied* (both zero). Once the clamping set C is
known the LCP is linear: ``A_CC f_C + b_C = 0``, ``f_S = 0``. :func:`solve_lcp` uses that twice:

* stabilization (App. B): the solver's f is replaced by the least-squares-minimal solution on its
  clamping set, ``f_C = −A_CC⁺ b_C``, which is unique even when A_CC is rank deficient (two identical
  contacts) and exact to rounding;
* warm start (App. B): given the previous step's clamping set, the stabilized f on that set is tried
  first and kept when it verifies (f_C ≥ 0, w_S ≥ 0), skipping the pivoting solve.

Gradients (§IV-A, IV-C) follow from the same linear system: with P = I − A_CC⁺A_CC,
``df_C = −A_CC⁺(dA_CC f_C + db_C) + P dA_CCᵀ A_CC⁺ᵀ f_C`` and ``df_S = 0``; the second term is the
pseudo-inverse's (eq. 22), zero when A_CC is invertible. Tied indices are taken as separating, one of
the two valid subgradients (§IV-B).
"""

import enum
from dataclasses import dataclass

import numpy as np

from dcol import _native

__all__ = ["LCPStatus", "LCPSolution", "solve_lcp", "lcp_jvp", "lcp_vjp", "lcp_jacobian"]


class LCPStatus(enum.IntEnum):
    """Outcome of an LCP solve."""

    SOLVED = 0
    UNSOLVABLE = 1  # Lemke's ray termination: no solution (or A outside the classes it processes)
    ITERATION_LIMIT = 2
    INVALID_PROBLEM = 3  # e.g. a zero diagonal for Gauss–Seidel


@dataclass(frozen=True)
class LCPSolution:
    """Solution of ``w = A f + b, f ≥ 0, w ≥ 0, fᵀw = 0``.

    f, w : (n,) float64.
    clamping : (n,) bool, indices with f > 0 (the set C); tied : (n,) bool, f = w = 0 (taken as
        separating by the gradients).
    status : LCPStatus; iterations : int (pivots or sweeps; 0 for a warm-start hit).
    residual : float, ‖min(f, w)‖∞ of the returned f (natural residual).
    warm_start_hit : bool, whether the warm start's clamping set solved the problem.
    """

    f: np.ndarray
    w: np.ndarray
    clamping: np.ndarray
    tied: np.ndarray
    status: LCPStatus
    iterations: int
    residual: float
    warm_start_hit: bool = False


def _problem(A, b):
    A = np.asarray(A, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if b.ndim != 1:
        raise ValueError(f"b must have shape (n,), got {b.shape}")
    if A.shape != (b.size, b.size):
        raise ValueError(f"A must have shape (n, n) = ({b.size}, {b.size}) to match b, got {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError("A must be finite (no NaN or inf)")
    if not np.all(np.isfinite(b)):
        raise ValueError("b must be finite (no NaN or inf)")
    return np.ascontiguousarray(A), np.ascontiguousarray(b)


def _tolerances(A, b, f, tol):
    """Absolute thresholds for 'zero' in f and in w."""
    f_scale = max(1.0, float(np.abs(f).max(initial=0.0)))
    w_scale = max(1.0, float(np.abs(b).max(initial=0.0)), float(np.abs(A).max(initial=0.0)) * f_scale)
    return tol * f_scale, tol * w_scale


def _on_clamping_set(A, b, clamping):
    """Least-squares-minimal f with f_S = 0 and A_CC f_C + b_C = 0 (App. B), and its w."""
    f = np.zeros_like(b)
    if clamping.any():
        f[clamping] = -np.linalg.lstsq(A[np.ix_(clamping, clamping)], b[clamping], rcond=None)[0]
    return f, A @ f + b


def _verified(A, b, f, w, clamping, tol):
    """Whether (f, w) on this clamping set solves the LCP within the tolerances."""
    f_tol, w_tol = _tolerances(A, b, f, tol)
    return (np.all(f[clamping] >= -f_tol) and np.all(w[~clamping] >= -w_tol)
            and np.all(np.abs(w[clamping]) <= w_tol))


def _solution(A, b, f, status, iterations, tol, stabilize, warm_start_hit=False):
    w = A @ f + b
    f_tol, w_tol = _tolerances(A, b, f, tol)
    clamping = (f > f_tol) & (f >= w)
    if stabilize and status == LCPStatus.SOLVED:
        # Tied indices join the clamping set first: for identical contacts that spreads the impulse
        # evenly, the least-squares-minimal solution (App. B); failing that, the clamping set alone.
        tied = ~clamping & (np.abs(f) <= f_tol) & (np.abs(w) <= w_tol)
        for candidate in ((clamping | tied) if tied.any() else clamping, clamping):
            f_stable, w_stable = _on_clamping_set(A, b, candidate)
            if _verified(A, b, f_stable, w_stable, candidate, tol):
                f, w = np.where(candidate, np.maximum(f_stable, 0.0), 0.0), w_stable
                clamping = candidate & (f > f_tol)
                break
    tied = ~clamping & (np.abs(f) <= f_tol) & (np.abs(w) <= w_tol)
    residual = float(np.abs(np.minimum(f, w)).max(initial=0.0))
    for array in (f, w, clamping, tied):
        array.setflags(write=False)
    return LCPSolution(f, w, clamping, tied, LCPStatus(status), iterations, residual, warm_start_hit)


def solve_lcp(A, b, *, method="lemke", warm_start=None, tol=1e-9, max_iterations=None, stabilize=True):
    """Solve the LCP ``w = A f + b, f ≥ 0, w ≥ 0, fᵀw = 0``.

    A : (n, n), b : (n,) finite.
    method : ``"lemke"`` (complementary pivoting, exact: P-matrices, and positive semidefinite A when
        a solution exists) or ``"pgs"`` (projected Gauss–Seidel: symmetric positive semidefinite A
        with a positive diagonal, warm-started from the previous f when warm_start is a solution).
    warm_start : a previous LCPSolution (or an (n,) bool clamping mask) whose clamping set is tried
        first (Nimble App. B); ``warm_start_hit`` says whether it solved the problem.
    tol : relative tolerance for zero in f and w (and Gauss–Seidel's stopping residual).
    max_iterations : pivots (default 10 (n + 1)) or sweeps (default 10000).
    stabilize : replace the solver's f by the least-squares-minimal one on its clamping set.

    Returns an LCPSolution; a failed solve says so in ``status`` (its f is the solver's last iterate).
    """
    A, b = _problem(A, b)
    n = b.size
    if method not in ("lemke", "pgs"):
        raise ValueError(f"method must be 'lemke' or 'pgs', got {method!r}")
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be finite and > 0, got {tol!r}")
    previous_f = None
    if warm_start is not None:
        clamping = warm_start.clamping if isinstance(warm_start, LCPSolution) else np.asarray(warm_start, dtype=bool)
        if clamping.shape != (n,):
            raise ValueError(f"warm_start's clamping set must have shape ({n},), got {clamping.shape}")
        f, w = _on_clamping_set(A, b, clamping)
        if _verified(A, b, f, w, clamping, tol):
            return _solution(A, b, np.where(clamping, np.maximum(f, 0.0), 0.0), LCPStatus.SOLVED, 0, tol,
                             stabilize=False, warm_start_hit=True)
        if isinstance(warm_start, LCPSolution) and warm_start.f.shape == (n,):
            previous_f = warm_start.f
    if method == "lemke":
        limit = 10 * (n + 1) if max_iterations is None else int(max_iterations)
        f, status, iterations, _ = _native.lcp.lemke(A, b, limit)
    else:
        limit = 10000 if max_iterations is None else int(max_iterations)
        f0 = np.zeros(n) if previous_f is None else np.maximum(previous_f, 0.0)
        f, status, iterations, _ = _native.lcp.pgs(A, b, None, None, None, None, f0, limit, tol)
    return _solution(A, b, f, status, iterations, tol, stabilize)


def _clamped_system(solution, A):
    """(C mask, A_CC⁺, projector I − A_CC⁺ A_CC) of a solution's clamping set."""
    A = np.asarray(A, dtype=np.float64)
    C = np.asarray(solution.clamping)
    A_CC = A[np.ix_(C, C)]
    pinv = np.linalg.pinv(A_CC, rcond=1e-10)
    return C, pinv, np.eye(int(C.sum())) - pinv @ A_CC


def lcp_jvp(solution, A, dA, db):
    """Directional derivative df of the solution f(A, b) along (dA (n, n), db (n,)); (n,)."""
    C, pinv, projector = _clamped_system(solution, A)
    dA = np.asarray(dA, dtype=np.float64)
    db = np.asarray(db, dtype=np.float64)
    f_C = solution.f[C]
    dA_CC = dA[np.ix_(C, C)]
    df = np.zeros_like(solution.f)
    df[C] = -pinv @ (dA_CC @ f_C + db[C]) + projector @ (dA_CC.T @ (pinv.T @ f_C))
    return df


def lcp_vjp(solution, A, grad_f):
    """(∂ℓ/∂A (n, n), ∂ℓ/∂b (n,)) from ∂ℓ/∂f (n,): the transpose of lcp_jvp."""
    C, pinv, projector = _clamped_system(solution, A)
    g = np.asarray(grad_f, dtype=np.float64)[C]
    f_C = solution.f[C]
    y = pinv.T @ g
    grad_A = np.zeros((solution.f.size,) * 2)
    grad_b = np.zeros(solution.f.size)
    grad_b[C] = -y
    grad_A[np.ix_(C, C)] = -np.outer(y, f_C) + np.outer(pinv.T @ f_C, projector @ g)
    return grad_A, grad_b


def lcp_jacobian(solution, A):
    """(∂f/∂A (n, n, n) with [:, i, j] = ∂f/∂A_ij, ∂f/∂b (n, n)) at a solution."""
    C, pinv, projector = _clamped_system(solution, A)
    n = solution.f.size
    f_C = solution.f[C]
    idx = np.flatnonzero(C)
    df_db = np.zeros((n, n))
    df_db[np.ix_(idx, idx)] = -pinv
    df_dA = np.zeros((n, n, n))
    u = pinv.T @ f_C
    # ∂f_C/∂A_kl for k, l in C: −A⁺[:, k] f_l + P[:, l] u_k.
    df_dA[np.ix_(idx, idx, idx)] = -pinv[:, :, None] * f_C[None, None, :] + projector[:, None, :] * u[None, :, None]
    return df_dA, df_db
