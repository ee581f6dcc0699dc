"""Trajectory optimization and inverse problems through contact, on the World's step and its Jacobians.

Four optimizers share one cost, one result and one way of reporting progress:

* :func:`ddp`: iterative LQR (DDP with Gauss–Newton cost Hessians, Nimble §VII) on the step
  linearizations of :meth:`World.step_batch`; its forward pass steps every line-search step size at
  once, one batch per time step.
* :func:`multiple_shooting`: the horizon cut into intervals rolled out together by
  :meth:`World.rollout_batch`, the defects between them equality constraints of an NLP solved by
  constrained Gauss–Newton in scipy's trust-constr with their exact Jacobians (Nimble §VII).
* :func:`rollout_least_squares`: Gauss–Newton with a trust region (scipy's ``least_squares``) on a
  residual of a rollout's final state, with respect to the initial velocity or the controls, the
  Jacobian chained forward from the step Jacobians: the initial-condition estimation and the inverse
  dynamics through contact of Simple §IV-B (eqs. 14 and 15).
* :func:`cem`: the cross-entropy method, the stochastic-search baseline Nimble's Fig. 7 compares with,
  each iteration's samples one :meth:`World.rollout_batch`.

Controls are u (T, nu) with joint forces τ = S u, S the (nv, nu) actuation matrix (the identity by
default), as in Simple eq. 15. Models with floating joints (nq ≠ nv) are welcome: states are
compared and differentiated in the tangent space. Each optimizer takes ``callback``, called after every iteration with
an :class:`OptimizationProgress`, and ``progress``, a bar by the rule of :mod:`dcol.progress`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import scipy.linalg
import scipy.optimize

from dcol.progress import progress_bar
from dcol.typing import ArrayLike, FloatArray
from dcol.validation import checked_array, checked_integer, checked_positive

from .algorithms import check_floating_quaternions, difference, integrate_jacobians, tangent_maps
from .simulation import StepJacobians, World

__all__ = [
    "OptimizationProgress",
    "OptimizationResult",
    "LeastSquaresResult",
    "QuadraticCost",
    "ddp",
    "multiple_shooting",
    "rollout_least_squares",
    "cem",
]

# Step sizes DDP's forward pass tries at once (one batch of worlds per time step).
_LINE_SEARCH_STEPS: FloatArray = np.power(0.5, np.arange(10), dtype=np.float64)
# DDP's regularization beyond which a step is a vanishing gradient step: no descent is left to find.
_MAX_REGULARIZATION = 1e10
# Multiple shooting's cost and defects at a point the simulation cannot roll out: beyond any real
# one, and with room left below overflow for the squares and sums of trust-constr's merit.
_FAILED = 1e100


class OptimizationProgress(NamedTuple):
    """One iteration of an optimizer, as its callback receives it: iteration (1 for the first),
    cost, constraint_violation (the largest |defect| of multiple shooting, else 0.0) and elapsed, the
    wall time since the optimizer started (s)."""

    iteration: int
    cost: float
    constraint_violation: float
    elapsed: float


class OptimizationResult(NamedTuple):
    """A trajectory optimizer's outcome: controls (T, nu), taus (T, nv) = controls Sᵀ, the trajectory
    q (T + 1, nq), v (T + 1, nv) they give from the start, its cost, iterations, converged (the
    stopping test held before max_iterations), and history, the OptimizationProgress of every
    iteration (the cost of the initial guess first, as iteration 0)."""

    controls: FloatArray
    taus: FloatArray
    q: FloatArray
    v: FloatArray
    cost: float
    iterations: int
    converged: bool
    history: list[OptimizationProgress]


class LeastSquaresResult(NamedTuple):
    """rollout_least_squares' outcome: x, the variables found (v0 (nv,) or controls (T, nu)); residual
    (m,) at x; cost = ½‖residual‖²; iterations; converged (scipy's tolerances were met); history as
    OptimizationResult's; message, scipy's."""

    x: FloatArray
    residual: FloatArray
    cost: float
    iterations: int
    converged: bool
    history: list[OptimizationProgress]
    message: str


@dataclass(frozen=True)
class QuadraticCost:
    """ℓ = Σ_{t<T} ½ (‖e_t‖²_W + ‖u_t‖²_R) + ½ ‖e_T‖²_{W_T} + gᵀ e_T, e_t = [difference(target_q, q_t);
    v_t − target_v] (nv each: the state's error in the tangent space), W, W_T, R diagonal.

    target_q (nq,), target_v (nv,); state_weights, final_weights (2 nv,) ≥ 0; control_weights (nu,) ≥ 0;
    final_gradient g (2 nv,) of any sign, zero if left out: a final state to push as far as it goes in a
    direction rather than to a target (a jump's height: g = −e_z, with W_T zero there).
    The optimizers check the sizes against their world and controls.
    """

    target_q: FloatArray
    target_v: FloatArray
    state_weights: FloatArray
    control_weights: FloatArray
    final_weights: FloatArray
    final_gradient: FloatArray = field(default_factory=lambda: np.zeros(0))

    def __post_init__(self) -> None:
        if np.size(self.final_gradient) == 0:
            object.__setattr__(self, "final_gradient", np.zeros(np.size(self.final_weights)))
        for name in ("target_q", "target_v", "state_weights", "control_weights", "final_weights", "final_gradient"):
            value = checked_array(getattr(self, name), name, ("n",))
            if name.endswith("weights") and (value < 0.0).any():
                raise ValueError(f"{name} must be ≥ 0")
            object.__setattr__(self, name, value)

    def errors(self, world: World, q: FloatArray, v: FloatArray) -> FloatArray:
        """e (..., 2 nv) of states q (..., nq), v (..., nv)."""
        model = world.model
        flat_q = q.reshape(-1, model.nq)
        targets = np.broadcast_to(self.target_q, flat_q.shape)
        position = difference(model, targets, flat_q).reshape(*q.shape[:-1], model.nv)
        return np.concatenate([position, v - self.target_v], axis=-1)

    def state_derivatives(self, world: World, q: FloatArray, v: FloatArray) -> tuple[FloatArray, FloatArray]:
        """The state part of ℓ along one trajectory q (T + 1, nq), v (T + 1, nv), differentiated in
        the tangent space: its gradient (T + 1, 2 nv) and Gauss–Newton Hessian (T + 1, 2 nv, 2 nv),
        Jᵀ (W e + g) and Jᵀ W J with J = ∂e/∂[δq; v] (g the final gradient, at T only). For a floating
        joint ∂difference(target, q ⊕ δ)/∂δ is not the identity: q = target ⊕ ξ, so q ⊕ δ = target ⊕
        (ξ + J_r(ξ)⁻¹ δ) to first order, J_r integrate_jacobians' ∂/∂v at (target, ξ)."""
        model = world.model
        e = self.errors(world, q, v)
        weights = np.vstack([np.tile(self.state_weights, (q.shape[0] - 1, 1)), self.final_weights])
        J = np.tile(np.eye(2 * model.nv), (q.shape[0], 1, 1))
        if model.nq != model.nv:
            for t, xi in enumerate(e[:, : model.nv]):
                J[t, : model.nv, : model.nv] = np.linalg.inv(integrate_jacobians(model, self.target_q, xi)[1])
        linear = np.zeros_like(e)
        linear[-1] = self.final_gradient
        gradient = np.einsum("tki,tk->ti", J, weights * e + linear)
        hessian = np.einsum("tki,tk,tkj->tij", J, weights, J)
        return gradient, hessian

    def __call__(self, world: World, q: FloatArray, v: FloatArray, controls: FloatArray) -> Any:
        """ℓ of trajectories q (..., T + 1, nq), v (..., T + 1, nv) under controls (..., T, nu): (...)."""
        e = self.errors(world, q, v)
        running = 0.5 * (e[..., :-1, :] ** 2 @ self.state_weights).sum(axis=-1)
        effort = 0.5 * (controls**2 @ self.control_weights).sum(axis=-1)
        final = 0.5 * e[..., -1, :] ** 2 @ self.final_weights + e[..., -1, :] @ self.final_gradient
        return running + effort + final

    def _check(self, world: World, nu: int) -> None:
        model = world.model
        check_floating_quaternions(model, np.asarray(self.target_q), "cost.target_q")
        sizes = {
            "target_q": model.nq,
            "target_v": model.nv,
            "state_weights": 2 * model.nv,
            "control_weights": nu,
            "final_weights": 2 * model.nv,
            "final_gradient": 2 * model.nv,
        }
        for name, size in sizes.items():
            got = np.size(getattr(self, name))
            if got != size:
                raise ValueError(f"cost.{name} must have {size} entries for this world and controls, got {got}")


class _Problem(NamedTuple):
    """Checked inputs of a trajectory optimizer: the start, the controls (T, nu), S (nv, nu)."""

    q0: FloatArray
    v0: FloatArray
    controls: FloatArray
    actuation: FloatArray


def _checked_problem(
    world: World, q0: ArrayLike, v0: ArrayLike, controls: ArrayLike, actuation: ArrayLike | None
) -> _Problem:
    if not isinstance(world, World):
        raise TypeError(f"world must be a dcol.dynamics.World, got {type(world).__name__}")
    model = world.model
    start = checked_array(q0, "q0", (model.nq,))
    check_floating_quaternions(model, start, "q0")
    velocity = checked_array(v0, "v0", (model.nv,))
    S = np.eye(model.nv) if actuation is None else checked_array(actuation, "actuation", (model.nv, "nu"))
    guess = checked_array(controls, "controls", ("T", S.shape[1]))
    if guess.shape[0] == 0:
        raise ValueError("controls must have at least one step (T ≥ 1)")
    return _Problem(start, velocity, guess, S)


def _state_jacobians(jacobians: StepJacobians, actuation: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(∂x⁺/∂x (..., 2 nv, 2 nv), ∂x⁺/∂u (..., 2 nv, nu)) of steps, x = [q (tangent); v], τ = S u."""
    A = np.concatenate(
        [
            np.concatenate([jacobians.q_q, jacobians.q_v], axis=-1),
            np.concatenate([jacobians.v_q, jacobians.v_v], axis=-1),
        ],
        axis=-2,
    )
    B = np.concatenate([jacobians.q_tau, jacobians.v_tau], axis=-2) @ actuation
    return A, B


def _sensitivities(A: FloatArray, B: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Forward mode through rollouts of T steps with (..., T, n, n) state and (..., T, n, nu) control
    Jacobians: ∂x_t/∂x_0 (..., T + 1, n, n) and ∂x_t/∂u_s (..., T + 1, T, n, nu) of every state x_t
    (zero for s ≥ t)."""
    steps, n = A.shape[-3], A.shape[-1]
    through_start = np.empty((*A.shape[:-3], steps + 1, n, n))
    through_controls = np.zeros((*B.shape[:-3], steps + 1, *B.shape[-3:]))
    through_start[..., 0, :, :] = np.eye(n)
    for t in range(steps):
        through_start[..., t + 1, :, :] = A[..., t, :, :] @ through_start[..., t, :, :]
        through_controls[..., t + 1, :t, :, :] = A[..., t, None, :, :] @ through_controls[..., t, :t, :, :]
        through_controls[..., t + 1, t, :, :] = B[..., t, :, :]
    return through_start, through_controls


class _Reporter:
    """An optimizer's history, callback and progress bar."""

    def __init__(
        self,
        name: str,
        max_iterations: int,
        callback: Callable[[OptimizationProgress], None] | None,
        progress: bool | None,
    ) -> None:
        self.start = time.perf_counter()
        self.history: list[OptimizationProgress] = []
        self.callback = callback
        # An optimization is long work whatever its iteration count: a terminal always shows the bar.
        self.bar = progress_bar(max_iterations, progress, minimum=0, description=name, unit="iteration")

    def __call__(self, cost: float, violation: float = 0.0) -> None:
        entry = OptimizationProgress(len(self.history), float(cost), float(violation), time.perf_counter() - self.start)
        self.history.append(entry)
        if entry.iteration > 0:
            self.bar.update()
            self.bar.set_postfix(cost=f"{entry.cost:.3e}", violation=f"{entry.constraint_violation:.1e}")
            if self.callback is not None:
                self.callback(entry)

    def close(self) -> None:
        self.bar.close()


def _result(
    problem: _Problem, controls: FloatArray, q: FloatArray, v: FloatArray, reporter: _Reporter, converged: bool
) -> OptimizationResult:
    reporter.close()
    last = reporter.history[-1].cost
    taus = controls @ problem.actuation.T
    return OptimizationResult(controls, taus, q, v, last, len(reporter.history) - 1, converged, reporter.history)


def ddp(
    world: World,
    q0: ArrayLike,
    v0: ArrayLike,
    controls: ArrayLike,
    cost: QuadraticCost,
    *,
    actuation: ArrayLike | None = None,
    lower: ArrayLike = -np.inf,
    upper: ArrayLike = np.inf,
    max_iterations: int = 100,
    tolerance: float = 1e-6,
    regularization: float = 1e-6,
    complementarity_aware: bool = False,
    callback: Callable[[OptimizationProgress], None] | None = None,
    progress: bool | None = None,
) -> OptimizationResult:
    """Iterative LQR (DDP with Gauss–Newton cost Hessians; Nimble §VII) from the guess controls (T, nu).

    Each iteration linearizes the dynamics along the trajectory with World.step_batch (every step's
    Jacobians in one native call), solves the Riccati recursion for the feedforward k_t and feedback
    K_t (Q_uu regularized by μ I, μ raised tenfold when not positive definite, when no step size
    lowers the cost or when a step size's rollout fails, lowered after a success), and rolls out
    u_t = ū_t + α k_t + K_t (x_t ⊖ x̄_t) for the step sizes α = 1, ½, …, 2⁻⁹ at once (one step_batch
    of 10 worlds per time step), keeping the cheapest. The trajectory is step_batch's, stepped without
    warm starts. With bounds on the controls, each step's feedforward solves the box-constrained QP
    of Q (Tassa, Mansard and Todorov, "Control-limited differential dynamic programming", ICRA
    2014: scipy's lsq_linear on the Cholesky factor of Q_uu), the controls it leaves at a bound get
    no feedback, and the rollouts clamp the controls (the guess's too).

    world : a World; q0 (nq,), v0 (nv,) the start. States are compared, and fed back, in the tangent
    space: x_t ⊖ x̄_t = [difference(q̄_t, q_t); v_t − v̄_t].
    cost : QuadraticCost; actuation : S (nv, nu), τ = S u (identity if None).
    lower, upper : scalars or (nu,) bounds of the controls.
    tolerance : converged when the Riccati pass predicts, or a step achieves, a decrease below
        tolerance × |the cost|.
    regularization : the first μ.
    complementarity_aware : the backward pass linearizes each step at the contact sets relabeled from
        the value function's gradient after it (Nimble §IV-D, as Step.vjp's), where they carry more of
        it: from rest on clamped contacts the step's own Jacobians can give the cost no sensitivity to
        the controls, and DDP no step (contact_model='lcp'; the steps are then linearized one World.step
        at a time instead of in one step_batch).
    Returns an OptimizationResult.
    """
    problem = _checked_problem(world, q0, v0, controls, actuation)
    iterations = checked_integer(max_iterations, "max_iterations", minimum=0)
    tolerance = checked_positive(tolerance, "tolerance")
    mu = checked_positive(regularization, "regularization")
    S = problem.actuation
    nu = S.shape[1]
    cost._check(world, nu)
    low, high = _checked_bounds(lower, upper, nu)
    if complementarity_aware and world.contact_model != "lcp":
        raise ValueError("complementarity_aware relabels the boxed LCP's contact sets: it needs contact_model='lcp'")
    R = np.asarray(cost.control_weights)
    reporter = _Reporter("ddp", iterations, callback, progress)

    def forward(
        nominal: tuple[FloatArray, FloatArray, FloatArray], k: FloatArray, K: FloatArray, alphas: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Closed-loop rollouts for every step size: q (N, T + 1, nq), v (N, T + 1, nv), u (N, T, nu)."""
        q_bar, v_bar, u_bar = nominal
        count, steps = alphas.size, u_bar.shape[0]
        q = np.empty((count, steps + 1, world.model.nq))
        v = np.empty((count, steps + 1, world.model.nv))
        u = np.empty((count, steps, nu))
        q[:, 0], v[:, 0] = problem.q0, problem.v0
        for t in range(steps):
            away = difference(world.model, np.broadcast_to(q_bar[t], q[:, t].shape), q[:, t])
            deviation = np.concatenate([away, v[:, t] - v_bar[t]], axis=-1)
            u[:, t] = np.clip(u_bar[t] + alphas[:, None] * k[t] + deviation @ K[t].T, low, high)
            out = world.step_batch(q[:, t], v[:, t], u[:, t] @ S.T)
            q[:, t + 1], v[:, t + 1] = out.q, out.v
        return q, v, u

    steps = problem.controls.shape[0]
    n = 2 * world.model.nv
    # The guess's open-loop rollout: no feedforward and no feedback about any (valid) nominal.
    anywhere = (np.tile(problem.q0, (steps + 1, 1)), np.zeros((steps + 1, world.model.nv)), problem.controls)
    q, v, u = (x[0] for x in forward(anywhere, np.zeros((steps, nu)), np.zeros((steps, nu, n)), np.zeros(1)))
    current = float(cost(world, q, v, u))
    reporter(current)
    converged = False
    while len(reporter.history) <= iterations and mu <= _MAX_REGULARIZATION:
        gradients, hessians = cost.state_derivatives(world, q, v)
        if complementarity_aware:
            # Each step's own linearization, relabeled in the backward pass from the value's gradient.
            steps_taken = [
                world.step(q[t], v[t], u[t] @ S.T, derivatives=True)._require_linearization() for t in range(steps)
            ]

            def linearization(t: int, V_x: FloatArray) -> tuple[FloatArray, FloatArray]:
                nv = world.model.nv
                return _state_jacobians(steps_taken[t].aware_jacobians(V_x[:nv], V_x[nv:], True), S)

        else:
            out = world.step_batch(q[:-1], v[:-1], u @ S.T, derivatives=True, parameters=False)
            assert out.jacobians is not None
            A, B = _state_jacobians(out.jacobians, S)

            def linearization(t: int, V_x: FloatArray) -> tuple[FloatArray, FloatArray]:
                return A[t], B[t]

        gains = _riccati(linearization, gradients, hessians, u, R, mu, low, high)
        if gains is None:
            mu *= 10.0
            continue
        k, K, expected = gains
        if expected < tolerance * abs(current):
            converged = True
            break
        try:
            q_try, v_try, u_try = forward((q, v, u), k, K, _LINE_SEARCH_STEPS)
        except RuntimeError:
            # A step the simulation cannot take (a contact solve not solved to its tolerance, or a state
            # that stops being finite) fails the whole batch: shorter steps come from more regularization.
            mu *= 10.0
            continue
        costs = cost(world, q_try, v_try, u_try)
        best = int(np.argmin(costs))
        if not costs[best] < current:
            mu *= 10.0
            continue
        decrease = current - float(costs[best])
        q, v, u, current = q_try[best], v_try[best], u_try[best], float(costs[best])
        mu = max(mu / 10.0, regularization)
        reporter(current)
        if decrease < tolerance * abs(current):
            converged = True
            break
    return _result(problem, u, q, v, reporter, converged)


def _riccati(
    linearization: Callable[[int, FloatArray], tuple[FloatArray, FloatArray]],
    gradients: FloatArray,
    hessians: FloatArray,
    u: FloatArray,
    R: FloatArray,
    mu: float,
    low: FloatArray,
    high: FloatArray,
) -> tuple[FloatArray, FloatArray, float] | None:
    """iLQR's backward pass on step t's linearization (A_t, B_t) = linearization(t, V_x), V_x the
    value's gradient after the step, the state cost's gradients (T + 1, n) and Gauss–Newton Hessians
    (T + 1, n, n) (QuadraticCost.state_derivatives): feedforward k (T, nu), feedback K (T, nu, n) and
    the decrease the full step predicts, −Σ (kᵀ Q_u + ½ kᵀ Q_uu k); None when a Q_uu + μ I is not
    positive definite. With finite bounds, k_t minimizes ½ kᵀ Q_uu k + kᵀ Q_u within
    low − u_t ≤ k ≤ high − u_t, and K_t's rows of the controls it leaves at a bound are zero."""
    steps, nu = u.shape
    bounded = bool(np.isfinite(low).any() or np.isfinite(high).any())
    V_x, V_xx = gradients[-1], hessians[-1]
    k = np.empty((steps, nu))
    K = np.empty((steps, nu, gradients.shape[-1]))
    expected = 0.0
    for t in range(steps - 1, -1, -1):
        A_t, B_t = linearization(t, V_x)
        Q_x = gradients[t] + A_t.T @ V_x
        Q_u = R * u[t] + B_t.T @ V_x
        Q_xx = hessians[t] + A_t.T @ V_xx @ A_t
        Q_ux = B_t.T @ V_xx @ A_t
        Q_uu = np.diag(R) + B_t.T @ V_xx @ B_t
        try:
            factor = scipy.linalg.cho_factor(Q_uu + mu * np.eye(nu), lower=True)
        except np.linalg.LinAlgError:
            return None
        if bounded:
            # ½ kᵀ L Lᵀ k + kᵀ Q_u = ½ ‖Lᵀ k + L⁻¹ Q_u‖² − const: a bounded least-squares problem.
            L = np.tril(factor[0])
            box = scipy.optimize.lsq_linear(
                L.T, -scipy.linalg.solve_triangular(L, Q_u, lower=True), bounds=(low - u[t], high - u[t])
            )
            k[t] = box.x
            free = box.active_mask == 0
            K[t] = 0.0
            if free.any():
                regularized = Q_uu[np.ix_(free, free)] + mu * np.eye(int(free.sum()))
                K[t, free] = -np.linalg.solve(regularized, Q_ux[free])
        else:
            k[t] = -scipy.linalg.cho_solve(factor, Q_u)
            K[t] = -scipy.linalg.cho_solve(factor, Q_ux)
        expected -= k[t] @ Q_u + 0.5 * k[t] @ Q_uu @ k[t]
        V_x = Q_x + K[t].T @ Q_uu @ k[t] + K[t].T @ Q_u + Q_ux.T @ k[t]
        V_xx = Q_xx + K[t].T @ Q_uu @ K[t] + K[t].T @ Q_ux + Q_ux.T @ K[t]
        V_xx = 0.5 * (V_xx + V_xx.T)
    return k, K, expected


def multiple_shooting(
    world: World,
    q0: ArrayLike,
    v0: ArrayLike,
    controls: ArrayLike,
    cost: QuadraticCost,
    *,
    intervals: int,
    states: ArrayLike | None = None,
    actuation: ArrayLike | None = None,
    lower: ArrayLike = -np.inf,
    upper: ArrayLike = np.inf,
    max_iterations: int = 200,
    tolerance: float = 1e-9,
    defect_curvature: str = "none",
    callback: Callable[[OptimizationProgress], None] | None = None,
    progress: bool | None = None,
) -> OptimizationResult:
    """Multiple shooting (Nimble §VII): the T steps cut into `intervals` equal intervals whose start
    states x_k (k ≥ 1) are variables next to the controls, and whose defects d_k = x_end,k − x_{k+1}
    (the state an interval ends in minus the next one's start) are equality constraints of the NLP
    min ℓ s.t. d = 0, solved by scipy's trust-constr (an SQP in a trust region) as a constrained
    Gauss–Newton method (Bock and Plitt, IFAC 1984): ℓ's Hessian is its Gauss–Newton one, the
    defects' curvature is left out. Quasi-Newton SQP (SLSQP) starts from an identity Hessian, whose
    first steps, in the units of forces, throw the states where the simulation cannot follow.

    Every evaluation rolls all intervals out at once (one World.rollout_batch with derivatives) and
    chains the step Jacobians forward to every state of each interval: ℓ's gradient and Hessian and
    the defects' Jacobian come from them. The start states are those of the guess's rollout, so the
    guess starts with no defects, unless `states` gives them.

    The start states and defects are in coordinates (nq + nv each): a floating joint's quaternion
    is a variable whose norm the defects fix at 1 (the step normalizes it, so nothing else does), and
    the step Jacobians are carried from and to coordinates by tangent_maps.

    world : a World; q0 (nq,), v0 (nv,) the start; controls (T, nu) the guess, T a multiple of
    intervals; cost : QuadraticCost; actuation : S (nv, nu).
    states : (intervals − 1, nq + nv), the start states' guess, [q; v] each (the guess's rollout's if
        None).
    lower, upper : scalars or (nu,) bounds of the controls (the guess is clamped into them).
    tolerance : trust-constr's gtol and xtol. converged: trust-constr's success (the Lagrangian's
    gradient and the defects below tolerance, or the trust region shrunk below it). The history's
    constraint_violation is max |d|.
    defect_curvature : 'none' (constrained Gauss–Newton) or 'sr1': the defects' curvature Σ λ_i ∇²d_i,
        which Gauss–Newton leaves out, approximated by symmetric rank-one updates from the change of
        their Jacobian (scipy's SR1, started at zero: the first step is Gauss–Newton's). Where the
        multipliers are large and the dynamics bend (a pendulum swung up over many steps), Gauss–Newton's
        model of the Lagrangian is wrong enough that the trust region shrinks to nothing short of a
        stationary point; with the curvature the iterates reach one. Through contact, whose
        Jacobians jump between modes, the updates learn curvature that is not there: keep 'none'.
    Returns an OptimizationResult whose trajectory is the one rollout of its controls from the start
    (World.rollout's), whose cost is that rollout's.
    """
    problem = _checked_problem(world, q0, v0, controls, actuation)
    count = checked_integer(intervals, "intervals", minimum=1)
    iterations = checked_integer(max_iterations, "max_iterations", minimum=0)
    tolerance = checked_positive(tolerance, "tolerance")
    S = problem.actuation
    steps, nu = problem.controls.shape
    cost._check(world, nu)
    low, high = _checked_bounds(lower, upper, nu)
    if defect_curvature not in ("none", "sr1"):
        raise ValueError(f"defect_curvature must be 'none' or 'sr1', got {defect_curvature!r}")
    if steps % count:
        raise ValueError(f"intervals must divide the horizon: {steps} steps in {count} intervals")
    model = world.model
    length, nq, nv = steps // count, model.nq, model.nv
    n = nq + nv  # a state's coordinates
    start_controls = np.clip(problem.controls, low, high)
    guess = world.rollout_batch(problem.q0[None], problem.v0[None], start_controls @ S.T, progress=False)
    if states is None:
        nodes = np.concatenate([guess.q[0], guess.v[0]], axis=-1)[length:-1:length]  # x_1 … x_{M−1}
    else:
        nodes = checked_array(states, "states", (count - 1, n))
        check_floating_quaternions(model, nodes[:, :nq], "states")
    reporter = _Reporter("multiple_shooting", iterations, callback, progress)
    # Each interval's variables in z: its controls, then its start state (none for the first).
    control_columns = np.arange(steps * nu).reshape(count, length * nu)
    start_columns = steps * nu + np.arange((count - 1) * n).reshape(count - 1, n)
    columns = [control_columns[0]] + [
        np.concatenate([control_columns[k], start_columns[k - 1]]) for k in range(1, count)
    ]
    cached: dict[bytes, tuple[float, FloatArray, FloatArray, FloatArray, FloatArray]] = {}

    def evaluate(z: FloatArray) -> tuple[float, FloatArray, FloatArray, FloatArray, FloatArray]:
        """(ℓ, ∂ℓ/∂z, d, ∂d/∂z, ℓ's Gauss–Newton Hessian) at the variables
        z = [u (T nu); x_1 … x_{M−1} (nq + nv each)]."""
        key = z.tobytes()
        if key in cached:
            return cached[key]
        u = z[: steps * nu].reshape(steps, nu)
        starts = np.vstack([np.concatenate([problem.q0, problem.v0]), z[steps * nu :].reshape(count - 1, n)])
        taus = (u @ S.T).reshape(count, length, nv)
        try:
            out = world.rollout_batch(
                starts[:, :nq], starts[:, nq:], taus, derivatives=True, parameters=False, progress=False
            )
        except RuntimeError:
            # A trial point the simulation cannot roll out (a contact solve not solved to its tolerance, or
            # a state that stops being finite): a merit so large that the trust region rejects the point
            # and shrinks. Only trial points get here: the guess's rollout ran, and an accepted point's
            # merit is not that large. Finite, since trust-constr's second-order correction solves with
            # the defects.
            failed = (_FAILED, np.zeros(z.size), np.full((count - 1) * n, _FAILED), np.zeros(((count - 1) * n, z.size)))
            cached.clear()
            cached[key] = (*failed, np.zeros((z.size, z.size)))
            return cached[key]
        q = np.vstack([out.q[:, :-1].reshape(steps, nq), out.q[-1, -1]])
        v = np.vstack([out.v[:, :-1].reshape(steps, nv), out.v[-1, -1]])
        value = float(cost(world, q, v, u))
        # The cost's derivatives on each interval's states (tangent): its start and inner states, and
        # the last interval's end (the other ends are the next starts).
        state_gradient, state_hessian = cost.state_derivatives(world, q, v)
        gradients = np.zeros((count, length + 1, 2 * nv))
        hessians = np.zeros((count, length + 1, 2 * nv, 2 * nv))
        gradients[:, :-1] = state_gradient[:-1].reshape(count, length, 2 * nv)
        hessians[:, :-1] = state_hessian[:-1].reshape(count, length, 2 * nv, 2 * nv)
        gradients[-1, -1], hessians[-1, -1] = state_gradient[-1], state_hessian[-1]
        # Each state's tangent with respect to its interval's controls and start coordinates, through
        # blockdiag(T⁺, I) from the start's coordinates; the ends carried back by blockdiag(T, I).
        from_coordinates = np.zeros((count, 2 * nv, n))
        from_coordinates[:, :nv, :nq] = tangent_maps(model, starts[:, :nq])[1]
        from_coordinates[:, nv:, nq:] = np.eye(nv)
        to_coordinates = np.zeros((count, n, 2 * nv))
        to_coordinates[:, :nq, :nv] = tangent_maps(model, out.q[:, -1])[0]
        to_coordinates[:, nq:, nv:] = np.eye(nv)
        assert out.jacobians is not None
        through_start, through_controls = _sensitivities(*_state_jacobians(out.jacobians, S))
        by_variables = np.concatenate(
            [
                np.moveaxis(through_controls, 2, 3).reshape(count, length + 1, 2 * nv, length * nu),
                through_start @ from_coordinates[:, None],
            ],
            axis=-1,
        )  # (M, L + 1, 2 nv, L nu + n)
        interval_gradients = np.einsum("mjti,mjt->mi", by_variables, gradients)
        interval_hessians = (np.swapaxes(by_variables, -1, -2) @ hessians @ by_variables).sum(axis=1)
        gradient = np.zeros(z.size)
        hessian = np.zeros((z.size, z.size))
        gradient[: steps * nu] = (cost.control_weights * u).ravel()
        hessian[: steps * nu, : steps * nu] = np.diag(np.tile(cost.control_weights, steps))
        ends = np.concatenate([out.q[:, -1], out.v[:, -1]], axis=-1)
        defects = (ends[:-1] - starts[1:]).ravel()
        jacobian = np.zeros((count - 1, n, z.size))
        for k, variables in enumerate(columns):
            used = slice(0, variables.size)  # the first interval's start is no variable
            gradient[variables] += interval_gradients[k, used]
            hessian[np.ix_(variables, variables)] += interval_hessians[k, used, used]
            if k < count - 1:
                jacobian[k][:, variables] = to_coordinates[k] @ by_variables[k, -1, :, used]
                jacobian[k][:, start_columns[k]] = -np.eye(n)
        cached.clear()
        cached[key] = (value, gradient, defects, jacobian.reshape(-1, z.size), hessian)
        return cached[key]

    def violation(z: FloatArray) -> float:
        defects = evaluate(z)[2]
        return float(np.abs(defects).max()) if defects.size else 0.0

    z0 = np.concatenate([start_controls.ravel(), nodes.ravel()])
    unbounded = np.full(nodes.size, np.inf)
    bounds = scipy.optimize.Bounds(
        np.concatenate([np.tile(low, steps), -unbounded]), np.concatenate([np.tile(high, steps), unbounded])
    )
    reporter(evaluate(z0)[0], violation(z0))
    # Constrained Gauss–Newton: ℓ's Gauss–Newton Hessian, none of the defects' (Bock and Plitt 1984),
    # or their curvature by SR1; the trust region keeps the early steps within what the simulation can take.
    defects = scipy.optimize.NonlinearConstraint(
        lambda z: evaluate(z)[2],
        0.0,
        0.0,
        jac=lambda z: evaluate(z)[3],
        hess=(
            scipy.optimize.SR1(init_scale=0.0)
            if defect_curvature == "sr1"
            else lambda z, multipliers: np.zeros((z.size, z.size))
        ),
    )
    solution = scipy.optimize.minimize(
        lambda z: evaluate(z)[:2],
        z0,
        jac=True,
        hess=lambda z: evaluate(z)[4],
        method="trust-constr",
        bounds=bounds,
        constraints=[defects] if count > 1 else [],
        options={"maxiter": max(iterations, 1), "gtol": tolerance, "xtol": tolerance},
        callback=lambda intermediate_result: reporter(
            evaluate(intermediate_result.x)[0], violation(intermediate_result.x)
        ),
    )
    u = solution.x[: steps * nu].reshape(steps, nu)
    rollout = world.rollout(problem.q0, problem.v0, u @ S.T, progress=False)
    reporter.close()
    return OptimizationResult(
        u,
        u @ S.T,
        rollout.q,
        rollout.v,
        float(cost(world, rollout.q, rollout.v, u)),
        len(reporter.history) - 1,
        bool(solution.success),
        reporter.history,
    )


Residual = Callable[[FloatArray, FloatArray], tuple[FloatArray, FloatArray]]
"""r(q_T (nq,), v_T (nv,)) -> (r (m,), ∂r/∂[q_T (tangent); v_T] (m, 2 nv))."""


def rollout_least_squares(
    world: World,
    q0: ArrayLike,
    v0: ArrayLike,
    controls: ArrayLike,
    residual: Residual,
    *,
    variables: str = "v0",
    actuation: ArrayLike | None = None,
    velocity_basis: ArrayLike | None = None,
    jacobian: str = "analytic",
    max_iterations: int = 50,
    tolerance: float = 1e-12,
    callback: Callable[[OptimizationProgress], None] | None = None,
    progress: bool | None = None,
) -> LeastSquaresResult:
    """min ½‖r(x_T)‖² over the initial velocity v0 or the controls, x_T the final state of the rollout
    from (q0, v0) under controls (T, nu): Simple §IV-B, eq. 14 (the initial velocity that reaches an
    observed final pose) and eq. 15 (the actuator torques that hold a robot still through its contacts).

    Gauss–Newton with a trust region, scipy's least_squares (method "trf"), on the Jacobian
    ∂r/∂x_T ∂x_T/∂(v0 or u), the second factor chained forward through the step Jacobians of the
    rollout (World.rollout_batch with derivatives), or with jacobian="2-point" / "3-point" scipy's
    finite differences of the rollout, for comparison.

    variables : "v0", the initial velocity (nv,) from the guess v0, or "controls", u (T, nu) from
        the guess controls (τ = S u, S = actuation (nv, nu), identity if None).
    velocity_basis : E (nv, k), the directions in which v0 = v0_guess + E ξ may move (every direction
        if None): the part of the velocity the final state can tell, where contact absorbs the rest
        (a cube's velocity into the ground it rests on).
    residual : r(q_T, v_T) -> (r (m,), ∂r/∂[q_T (tangent); v_T] (m, 2 nv)).
    max_iterations : scipy's max_nfev, the evaluations of the residual; tolerance : its ftol, xtol and
        gtol.
    Returns a LeastSquaresResult; iterations counts scipy's iterations.
    """
    problem = _checked_problem(world, q0, v0, controls, actuation)
    if variables not in ("v0", "controls"):
        raise ValueError(f"variables must be 'v0' or 'controls', got {variables!r}")
    if jacobian not in ("analytic", "2-point", "3-point"):
        raise ValueError(f"jacobian must be 'analytic', '2-point' or '3-point', got {jacobian!r}")
    iterations = checked_integer(max_iterations, "max_iterations", minimum=1)
    tolerance = checked_positive(tolerance, "tolerance")
    S = problem.actuation
    steps, nu = problem.controls.shape
    nv = world.model.nv
    if velocity_basis is not None and variables != "v0":
        raise ValueError("velocity_basis applies to variables='v0' only")
    E = np.eye(nv) if velocity_basis is None else checked_array(velocity_basis, "velocity_basis", (nv, "k"))
    reporter = _Reporter("rollout_least_squares", iterations, callback, progress)
    cached: dict[tuple[bytes, bool], tuple[FloatArray, FloatArray | None]] = {}

    def evaluate(x: FloatArray, derivatives: bool) -> tuple[FloatArray, FloatArray | None]:
        key = (x.tobytes(), derivatives)
        if key not in cached:
            velocity = problem.v0 + E @ x if variables == "v0" else problem.v0
            u = problem.controls if variables == "v0" else x.reshape(steps, nu)
            out = world.rollout_batch(
                problem.q0[None],
                velocity[None],
                (u @ S.T)[None],
                derivatives=derivatives,
                parameters=False,
                progress=False,
            )
            value, partial = residual(out.q[0, -1], out.v[0, -1])
            value = np.asarray(value, dtype=np.float64)
            partial = np.asarray(partial, dtype=np.float64)
            if value.ndim != 1 or partial.shape != (value.size, 2 * nv):
                raise ValueError(
                    f"residual must return r (m,) and its Jacobian (m, {2 * nv}), got {value.shape} and {partial.shape}"
                )
            full = None
            if out.jacobians is not None:
                A, B = _state_jacobians(out.jacobians, S)
                through_start, through_controls = (x[-1] for x in _sensitivities(A[0], B[0]))
                if variables == "v0":
                    full = partial @ through_start[:, nv:] @ E
                else:
                    full = np.einsum("mn,tnu->mtu", partial, through_controls).reshape(value.size, -1)
            cached.clear()
            cached[key] = (value, full)
        return cached[key]

    def jac(x: FloatArray) -> FloatArray:
        full = evaluate(x, True)[1]
        assert full is not None
        return full

    x0 = np.zeros(E.shape[1]) if variables == "v0" else problem.controls.ravel()
    reporter(0.5 * float(np.sum(evaluate(x0, False)[0] ** 2)))
    solution = scipy.optimize.least_squares(
        lambda x: evaluate(x, False)[0],
        x0,
        jac=jac if jacobian == "analytic" else jacobian,
        method="trf",
        ftol=tolerance,
        xtol=tolerance,
        gtol=tolerance,
        max_nfev=iterations,
        callback=lambda intermediate_result: reporter(intermediate_result.cost),
    )
    reporter.close()
    x = problem.v0 + E @ solution.x if variables == "v0" else solution.x.reshape(steps, nu)
    return LeastSquaresResult(
        x,
        solution.fun,
        float(solution.cost),
        len(reporter.history) - 1,
        bool(solution.success),
        reporter.history,
        str(solution.message),
    )


def cem(
    world: World,
    q0: ArrayLike,
    v0: ArrayLike,
    controls: ArrayLike,
    cost: QuadraticCost,
    *,
    actuation: ArrayLike | None = None,
    spread: ArrayLike = 1.0,
    lower: ArrayLike = -np.inf,
    upper: ArrayLike = np.inf,
    samples: int = 64,
    elites: int = 8,
    hold: int = 1,
    max_iterations: int = 50,
    seed: int = 0,
    callback: Callable[[OptimizationProgress], None] | None = None,
    progress: bool | None = None,
) -> OptimizationResult:
    """The cross-entropy method (the stochastic search Nimble §VII compares with): each iteration
    draws `samples` control sequences from a Gaussian (each value held for `hold` steps), clipped to
    [lower, upper], rolls them all out in one World.rollout_batch, and refits the Gaussian's mean and
    standard deviation to the `elites` cheapest. The result is the cheapest sequence drawn; the
    history's cost is the cheapest so far; converged is False (the method has no stopping test: it runs
    max_iterations).

    controls (T, nu) : the first mean; spread : its standard deviation, a scalar or (nu,);
    lower, upper : scalars or (nu,) bounds of the controls; seed : of numpy's default_rng.
    Returns an OptimizationResult.
    """
    problem = _checked_problem(world, q0, v0, controls, actuation)
    S = problem.actuation
    steps, nu = problem.controls.shape
    cost._check(world, nu)
    count = checked_integer(samples, "samples", minimum=2)
    best_count = checked_integer(elites, "elites", minimum=1, maximum=count)
    held = checked_integer(hold, "hold", minimum=1)
    iterations = checked_integer(max_iterations, "max_iterations", minimum=0)
    low, high = _checked_bounds(lower, upper, nu)
    deviation = _per_control(spread, "spread", nu)
    if (deviation <= 0.0).any():
        raise ValueError("spread must be > 0")
    rng = np.random.default_rng(checked_integer(seed, "seed", minimum=0))
    mean = problem.controls[::held].copy()  # (knots, nu)
    deviation = np.tile(deviation, (mean.shape[0], 1))
    best_u = np.clip(problem.controls, low, high)
    start = world.rollout_batch(problem.q0[None], problem.v0[None], (best_u @ S.T)[None], progress=False)
    best_q, best_v = start.q[0], start.v[0]
    best = float(cost(world, best_q, best_v, best_u))
    reporter = _Reporter("cem", iterations, callback, progress)
    reporter(best)
    for _ in range(iterations):
        knots = mean + deviation * rng.standard_normal((count, *mean.shape))
        u = np.clip(np.repeat(knots, held, axis=1)[:, :steps], low, high)
        out = world.rollout_batch(
            np.tile(problem.q0, (count, 1)), np.tile(problem.v0, (count, 1)), u @ S.T, progress=False
        )
        costs = cost(world, out.q, out.v, u)
        order = np.argsort(costs)[:best_count]
        if costs[order[0]] < best:
            best, best_u, best_q, best_v = float(costs[order[0]]), u[order[0]], out.q[order[0]], out.v[order[0]]
        mean, deviation = knots[order].mean(axis=0), knots[order].std(axis=0)
        reporter(best)
    return _result(problem, best_u, best_q, best_v, reporter, False)


def _checked_bounds(lower: ArrayLike, upper: ArrayLike, nu: int) -> tuple[FloatArray, FloatArray]:
    """(lower, upper) of the controls, (nu,) each, from scalars or (nu,) arrays, lower < upper."""
    low, high = (_per_control(value, name, nu, infinite=True) for value, name in ((lower, "lower"), (upper, "upper")))
    if not (low < high).all():
        raise ValueError("lower must be below upper")
    return low, high


def _per_control(value: ArrayLike, name: str, nu: int, *, infinite: bool = False) -> FloatArray:
    """A scalar for every control or one value each: (nu,)."""
    array = checked_array(value, name, (), infinite=infinite) if np.ndim(value) == 0 else None
    if array is not None:
        return np.full(nu, float(array))
    return checked_array(value, name, (nu,), infinite=infinite)
