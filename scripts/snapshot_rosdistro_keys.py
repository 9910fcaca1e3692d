"""Write the rosdep keys that src/*/package.xml may use, from a git clone of ros/rosdistro, to
test/data/rosdistro_keys.txt (read by test_package_dependencies.py and test_deployment_files.py).

    python scripts/snapshot_rosdistro_keys.py path/to/rosdistro    # a clone of https://github.com/ros/rosdistro

Kept: every key of rosdep/base.yaml and rosdep/python.yaml that resolves on Ubuntu 24.04 (noble, the platform of
Jazzy and Kilted), and the package names of jazzy/ and kilted/distribution.yaml that our package.xml files name
(robot_id_* are ours). Only names are kept; rosdistro's licence goes beside the list (rosdistro_keys.LICENSE).
"""

import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "test" / "data" / "rosdistro_keys.txt"
ROSDEP_FILES = ("rosdep/base.yaml", "rosdep/python.yaml")
DISTROS = ("jazzy", "kilted")
UBUNTU_RELEASE = "noble"
INSTALLERS = {"apt", "pip", "source"}


def resolves_on_ubuntu(definition: object) -> bool:
    """Whether rosdep finds something to install (or nothing needed) for the key on Ubuntu noble."""
    ubuntu = definition.get("ubuntu") if isinstance(definition, dict) else None
    if ubuntu is None:
        return False
    if not isinstance(ubuntu, dict) or set(ubuntu) & INSTALLERS:
        return True  # one rule for every Ubuntu release
    release = ubuntu.get(UBUNTU_RELEASE, ubuntu.get("*"))
    return release is not None


def declared_keys() -> set[str]:
    keys = set()
    for path in ROOT.glob("src/*/package.xml"):
        keys |= {e.text.strip() for e in ET.parse(path).getroot() if e.tag.endswith("depend") and e.text}
    return {key for key in keys if not key.startswith("robot_id_")}


def released_packages(distribution: dict) -> set[str]:
    packages = set()
    for name, repository in distribution["repositories"].items():
        if "release" in repository:
            packages |= set(repository["release"].get("packages", [name]))
    return packages


def main(clone: str) -> int:
    def show(path: str) -> str:
        return subprocess.run(["git", "-C", clone, "show", f"HEAD:{path}"], check=True, capture_output=True,
                              text=True).stdout

    try:
        commit, date = subprocess.run(["git", "-C", clone, "log", "-1", "--format=%H %cs"], check=True,
                                      capture_output=True, text=True).stdout.split()
        rosdep = {}
        for path in ROSDEP_FILES:
            rosdep |= yaml.safe_load(show(path))
        distributions = {distro: yaml.safe_load(show(f"{distro}/distribution.yaml")) for distro in DISTROS}
    except (OSError, subprocess.CalledProcessError, ValueError) as error:
        print(f"snapshot_rosdistro_keys: {clone} is not a readable git clone of ros/rosdistro ({error})",
              file=sys.stderr)
        return 2
    named = declared_keys()
    lines = [
        f"# rosdep keys of ros/rosdistro (https://github.com/ros/rosdistro), commit {commit} ({date}),",
        "# written by scripts/snapshot_rosdistro_keys.py. Licence: BSD-3-Clause, Copyright (c) Open Source Robotics",
        "# Foundation, Inc. (rosdistro's LICENSE, in rosdistro_keys.LICENSE beside this file).",
        f"# [rosdep]: the keys of {' and '.join(ROSDEP_FILES)} that resolve on Ubuntu {UBUNTU_RELEASE};",
        "# [jazzy], [kilted]: the packages of <distro>/distribution.yaml that src/*/package.xml name.",
        "[rosdep]",
        *sorted(key for key, definition in rosdep.items() if resolves_on_ubuntu(definition)),
    ]
    for distro, distribution in distributions.items():
        lines += [f"[{distro}]", *sorted(named & released_packages(distribution))]
    SNAPSHOT.write_text("\n".join(lines) + "\n")
    print(f"{SNAPSHOT.relative_to(ROOT)}: {len(lines)} lines from rosdistro {commit[:12]} ({date})")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python scripts/snapshot_rosdistro_keys.py <git clone of ros/rosdistro>", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
