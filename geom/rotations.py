"""Orientation conventions: quaternions ``[w, x, y, z]`` (scalar first, any nonzero norm) and
rotation matrices. A body point ``p_b`` is at ``r + Q p_b`` in the world."""

import numpy as np

from dcol import _native
from dcol.typing import ArrayLike, FloatArray
from dcol.validation import checked_array

__all__ = ["rotation_matrix", "checked_pose"]


def rotation_matrix(q: ArrayLike, name: str = "q") -> FloatArray:
    """Validated rotation matrix from a quaternion or a rotation matrix (the native core's rule).

    Parameters
    ----------
    q : (4,) quaternion ``[w, x, y, z]`` of any nonzero norm, finite; or (3, 3) rotation matrix
        (orthonormal and det +1 within 1e-6).
    name : str, the argument's name for error messages.

    Returns
    -------
    (3, 3) float64 rotation matrix (of q / ‖q‖ for a quaternion).
    """
    return _native.rotation_matrix(q, name)


def checked_pose(pose: tuple[ArrayLike, ArrayLike] | None, name: str) -> tuple[FloatArray, FloatArray]:
    """Read-only (3,) position and (3, 3) rotation matrix of a fixed pose ``(r, q)`` — a shape's offset
    in its body, a joint's placement in its parent — q a quaternion ``[w, x, y, z]`` or a rotation
    matrix; the identity for None. Errors name the pose: TypeError "<name> must be a pair
    (position, orientation)", ValueError about "<name> position" or "<name> orientation"."""
    if pose is None:
        position, rotation = np.zeros(3), np.eye(3)
    else:
        try:
            r, q = pose
        except (TypeError, ValueError) as err:
            raise TypeError(f"{name} must be a pair (position, orientation)") from err
        position, rotation = checked_array(r, f"{name} position", (3,)), rotation_matrix(q, f"{name} orientation")
    position.setflags(write=False)
    rotation.setflags(write=False)
    return position, rotation
