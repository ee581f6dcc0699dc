"""Argument checks shared by the geometry and dynamics modules: each raises a clear error naming the argument."""

import numpy as np

from .rotations import rotation_matrix

__all__ = ["checked_array", "checked_tensor", "checked_positive", "checked_real", "checked_offset"]


def checked_array(value, name, shape):
    """Finite float64 copy of value with the given shape (None in shape: any length)."""
    try:
        array = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be an array of real numbers") from err
    if array.ndim != len(shape) or any(want is not None and got != want for got, want in zip(array.shape, shape)):
        expected = "(" + ", ".join("m" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
        raise ValueError(f"{name} must have shape {expected}, got {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    array.setflags(write=False)
    return array


def checked_tensor(tensor, name, shape):
    """checked_array of a torch tensor's values (detached), which must be float64 on the CPU: the
    argument check of the PyTorch wrappers."""
    import torch  # the [torch] extra is optional: only its wrappers call this

    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(tensor).__name__}")
    if tensor.dtype != torch.float64:
        raise TypeError(f"{name} must have dtype torch.float64, got {tensor.dtype}")
    if tensor.device.type != "cpu":
        raise ValueError(f"{name} must be on the CPU, got {tensor.device}")
    return checked_array(tensor.detach().numpy(), name, shape)


def checked_positive(value, name):
    try:
        number = float(value)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be a real number") from err
    if not np.isfinite(number) or number <= 0.0:
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return number


def checked_real(value, name):
    """float(value) for a real number (not a bool); TypeError naming the argument otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    return float(value)


def checked_offset(offset):
    """(3,), (3, 3) float64 pose of a shape in its body from ``offset=(r, q)`` (q a quaternion
    ``[w, x, y, z]`` or a rotation matrix), or the identity for None."""
    if offset is None:
        return np.zeros(3), np.eye(3)
    try:
        position, orientation = offset
    except (TypeError, ValueError) as err:
        raise TypeError("offset must be a pair (position, orientation)") from err
    return checked_array(position, "offset position", (3,)), rotation_matrix(orientation, "offset orientation")
