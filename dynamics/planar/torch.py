"""PyTorch autograd for the planar engine's step and rollout (extra ``[torch]``).

``step(world, positions, velocities, forces, mass, restitution, friction, inertia)`` runs
:meth:`PlanarWorld.step` on float64 CPU tensors, of one scene or of a batch of scenes (one autograd
node for the batch); its backward pass is :meth:`PlanarWorld.step_batch_vjp` (step_vjp per scene
where the scenes' parameters differ): the KKT backward pass of the dynamics LCP, LCP-physics §B.
``mass``, ``restitution``, ``friction`` and ``inertia`` tensors, when given, replace the bodies' own
values and receive gradients.
Derivatives hold inside one contact mode, and post-stabilization's correction is not
differentiated (see step_vjp).
"""

from dataclasses import replace
from typing import Any

import numpy as np

try:
    import torch
except ImportError as err:  # the [torch] extra is optional: say how to get it, as the other extras do
    raise ImportError(
        'dcol.dynamics.planar.torch needs PyTorch, which is not installed: pip install "dcol[torch]"'
    ) from err
from torch.autograd.function import once_differentiable

from dcol.validation import checked_tensor

from .engine import PlanarWorld

__all__ = ["step", "rollout"]


# The parameters a step takes as tensors, and the Body fields they set.
BODY_FIELDS = {"mass": "mass", "restitution": "restitution", "friction": "friction", "inertia": "moment_of_inertia"}


def _scene_worlds(world: PlanarWorld, scenes: int, parameters: dict[str, torch.Tensor | None]) -> list[PlanarWorld]:
    """The world of each of the scenes, its bodies taking the given parameters, (n,) shared by the
    scenes or (scenes, n) one row each (None: the bodies' own)."""
    values = {name: checked_tensor(tensor, name) for name, tensor in parameters.items() if tensor is not None}
    bodies = len(world.bodies)
    for name, array in values.items():
        if array.shape not in ((bodies,), (scenes, bodies)):
            raise ValueError(
                f"{name} must have shape (number of bodies,) = ({bodies},) or (B, number of bodies) = "
                f"({scenes}, {bodies}), got {array.shape}"
            )
    if not values:
        return [world] * scenes

    def scene_world(scene: int) -> PlanarWorld:
        def body_values(index: int) -> dict[str, Any]:
            return {
                BODY_FIELDS[name]: float(array[index] if array.ndim == 1 else array[scene, index])
                for name, array in values.items()
            }

        return replace(world, bodies=tuple(replace(body, **body_values(i)) for i, body in enumerate(world.bodies)))

    shared = all(array.ndim == 1 for array in values.values())
    return [scene_world(0)] * scenes if shared else [scene_world(scene) for scene in range(scenes)]


class _Step(torch.autograd.Function):
    """One step of B scenes, (B, n, 3) states: one autograd node for the batch."""

    @staticmethod
    def forward(
        ctx: Any,
        positions: torch.Tensor,
        velocities: torch.Tensor,
        forces: torch.Tensor | None,
        mass: torch.Tensor | None,
        restitution: torch.Tensor | None,
        friction: torch.Tensor | None,
        inertia: torch.Tensor | None,
        world: PlanarWorld,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        p, v = checked_tensor(positions, "positions"), checked_tensor(velocities, "velocities")
        f = None if forces is None else checked_tensor(forces, "forces")
        for name, array in (("velocities", v), ("forces", f)):
            if array is not None and array.shape != p.shape:
                raise ValueError(f"{name} must have the shape of positions {p.shape}, got {array.shape}")
        parameters = dict(mass=mass, restitution=restitution, friction=friction, inertia=inertia)
        worlds = _scene_worlds(world, p.shape[0], parameters)
        # One world for all: the native batch, forward and backward.
        batch = worlds[0].step_batch(p, v, f) if all(scene is worlds[0] for scene in worlds) else None
        if batch is not None:
            steps = list(batch.steps)
        else:
            steps = [scene.step(p[b], v[b], None if f is None else f[b]) for b, scene in enumerate(worlds)]
        ctx.worlds, ctx.p, ctx.v, ctx.steps, ctx.batch = worlds, p, v, steps, batch
        ctx.shared = {name: tensor is not None and tensor.dim() == 1 for name, tensor in parameters.items()}
        return (
            torch.tensor(np.stack([step.positions for step in steps])),
            torch.tensor(np.stack([step.velocities for step in steps])),
        )

    @staticmethod
    @once_differentiable
    def backward(
        ctx: Any, grad_positions: torch.Tensor, grad_velocities: torch.Tensor
    ) -> tuple[torch.Tensor | None, ...]:
        names = ("positions", "velocities", "forces", *BODY_FIELDS)
        grad_v, grad_p = grad_velocities.numpy(), grad_positions.numpy()
        if ctx.batch is not None:
            batch_cotangents = ctx.worlds[0].step_batch_vjp(ctx.batch, ctx.p, ctx.v, grad_v, grad_p)
            values = {name: getattr(batch_cotangents, name) for name in names}
        else:
            cotangents = [
                scene.step_vjp(step, ctx.p[b], ctx.v[b], grad_v[b], grad_p[b])
                for b, (scene, step) in enumerate(zip(ctx.worlds, ctx.steps))
            ]
            values = {name: np.stack([getattr(cot, name) for cot in cotangents]) for name in names}
        # A parameter shared by the scenes gathers the cotangents of all of them.
        for name, shared in ctx.shared.items():
            if shared:
                values[name] = values[name].sum(axis=0)
        wants = ctx.needs_input_grad
        return (*(torch.tensor(values[name]) if want else None for name, want in zip(names, wants)), None)


def step(
    world: PlanarWorld,
    positions: torch.Tensor,
    velocities: torch.Tensor,
    forces: torch.Tensor | None = None,
    mass: torch.Tensor | None = None,
    restitution: torch.Tensor | None = None,
    friction: torch.Tensor | None = None,
    inertia: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Differentiable :meth:`PlanarWorld.step`, of one scene or of a batch of B scenes of the same
    world (a leading axis on positions, velocities and forces; on mass, restitution and friction
    too for values per scene, else shared), one autograd node for the batch.

    Parameters
    ----------
    world : dcol.dynamics.planar.PlanarWorld.
    positions, velocities : (n, 3) or (B, n, 3) float64 tensors, rows (angle, x, y) and (ω, v_x, v_y).
    forces : (n, 3) or (B, n, 3) float64 tensor of external (τ, f_x, f_y), or None (zero, no gradient).
    mass, restitution, friction, inertia : (n,) float64 tensors shared by the scenes, or (B, n) one
        row per scene, replacing the bodies' values (inertia sets Body.moment_of_inertia; without
        it, a body's 𝓘 follows its mass unless the Body gives its own); or None.

    Returns
    -------
    positions_next, velocities_next : shaped like positions, carrying gradients to every tensor
    argument.
    """
    if not isinstance(world, PlanarWorld):
        raise TypeError(f"world must be a dcol.dynamics.planar.PlanarWorld, got {type(world).__name__}")
    if positions.dim() == 3:
        return _Step.apply(positions, velocities, forces, mass, restitution, friction, inertia, world)
    single = [None if tensor is None else tensor.unsqueeze(0) for tensor in (positions, velocities, forces)]
    next_positions, next_velocities = _Step.apply(*single, mass, restitution, friction, inertia, world)
    return next_positions[0], next_velocities[0]


def rollout(
    world: PlanarWorld,
    positions: torch.Tensor,
    velocities: torch.Tensor,
    forces: torch.Tensor,
    mass: torch.Tensor | None = None,
    restitution: torch.Tensor | None = None,
    friction: torch.Tensor | None = None,
    inertia: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """T differentiable steps, one autograd node each (per batch): forces (T, n, 3), or (T, B, n, 3)
    for a batch; other arguments as in :func:`step`. Returns the trajectories (T + 1, n, 3) (or
    (T + 1, B, n, 3)) of positions and velocities, the initial state first."""
    trajectory = [(positions, velocities)]
    for step_forces in forces:
        trajectory.append(step(world, *trajectory[-1], step_forces, mass, restitution, friction, inertia))
    return torch.stack([p for p, _ in trajectory]), torch.stack([v for _, v in trajectory])
