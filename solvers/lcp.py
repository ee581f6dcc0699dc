"""Linear complementarity problems, plain and boxed, and their gradients by the clamping set
(Nimble §IV, App. A–B).

The LCP: find f with ``w = A f + b``, ``f ≥ 0``, ``w ≥ 0``, ``fᵀw = 0``. The boxed LCP replaces
f ≥ 0 by ``lo ≤ f ≤ hi`` (w ≥ 0 where f = lo, w ≤ 0 where f = hi, w = 0 in between), where an entry
with a friction index j has the bounds ``±mu f_j`` (Coulomb friction on contact j's normal impulse,
Nimble App. A; ODE's "findex"). The plain LCP is the boxed one with lo = 0, hi = ∞.

Every index is *clamping* (strictly inside its bounds, w = 0) or *bounded* (at a bound); an index at
a bound with w = 0 too is *tied*. Once the sets are known the problem is linear: with
``f_B = E f_C + c`` (E holds ±mu where a friction entry is at the bound of a clamping normal, c the
fixed bounds), ``K f_C + r = 0`` with ``K = A_CC + A_CB E`` and ``r = b_C + A_CB c`` (Nimble App. A's
modified A_CC). :func:`solve_lcp` and :func:`solve_boxed_lcp` use that twice:

* stabilization (Nimble App. B): the solver's f is replaced by the least-squares-minimal solution on its
  sets, ``f_C = −K⁺ r`` — unique even when K is rank deficient (identical contacts), exact to
  rounding; tied indices are tried in the clamping set first, which spreads impulses evenly;
* warm start (Nimble App. B): the previous solution's sets are tried first and kept when they verify.

Gradients (Nimble §IV-A, §IV-C, App. A): ``df_C = −K⁺(dK f_C + dr) + P dKᵀ K⁺ᵀ f_C`` with P = I − K⁺K (the
pseudo-inverse's term, Nimble eq. 22, zero when K is invertible) and ``df_B = dE f_C + E df_C + dc``, with
respect to A, b, lo, hi and mu. Tied indices stay bounded: one of the valid subgradients (Nimble §IV-B).
"""

from __future__ import annotations

import enum
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
import scipy.linalg

from dcol import _native
from dcol.printing import summary_repr
from dcol.typing import ArrayLike, BoolArray, FloatArray, IntArray
from dcol.validation import checked_array, checked_iterations, checked_positive, float_array

__all__ = [
    "LCPStatus",
    "LCPBounds",
    "returned_status",
    "LCPSolution",
    "LCPCotangents",
    "solve_lcp",
    "solve_boxed_lcp",
    "solve_boxed_lcp_unchecked",
    "lcp_jvp",
    "lcp_vjp",
    "lcp_jacobian",
    "complementarity_aware",
]


class LCPStatus(enum.IntEnum):
    """Outcome of an LCP solve."""

    SOLVED = 0
    UNSOLVABLE = 1  # Lemke's ray termination: no solution (or A outside the classes it processes)
    ITERATION_LIMIT = 2
    INVALID_PROBLEM = 3  # e.g. a zero diagonal for Gauss–Seidel
    # The returned solution is not finite (its numbers overflowed), or a solver that ended by its own
    # criterion (Lemke's last pivot, the interior point's stopping test) left it with a natural residual
    # above tol: round-off in the pivots, pairs the interior point resolves to about √tol.
    NUMERICAL_ERROR = 4


def returned_status(status: int, *solution: FloatArray) -> LCPStatus:
    """The status of a returned solution: the solver's, or NUMERICAL_ERROR where the solution holds a
    number that is not finite, whatever the solver's iterations reported."""
    if not all(np.isfinite(array).all() for array in solution):
        return LCPStatus.NUMERICAL_ERROR
    return LCPStatus(status)


class LCPBounds(NamedTuple):
    """The bounds of a boxed LCP, (n,) each: fixed bounds lo ≤ f ≤ hi where friction_index is −1, else
    ``±mu f_j`` with j = friction_index (a friction entry bounded by its normal impulse j)."""

    lo: FloatArray
    hi: FloatArray
    friction_index: IntArray
    mu: FloatArray

    def at(self, f: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Bounds (low, high) of every entry at the impulses f."""
        friction = self.friction_index >= 0
        high = np.where(friction, self.mu * np.maximum(f[np.maximum(self.friction_index, 0)], 0.0), self.hi)
        return np.where(friction, -high, self.lo), high


def _plain_bounds(n: int) -> LCPBounds:
    return LCPBounds(np.zeros(n), np.full(n, np.inf), np.full(n, -1, dtype=np.int64), np.zeros(n))


@dataclass(frozen=True)
class LCPSolution:
    """Solution of a (boxed) LCP.

    f, w : (n,) float64, w = A f + b.
    clamping : (n,) bool, strictly inside the bounds with w = 0 (the set C).
    at_lower, at_upper : (n,) bool, at a bound (the set B; for the plain LCP at_lower means f = 0).
    tied : (n,) bool, at a bound with w = 0 too.
    status : LCPStatus; iterations : int (pivots or sweeps; 0 for a warm-start hit).
    residual : float, ‖f − clamp(f − w, lo, hi)‖∞ of the returned f, zero exactly at a solution.
    warm_start_hit : bool, whether the warm start's sets solved the problem.
    bounds : the problem's bounds (lo, hi, friction_index, mu), which the gradients need.
    """

    f: FloatArray
    w: FloatArray
    clamping: BoolArray
    at_lower: BoolArray
    at_upper: BoolArray
    tied: BoolArray
    status: LCPStatus
    iterations: int
    residual: float
    warm_start_hit: bool
    bounds: LCPBounds

    __repr__ = summary_repr


class LCPCotangents(NamedTuple):
    """∂ℓ/∂(A (n, n), b (n,), lo (n,), hi (n,), mu (n,)) from ∂ℓ/∂f (lcp_vjp); A is the pair
    (left (2, n), right (2, n)) of its low-rank form with ``lcp_vjp(..., low_rank_A=True)``."""

    A: FloatArray | tuple[FloatArray, FloatArray]
    b: FloatArray
    lo: FloatArray
    hi: FloatArray
    mu: FloatArray


def _problem(A: ArrayLike, b: ArrayLike) -> tuple[FloatArray, FloatArray]:
    b = checked_array(b, "b", ("n",))
    return checked_array(A, "A", (("n", b.size), ("n", b.size))), b


def _classify(
    A: FloatArray, b: FloatArray, f: FloatArray, w: FloatArray, bounds: LCPBounds, tol: float
) -> tuple[BoolArray, BoolArray, BoolArray, BoolArray]:
    """(clamping, at_lower, at_upper, tied) of a solution: of each complementary pair the smaller one
    is the zero one, with tolerances relative to the problem's scale (native lcp/active_set.hpp)."""
    sets, tied = _native.lcp.classify(A, b, *bounds, f, w, tol)
    return sets == 0, sets == 1, sets == 2, tied


class _BoundedMap(NamedTuple):
    """f_B = E f_C + c on the bounded set B (indices into f) given the clamping set C."""

    B: IntArray
    C: IntArray
    E: FloatArray  # (|B|, |C|)
    c: FloatArray  # (|B|,)
    sign: FloatArray  # (|B|,) +1 at the upper bound, −1 at the lower
    normal: IntArray  # (|B|,) friction entries' normal index into f, −1 for fixed bounds
    normal_column: IntArray  # (|B|,) that normal's column in E when it clamps, else −1
    normal_row: IntArray  # (|B|,) that normal's row in B when it is bounded, else −1


def _bounded_map(
    bounds: LCPBounds, f: FloatArray, clamping: BoolArray, at_lower: BoolArray, at_upper: BoolArray
) -> _BoundedMap:
    """Fixed bounds go to c; a friction entry is ±mu f_j: a column of E when its normal j clamps,
    else a constant (f_j sits at its own bound)."""
    B = np.flatnonzero(at_lower | at_upper)
    C = np.flatnonzero(clamping)
    column = np.full(f.size, -1)
    column[C] = np.arange(C.size)
    row = np.full(f.size, -1)
    row[B] = np.arange(B.size)
    sign = np.where(at_upper[B], 1.0, -1.0)
    normal = bounds.friction_index[B]
    friction = normal >= 0
    normal_column = np.where(friction, column[np.maximum(normal, 0)], -1)
    normal_row = np.where(friction & (normal_column < 0), row[np.maximum(normal, 0)], -1)
    E = np.zeros((B.size, C.size))
    on_clamping = np.flatnonzero(normal_column >= 0)
    E[on_clamping, normal_column[on_clamping]] = sign[on_clamping] * bounds.mu[B][on_clamping]
    c = np.where(friction, 0.0, np.where(at_upper[B], bounds.hi[B], bounds.lo[B]))
    on_bound = friction & (normal_column < 0)
    c[on_bound] = sign[on_bound] * bounds.mu[B][on_bound] * f[normal[on_bound]]
    return _BoundedMap(B, C, E, c, sign, normal, normal_column, normal_row)


def _solution(
    A: FloatArray,
    b: FloatArray,
    bounds: LCPBounds,
    f: FloatArray,
    status: int,
    iterations: int,
    tol: float,
    stabilize: bool,
    warm_start_hit: bool = False,
) -> LCPSolution:
    # An iterate stopped by the iteration limit usually has the right sets already: solving on them
    # exactly (tied entries joining the clamping set first, which spreads an impulse evenly over
    # identical contacts: the least-squares-minimal solution of Nimble App. B) and verifying turns it into a
    # solution.
    if stabilize and status in (LCPStatus.SOLVED, LCPStatus.ITERATION_LIMIT):
        f, polished = _native.lcp.polish(A, b, *bounds, f, tol)
        if polished:
            status = LCPStatus.SOLVED
    # SOLVED is the returned f's, in a measure that is the same for the problem in any units: a solver's
    # own stopping test can pass short of it.
    if status == LCPStatus.SOLVED and not _native.lcp.natural_residual(A, b, *bounds, f) <= tol:
        status = LCPStatus.NUMERICAL_ERROR
    w = A @ f + b
    clamping, at_lower, at_upper, tied = _classify(A, b, f, w, bounds, tol)
    low, high = bounds.at(f)
    residual = float(np.abs(f - np.clip(f - w, low, high)).max(initial=0.0))
    status = returned_status(status, f, w)
    for array in (f, w, clamping, at_lower, at_upper, tied):
        array.setflags(write=False)
    return LCPSolution(
        f, w, clamping, at_lower, at_upper, tied, LCPStatus(status), iterations, residual, warm_start_hit, bounds
    )


def _warm_start(
    A: FloatArray, b: FloatArray, bounds: LCPBounds, warm_start: LCPSolution | None, tol: float
) -> LCPSolution | None:
    """A solution from the previous step's sets, or None when they do not verify."""
    if warm_start is None:
        return None
    if not isinstance(warm_start, LCPSolution):
        raise TypeError("warm_start must be a previous LCPSolution")
    if warm_start.f.shape != b.shape:
        raise ValueError(f"warm_start is for {warm_start.f.size} unknowns, the problem has {b.size}")
    sets = np.select([warm_start.at_lower, warm_start.at_upper], [1, 2], 0).astype(np.int8)
    f, _, verified = _native.lcp.solve_on_sets(A, b, *bounds, sets, tol)
    if not verified:
        return None
    return _solution(A, b, bounds, f, LCPStatus.SOLVED, 0, tol, stabilize=False, warm_start_hit=True)


def _require_monotone(A: FloatArray, method: str, symmetric: bool) -> None:
    """Gauss–Seidel needs A symmetric positive semidefinite, the interior point A + Aᵀ ⪰ 0."""
    scale = float(np.abs(A).max(initial=0.0))  # relative to A's own size, whatever its units
    if symmetric and not np.allclose(A, A.T, rtol=0.0, atol=1e-12 * scale):
        raise ValueError(f"A must be symmetric for method {method!r}")
    if A.size and np.linalg.eigvalsh(0.5 * (A + A.T)).min() < -1e-10 * scale:
        raise ValueError(
            f"A must be positive semidefinite for method {method!r} "
            f"({'A' if symmetric else 'A + Aᵀ'} has a negative eigenvalue)"
        )


def solve_lcp(
    A: ArrayLike,
    b: ArrayLike,
    *,
    method: str = "lemke",
    warm_start: LCPSolution | None = None,
    tol: float = 1e-9,
    max_iterations: int | None = None,
    stabilize: bool = True,
) -> LCPSolution:
    """Solve the LCP ``w = A f + b, f ≥ 0, w ≥ 0, fᵀw = 0``.

    A : (n, n), b : (n,) finite.
    method : ``"lemke"`` (complementary pivoting, exact: P-matrices, and positive semidefinite A when
        a solution exists), ``"pgs"`` (projected Gauss–Seidel: symmetric positive semidefinite A
        with a positive diagonal; starts from warm_start's f when given) or ``"ipm"`` (the mixed-LCP
        interior-point method of dcol.solvers.mlcp with F = −A, h = b; monotone A).
    warm_start : a previous LCPSolution whose sets are tried first (Nimble App. B);
        ``warm_start_hit`` says whether they solved the problem.
    tol : relative tolerance for zero in f and w (and Gauss–Seidel's stopping residual).
    max_iterations : pivots (default 10 (n + 1)), sweeps (default 10000) or interior-point
        iterations (default 100).
    stabilize : replace the solver's f by the least-squares-minimal one on its clamping set (an
        iterate stopped by the iteration limit too: it counts as solved when that verifies).

    Returns an LCPSolution; a failed solve says so in ``status`` (its f is the solver's last iterate).
    The status is SOLVED only for an f whose natural residual, relative to the problem's scale (the same
    for A, b in any units), is within tol; where Lemke's pivoting or the interior point ended on one above
    it, and stabilize did not make it exact, NUMERICAL_ERROR.
    """
    A, b = _problem(A, b)
    if method not in ("lemke", "pgs", "ipm"):
        raise ValueError(f"method must be 'lemke', 'pgs' or 'ipm', got {method!r}")
    tol = checked_positive(tol, "tol")
    limit = None if max_iterations is None else checked_iterations(max_iterations)
    if method != "lemke":
        _require_monotone(A, method, symmetric=method == "pgs")
    bounds = _plain_bounds(b.size)
    hit = _warm_start(A, b, bounds, warm_start, tol)
    if hit is not None:
        return hit
    if method == "lemke":
        f, status, iterations, _ = _native.lcp.lemke(A, b, 10 * (b.size + 1) if limit is None else limit)
    elif method == "pgs":
        f0 = np.zeros(b.size) if warm_start is None else np.maximum(warm_start.f, 0.0)
        sweeps = 10000 if limit is None else limit
        f, status, iterations, _ = _native.lcp.pgs(A, b, None, None, None, None, f0, sweeps, tol, bool(stabilize))
        stabilize = False  # Gauss–Seidel has tried its sets already
    else:
        # The interior point's stopping test holds sᵀz/m to its tolerance in the data's units for data
        # above order one (native lcp/mlcp_ipm.hpp). f is of the order of |b|∞ / |A|∞, so for a large A
        # and a moderate b that test leaves f a large fraction of its own size off complementarity: it is
        # given A / |A|∞ and b / |b|∞, whose solution is f |A|∞ / |b|∞, and its test is then relative.
        a_scale = float(np.abs(A).max(initial=0.0)) or 1.0
        b_scale = float(np.abs(b).max(initial=0.0)) or 1.0
        empty = np.zeros((0, 0))
        _, _, z, _, status, iterations, _ = _native.lcp.mlcp_ipm(
            empty,
            np.zeros(0),
            empty,
            np.zeros((b.size, 0)),
            -A / a_scale,
            b / b_scale,
            min(tol, 1e-10),
            100 if limit is None else limit,
        )
        f = np.maximum(z, 0.0) * (b_scale / a_scale)
    return _solution(A, b, bounds, f, status, iterations, tol, stabilize)


def solve_boxed_lcp(
    A: ArrayLike,
    b: ArrayLike,
    lo: ArrayLike,
    hi: ArrayLike,
    *,
    friction_index: ArrayLike | None = None,
    mu: ArrayLike | None = None,
    warm_start: LCPSolution | None = None,
    tol: float = 1e-9,
    max_iterations: int = 10000,
    stabilize: bool = True,
) -> LCPSolution:
    """Solve the boxed LCP ``w = A f + b`` with ``lo ≤ f ≤ hi`` (w ≥ 0 at lo, w ≤ 0 at hi, w = 0
    between) by projected Gauss–Seidel (Nimble App. A; ODE's boxed LCP). With stabilize, where the
    sweeps do not settle (after 16 per entry, about what pivoting costs, or when they run out), by
    Lemke's method on the problem's Stewart–Trinkle form (an LCP over nonnegative parts of f and
    multipliers of the bounds' widths; problems of at most 192 entries, as its dense tableau grows with
    their square), whose solution then takes the exact solve on its sets that Gauss–Seidel's iterate
    takes (the least-squares-minimal split where A is singular): Gauss–Seidel creeps where A's nonzero
    eigenvalues are orders of magnitude apart. The status is SOLVED only for an f that solves the
    problem.

    lo, hi : (n,) bounds, −inf / inf allowed, lo ≤ hi.
    friction_index : optional (n,) int; entry i ≥ 0 makes f_i a friction impulse bounded by
        ``±mu_i f_j`` for j = friction_index[i], a normal impulse with fixed bounds (lo, hi ignored for i).
    mu : (n,) friction coefficients ≥ 0 (with friction_index).
    warm_start, tol, stabilize : as in solve_lcp; max_iterations : Gauss–Seidel sweeps.
    A must be symmetric positive semidefinite (ValueError otherwise) with a positive diagonal.
    """
    A, b = _problem(A, b)
    n = b.size
    tol = checked_positive(tol, "tol")
    lower = checked_array(lo, "lo", (("n", n),), infinite=True)
    upper = checked_array(hi, "hi", (("n", n),), infinite=True)
    if np.any(lower > upper):
        raise ValueError("lo must be ≤ hi")
    coefficients: FloatArray | None
    if friction_index is None:
        index, coefficients = np.full(n, -1), np.zeros(n)
    else:
        index = np.asarray(friction_index)
        if index.shape != (n,) or not np.issubdtype(index.dtype, np.integer) or np.any((index < -1) | (index >= n)):
            raise ValueError(f"friction_index must be ({n},) integers in [-1, {n})")
        if np.any(index[index >= 0] == np.flatnonzero(index >= 0)) or np.any(index[index[index >= 0]] >= 0):
            raise ValueError("friction_index must point at normal impulses (entries without a friction index)")
        coefficients = checked_array(mu, "mu", (("n", n),)) if mu is not None else None
        if coefficients is None or np.any(coefficients < 0):
            raise ValueError("mu must be given with friction_index, finite and ≥ 0")
    _require_monotone(A, "boxed Gauss–Seidel", symmetric=True)
    return solve_boxed_lcp_unchecked(
        A,
        b,
        LCPBounds(lower, upper, index.astype(np.int64), coefficients),
        warm_start=warm_start,
        tol=tol,
        max_iterations=checked_iterations(max_iterations),
        stabilize=stabilize,
    )


def solve_boxed_lcp_unchecked(
    A: FloatArray,
    b: FloatArray,
    bounds: LCPBounds,
    *,
    warm_start: LCPSolution | None = None,
    tol: float = 1e-9,
    max_iterations: int = 10000,
    stabilize: bool = True,
) -> LCPSolution:
    """:func:`solve_boxed_lcp` on arguments its caller has checked or built right: A (n, n) C-contiguous
    float64 symmetric positive semidefinite, b (n,) finite, bounds as LCPBounds (friction indices
    pointing at normal impulses), tol > 0. For callers whose A is positive semidefinite by construction
    (a simulation's J M⁻¹ Jᵀ), which skip the O(n³) check; nothing here checks the arguments but
    warm_start."""
    hit = _warm_start(A, b, bounds, warm_start, tol)
    if hit is not None:
        return hit
    f0 = np.zeros(b.size) if warm_start is None else np.array(warm_start.f)
    f, status, iterations, _ = _native.lcp.pgs(A, b, *bounds, f0, int(max_iterations), tol, bool(stabilize))
    return _solution(A, b, bounds, f, status, iterations, tol, stabilize=False)  # the sets were tried


# --- gradients -------------------------------------------------------------------------------------


class _Linearization:
    """K = A_CC + A_CB E of a solution's sets, with K⁺ applied by an LU factorization when K is
    well conditioned (then P = I − K⁺K = 0) and by the SVD pseudo-inverse otherwise."""

    def __init__(self, solution: LCPSolution, A: ArrayLike) -> None:
        A = float_array(A, "A")
        self.sets = _bounded_map(solution.bounds, solution.f, solution.clamping, solution.at_lower, solution.at_upper)
        C, B = self.sets.C, self.sets.B
        self.A_CB = A[np.ix_(C, B)]
        K = A[np.ix_(C, C)] + self.A_CB @ self.sets.E
        self._lu: tuple[FloatArray, IntArray] | None = None
        self.projector: FloatArray | None
        if C.size:
            with warnings.catch_warnings():  # a singular K is expected: it takes the SVD path
                warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
                lu = scipy.linalg.lu_factor(K, check_finite=False)
            pivots = np.abs(np.diag(lu[0]))
            if pivots.min() > 1e-10 * pivots.max():
                self._lu = lu
        if self._lu is None:
            self._pinv = np.linalg.pinv(K, rcond=1e-10)
            self.projector = np.eye(C.size) - self._pinv @ K
        else:
            self.projector = None

    def solve(self, x: FloatArray, transposed: bool = False) -> FloatArray:
        """K⁺ x, or K⁺ᵀ x."""
        if self._lu is not None:
            return scipy.linalg.lu_solve(self._lu, x, trans=1 if transposed else 0, check_finite=False)
        return (self._pinv.T if transposed else self._pinv) @ x

    def project(self, x: FloatArray) -> FloatArray:
        """(I − K⁺K) x: the pseudo-inverse's term of Nimble eq. 22, zero for an invertible K."""
        return np.zeros_like(x) if self.projector is None else self.projector @ x


def _bound_derivatives(
    sets: _BoundedMap, bounds: LCPBounds, f: FloatArray, dlo: FloatArray, dhi: FloatArray, dmu: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """(dE (D, |B|, |C|), dc (D, |B|)) of f_B = E f_C + c for D changes (D, n) of the bounds and
    friction coefficients."""
    B = sets.B
    friction = sets.normal >= 0
    dc = np.where(friction, 0.0, np.where(sets.sign > 0, dhi[:, B], dlo[:, B]))
    dE = np.zeros((dmu.shape[0],) + sets.E.shape)
    on_clamping = np.flatnonzero(sets.normal_column >= 0)
    dE[:, on_clamping, sets.normal_column[on_clamping]] = sets.sign[on_clamping] * dmu[:, B[on_clamping]]
    # ±mu f_j with f_j at its own (fixed) bound: both mu and that bound move it.
    on_bound = np.flatnonzero(friction & (sets.normal_column < 0))
    normal_rows = sets.normal_row[on_bound]
    dc[:, on_bound] = sets.sign[on_bound] * (
        dmu[:, B[on_bound]] * f[sets.normal[on_bound]] + bounds.mu[B][on_bound] * dc[:, normal_rows]
    )
    return dE, dc


def lcp_jvp(
    solution: LCPSolution,
    A: ArrayLike,
    dA: ArrayLike | Callable[[FloatArray, bool], FloatArray],
    db: ArrayLike,
    dlo: ArrayLike | None = None,
    dhi: ArrayLike | None = None,
    dmu: ArrayLike | None = None,
) -> FloatArray:
    """Directional derivative df (n,) of the solution along (dA (n, n), db (n,)) and, for boxed
    problems, (dlo, dhi, dmu) (n,) each (zero when omitted). A batch of D directions — dA (D, n, n),
    db (D, n), dlo, dhi, dmu (D, n) — gives df (D, n) from one factorization.

    dA may also be a function ``dA(u, transposed)`` returning the (D, n) products dA u (or dAᵀ u) of
    the D directions with a vector u (n,): the linearization only ever applies dA to f and, when the
    clamping set's K is singular, dAᵀ to one more vector, so a caller whose dA is structured (a
    simulation's A = J M⁻¹ Jᵀ) never forms the (D, n, n) tensor.
    """
    n = solution.f.size
    db = float_array(db, "db")
    batched = db.ndim == 2
    db = db.reshape(-1, n)
    count = db.shape[0]
    if callable(dA):
        apply_dA = dA
    else:
        dense = float_array(dA, "dA").reshape(count, n, n)

        def apply_dA(u: FloatArray, transposed: bool) -> FloatArray:
            return (dense.transpose(0, 2, 1) if transposed else dense) @ u

    zero = np.zeros((count, n))
    d_lo, d_hi, d_mu = (
        zero if d is None else float_array(d, name).reshape(count, n)
        for d, name in ((dlo, "dlo"), (dhi, "dhi"), (dmu, "dmu"))
    )
    lin = _Linearization(solution, A)
    sets = lin.sets
    dE, dc = _bound_derivatives(sets, solution.bounds, solution.f, d_lo, d_hi, d_mu)
    B, C = sets.B, sets.C
    f_C = solution.f[C]
    # dK f_C + dr = (dA f)_C + A_CB (dE f_C + dc) + db_C, with f = [f_C; E f_C + c] on (C, B).
    d_bounded = dE @ f_C + dc
    rhs = apply_dA(_clamped_solution(sets, f_C, n), False)[:, C] + d_bounded @ lin.A_CB.T + db[:, C]
    df = np.zeros((count, n))
    df[:, C] = -lin.solve(rhs.T).T
    if lin.projector is not None:
        # dKᵀ ẑ = (dAᵀ ẑ)_C + Eᵀ (dAᵀ ẑ)_B + dEᵀ A_CBᵀ ẑ for ẑ = K⁺ᵀ f_C (zero on B).
        z = lin.solve(f_C, transposed=True)
        dATz = apply_dA(_scatter(z, C, n), True)
        dKTz = dATz[:, C] + dATz[:, B] @ sets.E + dE.transpose(0, 2, 1) @ (lin.A_CB.T @ z)
        df[:, C] += lin.project(dKTz.T).T
    df[:, B] = df[:, C] @ sets.E.T + d_bounded
    return df if batched else df[0]


def _scatter(values: FloatArray, index: IntArray, n: int) -> FloatArray:
    out = np.zeros(n)
    out[index] = values
    return out


def _clamped_solution(sets: _BoundedMap, f_C: FloatArray, n: int) -> FloatArray:
    """f with its bounded part written as E f_C + c (the linearization's own f)."""
    f = _scatter(f_C, sets.C, n)
    f[sets.B] = sets.E @ f_C + sets.c
    return f


def lcp_vjp(solution: LCPSolution, A: ArrayLike, grad_f: ArrayLike, *, low_rank_A: bool = False) -> LCPCotangents:
    """LCPCotangents ∂ℓ/∂(A, b, lo, hi, mu) from ∂ℓ/∂f (n,): the transpose of lcp_jvp.

    ∂ℓ/∂A has rank ≤ 2; with low_rank_A=True its field is the pair (left (2, n), right (2, n)) with
    ∂ℓ/∂A = leftᵀ right, so a caller with a structured dA contracts it by two products dA right[k].
    """
    n = solution.f.size
    lin = _Linearization(solution, A)
    sets = lin.sets
    B, C = sets.B, sets.C
    grad_f = float_array(grad_f, "grad_f")
    f_C = solution.f[C]
    g = grad_f[C] + sets.E.T @ grad_f[B]  # f_B = E f_C + c passes its share to f_C
    y = lin.solve(g, transposed=True)
    z, projected = lin.solve(f_C, transposed=True), lin.project(g)
    grad_K = -np.outer(y, f_C) + np.outer(z, projected)
    grad_r = -y
    grad_E = lin.A_CB.T @ grad_K + np.outer(grad_f[B], f_C)
    grad_c = lin.A_CB.T @ grad_r + grad_f[B]
    # ∂ℓ/∂A from grad_K (rows C, columns C and through E the columns B) and grad_r cᵀ (columns B).
    left, right = np.zeros((2, n)), np.zeros((2, n))
    left[0, C], right[0] = -y, _clamped_solution(sets, f_C, n)
    left[1, C], right[1, C], right[1, B] = z, projected, sets.E @ projected
    out = LCPCotangents(
        (left, right) if low_rank_A else left.T @ right, np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    )
    out.b[C] = grad_r
    # Back through _bound_derivatives: friction entries first (they feed their normals' bounds).
    on_clamping = np.flatnonzero(sets.normal_column >= 0)
    out.mu[B[on_clamping]] += sets.sign[on_clamping] * grad_E[on_clamping, sets.normal_column[on_clamping]]
    on_bound = np.flatnonzero((sets.normal >= 0) & (sets.normal_column < 0))
    out.mu[B[on_bound]] += sets.sign[on_bound] * solution.f[sets.normal[on_bound]] * grad_c[on_bound]
    np.add.at(
        grad_c, sets.normal_row[on_bound], sets.sign[on_bound] * solution.bounds.mu[B[on_bound]] * grad_c[on_bound]
    )
    fixed = sets.normal < 0
    upper = sets.sign > 0
    out.hi[B[fixed & upper]] += grad_c[fixed & upper]
    out.lo[B[fixed & ~upper]] += grad_c[fixed & ~upper]
    return out


def complementarity_aware(solution: LCPSolution, grad_w: ArrayLike) -> LCPSolution:
    """The solution with its sets relabeled from ∂ℓ/∂w (Nimble §IV-D), for lcp_jvp/lcp_vjp: indices
    where the loss wants w to grow (∂ℓ/∂w_i < 0) become separating (at their lower bound), those where
    it wants w to shrink (> 0) become clamping. A friction entry whose normal ends up not clamping
    goes to its bound: the normal impulse is then fixed, at zero if it separates, and a friction
    impulse cannot sit strictly inside the box of width 2 μ f_n that the mode gives it. Clamped
    anyway, such entries can leave K = A_CC + A_CB E with a singular value so close to the rank
    cut-off that round-off decides whether it is inverted, and its inverse makes the gradients
    noise of any size (a resting jump-worm's links). Its gradients are a
    heuristic search direction, not the derivative; the caller compares both (e.g. by the norms of
    the resulting gradients)."""
    grad_w = checked_array(grad_w, "grad_w", solution.f.shape)
    clamping = np.where(grad_w > 0, True, np.where(grad_w < 0, False, solution.clamping))
    normal = solution.bounds.friction_index
    friction = normal >= 0
    clamping &= ~friction | clamping[np.maximum(normal, 0)]
    at_lower = np.where(clamping, False, np.where(grad_w < 0, True, solution.at_lower))
    at_upper = ~clamping & ~at_lower
    for array in (clamping, at_lower, at_upper):
        array.setflags(write=False)
    return replace(solution, clamping=clamping, at_lower=at_lower, at_upper=at_upper)


def lcp_jacobian(solution: LCPSolution, A: ArrayLike) -> LCPCotangents:
    """Full Jacobians of f: (∂f/∂A (n, n, n) with [:, i, j] = ∂f/∂A_ij, ∂f/∂b (n, n), ∂f/∂lo,
    ∂f/∂hi, ∂f/∂mu (n, n) each), one lcp_vjp per entry of f."""
    n = solution.f.size
    rows = [lcp_vjp(solution, A, np.eye(n)[i]) for i in range(n)]
    return LCPCotangents(*(np.stack([getattr(r, name) for r in rows]) for name in LCPCotangents._fields))
