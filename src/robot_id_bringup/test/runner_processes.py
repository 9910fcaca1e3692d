"""What the end-to-end tests of the runner share: its command line in sim mode, and a domain's environment and
processes."""

from __future__ import annotations

import os
import pathlib
import sys

RUNNER = [sys.executable, "-m", "robot_id_bringup", "identify", "--robot", "iiwa14", "--mode", "sim"]


def environment(domain_id: int) -> dict[str, str]:
    """This process's environment with discovery on localhost in the domain `domain_id`."""
    return dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", ROS_DOMAIN_ID=str(domain_id))


def processes_in_domain(domain_id: int) -> list[int]:
    """Pids of the processes started with ROS_DOMAIN_ID=domain_id (this test's own graph)."""
    marker = f"ROS_DOMAIN_ID={domain_id}".encode()
    pids = []
    for environ in pathlib.Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker in environ.read_bytes().split(b"\0") and int(environ.parent.name) != os.getpid():
                pids.append(int(environ.parent.name))
        except OSError:
            continue
    return pids
