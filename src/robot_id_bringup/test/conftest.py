"""Keep every node these tests start on this machine and in a domain of its own worker (pytest-xdist); a test with a
wall-clock bound runs alone."""

import fcntl
import os
import pathlib
import tempfile
import zlib

import pytest

WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
WORKER = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))
DOMAINS_PER_WORKER = 100 // WORKERS
"""Worker k of n takes the ROS domains 1 + k + n·m (m < DOMAINS_PER_WORKER): no two workers share one, and every
RTPS port stays below 33 000 (robot_id_bringup.runner.DOMAINS)."""


def worker_domain(slot: int) -> int:
    """This worker's ROS domain number `slot` (modulo its share), varied by the pid against a graph some earlier run
    left behind; slot 0 is the worker's default (ROS_DOMAIN_ID)."""
    return 1 + WORKER + WORKERS * ((slot + os.getpid()) % DOMAINS_PER_WORKER)


os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ["ROS_DOMAIN_ID"] = str(worker_domain(0))


@pytest.fixture
def domain_id(request) -> int:
    """A domain of this worker for the test's own graphs, never the worker's default one."""
    return worker_domain(1 + zlib.crc32(request.node.nodeid.encode()) % (DOMAINS_PER_WORKER - 1))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item):
    """Under pytest-xdist, a test marked wall_clock (its bounds are wall-clock times) runs while no other test of the
    run does: it takes the run's lock exclusively, every other test shares it, set-up and teardown included."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is None:
        yield
        return
    with (pathlib.Path(tempfile.gettempdir()) / f"robot_id_bringup_tests_{run}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX if item.get_closest_marker("wall_clock") else fcntl.LOCK_SH)
        yield
