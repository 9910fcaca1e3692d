"""What the end-to-end tests of the runner share: its command line in sim mode, and a domain's environment and
processes."""

from __future__ import annotations

import os
import pathlib
import sys

RUNNER = [sys.executable, "-m", "robot_id_bringup", "identify", "--robot", "iiwa14", "--mode", "sim"]


GRAPH_VARIABLE = "ROBOT_ID_TEST_GRAPH"
"""Set only in the processes a test starts (with `environment`): ROS_DOMAIN_ID alone also marks the pytest-xdist
workers, which inherit their controller's domain."""


def _graph(domain_id: int) -> str:
    """This test process's graph in `domain_id`, as GRAPH_VARIABLE holds it."""
    return f"{os.getpid()}:{domain_id}"


def environment(domain_id: int) -> dict[str, str]:
    """This process's environment with discovery on localhost in the domain `domain_id`, marked as this test's."""
    return dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", ROS_DOMAIN_ID=str(domain_id),
                **{GRAPH_VARIABLE: _graph(domain_id)})


def processes_in_domain(domain_id: int) -> list[int]:
    """Pids of the processes started with `environment(domain_id)` (this test's own graph), wherever they were
    reparented."""
    marker = f"{GRAPH_VARIABLE}={_graph(domain_id)}".encode()
    pids = []
    for environ in pathlib.Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker in environ.read_bytes().split(b"\0") and int(environ.parent.name) != os.getpid():
                pids.append(int(environ.parent.name))
        except OSError:
            continue
    return pids
