"""The planar engine's step (LCP-physics §A.1): contacts, the dynamics LCP (§A.5, eq. 23) solved by
the mixed-LCP interior point, explicit Euler integration and post-stabilization (§A.7), all native
(native/planar/step.hpp: contact detection, the Jacobians, the LCP's assembly, the interior point of
native/lcp/mlcp_ipm.hpp, integration), one scene at a time or a batch of scenes on threads without
the GIL. The step's vector–Jacobian product is native too (native/planar/step_vjp.hpp: the KKT
backward pass of the dynamics LCP on the forward solve's prepared Newton system, and the chain rule
through its assembly and the contacts' geometry), one scene at a time or a batch on threads without
the GIL. This module validates and holds the results as Python values.

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

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from dcol import _native
from dcol.solvers import MLCPSolution
from dcol.solvers.lcp import returned_status
from dcol.typing import ArrayLike, FloatArray
from dcol.validation import checked_array, checked_integer, checked_nonnegative, checked_positive, checked_threads

from .bodies import Body
from .contacts import Contact, contacts_from_records, native_shapes, skipped_matrix
from .joints import AxisConstraint, FixedJoint, Hinge, Joint, joint_bodies, native_joint

__all__ = ["PlanarWorld", "PlanarStep", "PlanarBatchStep", "PlanarStepCotangents", "DynamicsLCP"]


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
    none was needed (a correction whose solve did not converge is not applied); and the native
    step's data, which PlanarWorld.step_vjp differentiates (the world the step was taken in and
    what the interior point prepared for the dynamics LCP)."""

    positions: FloatArray
    velocities: FloatArray
    contacts: list[Contact]
    solution: MLCPSolution
    problem: DynamicsLCP
    dt: float
    stabilization: MLCPSolution | None = None
    native: _native.planar.StepData | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class PlanarBatchStep:
    """The steps of B scenes of one world: positions, velocities (B, n, 3), the time each advanced
    dt (B,), and each scene's PlanarStep (``steps``)."""

    positions: FloatArray
    velocities: FloatArray
    dt: FloatArray
    steps: tuple[PlanarStep, ...]


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


def _solution(values: tuple[FloatArray, FloatArray, FloatArray, FloatArray, int, int, float]) -> MLCPSolution:
    x, y, z, s, status, iterations, residual = values
    return MLCPSolution(x, y, z, s, returned_status(status, x, y, z, s), iterations, residual)


def _problem(out: dict[str, Any]) -> DynamicsLCP:
    """The DynamicsLCP of the native step's results."""
    return DynamicsLCP(
        **{name: out[name] for name in ("M", "q", "A", "G", "F", "h", "J_e", "J_c", "J_f", "E", "mu", "k")},
        rubbing=out["rubbing"].astype(np.intp),
    )


def _step(out: dict[str, Any], positions: FloatArray) -> PlanarStep:
    """The PlanarStep of the native step's results from positions (n, 3)."""
    stabilization = out["stabilization"]
    return PlanarStep(
        positions=out["positions"],
        velocities=out["velocities"],
        contacts=contacts_from_records(out["contacts"], positions),
        solution=_solution(out["solution"]),
        problem=_problem(out),
        dt=out["dt"],
        stabilization=None if stabilization is None else _solution(stabilization),
        native=out["native"],
    )


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
    _mass_matrix: FloatArray = field(init=False, repr=False, compare=False)
    _native_model: _native.planar.Model = field(init=False, repr=False, compare=False)

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
        # The bodies are immutable: 𝓜 is formed once for mass_matrix().
        mass_matrix = np.diag(np.concatenate([[b.inertia, b.mass, b.mass] for b in bodies]))
        mass_matrix.setflags(write=False)
        object.__setattr__(self, "_mass_matrix", mass_matrix)
        # The native step's copy of the scene, which every step, contact query and step_vjp takes;
        # ∂𝓘/∂m is the shape's unit inertia, or 0 where the Body gives its own 𝓘.
        joint_rows = [native_joint(joint) for joint in joints]
        model = _native.planar.Model(
            native_shapes(bodies),
            np.array([body.mass for body in bodies]),
            np.array([body.inertia for body in bodies]),
            np.array([b.shape.unit_inertia() if b.moment_of_inertia is None else 0.0 for b in bodies]),
            np.array([body.restitution for body in bodies]),
            np.array([body.friction for body in bodies]),
            np.array([row[0] for row in joint_rows], dtype=np.int32),
            np.array([row[1] for row in joint_rows], dtype=np.int32).reshape(-1, 2),
            np.array([row[2] for row in joint_rows]).reshape(-1, 4),
            np.array([row[3] for row in joint_rows]),
            np.array([row[4] for row in joint_rows], dtype=np.int32),
            np.array([row[5] for row in joint_rows]),
            skipped_matrix(len(bodies), frozenset(skipped)),
            self.gravity,
            self.dt,
            self.contact_margin,
            self.tol,
            self.penetration_tolerance,
            self.post_stabilization,
            self.max_halvings,
        )
        object.__setattr__(self, "_native_model", model)

    # -- global quantities (LCP-physics §A.3) --------------------------------------------------

    def mass_matrix(self) -> FloatArray:
        """𝓜 (3n, 3n), block-diagonal in the bodies' diag(𝓘, m, m) (LCP-physics §A.3); read-only."""
        return self._mass_matrix

    def _checked_state(self, value: ArrayLike, name: str) -> FloatArray:
        return checked_array(value, name, (("number of bodies", len(self.bodies)), 3))

    def equality_jacobian(self, positions: ArrayLike) -> FloatArray:
        """𝓙_e (p, 3n) at positions (n, 3), LCP-physics eq. 12."""
        positions = self._checked_state(positions, "positions")
        jacobian, _ = _native.planar.equality_rows(self._native_model, positions)
        return jacobian

    def equality_error(self, positions: ArrayLike) -> FloatArray:
        """The joints' position errors (p,) at positions (n, 3), in the rows of 𝓙_e."""
        positions = self._checked_state(positions, "positions")
        _, error = _native.planar.equality_rows(self._native_model, positions)
        return error

    def contacts(self, positions: ArrayLike) -> list[Contact]:
        """The contacts at positions (n, 3) (LCP-physics §A.6)."""
        positions = self._checked_state(positions, "positions")
        return contacts_from_records(_native.planar.contacts(self._native_model, positions), positions)

    def dynamics_lcp(
        self, positions: ArrayLike, velocities: ArrayLike, forces: ArrayLike | None = None
    ) -> tuple[DynamicsLCP, list[Contact]]:
        """The dynamics LCP (LCP-physics eq. 23) at a state, and the contacts it holds.

        positions, velocities : (n, 3) rows (angle, x, y) and (ω, v_x, v_y).
        forces : (n, 3) external (τ, f_x, f_y) on each body besides gravity, or None for none.
        """
        positions, velocities, forces = self._checked_inputs(positions, velocities, forces)
        out = _native.planar.dynamics_lcp(self._native_model, positions, velocities, forces)
        return _problem(out), contacts_from_records(out["contacts"], positions)

    def _checked_inputs(
        self, positions: ArrayLike, velocities: ArrayLike, forces: ArrayLike | None
    ) -> tuple[FloatArray, FloatArray, FloatArray | None]:
        return (
            self._checked_state(positions, "positions"),
            self._checked_state(velocities, "velocities"),
            None if forces is None else self._checked_state(forces, "forces"),
        )

    def step(self, positions: ArrayLike, velocities: ArrayLike, forces: ArrayLike | None = None) -> PlanarStep:
        """One step (LCP-physics §A.1): the dynamics LCP's v_{t+dt}, p_{t+dt} = p_t + dt v_{t+dt},
        with max_halvings > 0 the rejection of an interpenetrating p_{t+dt} by halving dt (item 5),
        then, with post_stabilization, p_{t+dt} + dt δ (§A.7). Arguments as in dynamics_lcp.
        """
        positions, velocities, forces = self._checked_inputs(positions, velocities, forces)
        return _step(_native.planar.step(self._native_model, positions, velocities, forces), positions)

    def step_vjp(
        self,
        step: PlanarStep,
        positions: ArrayLike,
        velocities: ArrayLike,
        grad_velocities: ArrayLike | None = None,
        grad_positions: ArrayLike | None = None,
    ) -> PlanarStepCotangents:
        """Cotangents of a step's inputs from ∂ℓ/∂v_{t+dt} and ∂ℓ/∂p_{t+dt} (n, 3) each (omitted:
        zero), through the KKT backward pass of the dynamics LCP (LCP-physics eqs. 28–32) and the
        chain rule of its assembly, natively (native/planar/step_vjp.hpp) without the GIL.
        ``positions``, ``velocities`` (n, 3) are the step's inputs p_t, v_t; ``step`` is what
        :meth:`step` (or :meth:`step_batch`) returned, differentiated in the world it was taken in.

        Within the step's contact mode, with p_{t+dt} = p_t + step.dt v_{t+dt}: post-stabilization's
        correction is not differentiated (it is a projection onto the constraints, zero where they
        hold). The positions enter through p_{t+dt}, through 𝓙_e (the joints' arms turn with the
        bodies) and through the contacts' normals and arms in 𝓙_c, 𝓙_f (their features held: the
        contact mode).

        What the forward interior point prepared is kept with the step and reused: x eliminated
        (𝓜 is diagonal), the Schur complement's part that does not depend on the iterate, its
        reverse Cuthill–McKee order, and the data's scaling (MlcpSolver::kkt_adjoint in
        native/lcp/mlcp_ipm.hpp). The matrix of eqs. 28–29 is diag(I, Z, I) K with K the Newton
        matrix at W = Z⁻¹S of the solution; the interior point's last factorization is at the
        iterate before its last step, not at the solution, so the Schur complement is factorized
        once more, at the solution's W. Raises numpy.linalg.LinAlgError where it is singular.
        """
        native = self._native_step(step, "step")
        positions = self._checked_state(positions, "positions")
        velocities = self._checked_state(velocities, "velocities")
        grads = [
            None if grad is None else self._checked_state(grad, name)
            for grad, name in ((grad_velocities, "grad_velocities"), (grad_positions, "grad_positions"))
        ]
        return PlanarStepCotangents(*_native.planar.step_vjp(native, positions, velocities, *grads))

    @staticmethod
    def _native_step(step: PlanarStep, name: str) -> _native.planar.StepData:
        if not isinstance(step, PlanarStep) or step.native is None:
            raise TypeError(f"{name} must be a PlanarStep that PlanarWorld.step or step_batch returned")
        return step.native

    def _checked_batch(self, value: ArrayLike, name: str) -> FloatArray:
        return checked_array(value, name, ("B", ("number of bodies", len(self.bodies)), 3))

    def step_batch(
        self,
        positions: ArrayLike,
        velocities: ArrayLike,
        forces: ArrayLike | None = None,
        *,
        threads: int | None = None,
    ) -> PlanarBatchStep:
        """:meth:`step` of B scenes of this world: positions, velocities, forces (B, n, 3) (forces
        None: none). Each scene has a dynamics LCP of its own size (its contacts); the native step runs
        the scenes on up to ``threads`` threads (None: one) without the GIL, each scene exactly as
        :meth:`step` runs it (the same results, bit for bit, whatever the threads)."""
        positions = self._checked_batch(positions, "positions")
        velocities = self._checked_batch(velocities, "velocities")
        if velocities.shape != positions.shape:
            raise ValueError(f"velocities must have the shape of positions {positions.shape}, got {velocities.shape}")
        if forces is not None:
            forces = self._checked_batch(forces, "forces")
            if forces.shape != positions.shape:
                raise ValueError(f"forces must have the shape of positions {positions.shape}, got {forces.shape}")
        workers = min(checked_threads(threads), positions.shape[0])
        results = _native.planar.step_batch(self._native_model, positions, velocities, forces, max(workers, 1))
        steps = tuple(_step(out, start) for out, start in zip(results, positions))
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
        inputs, grad_velocities, grad_positions (B, n, 3) (omitted: zero). The native backward pass
        runs the scenes on up to ``threads`` threads (None: one) without the GIL, each scene exactly
        as :meth:`step_vjp` runs it (the same results, bit for bit, whatever the threads). Returns
        the cotangents with a leading axis B on each array."""
        steps = [self._native_step(step, f"batch.steps[{index}]") for index, step in enumerate(batch.steps)]
        positions = self._checked_batch(positions, "positions")
        velocities = self._checked_batch(velocities, "velocities")
        grads = {
            name: None if grad is None else self._checked_batch(grad, name)
            for name, grad in (("grad_velocities", grad_velocities), ("grad_positions", grad_positions))
        }
        for name, array in (("positions", positions), ("velocities", velocities), *grads.items()):
            if array is not None and array.shape[0] != len(steps):
                raise ValueError(f"{name} must hold the batch's {len(steps)} scenes, got {array.shape[0]}")
        if not steps:
            raise ValueError("batch must hold at least one scene")
        workers = min(checked_threads(threads), len(steps))
        cotangents = _native.planar.step_batch_vjp(
            steps, positions, velocities, grads["grad_velocities"], grads["grad_positions"], workers
        )
        return PlanarStepCotangents(*cotangents)

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
