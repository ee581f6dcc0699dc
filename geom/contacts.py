"""Contact points, normals and frames between two shapes, with their derivatives (Nimble App. C,
Simple §III-D); the rules are described in native/contact/contacts.hpp and summarized here.

The signed distance (:mod:`dcol.geom.distance`) decides whether a pair is within the margin and gives
the witness normal n (from a to b). Each shape then offers the part of it within the feature
tolerance of the witness plane: a point, a segment or a polygon (a sphere is a point of radius R, a
capsule a segment of radius R, a padded polygon a polygon of radius R; polytope and mesh features
have radius 0). In the witness plane these are Nimble's witness hulls: a corner of one inside the
other's polygon is a point–face contact, crossing sides are edge–edge contacts, and a point
against a point or a segment is Nimble's sphere–sphere, mesh–sphere, pipe–sphere and vertex–pipe
rules in one formula. Flat features touching give the whole manifold (a box resting on a plane: its
four corners). A cylinder's or a cone's flat cap is a square of four rim points and a cylinder's side
line its axis inflated by its radius, so that a cylinder standing on its cap or lying on its side has
its patch; against a face a tilted cap or side gives its rim points turned to the face, each at its own
depth. Ellipsoids, and cylinders and cones touching at a rim point or apex or against a point, have one
contact at the midpoint of the signed distance's witness points.

Each contact has a point, a unit normal from a to b, two tangents (the minimal rotation taking
world z to the normal applied to x and y: continuous in the normal except at exactly −z, where
(x, −y) is taken) and a signed separation along the normal (> 0 apart). Derivatives are with
respect to rigid motions [δp_a, δθ_a, δp_b, δθ_b] (12 columns, docs/conventions.md) and come from the same
formulas in forward mode: a face contact's normal turns only with the face's body, a curved
contact's normal also with the other body's position (Nimble §V).
"""

from dataclasses import dataclass

import numpy as np

from dcol import _native
from dcol._native import ContactRule
from dcol.printing import value_text
from dcol.solvers import SolverSettings, Status
from dcol.typing import ArrayLike, FloatArray, Int8Array
from dcol.validation import checked_instance, checked_real

from .distance import DISTANCE_SETTINGS
from .shapes import Shape

__all__ = ["ContactRule", "ContactSet", "contacts"]


@dataclass(frozen=True)
class ContactSet:
    """K contacts between two shapes.

    point, normal, tangent1, tangent2 : (K, 3) float64 world; separation : (K,) float64;
    rule : (K,) int8 ContactRule codes (an array, to select with ``rule == ContactRule.FACE_POINT``;
    :attr:`rules` gives them as ContactRule members). status : dcol.solvers.Status of the signed-distance solve that
    found them (of a scene's, the worst): a solve that failed finds no contacts, and says so here
    rather than reporting the shapes apart. With derivatives: d_point, d_normal, d_tangent1,
    d_tangent2 (K, 3, 12) and d_separation (K, 12) float64, with respect to [δp_a, δθ_a, δp_b, δθ_b];
    else None.
    """

    point: FloatArray
    normal: FloatArray
    tangent1: FloatArray
    tangent2: FloatArray
    separation: FloatArray
    rule: Int8Array
    status: Status
    d_point: FloatArray | None = None
    d_normal: FloatArray | None = None
    d_tangent1: FloatArray | None = None
    d_tangent2: FloatArray | None = None
    d_separation: FloatArray | None = None

    def __len__(self) -> int:
        return len(self.separation)

    @property
    def rules(self) -> list[ContactRule]:
        """The rule of each contact as a ContactRule member (K of them)."""
        return [ContactRule(code) for code in self.rule]

    def __repr__(self) -> str:
        rules, counts = np.unique(self.rule, return_counts=True)
        by_rule = ", ".join(f"{ContactRule(rule).name} ×{count}" for rule, count in zip(rules, counts))
        separation = f"separation {self.separation.min():.6g} to {self.separation.max():.6g}, " if len(self) else ""
        return (
            f"{type(self).__name__}({len(self)} contacts{': ' + by_rule if len(self) else ''}, {separation}"
            f"status={value_text(self.status)}, derivatives={self.d_point is not None})"
        )


def contacts(
    a: Shape,
    r_a: ArrayLike,
    q_a: ArrayLike,
    b: Shape,
    r_b: ArrayLike,
    q_b: ArrayLike,
    *,
    margin: float = 0.0,
    feature_tolerance: float = 1e-3,
    derivatives: bool = False,
    settings: SolverSettings | None = None,
) -> ContactSet:
    """Contacts between shapes a and b at body poses (r, q), if their signed distance is ≤ margin.

    Parameters
    ----------
    a, b : dcol.geom shapes. r_a, r_b : (3,); q_a, q_b : (4,) quaternions ``[w, x, y, z]`` or (3, 3).
    margin : float ≥ 0, report pairs up to this far apart.
    feature_tolerance : float in (0, 0.1], relative to the shapes' size: how close to the witness plane
        a vertex must be to take part in a flat contact (a face tilted by less than about this many
        radians still rests on all its corners).
    derivatives : bool, also return the derivatives of every contact.
    settings : dcol.solvers.SolverSettings of the distance solve, default dcol.geom.DISTANCE_SETTINGS.

    Returns
    -------
    ContactSet (empty when the shapes are farther apart than margin).
    """
    out = _native.contacts(
        a,
        r_a,
        q_a,
        b,
        r_b,
        q_b,
        checked_real(margin, "margin"),
        checked_real(feature_tolerance, "feature_tolerance"),
        bool(derivatives),
        checked_instance(settings, "settings", SolverSettings, DISTANCE_SETTINGS),
    )
    return ContactSet(**out)
