"""Keep every node these tests start on this machine and in a domain of its own; shared test fixtures."""

import os

import pytest

from robot_id_model.robot_config import config_directory, load_robot_config

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ["ROS_DOMAIN_ID"] = str(1 + os.getpid() % 100)

CONFIG_DIR = config_directory()


@pytest.fixture(scope="session")
def iiwa14_config():
    return load_robot_config(CONFIG_DIR / "iiwa14.yaml")


@pytest.fixture(scope="session")
def panda_config():
    return load_robot_config(CONFIG_DIR / "panda.yaml")


@pytest.fixture(scope="session")
def iiwa14(iiwa14_config):
    return iiwa14_config.load_model(("FV", "FC"))


@pytest.fixture(scope="session")
def panda(panda_config):
    return panda_config.load_model(("FV", "FC"))
