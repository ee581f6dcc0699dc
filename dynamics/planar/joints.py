"""Equality constraints of the planar engine (LCP-physics §A.4.1): hinge joints (body–body and
body–world), fixed joints and single-coordinate constraints. Their Jacobian rows 𝓙_e (LCP-physics
eqs. 11–12) and position errors, which post-stabilization drives to zero (§A.7), are computed
natively with the step (native/planar/step.hpp, PlanarWorld.equality_jacobian and equality_error);
``native_joint`` gives a joint as the native model takes it; the step's derivatives through the
joints (their arms turning with the bodies, their anchors) are native too
(native/planar/step_vjp.hpp).
"""

from dataclasses import dataclass
from typing import Literal

import numpy as np

from dcol.typing import ArrayLike, FloatArray
from dcol.validation import checked_array, checked_finite, checked_integer

__all__ = ["Hinge", "FixedJoint", "AxisConstraint"]


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
