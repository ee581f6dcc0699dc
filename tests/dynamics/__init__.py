"""Tests of dcol.dynamics."""
