"""PyTorch autograd for simulation steps and rollouts (extra ``[torch]``).

``step(world, q, v, tau, params)`` and ``rollout(world, q0, v0, taus, params)`` run
:meth:`dcol.dynamics.World.step` / :meth:`~dcol.dynamics.World.rollout` on float64 CPU tensors and
return the next state / the trajectory as tensors. The backward pass is the simulation's reverse mode
(:meth:`Step.vjp` / :meth:`Rollout.vjp`, with the elastic-bounce correction: each step's native
Jacobian contracted with the cotangents).

Configurations are tensors of coordinates (nq,), floating joints' quaternions of any nonzero norm,
while the simulation's derivatives are in tangent spaces (nv,). With (T, T⁺) =
:func:`dcol.dynamics.tangent_maps`, the gradient g (nq,) of an output configuration enters the
reverse mode as Tᵀ g at that configuration, and the tangent cotangent c of an input configuration
leaves it as T⁺ᵀ c, which is zero along a quaternion itself (the simulation normalizes it).

θ = ``params`` (10 nbodies + 2,: inertial parameters, μ, e; see World.parameters) simulates
``world.with_parameters(params)`` and receives gradients; with ``params=None`` the world's own
parameters are used and are constants. Derivatives hold inside one contact mode (no contact
appearing, breaking or changing between sticking and sliding), where the step is smooth.
"""

from typing import Any

import numpy as np

try:
    import torch
except ImportError as err:  # the [torch] extra is optional: say how to get it, as the other extras do
    raise ImportError('dcol.dynamics.torch needs PyTorch, which is not installed: pip install "dcol[torch]"') from err
from torch.autograd.function import once_differentiable

from dcol.typing import ArrayLike, FloatArray
from dcol.validation import checked_tensor

from .algorithms import tangent_maps
from .simulation import World

__all__ = ["step", "rollout"]


def _checked_world(world: object) -> World:
    if not isinstance(world, World):
        raise TypeError(f"world must be a dcol.dynamics.World, got {type(world).__name__}")
    return world


def _world_and_arrays(
    world: World, params: torch.Tensor | None, tensors: list[tuple[torch.Tensor, str]]
) -> tuple[World, list[FloatArray]]:
    """(the world to simulate, the values of (tensor, name) pairs), the tensors checked for dtype and
    device; the world's step and rollout check their shapes and values under the same names."""
    arrays = [checked_tensor(tensor, name) for tensor, name in tensors]
    if params is not None:
        world = world.with_parameters(checked_tensor(params, "params"))
    return world, arrays


def _gradient(array: ArrayLike, wanted: bool) -> torch.Tensor | None:
    return torch.from_numpy(np.array(array, dtype=np.float64)) if wanted else None


class _Step(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any,
        q: torch.Tensor,
        v: torch.Tensor,
        tau: torch.Tensor | None,
        params: torch.Tensor | None,
        world: World,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        world, (q_values, v_values) = _world_and_arrays(world, params, [(q, "q"), (v, "v")])
        tau_values = None if tau is None else checked_tensor(tau, "tau")
        result = world.step(q_values, v_values, tau_values, derivatives=any(ctx.needs_input_grad))
        ctx.model, ctx.q, ctx.result = world.model, q_values, result
        # Copies, so that in-place edits of the outputs do not reach the arrays the backward pass uses.
        return torch.tensor(result.q), torch.tensor(result.v)

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, grad_q: torch.Tensor, grad_v: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        to_configuration, _ = tangent_maps(ctx.model, ctx.result.q)
        _, to_tangent = tangent_maps(ctx.model, ctx.q)
        cot = ctx.result.vjp(to_configuration.T @ grad_q.numpy(), grad_v.numpy())
        wants_q, wants_v, wants_tau, wants_params, _ = ctx.needs_input_grad
        return (
            _gradient(to_tangent.T @ cot.q, wants_q),
            _gradient(cot.v, wants_v),
            _gradient(cot.tau, wants_tau),
            _gradient(cot.params, wants_params),
            None,
        )


class _Rollout(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any, q0: torch.Tensor, v0: torch.Tensor, taus: torch.Tensor, params: torch.Tensor | None, world: World
    ) -> tuple[torch.Tensor, torch.Tensor]:
        world, arrays = _world_and_arrays(world, params, [(q0, "q0"), (v0, "v0"), (taus, "taus")])
        result = world.rollout(*arrays, derivatives=any(ctx.needs_input_grad))
        ctx.model, ctx.num_params, ctx.result = world.model, world.num_params, result
        return torch.tensor(result.q), torch.tensor(result.v)

    @staticmethod
    @once_differentiable
    def backward(ctx: Any, grad_qs: torch.Tensor, grad_vs: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        model, result = ctx.model, ctx.result
        grad_q_values = grad_qs.numpy()
        to_configuration, _ = tangent_maps(model, result.q[1:])
        # Row 0 is q0 itself, the identity in coordinates: its gradient bypasses the tangent space
        # (T⁺ᵀ Tᵀ would drop its component along the quaternion).
        grad_tangent = np.concatenate(
            [np.zeros((1, model.nv)), np.einsum("tcn,tc->tn", to_configuration, grad_q_values[1:])]
        )
        cot = result.vjp(grad_tangent, grad_vs.numpy())
        _, to_tangent = tangent_maps(model, result.q[0])
        wants_q0, wants_v0, wants_taus, wants_params, _ = ctx.needs_input_grad
        # Rollout.vjp sums θ's cotangents over the steps: a scalar 0 for a rollout of no steps.
        grad_params = np.broadcast_to(cot.params, (ctx.num_params,))
        return (
            _gradient(to_tangent.T @ cot.q + grad_q_values[0], wants_q0),
            _gradient(cot.v, wants_v0),
            _gradient(cot.tau, wants_taus),
            _gradient(grad_params, wants_params),
            None,
        )


def step(
    world: World,
    q: torch.Tensor,
    v: torch.Tensor,
    tau: torch.Tensor | None = None,
    params: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Differentiable :meth:`World.step`.

    Parameters
    ----------
    world : dcol.dynamics.World.
    q : (nq,) float64 tensor, the configuration; v : (nv,) float64 tensor, the velocity.
    tau : (nv,) float64 tensor of joint forces, or None (zero, no gradient).
    params : (10 nbodies + 2,) float64 tensor θ (World.parameters order), or None: the world's own.

    Returns
    -------
    q_next : (nq,) tensor; v_next : (nv,) tensor. Both carry gradients to q (in coordinates), v, tau
    and params.
    """
    return _Step.apply(q, v, tau, params, _checked_world(world))


def rollout(
    world: World, q0: torch.Tensor, v0: torch.Tensor, taus: torch.Tensor, params: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Differentiable :meth:`World.rollout`: T steps, one autograd node whose backward pass is one
    :meth:`Rollout.vjp`.

    Parameters
    ----------
    world : dcol.dynamics.World.
    q0 : (nq,) float64 tensor; v0 : (nv,) float64 tensor, the initial state.
    taus : (T, nv) float64 tensor, the joint forces of each step.
    params : (10 nbodies + 2,) float64 tensor θ (World.parameters order), or None: the world's own.

    Returns
    -------
    qs : (T + 1, nq) tensor; vs : (T + 1, nv) tensor, the trajectory including (q0, v0). Both carry
    gradients to q0 (in coordinates), v0, taus and params.
    """
    return _Rollout.apply(q0, v0, taus, params, _checked_world(world))
