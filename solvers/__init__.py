"""Conic and complementarity solvers of dcol, with native hot paths."""

from .cone import ConeSolution, SolverSettings, Status, solve_cone_program
from .lcp import (
    LCPBounds,
    LCPCotangents,
    LCPSolution,
    LCPStatus,
    complementarity_aware,
    lcp_jacobian,
    lcp_jvp,
    lcp_vjp,
    solve_boxed_lcp,
    solve_lcp,
)
from .mlcp import MLCPCotangents, MLCPSolution, mlcp_vjp, solve_mlcp
from .ncp import (
    ContactMode,
    NCPCotangents,
    NCPSolution,
    ncp_jvp,
    ncp_vjp,
    project_onto_friction_cone,
    solve_contact_ncp,
)

__all__ = [
    "ConeSolution",
    "SolverSettings",
    "Status",
    "solve_cone_program",
    "LCPSolution",
    "LCPStatus",
    "LCPBounds",
    "LCPCotangents",
    "solve_lcp",
    "solve_boxed_lcp",
    "lcp_jvp",
    "lcp_vjp",
    "lcp_jacobian",
    "complementarity_aware",
    "MLCPSolution",
    "MLCPCotangents",
    "solve_mlcp",
    "mlcp_vjp",
    "ContactMode",
    "NCPSolution",
    "NCPCotangents",
    "solve_contact_ncp",
    "ncp_jvp",
    "ncp_vjp",
    "project_onto_friction_cone",
]
