"""Direct transcription with DCOL collision constraints, shared by the trajectory-optimization examples
(piano_mover.py, quadrotor_hallway.py, cone_through_opening.py) of DCOL §IV-A.

The problem is DCOL eq. 31 with the knots' states and controls as the decision variables: a quadratic
cost on the controls and a quadratic terminal cost ℓ_N on the distance to the goal, the start state and
the discrete dynamics x_{k+1} = f(x_k, u_k) as equality constraints, bounds on states and controls, and
α ≥ 1 + clearance at every knot and at points between knots, against every obstacle. With the goal in
the cost rather than a constraint, the static initial guess is feasible for the dynamics, and the solver
moves away from it while keeping clear.

scipy's SLSQP solves it: it ships with scipy (a dependency of dcol; IPOPT through cyipopt would need a system
Ipopt or a pre-release wheel), takes dense constraint Jacobians, which suits these few hundred
variables, and handles the equality constraints of the dynamics directly.
The dynamics' Jacobians are taken by complex-step differentiation, exact to rounding; the collision
constraints' Jacobians are DCOL's (dcol.geom.collision_constraints), or scipy's forward differences
when comparing.
"""

import argparse
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.optimize import Bounds, NonlinearConstraint, minimize

from dcol.geom import Shape, support_point

Dynamics = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""f(X (K, nx), U (K, nu)) -> X⁺ (K, nx), written with operations that carry complex numbers."""
Collision = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
"""g(X (N, nx)) -> (α (N, M), ∂α/∂x (N, M, nx))."""


@dataclass(frozen=True)
class TrajectoryProblem:
    """DCOL eq. 31 over N knots: minimize Σ (u_k − u_ref)ᵀ diag(control_weight) (u_k − u_ref)."""

    dynamics: Dynamics
    collision: Collision
    x_start: np.ndarray  # (nx,)
    x_goal: np.ndarray  # (nx,)
    knots: int
    u_reference: np.ndarray  # (nu,): the controls of the static initial guess (e.g. hover thrust)
    control_weight: np.ndarray  # (nu,)
    terminal_weight: np.ndarray  # (nx,): ℓ_N = (x_N − x_goal)ᵀ diag(terminal_weight) (x_N − x_goal)
    state_bounds: tuple[np.ndarray, np.ndarray]  # (nx,) lower and upper, ±inf where free
    control_bounds: tuple[np.ndarray, np.ndarray]  # (nu,)
    # α ≥ 1 + clearance at the knots and at points_per_interval − 1 points linearly interpolated between
    # each two, so that the motion between the constrained points stays clear too.
    clearance: float = 0.05
    points_per_interval: int = 4
    # (nx,) or None: adds Σ_k (x_k − x̄_k)ᵀ diag(state_weight) (x_k − x̄_k), x̄_k the straight line from x_start
    # to x_goal over the knots, as DCOL.jl's own examples track; it pulls the whole path, not only its end,
    # towards the goal, so that the solver does not settle against an obstacle the straight line passes by.
    state_weight: np.ndarray | None = None


@dataclass(frozen=True)
class TrajectorySolution:
    states: np.ndarray  # (N, nx)
    controls: np.ndarray  # (N − 1, nu)
    iterations: int
    seconds: float
    violation: float  # largest violation of the dynamics, the start state and α ≥ 1 at the knots
    goal_error: float  # max |x_N − x_goal|
    converged: bool
    message: str


def complex_step_jacobians(dynamics: Dynamics, X: np.ndarray, U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """∂f/∂x (K, nx, nx) and ∂f/∂u (K, nx, nu) at K knots by complex steps: f(x + ih e_j) has imaginary
    part h ∂f/∂x_j up to O(h³) without a subtraction, so h can be tiny and the result is exact to rounding."""
    step = 1e-30
    inputs = np.concatenate([X, U], axis=1).astype(complex)
    nx = X.shape[1]
    columns = []
    for j in range(inputs.shape[1]):
        perturbed = inputs.copy()
        perturbed[:, j] += 1j * step
        columns.append(dynamics(perturbed[:, :nx], perturbed[:, nx:]).imag / step)
    jacobian = np.stack(columns, axis=2)
    return jacobian[:, :, :nx], jacobian[:, :, nx:]


def solve(
    problem: TrajectoryProblem, *, finite_differences: bool = False, max_iterations: int = 500
) -> TrajectorySolution:
    """Solve from the static initial guess: every knot at x_start, every control u_reference.

    finite_differences=True leaves the collision constraints' Jacobian to scipy (forward differences over
    every variable), all else equal, to compare with DCOL's analytic one.
    """
    N, nx, nu = problem.knots, len(problem.x_start), len(problem.u_reference)
    split = N * nx

    state_weight = np.zeros(nx) if problem.state_weight is None else problem.state_weight
    straight_line = np.linspace(problem.x_start, problem.x_goal, N)

    def unpack(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return z[:split].reshape(N, nx), z[split:].reshape(N - 1, nu)

    def cost(z: np.ndarray) -> float:
        X, U = unpack(z)
        du, dx = U - problem.u_reference, X[-1] - problem.x_goal
        tracking = np.sum(state_weight * (X - straight_line) ** 2)
        return float(np.sum(problem.control_weight * du**2) + np.sum(problem.terminal_weight * dx**2) + tracking)

    def cost_gradient(z: np.ndarray) -> np.ndarray:
        X, U = unpack(z)
        gradient = np.concatenate([(2.0 * state_weight * (X - straight_line)).ravel(), np.zeros(U.size)])
        gradient[split:] = (2.0 * problem.control_weight * (U - problem.u_reference)).ravel()
        gradient[split - nx : split] += 2.0 * problem.terminal_weight * (X[-1] - problem.x_goal)
        return gradient

    def defects(z: np.ndarray) -> np.ndarray:
        X, U = unpack(z)
        return np.concatenate([X[0] - problem.x_start, (X[1:] - problem.dynamics(X[:-1], U)).ravel()])

    def defects_jacobian(z: np.ndarray) -> np.ndarray:
        X, U = unpack(z)
        A, B = complex_step_jacobians(problem.dynamics, X[:-1], U)
        jacobian = np.zeros((N * nx, z.size))
        identity = np.eye(nx)
        jacobian[:nx, :nx] = identity
        for k in range(N - 1):
            rows = slice((k + 1) * nx, (k + 2) * nx)
            jacobian[rows, (k + 1) * nx : (k + 2) * nx] = identity
            jacobian[rows, k * nx : (k + 1) * nx] = -A[k]
            jacobian[rows, split + k * nu : split + (k + 1) * nu] = -B[k]
        return jacobian

    interpolation = resample(np.eye(N), problem.points_per_interval)  # (P, N): constrained points from knots

    def clearance(z: np.ndarray) -> np.ndarray:
        return (problem.collision(interpolation @ unpack(z)[0])[0] - 1.0 - problem.clearance).ravel()

    def clearance_jacobian(z: np.ndarray) -> np.ndarray:
        d_alpha = problem.collision(interpolation @ unpack(z)[0])[1]  # (P, M, nx)
        by_knot = interpolation[:, None, :, None] * d_alpha[:, :, None, :]  # (P, M, N, nx)
        jacobian = np.zeros((by_knot.shape[0] * by_knot.shape[1], z.size))
        jacobian[:, :split] = by_knot.reshape(jacobian.shape[0], split)
        return jacobian

    bounds = Bounds(
        np.concatenate([np.tile(problem.state_bounds[0], N), np.tile(problem.control_bounds[0], N - 1)]),
        np.concatenate([np.tile(problem.state_bounds[1], N), np.tile(problem.control_bounds[1], N - 1)]),
    )
    constraints = [
        NonlinearConstraint(defects, 0.0, 0.0, jac=defects_jacobian),
        NonlinearConstraint(clearance, 0.0, np.inf, jac="2-point" if finite_differences else clearance_jacobian),
    ]
    guess = np.concatenate([np.tile(problem.x_start, N), np.tile(problem.u_reference, N - 1)])
    start = time.perf_counter()
    result = minimize(
        cost,
        guess,
        jac=cost_gradient,
        method="SLSQP",
        bounds=bounds,
        constraints=constraints,
        options={"maxiter": max_iterations, "ftol": 1e-8},
    )
    seconds = time.perf_counter() - start
    violation = max(np.abs(defects(result.x)).max(), max(0.0, -clearance(result.x).min() - problem.clearance))
    X, U = unpack(result.x)
    goal_error = float(np.abs(X[-1] - problem.x_goal).max())
    return TrajectorySolution(
        X, U, int(result.nit), seconds, float(violation), goal_error, bool(result.success), result.message
    )


def resample(states: np.ndarray, per_interval: int) -> np.ndarray:
    """(per_interval (N − 1) + 1, nx) states linearly interpolated between the N knots, per_interval points
    per interval: the points the constraints hold at, and the denser check that the body stays clear."""
    knots = np.arange(len(states))
    fine = np.linspace(0, len(states) - 1, per_interval * (len(states) - 1) + 1)
    return np.stack([np.interp(fine, knots, column) for column in states.T], axis=1)


def report(name: str, analytic: TrajectorySolution, finite: TrajectorySolution, resampled_alpha: float) -> None:
    for label, solution in (("DCOL Jacobians", analytic), ("finite differences", finite)):
        print(
            f"{name}, {label}: {'converged' if solution.converged else 'NOT converged (' + solution.message + ')'} "
            f"in {solution.iterations} iterations, {solution.seconds:.2f} s, "
            f"constraint violation {solution.violation:.1e}, distance from the goal state {solution.goal_error:.1e}"
        )
    print(f"{name}: smallest α on the trajectory resampled between knots {resampled_alpha:.4f}")


def outline(shape: Shape, r: np.ndarray, q: np.ndarray, axes: tuple[int, int], points: int = 64) -> np.ndarray:
    """(points + 1, 2) closed outline of the shape's projection onto the world plane of two axes (0 x,
    1 y, 2 z): the support points along directions in that plane trace the convex silhouette."""
    angles = np.linspace(0.0, 2.0 * np.pi, points + 1)
    outline_points = []
    for angle in angles:
        direction = np.zeros(3)
        direction[axes[0]], direction[axes[1]] = np.cos(angle), np.sin(angle)
        outline_points.append(support_point(shape, r, q, direction)[list(axes)])
    return np.array(outline_points)


def mrp_to_quaternion(p: np.ndarray) -> np.ndarray:
    """(K, 4) unit quaternions [w, x, y, z] with w ≥ 0 of (K, 3) modified Rodrigues parameters, |p| ≤ 1."""
    squared = np.sum(p**2, axis=1, keepdims=True)
    return np.concatenate([1.0 - squared, 2.0 * p], axis=1) / (1.0 + squared)


def mrp_rotation(p: np.ndarray) -> np.ndarray:
    """(K, 3, 3) rotation matrices of (K, 3) MRPs: I + (8 [p]×² − 4 (1 − pᵀp) [p]×) / (1 + pᵀp)²; complex-step safe."""
    cross = np.zeros(p.shape[:1] + (3, 3), dtype=p.dtype)
    cross[:, 0, 1], cross[:, 0, 2], cross[:, 1, 2] = -p[:, 2], p[:, 1], -p[:, 0]
    cross -= cross.transpose(0, 2, 1)
    squared = np.sum(p * p, axis=1)[:, None, None]
    return np.eye(3) + (8.0 * cross @ cross - 4.0 * (1.0 - squared) * cross) / (1.0 + squared) ** 2


def rigid_body_derivative(
    x: np.ndarray, force: np.ndarray, torque: np.ndarray, mass: float, inertia: np.ndarray
) -> np.ndarray:
    """ẋ of a rigid body, x = [r, p (MRP), v (world), ω (body)] (K, 12), under a world force and a body
    torque (K, 3) each: ṗ = ¼ ((1 − pᵀp) I + 2 [p]× + 2 p pᵀ) ω, J ω̇ = τ − ω × J ω."""
    p, v, omega = x[:, 3:6], x[:, 6:9], x[:, 9:12]
    squared = np.sum(p * p, axis=1, keepdims=True)
    p_dot = 0.25 * (
        (1.0 - squared) * omega + 2.0 * np.cross(p, omega) + 2.0 * p * np.sum(p * omega, axis=1, keepdims=True)
    )
    omega_dot = np.linalg.solve(inertia, (torque - np.cross(omega, omega @ inertia.T)).T).T
    return np.concatenate([v, p_dot, force / mass, omega_dot], axis=1)


def rk4(derivative: Dynamics, dt: float) -> Dynamics:
    """The discrete dynamics of one classic Runge–Kutta step of length dt, controls held."""

    def step(x: np.ndarray, u: np.ndarray) -> np.ndarray:
        k1 = derivative(x, u)
        k2 = derivative(x + 0.5 * dt * k1, u)
        k3 = derivative(x + 0.5 * dt * k2, u)
        k4 = derivative(x + dt * k3, u)
        return x + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)

    return step


def run_example(
    name: str,
    build_problem: Callable[[int], TrajectoryProblem],
    collision: Collision,
    draw: Callable[[np.ndarray, Path], None],
    description: str,
    argv: list[str],
    knots: int,
) -> None:
    """The examples' command line: solve with DCOL's and with finite-difference Jacobians, print both and the
    smallest α on a resampling ten times denser than the knots, draw the DCOL solution into --output."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--knots", type=int, default=knots)
    default_output = Path(tempfile.gettempdir()) / (name.replace(" ", "_") + ".png")
    parser.add_argument("--output", type=Path, default=default_output, help="the picture (PNG)")
    args = parser.parse_args(argv)
    problem = build_problem(args.knots)
    analytic = solve(problem)
    finite = solve(problem, finite_differences=True)
    report(name, analytic, finite, collision(resample(analytic.states, 10))[0].min())
    draw(analytic.states, args.output)
    print(f"picture: {args.output}")
