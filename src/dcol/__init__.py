"""dcol: differentiable collision detection and contact physics with a native C++ core.

Subpackages: :mod:`dcol.geom` (shapes, DCOL proximity), :mod:`dcol.solvers` (cone program
interior-point solver), :mod:`dcol.dynamics` (articulated rigid bodies).
"""

import enum

from . import dynamics, geom, solvers

# From Python 3.11 an IntEnum prints as its number (print(status) shows 0); dcol's enumerations print
# their qualified name, Status.SOLVED, as on 3.10, and still compare equal to their codes.
for _enumeration in (
    solvers.Status,
    solvers.LCPStatus,
    solvers.ContactMode,
    geom.ContactRule,
    dynamics.ScalingContactStatus,
):
    _enumeration.__str__ = enum.Enum.__str__  # type: ignore[method-assign]
del _enumeration

__version__ = "0.1.0"
__all__ = ["geom", "solvers", "dynamics", "__version__"]
