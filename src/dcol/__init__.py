"""dcol: differentiable collision detection and contact physics with a native C++ core.

Subpackages: :mod:`dcol.geom` (shapes, DCOL proximity), :mod:`dcol.solvers` (cone program
interior-point solver), :mod:`dcol.dynamics` (articulated rigid bodies).
"""

from . import dynamics, geom, solvers

__version__ = "0.1.0"
__all__ = ["geom", "solvers", "dynamics", "__version__"]
