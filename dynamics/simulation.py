"""Time stepping of articulated rigid bodies with contact and friction, and its exact Jacobians
(Nimble §III eqs. 2–10, §IV–VI, App. A–C, E, F).

One step of length Δt from the state (q, v) under joint forces τ (semi-implicit Euler, Nimble eq. 2):

    (M + Δt D) v⁺ = M v − Δt (c(q, v̄) − τ) + Jᵀ f,        q⁺ = step_integrate(q, Δt v⁺ + δq),

with the joint damping D implicit (M̃ = M + Δt D stands for M below; explicit damping of light links
is unstable at usual time steps), δq the position correction of penetrations (below), the position
update :func:`~dcol.dynamics.step_integrate` (a floating joint's origin moves straight along its
world-frame velocity R v and turns by exp(Δt ω): the contact rows constrain the contact points'
velocities at q, and the SE(3) exponential of :func:`~dcol.dynamics.integrate` would carry a ball
rolling without slipping along its twist's arc about the contact point, into the ground; v⁺ is taken
in the body frames at q, a floating joint's linear part re-expressed in its turned frame after the
step, ν⁺ → exp(Δt ω⁺ + δq_ω)ᵀ ν⁺, so the frame's turn, −ω × ν in c, is not seen by the rows), and the
velocity terms c (Coriolis, centrifugal, gyroscopic; gravity does not depend on v) taken at the
midpoint v̄ = (v + v_free) / 2 of the motion without impulses, v_free = v + Δt M̃⁻¹(τ − c(q, v̄)
− D v): the implicit midpoint rule in the velocities, solved by fixed-point iteration and Newton's
method. c is quadratic in v and does no work on a free body (v · c(q, v) = 0), so at the midpoint it
leaves a torque-free body's kinetic energy and angular momentum exactly as they were at any spin
rate; taken at v (explicit), its ω × v coupling multiplies the speed by (1 + (|ω| Δt)²)^½ every
step. The rows of J are the contacts' normal and two tangent directions (relative velocity of body
b's material point at the contact minus body a's, contact frames from :mod:`dcol.geom.contacts`,
manifolds for flat contacts) and the joint limits near their bounds. The impulses f solve the boxed
LCP ``w = A f + b``, A = J M⁻¹ Jᵀ, b = J v_free + b_extra, v_free the velocity without impulses
(Nimble eqs. 3–5): normal and limit impulses ≥ 0, friction impulses within ±μ times their contact's
normal impulse (Nimble App. A), warm-started from the previous step's clamping set (Nimble App. B).
The LCP is solved per contact island (rows that share no kinematic tree do not couple: A is
block-diagonal over them) and, within an island, on the contacts that push: a speculative contact
whose gap stays open takes no impulse, so it is left out unless the others' impulses would close it
(World.contact_problem gives the whole problem). With ``contact_model="ncp"`` the same rows (none
dropped) pose the contact NCP on Coulomb's cones instead (Simple §II-B;
:func:`dcol.solvers.solve_contact_ncp`): per contact the impulse [t1, t2, n] in ‖t‖ ≤ μ n, De
Saxcé's correction, each joint limit a frictionless contact; its derivatives hold the contact modes
(breaking, sticking, sliding) fixed (Simple §III-B) and, where sliding contacts leave their normal
impulses undetermined (a face of four coplanar contacts sliding and turning), follow the solver's
least-norm split of them (native/simulation/step_jacobians.hpp). b_extra per normal row:

* *speculative contacts*: ``φ / Δt`` for a gap φ > 0: the row only acts if the step would close the
  gap, and then lands the bodies exactly in contact. A penetration φ < 0 gets no velocity term: a
  Baumgarte term β φ / Δt (Simple App. D) throws bodies apart with energy they never had, and where
  penetrations ask one body for opposite moves it poses an LCP with no bounded solution; the
  penetration is removed by moving q instead (position correction, below). Joint limits: a limit
  gets its row whenever the step's free motion would reach the bound (not only within
  ``limit_margin``), so no step of any length passes through it, and a bound already passed
  (φ < 0) is restored by moving q: q⁺ gains −β φ along the joint.
* *restitution*: a contact approaching faster than ``restitution_threshold`` that the step would
  close is *bouncing*: its row asks ``v⁺_n ≥ −e v_n`` (b_extra = e v_n, no stabilization term), which
  returns the approach speed times e.

Position correction (post-stabilization, as the planar engine's appendix §A.7 does after its step):
island by island, the normal rows P of the penetrating contacts pose the frictionless LCP
``w = (A_P + κ diag A_P) f_c + β (φ_P + s) ≥ 0, f_c ≥ 0, w ⊥ f_c`` whose δq = M̃⁻¹ J_Pᵀ f_c moves each
penetration a fraction β of the way out to the allowed penetration s (1 % of ``contact_margin``),
κ = 10⁻³ bounding it where penetrations ask one body for opposite moves; then
``q⁺ = step_integrate(q, Δt v⁺ + δq)`` with v⁺ untouched, so removing a penetration never adds kinetic
energy. Islands whose penetrations are all within s are not solved; the step Jacobians differentiate
δq through the clamped set of f_c.

Misprediction projection: the linearized contacts miss what a turn does to the second order (a face
turned by θ about a centre at reach r lowers what rests on it by about r θ²/2, whichever way it
turns). Where each body's turn in the step, r θ² over its reach to a contact, could leave that contact
deeper than predicted by more than a tenth of ``contact_margin``, the contacts are found again at q⁺
and, where one of them missed by that much, each shape pair's contacts deeper than the deepest of its
predicted ones are moved out to that depth by the same LCP with β = 1 at q⁺ (at most three
Gauss–Newton iterations). It moves q only; the step Jacobians differentiate each of its
corrections as the position correction's (β = 1, at the pose it acted at) and the depths it projects
to through the step's predicted contacts. Steps whose bodies hardly turn skip it after that bound.

Step Jacobians: ∂(q⁺, v⁺)/∂(q, v, τ, θ) with θ = [π (10 per body, :func:`inertial_parameters`
order), μ, e] by the chain rule through every term: M⁻¹, c and their derivatives (Nimble App. F;
the midpoint equation differentiated implicitly, (M̃ + Δt/2 ∂c/∂v) da = dτ − ∂c/∂q dq − … ),
the contact rows' dependence on q through the contact points, normals and tangents (Nimble §V,
App. C, from the contacts' forward-mode derivatives and the frame Jacobians' derivatives), the
separations in the stabilization, and the LCP by its clamping set (Nimble §IV, App. A, as
:func:`dcol.solvers.lcp_jvp`). Derivatives with respect to q are in the tangent space (integrate's),
as for every dynamics function. The step and its Jacobians are computed natively
(native/simulation/simulation.hpp, step_jacobians.hpp), the same code for World.step, rollout,
step_batch and rollout_batch; reverse mode (Step.vjp, Rollout.vjp) contracts the Jacobian with the
cotangents.

Elastic bounces (Nimble §VI; derivation in docs/math/elastic-bounce.md): the discrete step moves a
bouncing body by Δt v⁺ whatever its distance to the contact, so ∂q⁺/∂q misses that a body closer to
the surface bounces earlier and ends farther away. With ``bounce=True`` (the default) ∂(q⁺, v⁺)/∂q
take the continuous-time values instead (the saltation matrix of the impact): a change δq of the
state makes each bouncing contact with gap φ_n and approach speed v_n < 0 hit earlier by
δt = N δq / v_n. The impact's velocity jump Δv = −P v, P = (1 + e) M⁻¹Nᵀ (N M⁻¹ Nᵀ)⁺ N, then acts
for δt longer, and the smooth acceleration a before it for δt shorter on the velocity that P
reflects, which gives

    ∂q⁺/∂q = (discrete) − integrate_v P,        ∂v⁺/∂q = (discrete) + (1 + e) M⁻¹Nᵀ (N M⁻¹ Nᵀ)⁺ diag(a_n / v_n) N,

with N the bouncing normals' rows (in the tangent space of q⁺; the pseudo-inverse because a face's
contact normals are linearly dependent) and a_n = N a + Ṅ v the gaps' acceleration before the
impact. For one contact the position part is exactly Nimble's −σ (Nimble eq. 26); it replaces Nimble
App. E's least-squares fit by the momentum-consistent projection. The velocity part (the saltation
term (1 + e) g / |v_n| of a ball bouncing under gravity) is what makes velocity gradients right
across impacts under gravity; ∂q⁺/∂q takes it too through q⁺ = q + Δt v⁺.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

import numpy as np

from dcol import _native
from dcol.geom import Box, ConvexMesh, Scene, SceneContacts, Shape
from dcol.geom.distance import DISTANCE_SETTINGS
from dcol.progress import progress_bar
from dcol.solvers import LCPBounds, LCPSolution, NCPSolution, complementarity_aware
from dcol.solvers.lcp import returned_status
from dcol.typing import ArrayLike, BoolArray, FloatArray, Int8Array, Int32Array, IntArray
from dcol.validation import (
    checked_array,
    checked_finite,
    checked_interval,
    checked_nonnegative,
    checked_positive,
    checked_real,
    checked_threads,
    checked_vectors,
    float_array,
    shape_error,
)

from .algorithms import (
    check_floating_quaternions,
    checked_configurations,
    inertial_parameters,
    step_integrate_jacobians,
)
from .model import Model
from .urdf import MeshGeometry

__all__ = [
    "World",
    "ROLLOUT_PROGRESS_STEPS",
    "Step",
    "ContactProblem",
    "StepJacobians",
    "StepCotangents",
    "Rollout",
    "BatchRollout",
    "BatchStep",
]

_native_dynamics = _native.dynamics
_GROUND_HALF_EXTENTS = (10.0, 10.0, 0.5)
# Gauss–Seidel converges slowly on the rank-deficient problems of many contacts on few joints (a
# lying chain needs ~10⁴ sweeps); a sweep costs O(n²), so a high limit is cheap.
_SWEEPS = 200_000
# Complementarity tolerance relative to the problem's scale: Gauss–Seidel only needs to find the sets,
# the impulses are then solved exactly on them.
_LCP_TOLERANCE = 1e-7
# The contact NCP's tolerance on each Coulomb condition relative to the data's scale (ADMM, then the
# fixed point of Acary et al. where it stalls).
_NCP_TOLERANCE = 1e-10
# Why a step failed when the implicit midpoint equation of its free motion has no solution Newton's
# method finds (spins far beyond what the step size resolves, or principal moments no rigid body has).
_FREE_MOTION_FAILURE = (
    "the free motion's implicit midpoint equation was not solved (a spin too fast for the time step, or an "
    "inertia no rigid body has: principal moments must satisfy the triangle inequality)"
)

ROLLOUT_PROGRESS_STEPS = 10_000
"""Steps (world-steps for rollout_batch) from which World.rollout and rollout_batch show a progress bar
by default, when standard error is a terminal."""
# The most groups a shown bar splits rollout_batch's worlds into: each is a native call of its own.
_PROGRESS_GROUPS = 50


class StepJacobians(NamedTuple):
    """Jacobians of one step, (nv, ·) each: rows the tangent of q⁺ (q_*) or v⁺ (v_*), columns the
    tangent of q, v, τ (nv each) or θ = [π (10 nbodies), μ, e]."""

    q_q: FloatArray
    q_v: FloatArray
    q_tau: FloatArray
    q_params: FloatArray | None  # None from the batch functions with parameters=False
    v_q: FloatArray
    v_v: FloatArray
    v_tau: FloatArray
    v_params: FloatArray | None


class ContactProblem(NamedTuple):
    """The contact problem of a step (World.contact_problem): its rows J (n, nv) (3 per contact, then
    the joint limits near a bound, less the rows no joint moves), the boxed LCP w = A f + b with
    A = J M̃⁻¹ Jᵀ (n, n), b (n,) and its bounds (dcol.solvers.LCPBounds), and kept (n,), the index
    of each row among the 3 K + L rows of the contacts and limits."""

    J: FloatArray
    A: FloatArray
    b: FloatArray
    bounds: LCPBounds
    kept: IntArray


class StepCotangents(NamedTuple):
    """∂ℓ/∂(q (nv, tangent), v (nv,), τ (nv,), θ (10 nbodies + 2,)) from ∂ℓ/∂(q⁺, v⁺)."""

    q: FloatArray
    v: FloatArray
    tau: FloatArray
    params: FloatArray


@dataclass(frozen=True)
class Step:
    """The outcome of :meth:`World.step`.

    q (nq,), v (nv,) : the next state.
    contacts : dcol.geom.SceneContacts at the step's start (K contacts; scene bodies, see
        World.scene_body_of_model).
    impulses : (K, 3) float64, each contact's [normal, tangent1, tangent2] impulse (N s).
    bouncing : (K,) bool, contacts treated as elastic impacts this step.
    limit_joints : (L,) int64 velocity indices of the joint-limit rows; limit_signs (L,) +1 at a lower,
        −1 at an upper bound; limit_impulses (L,) float64.
    lcp : dcol.solvers.LCPSolution of the step (rows: 3 per contact, then the limits), or with
        contact_model="ncp" its dcol.solvers.NCPSolution (per contact [t1, t2, n], then per limit a
        frictionless contact); an LCPSolution there too when the NCP was not solved and the step fell
        back to the boxed LCP (World's contact_model). Its status is SOLVED (a step whose solves did
        not all reach their tolerance raises) and its residual is the largest over the step's solves:
        the impulses' and, where penetrations are corrected, the position correction's LCP.
    """

    q: FloatArray
    v: FloatArray
    contacts: SceneContacts
    impulses: FloatArray
    bouncing: BoolArray
    limit_joints: IntArray
    limit_signs: FloatArray
    limit_impulses: FloatArray
    lcp: LCPSolution | NCPSolution
    _linearization: _StepLinearization | None = None
    # The native step's warm start for the next step: its LCP rows' identities, impulses and sets.
    _warm_start: tuple[Int32Array, FloatArray, Int8Array] | None = None

    def __repr__(self) -> str:
        return (
            f"Step(nq={self.q.size}, nv={self.v.size}, contacts={len(self.contacts)}, "
            f"limits={len(self.limit_joints)}, {self.lcp.status.name}, derivatives={self._linearization is not None})"
        )

    def _require_linearization(self) -> _StepLinearization:
        if self._linearization is None:
            raise ValueError("this step was taken without derivatives: call World.step(..., derivatives=True)")
        return self._linearization

    def jacobians(self, *, bounce: bool = True) -> StepJacobians:
        """StepJacobians of this step (forward mode). bounce: Nimble's elastic-bounce correction of
        ∂q⁺/∂q (module docstring); False gives the discrete step's own derivative."""
        return self._require_linearization().jacobians(bounce)

    def vjp(
        self,
        grad_q: ArrayLike | None = None,
        grad_v: ArrayLike | None = None,
        *,
        bounce: bool = True,
        complementarity_aware: bool = False,
    ) -> StepCotangents:
        """StepCotangents from ∂ℓ/∂q⁺ (nv, tangent) and ∂ℓ/∂v⁺ (nv,) (reverse mode; zero if omitted).

        complementarity_aware : also backpropagate with the contact sets relabeled from the loss
            (Nimble §IV-D) and return whichever of the two has the larger ‖∂ℓ/∂q‖² + ‖∂ℓ/∂τ‖²/Δt.
        """
        return self._require_linearization().vjp(grad_q, grad_v, bounce, complementarity_aware)


@dataclass(frozen=True)
class Rollout:
    """T steps from (q0, v0) (World.rollout): q (T + 1, nq), v (T + 1, nv) including the start;
    contacts (T,) int32, the contact count of every step; steps: the T Step objects, kept when the
    rollout was asked for derivatives or keep_steps (else asking for them is a ValueError)."""

    q: FloatArray
    v: FloatArray
    contacts: Int32Array
    _steps: list[Step] | None = None

    @property
    def steps(self) -> list[Step]:
        """The T Step objects (contacts, impulses, solver solution, linearization)."""
        if self._steps is None:
            raise ValueError(
                "this rollout ran in one native call and kept no Step objects: call World.rollout(..., "
                "keep_steps=True), or derivatives=True for vjp"
            )
        return self._steps

    def __repr__(self) -> str:
        derivatives = bool(self._steps) and all(step._linearization is not None for step in self.steps)
        return (
            f"Rollout(T={len(self.contacts)}, nq={self.q.shape[1]}, nv={self.v.shape[1]}, "
            f"{_count_range('contacts per step', self.contacts)}, derivatives={derivatives})"
        )

    def vjp(
        self,
        grad_q: ArrayLike | None = None,
        grad_v: ArrayLike | None = None,
        *,
        bounce: bool = True,
        complementarity_aware: bool = False,
    ) -> StepCotangents:
        """Backpropagation through the rollout: ∂ℓ/∂(q0, v0, τ (T, nv), θ) from ∂ℓ/∂q (T + 1, nv,
        tangents) and ∂ℓ/∂v (T + 1, nv) of the trajectory (zero where omitted). θ's cotangent sums
        the steps' (a 0-d zero for a rollout of no steps). complementarity_aware: each step's, as
        Step.vjp (Nimble §IV-D)."""
        steps = self.steps

        def step_cotangents(t: int, carry_q: FloatArray, carry_v: FloatArray) -> StepCotangents:
            return steps[t].vjp(carry_q, carry_v, bounce=bounce, complementarity_aware=complementarity_aware)

        shape = (len(steps) + 1, self.v.shape[1])
        return _backpropagated(step_cotangents, grad_q, grad_v, shape, np.zeros(()))


class BatchRollout(NamedTuple):
    """N rollouts of T steps (World.rollout_batch): q (N, T + 1, nq), v (N, T + 1, nv) including the
    starts; contacts (N, T) int32, the contact count of every step; jacobians: StepJacobians whose
    blocks have leading (N, T) axes (each step's, as taken), or None without derivatives."""

    q: FloatArray
    v: FloatArray
    contacts: Int32Array
    jacobians: StepJacobians | None = None

    def __repr__(self) -> str:
        count, steps, nq = self.q.shape
        return (
            f"BatchRollout(N={count}, T={steps - 1}, nq={nq}, nv={self.v.shape[2]}, "
            f"{_count_range('contacts per step', self.contacts.ravel())}, derivatives={self.jacobians is not None})"
        )

    def vjp(self, grad_q: ArrayLike | None = None, grad_v: ArrayLike | None = None) -> StepCotangents:
        """Backpropagation through the N rollouts, each as :meth:`Rollout.vjp`, from the Jacobians of
        the steps taken (so with rollout_batch's `bounce`): ∂ℓ/∂(q0 (N, nv, tangent), v0 (N, nv),
        τ (N, T, nv), θ (N, 10 nbodies + 2)) from ∂ℓ/∂q (N, T + 1, nv, tangents) and ∂ℓ/∂v
        (N, T + 1, nv) of the trajectories (zero where omitted). Needs the Jacobians with θ's blocks:
        rollout_batch(..., derivatives=True, parameters=True)."""
        jacobians = self.jacobians
        if jacobians is None or jacobians.q_params is None:
            raise ValueError(
                "BatchRollout.vjp needs the steps' Jacobians with their θ blocks: call "
                "World.rollout_batch(..., derivatives=True, parameters=True)"
            )
        # Every block is there: the θ ones come with the others when asked for.
        blocks = [cast(FloatArray, block) for block in jacobians]

        def step_cotangents(t: int, carry_q: FloatArray, carry_v: FloatArray) -> StepCotangents:
            return _step_cotangents(StepJacobians(*(block[:, t] for block in blocks)), carry_q, carry_v)

        count, steps, nv = self.v.shape
        params = np.zeros((count, jacobians.q_params.shape[-1]))
        return _backpropagated(step_cotangents, grad_q, grad_v, (count, steps, nv), params)


class BatchStep(NamedTuple):
    """N independent steps (World.step_batch): q (N, nq), v (N, nv) the next states; contacts (N,)
    int32; jacobians: StepJacobians whose blocks have a leading N axis, or None without derivatives."""

    q: FloatArray
    v: FloatArray
    contacts: Int32Array
    jacobians: StepJacobians | None = None

    def __repr__(self) -> str:
        return (
            f"BatchStep(N={self.q.shape[0]}, nq={self.q.shape[1]}, nv={self.v.shape[1]}, "
            f"{_count_range('contacts', self.contacts)}, derivatives={self.jacobians is not None})"
        )


def _step_cotangents(jacobians: StepJacobians, grad_q: FloatArray, grad_v: FloatArray) -> StepCotangents:
    """StepCotangents from a step's Jacobians and ∂ℓ/∂(q⁺, v⁺) (nv,): the blocks' transposes times the
    cotangents. Blocks and cotangents may carry the same leading batch axes; each batch element is
    contracted as a step of its own would be, bit for bit."""

    def pulled_back(block_q: FloatArray, block_v: FloatArray) -> FloatArray:
        return np.matmul(grad_q[..., None, :], block_q)[..., 0, :] + np.matmul(grad_v[..., None, :], block_v)[..., 0, :]

    return StepCotangents(
        *(pulled_back(getattr(jacobians, "q_" + X), getattr(jacobians, "v_" + X)) for X in ("q", "v", "tau", "params"))
    )


def _backpropagated(
    step_cotangents: Callable[[int, FloatArray, FloatArray], StepCotangents],
    grad_q: ArrayLike | None,
    grad_v: ArrayLike | None,
    shape: tuple[int, ...],
    params: FloatArray,
) -> StepCotangents:
    """Reverse mode through a rollout of T steps, or a batch of them (leading axes): ∂ℓ/∂(q0, v0, τ, θ)
    from ∂ℓ/∂q and ∂ℓ/∂v of the trajectory, of `shape` (..., T + 1, nv) (zero where None);
    step_cotangents(t, ∂ℓ/∂q⁺, ∂ℓ/∂v⁺) gives step t's StepCotangents. θ's cotangent is `params` (its
    zero) plus the steps'."""
    grads = [
        np.zeros(shape) if grad is None else checked_array(grad, name, shape)
        for grad, name in ((grad_q, "grad_q"), (grad_v, "grad_v"))
    ]
    carry_q, carry_v = grads[0][..., -1, :], grads[1][..., -1, :]
    count = shape[-2] - 1
    grad_tau = np.zeros((*shape[:-2], count, shape[-1]))
    grad_params = params
    for t in range(count - 1, -1, -1):
        cot = step_cotangents(t, carry_q, carry_v)
        grad_tau[..., t, :] = cot.tau
        grad_params = grad_params + cot.params
        carry_q, carry_v = cot.q + grads[0][..., t, :], cot.v + grads[1][..., t, :]
    return StepCotangents(carry_q, carry_v, grad_tau, grad_params)


def _count_range(what: str, counts: Sequence[int] | Int32Array) -> str:
    """ "what 3–7" (the least and most of counts), "what 3" when they agree, "what none" when empty."""
    if len(counts) == 0:
        return f"{what} none"
    low, high = int(min(counts)), int(max(counts))
    return f"{what} {low}" if low == high else f"{what} {low}–{high}"


def _convex(geometry: Shape | MeshGeometry, max_vertices: int) -> Shape:
    """A dcol.geom shape for a model's collision geometry (meshes by their convex hull)."""
    if isinstance(geometry, MeshGeometry):
        return ConvexMesh.from_mesh(
            geometry.path,
            scale=geometry.scale,
            max_vertices=max_vertices,
            offset=(geometry.offset_position, geometry.offset_rotation),
        )
    return geometry


class World:
    """A model with its collision shapes, an optional ground, and the contact parameters.

    Parameters
    ----------
    model : dcol.dynamics.Model; free bodies are floating joints. Gravity is the model's.
    dt : time step (s).
    ground : bool, a static ground whose top face is the plane z = ground_height.
    friction : Coulomb coefficient μ ≥ 0; restitution : coefficient e in [0, 1].
    baumgarte : β in [0, 1], fraction of a penetration (or of a joint limit's violation) removed per
        step, by moving q (module docstring).
    contact_margin : gaps up to this (m) give speculative contacts, each pair's grown by how far its
        bodies can move in the step (so that no fall passes through a contact before seeing it), and
        penetrations up to 1 % of it are left to rest (module docstring).
    contact_model : "lcp", Nimble's boxed LCP (friction pyramid, warm-started), or "ncp", the contact
        NCP on Coulomb's cones (dcol.solvers.solve_contact_ncp; module docstring). A step whose NCP
        is not solved to its tolerance (ADMM and the fixed point can stall where redundant contacts
        make G singular, and with gaps closed at Δt such an NCP need not have a solution) falls back
        to the boxed LCP on the same rows (whose solver ends in Lemke's method): that step has the
        friction pyramid, Step.lcp is its LCPSolution and the step's derivatives are the LCP's; it
        fails only if that LCP is not solved either.
    restitution_threshold : approach speed (m/s) below which contacts do not bounce.
    limit_margin : joint limits this close (rad or m) get a row (and those the step would reach).
    mesh_vertices : mesh collision geometry becomes the convex hull of at most this many of its
        vertices (ConvexMesh.from_mesh's max_vertices).
    feature_tolerance : of :func:`dcol.geom.contacts`.
    self_collision : whether the bodies of one kinematic tree collide with each other (default False,
        as in DART and Bullet: robot links' collision meshes usually overlap); a tree fixed to the
        world counts the world's shapes (its base links) as its own. A body never collides with its
        parent. Bodies of different trees (e.g. free bodies) always collide, with the world's shapes too.
    threads : narrow-phase threads.
    """

    model: Model
    contact_model: str
    dt: float
    friction: float
    restitution: float
    baumgarte: float
    contact_margin: float
    restitution_threshold: float
    limit_margin: float
    feature_tolerance: float
    threads: int
    ground: bool
    ground_height: float
    scene: Scene
    scene_body_of_model: IntArray
    """(B,) int64: the model body of each scene body, −1 for the static ones (world shapes, ground)."""

    def __init__(
        self,
        model: Model,
        *,
        dt: float = 1e-3,
        ground: bool = True,
        ground_height: float = 0.0,
        friction: float = 0.5,
        restitution: float = 0.0,
        baumgarte: float = 0.2,
        contact_margin: float = 1e-2,
        restitution_threshold: float = 0.2,
        limit_margin: float = 0.05,
        mesh_vertices: int = 64,
        feature_tolerance: float = 1e-3,
        self_collision: bool = False,
        contact_model: str = "lcp",
        threads: int | None = None,
    ) -> None:
        self.model = model
        if contact_model not in ("lcp", "ncp"):
            raise ValueError(f"contact_model must be 'lcp' or 'ncp', got {contact_model!r}")
        self.contact_model = contact_model
        self.dt = checked_positive(dt, "dt")
        self.friction = checked_nonnegative(friction, "friction")
        self.restitution = checked_interval(restitution, "restitution", 0.0, 1.0)
        self.baumgarte = checked_interval(baumgarte, "baumgarte", 0.0, 1.0)
        self.contact_margin = checked_nonnegative(contact_margin, "contact_margin")
        self.restitution_threshold = checked_nonnegative(restitution_threshold, "restitution_threshold")
        self.limit_margin = checked_nonnegative(limit_margin, "limit_margin")
        self.feature_tolerance = checked_real(feature_tolerance, "feature_tolerance")
        self.threads = checked_threads(threads)
        self.ground = bool(ground)
        self.ground_height = checked_finite(ground_height, "ground_height")
        self._build_scene(bool(self_collision), mesh_vertices)
        self._native_world: Any = None  # the native dynamics.World, built by _native()
        self._body_frames = [model.frame_index(name) for name in model.body_names]
        self._limited = np.array(
            [
                i
                for i in range(model.nbodies)
                if model.joint_kinds[i] != "floating"
                and np.isfinite(
                    [model.lower_limits[model.joint_q_index[i]], model.upper_limits[model.joint_q_index[i]]]
                ).any()
            ],
            dtype=np.int64,
        )

    def _build_scene(self, self_collision: bool, mesh_vertices: int) -> None:
        """Scene bodies: the model's bodies with shapes, then the world's shapes, then the ground."""
        model = self.model
        self.scene = Scene()
        shapes_of: dict[int, list[Shape]] = {}
        for entry in model.collision_shapes:
            shapes_of.setdefault(entry.body, []).append(_convex(entry.shape, mesh_vertices))
        model_body = [b for b in range(model.nbodies) if b in shapes_of]
        scene_of: dict[int | str, int] = {}
        for body in model_body:
            scene_of[body] = self.scene.add_body(shapes_of[body], name=model.body_names[body])
        if -1 in shapes_of:
            scene_of[-1] = self.scene.add_body(shapes_of[-1], name="world")
            model_body.append(-1)
        if self.ground:
            half = np.array(_GROUND_HALF_EXTENTS)
            ground = Box(half, offset=([0.0, 0.0, self.ground_height - half[2]], [1.0, 0.0, 0.0, 0.0]))
            scene_of["ground"] = self.scene.add_body(ground, name="ground")
            model_body.append(-1)
            if -1 in scene_of:
                self.scene.exclude(scene_of[-1], scene_of["ground"])
        root = np.arange(model.nbodies)
        for body in range(model.nbodies):
            parent = int(model.parents[body])
            if parent >= 0:
                root[body] = root[parent]
            # A joint's two bodies touch where it holds them; a floating joint holds nothing.
            if body in scene_of and parent in scene_of and model.joint_kinds[body] != "floating":
                self.scene.exclude(scene_of[body], scene_of[parent])
        if not self_collision:
            moving = [body for body in scene_of if isinstance(body, int) and body >= 0]
            for i, body_i in enumerate(moving):
                for body_j in moving[i + 1 :]:
                    if root[body_i] == root[body_j]:
                        self.scene.exclude(scene_of[body_i], scene_of[body_j])
                # The world's shapes are the links fixed to it: a fixed-base tree's own base.
                if -1 in scene_of and model.joint_kinds[root[body_i]] != "floating":
                    self.scene.exclude(scene_of[-1], scene_of[body_i])
        # scene body → model body (−1: static)
        self.scene_body_of_model = np.array(model_body, dtype=np.int64)

    # --- parameters ---------------------------------------------------------------------------------

    @property
    def num_params(self) -> int:
        """The length of θ: 10 inertial parameters per body, μ and e."""
        return 10 * self.model.nbodies + 2

    def parameters(self) -> FloatArray:
        """θ (10 nbodies + 2,) float64: the inertial parameters, μ, e."""
        return np.concatenate([inertial_parameters(self.model).ravel(), [self.friction, self.restitution]])

    def __repr__(self) -> str:
        return (
            f"World({self.model!r}, dt={self.dt:g}, contact_model={self.contact_model!r}, friction={self.friction:g}, "
            f"restitution={self.restitution:g}, ground={self.ground}, shapes={len(self.scene.shapes)})"
        )

    def __getstate__(self) -> dict[str, Any]:
        # The native world is built again on first use, from the model and the scene.
        return {**vars(self), "_native_world": None}

    def with_parameters(self, params: ArrayLike) -> World:
        """A copy of the world with parameters θ (see parameters())."""
        params = checked_array(params, "params", (self.num_params,))
        world = object.__new__(World)
        world.__dict__.update(self.__dict__)
        world.model = self.model.with_inertial_parameters(params[:-2].reshape(-1, 10))
        world.friction, world.restitution = float(params[-2]), float(params[-1])
        world._native_world = None
        if world.friction < 0.0 or not 0.0 <= world.restitution <= 1.0:
            raise ValueError("params: friction must be ≥ 0 and restitution in [0, 1]")
        return world

    # --- stepping -----------------------------------------------------------------------------------

    def body_poses(self, q: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Poses of the scene bodies at q (nq,): positions (B, 3) and rotation matrices (B, 3, 3), the
        identity for the static ones; the poses :attr:`scene` is queried at."""
        q = checked_array(q, "q", (self.model.nq,))
        check_floating_quaternions(self.model, q)
        bodies = self.scene_body_of_model
        moving = bodies >= 0
        positions = np.zeros((bodies.size, 3))
        rotations = np.tile(np.eye(3), (bodies.size, 1, 1))
        frames = [self._body_frames[b] for b in bodies[moving]]
        if frames:
            positions[moving], rotations[moving] = _native_dynamics.frame_poses(
                self.model._native, q, frames, self.threads, matrices=True
            )
        return positions, rotations

    def step(
        self,
        q: ArrayLike,
        v: ArrayLike,
        tau: ArrayLike | None = None,
        *,
        warm_start: Step | None = None,
        derivatives: bool = False,
    ) -> Step:
        """One time step from (q (nq,), v (nv,)) with joint forces tau (nv,) (zero if None).

        warm_start : the previous Step; its LCP sets are tried first when the contacts match.
        derivatives : keep what jacobians() and vjp() of the returned Step need.
        Returns a :class:`Step`. RuntimeError when a contact solve (the impulses', or the position
        correction's) did not reach its tolerance, after its fallbacks (Lemke's method for the LCP, the
        fixed point of Acary et al. for the NCP): an iterate stopped at an iteration limit is no solution,
        however near; the message names the status, the residual and the tolerance. Also when the free
        motion's midpoint equation was not solved or the next state is not finite.
        """
        nv = self.model.nv
        q = checked_array(q, "q", (self.model.nq,))
        check_floating_quaternions(self.model, q)
        v = checked_array(v, "v", (nv,))
        tau = np.zeros(nv) if tau is None else checked_array(tau, "tau", (nv,))
        if warm_start is not None and not isinstance(warm_start, Step):
            raise TypeError("warm_start must be the previous Step")
        return self._advance(q, v, tau, warm_start, derivatives)

    def _advance(
        self,
        q: FloatArray,
        v: FloatArray,
        tau: FloatArray,
        warm_start: Step | None,
        derivatives: bool,
        where: str = "the step",
    ) -> Step:
        """:meth:`step` from a checked state (a rollout's own steps need no new checks): the native step
        (native/simulation/simulation.hpp), the one rollout_batch and step_batch take. `where` names
        the step in errors."""
        warm = warm_start._warm_start if warm_start is not None else None
        out = self._native().step_one(q, v, tau, *(warm or (None, None, None)), bool(derivatives))
        f = out["f"]
        solution: LCPSolution | NCPSolution
        if out["by_ncp"]:
            impulses, velocities = out["ncp_impulses"], out["ncp_velocities"]
            solution = NCPSolution(
                impulses,
                velocities,
                out["modes"],
                returned_status(out["status"], impulses, velocities),
                out["iterations"],
                out["residual"],
                out["ncp_mu"],
            )
            warm = None
        else:
            sets = out["sets"]
            bounds = LCPBounds(out["lo"], out["hi"], out["friction_index"].astype(np.int64), out["mu"])
            solution = LCPSolution(
                f,
                out["w"],
                sets == 0,
                sets == 1,
                sets == 2,
                out["tied"],
                returned_status(out["status"], f, out["w"]),
                out["iterations"],
                out["residual"],
                out["warm_start_hit"],
                bounds,
            )
            warm = (out["row_ids"], f, sets)
        if out["failed"]:  # the native rollouts' rule (native/simulation/simulation.hpp step_status)
            if not out["free_motion_converged"]:
                raise RuntimeError(f"{where}: {_FREE_MOTION_FAILURE}")
            finite = np.isfinite(out["q"]).all() and np.isfinite(out["v"]).all()
            # The solve left unsolved is an LCP's (the contact LCP, the NCP's fallback, or the position
            # correction): an NCP the step could not solve was replaced by its fallback.
            raise RuntimeError(
                f"{where}: {self._unsolved} ({solution.status.name}, residual {solution.residual:.1e}, "
                f"tolerance {_LCP_TOLERANCE:.0e}){'' if finite else '; the next state is not finite'}"
            )
        linearization = None
        if derivatives:
            linearization = _StepLinearization(self, q, v, tau, out["v"], out["minv_JT"], f, solution)
        return Step(
            out["q"],
            out["v"],
            SceneContacts(**out["contacts"]),
            out["impulses"],
            out["bouncing"],
            out["limit_joints"],
            out["limit_signs"],
            out["limit_impulses"],
            solution,
            linearization,
            warm,
        )

    def contact_problem(self, q: ArrayLike, v: ArrayLike, tau: ArrayLike | None = None) -> ContactProblem:
        """The boxed LCP that :meth:`step` solves from (q (nq,), v (nv,)) under tau (nv,) (zero if None),
        as a :class:`ContactProblem`: to study the contact solve or check it against another solver."""
        tau = np.zeros(self.model.nv) if tau is None else tau
        out = self._native().contact_problem(q, v, tau)
        bounds = LCPBounds(out["lo"], out["hi"], out["friction_index"].astype(np.int64), out["mu"])
        return ContactProblem(out["J"], out["A"], out["b"], bounds, out["kept"].astype(np.int64))

    def rollout(
        self,
        q0: ArrayLike,
        v0: ArrayLike,
        taus: ArrayLike,
        *,
        derivatives: bool = False,
        keep_steps: bool = False,
        progress: bool | None = None,
    ) -> Rollout:
        """len(taus) steps from (q0 (nq,), v0 (nv,)) with controls taus (T, nv), each warm-started from
        the last. Returns a :class:`Rollout`.

        Without derivatives or keep_steps, the steps run in one native call (rollout_batch's, the GIL
        released); with either, one native call per step, keeping each step's :class:`Step` (contacts,
        impulses, solver solution, and with derivatives what Rollout.vjp needs), at the cost of a Python
        call and result per step. With keep_steps alone both give the same trajectory bit for bit; with
        derivatives the contacts come from the formulas that also carry their derivatives, which round
        differently, and the trajectory agrees to rounding (amplified where a stack's contacts are
        nearly redundant).

        progress : a progress bar on standard error (:mod:`dcol.progress`): None shows it from
            ROLLOUT_PROGRESS_STEPS steps on when standard error is a terminal, True always, False never.
            The step-by-step path advances it every step; the one native call completes it at the end.
        RuntimeError names the step that failed (as :meth:`step` fails).
        """
        model = self.model
        q = checked_array(q0, "q0", (model.nq,))
        check_floating_quaternions(model, q, "q0")
        v = checked_array(v0, "v0", (model.nv,))
        controls = checked_array(taus, "taus", ("T", model.nv))
        count = controls.shape[0]
        with progress_bar(
            count, progress, minimum=ROLLOUT_PROGRESS_STEPS, description="World.rollout", unit="step"
        ) as bar:
            if not (derivatives or keep_steps):
                out = self._native_rollout(q[None], v[None], controls[None], False, False, False, self.threads)
                self._check_batch_status(out["status"], "rollout", "rollouts", out["failed_step"], single=True)
                bar.update(count)
                return Rollout(out["q"][0], out["v"][0], out["contacts"][0])
            qs, vs = [q], [v]
            steps: list[Step] = []
            previous = None
            for t, tau in enumerate(controls):
                previous = self._advance(qs[-1], vs[-1], tau, previous, derivatives, f"step {t}")
                steps.append(previous)
                qs.append(previous.q)
                vs.append(previous.v)
                bar.update()
        contacts = np.array([len(step.contacts) for step in steps], dtype=np.int32)
        return Rollout(np.array(qs), np.array(vs), contacts, steps)

    def step_batch(
        self,
        q: ArrayLike,
        v: ArrayLike,
        tau: ArrayLike | None = None,
        *,
        derivatives: bool = False,
        parameters: bool = True,
        bounce: bool = True,
        threads: int | None = None,
    ) -> BatchStep:
        """N independent steps in native code, the GIL released, on up to `threads` threads (default:
        the world's): :meth:`step` without a warm start, and with derivatives each step's Jacobians
        (native/simulation/step_jacobians.hpp, the forward mode of Step.jacobians(bounce=bounce)): the batch a
        trajectory optimizer linearizes along a trajectory.

        q (N, nq), v (N, nv), tau (N, nv) (zero if None).
        parameters : also the Jacobians with respect to θ (q_params, v_params; else None).
        Returns a :class:`BatchStep`. RuntimeError when a step fails (as :meth:`step` fails).
        """
        nv = self.model.nv
        if tau is None:
            tau = np.zeros((np.shape(q)[0] if np.ndim(q) == 2 else 1, nv))
        threads = self.threads if threads is None else checked_threads(threads)
        # Shapes, finiteness and quaternions are checked natively, with errors naming the argument.
        out = self._native().step(q, v, tau, bool(derivatives), bool(parameters), bool(bounce), threads)
        if out["worst"]:
            self._check_batch_status(out["status"], "step", "steps")
        jacobians = _jacobian_blocks(out, parameters) if derivatives else None
        return BatchStep(out["q"], out["v"], out["contacts"], jacobians)

    def rollout_batch(
        self,
        q0: ArrayLike,
        v0: ArrayLike,
        taus: ArrayLike,
        *,
        derivatives: bool = False,
        parameters: bool = True,
        bounce: bool = True,
        threads: int | None = None,
        progress: bool | None = None,
    ) -> BatchRollout:
        """N rollouts at once in native code, the GIL released, on up to `threads` threads (default:
        the world's): the native step of :meth:`step` (native/simulation/simulation.hpp), each
        warm-started from the last, so a rollout is :meth:`rollout`'s bit for bit.

        q0 (N, nq), v0 (N, nv); taus (N, T, nv), or (T, nv) for the same controls in every world.
        derivatives : also every step's Jacobians at the step taken (warm start included), as
            Step.jacobians(bounce=bounce): N T (6 nv² + 2 nv P) doubles, P = 10 nbodies + 2 with
            parameters (the θ blocks, as step_batch's), 0 without.
        progress : a progress bar of the N T world-steps on standard error (:mod:`dcol.progress`): None
            shows it from ROLLOUT_PROGRESS_STEPS world-steps on when standard error is a terminal, True
            always, False never. A shown bar runs the worlds in groups (of a multiple of `threads`), one
            native call each, and advances after each group; the worlds do not interact, so the results
            are the same.
        Returns a :class:`BatchRollout`. RuntimeError names a world whose step failed (as :meth:`step`
        fails) and the step.
        """
        # Checked here to name q0 and v0 (the native checks call them q and v) and to share one taus.
        starts, velocities = self._checked_states(q0, v0, "q0", "v0")
        count = starts.shape[0]
        controls = self._checked_controls(taus, count)
        threads = self.threads if threads is None else checked_threads(threads)
        steps = controls.shape[1]
        with progress_bar(
            count * steps, progress, minimum=ROLLOUT_PROGRESS_STEPS, description="World.rollout_batch", unit="step"
        ) as bar:
            # Groups small enough for the bar to move, each a multiple of the threads so none sits idle.
            group = count if bar.disable else threads * max(1, count // (_PROGRESS_GROUPS * threads))
            parts = []
            for start in range(0, count, group):
                part = slice(start, start + group)
                parts.append(
                    self._native_rollout(
                        starts[part], velocities[part], controls[part], derivatives, parameters, bounce, threads
                    )
                )
                bar.update(len(range(count)[part]) * steps)
        out = parts[0] if len(parts) == 1 else _concatenated(parts)
        if out["status"].any():
            self._check_batch_status(out["status"], "rollout", "rollouts", out["failed_step"])
        jacobians = _jacobian_blocks(out, parameters) if derivatives else None
        return BatchRollout(out["q"], out["v"], out["contacts"], jacobians)

    def _native_rollout(
        self,
        starts: FloatArray,
        velocities: FloatArray,
        controls: FloatArray,
        derivatives: bool,
        parameters: bool,
        bounce: bool,
        threads: int,
    ) -> dict[str, Any]:
        """The native rollouts of checked (N, nq) starts, (N, nv) velocities and (N, T, nv) controls."""
        return self._native().rollout(
            starts, velocities, controls, bool(derivatives), bool(parameters), bool(bounce), threads
        )

    def _checked_states(self, q: ArrayLike, v: ArrayLike, q_name: str, v_name: str) -> tuple[FloatArray, FloatArray]:
        """A batch's (N, nq) configurations and (N, nv) velocities from one state or N of each (the
        configurations' count sets N), checked, with errors naming q_name and v_name."""
        nv = self.model.nv
        configurations, _ = checked_configurations(self.model, q, q_name)
        count = configurations.shape[0]
        velocities, _ = checked_vectors(v, v_name, nv)
        if velocities.shape[0] != count:
            raise shape_error(v_name, [(nv,), (count, nv)], np.shape(v))
        return configurations, velocities

    def _checked_controls(self, taus: ArrayLike, count: int) -> FloatArray:
        """rollout_batch's (count, T, nv) contiguous controls from taus (count, T, nv), or (T, nv) for
        every world."""
        nv = self.model.nv
        controls = float_array(taus, "taus")
        controls = checked_array(controls, "taus", ("T", nv) if controls.ndim == 2 else (count, "T", nv))
        return np.ascontiguousarray(np.broadcast_to(controls, (count, *controls.shape[-2:])))

    def _check_batch_status(
        self,
        status: Int8Array,
        item: str,
        items: str,
        failed_step: Int32Array | None = None,
        *,
        single: bool = False,
    ) -> None:
        """Raise for failed worlds of a native batch (status 1); single: the batch is one world of
        World.rollout, named as such."""
        failed = np.flatnonzero(status != 0)
        if failed.size:
            where = "" if failed_step is None else f" at step {failed_step[failed[0]]}"
            cause = f"{self._unsolved}, {_FREE_MOTION_FAILURE} or the state stopped being finite"
            if single:
                raise RuntimeError(f"the {item} failed{where}: {cause}")
            raise RuntimeError(f"{item} {failed[0]} failed{where}: {cause} ({failed.size} {items} failed)")

    @property
    def _unsolved(self) -> str:
        """Why a step failed when a contact solve did not reach its tolerance."""
        fallback = ", then the boxed LCP," if self.contact_model == "ncp" else ""
        return (
            f"the contact {self.contact_model.upper()}{fallback} or the position correction was not solved to its "
            "tolerance"
        )

    def _native(self) -> Any:
        """The native world of rollout_batch, built once per set of parameters."""
        if self._native_world is None:
            model, scene = self.model, self.scene
            frames = np.array(
                [self._body_frames[b] if b >= 0 else -1 for b in self.scene_body_of_model], dtype=np.int32
            )
            limit_q = np.array([model.joint_q_index[b] for b in self._limited], dtype=np.int64)
            self._native_world = _native_dynamics.World(
                model._native,
                scene.shapes,
                scene.body_of_shape.astype(np.int32),
                frames,
                scene.collision_matrix().astype(np.uint8),
                np.asarray(model.damping, dtype=np.float64),
                self._limited.astype(np.int32),
                np.asarray(model.lower_limits, dtype=np.float64)[limit_q],
                np.asarray(model.upper_limits, dtype=np.float64)[limit_q],
                self.dt,
                self.friction,
                self.restitution,
                self.baumgarte,
                self.contact_margin,
                self.restitution_threshold,
                self.limit_margin,
                self.feature_tolerance,
                DISTANCE_SETTINGS,
                _SWEEPS,
                _LCP_TOLERANCE,
                self.contact_model == "ncp",
                ncp_tolerance=_NCP_TOLERANCE,
            )
        return self._native_world


def _concatenated(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The outputs of native rollouts of consecutive groups of worlds as those of one call: each array
    joined along its world axis (the second of the Jacobian blocks, stacked (6, N, …) and (2, N, …))."""
    blocks = ("state_jacobian", "params_jacobian")
    return {key: np.concatenate([part[key] for part in parts], axis=int(key in blocks)) for key in parts[0]}


def _jacobian_blocks(out: dict[str, Any], parameters: bool) -> StepJacobians:
    """StepJacobians from the block outputs of a native call with derivatives."""
    q_q, q_v, q_tau, v_q, v_v, v_tau = out["state_jacobian"]
    q_params, v_params = out["params_jacobian"] if parameters else (None, None)
    return StepJacobians(q_q, q_v, q_tau, q_params, v_q, v_v, v_tau, v_params)


class _StepLinearization:
    """Jacobians (forward) and vector–Jacobian products (reverse) of one step, from its inputs and LCP
    solution: the native linearization (native/simulation/step_jacobians.hpp) finds the step's rows again and
    differentiates at this solution (its sets; relabeled ones for complementarity-aware gradients).
    Reverse mode contracts the Jacobian with the cotangents."""

    def __init__(
        self,
        world: World,
        q: FloatArray,
        v: FloatArray,
        tau: FloatArray,
        v_next: FloatArray,
        minv_JT: FloatArray,
        f: FloatArray,
        solution: LCPSolution | NCPSolution,
    ) -> None:
        self.world, self.q, self.v, self.tau, self.minv_JT, self.solution = world, q, v, tau, minv_JT, solution
        self.f = f
        self.dt, self.nv = world.dt, world.model.nv
        self._integrate_v = step_integrate_jacobians(world.model, q, world.dt * v_next)[1]
        self._exact: dict[bool, StepJacobians] = {}  # bounce → StepJacobians at the step's own sets

    def jacobians(self, bounce: bool, solution: LCPSolution | NCPSolution | None = None) -> StepJacobians:
        if solution is None and bounce in self._exact:
            return self._exact[bounce]
        lcp = self.solution if solution is None else solution
        if isinstance(lcp, NCPSolution):
            sets = np.asarray(lcp.modes, dtype=np.int8)  # ContactMode codes, as the native ones
        else:
            sets = np.where(lcp.clamping, 0, np.where(lcp.at_lower, 1, 2)).astype(np.int8)
        by_ncp = isinstance(lcp, NCPSolution)
        out = self.world._native().linearize(self.q, self.v, self.tau, self.f, by_ncp, sets, True, bool(bounce))
        result = _jacobian_blocks(out, parameters=True)
        if solution is None:
            self._exact[bounce] = result
        return result

    def vjp(self, grad_q: ArrayLike | None, grad_v: ArrayLike | None, bounce: bool, aware: bool) -> StepCotangents:
        nv = self.nv
        cotangent_q = np.zeros(nv) if grad_q is None else checked_array(grad_q, "grad_q", (nv,))
        cotangent_v = np.zeros(nv) if grad_v is None else checked_array(grad_v, "grad_v", (nv,))
        if not aware:
            return _step_cotangents(self.jacobians(bounce), cotangent_q, cotangent_v)
        return _step_cotangents(self.aware_jacobians(cotangent_q, cotangent_v, bounce), cotangent_q, cotangent_v)

    def aware_jacobians(self, cotangent_q: FloatArray, cotangent_v: FloatArray, bounce: bool) -> StepJacobians:
        """The Jacobians at the sets relabeled from a loss's cotangents (Nimble §IV-D) where they carry the
        larger ‖∂ℓ/∂q‖² + ‖∂ℓ/∂τ‖²/Δt, else the step's own."""
        exact = self.jacobians(bounce)
        # The loss's gradient with respect to the impulses, ∂ℓ/∂v⁺ total (q⁺ = q ⊕ Δt v⁺) through M̃⁻¹Jᵀ.
        if not isinstance(self.solution, LCPSolution):
            raise ValueError("complementarity-aware gradients relabel the LCP's sets: steps the boxed LCP solved only")
        total_v = cotangent_v + self.dt * self._integrate_v.T @ cotangent_q
        relabeled = self.jacobians(bounce, complementarity_aware(self.solution, self.minv_JT.T @ total_v))

        def score(jacobians: StepJacobians) -> float:
            cot = _step_cotangents(jacobians, cotangent_q, cotangent_v)
            with np.errstate(over="ignore", invalid="ignore"):
                return float(cot.q @ cot.q + cot.tau @ cot.tau / self.dt)

        # Relabeled sets can leave the step's system singular: those Jacobians are not finite, and unused.
        relabeled_score = score(relabeled)
        return relabeled if np.isfinite(relabeled_score) and relabeled_score > score(exact) else exact
