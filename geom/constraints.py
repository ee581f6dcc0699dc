"""DCOL's α as a collision-avoidance constraint over the knots of a trajectory (DCOL §IV-A, eq. 31).

A trajectory optimization keeps a moving body clear of static obstacles by requiring α ≥ 1 for every
(knot, obstacle) pair, α being DCOL's minimum uniform scaling (DCOL eq. 9). :func:`collision_constraints`
evaluates all N × M of them in one native batch and returns ∂α with respect to the moving body's pose
at each knot, which an NLP solver chains with its own state coordinates.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dcol.printing import summary_repr
from dcol.solvers import SolverSettings
from dcol.typing import ArrayLike, FloatArray, Int8Array
from dcol.validation import check_quaternion_norms, checked_array, checked_vectors

from .derivatives import proximity_gradient_batch
from .shapes import Shape

__all__ = ["Obstacle", "CollisionConstraints", "collision_constraints"]


@dataclass(frozen=True)
class Obstacle:
    """A static shape at a fixed pose: r (3,) position, q (4,) quaternion ``[w, x, y, z]`` or (3, 3)
    rotation matrix, checked when the obstacle is made (the obstacles of one call give their
    orientations in the same form)."""

    shape: Shape
    r: FloatArray
    q: FloatArray

    def __post_init__(self) -> None:
        if not isinstance(self.shape, Shape):
            raise TypeError(f"Obstacle shape must be a dcol.geom shape, got {type(self.shape).__name__}")
        object.__setattr__(self, "r", checked_array(self.r, "Obstacle r", (3,)))
        q = np.asarray(self.q, dtype=np.float64)
        object.__setattr__(self, "q", checked_array(q, "Obstacle q", (3, 3) if q.ndim == 2 else (4,)))
        if self.q.shape == (4,):
            check_quaternion_norms(self.q, "Obstacle q")

    __repr__ = summary_repr


@dataclass(frozen=True)
class CollisionConstraints:
    """α at every (knot, obstacle) pair and its derivatives with respect to the moving body's pose.

    alpha : (N, M) float64, α of the body at knot k against obstacle j (≥ 1: clear).
    jacobian : (N, M, P) float64, ∂alpha[k, j] with respect to the body's pose at knot k, in the
        columns of the requested parameterization (P = 6 for "rigid" [δp, δθ] and "mrp" [r, p],
        7 for "quaternion" [r, q]).
    status : (N, M) int8, the dcol.solvers.Status of each solve.
    """

    alpha: FloatArray
    jacobian: FloatArray
    status: Int8Array

    __repr__ = summary_repr


def collision_constraints(
    shape: Shape,
    r: ArrayLike,
    q: ArrayLike,
    obstacles: Sequence[Obstacle],
    *,
    parameterization: str = "rigid",
    settings: SolverSettings | None = None,
    threads: int | None = None,
) -> CollisionConstraints:
    """α ≥ 1 constraints of a body moving through static obstacles, at N knots, with their Jacobians.

    Parameters
    ----------
    shape : the moving body's dcol.geom shape.
    r : (N, 3) positions of the body at the knots.
    q : (N, 4) quaternions ``[w, x, y, z]`` of the body at the knots ((N, 3, 3) rotation matrices
        with ``parameterization="rigid"``).
    obstacles : sequence of M :class:`Obstacle`, M ≥ 1.
    parameterization : columns of the Jacobian, as for dcol.geom.proximity_jacobian: "rigid"
        (default; [δp, δθ] in the world frame), "mrp" or "quaternion".
    settings : dcol.solvers.SolverSettings, default dcol.geom.DERIVATIVE_SETTINGS.
    threads : worker threads of the native batch (default 1).

    Returns
    -------
    CollisionConstraints: alpha (N, M), jacobian (N, M, P), status (N, M).
    """
    r_knots, _ = checked_vectors(r, "r", 3)
    if not isinstance(obstacles, Sequence) or len(obstacles) == 0:
        raise ValueError("obstacles must be a non-empty sequence of dcol.geom.Obstacle")
    for j, obstacle in enumerate(obstacles):
        if not isinstance(obstacle, Obstacle):
            raise TypeError(f"obstacles[{j}] must be a dcol.geom.Obstacle, got {type(obstacle).__name__}")
    knots, count = len(r_knots), len(obstacles)
    q_array = np.asarray(q)
    q_knots = checked_array(q_array, "q", (knots, 3, 3) if q_array.ndim == 3 else (knots, 4))
    if q_knots.ndim == 2:
        check_quaternion_norms(q_knots, "q")
    # Pair (k, j) sits at row k * M + j: the body's pose repeated per obstacle, the obstacles tiled per knot.
    r_obstacles = np.tile(np.stack([o.r for o in obstacles]), (knots, 1))
    q_shape = obstacles[0].q.shape
    if any(o.q.shape != q_shape for o in obstacles):
        raise ValueError("obstacles must all give their orientation in one form: quaternions or matrices")
    q_obstacles = np.tile(np.stack([o.q for o in obstacles]), (knots,) + (1,) * len(q_shape))
    result = proximity_gradient_batch(
        shape,
        np.repeat(r_knots, count, axis=0),
        np.repeat(q_knots, count, axis=0),
        [o.shape for o in obstacles] * knots,
        r_obstacles,
        q_obstacles,
        parameterization=parameterization,
        settings=settings,
        threads=threads,
    )
    body_columns = result.gradient.shape[1] // 2
    return CollisionConstraints(
        alpha=np.asarray(result.alpha).reshape(knots, count),
        jacobian=result.gradient[:, :body_columns].reshape(knots, count, body_columns),
        status=np.asarray(result.status).reshape(knots, count),
    )
