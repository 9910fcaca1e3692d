"""Keep every node these tests start on this machine and in a domain of its own; shared test fixtures."""

import os

import pytest

from robot_id_model.robot_config import config_directory, load_robot_config


def _domain_id() -> int:
    """1 to 100, from the pid; under pytest-xdist each worker of a run takes its own residue, so no two share one."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))
    return 1 + worker + workers * (os.getpid() % (100 // workers))


os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ["ROS_DOMAIN_ID"] = str(_domain_id())

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
