"""Keep every node these tests start on this machine and in a domain of its own; shared test fixtures."""

import os
from dataclasses import dataclass

import pytest

from robot_id_model.robot_config import RobotConfig, load_robot_config, robot_names
from robot_id_model.robot_model import RobotModel, load_robot_model
from robot_id_sim.true_dynamics import TRUTH_FRICTION, TrueDynamics, perturbed_dynamics

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ["ROS_DOMAIN_ID"] = str(1 + os.getpid() % 100)

ROBOTS = robot_names()
"""Every shipped robot."""


@dataclass(frozen=True)
class Arm:
    """A shipped robot: its config, the identification model with the truth's friction terms (FV, FC, FO, IA)
    and the default perturbed truth (seed 0)."""

    config: RobotConfig
    robot: RobotModel
    truth: TrueDynamics

    @property
    def urdf_text(self) -> str:
        return self.config.urdf_path.read_text()


_ARMS: dict[str, Arm] = {}


def shipped_arm(name: str) -> Arm:
    """The Arm of a shipped robot, built once per test session."""
    if name not in _ARMS:
        config = load_robot_config(name)
        robot = load_robot_model(config.urdf_path, config.joint_names, config.gravity_m_s2, TRUTH_FRICTION)
        _ARMS[name] = Arm(config, robot, perturbed_dynamics(robot, config.limits.torque_nm))
    return _ARMS[name]


@pytest.fixture(scope="session")
def arm():
    """Factory: arm('iiwa14') is that robot's config, identification model and perturbed truth (cached)."""
    return shipped_arm


@pytest.fixture(scope="session", params=ROBOTS)
def each_arm(request):
    """Every shipped robot in turn."""
    return shipped_arm(request.param)


@pytest.fixture(scope="session")
def iiwa14_config():
    return shipped_arm("iiwa14").config


@pytest.fixture(scope="session")
def panda_config():
    return shipped_arm("panda").config
