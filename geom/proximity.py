"""DCOL proximity (DCOL §III): the minimum uniform scaling α of two convex primitives at which
they touch, DCOL eq. 9, solved on the native interior-point solver.

α > 1: the shapes are apart; α = 1: touching; α < 1: penetrating (α = 0 only with coincident
origins). From the solution: the intersection point x of the scaled shapes, contact points
``p_i = r_i + (x − r_i)/α`` (DCOL eq. 29), their distance (DCOL eq. 30), and the separating-plane normal at x read
off the dual solution. The problem is solved in coordinates centred between the shapes and scaled
by their size, so α does not depend on units or placement.
"""

from __future__ import annotations

from dataclasses import dataclass

from dcol import _native
from dcol._native import ProximityResult
from dcol.printing import summary_repr
from dcol.solvers import SolverSettings
from dcol.typing import ArrayLike, FloatArray, Int8Array, Int32Array
from dcol.validation import checked_instance, checked_threads

from .shapes import ShapeOrShapes

__all__ = ["proximity", "proximity_batch", "ProximityResult", "ProximityBatchResult"]

_DEFAULT_SETTINGS = SolverSettings()


# The native function itself (native/python/geom.cpp, docstring included): a Python wrapper would
# add its own call to every proximity call, a noticeable share of one.
proximity = _native.proximity


@dataclass(frozen=True)
class ProximityBatchResult:
    """Results of :func:`proximity_batch` for N pose pairs.

    alpha : (N,) float64; x, p_a, p_b, normal : (N, 3) float64; distance : (N,) float64;
    status : (N,) int8 codes of dcol.solvers.Status; iterations : (N,) int32.
    """

    alpha: FloatArray
    x: FloatArray
    p_a: FloatArray
    p_b: FloatArray
    distance: FloatArray
    normal: FloatArray
    status: Int8Array
    iterations: Int32Array

    __repr__ = summary_repr


def proximity_batch(
    a: ShapeOrShapes,
    r_a: ArrayLike,
    q_a: ArrayLike,
    b: ShapeOrShapes,
    r_b: ArrayLike,
    q_b: ArrayLike,
    *,
    settings: SolverSettings | None = None,
    threads: int | None = None,
) -> ProximityBatchResult:
    """DCOL proximity for N pose pairs in one native call (the GIL is released).

    Parameters
    ----------
    a, b : a shape each (the same pair for every pose) or sequences of N shapes (mixed pairs).
    r_a, r_b : (N, 3) body positions.
    q_a, q_b : (N, 4) quaternions ``[w, x, y, z]`` or (N, 3, 3) rotation matrices.
    settings : dcol.solvers.SolverSettings, optional.
    threads : int, optional, worker threads (default 1).

    Returns
    -------
    ProximityBatchResult
    """
    arrays = _native.proximity_batch(
        a,
        r_a,
        q_a,
        b,
        r_b,
        q_b,
        checked_instance(settings, "settings", SolverSettings, _DEFAULT_SETTINGS),
        checked_threads(threads),
    )
    return ProximityBatchResult(**arrays)
