"""PyTorch autograd for DCOL proximity (extra ``[torch]``).

``proximity(a, r_a, q_a, b, r_b, q_b)`` takes float64 tensors of one pose pair, r (3,) and quaternions
q (4,) ``[w, x, y, z]`` of any nonzero norm, or of N pairs, (N, 3) and (N, 4), and returns a
:class:`ProximityTensors`: every output of dcol.geom.proximity (α, x, the contact points, the distance,
the normal) as tensors that carry gradients to the poses, with the solves' statuses and iteration
counts. The forward pass computes the Jacobians in the native core (raw quaternion components, through
the normalization) together with the values (dcol.geom.contact_jacobian_batch); the backward pass is
their vector–Jacobian product. The derivatives are those of the barrier-smoothed problem
(dcol.geom.derivatives). Tensors on the CPU only; the shapes are dcol.geom shapes, fixed.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np

try:
    import torch
except ImportError as err:  # the [torch] extra is optional: say how to get it, as the other extras do
    raise ImportError('dcol.geom.torch needs PyTorch, which is not installed: pip install "dcol[torch]"') from err

from dcol.printing import summary_repr
from dcol.solvers import SolverSettings, Status
from dcol.typing import Int8Array, Int32Array
from dcol.validation import checked_tensor

from .derivatives import contact_jacobian_batch
from .shapes import ShapeOrShapes

__all__ = ["proximity", "ProximityTensors"]

# The differentiable outputs, in the order of the rows of their stacked Jacobian, with their widths.
_OUTPUTS = (("alpha", 1), ("x", 3), ("p_a", 3), ("p_b", 3), ("distance", 1), ("normal", 3))


@dataclass(frozen=True)
class ProximityTensors:
    """Outputs of :func:`proximity` for one pose pair (N pairs: a leading N axis on every field).

    alpha : () tensor, DCOL's minimum scaling; x, p_a, p_b, normal : (3,) tensors (intersection point,
    contact points DCOL eq. 29, unit normal from a to b); distance : () tensor, ‖p_a − p_b‖ (DCOL eq. 30).
    All float64, with gradients to r_a, q_a, r_b, q_b. status : dcol.solvers.Status (N pairs: (N,) int8
    codes); iterations : int ((N,) int32).
    """

    alpha: torch.Tensor
    x: torch.Tensor
    p_a: torch.Tensor
    p_b: torch.Tensor
    distance: torch.Tensor
    normal: torch.Tensor
    status: Status | Int8Array
    iterations: int | Int32Array

    __repr__ = summary_repr


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
    ) -> tuple[torch.Tensor, ...]:
        # Shapes and values are checked by contact_jacobian_batch, under the same names.
        result = contact_jacobian_batch(
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
        # (N, 14, 14): rows as _OUTPUTS; columns r_a, q_a, r_b, q_b
        blocks = [getattr(result, "d_" + name) for name, _ in _OUTPUTS]
        jacobian = np.concatenate(
            [block.reshape(block.shape[0], width, -1) for block, (_, width) in zip(blocks, _OUTPUTS)], axis=1
        )
        ctx.save_for_backward(torch.from_numpy(jacobian))
        status, iterations = torch.from_numpy(result.status), torch.from_numpy(result.iterations)
        ctx.mark_non_differentiable(status, iterations)
        return (*(torch.from_numpy(getattr(result, name)) for name, _ in _OUTPUTS), status, iterations)

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        (jacobian,) = ctx.saved_tensors
        n = jacobian.shape[0]
        grad_rows = torch.cat([grad.reshape(n, -1) for grad in grads[: len(_OUTPUTS)]], dim=1)
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
) -> ProximityTensors:
    """Differentiable DCOL proximity of shapes a and b at one pose pair or N of them.

    Parameters
    ----------
    a, b : dcol.geom shapes (for N pairs: a shape each, or sequences of N shapes).
    r_a, r_b : (3,) or (N, 3) float64 tensors; q_a, q_b : (4,) or (N, 4) float64 tensors ``[w, x, y, z]``.
    settings : dcol.solvers.SolverSettings (default dcol.geom.DERIVATIVE_SETTINGS; barrier = 0: exact, see
        dcol.geom.derivatives).
    threads : int, optional, native worker threads.

    Returns
    -------
    ProximityTensors: α, x, p_a, p_b, distance, normal as tensors with gradients, status, iterations.
    RuntimeError when a solve did not converge.
    """
    single = isinstance(r_a, torch.Tensor) and r_a.dim() == 1
    poses = [pose.unsqueeze(0) if single and isinstance(pose, torch.Tensor) else pose for pose in (r_a, q_a, r_b, q_b)]
    *values, status, iterations = _Proximity.apply(*poses, a, b, settings, threads)
    outputs = {name: value for (name, _), value in zip(_OUTPUTS, values)}
    if single:
        first = {name: value[0] for name, value in outputs.items()}
        return ProximityTensors(**first, status=Status(int(status[0])), iterations=int(iterations[0]))
    return ProximityTensors(**outputs, status=status.numpy(), iterations=iterations.numpy())
