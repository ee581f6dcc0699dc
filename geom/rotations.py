"""Orientation conventions: quaternions ``[w, x, y, z]`` (scalar first, any nonzero norm), rotation
matrices and scipy's ``Rotation`` objects (read as their quaternions). A body point ``p_b`` is at
``r + Q p_b`` in the world.

Scalar-last quaternions ``[x, y, z, w]`` (scipy's ``as_quat()``, ROS messages, Eigen's ``coeffs()``)
are not told apart from scalar-first ones by their values: convert them with
:func:`quaternion_from_xyzw`, or pass the ``Rotation`` itself."""

import numpy as np

from dcol import _native
from dcol.typing import ArrayLike, FloatArray
from dcol.validation import checked_array, checked_vectors

__all__ = ["rotation_matrix", "orientation_array", "quaternion_from_xyzw", "checked_pose"]


def rotation_matrix(q: ArrayLike, name: str = "q") -> FloatArray:
    """Validated rotation matrix from a quaternion or a rotation matrix (the native core's rule).

    Parameters
    ----------
    q : (4,) quaternion ``[w, x, y, z]`` of any nonzero norm, finite; (3, 3) rotation matrix
        (orthonormal and det +1 within 1e-6); or a scipy.spatial.transform.Rotation of one rotation.
    name : str, the argument's name for error messages.

    Returns
    -------
    (3, 3) float64 rotation matrix (of q / ‖q‖ for a quaternion).
    """
    return _native.rotation_matrix(q, name)


def orientation_array(q: object, name: str) -> FloatArray:
    """An orientation argument as a float64 array, shape and values unchecked: a scipy Rotation as its
    quaternions ``[w, x, y, z]`` ((4,), or (N, 4) for N rotations), anything else as numbers (the
    native core's conversion, which every function taking an orientation applies)."""
    return _native.orientation_array(q, name)


def quaternion_from_xyzw(q_xyzw: ArrayLike) -> FloatArray:
    """Scalar-first quaternions ``[w, x, y, z]``, dcol's, from scalar-last ones ``[x, y, z, w]``.

    Parameters
    ----------
    q_xyzw : (4,) or (N, 4) finite quaternions ``[x, y, z, w]``, any norm (dcol normalizes them where
        they are used).

    Returns
    -------
    (4,) or (N, 4) float64 ``[w, x, y, z]``, the same numbers reordered.
    """
    rows, batched = checked_vectors(q_xyzw, "q_xyzw", 4)
    wxyz = np.roll(rows, 1, axis=1)
    return wxyz if batched else wxyz[0]


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
