"""Articulated rigid-body dynamics: URDF models and native rigid-body algorithms with analytic
derivatives (see :mod:`dcol.dynamics.model` for the conventions)."""

from .algorithms import (
    aba,
    aba_derivatives,
    aba_parameter_derivatives,
    bias_force_derivatives,
    bias_forces,
    crba,
    difference,
    frame_jacobian,
    frame_jacobian_derivative,
    frame_placement,
    gravity_forces,
    inertial_parameters,
    integrate,
    integrate_jacobians,
    minverse,
    minverse_derivative,
    neutral,
    random_configuration,
    rnea,
    rnea_derivatives,
    rnea_parameter_derivatives,
    tangent_maps,
)
from .model import BodyShape, Model, ModelBuilder
from .robots import (
    DATASET_ROBOTS,
    EXAMPLE_ROBOTS,
    dataset_robot_path,
    example_robot_data_dir,
    load_dataset_robot,
    load_example_robot,
)
from .simulation import BatchRollout, BatchStep, Rollout, Step, StepCotangents, StepJacobians, World
from .urdf import MeshGeometry, load_urdf

__all__ = [
    "Model", "ModelBuilder", "BodyShape", "MeshGeometry", "load_urdf",
    "DATASET_ROBOTS", "EXAMPLE_ROBOTS", "dataset_robot_path", "load_dataset_robot", "example_robot_data_dir",
    "load_example_robot",
    "neutral", "random_configuration", "integrate", "integrate_jacobians", "difference", "tangent_maps",
    "frame_placement", "frame_jacobian", "frame_jacobian_derivative",
    "rnea", "bias_forces", "gravity_forces", "crba", "aba", "minverse",
    "rnea_derivatives", "aba_derivatives", "bias_force_derivatives", "minverse_derivative",
    "inertial_parameters", "rnea_parameter_derivatives", "aba_parameter_derivatives",
    "World", "Step", "StepJacobians", "StepCotangents", "Rollout", "BatchStep", "BatchRollout",
]
