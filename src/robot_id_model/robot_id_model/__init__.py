"""ROS-free rigid-body and friction model of serial arms for dynamic identification (pinocchio)."""

from robot_id_model.base_parameters import BaseParameters, base_parameters
from robot_id_model.parameters import nominal_parameters, parameter_names
from robot_id_model.physical import (
    LinkInertial,
    consistency_violations,
    physical_from_vector,
    standard_vector,
)
from robot_id_model.regressor import regressor, stack
from robot_id_model.robot_config import RobotConfig, load_robot_config
from robot_id_model.robot_model import ModelError, RobotModel, load_robot_model

__all__ = [
    "BaseParameters",
    "LinkInertial",
    "ModelError",
    "RobotConfig",
    "RobotModel",
    "base_parameters",
    "consistency_violations",
    "load_robot_config",
    "load_robot_model",
    "nominal_parameters",
    "parameter_names",
    "physical_from_vector",
    "regressor",
    "stack",
    "standard_vector",
]
