"""Every package.xml in src/ declares what the package's Python code imports, and nothing it does not use, with keys
rosdep knows.

Runtime code (<pkg>/<pkg>/**/*.py, launch/*.py) needs an exec_depend (or depend); tests (test/*.py) need an
exec_depend, depend or test_depend. A module stands for the rosdep key ROSDEP_KEYS gives it, or for the ROS
package of its own name (one in the ament index or in src/). Every key is one of rosdistro's (the snapshot
data/rosdistro_keys.txt) or one of our packages.
"""

import ast
import pathlib
import sys
import xml.etree.ElementTree as ET
from functools import cache

import pytest
from ament_index_python.packages import get_packages_with_prefixes

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"

ROSDEP_KEYS = {  # Python module -> rosdep key (ros/rosdistro rosdep/python.yaml; pinocchio, coal are ROS packages)
    "cvxpy": "python3-cvxpy-pip",
    "hypothesis": "python3-hypothesis",
    "jinja2": "python3-jinja2",
    "launch": "launch",  # ROS packages the PyPI wheels lack: only the launch files import them
    "launch_ros": "launch_ros",
    "matplotlib": "python3-matplotlib",
    "mcap": "mcap-ros2-support",  # no key of its own: mcap-ros2-support's pip package requires it
    "mcap_ros2": "mcap-ros2-support",
    "mujoco": "python3-mujoco-pip",
    "numpy": "python3-numpy",
    "pinocchio": "pinocchio",
    "coal": "coal",
    "pytest": "python3-pytest",
    "rosbags": "python3-rosbags-pip",
    "scipy": "python3-scipy",
    "tqdm": "python3-tqdm",
    "websockets": "python3-websockets",
    "yaml": "python3-yaml",
}
NOT_IMPORTED = {  # declared although no code imports them
    "robot_id_description": "URDFs and robot configs, found by robot name through the ament index",
    "robot_id_recorder": "robot_id_bringup's graph (graph.py) starts its node as a process",
    "python3-pytest": "runs the tests",
    "python3-pytest-timeout": "the per-test timeout of the package's pytest configuration",
    "python3-pytest-xdist": "the test processes (-n) of the package's pytest configuration",
}


def python_packages() -> list[pathlib.Path]:
    return sorted(p.parent for p in SRC.glob("*/package.xml")
                  if ET.parse(p).getroot().findtext("export/build_type") == "ament_python")


def declared(package: pathlib.Path) -> dict[str, set[str]]:
    root = ET.parse(package / "package.xml").getroot()
    keys = {tag: {e.text.strip() for e in root.findall(tag)} for tag in ("depend", "exec_depend", "test_depend")}
    return {"exec": keys["depend"] | keys["exec_depend"], "test": keys["test_depend"]}


def used(package: pathlib.Path, ros_packages: set[str]) -> dict[str, dict[str, set[str]]]:
    """{"exec"|"test": {rosdep key or "?module": files}}: non-stdlib imports, and packages launch files start."""
    runtime = [*(package / package.name).rglob("*.py"), *(package / "launch").glob("*.py")]
    tests = sorted((package / "test").glob("*.py"))
    local = {package.name} | {f.stem for f in tests}
    uses: dict[str, dict[str, set[str]]] = {"exec": {}, "test": {}}
    for kind, files in (("exec", runtime), ("test", tests)):
        for path in files:
            modules = set()
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Import):
                    modules |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.level == 0:
                    modules.add(node.module.split(".")[0])
                elif isinstance(node, ast.keyword) and node.arg == "package" and path.parent.name == "launch":
                    if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                        modules.add(node.value.value)  # Node(package=...) in a launch file
            for module in modules - local - set(sys.stdlib_module_names):
                key = ROSDEP_KEYS.get(module) or (module if module in ros_packages else f"?{module}")
                uses[kind].setdefault(key, set()).add(str(path.relative_to(package)))
    return uses


@cache
def _problems() -> tuple[list[str], list[str]]:
    ros_packages = set(get_packages_with_prefixes()) | {p.parent.name for p in SRC.glob("*/package.xml")}
    missing, unused = [], []
    for package in python_packages():
        have, uses = declared(package), used(package, ros_packages)
        for kind in ("exec", "test"):
            available = have["exec"] | (have["test"] if kind == "test" else set())
            for key, files in sorted(uses[kind].items()):
                if kind == "test" and key in uses["exec"]:
                    continue  # reported with the runtime imports
                where = ", ".join(sorted(files)[:3]) + (" ..." if len(files) > 3 else "")
                if key.startswith("?"):
                    missing.append(f"{package.name}: module {key[1:]} ({where}) is neither in ROSDEP_KEYS nor a "
                                   "ROS package in the ament index")
                elif key not in available:
                    missing.append(f"{package.name}: <{kind}_depend>{key}</{kind}_depend> ({where})")
        for key in sorted(have["exec"] - set(uses["exec"]) - set(NOT_IMPORTED)):
            hint = " (only the tests use it: a test_depend)" if key in uses["test"] else ""
            unused.append(f"{package.name}: exec_depend {key}{hint}")
        for key in sorted(have["test"] - set(uses["test"]) - set(NOT_IMPORTED)):
            unused.append(f"{package.name}: test_depend {key}")
    return missing, unused


def test_every_import_is_declared_in_package_xml():
    missing = _problems()[0]
    if missing:
        pytest.fail("package.xml lacks what the code imports:\n  " + "\n  ".join(missing), pytrace=False)


def test_every_declared_dependency_is_used():
    unused = _problems()[1]
    if unused:
        pytest.fail("package.xml declares what nothing imports (or give the reason in NOT_IMPORTED):\n  "
                    + "\n  ".join(unused), pytrace=False)


def unknown_keys(package_xml: pathlib.Path, snapshot: dict[str, set[str]], ours: set[str]) -> list[str]:
    """The keys of a package.xml that rosdep cannot resolve for both Jazzy and Kilted: "<tag>key</tag> (why)"."""
    unknown = []
    for element in ET.parse(package_xml).getroot():
        if not element.tag.endswith("depend") or element.tag == "group_depend":  # group names are no keys
            continue
        key = element.text.strip()
        unreleased = [distro for distro in ("jazzy", "kilted") if key not in snapshot[distro]]
        if key in ours or key in snapshot["rosdep"] or not unreleased:
            continue
        why = (f"a ROS package {unreleased[0].capitalize()} has not released" if len(unreleased) == 1
               else "neither a rosdep key nor a ROS package")
        unknown.append(f"<{element.tag}>{key}</{element.tag}> ({why})")
    return unknown


def test_every_key_is_a_rosdep_key_a_ros_package_or_ours(rosdistro_keys):
    ours = {p.parent.name for p in SRC.glob("*/package.xml")}
    unknown = [f"{p.relative_to(SRC.parent)}: {line}" for p in sorted(SRC.glob("*/package.xml"))
               for line in unknown_keys(p, rosdistro_keys, ours)]
    if unknown:
        pytest.fail("rosdep does not know these keys (data/rosdistro_keys.txt): use rosdistro's key, or pin the "
                    "package in requirements/ with a comment in package.xml:\n  " + "\n  ".join(unknown),
                    pytrace=False)


def test_unknown_keys_are_named_with_their_tag(tmp_path, rosdistro_keys):
    """The keys the image's rosdep step stopped on, and a package one distribution lacks, are found."""
    assert not {"python3-pytest-rerunfailures", "python3-mcap-pip", "python3-mcap-ros2-support-pip"} & (
        rosdistro_keys["rosdep"]) and "mcap-ros2-support" in rosdistro_keys["rosdep"]
    package_xml = tmp_path / "package.xml"
    package_xml.write_text("<package format='3'><name>x</name><exec_depend>python3-mcap-pip</exec_depend>"
                           "<test_depend>python3-pytest-rerunfailures</test_depend><depend>rclpy</depend>"
                           "<exec_depend>franka_msgs</exec_depend><build_depend>robot_id_msgs</build_depend>"
                           "<test_depend>python3-pytest</test_depend><member_of_group>g</member_of_group></package>")
    snapshot = {"rosdep": {"python3-pytest"}, "jazzy": {"rclpy", "franka_msgs"}, "kilted": {"rclpy"}}
    assert unknown_keys(package_xml, snapshot, {"robot_id_msgs"}) == [
        "<exec_depend>python3-mcap-pip</exec_depend> (neither a rosdep key nor a ROS package)",
        "<test_depend>python3-pytest-rerunfailures</test_depend> (neither a rosdep key nor a ROS package)",
        "<exec_depend>franka_msgs</exec_depend> (a ROS package Kilted has not released)",
    ]
