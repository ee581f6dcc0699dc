"""PyTorch autograd for the planar engine's step and rollout (extra ``[torch]``).

``step(world, positions, velocities, forces, mass, restitution, friction)`` runs
:meth:`PlanarWorld.step` on float64 CPU tensors; its backward pass is :meth:`PlanarWorld.step_vjp`
(the KKT backward pass of the dynamics LCP, LCP-physics §B). ``mass``, ``restitution`` and
``friction`` (n,) tensors, when given, replace the bodies' own values and receive gradients.
Derivatives hold inside one contact mode, and post-stabilization's correction is not
differentiated (see step_vjp).
"""

from dataclasses import replace
from typing import Any

try:
    import torch
except ImportError as err:  # the [torch] extra is optional: say how to get it, as the other extras do
    raise ImportError(
        'dcol.dynamics.planar.torch needs PyTorch, which is not installed: pip install "dcol[torch]"'
    ) from err
from torch.autograd.function import once_differentiable

from dcol.validation import checked_tensor

from .bodies import Body
from .engine import PlanarWorld

__all__ = ["step", "rollout"]


def _world_with(world: PlanarWorld, parameters: dict[str, torch.Tensor | None]) -> PlanarWorld:
    """The world whose bodies take the given parameters (n,) (None: their own)."""
    values = {name: checked_tensor(tensor, name) for name, tensor in parameters.items() if tensor is not None}
    for name, array in values.items():
        if array.shape != (len(world.bodies),):
            raise ValueError(f"{name} must have shape (number of bodies,) = ({len(world.bodies)},), got {array.shape}")
    if not values:
        return world

    def value(name: str, index: int, own: float) -> float:
        return float(values[name][index]) if name in values else own

    bodies = tuple(
        Body(
            body.shape,
            mass=value("mass", index, body.mass),
            restitution=value("restitution", index, body.restitution),
            friction=value("friction", index, body.friction),
        )
        for index, body in enumerate(world.bodies)
    )
    return replace(world, bodies=bodies)


class _Step(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any,
        positions: torch.Tensor,
        velocities: torch.Tensor,
        forces: torch.Tensor | None,
        mass: torch.Tensor | None,
        restitution: torch.Tensor | None,
        friction: torch.Tensor | None,
        world: PlanarWorld,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        world = _world_with(world, dict(mass=mass, restitution=restitution, friction=friction))
        p, v = checked_tensor(positions, "positions"), checked_tensor(velocities, "velocities")
        result = world.step(p, v, None if forces is None else checked_tensor(forces, "forces"))
        ctx.world, ctx.p, ctx.v, ctx.result = world, p, v, result
        return torch.tensor(result.positions), torch.tensor(result.velocities)

    @staticmethod
    @once_differentiable
    def backward(
        ctx: Any, grad_positions: torch.Tensor, grad_velocities: torch.Tensor
    ) -> tuple[torch.Tensor | None, ...]:
        cot = ctx.world.step_vjp(ctx.result, ctx.p, ctx.v, grad_velocities.numpy(), grad_positions.numpy())
        wants = ctx.needs_input_grad
        values = (cot.positions, cot.velocities, cot.forces, cot.mass, cot.restitution, cot.friction)
        return (*(torch.tensor(value) if want else None for value, want in zip(values, wants)), None)


def step(
    world: PlanarWorld,
    positions: torch.Tensor,
    velocities: torch.Tensor,
    forces: torch.Tensor | None = None,
    mass: torch.Tensor | None = None,
    restitution: torch.Tensor | None = None,
    friction: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Differentiable :meth:`PlanarWorld.step`, of one scene or of a batch of B scenes of the same
    world (a leading axis on positions, velocities and forces; on mass, restitution and friction
    too for values per scene, else shared). The scenes of a batch are stepped one after the other.

    Parameters
    ----------
    world : dcol.dynamics.planar.PlanarWorld.
    positions, velocities : (n, 3) or (B, n, 3) float64 tensors, rows (angle, x, y) and (ω, v_x, v_y).
    forces : (n, 3) or (B, n, 3) float64 tensor of external (τ, f_x, f_y), or None (zero, no gradient).
    mass, restitution, friction : (n,) or (B, n) float64 tensors replacing the bodies' values, or None.

    Returns
    -------
    positions_next, velocities_next : shaped like positions, carrying gradients to every tensor
    argument.
    """
    if not isinstance(world, PlanarWorld):
        raise TypeError(f"world must be a dcol.dynamics.planar.PlanarWorld, got {type(world).__name__}")
    if positions.dim() != 3:
        return _Step.apply(positions, velocities, forces, mass, restitution, friction, world)

    def scene(tensor: torch.Tensor | None, index: int, single_dims: int) -> torch.Tensor | None:
        return tensor[index] if tensor is not None and tensor.dim() > single_dims else tensor

    results = [
        _Step.apply(
            positions[index],
            velocities[index],
            scene(forces, index, 2),
            scene(mass, index, 1),
            scene(restitution, index, 1),
            scene(friction, index, 1),
            world,
        )
        for index in range(positions.shape[0])
    ]
    return torch.stack([p for p, _ in results]), torch.stack([v for _, v in results])


def rollout(
    world: PlanarWorld,
    positions: torch.Tensor,
    velocities: torch.Tensor,
    forces: torch.Tensor,
    mass: torch.Tensor | None = None,
    restitution: torch.Tensor | None = None,
    friction: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """T differentiable steps, one autograd node each (per scene): forces (T, n, 3), or (T, B, n, 3)
    for a batch; other arguments as in :func:`step`. Returns the trajectories (T + 1, n, 3) (or
    (T + 1, B, n, 3)) of positions and velocities, the initial state first."""
    trajectory = [(positions, velocities)]
    for step_forces in forces:
        trajectory.append(step(world, *trajectory[-1], step_forces, mass, restitution, friction))
    return torch.stack([p for p, _ in trajectory]), torch.stack([v for _, v in trajectory])
