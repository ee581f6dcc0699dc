"""
Native parts of the planar engine (dcol.dynamics.planar).
"""
from __future__ import annotations
import collections.abc
import numpy
import numpy.typing
import typing
__all__: list[str] = ['Model', 'Shapes', 'StepData', 'closest_points', 'contacts', 'detect_contacts', 'dynamics_lcp', 'equality_rows', 'feature_geometry', 'step', 'step_batch', 'step_batch_vjp', 'step_vjp']
class Shapes:
    """
    The shapes of a planar scene's bodies, for detect_contacts.
    """
    def __init__(self, radius: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], corner_count: typing.Annotated[numpy.typing.ArrayLike, numpy.int32], corners: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], edge_normals: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        """
        Body i: a circle of radius[i] where corner_count[i] is 0, else the polygon of the next corner_count[i] rows of corners (V, 2) (counter-clockwise, centroid at the origin) and their edges' outward normals edge_normals (V, 2).
        """
class Model:
    """
    A planar scene: shapes, bodies, joints and the step's settings.
    """
    def __init__(self, shapes: Shapes, mass: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], inertia: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], inertia_per_mass: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], restitution: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], friction: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], joint_kind: typing.Annotated[numpy.typing.ArrayLike, numpy.int32], joint_bodies: typing.Annotated[numpy.typing.ArrayLike, numpy.int32], joint_anchors: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], joint_angle: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], joint_axis: typing.Annotated[numpy.typing.ArrayLike, numpy.int32], joint_value: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], skipped: typing.Annotated[numpy.typing.ArrayLike, numpy.int32], gravity: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], dt: typing.SupportsFloat | typing.SupportsIndex, margin: typing.SupportsFloat | typing.SupportsIndex, tol: typing.SupportsFloat | typing.SupportsIndex, penetration_tolerance: typing.SupportsFloat | typing.SupportsIndex, post_stabilization: bool, max_halvings: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        inertia_per_mass (bodies,): ∂inertia/∂mass (the shape's inertia per unit mass, 0 where the inertia is given). Joints: kind (J,) 0 hinge, 1 fixed, 2 axis; bodies (J, 2) (−1: the world); anchors (J, 4) anchor_a, anchor_b; angle, axis (0 angle, 1 x, 2 y), value (J,) each. skipped (bodies, bodies): pairs (i, j), i < j, not tested for contact.
        """
class StepData:
    """
    A step's native data, which its backward pass (step_vjp) reuses, and the model it was taken in.
    """
def closest_points(points_a: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], points_b: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> tuple:
    """
    (distance, point_a, point_b, corners_a, corners_b, overlapping) of the convex hulls of points_a (k, 2) and points_b (l, 2), by GJK.
    """
def contacts(model: Model, positions: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> tuple:
    """
    The contacts at positions (bodies, 3) as detect_contacts returns them.
    """
def detect_contacts(shapes: Shapes, positions: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], margin: typing.SupportsFloat | typing.SupportsIndex, skipped: typing.Annotated[numpy.typing.ArrayLike, numpy.int32]) -> tuple:
    """
    (pairs (K, 2), kinds (K,), reference_is_b (K,), data (K, 12), geometry (K, 7)) of the contacts (gap < margin) at positions (bodies, 3), skipping the pairs (i, j), i < j, where skipped[i, j] (bodies, bodies) is nonzero.
    """
def dynamics_lcp(model: Model, positions: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], velocities: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], forces: typing.Annotated[numpy.typing.ArrayLike, numpy.float64] | None) -> dict:
    """
    The dynamics LCP (M, q, A, G, F, h), its Jacobians (J_e, J_c, J_f), mu, k, rubbing and its contacts, as a dict.
    """
def equality_rows(model: Model, positions: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> tuple:
    """
    (J_e (rows, 3 bodies), the joints' position errors (rows,)) at positions (bodies, 3).
    """
def feature_geometry(kinds: typing.Annotated[numpy.typing.ArrayLike, numpy.int32], reference_is_b: typing.Annotated[numpy.typing.ArrayLike, numpy.int32], data: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], poses_a: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], poses_b: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], with_jacobians: bool) -> tuple:
    """
    (geometry (K, 7): normal, arm_a, arm_b, gap; jacobians (K, 6, 6) of (normal, arm_a, arm_b) with respect to (pose_a, pose_b), or None) of K contact features at poses (K, 3) each.
    """
def step(model: Model, positions: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], velocities: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], forces: typing.Annotated[numpy.typing.ArrayLike, numpy.float64] | None) -> dict:
    """
    One step from positions, velocities, forces (bodies, 3) (forces None: none): dynamics_lcp's dict with positions, velocities, dt, solution, stabilization (None where none was solved) and native (the StepData step_vjp takes).
    """
def step_batch(model: Model, positions: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], velocities: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], forces: typing.Annotated[numpy.typing.ArrayLike, numpy.float64] | None, threads: typing.SupportsInt | typing.SupportsIndex) -> list:
    """
    step of B scenes (B, bodies, 3) on up to `threads` threads without the GIL: a list of step's dicts.
    """
def step_batch_vjp(steps: collections.abc.Sequence[StepData], positions: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], velocities: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], grad_velocities: typing.Annotated[numpy.typing.ArrayLike, numpy.float64] | None, grad_positions: typing.Annotated[numpy.typing.ArrayLike, numpy.float64] | None, threads: typing.SupportsInt | typing.SupportsIndex) -> tuple:
    """
    step_vjp of B steps (B, bodies, 3 arrays) on up to `threads` threads without the GIL: its tuple with a leading axis B on each array.
    """
def step_vjp(step: StepData, positions: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], velocities: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], grad_velocities: typing.Annotated[numpy.typing.ArrayLike, numpy.float64] | None, grad_positions: typing.Annotated[numpy.typing.ArrayLike, numpy.float64] | None) -> tuple:
    """
    Cotangents (velocities, forces (bodies, 3), mass, inertia, restitution, friction (bodies,), anchors (joints, 2, 2), positions (bodies, 3)) of the step `step` (a StepData) from positions, velocities (bodies, 3), its inputs, and grad_velocities, grad_positions (bodies, 3) of its results (None: zero), without the GIL. numpy.linalg.LinAlgError where the KKT matrix is singular.
    """
