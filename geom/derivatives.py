"""Derivatives of DCOL proximity with respect to both body poses (paper §II-B, §III).

They come from the implicit function theorem at the interior-point solution, in the native core (one
small linear solve per output at the final iterate, no finite differences). What they differentiate
is the barrier-smoothed problem: the solve ends on the central path at ``settings.barrier`` = μ, the
minimizer of α − μ Σ log(s) over the cone constraints' slacks s. Away from edges and corners that is
the exact problem (9) up to O(μ); across an edge or corner, where the exact derivative jumps, the
barrier blends the two sides smoothly over a region that grows with μ. A larger μ gives smoother
derivatives and a less exact α and x; the default μ = 1e-10 (in the problem's normalized units, so
independent of the shapes' size) keeps α within ~1e-9 of the exact value. ``barrier=0`` is refused
here: the plain interior-point iterate is not centred, and derivatives there are off by up to 1e-4
relative.

Columns of every Jacobian: body a's pose, then body b's, in one of three parameterizations
(DESIGN.md): ``"quaternion"`` (r 3, q 4: the raw components of the given quaternion, through its
normalization, as DCOL.jl), ``"mrp"`` (r 3, p 3: modified Rodrigues parameters p = v/(1 + w) of the
unit quaternion with w ≥ 0) and ``"rigid"`` (δp 3, δθ 3 for r ← r + δp, Q ← exp([δθ]×) Q in the world
frame). "quaternion" and "mrp" need the orientations as quaternions; "rigid" also takes rotation
matrices.
"""

from dataclasses import dataclass

import numpy as np

from dcol import _native
from dcol.solvers import SolverSettings

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
]

_GRADIENT, _JACOBIAN = 1, 2

DERIVATIVE_SETTINGS = SolverSettings(barrier=1e-10, centrality_tol=1e-2)
"""Default solver settings of the derivative functions: the central path at μ = 1e-10."""

_PARAMETERIZATIONS = ("quaternion", "mrp", "rigid")


@dataclass(frozen=True)
class ProximityJacobian:
    """α, x and J = ∂(x, α)/∂(pose_a, pose_b): (4, P) with rows (x0, x1, x2, α), P = 14 for
    "quaternion", 12 otherwise (leading N axis on every field in the batch functions)."""

    alpha: np.ndarray
    x: np.ndarray
    jacobian: np.ndarray
    status: np.ndarray
    iterations: np.ndarray


@dataclass(frozen=True)
class ProximityGradient:
    """α and ∂α/∂(pose_a, pose_b), (P,)."""

    alpha: np.ndarray
    gradient: np.ndarray
    status: np.ndarray
    iterations: np.ndarray


@dataclass(frozen=True)
class ContactJacobian:
    """Proximity values with the Jacobians of each with respect to (pose_a, pose_b) (P columns).

    alpha float, d_alpha (P,); x (3,), d_x (3, P); p_a, p_b (3,) contact points (29), d_p_a, d_p_b
    (3, P); distance float (30), d_distance (P,) (not differentiable at α = 1, where the distance is
    zero: there d_distance is the derivative of the side with α > 1); normal (3,) unit, from a to b,
    d_normal (3, P); status, iterations. In the batch functions every field has a leading N axis.
    """

    alpha: np.ndarray
    x: np.ndarray
    p_a: np.ndarray
    p_b: np.ndarray
    distance: np.ndarray
    normal: np.ndarray
    d_alpha: np.ndarray
    d_x: np.ndarray
    d_p_a: np.ndarray
    d_p_b: np.ndarray
    d_distance: np.ndarray
    d_normal: np.ndarray
    status: np.ndarray
    iterations: np.ndarray


def _settings(settings):
    if settings is None:
        return DERIVATIVE_SETTINGS
    if not isinstance(settings, SolverSettings):
        raise TypeError(f"settings must be a dcol.solvers.SolverSettings, got {type(settings).__name__}")
    if settings.barrier <= 0.0:
        raise ValueError("settings.barrier must be > 0 for derivatives (see dcol.geom.derivatives)")
    return settings


def _threads(threads):
    if threads is None:
        return 1
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ValueError(f"threads must be a positive integer, got {threads!r}")
    return int(threads)


def _parameterization(parameterization):
    if parameterization not in _PARAMETERIZATIONS:
        raise ValueError(f"parameterization must be one of {_PARAMETERIZATIONS}, got {parameterization!r}")
    return parameterization


def _batch(a, r_a, q_a, b, r_b, q_b, request, parameterization, settings, threads):
    return _native.proximity_batch(
        a, r_a, q_a, b, r_b, q_b, _settings(settings), _threads(threads), request, _parameterization(parameterization)
    )


def _single(a, r_a, q_a, b, r_b, q_b, request, parameterization, settings):
    """One pose pair through the batch path: arrays with a leading axis of 1, removed on return."""
    poses = []
    for value, name in ((r_a, "r_a"), (q_a, "q_a"), (r_b, "r_b"), (q_b, "q_b")):
        try:
            array = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise TypeError(f"{name} must be an array of real numbers") from err
        if array.ndim not in (1, 2):
            raise ValueError(f"{name} must have shape (3,), (4,) or (3, 3), got {array.shape}")
        poses.append(array[None])
    out = _batch(a, poses[0], poses[1], b, poses[2], poses[3], request, parameterization, settings, 1)
    return {key: value[0] for key, value in out.items()}


def _proximity_jacobian(out):
    jacobian = np.concatenate([out["d_x"], out["d_alpha"][..., None, :]], axis=-2)
    return ProximityJacobian(out["alpha"], out["x"], jacobian, out["status"], out["iterations"])


def _contact_jacobian(out):
    return ContactJacobian(**out)


def proximity_jacobian(a, r_a, q_a, b, r_b, q_b, *, parameterization="quaternion", settings=None):
    """α, x and their Jacobian J = ∂(x, α)/∂(pose_a, pose_b) (DCOL.jl's ``proximity_jacobian``).

    Parameters
    ----------
    a, b : dcol.geom shapes. r_a, r_b : (3,) positions. q_a, q_b : (4,) quaternions ``[w, x, y, z]``
        (or (3, 3) rotation matrices with ``parameterization="rigid"``).
    parameterization : "quaternion" (J is (4, 14)), "mrp" or "rigid" (J is (4, 12)); module docstring.
    settings : SolverSettings with barrier > 0; default DERIVATIVE_SETTINGS.

    Returns
    -------
    ProximityJacobian: alpha float, x (3,), jacobian (4, P) rows (x0, x1, x2, α), status, iterations.
    """
    return _proximity_jacobian(_single(a, r_a, q_a, b, r_b, q_b, _JACOBIAN, parameterization, settings))


def proximity_gradient(a, r_a, q_a, b, r_b, q_b, *, parameterization="quaternion", settings=None):
    """α and ∂α/∂(pose_a, pose_b) alone, from the gradient of the Lagrangian at the optimum (no linear
    solve). Parameters as :func:`proximity_jacobian`; returns ProximityGradient (gradient (P,))."""
    out = _single(a, r_a, q_a, b, r_b, q_b, _GRADIENT, parameterization, settings)
    return ProximityGradient(out["alpha"], out["d_alpha"], out["status"], out["iterations"])


def contact_jacobian(a, r_a, q_a, b, r_b, q_b, *, parameterization="quaternion", settings=None):
    """Contact points (29), distance (30), normal, α and x with their Jacobians to both poses.

    Parameters as :func:`proximity_jacobian`; returns ContactJacobian.
    """
    return _contact_jacobian(_single(a, r_a, q_a, b, r_b, q_b, _JACOBIAN, parameterization, settings))


def proximity_jacobian_batch(a, r_a, q_a, b, r_b, q_b, *, parameterization="quaternion", settings=None, threads=None):
    """:func:`proximity_jacobian` for N pose pairs in one native call (arguments as
    dcol.geom.proximity_batch); every field of the result has a leading N axis."""
    return _proximity_jacobian(_batch(a, r_a, q_a, b, r_b, q_b, _JACOBIAN, parameterization, settings, threads))


def proximity_gradient_batch(a, r_a, q_a, b, r_b, q_b, *, parameterization="quaternion", settings=None, threads=None):
    """:func:`proximity_gradient` for N pose pairs in one native call; gradient is (N, P)."""
    out = _batch(a, r_a, q_a, b, r_b, q_b, _GRADIENT, parameterization, settings, threads)
    return ProximityGradient(out["alpha"], out["d_alpha"], out["status"], out["iterations"])


def contact_jacobian_batch(a, r_a, q_a, b, r_b, q_b, *, parameterization="quaternion", settings=None, threads=None):
    """:func:`contact_jacobian` for N pose pairs in one native call; leading N axis on every field."""
    return _contact_jacobian(_batch(a, r_a, q_a, b, r_b, q_b, _JACOBIAN, parameterization, settings, threads))
