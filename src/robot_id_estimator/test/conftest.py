"""Keep every node these tests start on this machine and in a domain of its own."""

import os


def _domain_id() -> int:
    """1 to 100, from the pid; under pytest-xdist each worker of a run takes its own residue, so no two share one."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))
    return 1 + worker + workers * (os.getpid() % (100 // workers))


os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ["ROS_DOMAIN_ID"] = str(_domain_id())
