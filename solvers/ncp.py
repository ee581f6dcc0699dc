"""Frictional contact as the nonlinear complementarity problem on Coulomb's second-order cones, with
no polyhedral relaxation (Simple §II-B, Simple eq. 1), and its implicit gradients by contact mode
(Simple §III-B, App. A–B).

Per contact i, in its frame with the normal last: impulse λ_i = [λ_t1, λ_t2, λ_n], velocity
v = G λ + g (G the Delassus matrix, g the free velocity). The problem:

    K_μ ∋ λ ⊥ v + Γ(v) ∈ K_μ*,    K_μ = {‖λ_t‖ ≤ μ λ_n},   Γ(v)_i = [0, 0, μ_i ‖v_t,i‖],

Γ being De Saxcé's correction that makes the cone complementarity equivalent to Signorini's
condition plus maximal dissipation. Each contact ends in one of three modes: *breaking* (λ_i = 0,
separating), *sticking* (λ_i inside the cone, v_i = 0) or *sliding* (λ_i on the cone's boundary
opposite to the tangential velocity, v_n = 0).

Solver (native/lcp/ncp.hpp): ADMM on the cone-constrained QP ``min ½λᵀGλ + (g + s)ᵀλ, λ ∈ K_μ``
with the De Saxcé term s = Γ(v) refreshed at every iteration (as Acary et al. and Carpentier et al.
do), penalty ρ from G's spectrum, and after 25, 50, 100, … iterations an exact solve of the
iterate's contact modes (the equations below), kept when it solves the NCP: ADMM alone creeps along
the null space of a rank-deficient G (many contacts on few joints) long after the modes are found.
This first run has a tenth of the iteration budget. When it ends without a solution, the fixed point
on s of Acary, Cadoux, Lemaréchal and Malick 2011 (each step the convex QP of one s) with each cone QP
solved by a primal-dual interior-point method and s mixed over the last rounds by Anderson
acceleration (native/lcp/ncp_fixed_point.hpp): interior points do not creep along G's null space,
and a few cone QPs solve most of what the short run leaves. When that fails too, ADMM runs again
with the whole budget, and then once more, as long, holding s fixed while ADMM settles on the convex
QP it defines and only then refreshing it (the same fixed point): refreshed every iteration, s can
keep the iterate cycling with wrong modes (a box sliding on its four corners under another one,
μ = 1). That run's exact solves also try the iterate's modes with one of the eight least-pushing
contacts breaking (of redundant contacts a solution can leave one out, which the iterate reads as
sliding), each by Newton's method from the least-norm solution and from the iterate. Without a
solution, the impulses of smallest residual (ADMM's, or the fixed point's) are polished so, with up
to two contacts breaking; the status is SOLVED only when the returned impulses' residual is within tol.

Gradients: with the modes fixed, the solution satisfies F(λ_C; G, g, μ) = 0 over the non-breaking
contacts C: v_i = 0 for sticking contacts, and v_n,i = 0, λ_t,i + μ_i λ_n,i v_t,i / ‖v_t,i‖ = 0 for
sliding ones; the implicit function theorem gives dλ_C = −(∂F/∂λ_C)⁻¹ ∂F/∂θ dθ, dλ = 0 for breaking
contacts (Simple eqs. 8–10). F depends on G and g only through v, so ∂ℓ/∂g = −Wᵀy and ∂ℓ/∂G = −(Wᵀy)λᵀ with
y = (∂F/∂λ_C)⁻ᵀ ∂ℓ/∂λ_C and W = ∂F/∂v.
"""

import enum
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from dcol import _native
from dcol.printing import summary_repr
from dcol.typing import ArrayLike, FloatArray, Int8Array, IntArray
from dcol.validation import checked_array, checked_iterations, checked_positive, float_array, shape_error

from .lcp import LCPStatus, returned_status

__all__ = [
    "ContactMode",
    "NCPSolution",
    "NCPCotangents",
    "solve_contact_ncp",
    "ncp_jvp",
    "ncp_vjp",
    "project_onto_friction_cone",
]


class ContactMode(enum.IntEnum):
    """How a contact ends: breaking (no impulse), sticking (inside the cone) or sliding (on it)."""

    BREAKING = 0
    STICKING = 1
    SLIDING = 2


@dataclass(frozen=True)
class NCPSolution:
    """impulses λ (3 nc,), velocities v = Gλ + g (3 nc,), modes (nc,) ContactMode codes, status,
    iterations, residual (largest violation of cone membership, dual-cone membership and
    complementarity, relative to the data's scale), and mu (nc,)."""

    impulses: FloatArray
    velocities: FloatArray
    modes: Int8Array
    status: LCPStatus
    iterations: int
    residual: float
    mu: FloatArray

    __repr__ = summary_repr


class NCPCotangents(NamedTuple):
    """∂ℓ/∂(G (3nc, 3nc), g (3nc,), mu (nc,))."""

    G: FloatArray
    g: FloatArray
    mu: FloatArray


def _coefficients(mu: ArrayLike, count: int) -> FloatArray:
    """Friction coefficients (count,) from mu (count,) or a scalar, checked."""
    values = float_array(mu, "mu")
    return checked_array(np.broadcast_to(values, (count,)) if values.ndim == 0 else values, "mu", (count,))


def project_onto_friction_cone(impulses: ArrayLike, mu: ArrayLike) -> FloatArray:
    """Euclidean projection of (nc, 3) impulses [t1, t2, n] onto the cones ‖t‖ ≤ μ n (mu (nc,) or a
    scalar)."""
    impulses = checked_array(impulses, "impulses", ("nc", 3))
    return _native.lcp.project_onto_friction_cone(impulses, _coefficients(mu, len(impulses)))


def solve_contact_ncp(
    G: ArrayLike,
    g: ArrayLike,
    mu: ArrayLike,
    *,
    tol: float = 1e-10,
    max_iterations: int = 5000,
    rho: float | None = None,
) -> NCPSolution:
    """Solve the contact NCP of the module docstring by ADMM.

    G : (3nc, 3nc) symmetric positive semidefinite Delassus matrix; g : (3nc,) free velocity; both in
    the contact frames, normal last per contact. mu : (nc,) friction coefficients ≥ 0 (or a scalar).
    tol : stopping tolerance on the residual; rho : initial ADMM penalty (default from G's spectrum),
    adapted by residual balancing; max_iterations : of each of the two long ADMM runs (the first
    one has a tenth; the module docstring), whose iterations the solution's count sums with the
    fixed point's cone QPs.
    Returns an NCPSolution with each contact's mode.
    """
    g = checked_array(g, "g", ("3 nc",))
    if g.size % 3:
        raise shape_error("g", [("3 nc",)], g.shape)
    nc = g.size // 3
    G = checked_array(G, "G", (("len(g)", g.size), ("len(g)", g.size)))
    mu = _coefficients(mu, nc)
    if np.any(mu < 0):
        raise ValueError("mu must be ≥ 0")
    # Relative to G's own size, so that the checks do not depend on the units of the impulses.
    scale_G = float(np.abs(G).max(initial=0.0))
    if not np.allclose(G, G.T, rtol=0.0, atol=1e-12 * scale_G):
        raise ValueError("G must be symmetric (a Delassus matrix)")
    eigenvalues = np.linalg.eigvalsh(G) if nc else np.zeros(1)
    if eigenvalues.min() < -1e-10 * scale_G:
        raise ValueError("G must be positive semidefinite (a Delassus matrix)")
    tol = checked_positive(tol, "tol")
    limit = checked_iterations(max_iterations)
    if rho is None:
        # G's largest eigenvalue, as the simulation's (lcp/ncp.hpp's ncp_penalty, which estimates it).
        largest = float(eigenvalues.max())
        rho = largest if largest > 0.0 else 1.0
    else:
        rho = checked_positive(rho, "rho")
    # modes: ContactMode codes, native (lcp/ncp.hpp's contact_modes, shared with the simulation).
    impulses, velocities, modes, status, iteration, residual = _native.lcp.ncp_admm(G, g, mu, rho, tol, limit)
    for array in (impulses, velocities, modes):
        array.setflags(write=False)
    return NCPSolution(
        impulses, velocities, modes, returned_status(status, impulses, velocities), iteration, residual, mu
    )


class _ModeSystem(NamedTuple):
    rows: IntArray  # indices of λ in C (non-breaking contacts)
    jacobian: FloatArray  # ∂F/∂λ_C
    W: FloatArray  # ∂F/∂v (|C|·3, 3nc)
    dmu: FloatArray  # ∂F/∂μ (|C|·3, nc)


def _mode_system(solution: NCPSolution, G: ArrayLike) -> _ModeSystem:
    """The implicit equations F(λ_C) = 0 of the current modes, linearized."""
    G = float_array(G, "G")
    lam = solution.impulses.reshape(-1, 3)
    v = solution.velocities.reshape(-1, 3)
    nc = lam.shape[0]
    contacts = np.flatnonzero(solution.modes != ContactMode.BREAKING)
    rows = (3 * contacts[:, None] + np.arange(3)).ravel()
    W = np.zeros((rows.size, 3 * nc))
    D = np.zeros((rows.size, rows.size))
    dmu = np.zeros((rows.size, nc))
    for k, i in enumerate(contacts):
        r = slice(3 * k, 3 * k + 3)
        if solution.modes[i] == ContactMode.STICKING:
            W[r, 3 * i : 3 * i + 3] = np.eye(3)  # v_i = 0
            continue
        # Sliding: v_n = 0 and λ_t + μ λ_n u = 0 with u = v_t / ‖v_t‖.
        mu = solution.mu[i]
        norm = np.linalg.norm(v[i, :2])
        u = v[i, :2] / norm
        W[3 * k + 2, 3 * i + 2] = 1.0
        W[3 * k : 3 * k + 2, 3 * i : 3 * i + 2] = mu * lam[i, 2] * (np.eye(2) - np.outer(u, u)) / norm
        D[3 * k : 3 * k + 2, 3 * k : 3 * k + 2] = np.eye(2)
        D[3 * k : 3 * k + 2, 3 * k + 2] = mu * u
        dmu[3 * k : 3 * k + 2, i] = lam[i, 2] * u
    return _ModeSystem(rows, D + W @ G[:, rows], W, dmu)


def ncp_jvp(
    solution: NCPSolution, G: ArrayLike, dG: ArrayLike, dg: ArrayLike, dmu: ArrayLike | None = None
) -> FloatArray:
    """Directional derivative dλ (3nc,) of the impulses along (dG, dg, dmu), modes held fixed."""
    system = _mode_system(solution, G)
    dv = float_array(dG, "dG") @ solution.impulses + float_array(dg, "dg")
    rhs = system.W @ dv
    if dmu is not None:
        rhs = rhs + system.dmu @ np.broadcast_to(float_array(dmu, "dmu"), solution.mu.shape)
    d_lambda = np.zeros_like(solution.impulses)
    if system.rows.size:
        d_lambda[system.rows] = -np.linalg.solve(system.jacobian, rhs)
    return d_lambda


def ncp_vjp(solution: NCPSolution, G: ArrayLike, grad_impulses: ArrayLike) -> NCPCotangents:
    """NCPCotangents ∂ℓ/∂(G, g, mu) from ∂ℓ/∂λ (3nc,): the transpose of ncp_jvp."""
    system = _mode_system(solution, G)
    grad_impulses = float_array(grad_impulses, "grad_impulses")
    y = np.linalg.solve(system.jacobian.T, grad_impulses[system.rows]) if system.rows.size else np.zeros(0)
    grad_g = -system.W.T @ y
    return NCPCotangents(G=np.outer(grad_g, solution.impulses), g=grad_g, mu=-system.dmu.T @ y)
