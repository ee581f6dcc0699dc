"""Tests of dcol.geom."""
