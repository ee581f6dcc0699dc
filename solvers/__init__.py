"""Conic and complementarity solvers of dcol, with native hot paths."""

from .cone import ConeSolution, SolverSettings, Status, solve_cone_program

__all__ = ["ConeSolution", "SolverSettings", "Status", "solve_cone_program"]
