"""The planar engine's step (LCP-physics §A.1): contacts, the dynamics LCP (§A.5, eq. 23) solved by
the mixed-LCP interior point :func:`dcol.solvers.solve_mlcp`, explicit Euler integration and
post-stabilization (§A.7).

Eq. 23 maps onto the mixed LCP ``M x + Aᵀ y + Gᵀ z + q = 0, A x = 0, G x + F z + s = h`` with
x = v_{t+dt}, y = −λ_e, z = (λ_c, λ_f, γ), s = (a, σ, ζ) and

    q = −(𝓜 v_t + dt f),   A = 𝓙_e,   G = [−𝓙_c; −𝓙_f; 0],   h = [c; 0; 0],
    F = [0 0 0; 0 0 −E; −μ Eᵀ 0]

(the right-hand side's friction rows are zero: σ = 𝓙_f v + E γ, eq. 22); 𝓙_f, E and the γ rows
cover the contacts whose combined μ is positive (see DynamicsLCP).

The contact Jacobian of body b enters with the opposite sign of body a's (eq. 15 writes both alike):
with the normal n pointing from b to a, a = 𝓙_c v + c is then the separating speed, which eq. 21
asks to be ≥ 0. The friction rows of eq. 17 follow the same rule.
"""

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from dcol.solvers import LCPStatus, MLCPSolution, mlcp_vjp, solve_mlcp
from dcol.typing import ArrayLike, FloatArray
from dcol.validation import checked_array, checked_integer, checked_nonnegative, checked_positive, checked_threads

from .bodies import PERPENDICULAR, Body, cross2, rotated
from .contacts import Contact, detect_contacts, feature_geometry_jacobian
from .joints import AxisConstraint, FixedJoint, Hinge, Joint, joint_bodies

__all__ = ["PlanarWorld", "PlanarStep", "PlanarBatchStep", "PlanarStepCotangents", "DynamicsLCP"]

T = TypeVar("T")


@dataclass(frozen=True)
class DynamicsLCP:
    """The dynamics LCP of one step (LCP-physics eq. 23) as the mixed LCP of dcol.solvers.mlcp.

    M (3n, 3n), q (3n,), A (p, 3n), G (m + 3r, 3n), F (m + 3r, m + 3r), h (m + 3r,) for n bodies,
    p equality rows, m contacts of which r have friction (``rubbing`` (r,), their indices); the
    Jacobians J_e (p, 3n), J_c (m, 3n), J_f (2r, 3n), E (2r, r), the combined friction mu (m,) and
    restitution k (m,) they are built from.

    A frictionless contact has no friction rows: its λ_f and ζ would both be zero, a degenerate
    complementarity that leaves the KKT matrix of the backward pass singular.
    """

    M: FloatArray
    q: FloatArray
    A: FloatArray
    G: FloatArray
    F: FloatArray
    h: FloatArray
    J_e: FloatArray
    J_c: FloatArray
    J_f: FloatArray
    E: FloatArray
    mu: FloatArray
    k: FloatArray
    rubbing: npt.NDArray[np.intp]


@dataclass(frozen=True)
class PlanarStep:
    """The state after one step: positions, velocities (n, 3) of (angle, x, y) rows; the contacts
    the step was solved with, the dynamics LCP (``problem``) and its solution (its status says
    whether it converged); the time the step advanced, ``dt`` (the world's, or a half of it or less
    where dt halving rejected the full step); the post-stabilization solve's solution, None when
    none was needed (a correction whose solve did not converge is not applied)."""

    positions: FloatArray
    velocities: FloatArray
    contacts: list[Contact]
    solution: MLCPSolution
    problem: DynamicsLCP
    dt: float
    stabilization: MLCPSolution | None = None


@dataclass(frozen=True)
class PlanarBatchStep:
    """The steps of B scenes of one world: positions, velocities (B, n, 3), the time each advanced
    dt (B,), and each scene's PlanarStep (``steps``)."""

    positions: FloatArray
    velocities: FloatArray
    dt: FloatArray
    steps: tuple[PlanarStep, ...]


def _block_vjp(grad_block: FloatArray, arm: FloatArray, direction: FloatArray) -> tuple[FloatArray, FloatArray]:
    """∂ℓ/∂arm, ∂ℓ/∂direction (2,) each from ∂ℓ/∂ of a contact block [arm × direction, directionᵀ]
    (1, 3) of LCP-physics eqs. 15 and 17."""
    grad_arm = grad_block[0] * np.array([direction[1], -direction[0]])
    return grad_arm, grad_block[0] * PERPENDICULAR @ arm + grad_block[1:]


@dataclass(frozen=True)
class PlanarStepCotangents:
    """∂ℓ/∂ of a step's inputs (LCP-physics §B): velocities (n, 3), forces (n, 3); the bodies' mass
    (n,) (with 𝓘 moving along where it follows the mass, Body.moment_of_inertia None), moment of
    inertia 𝓘 (n,) (at fixed mass), restitution (n,) and friction (n,) (a contact whose combined μ
    is 0 adds nothing to the latter: friction rows appear at μ = 0, where the step has no derivative
    in μ); the joints' anchors (number of joints, 2, 2), rows anchor_a and anchor_b (zero where a
    joint has no such parameter or it is a world point); positions (n, 3)."""

    velocities: FloatArray
    forces: FloatArray
    mass: FloatArray
    inertia: FloatArray
    restitution: FloatArray
    friction: FloatArray
    anchors: FloatArray
    positions: FloatArray


def _global_rows(blocks: list[list[tuple[int, FloatArray]]], bodies: int) -> FloatArray:
    """Block rows (one per constraint: (body, block (r, 3)) pairs) placed in the global Jacobian
    (Σr, 3·bodies) of LCP-physics eqs. 12 and 16."""
    rows = [np.zeros((pairs[0][1].shape[0], 3 * bodies)) for pairs in blocks]
    for row, pairs in zip(rows, blocks):
        for body, block in pairs:
            row[:, 3 * body : 3 * body + 3] += block
    return np.vstack(rows) if rows else np.zeros((0, 3 * bodies))


@dataclass(frozen=True)
class PlanarWorld:
    """A planar scene (LCP-physics §A): bodies, the joints between them, gravity (2,) in m/s², the
    time step dt, the contact margin ε (§A.6), whether post-stabilization (§A.7) runs, and the
    interior point's tolerance.

    ``max_halvings`` > 0 turns on the appendix's step rejection (§A.1, item 5): integration that
    would leave the bodies interpenetrating deeper than ``penetration_tolerance`` (or than they were
    at the step's start) is redone with dt halved, up to max_halvings times; the step then advances
    less time than dt (PlanarStep.dt). Off by default, so that every step advances dt (a fixed time
    grid for rollouts and their gradients), with post-stabilization left to push bodies apart.

    A static body (ground, wall) is a body welded to the world by a FixedJoint. Bodies bound by a
    joint, and pairs of bodies both welded to the world, are not tested for contact.
    """

    bodies: tuple[Body, ...]
    joints: tuple[Joint, ...] = ()
    gravity: ArrayLike = (0.0, -9.81)
    dt: float = 0.01
    contact_margin: float = 1e-3
    post_stabilization: bool = True
    tol: float = 1e-10
    max_halvings: int = 0
    penetration_tolerance: float = 1e-9
    _skipped_pairs: frozenset[tuple[int, int]] = field(init=False, repr=False)
    _mass_matrix: FloatArray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        bodies, joints = tuple(self.bodies), tuple(self.joints)
        if not bodies:
            raise ValueError("bodies must hold at least one Body")
        for index, body in enumerate(bodies):
            if not isinstance(body, Body):
                raise TypeError(f"bodies[{index}] must be a Body, got {type(body).__name__}")
        for index, joint in enumerate(joints):
            if not isinstance(joint, (Hinge, FixedJoint, AxisConstraint)):
                raise TypeError(f"joints[{index}] must be a Hinge, FixedJoint or AxisConstraint")
            missing = [body for body in joint_bodies(joint) if body >= len(bodies)]
            if missing:
                raise ValueError(f"joints[{index}] binds body {missing[0]}, but there are {len(bodies)} bodies")
        welded = sorted({j.body_a for j in joints if isinstance(j, FixedJoint) and j.body_b is None})
        bound = {tuple(sorted(joint_bodies(j))) for j in joints if len(joint_bodies(j)) == 2}
        skipped = {(a, b) for a in welded for b in welded if a < b} | {(pair[0], pair[-1]) for pair in bound}
        object.__setattr__(self, "bodies", bodies)
        object.__setattr__(self, "joints", joints)
        object.__setattr__(self, "gravity", checked_array(self.gravity, "gravity", (2,)))
        object.__setattr__(self, "dt", checked_positive(self.dt, "dt"))
        object.__setattr__(self, "contact_margin", checked_positive(self.contact_margin, "contact_margin"))
        object.__setattr__(self, "tol", checked_positive(self.tol, "tol"))
        object.__setattr__(self, "max_halvings", checked_integer(self.max_halvings, "max_halvings", minimum=0))
        tolerance = checked_nonnegative(self.penetration_tolerance, "penetration_tolerance")
        object.__setattr__(self, "penetration_tolerance", tolerance)
        object.__setattr__(self, "_skipped_pairs", frozenset(skipped))
        # The bodies are immutable, and every step (and its post-stabilization) needs it.
        mass_matrix = np.diag(np.concatenate([[b.inertia, b.mass, b.mass] for b in bodies]))
        mass_matrix.setflags(write=False)
        object.__setattr__(self, "_mass_matrix", mass_matrix)

    # -- global quantities (LCP-physics §A.3) --------------------------------------------------

    def mass_matrix(self) -> FloatArray:
        """𝓜 (3n, 3n), block-diagonal in the bodies' diag(𝓘, m, m) (LCP-physics §A.3); read-only."""
        return self._mass_matrix

    def _checked_state(self, value: ArrayLike, name: str) -> FloatArray:
        return checked_array(value, name, (("number of bodies", len(self.bodies)), 3))

    def equality_jacobian(self, positions: ArrayLike) -> FloatArray:
        """𝓙_e (p, 3n) at positions (n, 3), LCP-physics eq. 12."""
        positions = self._checked_state(positions, "positions")
        return _global_rows([joint.jacobian_blocks(positions) for joint in self.joints], len(self.bodies))

    def equality_error(self, positions: ArrayLike) -> FloatArray:
        """The joints' position errors (p,) at positions (n, 3), in the rows of 𝓙_e."""
        positions = self._checked_state(positions, "positions")
        return np.concatenate([joint.error(positions) for joint in self.joints] or [np.zeros(0)])

    def contacts(self, positions: ArrayLike) -> list[Contact]:
        """The contacts at positions (n, 3) (LCP-physics §A.6)."""
        positions = self._checked_state(positions, "positions")
        return detect_contacts(self.bodies, positions, self.contact_margin, self._skipped_pairs)

    def _contact_jacobians(self, positions: FloatArray, contacts: list[Contact]) -> tuple[FloatArray, FloatArray]:
        """𝓙_c (m, 3n) and 𝓙_f (2m, 3n), LCP-physics eqs. 15–17 (body b with the opposite sign)."""
        m, columns = len(contacts), 3 * len(self.bodies)
        J_c, J_f = np.zeros((m, columns)), np.zeros((m, 2, columns))
        if not m:
            return J_c, J_f.reshape(0, columns)
        normals = np.array([contact.normal for contact in contacts])
        tangents = normals @ PERPENDICULAR.T  # d, the left orthogonal of n (§A.4.3)
        rows = np.arange(m)
        for bodies, points, sign in (
            (np.array([c.body_a for c in contacts]), np.array([c.point_a for c in contacts]), 1.0),
            (np.array([c.body_b for c in contacts]), np.array([c.point_b for c in contacts]), -1.0),
        ):
            arms = rotated(positions[bodies, 0], points)
            for J, directions in ((J_c, normals), (J_f[:, 0], tangents), (J_f[:, 1], -tangents)):
                J[rows, 3 * bodies] = sign * cross2(arms, directions)
                J[rows[:, None], 3 * bodies[:, None] + np.array([1, 2])] = sign * directions
        return J_c, J_f.reshape(2 * m, columns)

    def dynamics_lcp(
        self, positions: ArrayLike, velocities: ArrayLike, forces: ArrayLike | None = None
    ) -> tuple[DynamicsLCP, list[Contact]]:
        """The dynamics LCP (LCP-physics eq. 23) at a state, and the contacts it holds.

        positions, velocities : (n, 3) rows (angle, x, y) and (ω, v_x, v_y).
        forces : (n, 3) external (τ, f_x, f_y) on each body besides gravity, or None for none.
        """
        positions = self._checked_state(positions, "positions")
        velocities = self._checked_state(velocities, "velocities")
        bodies = len(self.bodies)
        external = np.zeros((bodies, 3)) if forces is None else self._checked_state(forces, "forces")
        masses = np.array([body.mass for body in self.bodies])
        weights = np.zeros((bodies, 3))
        weights[:, 1:] = masses[:, None] * np.asarray(self.gravity)
        M = self.mass_matrix()
        v_t = velocities.reshape(-1)
        contacts = self.contacts(positions)
        m = len(contacts)
        J_e = self.equality_jacobian(positions)
        J_c, J_f = self._contact_jacobians(positions, contacts)
        pairs = [(self.bodies[c.body_a], self.bodies[c.body_b]) for c in contacts]
        # Combined coefficients: the means of the two bodies' (LCP-physics §A.4.2–3).
        k = np.array([0.5 * (a.restitution + b.restitution) for a, b in pairs])
        mu = np.array([0.5 * (a.friction + b.friction) for a, b in pairs])
        rubbing = np.flatnonzero(mu > 0.0)
        r = rubbing.size
        J_f = J_f.reshape(m, 2, 3 * bodies)[rubbing].reshape(2 * r, 3 * bodies)
        E = np.repeat(np.eye(r), 2, axis=0)  # columns e_i: ones at rows 2i, 2i+1 (§A.4.3)
        c = k * (J_c @ v_t)  # LCP-physics eq. 14
        F = np.zeros((m + 3 * r, m + 3 * r))
        F[m : m + 2 * r, m + 2 * r :] = -E
        F[m + 2 * r :, :m] = -np.diag(mu)[rubbing]
        F[m + 2 * r :, m : m + 2 * r] = E.T
        problem = DynamicsLCP(
            M=M,
            q=-(M @ v_t + self.dt * (external + weights).reshape(-1)),
            A=J_e,
            G=np.vstack([-J_c, -J_f, np.zeros((r, 3 * bodies))]),
            F=F,
            h=np.concatenate([c, np.zeros(3 * r)]),
            J_e=J_e,
            J_c=J_c,
            J_f=J_f,
            E=E,
            mu=mu,
            k=k,
            rubbing=rubbing,
        )
        return problem, contacts

    def _stabilization(self, positions: FloatArray, contacts: list[Contact]) -> tuple[FloatArray, MLCPSolution | None]:
        """The post-stabilization correction δ (3n,) at positions after integration (LCP-physics
        §A.7): 𝓜δ = 𝓙_eᵀλ_e + 𝓙_cᵀλ_c, 𝓙_e δ = −g_e, 𝓙_c δ + g_c ≥ 0 ⊥ λ_c ≥ 0.

        The errors are those of the positions, per unit time (g_e the joints' position errors / dt,
        g_c the contacts' gaps / dt) as in Cline's post-stabilization, so that p + dt δ removes them
        to first order. The mixed LCP has homogeneous equalities: δ = δ₀ + δ' with δ₀ the 𝓜-least
        correction of the joints, 𝓙_e δ₀ = −g_e, leaves 𝓙_e δ' = 0 to the solver. ``contacts`` are
        those at ``positions``.
        """
        J_e = self.equality_jacobian(positions)
        if not contacts and not J_e.shape[0]:
            return np.zeros(positions.size), None
        g_e = self.equality_error(positions) / self.dt
        g_c = np.array([contact.gap for contact in contacts]) / self.dt
        J_c, _ = self._contact_jacobians(positions, contacts)
        M = self.mass_matrix()
        M_inv_Je_T = np.linalg.solve(M, J_e.T)
        delta_0 = -M_inv_Je_T @ np.linalg.solve(J_e @ M_inv_Je_T, g_e) if J_e.shape[0] else np.zeros(M.shape[0])
        solution = solve_mlcp(
            M, M @ delta_0, -J_c, np.zeros((len(contacts),) * 2), g_c + J_c @ delta_0, A=J_e, tol=self.tol
        )
        return delta_0 + solution.x, solution

    def step(self, positions: ArrayLike, velocities: ArrayLike, forces: ArrayLike | None = None) -> PlanarStep:
        """One step (LCP-physics §A.1): the dynamics LCP's v_{t+dt}, p_{t+dt} = p_t + dt v_{t+dt},
        with max_halvings > 0 the rejection of an interpenetrating p_{t+dt} by halving dt (item 5),
        then, with post_stabilization, p_{t+dt} + dt δ (§A.7). Arguments as in dynamics_lcp.
        """
        problem, contacts = self.dynamics_lcp(positions, velocities, forces)
        solution = solve_mlcp(problem.M, problem.q, problem.G, problem.F, problem.h, A=problem.A, tol=self.tol)
        shape = (len(self.bodies), 3)
        next_velocities = solution.x.reshape(shape)
        start = np.asarray(positions, dtype=np.float64)
        # The appendix assumes no interpenetration at the start; a start that has some may keep it.
        allowed = max([self.penetration_tolerance] + [-contact.gap for contact in contacts])
        dt = self.dt
        next_positions = start + dt * next_velocities
        next_contacts = self.contacts(next_positions) if self.max_halvings or self.post_stabilization else []
        for _ in range(self.max_halvings):
            if all(contact.gap >= -allowed for contact in next_contacts):
                break
            dt /= 2.0
            next_positions = start + dt * next_velocities
            next_contacts = self.contacts(next_positions)
        stabilization = None
        if self.post_stabilization and solution.status == LCPStatus.SOLVED:
            delta, stabilization = self._stabilization(next_positions, next_contacts)
            if stabilization is None or stabilization.status == LCPStatus.SOLVED:
                next_positions = next_positions + self.dt * delta.reshape(shape)
        return PlanarStep(next_positions, next_velocities, contacts, solution, problem, dt, stabilization)

    def step_vjp(
        self,
        step: PlanarStep,
        positions: ArrayLike,
        velocities: ArrayLike,
        grad_velocities: ArrayLike | None = None,
        grad_positions: ArrayLike | None = None,
    ) -> PlanarStepCotangents:
        """Cotangents of a step's inputs from ∂ℓ/∂v_{t+dt} and ∂ℓ/∂p_{t+dt} (n, 3) each (omitted:
        zero), through the KKT backward pass of the dynamics LCP (:func:`dcol.solvers.mlcp_vjp`,
        LCP-physics eqs. 28–32). ``positions``, ``velocities`` (n, 3) are the step's inputs p_t, v_t.

        Within the step's contact mode, with p_{t+dt} = p_t + step.dt v_{t+dt}: post-stabilization's
        correction is not differentiated (it is a projection onto the constraints, zero where they
        hold). The positions enter through p_{t+dt}, through 𝓙_e (the joints' arms turn with the
        bodies) and through the contacts' normals and arms in 𝓙_c, 𝓙_f (their features held: the
        contact mode).
        """
        shape = (len(self.bodies), 3)
        positions = self._checked_state(positions, "positions")
        v_t = self._checked_state(velocities, "velocities").reshape(-1)
        grad_v = np.zeros(shape) if grad_velocities is None else self._checked_state(grad_velocities, "grad_velocities")
        # p_{t+dt} = p_t + dt v_{t+dt}, dt the step's (after any halving): its cotangent passes to p_t
        # as it is and to v_{t+dt} times dt.
        grad_p = np.zeros(shape) if grad_positions is None else self._checked_state(grad_positions, "grad_positions")
        grad_v = grad_v + step.dt * grad_p
        problem, m = step.problem, len(step.contacts)
        cot = mlcp_vjp(
            step.solution, problem.M, problem.q, problem.G, problem.F, problem.h, A=problem.A, grad_x=grad_v.reshape(-1)
        )
        # q = −(𝓜 v_t + dt (f + weights)), h_c = k ∘ (𝓙_c v_t) (LCP-physics eqs. 14, 23).
        grad_v_t = -problem.M.T @ cot.q + problem.J_c.T @ (problem.k * cot.h[:m])
        # ∂𝓜_body/∂m = diag(∂𝓘/∂m, 1, 1), ∂𝓘/∂m the shape's unit inertia unless 𝓘 is given.
        unit = np.array(
            [[body.shape.unit_inertia() if body.moment_of_inertia is None else 0.0, 1.0, 1.0] for body in self.bodies]
        )
        gravity = np.concatenate([[0.0], np.asarray(self.gravity)])
        grad_M_diagonal = np.diag(cot.M).reshape(shape)
        grad_q = cot.q.reshape(shape)
        grad_diagonal = grad_M_diagonal - grad_q * v_t.reshape(shape)  # through 𝓜 and q = −𝓜 v_t − …
        grad_mass = np.sum(unit * grad_diagonal, axis=1) - self.dt * grad_q @ gravity
        # Each contact's coefficients are the means of its two bodies' (§A.4.2–3).
        grad_k = 0.5 * cot.h[:m] * (problem.J_c @ v_t)
        r = problem.rubbing.size
        grad_mu = np.zeros(m)
        grad_mu[problem.rubbing] = -0.5 * cot.F[m + 2 * r :, :m][np.arange(r), problem.rubbing]
        grad_restitution, grad_friction = np.zeros(len(self.bodies)), np.zeros(len(self.bodies))
        for index, contact in enumerate(step.contacts):
            for body in (contact.body_a, contact.body_b):
                grad_restitution[body] += grad_k[index]
                grad_friction[body] += grad_mu[index]
        anchors = np.zeros((len(self.joints), 2, 2))
        grad_p = grad_p.copy()
        row = 0
        for index, joint in enumerate(self.joints):
            rows = cot.A[row : row + joint.error(positions).size]
            row += rows.shape[0]
            anchors[index] = joint.anchor_vjp(positions, rows)
            for body, curvature in joint.angle_curvature(positions):
                grad_p[body, 0] += rows[:, 3 * body] @ curvature
        # c = k ∘ (𝓙_c v_t) makes v_t a second route from 𝓙_c to ℓ; 𝓙_f's second row of each pair
        # is minus its first (eq. 17), so the pair acts through the difference of their cotangents.
        grad_J_c = -cot.G[:m] + np.outer(problem.k * cot.h[:m], v_t)
        grad_J_f = np.zeros_like(grad_J_c)
        grad_J_f[problem.rubbing] = -cot.G[m : m + 2 * r : 2] + cot.G[m + 1 : m + 2 * r : 2]
        for index, contact in enumerate(step.contacts):
            a, b = contact.body_a, contact.body_b
            (normal, arm_a, arm_b, _), jacobian = feature_geometry_jacobian(contact.feature, positions[a], positions[b])
            tangent = PERPENDICULAR @ normal
            grad_geometry = np.zeros(6)  # ∂ℓ/∂(normal, arm_a, arm_b)
            for grad_rows, direction, to_normal in ((grad_J_c, normal, np.eye(2)), (grad_J_f, tangent, PERPENDICULAR)):
                for grad_block, arm, arm_slot in (
                    (grad_rows[index, 3 * a : 3 * a + 3], arm_a, slice(2, 4)),
                    (-grad_rows[index, 3 * b : 3 * b + 3], arm_b, slice(4, 6)),
                ):
                    grad_arm, grad_direction = _block_vjp(grad_block, arm, direction)
                    grad_geometry[arm_slot] += grad_arm
                    grad_geometry[:2] += to_normal.T @ grad_direction
            grad_poses = jacobian.T @ grad_geometry
            grad_p[a] += grad_poses[:3]
            grad_p[b] += grad_poses[3:]
        return PlanarStepCotangents(
            velocities=grad_v_t.reshape(shape),
            forces=-self.dt * grad_q,
            mass=grad_mass,
            inertia=grad_diagonal[:, 0],
            restitution=grad_restitution,
            friction=grad_friction,
            anchors=anchors,
            positions=grad_p,
        )

    def _checked_batch(self, value: ArrayLike, name: str) -> FloatArray:
        return checked_array(value, name, ("B", ("number of bodies", len(self.bodies)), 3))

    @staticmethod
    def _each_scene(function: Callable[[int], T], scenes: int, threads: int | None) -> list[T]:
        """function(index) for each of the scenes, on up to ``threads`` threads (None: one). The
        interior point and the backward pass's dense solve release the GIL; contact detection and
        the LCP's assembly hold it."""
        workers = min(checked_threads(threads), scenes)
        if workers <= 1:
            return [function(index) for index in range(scenes)]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(function, range(scenes)))

    def step_batch(
        self,
        positions: ArrayLike,
        velocities: ArrayLike,
        forces: ArrayLike | None = None,
        *,
        threads: int | None = None,
    ) -> PlanarBatchStep:
        """:meth:`step` of B scenes of this world: positions, velocities, forces (B, n, 3) (forces
        None: none). Each scene has a dynamics LCP of its own size (its contacts); the scenes are
        stepped on up to ``threads`` threads (None: one), with the same results."""
        positions = self._checked_batch(positions, "positions")
        velocities = self._checked_batch(velocities, "velocities")
        if velocities.shape != positions.shape:
            raise ValueError(f"velocities must have the shape of positions {positions.shape}, got {velocities.shape}")
        if forces is not None:
            forces = self._checked_batch(forces, "forces")
            if forces.shape != positions.shape:
                raise ValueError(f"forces must have the shape of positions {positions.shape}, got {forces.shape}")
        steps = tuple(
            self._each_scene(
                lambda index: self.step(positions[index], velocities[index], None if forces is None else forces[index]),
                positions.shape[0],
                threads,
            )
        )
        return PlanarBatchStep(
            positions=np.stack([step.positions for step in steps]),
            velocities=np.stack([step.velocities for step in steps]),
            dt=np.array([step.dt for step in steps]),
            steps=steps,
        )

    def step_batch_vjp(
        self,
        batch: PlanarBatchStep,
        positions: ArrayLike,
        velocities: ArrayLike,
        grad_velocities: ArrayLike | None = None,
        grad_positions: ArrayLike | None = None,
        *,
        threads: int | None = None,
    ) -> PlanarStepCotangents:
        """:meth:`step_vjp` of each scene of a :meth:`step_batch`: positions, velocities (B, n, 3) its
        inputs, grad_velocities, grad_positions (B, n, 3) (omitted: zero); threads as in step_batch.
        Returns the cotangents with a leading axis B on each array."""
        positions = self._checked_batch(positions, "positions")
        velocities = self._checked_batch(velocities, "velocities")
        grads = {
            name: None if grad is None else self._checked_batch(grad, name)
            for name, grad in (("grad_velocities", grad_velocities), ("grad_positions", grad_positions))
        }
        for name, array in (("positions", positions), ("velocities", velocities), *grads.items()):
            if array is not None and array.shape[0] != len(batch.steps):
                raise ValueError(f"{name} must hold the batch's {len(batch.steps)} scenes, got {array.shape[0]}")
        cotangents = self._each_scene(
            lambda index: self.step_vjp(
                batch.steps[index],
                positions[index],
                velocities[index],
                *(None if grad is None else grad[index] for grad in grads.values()),
            ),
            len(batch.steps),
            threads,
        )
        return PlanarStepCotangents(
            **{
                item.name: np.stack([getattr(c, item.name) for c in cotangents])
                for item in fields(PlanarStepCotangents)
            }
        )

    def rollout_batch(
        self, positions: ArrayLike, velocities: ArrayLike, forces: ArrayLike, *, threads: int | None = None
    ) -> tuple[FloatArray, FloatArray]:
        """T steps of B scenes from positions, velocities (B, n, 3) under forces (B, T, n, 3), on up
        to ``threads`` threads as in step_batch. Returns the trajectories of positions and
        velocities (B, T + 1, n, 3), the start first."""
        positions = self._checked_batch(positions, "positions")
        forces = checked_array(
            forces, "forces", (("len(positions)", positions.shape[0]), "T", ("number of bodies", len(self.bodies)), 3)
        )
        trajectory = [(positions, self._checked_batch(velocities, "velocities"))]
        for step_forces in forces.transpose(1, 0, 2, 3):
            batch = self.step_batch(*trajectory[-1], step_forces, threads=threads)
            trajectory.append((batch.positions, batch.velocities))
        return np.stack([p for p, _ in trajectory], axis=1), np.stack([v for _, v in trajectory], axis=1)
