"""Signed distance between two shapes, with witness points, the normal and their derivatives.

Apart (DCOL's α > 1), the distance is the exact Euclidean distance, the second-order cone program

    minimize t  subject to  ‖x_a − x_b‖ ≤ t,  x_a ∈ a,  x_b ∈ b

on the native interior-point solver, built from the same primitive constraints as DCOL (DCOL §III-B) with
α fixed at 1; x_a and x_b are the witness points and the normal (from a to b) is (x_b − x_a)/t, read
off the dual solution.

Overlapping (α ≤ 1), the distance is minus the penetration depth along DCOL's normal n: the overlap
of the shapes' extents along n, ``max_{y∈a} n·y − min_{y∈b} n·y``. It is how far b must move along n
to come apart; for spheres and for faces resting on each other it is the minimum translation
distance, otherwise an upper bound on it. The witness points are DCOL's point x projected along n
onto the two support planes, so p_a − p_b = depth · n. Both branches vanish as the shapes come to
touch: the signed distance is continuous.

Both solves end on the central path at a small barrier weight (:data:`DISTANCE_SETTINGS` by default,
see :mod:`dcol.geom.derivatives`): a plain interior-point stop leaves the witness points off by ~1e-6
even when the distance is right to 1e-10, while the centred solution has them to ~1e-10 (relative to
the shapes' size) and picks the analytic centre of a face's witness set, which moves smoothly.

Derivatives are with respect to both body poses, columns as in :mod:`dcol.geom.derivatives`
(``"quaternion"``, ``"mrp"`` or ``"rigid"``), by default ``"rigid"`` (12 columns [δp_a, δθ_a, δp_b,
δθ_b], those of the contacts and of the dynamics layer that chains them), unlike DCOL's derivative
functions, whose default is DCOL.jl's ``"quaternion"`` (14 columns). Apart, they come from the
implicit function theorem at the cone program's solution (barrier-smoothed like DCOL's); overlapping,
from DCOL's derivatives of x and n and the envelope theorem for the support planes (undefined where a
support face is about to tilt onto an edge; there one side's derivative is returned).
"""

from dataclasses import dataclass
from typing import Any

from dcol import _native
from dcol.printing import summary_repr
from dcol.solvers import SolverSettings, Status
from dcol.typing import ArrayLike, FloatArray, Int8Array, Int32Array
from dcol.validation import checked_instance, checked_threads, float_array, shape_error

from .derivatives import checked_derivative_settings
from .rotations import orientation_array
from .shapes import Shape, ShapeOrShapes

__all__ = [
    "DISTANCE_SETTINGS",
    "DistanceResult",
    "DistanceJacobian",
    "signed_distance",
    "signed_distance_batch",
    "distance_jacobian",
    "distance_jacobian_batch",
    "support_point",
]

DISTANCE_SETTINGS = SolverSettings(barrier=1e-10, centrality_tol=1e-4)
"""Default solver settings of the signed distance, contacts and scenes: the central path at μ = 1e-10,
which keeps the witness points within ~1e-10 of the shapes' size of the exact ones (they move by O(μ)).
Their derivatives match central differences to ~1e-5 relative; DCOL's derivative functions take
μ = 1e-9 instead (dcol.geom.DERIVATIVE_SETTINGS), where rounding costs a decade less."""


@dataclass(frozen=True)
class DistanceResult:
    """Signed distance of a shape pair (leading N axis on every field in the batch function).

    distance : float, > 0 apart (Euclidean), ≤ 0 overlapping (minus the penetration depth along normal).
    p_a, p_b : (3,) float64 witness points of a and b. normal : (3,) float64 unit vector from a to b.
    alpha : float, DCOL's minimum scaling, which tells the branch (α > 1: apart).
    status : dcol.solvers.Status (the worse of the two solves), int8 codes of it in the batch function;
    iterations : int (both solves), int32 in the batch function.
    """

    distance: float | FloatArray
    p_a: FloatArray
    p_b: FloatArray
    normal: FloatArray
    alpha: float | FloatArray
    status: Status | Int8Array
    iterations: int | Int32Array

    __repr__ = summary_repr


@dataclass(frozen=True, repr=False)  # the repr of DistanceResult
class DistanceJacobian(DistanceResult):
    """A DistanceResult with the derivatives of its outputs with respect to (pose_a, pose_b), P columns:
    d_distance (P,), d_p_a, d_p_b, d_normal (3, P)."""

    d_distance: FloatArray
    d_p_a: FloatArray
    d_p_b: FloatArray
    d_normal: FloatArray


def _single_pair(
    a: Shape, r_a: ArrayLike, q_a: ArrayLike, b: Shape, r_b: ArrayLike, q_b: ArrayLike
) -> list[FloatArray]:
    """One shape pair's pose pair as arrays with a leading axis of 1, for the batch functions, which
    check their values (a batch given here would pass their checks as one; so would a list of one
    shape for a shape)."""
    for shape, name in ((a, "a"), (b, "b")):
        if not isinstance(shape, Shape):
            raise TypeError(f"{name} must be a dcol.geom shape, got {type(shape).__name__}")
    poses = []
    for value, name, shapes, as_array in (
        (r_a, "r_a", [(3,)], float_array),
        (q_a, "q_a", [(4,), (3, 3)], orientation_array),
        (r_b, "r_b", [(3,)], float_array),
        (q_b, "q_b", [(4,), (3, 3)], orientation_array),
    ):
        array = as_array(value, name)
        if array.shape not in shapes:
            raise shape_error(name, shapes, array.shape)
        poses.append(array[None])
    return poses


def _first(batch: DistanceResult) -> dict[str, Any]:
    """The fields of a batch of one pose pair as those of one: arrays without the batch axis, the
    scalars as Python numbers and the status as a dcol.solvers.Status."""
    arrays: dict[str, Any] = vars(batch)
    fields = {key: value[0] for key, value in arrays.items()}
    fields.update(
        distance=float(arrays["distance"][0]),
        alpha=float(arrays["alpha"][0]),
        status=Status(int(arrays["status"][0])),
        iterations=int(arrays["iterations"][0]),
    )
    return fields


def signed_distance_batch(
    a: ShapeOrShapes,
    r_a: ArrayLike,
    q_a: ArrayLike,
    b: ShapeOrShapes,
    r_b: ArrayLike,
    q_b: ArrayLike,
    *,
    settings: SolverSettings | None = None,
    threads: int | None = None,
) -> DistanceResult:
    """Signed distances of N pose pairs in one native call (the GIL is released).

    a, b : a shape each, or sequences of N shapes; r_a, r_b : (N, 3); q_a, q_b : (N, 4) quaternions
    ``[w, x, y, z]`` or (N, 3, 3) rotation matrices; settings : dcol.solvers.SolverSettings, default
    DISTANCE_SETTINGS; threads : int, worker threads (default 1). Returns a DistanceResult
    of arrays.
    """
    out = _native.distance_batch(
        a,
        r_a,
        q_a,
        b,
        r_b,
        q_b,
        checked_instance(settings, "settings", SolverSettings, DISTANCE_SETTINGS),
        checked_threads(threads),
        False,
        "rigid",
    )
    return DistanceResult(**out)


def signed_distance(
    a: Shape,
    r_a: ArrayLike,
    q_a: ArrayLike,
    b: Shape,
    r_b: ArrayLike,
    q_b: ArrayLike,
    *,
    settings: SolverSettings | None = None,
) -> DistanceResult:
    """Signed distance of shapes a and b at body poses (r, q): a DistanceResult (see the module)."""
    r_a1, q_a1, r_b1, q_b1 = _single_pair(a, r_a, q_a, b, r_b, q_b)
    return DistanceResult(**_first(signed_distance_batch(a, r_a1, q_a1, b, r_b1, q_b1, settings=settings)))


def distance_jacobian_batch(
    a: ShapeOrShapes,
    r_a: ArrayLike,
    q_a: ArrayLike,
    b: ShapeOrShapes,
    r_b: ArrayLike,
    q_b: ArrayLike,
    *,
    parameterization: str = "rigid",
    settings: SolverSettings | None = None,
    threads: int | None = None,
) -> DistanceJacobian:
    """Signed distances and their derivatives for N pose pairs: a DistanceJacobian of arrays.

    parameterization : "rigid" (default: 12 columns, [δp_a, δθ_a, δp_b, δθ_b]), "quaternion" (14) or "mrp"
    (12), as in dcol.geom.derivatives (whose functions default to "quaternion").
    settings default to DISTANCE_SETTINGS (a barrier > 0 is required, see dcol.geom.derivatives);
    other arguments as :func:`signed_distance_batch`.
    """
    out = _native.distance_batch(
        a,
        r_a,
        q_a,
        b,
        r_b,
        q_b,
        checked_derivative_settings(settings, DISTANCE_SETTINGS, exact_allowed=False),
        checked_threads(threads),
        True,
        parameterization,
    )
    return DistanceJacobian(**out)


def distance_jacobian(
    a: Shape,
    r_a: ArrayLike,
    q_a: ArrayLike,
    b: Shape,
    r_b: ArrayLike,
    q_b: ArrayLike,
    *,
    parameterization: str = "rigid",
    settings: SolverSettings | None = None,
) -> DistanceJacobian:
    """Signed distance of one pose pair and its derivatives: a DistanceJacobian, by default in the
    "rigid" parameterization (12 columns; arguments as :func:`distance_jacobian_batch`)."""
    r_a1, q_a1, r_b1, q_b1 = _single_pair(a, r_a, q_a, b, r_b, q_b)
    out = distance_jacobian_batch(a, r_a1, q_a1, b, r_b1, q_b1, parameterization=parameterization, settings=settings)
    return DistanceJacobian(**_first(out))


def support_point(shape: Shape, r: ArrayLike, q: ArrayLike, direction: ArrayLike) -> FloatArray:
    """(3,) float64 world point of ``shape`` at body pose (r, q) farthest along ``direction`` (3,), nonzero."""
    return _native.support(shape, r, q, direction)
