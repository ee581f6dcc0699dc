"""Orientation conventions: quaternions ``[w, x, y, z]`` (scalar first, any nonzero norm) and
rotation matrices. A body point ``p_b`` is at ``r + Q p_b`` in the world."""

import numpy as np

_ORTHONORMAL_TOL = 1e-6


def quaternion_to_matrix(q):
    """Rotation matrix of ``q / ‖q‖``; q : (4,) float64, finite and nonzero. Returns (3, 3)."""
    w, x, y, z = q / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def rotation_matrix(q, name="q"):
    """Validated rotation matrix from a quaternion or a rotation matrix.

    Parameters
    ----------
    q : (4,) quaternion ``[w, x, y, z]`` of any nonzero norm, or (3, 3) rotation matrix
        (orthonormal and det +1 within 1e-6).
    name : str, the argument's name for error messages.

    Returns
    -------
    (3, 3) float64 rotation matrix.
    """
    try:
        q = np.asarray(q, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be a quaternion or a rotation matrix of real numbers") from err
    if not np.all(np.isfinite(q)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    if q.shape == (4,):
        if not np.any(q):
            raise ValueError(f"{name} must be a nonzero quaternion [w, x, y, z]")
        return quaternion_to_matrix(q)
    if q.shape == (3, 3):
        if np.max(np.abs(q.T @ q - np.eye(3))) > _ORTHONORMAL_TOL or np.linalg.det(q) <= 0:
            raise ValueError(f"{name} must be a rotation matrix (orthonormal with determinant +1)")
        return q.copy()
    raise ValueError(f"{name} must be a quaternion of shape (4,) or a rotation matrix of shape (3, 3), got {q.shape}")
