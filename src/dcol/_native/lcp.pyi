"""
Native LCP solvers: Lemke pivoting and projected Gauss–Seidel.
"""
from __future__ import annotations
import numpy
import numpy.typing
import typing
__all__: list[str] = ['boxed_lemke', 'classify', 'lemke', 'mlcp_ipm', 'mlcp_kkt_adjoint', 'natural_residual', 'ncp_admm', 'pgs', 'polish', 'project_onto_friction_cone', 'solve_on_sets']
def boxed_lemke(A: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], b: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], lo: typing.Any, hi: typing.Any, friction_index: typing.Any, mu: typing.Any, tol: typing.SupportsFloat | typing.SupportsIndex) -> tuple:
    """
    (f, status code, pivots, residual) of the boxed LCP by Lemke's method on its Stewart–Trinkle form (solve_boxed_lemke).
    """
def classify(A: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], b: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], lo: typing.Any, hi: typing.Any, friction_index: typing.Any, mu: typing.Any, f: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], w: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], tol: typing.SupportsFloat | typing.SupportsIndex) -> tuple[numpy.typing.NDArray[numpy.int8], numpy.typing.NDArray[numpy.bool]]:
    """
    (sets (n,) int8: 0 clamping, 1 at the lower bound, 2 at the upper; tied (n,) bool: at a bound with w = 0).
    """
def lemke(A: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], b: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], max_pivots: typing.SupportsInt | typing.SupportsIndex) -> tuple:
    """
    (f, status code, pivots, residual) of the LCP w = A f + b by Lemke's method.
    """
def mlcp_ipm(M: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], q: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], A: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], G: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], F: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], h: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], tol: typing.SupportsFloat | typing.SupportsIndex, max_iterations: typing.SupportsInt | typing.SupportsIndex) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64], int, int, float]:
    """
    (x, y, z, s, status code, iterations, residual) of the mixed LCP by the interior-point method.
    """
def mlcp_kkt_adjoint(M: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], A: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], G: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], F: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], z: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], s: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], rhs: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
    """
    [d_x; z∘d_z; d_y] from rhs = [∂ℓ/∂x; ∂ℓ/∂z; ∂ℓ/∂y] at a mixed-LCP solution (the KKT backward pass).
    """
def natural_residual(A: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], b: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], lo: typing.Any, hi: typing.Any, friction_index: typing.Any, mu: typing.Any, f: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> float:
    """
    The natural residual of f relative to the problem's scale (lcp.hpp's natural_residual): the same for a problem and for the same problem in other units, zero exactly at a solution.
    """
def ncp_admm(G: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], g: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], mu: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], rho: typing.SupportsFloat | typing.SupportsIndex, tol: typing.SupportsFloat | typing.SupportsIndex, max_iterations: typing.SupportsInt | typing.SupportsIndex) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.int8], int, int, float]:
    """
    (impulses, velocities, modes, status code, iterations, residual) of the contact NCP by ADMM with mode polishing, then by the fixed point of Acary et al. with interior-point cone QPs.
    """
def pgs(A: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], b: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], lo: typing.Any, hi: typing.Any, friction_index: typing.Any, mu: typing.Any, f0: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], max_iterations: typing.SupportsInt | typing.SupportsIndex, tol: typing.SupportsFloat | typing.SupportsIndex, polished: bool) -> tuple:
    """
    (f, status code, sweeps, residual) of the (boxed) LCP by projected Gauss–Seidel from f0; with polished, exact solves on the iterate's sets along the way (solve_pgs_polished).
    """
def polish(A: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], b: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], lo: typing.Any, hi: typing.Any, friction_index: typing.Any, mu: typing.Any, f: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], tol: typing.SupportsFloat | typing.SupportsIndex) -> tuple[numpy.typing.NDArray[numpy.float64], bool]:
    """
    (f, polished): f solved exactly on the sets of the approximate solution f when that verifies with a natural residual within tol.
    """
def project_onto_friction_cone(impulses: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], mu: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
    """
    Euclidean projection of [t1, t2, n] rows onto ‖t‖ ≤ μ n.
    """
def solve_on_sets(A: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], b: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], lo: typing.Any, hi: typing.Any, friction_index: typing.Any, mu: typing.Any, sets: typing.Annotated[numpy.typing.ArrayLike, numpy.int8], tol: typing.SupportsFloat | typing.SupportsIndex) -> tuple[numpy.typing.NDArray[numpy.float64], numpy.typing.NDArray[numpy.float64], bool]:
    """
    (f, w, verified) of the least-squares-minimal solution on the sets (Nimble App. B); verified: it verifies on the sets with a natural residual within tol.
    """
