"""The planar differentiable engine of LCP-physics (de Avila Belbute-Peres et al., appendices A–B):
rigid bodies in maximal coordinates (angle, x, y), joints as equality constraints, contact and
friction as inequality constraints of one dynamics LCP (eq. 23) solved by the interior point of
:func:`dcol.solvers.solve_mlcp`."""

from .bodies import Body, Circle, Polygon, rectangle
from .contacts import Contact, FaceFeature, PointsFeature, detect_contacts
from .engine import DynamicsLCP, PlanarBatchStep, PlanarStep, PlanarStepCotangents, PlanarWorld
from .joints import AxisConstraint, FixedJoint, Hinge

__all__ = [
    "Circle",
    "Polygon",
    "rectangle",
    "Body",
    "Hinge",
    "FixedJoint",
    "AxisConstraint",
    "Contact",
    "PointsFeature",
    "FaceFeature",
    "detect_contacts",
    "PlanarWorld",
    "PlanarStep",
    "PlanarBatchStep",
    "PlanarStepCotangents",
    "DynamicsLCP",
]
