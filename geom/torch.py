"""PyTorch autograd for batched DCOL proximity (extra ``[torch]``).

``proximity(a, r_a, q_a, b, r_b, q_b)`` takes float64 tensors of N pose pairs, r (N, 3) and
quaternions q (N, 4) ``[w, x, y, z]`` of any nonzero norm, and returns the tensors ``alpha`` (N,) and
``x`` (N, 3) of dcol.geom.proximity_jacobian_batch. The forward pass computes the Jacobians in the
native core (raw quaternion components, through the normalization) together with the values; the
backward pass is their vector–Jacobian product. The derivatives are those of the barrier-smoothed
problem (dcol.geom.derivatives). Tensors on the CPU only; the shapes are dcol.geom shapes, fixed.
"""

from typing import Any

import numpy as np

try:
    import torch
except ImportError as err:  # the [torch] extra is optional: say how to get it, as the other extras do
    raise ImportError('dcol.geom.torch needs PyTorch, which is not installed: pip install "dcol[torch]"') from err

from dcol.solvers import SolverSettings
from dcol.validation import checked_tensor

from .derivatives import proximity_jacobian_batch
from .shapes import ShapeOrShapes

__all__ = ["proximity"]


class _Proximity(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any,
        r_a: torch.Tensor,
        q_a: torch.Tensor,
        r_b: torch.Tensor,
        q_b: torch.Tensor,
        a: ShapeOrShapes,
        b: ShapeOrShapes,
        settings: SolverSettings | None,
        threads: int | None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        # Shapes and values are checked by proximity_jacobian_batch, under the same names.
        result = proximity_jacobian_batch(
            a,
            checked_tensor(r_a, "r_a"),
            checked_tensor(q_a, "q_a"),
            b,
            checked_tensor(r_b, "r_b"),
            checked_tensor(q_b, "q_b"),
            parameterization="quaternion",
            settings=settings,
            threads=threads,
        )
        if np.any(result.status != 0):
            raise RuntimeError(f"dcol proximity did not converge for pose pairs {np.flatnonzero(result.status)[:10]}")
        ctx.save_for_backward(torch.from_numpy(result.jacobian))
        return torch.from_numpy(result.alpha), torch.from_numpy(result.x)

    @staticmethod
    def backward(ctx: Any, grad_alpha: torch.Tensor, grad_x: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        (jacobian,) = ctx.saved_tensors  # (N, 4, 14): rows x0, x1, x2, α; columns r_a, q_a, r_b, q_b
        grad_rows = torch.cat([grad_x, grad_alpha[:, None]], dim=1)
        grad = torch.einsum("nr,nrc->nc", grad_rows, jacobian)
        return grad[:, 0:3], grad[:, 3:7], grad[:, 7:10], grad[:, 10:14], None, None, None, None


def proximity(
    a: ShapeOrShapes,
    r_a: torch.Tensor,
    q_a: torch.Tensor,
    b: ShapeOrShapes,
    r_b: torch.Tensor,
    q_b: torch.Tensor,
    *,
    settings: SolverSettings | None = None,
    threads: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Differentiable DCOL proximity of shapes a and b at N pose pairs.

    Parameters
    ----------
    a, b : dcol.geom shapes.
    r_a, r_b : (N, 3) float64 tensors; q_a, q_b : (N, 4) float64 tensors ``[w, x, y, z]``.
    settings : dcol.solvers.SolverSettings (default dcol.geom.DERIVATIVE_SETTINGS; barrier = 0: exact, see
        dcol.geom.derivatives).
    threads : int, optional, native worker threads.

    Returns
    -------
    alpha : (N,) tensor; x : (N, 3) tensor. Both carry gradients to r_a, q_a, r_b, q_b.
    """
    return _Proximity.apply(r_a, q_a, r_b, q_b, a, b, settings, threads)
