"""Array types of dcol's annotations, defined once for every package.

Arguments are annotated :data:`ArrayLike` (anything numpy converts: lists, tuples, arrays) and
converted to float64 by :mod:`dcol.validation`; results are float64, integer or boolean arrays.
"""

from typing import TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["ArrayLike", "FloatArray", "IntArray", "Int32Array", "Int8Array", "BoolArray", "Pose"]

FloatArray: TypeAlias = NDArray[np.float64]
"""float64 array: positions, rotations, impulses, Jacobians."""

IntArray: TypeAlias = NDArray[np.int64]
"""int64 array: indices (edges, faces, shapes, bodies, velocity coordinates)."""

Int32Array: TypeAlias = NDArray[np.int32]
"""int32 array: iteration and contact counts of the batch functions."""

Int8Array: TypeAlias = NDArray[np.int8]
"""int8 array: codes of an enumeration (solver statuses, contact rules and modes)."""

BoolArray: TypeAlias = NDArray[np.bool_]
"""bool array: masks (an LCP's index sets, bouncing contacts)."""

Pose: TypeAlias = tuple[ArrayLike, ArrayLike]
"""A fixed pose (position (3,), orientation): a quaternion ``[w, x, y, z]`` or a rotation matrix."""
