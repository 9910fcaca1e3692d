"""Every package.xml in src/ declares what the package's Python code imports, and nothing it does not use.

Runtime code (<pkg>/<pkg>/**/*.py, launch/*.py) needs an exec_depend (or depend); tests (test/*.py) need an
exec_depend, depend or test_depend. A module stands for the rosdep key ROSDEP_KEYS gives it, or for the ROS
package of its own name (one in the ament index or in src/).
"""

import ast
import pathlib
import sys
import xml.etree.ElementTree as ET
from functools import cache

import pytest
from ament_index_python.packages import get_packages_with_prefixes

SRC = pathlib.Path(__file__).resolve().parents[2]

ROSDEP_KEYS = {  # Python module -> rosdep key (ros/rosdistro rosdep/python.yaml; pinocchio is a ROS package)
    "cvxpy": "python3-cvxpy-pip",
    "hypothesis": "python3-hypothesis",
    "launch": "launch",  # ROS packages the PyPI wheels lack: only the launch files import them
    "launch_ros": "launch_ros",
    "matplotlib": "python3-matplotlib",
    "mcap": "python3-mcap-pip",
    "mcap_ros2": "python3-mcap-ros2-support-pip",
    "mujoco": "python3-mujoco-pip",
    "numpy": "python3-numpy",
    "pinocchio": "pinocchio",
    "coal": "coal",
    "pytest": "python3-pytest",
    "rosbags": "python3-rosbags-pip",
    "scipy": "python3-scipy",
    "tqdm": "python3-tqdm",
    "yaml": "python3-yaml",
}
NOT_IMPORTED = {  # declared although no code imports them
    "robot_id_description": "URDFs and robot configs, found by robot name through the ament index",
    "robot_id_recorder": "robot_id_bringup's graph (graph.py) starts its node as a process",
    "python3-pytest": "runs the tests",
    "python3-pytest-timeout": "the per-test timeout of the package's pytest configuration",
    "python3-pytest-rerunfailures": "the one rerun of the hardware-mode end-to-end test (its flaky marker)",
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
