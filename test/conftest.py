"""The workspace-wide tests (house rules, dependencies, set-up, deployment, docs, results and mistakes tables,
every command line): any node they start stays on this machine and in a domain of its own; the rosdistro
snapshot's keys."""

import os
import pathlib

import pytest

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ["ROS_DOMAIN_ID"] = str(1 + os.getpid() % 100)

ROSDISTRO_KEYS = pathlib.Path(__file__).parent / "data" / "rosdistro_keys.txt"


@pytest.fixture(scope="session")
def rosdistro_keys() -> dict[str, set[str]]:
    """{"rosdep" | "jazzy" | "kilted": names} of data/rosdistro_keys.txt (scripts/snapshot_rosdistro_keys.py)."""
    sections: dict[str, set[str]] = {}
    for line in ROSDISTRO_KEYS.read_text().splitlines():
        if line.startswith("["):
            names = sections.setdefault(line.strip("[]"), set())
        elif line and not line.startswith("#"):
            names.add(line)
    return sections
