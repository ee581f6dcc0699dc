"""Articulated rigid-body dynamics and differentiable time stepping (not yet implemented)."""
