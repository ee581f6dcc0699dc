"""Orientation conventions: quaternions ``[w, x, y, z]`` (scalar first, any nonzero norm) and
rotation matrices. A body point ``p_b`` is at ``r + Q p_b`` in the world."""

from dcol import _native


def rotation_matrix(q, name="q"):
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
