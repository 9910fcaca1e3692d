"""Keep every node these tests start on this machine and in a domain of its own; a test with a wall-clock bound
runs alone; shared test fixtures."""

import fcntl
import os
import pathlib
import tempfile

import numpy as np
import pinocchio as pin
import pytest

from robot_id_model.robot_config import load_robot_config


def _domain_id() -> int:
    """1 to 100, from the pid; under pytest-xdist each worker of a run takes its own residue, so no two share one."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))
    return 1 + worker + workers * (os.getpid() % (100 // workers))


os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ["ROS_DOMAIN_ID"] = str(_domain_id())



@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item):
    """Under pytest-xdist, a test marked wall_clock (its bounds are wall-clock times) runs while no other test of the
    run does: it takes the run's lock exclusively, every other test shares it, set-up and teardown included."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is None:
        yield
        return
    with (pathlib.Path(tempfile.gettempdir()) / f"robot_id_excitation_tests_{run}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX if item.get_closest_marker("wall_clock") else fcntl.LOCK_SH)
        yield


@pytest.fixture(scope="session")
def iiwa14_config():
    return load_robot_config("iiwa14")


@pytest.fixture(scope="session")
def panda_config():
    return load_robot_config("panda")


@pytest.fixture(scope="session")
def iiwa14(iiwa14_config):
    return iiwa14_config.load_model(("FV", "FC"))


@pytest.fixture(scope="session")
def panda(panda_config):
    return panda_config.load_model(("FV", "FC"))


@pytest.fixture(scope="session")
def urdf_torque_nm():
    """τ (K, n) of a model as its URDF states it, sample by sample: pinocchio's RNEA plus the URDF's viscous
    (damping) and Coulomb (friction) terms."""

    def torque(robot, q_rad, dq_rad_s, ddq_rad_s2):
        model, data = robot.model, robot.model.createData()
        tau = np.array([pin.rnea(model, data, q, dq, ddq).copy()
                        for q, dq, ddq in zip(q_rad, dq_rad_s, ddq_rad_s2, strict=True)])
        return tau + model.damping * dq_rad_s + model.friction * np.sign(dq_rad_s)

    return torque
