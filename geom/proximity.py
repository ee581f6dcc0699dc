"""DCOL proximity (paper §III): the minimum uniform scaling α of two convex primitives at which
they touch, problem (9), solved on the native interior-point solver.

α > 1: the shapes are apart; α = 1: touching; α < 1: penetrating (α = 0 only with coincident
origins). From the solution: the intersection point x of the scaled shapes, contact points
``p_i = r_i + (x − r_i)/α`` (29), their distance (30), and the separating-plane normal at x read
off the dual solution. The problem is solved in coordinates centred between the shapes and scaled
by their size, so α does not depend on units or placement.
"""

from dataclasses import dataclass

import numpy as np

from dcol import _native
from dcol.solvers import SolverSettings

__all__ = ["proximity", "proximity_batch", "ProximityResult", "ProximityBatchResult"]

ProximityResult = _native.ProximityResult

_DEFAULT_SETTINGS = SolverSettings()


def value_settings(settings):
    """The solver settings of the value functions: the defaults when None."""
    return _DEFAULT_SETTINGS if settings is None else settings


def checked_threads(threads):
    """The worker-thread count of the batch functions: None means 1, else a positive integer."""
    if threads is None:
        return 1
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ValueError(f"threads must be a positive integer, got {threads!r}")
    return int(threads)


# The native function itself (native/bindings.cpp, docstring included): a Python wrapper took
# 0.1 µs of a ~4 µs call.
proximity = _native.proximity


@dataclass(frozen=True)
class ProximityBatchResult:
    """Results of :func:`proximity_batch` for N pose pairs.

    alpha : (N,) float64; x, p_a, p_b, normal : (N, 3) float64; distance : (N,) float64;
    status : (N,) int8 codes of dcol.solvers.Status; iterations : (N,) int32.
    """

    alpha: np.ndarray
    x: np.ndarray
    p_a: np.ndarray
    p_b: np.ndarray
    distance: np.ndarray
    normal: np.ndarray
    status: np.ndarray
    iterations: np.ndarray


def proximity_batch(a, r_a, q_a, b, r_b, q_b, *, settings=None, threads=None):
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
    arrays = _native.proximity_batch(a, r_a, q_a, b, r_b, q_b, value_settings(settings), checked_threads(threads))
    return ProximityBatchResult(**arrays)
