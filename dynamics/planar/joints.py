"""Equality constraints of the planar engine (LCP-physics §A.4.1): hinge joints (body–body and
body–world), fixed joints and single-coordinate constraints. Their Jacobian rows 𝓙_e (LCP-physics
eqs. 11–12) and position errors, which post-stabilization drives to zero (§A.7), are computed
natively with the step (native/planar/step.hpp, PlanarWorld.equality_jacobian and equality_error);
``native_joint`` gives a joint as the native model takes it.

For the step's gradients, a joint gives, at positions (n, 3) of (angle, x, y) rows, the derivative
of each of its blocks' angle column with respect to that body's angle (the only entries of 𝓙_e that
vary with the positions) and the cotangent of its anchors from a cotangent of its rows of 𝓙_e.
"""

from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np

from dcol.typing import ArrayLike, FloatArray
from dcol.validation import checked_array, checked_finite, checked_integer

from .bodies import PERPENDICULAR, rotation

__all__ = ["Hinge", "FixedJoint", "AxisConstraint"]

AngleCurvature = list[tuple[int, FloatArray]]


def _checked_bodies(body_a: object, body_b: object) -> tuple[int, int | None]:
    a = checked_integer(body_a, "body_a", minimum=0)
    b = None if body_b is None else checked_integer(body_b, "body_b", minimum=0)
    if a == b:
        raise ValueError(f"body_a and body_b must differ, both are {a}")
    return a, b


@dataclass(frozen=True)
class Hinge:
    """A hinge (revolute) joint: the point ``anchor_a`` (2,) of body_a (its body frame) coincides
    with the point ``anchor_b`` of body_b (its body frame), or, with body_b None, with the fixed
    world point ``anchor_b``. Two rows (LCP-physics §A.4.1)."""

    body_a: int
    anchor_a: ArrayLike
    body_b: int | None
    anchor_b: ArrayLike

    def __post_init__(self) -> None:
        a, b = _checked_bodies(self.body_a, self.body_b)
        object.__setattr__(self, "body_a", a)
        object.__setattr__(self, "body_b", b)
        object.__setattr__(self, "anchor_a", checked_array(self.anchor_a, "anchor_a", (2,)))
        object.__setattr__(self, "anchor_b", checked_array(self.anchor_b, "anchor_b", (2,)))

    def _arms(self, positions: FloatArray) -> tuple[FloatArray, FloatArray]:
        """World-frame offsets r_a, r_b from the centres to the anchors (r_b the world point itself
        for the world)."""
        r_a = rotation(positions[self.body_a, 0]) @ np.asarray(self.anchor_a)
        if self.body_b is None:
            return r_a, np.asarray(self.anchor_b)
        return r_a, rotation(positions[self.body_b, 0]) @ np.asarray(self.anchor_b)

    rows: ClassVar[int] = 2  # of 𝓙_e

    def angle_curvature(self, positions: FloatArray) -> AngleCurvature:
        """∂(angle column of each block)/∂(that body's angle): R(π/2)² r = −r, and +r_b for b."""
        r_a, r_b = self._arms(positions)
        curvature = [(self.body_a, -r_a)]
        if self.body_b is not None:
            curvature.append((self.body_b, r_b))
        return curvature

    def anchor_vjp(self, positions: FloatArray, grad_rows: FloatArray) -> FloatArray:
        """∂ℓ/∂(anchor_a, anchor_b) (2, 2) from ∂ℓ/∂ of this joint's rows of 𝓙_e (2, 3n); the world
        point anchor_b does not enter 𝓙_e (its cotangent is zero)."""
        grad = np.zeros((2, 2))
        grad[0] = (PERPENDICULAR @ rotation(positions[self.body_a, 0])).T @ grad_rows[:, 3 * self.body_a]
        if self.body_b is not None:
            grad[1] = -(PERPENDICULAR @ rotation(positions[self.body_b, 0])).T @ grad_rows[:, 3 * self.body_b]
        return grad


@dataclass(frozen=True)
class FixedJoint:
    """body_a welded to body_b (or to the world, body_b None): body_a's centre stays at the point
    ``anchor_b`` (2,) of body_b's frame (a world point for the world) and θ_a − θ_b stays ``angle``
    (θ_a itself for the world). Three rows: a hinge at body_a's centre and a rotation row."""

    body_a: int
    body_b: int | None
    anchor_b: ArrayLike
    angle: float = 0.0

    def __post_init__(self) -> None:
        a, b = _checked_bodies(self.body_a, self.body_b)
        object.__setattr__(self, "body_a", a)
        object.__setattr__(self, "body_b", b)
        object.__setattr__(self, "anchor_b", checked_array(self.anchor_b, "anchor_b", (2,)))
        object.__setattr__(self, "angle", checked_finite(self.angle, "angle"))

    def _hinge(self) -> Hinge:
        return Hinge(self.body_a, np.zeros(2), self.body_b, self.anchor_b)

    rows: ClassVar[int] = 3  # of 𝓙_e

    def angle_curvature(self, positions: FloatArray) -> AngleCurvature:
        """As the hinge's at body_a's centre (zero arm for a), zero on the rotation row."""
        return [(body, np.append(vector, 0.0)) for body, vector in self._hinge().angle_curvature(positions)]

    def anchor_vjp(self, positions: FloatArray, grad_rows: FloatArray) -> FloatArray:
        """∂ℓ/∂(anchor_a, anchor_b) (2, 2): row 0 (body_a's centre, not a parameter) is zero."""
        return self._hinge().anchor_vjp(positions, grad_rows[:2]) * [[0.0], [1.0]]


AXES = {"angle": 0, "x": 1, "y": 2}


@dataclass(frozen=True)
class AxisConstraint:
    """One coordinate of a body held at ``value``: ``axis`` is "angle", "x" or "y" (the single-axis
    constraints for building mechanisms, e.g. a cart on a rail). One row."""

    body: int
    axis: Literal["angle", "x", "y"]
    value: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "body", checked_integer(self.body, "body", minimum=0))
        if self.axis not in AXES:
            raise ValueError(f"axis must be one of {sorted(AXES)}, got {self.axis!r}")
        object.__setattr__(self, "value", checked_finite(self.value, "value"))

    rows: ClassVar[int] = 1  # of 𝓙_e

    def angle_curvature(self, positions: FloatArray) -> AngleCurvature:
        return []  # a constant row

    def anchor_vjp(self, positions: FloatArray, grad_rows: FloatArray) -> FloatArray:
        return np.zeros((2, 2))  # no anchors


Joint = Hinge | FixedJoint | AxisConstraint


def joint_bodies(joint: Joint) -> tuple[int, ...]:
    """The indices of the bodies a joint binds."""
    if isinstance(joint, AxisConstraint):
        return (joint.body,)
    return (joint.body_a,) if joint.body_b is None else (joint.body_a, joint.body_b)


# The joint kinds of the native model (native/planar/step.hpp, PlanarJoint::Kind).
_HINGE, _FIXED, _AXIS = 0, 1, 2


def native_joint(joint: Joint) -> tuple[int, tuple[int, int], FloatArray, float, int, float]:
    """A joint as the native model takes it: kind (0 hinge, 1 fixed, 2 axis), its bodies (−1: the
    world), anchors (4,) (anchor_a, anchor_b), angle, axis (0 angle, 1 x, 2 y) and value."""
    if isinstance(joint, AxisConstraint):
        return _AXIS, (joint.body, -1), np.zeros(4), 0.0, AXES[joint.axis], joint.value
    body_b = -1 if joint.body_b is None else joint.body_b
    if isinstance(joint, Hinge):
        anchors = np.concatenate([np.asarray(joint.anchor_a), np.asarray(joint.anchor_b)])
        return _HINGE, (joint.body_a, body_b), anchors, 0.0, 0, 0.0
    return (
        _FIXED,
        (joint.body_a, body_b),
        np.concatenate([np.zeros(2), np.asarray(joint.anchor_b)]),
        joint.angle,
        0,
        0.0,
    )
