"""Tests of dcol.solvers."""
