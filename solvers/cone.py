"""Small second-order cone programs on the native interior-point solver (DCOL §II-A).

Solves ``minimize cᵀx subject to s = h − G x ∈ K`` where K is a nonnegative orthant followed by
second-order cones ``{s : ‖s[1:]‖ ≤ s[0]}``: a primal-dual interior-point method with
Nesterov–Todd scaling and Mehrotra's predictor–corrector whose memory is fixed at compile time.
The problem must be feasible and bounded: the solver does not certify infeasibility, an
infeasible or unbounded program ends with status ``MAX_ITERATIONS`` or ``NUMERICAL_ERROR``.
"""

from dataclasses import dataclass
from typing import Any

from dcol import _native
from dcol._native import SolverSettings, Status
from dcol.typing import ArrayLike, FloatArray
from dcol.validation import checked_array, checked_instance, is_integer

__all__ = ["ConeSolution", "SolverSettings", "Status", "solve_cone_program", "MAX_VARIABLES", "MAX_ROWS", "MAX_CONES"]

MAX_VARIABLES: int = _native.CONE_MAX_VARIABLES
MAX_ROWS: int = _native.CONE_MAX_ROWS
MAX_CONES: int = _native.CONE_MAX_CONES


@dataclass(frozen=True)
class ConeSolution:
    """Primal-dual solution of a cone program.

    x : (n,) float64 primal variables.
    s : (m,) float64 slacks ``h − G x``.
    z : (m,) float64 dual variables, ``c + Gᵀz = 0`` at optimum.
    status : Status.
    iterations : int.
    primal_objective, dual_objective : float, ``cᵀx`` and ``−hᵀz``.
    """

    x: FloatArray
    s: FloatArray
    z: FloatArray
    status: Status
    iterations: int
    primal_objective: float
    dual_objective: float


def solve_cone_program(
    c: ArrayLike,
    G: ArrayLike,
    h: ArrayLike,
    cones: dict[str, Any],
    *,
    settings: SolverSettings | None = None,
) -> ConeSolution:
    """Solve ``minimize cᵀx s.t. h − G x ∈ K``.

    Parameters
    ----------
    c : (n,) array_like, n ≤ MAX_VARIABLES.
    G : (m, n) array_like, m ≤ MAX_ROWS, full column rank.
    h : (m,) array_like.
    cones : dict with ``"l"`` (int, orthant rows, first) and ``"q"`` (list of int, sizes of the
        second-order cones that follow, at most MAX_CONES); they must add up to m.
    settings : SolverSettings, optional.

    Returns
    -------
    ConeSolution
    """
    c = checked_array(c, "c", ("n",))
    h = checked_array(h, "h", ("m",))
    n, m = c.shape[0], h.shape[0]
    if not 1 <= n <= MAX_VARIABLES:
        raise ValueError(f"c must have between 1 and {MAX_VARIABLES} entries, got {n}")
    if not 1 <= m <= MAX_ROWS:
        raise ValueError(f"h must have between 1 and {MAX_ROWS} entries, got {m}")
    G = checked_array(G, "G", (("len(h)", m), ("len(c)", n)))
    if not isinstance(cones, dict) or set(cones) - {"l", "q"}:
        raise ValueError('cones must be a dict with keys "l" (int) and "q" (list of int)')
    orthant = cones.get("l", 0)
    soc_dims = list(cones.get("q", []))
    if not all(is_integer(d) for d in [orthant, *soc_dims]):
        raise ValueError('cones["l"] and the entries of cones["q"] must be integers')
    if orthant < 0 or any(d < 1 for d in soc_dims):
        raise ValueError('cones["l"] must be >= 0 and every cones["q"] size >= 1')
    if len(soc_dims) > MAX_CONES:
        raise ValueError(f'cones["q"] may hold at most {MAX_CONES} cones, got {len(soc_dims)}')
    if orthant + sum(soc_dims) != m:
        raise ValueError(f'cones["l"] + sum(cones["q"]) must equal the rows of G ({m}), got {orthant + sum(soc_dims)}')
    x, s, z, status, iterations, pcost, dcost = _native.solve_cone_program(
        c,
        G,
        h,
        int(orthant),
        [int(d) for d in soc_dims],
        checked_instance(settings, "settings", SolverSettings, SolverSettings()),
    )
    return ConeSolution(x, s, z, status, iterations, pcost, dcost)
