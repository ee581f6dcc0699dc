"""Free convex bodies whose contacts are DCOL's scaling constraints α(q⁺) ≥ 1, one per pair (DCOL §IV-B).

:class:`ScalingContactSimulator` steps rigid bodies, each one :mod:`dcol.geom` shape, among optional static
obstacles by complementarity time stepping. With V = [v; ω] per body (v the centre's velocity in the world
frame, ω the angular velocity in the body frame, as MuJoCo's free joint) one step of length Δt solves

    M (V⁺ − V_free) = Hᵀ λ,   0 ≤ λ ⊥ α(q⁺) − 1 ≥ 0,   r⁺ = r + Δt v⁺,   Q⁺ = Q exp(Δt [ω⁺]×),

one λ and one α per pair (body–body and body–obstacle), M = diag(m, I) per body with I its rotational
inertia about its centre in body axes, and H = ∂α(q⁺)/∂V⁺ / Δt: the pair's α gradient in the "rigid"
columns [δp; δθ] (:func:`dcol.geom.proximity_gradient_batch`) chained with the step's kinematics (δp = Δt δv,
δθ = Q⁺ J_r(Δt ω⁺) Δt δω with J_r SO(3)'s right Jacobian), so that Hᵀ λ is the constraint's generalized
impulse. The free motion V_free has gravity on v (r⁺ = r + Δt v⁺ then takes ½ m g² Δt² of energy out of a
falling body each step) and Euler's equations I ω̇ = −ω × I ω on ω by the implicit midpoint rule, as
dcol.dynamics.World takes its velocity terms: I (ω_free − ω) = −Δt ω̄ × I ω̄ with ω̄ the mean of the two,
which keeps a torque-free body's kinetic energy and the magnitude of its angular momentum exactly, whatever
its inertia and spin rate. The attitude, like the position, is of first order: the world direction of a
free body's angular momentum drifts by O(Δt²) per step.

The complementarity problem is nonlinear in V⁺. Newton's method (Josephy's) linearizes α about the
current iterate, α(V) ≈ α(V_k) + Δt H (V − V_k), which leaves an LCP in λ per iteration,
``w = Δt H M⁻¹ Hᵀ λ + α(V_k) − 1 + Δt H (V_free − V_k)`` (:func:`dcol.solvers.solve_lcp`, Lemke), and
V_{k+1} = V_free + M⁻¹ Hᵀ λ. Where a pair touches at an edge or a corner, α's gradient turns between
iterates (the witness point jumps between the edge's ends) and one gradient per pair cannot stop both ends:
Newton's iterates would cycle. So the rows that pushed in the last LCP stay in the next one beside the new
rows, each with its pair's current α: the pair's impulse may split between the gradients it showed, as a
contact manifold would spread it, and where it pushes the pair's α still ends at 1. A step has converged
when, at q⁺(V_k), every α ≥ 1 − ``tolerance`` and every pair that pushes has α ≤ 1 + ``tolerance`` (the
complementarity problem solved to that tolerance; the free motion converges at once when it touches
nothing); it returns q⁺(V_k), V_k and the impulses that gave V_k, summed per pair. A step that does not
converge says so in its status (:class:`ScalingContactStatus`); a rollout raises.

Impulses are inelastic and frictionless: a contact stops the approach along α's gradient and no more, so
impacts take energy out. Where a pair's gradient turns within a step (a spinning body's edge), terms of
second order in the step can return a small part of it: :attr:`ScalingContactRollout.energy` monitors it.
With one point per pair and no friction, a box dropped flat on the ground keeps rocking from corner to
corner and spinning about the vertical, and nothing rests on a slope or in a pile; World's contact
manifolds and Coulomb friction hold such contacts. That is why this is a small simulator of its own and not
a contact model of :class:`dcol.dynamics.World`: it is DCOL's experiment, α as a contact constraint, for
tens of bodies (every pair is an LCP row in every Newton iteration).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from dcol.geom import (
    Box,
    Capsule,
    Cone,
    Cylinder,
    Ellipsoid,
    Obstacle,
    Polygon,
    Polytope,
    Shape,
    Sphere,
    proximity_gradient_batch,
)
from dcol.geom.rotations import rotation_matrix
from dcol.geom.tessellate import surface_mesh
from dcol.printing import summary_repr
from dcol.solvers import LCPStatus, Status, solve_lcp
from dcol.typing import ArrayLike, FloatArray, Int32Array, IntArray
from dcol.validation import (
    check_quaternion_norms,
    checked_array,
    checked_integer,
    checked_positive,
    checked_threads,
    float_array,
    quaternion_norms,
)

from .algorithms import _se3_left_jacobian_factors, _skew

__all__ = [
    "solid_inertia",
    "ScalingContactStatus",
    "ScalingContactStep",
    "ScalingContactRollout",
    "ScalingContactSimulator",
]

# Points around a circle of the padded polygon's tessellation whose volume integrals stand for its inertia.
_POLYGON_RESOLUTION = 96
# Euler's equations at the midpoint are solved to rounding; Newton's method gets there in a few iterations.
_SPIN_ITERATIONS = 50


def solid_inertia(shape: Shape, mass: float) -> FloatArray:
    """Rotational inertia of the shape as a solid of uniform density and the given mass, about the origin of
    its body frame, in body axes.

    Closed forms for Sphere, Box, Cylinder, Capsule, Cone (whose frame origin, a quarter of the height from
    the base, is its centroid) and Ellipsoid (∫ y yᵀ dm = m P⁻¹ / 5); a Polytope's (a ConvexMesh's) from
    its vertices' hull by trimesh's mass properties, exact; a Polygon's from its tessellation
    (dcol.geom.tessellate.surface_mesh), an inscribed polyhedron, so slightly below the true inertia. A
    shape's offset rotation turns the inertia into the body's axes.

    shape : a dcol.geom shape whose centroid is the origin of its body frame (the body's centre of mass);
        ValueError for an offset position or a polytope or polygon whose centroid lies elsewhere.
    mass : float > 0.

    Returns (3, 3) float64, symmetric positive definite.
    """
    if not isinstance(shape, Shape):
        raise TypeError(f"shape must be a dcol.geom shape, got {type(shape).__name__}")
    mass = checked_positive(mass, "mass")
    if np.any(shape.offset_position != 0.0):
        raise ValueError(
            "shape must sit at its body's origin (offset position 0): the body's centre of mass is its frame's "
            "origin; pass the inertia about it instead"
        )
    if isinstance(shape, Sphere):
        second_moment = np.full(3, mass * shape.R**2 / 5.0)  # ∫ y_k² dm per axis
    elif isinstance(shape, Box):
        second_moment = mass * shape.half_extents**2 / 3.0
    elif isinstance(shape, Cylinder):
        second_moment = mass * np.array([shape.L**2 / 12.0, shape.R**2 / 4.0, shape.R**2 / 4.0])
    elif isinstance(shape, Capsule):
        second_moment = _capsule_second_moment(shape.R, shape.L, mass)
    elif isinstance(shape, Cone):
        radius = shape.H * np.tan(shape.beta)
        second_moment = mass * np.array([3.0 * shape.H**2 / 80.0, 3.0 * radius**2 / 20.0, 3.0 * radius**2 / 20.0])
    elif isinstance(shape, Ellipsoid):
        moments = mass * np.linalg.inv(shape.P) / 5.0
        return _turned(shape, np.trace(moments) * np.eye(3) - moments)
    elif isinstance(shape, (Polytope, Polygon)):
        return _turned(shape, _mesh_inertia(shape, mass))
    else:
        raise ValueError(f"solid_inertia has no rule for a {type(shape).__name__}; pass the inertia instead")
    return _turned(shape, np.diag(second_moment.sum() - second_moment))


def _capsule_second_moment(R: float, L: float, mass: float) -> FloatArray:
    """(3,) ∫ y_k² dm of a capsule along x: its cylinder and the two half balls at x = ±L/2, whose
    first moments ∫ x dV = ±π R⁴/4 about their flat faces add the cross term of the shift."""
    cylinder, ball = np.pi * R**2 * L, 4.0 / 3.0 * np.pi * R**3
    density = mass / (cylinder + ball)
    along = cylinder * L**2 / 12.0 + ball * (L**2 / 4.0 + R**2 / 5.0) + np.pi * R**4 * L / 2.0
    across = cylinder * R**2 / 4.0 + ball * R**2 / 5.0
    return density * np.array([along, across, across])


def _mesh_inertia(shape: Polytope | Polygon, mass: float) -> FloatArray:
    """(3, 3) inertia about the origin of the solid bounded by the shape's hull (a polytope's vertices, a
    polygon's tessellation); ValueError when the hull's centroid is not the origin."""
    import trimesh  # on first use, as dcol.geom's meshes do: it would slow down importing dcol.dynamics

    if isinstance(shape, Polytope):
        solid = trimesh.convex.convex_hull(shape.vertices)
    else:
        # Rebuilt without its offset: the mesh in the polygon's own frame, which _turned then turns.
        vertices, faces = surface_mesh(Polygon(shape.C, shape.d, shape.R), resolution=_POLYGON_RESOLUTION)
        solid = trimesh.Trimesh(vertices, faces)
    size = float(np.abs(solid.vertices).max())
    if np.linalg.norm(solid.center_mass) > 1e-9 * size:
        raise ValueError(
            f"shape's centroid {solid.center_mass.tolist()} is not the origin of its frame (the body's centre of "
            "mass here); pass the inertia about the origin instead"
        )
    return np.asarray(solid.moment_inertia) * (mass / solid.volume)


def _turned(shape: Shape, inertia: FloatArray) -> FloatArray:
    """The shape frame's inertia in its body's axes."""
    rotation = shape.offset_rotation
    return rotation @ inertia @ rotation.T


class ScalingContactStatus(enum.IntEnum):
    """Outcome of one step of :class:`ScalingContactSimulator`."""

    CONVERGED = 0
    NEWTON_LIMIT = 1  # max_newton_iterations LCPs solved and α still off its tolerances (module docstring)
    LCP_FAILED = 2  # a Newton iteration's LCP was not solved (its status is the step's lcp_status)
    PROXIMITY_FAILED = 3  # a pair's α or gradient could not be computed (its cone program did not converge)
    SPIN_FAILED = 4  # Euler's equations at the midpoint had no solution Newton's method could find


@dataclass(frozen=True)
class ScalingContactStep:
    """One step of :class:`ScalingContactSimulator`: the state after it and how it was solved.

    positions : (B, 3) float64, the bodies' centres; quaternions : (B, 4) float64 unit ``[w, x, y, z]``.
    velocities : (B, 3) float64 world frame; angular_velocities : (B, 3) float64 body frame.
    alpha : (P,) float64, each pair's α at the returned poses (pairs in ScalingContactSimulator.pairs).
    impulses : (P,) float64 ≥ 0, each pair's λ (N s per unit of α's gradient), summed over its gradients.
    status : ScalingContactStatus; the state is the last iterate when it is not CONVERGED.
    newton_iterations : int, LCPs solved (0 when the free motion touched nothing).
    lcp_status : LCPStatus of the last LCP solved (SOLVED when none was needed).
    worst_violation : float, max over pairs of 1 − α at the returned poses (≤ 0 when nothing touches).
    """

    positions: FloatArray
    quaternions: FloatArray
    velocities: FloatArray
    angular_velocities: FloatArray
    alpha: FloatArray
    impulses: FloatArray
    status: ScalingContactStatus
    newton_iterations: int
    lcp_status: LCPStatus
    worst_violation: float

    __repr__ = summary_repr


@dataclass(frozen=True)
class ScalingContactRollout:
    """T steps of :class:`ScalingContactSimulator` from one state, every step converged.

    positions : (T + 1, B, 3); quaternions : (T + 1, B, 4); velocities, angular_velocities : (T + 1, B, 3)
        float64, the initial state first.
    energy : (T + 1,) float64, kinetic plus gravity's potential energy (ScalingContactSimulator.energy).
    impulses : (T, P) float64; worst_violation : (T,) float64, each step's max over pairs of 1 − α.
    newton_iterations : (T,) int32, LCPs solved per step.
    """

    positions: FloatArray
    quaternions: FloatArray
    velocities: FloatArray
    angular_velocities: FloatArray
    energy: FloatArray
    impulses: FloatArray
    worst_violation: FloatArray
    newton_iterations: Int32Array

    __repr__ = summary_repr


class ScalingContactSimulator:
    """Rigid convex bodies with DCOL's α(q⁺) ≥ 1 as their contact constraints (module docstring: the step).

    Every body is one dcol.geom shape whose frame origin is its centre of mass; its state is its centre's
    position, its orientation, its centre's velocity (world frame) and its angular velocity (body frame).
    Every two bodies and every body and obstacle make a pair, one constraint each.

    Parameters
    ----------
    shapes : sequence of B dcol.geom shapes, one per body (any shape DCOL's proximity takes).
    masses : float or (B,) float64, each > 0 (kg).
    inertias : None, (3, 3) or (B, 3, 3) float64: each body's rotational inertia about its centre in body
        axes, symmetric positive definite; None takes :func:`solid_inertia` of each shape.
    obstacles : sequence of dcol.geom.Obstacle, static shapes the bodies collide with.
    dt : float > 0, the time step (s); DCOL's experiment steps at 100 Hz.
    gravity : (3,) float64 (m/s²); (0, 0, 0) for DCOL's experiment.
    tolerance : float > 0, how far an α of a converged step may be below 1, and above 1 where its pair pushes.
    max_newton_iterations : int ≥ 1, LCPs a step may solve.
    threads : int or None, worker threads of the proximity batch (one by default).

    Attributes
    ----------
    pairs : (P, 2) int64, the constraints' pairs: every two bodies (i < j), then every body and obstacle,
        an obstacle k numbered B + k; the order of the results' alpha and impulses.
    masses : (B,) float64; inertias : (B, 3, 3) float64, the bodies' mass properties as used.
    """

    def __init__(
        self,
        shapes: Sequence[Shape],
        masses: float | ArrayLike,
        *,
        inertias: ArrayLike | None = None,
        obstacles: Sequence[Obstacle] = (),
        dt: float = 0.01,
        gravity: ArrayLike = (0.0, 0.0, -9.81),
        tolerance: float = 1e-9,
        max_newton_iterations: int = 30,
        threads: int | None = None,
    ) -> None:
        self.shapes = tuple(shapes)
        if not self.shapes:
            raise ValueError("shapes must hold at least one shape")
        for index, shape in enumerate(self.shapes):
            if not isinstance(shape, Shape):
                raise TypeError(f"shapes[{index}] must be a dcol.geom shape, got {type(shape).__name__}")
        count = len(self.shapes)
        self.masses = _checked_masses(masses, count)
        self.inertias = (
            np.stack([solid_inertia(shape, mass) for shape, mass in zip(self.shapes, self.masses, strict=True)])
            if inertias is None
            else _checked_inertias(inertias, count)
        )
        self.inertias.setflags(write=False)
        self.obstacles = tuple(obstacles)
        for index, obstacle in enumerate(self.obstacles):
            if not isinstance(obstacle, Obstacle):
                raise TypeError(f"obstacles[{index}] must be a dcol.geom.Obstacle, got {type(obstacle).__name__}")
        self.dt = checked_positive(dt, "dt")
        self.gravity = checked_array(gravity, "gravity", (3,))
        self.tolerance = checked_positive(tolerance, "tolerance")
        self.max_newton_iterations = checked_integer(max_newton_iterations, "max_newton_iterations", minimum=1)
        self.threads = checked_threads(threads)

        first, second = np.triu_indices(count, 1)
        against = np.repeat(np.arange(count), len(self.obstacles))
        obstacle_index = count + np.tile(np.arange(len(self.obstacles)), count)
        self.pairs: IntArray = np.column_stack([np.r_[first, against], np.r_[second, obstacle_index]]).astype(np.int64)
        self.pairs.setflags(write=False)
        everything = self.shapes + tuple(obstacle.shape for obstacle in self.obstacles)
        self._first_shapes = [everything[i] for i in self.pairs[:, 0]]
        self._second_shapes = [everything[j] for j in self.pairs[:, 1]]
        self._obstacle_positions = np.array([obstacle.r for obstacle in self.obstacles]).reshape(-1, 3)
        self._obstacle_rotations = np.array(
            [rotation_matrix(obstacle.q, f"obstacles[{index}].q") for index, obstacle in enumerate(self.obstacles)]
        ).reshape(-1, 3, 3)
        self._inverse_inertias = np.linalg.inv(self.inertias)

    def __repr__(self) -> str:
        return f"ScalingContactSimulator(bodies={len(self.shapes)}, obstacles={len(self.obstacles)}, dt={self.dt})"

    def energy(self, positions: ArrayLike, velocities: ArrayLike, angular_velocities: ArrayLike) -> float:
        """Kinetic energy ½ Σ (m v·v + ωᵀ I ω) plus gravity's potential energy −Σ m g·r (J), for positions,
        velocities (world frame) and angular_velocities (body frame), each (B, 3)."""
        count = len(self.shapes)
        r = checked_array(positions, "positions", (("len(shapes)", count), 3))
        v = checked_array(velocities, "velocities", (("len(shapes)", count), 3))
        omega = checked_array(angular_velocities, "angular_velocities", (("len(shapes)", count), 3))
        spin = np.einsum("bi,bij,bj->", omega, self.inertias, omega)
        return float(0.5 * (self.masses @ np.sum(v * v, axis=1) + spin) - self.masses @ (r @ self.gravity))

    def step(
        self, positions: ArrayLike, quaternions: ArrayLike, velocities: ArrayLike, angular_velocities: ArrayLike
    ) -> ScalingContactStep:
        """One step from the state: positions (B, 3), quaternions (B, 4) ``[w, x, y, z]`` of any nonzero norm,
        velocities (B, 3) world frame, angular_velocities (B, 3) body frame, all finite.

        Returns a ScalingContactStep; its status says whether Newton's method converged, and when it did
        not the state is its last iterate, never a result passed off as solved."""
        return self._step(*self._checked_state(positions, quaternions, velocities, angular_velocities))

    def rollout(
        self,
        positions: ArrayLike,
        quaternions: ArrayLike,
        velocities: ArrayLike,
        angular_velocities: ArrayLike,
        steps: int,
    ) -> ScalingContactRollout:
        """``steps`` steps from the state (as :meth:`step` takes it); RuntimeError naming the step and its
        status when one does not converge."""
        steps = checked_integer(steps, "steps", minimum=1)
        r, q, v, omega = self._checked_state(positions, quaternions, velocities, angular_velocities)
        states, impulses, violations, iterations = [(r, q, v, omega)], [], [], []
        for index in range(steps):
            result = self._step(*states[-1])
            if result.status != ScalingContactStatus.CONVERGED:
                raise RuntimeError(
                    f"step {index} did not converge: {result.status.name} after {result.newton_iterations} Newton "
                    f"iterations (last LCP {result.lcp_status.name}, largest 1 − α {result.worst_violation:.3g})"
                )
            states.append((result.positions, result.quaternions, result.velocities, result.angular_velocities))
            impulses.append(result.impulses)
            violations.append(result.worst_violation)
            iterations.append(result.newton_iterations)
        r_all, q_all, v_all, omega_all = (np.array(part) for part in zip(*states, strict=True))
        energy = np.array([self.energy(*state) for state in zip(r_all, v_all, omega_all, strict=True)])
        return ScalingContactRollout(
            r_all,
            q_all,
            v_all,
            omega_all,
            energy,
            np.array(impulses).reshape(steps, len(self.pairs)),
            np.array(violations),
            np.array(iterations, dtype=np.int32),
        )

    def _checked_state(
        self, positions: ArrayLike, quaternions: ArrayLike, velocities: ArrayLike, angular_velocities: ArrayLike
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """The state's arrays, checked, the quaternions normalized."""
        count = ("len(shapes)", len(self.shapes))
        r = checked_array(positions, "positions", (count, 3))
        q = checked_array(quaternions, "quaternions", (count, 4))
        check_quaternion_norms(q, "quaternions")
        v = checked_array(velocities, "velocities", (count, 3))
        omega = checked_array(angular_velocities, "angular_velocities", (count, 3))
        return r, q / quaternion_norms(q)[:, None], v, omega

    def _step(self, r: FloatArray, q: FloatArray, v: FloatArray, omega: FloatArray) -> ScalingContactStep:
        dt, count, pair_count = self.dt, len(self.shapes), len(self.pairs)
        attitude = Rotation.from_quat(q, scalar_first=True)
        spin, spin_solved = self._free_spin(omega)
        free = np.concatenate([v + dt * self.gravity, spin], axis=1).ravel()
        velocity = free
        impulses = np.zeros(pair_count)
        # The rows of the last LCP that pushed, and their pairs: they stay in the next LCP (module docstring).
        kept_rows, kept_pairs = np.zeros((0, 6 * count)), np.zeros(0, dtype=np.int64)
        lcp_status = LCPStatus.SOLVED
        for iteration in range(self.max_newton_iterations + 1):
            r_next = r + dt * velocity.reshape(count, 6)[:, :3]
            turned = attitude * Rotation.from_rotvec(dt * velocity.reshape(count, 6)[:, 3:])
            alpha, rows, solved = self._constraints(r_next, turned.as_matrix(), velocity.reshape(count, 6)[:, 3:])
            if not solved:
                status = ScalingContactStatus.PROXIMITY_FAILED
            elif not spin_solved:
                status = ScalingContactStatus.SPIN_FAILED
            elif np.all(alpha >= 1.0 - self.tolerance) and np.all(alpha[impulses > 0.0] <= 1.0 + self.tolerance):
                status = ScalingContactStatus.CONVERGED
            elif iteration == self.max_newton_iterations:
                status = ScalingContactStatus.NEWTON_LIMIT
            else:
                rows = np.concatenate([kept_rows, rows])
                row_pairs = np.concatenate([kept_pairs, np.arange(pair_count)])
                offsets = alpha[row_pairs] - 1.0 - dt * rows @ velocity
                response = self._inverse_mass_times(rows.T)  # M⁻¹ Hᵀ, (6B, rows)
                lcp = solve_lcp(dt * rows @ response, offsets + dt * rows @ free)
                lcp_status = lcp.status
                if lcp_status == LCPStatus.SOLVED:
                    pushing = lcp.f > 0.0
                    kept_rows, kept_pairs = rows[pushing], row_pairs[pushing]
                    impulses = np.bincount(row_pairs, weights=lcp.f, minlength=pair_count).astype(np.float64)
                    velocity = free + response @ lcp.f
                    continue
                status = ScalingContactStatus.LCP_FAILED
            state = velocity.reshape(count, 6)
            return ScalingContactStep(
                r_next,
                turned.as_quat(scalar_first=True).reshape(count, 4),
                state[:, :3].copy(),
                state[:, 3:].copy(),
                alpha,
                impulses,
                status,
                iteration,
                lcp_status,
                float(np.max(1.0 - alpha, initial=-np.inf)),
            )
        raise AssertionError("unreachable: the loop returns at its last iteration")

    def _free_spin(self, omega: FloatArray) -> tuple[FloatArray, bool]:
        """(B, 3) ω_free of Euler's equations by the implicit midpoint rule, I (ω_free − ω) = −Δt ω̄ × I ω̄,
        solved by Newton's method in ω̄; and whether it converged to rounding."""
        inertia, dt = self.inertias, self.dt
        mean = omega.copy()
        for _ in range(_SPIN_ITERATIONS):
            momentum = np.einsum("bij,bj->bi", inertia, mean)
            residual = 2.0 * np.einsum("bij,bj->bi", inertia, mean - omega) + dt * np.cross(mean, momentum)
            jacobian = 2.0 * inertia + dt * (_skew(mean) @ inertia - _skew(momentum))
            correction = np.linalg.solve(jacobian, residual[..., None])[..., 0]
            mean = mean - correction
            if np.all(np.abs(correction) <= 8.0 * np.finfo(float).eps * np.abs(mean).max(axis=1, keepdims=True)):
                return 2.0 * mean - omega, True
        return 2.0 * mean - omega, False

    def _constraints(
        self, r_next: FloatArray, rotations: FloatArray, angular_velocities: FloatArray
    ) -> tuple[FloatArray, FloatArray, bool]:
        """α (P,) of every pair at the bodies' poses (r_next (B, 3), rotations (B, 3, 3)) that the step's
        angular_velocities (B, 3) reached, the rows H (P, 6B) of their derivatives with respect to the
        velocities V⁺ over Δt, and whether every α was solved."""
        count, pair_count = len(self.shapes), len(self.pairs)
        rows = np.zeros((pair_count, count, 6))
        if pair_count == 0:
            return np.zeros(0), rows.reshape(0, 6 * count), True
        positions = np.concatenate([r_next, self._obstacle_positions])
        orientations = np.concatenate([rotations, self._obstacle_rotations])
        first, second = self.pairs[:, 0], self.pairs[:, 1]
        result = proximity_gradient_batch(
            self._first_shapes,
            positions[first],
            orientations[first],
            self._second_shapes,
            positions[second],
            orientations[second],
            parameterization="rigid",
            threads=self.threads,
        )
        alpha, gradient = np.asarray(result.alpha), np.asarray(result.gradient)
        solved = bool(
            np.all(np.isin(result.status, (Status.SOLVED, Status.SOLVED_INACCURATE)))
            and np.isfinite(alpha).all()
            and np.isfinite(gradient).all()
        )
        every = np.arange(pair_count)
        # Q⁺ = Q exp(Δt [ω]×) turns by δθ = Q⁺ J_r(Δt ω) Δt δω (world frame) when ω changes by δω, with J_r
        # SO(3)'s right Jacobian, I − a [φ]× + b [φ]×², the SE(3) exponential's factors at −φ.
        phi = self.dt * angular_velocities
        a, b = _se3_left_jacobian_factors(np.linalg.norm(phi, axis=1))
        turn = _skew(phi)
        spin_maps = rotations @ (np.eye(3) - a[:, None, None] * turn + b[:, None, None] * turn @ turn)
        rows[every, first] = np.concatenate(
            [gradient[:, :3], np.einsum("pk,pkl->pl", gradient[:, 3:6], spin_maps[first])], axis=1
        )
        moving = second < count
        rows[every[moving], second[moving]] = np.concatenate(
            [gradient[moving, 6:9], np.einsum("pk,pkl->pl", gradient[moving, 9:12], spin_maps[second[moving]])],
            axis=1,
        )
        return alpha, rows.reshape(pair_count, 6 * count), solved

    def _inverse_mass_times(self, columns: FloatArray) -> FloatArray:
        """M⁻¹ columns for columns (6B, k) in the velocities' coordinates."""
        per_body = columns.reshape(len(self.shapes), 6, -1)
        linear = per_body[:, :3] / self.masses[:, None, None]
        angular = self._inverse_inertias @ per_body[:, 3:]
        return np.concatenate([linear, angular], axis=1).reshape(columns.shape)


def _checked_masses(masses: float | ArrayLike, count: int) -> FloatArray:
    """(count,) float64 masses from one mass or one per body, each finite and > 0."""
    array = float_array(masses, "masses")
    if array.ndim == 0:
        array = np.full(count, float(array))
    array = checked_array(array, "masses", (("len(shapes)", count),))
    if np.any(array <= 0.0):
        raise ValueError(f"masses must be > 0, got {array.tolist()}")
    return array


def _checked_inertias(inertias: ArrayLike, count: int) -> FloatArray:
    """(count, 3, 3) float64 inertias from one for all bodies or one per body, each symmetric positive definite."""
    array = float_array(inertias, "inertias")
    if array.shape == (3, 3):
        array = np.broadcast_to(array, (count, 3, 3))
    array = np.array(checked_array(array, "inertias", (("len(shapes)", count), 3, 3)))
    for index, inertia in enumerate(array):
        scale = float(np.abs(inertia).max())
        if not np.allclose(inertia, inertia.T, rtol=0.0, atol=1e-12 * scale):
            raise ValueError(f"inertias[{index}] must be symmetric")
        principal = np.linalg.eigvalsh(inertia)
        if not principal.min() > 1e-12 * scale:
            raise ValueError(f"inertias[{index}] must be positive definite, got principal moments {principal.tolist()}")
    return 0.5 * (array + np.swapaxes(array, 1, 2))
