"""Small second-order cone programs on the native interior-point solver (DCOL §II-A).

Solves ``minimize cᵀx subject to s = h − G x ∈ K`` where K is a nonnegative orthant followed by
second-order cones ``{s : ‖s[1:]‖ ≤ s[0]}``: a primal-dual interior-point method with
Nesterov–Todd scaling and Mehrotra's predictor–corrector whose memory is fixed at compile time.
The problem must be feasible and bounded: the solver does not certify infeasibility, an
infeasible or unbounded program ends with status ``MAX_ITERATIONS`` or ``NUMERICAL_ERROR``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dcol import _native
from dcol._native import Status
from dcol.printing import summary_repr
from dcol.typing import ArrayLike, FloatArray
from dcol.validation import checked_array, checked_instance, checked_integer, checked_real, is_integer

__all__ = ["ConeSolution", "SolverSettings", "Status", "solve_cone_program", "MAX_VARIABLES", "MAX_ROWS", "MAX_CONES"]

MAX_VARIABLES: int = _native.CONE_MAX_VARIABLES
MAX_ROWS: int = _native.CONE_MAX_ROWS
MAX_CONES: int = _native.CONE_MAX_CONES

_SETTINGS = ("feastol", "abstol", "reltol", "max_iter", "barrier", "centrality_tol")


def _checked_count(value: object, name: str) -> int:
    """max_iter as an integer ≥ 0 (the native class checks its upper bound)."""
    return checked_integer(value, name, minimum=0)


def _setting(name: str, check: Callable[[object, str], float], doc: str) -> Any:
    """The native class's property of that name, whose setter checks the value's kind first: the
    native setter checks the range of the number it gets, but reports a value of another kind with
    pybind11's list of signatures."""
    native = getattr(_native.SolverSettings, name)

    def set_checked(settings: _native.SolverSettings, value: object) -> None:
        native.fset(settings, check(value, name))

    return property(native.fget, set_checked, doc=doc)


class SolverSettings(_native.SolverSettings):
    """Tolerances and iteration limit of the interior-point solver (proximity, distances, contacts
    and :func:`solve_cone_program`); every attribute can also be set later, with the same checks.

    Parameters (each omitted or None: its default, feastol 1e-9, abstol and reltol 1e-8, max_iter 50,
    barrier 0, centrality_tol 1e-2)
    ----------
    feastol : float in (0, 1), primal and dual residuals relative to the data.
    abstol : float in (0, 1), absolute duality gap sᵀz.
    reltol : float in (0, 1), duality gap relative to the objective.
    max_iter : int in [0, 10000], most iterations.
    barrier : float in [0, 0.01): with μ > 0 the solve ends on the central path at μ, the solution of
        the problem smoothed by μ times the cones' log barriers (the derivative functions' default).
    centrality_tol : float in (0, 1), how close to the central path (relative) a barrier solve ends.

    Raises TypeError naming the argument when it is not a number (not an integer: ValueError for
    max_iter), ValueError when it is out of its range. Pickles and copies as its arguments.
    """

    def __init__(
        self,
        feastol: float | None = None,
        abstol: float | None = None,
        reltol: float | None = None,
        max_iter: int | None = None,
        barrier: float | None = None,
        centrality_tol: float | None = None,
    ) -> None:
        # The native class's defaults (the stub of dcol._native shows them) for the arguments not given.
        given = dict(
            feastol=feastol,
            abstol=abstol,
            reltol=reltol,
            max_iter=max_iter,
            barrier=barrier,
            centrality_tol=centrality_tol,
        )
        checks = {name: _checked_count if name == "max_iter" else checked_real for name in _SETTINGS}
        checked: dict[str, Any] = {
            name: checks[name](value, name) for name, value in given.items() if value is not None
        }
        super().__init__(**checked)

    feastol = _setting("feastol", checked_real, "float in (0, 1), primal and dual residuals relative to the data.")
    abstol = _setting("abstol", checked_real, "float in (0, 1), absolute duality gap.")
    reltol = _setting("reltol", checked_real, "float in (0, 1), duality gap relative to the objective.")
    max_iter = _setting("max_iter", _checked_count, "int in [0, 10000], most iterations.")
    barrier = _setting("barrier", checked_real, "float in [0, 0.01), the central-path point μ a barrier solve ends at.")
    centrality_tol = _setting(
        "centrality_tol", checked_real, "float in (0, 1), how close to the central path a barrier solve ends."
    )

    def __reduce__(self) -> tuple[type[SolverSettings], tuple[float | int, ...]]:
        # The constructor's arguments, checked again when unpickled.
        return type(self), tuple(getattr(self, name) for name in _SETTINGS)


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

    __repr__ = summary_repr


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
