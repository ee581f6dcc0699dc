"""Rigid-body algorithms on a :class:`~dcol.dynamics.Model` (native, world-axes recursions).

Every function takes one state — q (nq,), v, a, tau (nv,) — or a batch with a leading axis —
q (N, nq), v (N, nv), … — and returns arrays with the same leading axis. Batches run in one native
call with the GIL released on ``threads`` threads. Derivatives with respect to q are taken in the
tangent space (nv columns): along ``integrate(model, q, δ)``, so for a floating base along the
body-frame twist, as in Pinocchio. Spatial vectors are [linear; angular].

References: Featherstone, *Rigid Body Dynamics Algorithms* (RNEA §5.3, CRBA §6.2, LᵀDL §6.5,
ABA §7.3); derivatives after Carpentier & Mansard (RSS 2018), credited in Nimble App. F.
"""

import numpy as np

from dcol import _native
from dcol.typing import ArrayLike, FloatArray
from dcol.validation import check_quaternion_norms, checked_array, checked_threads, checked_vectors, quaternion_norms

from .model import Model

__all__ = [
    "neutral",
    "random_configuration",
    "integrate",
    "integrate_jacobians",
    "step_integrate",
    "step_integrate_jacobians",
    "difference",
    "tangent_maps",
    "frame_placement",
    "frame_jacobian",
    "frame_jacobian_derivative",
    "rnea",
    "bias_forces",
    "gravity_forces",
    "crba",
    "aba",
    "minverse",
    "rnea_derivatives",
    "aba_derivatives",
    "bias_force_derivatives",
    "minverse_derivative",
    "inertial_parameters",
    "rnea_parameter_derivatives",
    "aba_parameter_derivatives",
]

_native_dynamics = _native.dynamics


def check_floating_quaternions(model: Model, q: FloatArray, name: str = "q") -> None:
    """ValueError naming q unless the quaternion of every floating joint in q (..., nq), finite, is
    nonzero: the functions that take them normalize them. The checks of the
    Python-side functions; the native ones check alike."""
    for start, kind in zip(model.joint_q_index, model.joint_kinds):
        if kind == "floating":
            check_quaternion_norms(q[..., start + 3 : start + 7], name, "floating joint's quaternion")


def checked_configurations(model: Model, q: ArrayLike, name: str = "q") -> tuple[FloatArray, bool]:
    """One configuration (nq,) or a batch (N, nq) as checked (N, nq) rows (finite, floating joints'
    quaternions nonzero), and whether q had the batch axis."""
    rows, batched = checked_vectors(q, name, model.nq)
    check_floating_quaternions(model, rows, name)
    return rows, batched


def _unbatch(batched: bool, output: FloatArray) -> FloatArray:
    """A result of N rows as the caller's input was: all rows for a batch, the only one otherwise."""
    return output if batched else output[0]


# --- configurations --------------------------------------------------------------------------------


def neutral(model: Model) -> FloatArray:
    """(nq,) zero joint positions; floating bases at the origin with the identity quaternion."""
    q = np.zeros(model.nq)
    for start, kind in zip(model.joint_q_index, model.joint_kinds):
        if kind == "floating":
            q[start + 3] = 1.0
    return q


def random_configuration(model: Model, rng: np.random.Generator, position_range: float = 1.0) -> FloatArray:
    """(nq,) random configuration: 1-dof joints uniform within their limits (within ±π where a
    limit is infinite), floating bases at a uniform position in ±position_range and a uniform
    random orientation. rng: numpy Generator."""
    q = np.empty(model.nq)
    for start, kind in zip(model.joint_q_index, model.joint_kinds):
        if kind == "floating":
            q[start : start + 3] = rng.uniform(-position_range, position_range, 3)
            quaternion = rng.normal(size=4)
            q[start + 3 : start + 7] = quaternion / np.linalg.norm(quaternion)
        else:
            lower = model.lower_limits[start] if np.isfinite(model.lower_limits[start]) else -np.pi
            upper = model.upper_limits[start] if np.isfinite(model.upper_limits[start]) else np.pi
            q[start] = rng.uniform(lower, upper)
    return q


def _skew(w: FloatArray) -> FloatArray:
    """(..., 3, 3) cross-product matrices of (..., 3) vectors."""
    zero = np.zeros(w.shape[:-1])
    return np.stack(
        [
            np.stack([zero, -w[..., 2], w[..., 1]], -1),
            np.stack([w[..., 2], zero, -w[..., 0]], -1),
            np.stack([-w[..., 1], w[..., 0], zero], -1),
        ],
        -2,
    )


def _quaternion_product(a: FloatArray, b: FloatArray) -> FloatArray:
    w1, v1 = a[..., :1], a[..., 1:]
    w2, v2 = b[..., :1], b[..., 1:]
    return np.concatenate([w1 * w2 - np.sum(v1 * v2, -1, keepdims=True), w1 * v2 + w2 * v1 + np.cross(v1, v2)], -1)


def _quaternion_matrix(quaternion: FloatArray) -> FloatArray:
    quaternion = quaternion / quaternion_norms(quaternion)[..., None]
    w, x, y, z = np.moveaxis(quaternion, -1, 0)
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def _se3_left_jacobian_factors(theta: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(a, b) with V = I + a [ω]× + b [ω]×² the SE(3) exponential's translation factor, ω of norm θ."""
    small = theta < 1e-4
    t = np.where(small, 1.0, theta)
    a = np.where(small, 0.5 - theta**2 / 24.0, (1.0 - np.cos(t)) / t**2)
    b = np.where(small, 1.0 / 6.0 - theta**2 / 120.0, (t - np.sin(t)) / t**3)
    return a, b


def _log_pose(quaternion: FloatArray, translation: FloatArray) -> FloatArray:
    """(N, 6) twist [v; ω] with exp = the pose (quaternion (N, 4) unit, translation (N, 3))."""
    quaternion = quaternion * np.where(quaternion[:, :1] < 0.0, -1.0, 1.0)  # the shorter rotation
    sin_half = np.linalg.norm(quaternion[:, 1:], axis=1)
    theta = 2.0 * np.arctan2(sin_half, quaternion[:, 0])
    scale = np.where(
        sin_half < 1e-12, 2.0 / np.maximum(quaternion[:, 0], 1e-300), theta / np.where(sin_half < 1e-12, 1.0, sin_half)
    )
    w = scale[:, None] * quaternion[:, 1:]
    a, b = _se3_left_jacobian_factors(theta)
    W = _skew(w)
    V = np.eye(3) + a[:, None, None] * W + b[:, None, None] * W @ W
    return np.concatenate([np.linalg.solve(V, translation[..., None])[..., 0], w], 1)


# integrate, step_integrate and their Jacobians leave q and v to the native checks (shapes, finite values,
# floating joints' quaternions), whose errors name them.


def integrate(model: Model, q: ArrayLike, v: ArrayLike) -> FloatArray:
    """q ⊕ v: 1-dof joints add v; a floating joint's pose M becomes M · exp(v) (SE(3) exponential of
    the body-frame twist, as Pinocchio). q (nq,) or (N, nq), v (nv,) or (N, nv)."""
    return _native_dynamics.integrate(model._native, q, v)


def integrate_jacobians(model: Model, q: ArrayLike, v: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """(∂q⁺/∂q, ∂q⁺/∂v), each (nv, nv), of q⁺ = integrate(model, q, v), in the tangent spaces at q and
    q⁺ (Pinocchio's dIntegrate). 1-dof joints: identity blocks. A floating joint, M⁺ = M exp(ξ):
    Ad(exp(−ξ)) = exp(−ad ξ) and the SE(3) right Jacobian Σₖ (−ad ξ)ᵏ/(k+1)!
    (native/dynamics/integrate.hpp). q (nq,), v (nv,)."""
    if np.ndim(q) == 2:
        raise ValueError("integrate_jacobians takes one state: q (nq,), v (nv,)")
    d_q, d_v = _native_dynamics.integrate_jacobians(model._native, q, v)
    return d_q, d_v


def step_integrate(model: Model, q: ArrayLike, u: ArrayLike) -> FloatArray:
    """The simulation step's position update q⁺ = q ⊞ u (:class:`~dcol.dynamics.World` steps by
    q ⊞ (Δt v⁺ + δq)): as :func:`integrate`, except that a floating joint's origin moves straight by
    R u[:3] (u[:3] body-frame, as the velocity) while its orientation turns by R exp(u[3:]) as in
    integrate. A ball rolling without slipping then keeps its centre at its height, where integrate's
    screw motion would lower it. q (nq,) or (N, nq), u (nv,) or (N, nv)."""
    return _native_dynamics.step_integrate(model._native, q, u)


def step_integrate_jacobians(model: Model, q: ArrayLike, u: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """(∂q⁺/∂q, ∂q⁺/∂u), each (nv, nv), of q⁺ = step_integrate(model, q, u), in integrate's tangent
    spaces at q and q⁺. 1-dof joints: identity blocks. A floating joint, E = exp(u[3:]):
    [[Eᵀ, −Eᵀ [u[:3]]×], [0, Eᵀ]] and [[Eᵀ, 0], [0, J_r(u[3:])]], J_r SO(3)'s right Jacobian
    (native/dynamics/integrate.hpp). q (nq,), u (nv,)."""
    if np.ndim(q) == 2:
        raise ValueError("step_integrate_jacobians takes one state: q (nq,), u (nv,)")
    d_q, d_u = _native_dynamics.step_integrate_jacobians(model._native, q, u)
    return d_q, d_u


def difference(model: Model, q0: ArrayLike, q1: ArrayLike) -> FloatArray:
    """v with integrate(model, q0, v) = q1 (the shorter rotation for floating joints)."""
    q0, batched = checked_configurations(model, q0, "q0")
    q1, batched1 = checked_configurations(model, q1, "q1")
    if batched != batched1 or q0.shape != q1.shape:
        raise ValueError("q0 and q1 must have the same shape")
    v = np.empty((q0.shape[0], model.nv))
    for start, vstart, kind in zip(model.joint_q_index, model.joint_v_index, model.joint_kinds):
        if kind == "floating":
            a = q0[:, start + 3 : start + 7] / quaternion_norms(q0[:, start + 3 : start + 7])[:, None]
            b = q1[:, start + 3 : start + 7] / quaternion_norms(q1[:, start + 3 : start + 7])[:, None]
            relative = _quaternion_product(a * np.array([1.0, -1.0, -1.0, -1.0]), b)
            translation = np.einsum(
                "nji,nj->ni", _quaternion_matrix(a), q1[:, start : start + 3] - q0[:, start : start + 3]
            )
            v[:, vstart : vstart + 6] = _log_pose(relative, translation)
        else:
            v[:, vstart] = q1[:, start] - q0[:, start]
    return _unbatch(batched, v)


def _quaternion_tangent(quaternion: FloatArray) -> FloatArray:
    """(N, 4, 3) ∂(q ⊗ [1; δθ/2])/∂δθ = ½ L(q)[:, 1:] for unit quaternions q (N, 4), L(q) the matrix of
    q ⊗ ·; its columns are orthogonal to q and to each other, of norm ½."""
    w, x, y, z = np.moveaxis(quaternion, -1, 0)
    return 0.5 * np.stack(
        [
            np.stack([-x, -y, -z], -1),
            np.stack([w, -z, y], -1),
            np.stack([z, w, -x], -1),
            np.stack([-y, x, w], -1),
        ],
        -2,
    )


def tangent_maps(model: Model, q: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Maps between the tangent space at q and q's coordinates: (T (nq, nv), T⁺ (nv, nq)), float64.

    T = ∂integrate(model, q, δ)/∂δ at δ = 0: a tangent step δ moves the coordinates by T δ, so a
    cotangent g (nq,) on the coordinates of a configuration is Tᵀ g in its tangent space (the grad_q
    that Step.vjp takes for q⁺). T⁺ = ∂difference(model, q, q′)/∂q′ at q′ = q: a change dq of the
    coordinates is the tangent step T⁺ dq, so a tangent cotangent c (nv,) (Step.vjp's q) is T⁺ᵀ c on
    the coordinates. 1-dof joints: 1 in both. A floating joint, position p and quaternion ρ,
    q̂ = ρ / ‖ρ‖, R = R(q̂):

        T = [[R, 0], [0, ½ L(q̂)[:, 1:]]],        T⁺ = [[Rᵀ, 0], [0, (2 / ‖ρ‖) L(q̂)[:, 1:]ᵀ]],

    the position moving along the body-frame translation, L(q̂) the matrix of q̂ ⊗ ·. T⁺ is zero along
    ρ itself, since every function normalizes the quaternion, and T⁺ T = I for unit quaternions.

    q : (nq,) or (N, nq) float64; for a batch the maps are (N, nq, nv) and (N, nv, nq).
    """
    q, batched = checked_configurations(model, q)
    count = q.shape[0]
    to_configuration = np.zeros((count, model.nq, model.nv))
    to_tangent = np.zeros((count, model.nv, model.nq))
    for start, vstart, kind in zip(model.joint_q_index, model.joint_v_index, model.joint_kinds):
        if kind == "floating":
            norm = quaternion_norms(q[:, start + 3 : start + 7])
            quaternion = q[:, start + 3 : start + 7] / norm[:, None]
            R = _quaternion_matrix(quaternion)
            G = _quaternion_tangent(quaternion)
            to_configuration[:, start : start + 3, vstart : vstart + 3] = R
            to_configuration[:, start + 3 : start + 7, vstart + 3 : vstart + 6] = G
            to_tangent[:, vstart : vstart + 3, start : start + 3] = np.swapaxes(R, 1, 2)
            # 4 Gᵀ / ‖ρ‖ = (2 / ‖ρ‖) L[:, 1:]ᵀ: Gᵀ G = I / 4.
            to_tangent[:, vstart + 3 : vstart + 6, start + 3 : start + 7] = (
                4.0 * np.swapaxes(G, 1, 2) / norm[:, None, None]
            )
        else:
            to_configuration[:, start, vstart] = to_tangent[:, vstart, start] = 1.0
    return _unbatch(batched, to_configuration), _unbatch(batched, to_tangent)


# --- kinematics ------------------------------------------------------------------------------------


def frame_placement(
    model: Model, q: ArrayLike, frame: str, *, threads: int | None = None
) -> tuple[FloatArray, FloatArray]:
    """World pose of a named frame (URDF link or joint).

    Returns (position (3,), quaternion (4,) [w, x, y, z]) — (N, 3), (N, 4) for a batch of q.
    """
    position, quaternion = _native_dynamics.frame_poses(
        model._native, q, [model.frame_index(frame)], checked_threads(threads)
    )
    return position[..., 0, :], quaternion[..., 0, :]


_JACOBIAN_REFERENCES = ("world_aligned", "world", "local")


def frame_jacobian(
    model: Model,
    q: ArrayLike,
    frame: str,
    *,
    point: ArrayLike | None = None,
    reference: str = "world_aligned",
    threads: int | None = None,
) -> FloatArray:
    """(6, nv) Jacobian of a named frame (N, 6, nv for a batch of q), rows [linear; angular]:

    ``reference="world_aligned"`` (default; Pinocchio's LOCAL_WORLD_ALIGNED): velocity of the frame
        origin — or of ``point`` (3,), given in the frame's coordinates — and angular velocity, in world
        axes. A joint-space step δ moves the frame by the rigid perturbation δp = J[:3] δ,
        δθ = J[3:] δ of dcol's convention, so this is also the derivative of frame_placement.
    ``"world"``: the spatial Jacobian, velocity of the body point at the world origin (WORLD).
    ``"local"``: the world-aligned rows of the frame origin (or point) in the frame's axes (LOCAL).
    """
    if reference not in _JACOBIAN_REFERENCES:
        raise ValueError(f"reference must be one of {_JACOBIAN_REFERENCES}, got {reference!r}")
    if point is not None and reference == "world":
        raise ValueError('point does not apply to reference="world" (the velocity at the world origin)')
    J = _native_dynamics.frame_jacobian(model._native, q, model.frame_index(frame), checked_threads(threads))
    if point is not None or reference != "world_aligned":
        origin, quaternion = frame_placement(model, q, frame)
        R = _quaternion_matrix(quaternion)
        lever = -origin if reference == "world" else np.zeros_like(origin)
        if point is not None:
            lever = lever + R @ checked_array(point, "point", (3,))
        # v_point = v_origin + ω × lever = v_origin − [lever]× ω
        J[..., :3, :] -= _skew(lever) @ J[..., 3:, :]
        if reference == "local":
            Rt = np.swapaxes(R, -1, -2)
            J = np.concatenate([Rt @ J[..., :3, :], Rt @ J[..., 3:, :]], -2)
    return J


def frame_jacobian_derivative(model: Model, q: ArrayLike, frame: str, *, threads: int | None = None) -> FloatArray:
    """(6, nv, nv) array D with D[:, :, k] = ∂J/∂q_k for J = frame_jacobian (tangent direction k).
    For a force f (6,) [force; torque] applied at the frame origin, ∂(Jᵀf)/∂q = einsum("rik,r->ik", D, f).
    (N, 6, nv, nv) for a batch."""
    return _native_dynamics.frame_jacobian_derivative(
        model._native, q, model.frame_index(frame), checked_threads(threads)
    )


# --- dynamics --------------------------------------------------------------------------------------
# Shapes, finiteness and the floating-base quaternions are checked natively, with errors naming the
# argument.


def _zeros_like_velocity(model: Model, q: ArrayLike) -> FloatArray:
    """Zero joint-space vectors with q's batch shape."""
    return np.zeros(np.shape(q)[:-1] + (model.nv,))


def rnea(model: Model, q: ArrayLike, v: ArrayLike, a: ArrayLike, *, threads: int | None = None) -> FloatArray:
    """Inverse dynamics τ = M(q) a + c(q, v) by the recursive Newton–Euler algorithm; (nv,)."""
    return _native_dynamics.rnea(model._native, q, v, a, True, checked_threads(threads))


def bias_forces(model: Model, q: ArrayLike, v: ArrayLike, *, threads: int | None = None) -> FloatArray:
    """c(q, v) = rnea(q, v, 0): Coriolis, centrifugal and gravity forces; (nv,)."""
    return _native_dynamics.rnea(model._native, q, v, np.zeros(np.shape(v)), True, checked_threads(threads))


def gravity_forces(model: Model, q: ArrayLike, *, threads: int | None = None) -> FloatArray:
    """g(q) = rnea(q, 0, 0); (nv,)."""
    zero = _zeros_like_velocity(model, q)
    return _native_dynamics.rnea(model._native, q, zero, zero, True, checked_threads(threads))


def crba(model: Model, q: ArrayLike, *, threads: int | None = None) -> FloatArray:
    """Joint-space inertia matrix M(q) (nv, nv), symmetric positive definite (composite rigid bodies)."""
    return _native_dynamics.crba(model._native, q, checked_threads(threads))


def aba(model: Model, q: ArrayLike, v: ArrayLike, tau: ArrayLike, *, threads: int | None = None) -> FloatArray:
    """Forward dynamics a = M⁻¹(τ − c) by the articulated-body algorithm; (nv,)."""
    return _native_dynamics.aba(model._native, q, v, tau, checked_threads(threads))


def minverse(model: Model, q: ArrayLike, *, threads: int | None = None) -> FloatArray:
    """M(q)⁻¹ (nv, nv), from the tree-sparse LᵀDL factorization of M."""
    return _native_dynamics.minverse(model._native, q, checked_threads(threads))


def rnea_derivatives(
    model: Model, q: ArrayLike, v: ArrayLike, a: ArrayLike, *, threads: int | None = None
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(∂τ/∂q, ∂τ/∂v, ∂τ/∂a = M), each (nv, nv), of τ = rnea(q, v, a)."""
    return _native_dynamics.rnea_derivatives(model._native, q, v, a, checked_threads(threads))


def aba_derivatives(
    model: Model, q: ArrayLike, v: ArrayLike, tau: ArrayLike, *, threads: int | None = None
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(∂a/∂q, ∂a/∂v, ∂a/∂τ = M⁻¹), each (nv, nv), of a = aba(q, v, τ)."""
    return _native_dynamics.aba_derivatives(model._native, q, v, tau, checked_threads(threads))[1:]


def bias_force_derivatives(
    model: Model, q: ArrayLike, v: ArrayLike, *, threads: int | None = None
) -> tuple[FloatArray, FloatArray]:
    """(∂c/∂q, ∂c/∂v), each (nv, nv), of c = bias_forces(q, v) (Nimble App. F, Alg. 3)."""
    return _native_dynamics.rnea_derivatives(model._native, q, v, np.zeros(np.shape(v)), checked_threads(threads))[:2]


def minverse_derivative(model: Model, q: ArrayLike, z: ArrayLike, *, threads: int | None = None) -> FloatArray:
    """∂(M(q)⁻¹ z)/∂q (nv, nv) for a fixed z (nv,) (Nimble eq. 39, App. F Alg. 2)."""
    return _native_dynamics.minverse_derivative(model._native, q, z, checked_threads(threads))[1]


def inertial_parameters(model: Model) -> FloatArray:
    """(nbodies, 10) inertial parameters [m, m c_x, m c_y, m c_z, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] per
    body, c the centre of mass and I the rotational inertia about the body origin, in the body frame
    (Pinocchio's dynamic-parameter order). τ = rnea_parameter_derivatives(...) @ params.ravel()."""
    m, c, I_com = model.masses, model.coms, model.rotational_inertias
    I_origin = I_com + m[:, None, None] * (
        np.einsum("bi,bi->b", c, c)[:, None, None] * np.eye(3) - np.einsum("bi,bj->bij", c, c)
    )
    return np.column_stack(
        [
            m,
            m[:, None] * c,
            I_origin[:, 0, 0],
            I_origin[:, 0, 1],
            I_origin[:, 1, 1],
            I_origin[:, 0, 2],
            I_origin[:, 1, 2],
            I_origin[:, 2, 2],
        ]
    )


def rnea_parameter_derivatives(
    model: Model, q: ArrayLike, v: ArrayLike, a: ArrayLike, *, threads: int | None = None
) -> FloatArray:
    """∂τ/∂π (nv, 10 nbodies) of τ = rnea(q, v, a) for the parameters of inertial_parameters, body
    after body: the joint torque regressor (τ is linear in π)."""
    return _native_dynamics.joint_torque_regressor(model._native, q, v, a, checked_threads(threads))


def aba_parameter_derivatives(
    model: Model, q: ArrayLike, v: ArrayLike, tau: ArrayLike, *, threads: int | None = None
) -> FloatArray:
    """∂a/∂π (nv, 10 nbodies) of a = aba(q, v, τ): −M⁻¹ ∂τ/∂π at the forward-dynamics solution."""
    return _native_dynamics.aba_parameter_derivatives(model._native, q, v, tau, checked_threads(threads))[1]
