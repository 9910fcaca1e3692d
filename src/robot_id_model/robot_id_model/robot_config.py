"""One typed configuration per robot (robot_id_description/robots/<robot>/robot.yaml), and the robots there."""

from __future__ import annotations

import pathlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robot_id_model.collision_geometry import CollisionGeometry, environment_boxes, read_capsules
from robot_id_model.config_values import ABOVE_ZERO, AT_LEAST_ZERO, ConfigSection, read_yaml_mapping
from robot_id_model.robot_model import DEFAULT_FRICTION, ModelError, RobotModel, load_robot_model

DESCRIPTION_PACKAGE = "robot_id_description"
ROBOT_FILE = "robot.yaml"
"""A robot folder's config; the folder's name is the robot's name."""


@dataclass(frozen=True)
class JointLimits:
    position_lower_rad: np.ndarray
    position_upper_rad: np.ndarray
    velocity_rad_s: np.ndarray
    acceleration_rad_s2: np.ndarray
    torque_nm: np.ndarray
    flange_speed_m_s: float


@dataclass(frozen=True)
class RobotConfig:
    robot: str
    urdf_path: pathlib.Path
    joint_names: tuple[str, ...]
    flange_frame: str
    gravity_m_s2: tuple[float, float, float]
    limits: JointLimits
    floor_z_m: float
    state_rate_hz: float
    joint_states_topic: str
    joint_trajectory_topic: str
    torque_filter_time_constant_s: float
    datasheet_mass_kg: float | None = None
    """The arm's mass as its datasheet states it (base included, no gripper); None: not stated."""
    rated_payload_kg: float | None = None
    """The load the datasheet allows on the flange (a gripper in the URDF not counted); None: not stated."""
    collision: CollisionGeometry | None = None
    """The arm's capsules, the environment and the clearance (docs/safety.md, guarantee 5); None: not checked."""
    load_frame: str | None = None
    """The frame the robot's controller takes a load in, where it is not flange_frame (Franka's setLoad: the flange F,
    fer_link8, when flange_frame is the hand's TCP); None: flange_frame."""
    offline_only: str | None = None
    """Why no ROS 2 stack drives this robot, so that hardware mode is refused naming it (the FER: franka_ros2 needs
    libfranka >= 0.10, which drives the FR3 only); None: hardware mode runs."""
    robot_description_topic: str = "/robot_description"
    """Where the robot's stack publishes its URDF (std_msgs/String, transient local): its ros2_control hardware says
    how the torque is filtered and whether the positions are measured (stack_hardware)."""

    def load_model(self, friction: Sequence[str] = DEFAULT_FRICTION) -> RobotModel:
        """The RobotModel of this robot's URDF, joints and gravity."""
        return load_robot_model(self.urdf_path, self.joint_names, self.gravity_m_s2, friction)


def description_directory() -> pathlib.Path:
    """The installed robot description package (share/robot_id_description: robots/, meshes/)."""
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    except ImportError as err:
        raise ModelError("robot names need a built workspace (ament_index_python); pass a config path") from err
    try:
        return pathlib.Path(get_package_share_directory(DESCRIPTION_PACKAGE))
    except PackageNotFoundError as err:
        raise ModelError(f"{DESCRIPTION_PACKAGE} is not installed; source the workspace or pass a path") from err


def robots_directory() -> pathlib.Path:
    """Where the shipped robots' folders are installed (share/robot_id_description/robots/<robot>/)."""
    return description_directory() / "robots"


def robot_names() -> tuple[str, ...]:
    """The shipped robots, sorted: the folders of robots_directory() that hold a robot.yaml."""
    return tuple(sorted(path.parent.name for path in robots_directory().glob(f"*/{ROBOT_FILE}")))


def robot_folder(name_or_folder: str | pathlib.Path) -> pathlib.Path:
    """A robot's folder given as a folder path (one holding robot.yaml) or by robot name (`iiwa14`, a shipped one);
    ModelError "no robot config 'nosuch' (shipped: fr3, ...; or a robot folder or a YAML path)" when it names none."""
    folder = pathlib.Path(name_or_folder)
    if (folder / ROBOT_FILE).is_file():
        return folder
    if folder.is_dir() or len(folder.parts) != 1:
        raise ModelError(f"no robot folder '{name_or_folder}' (a folder holding {ROBOT_FILE})")
    shipped = robots_directory() / str(name_or_folder)
    if not (shipped / ROBOT_FILE).is_file():
        raise ModelError(f"no robot config '{name_or_folder}' (shipped: {', '.join(robot_names())}; or a robot folder "
                         "or a YAML path)")
    return shipped


def robot_config_path(name_or_path: str | pathlib.Path) -> pathlib.Path:
    """The file of a robot config given as a YAML path, a robot folder or by robot name (robot_folder)."""
    path = pathlib.Path(name_or_path)
    if path.suffix not in (".yaml", ".yml"):
        return robot_folder(name_or_path) / ROBOT_FILE
    if not path.is_file():
        raise ModelError(f"no robot config file '{path}'")
    return path


LIMIT_UNITS = {"position_lower_rad": ("rad", None), "position_upper_rad": ("rad", None),
               "velocity_rad_s": ("rad/s", ABOVE_ZERO), "acceleration_rad_s2": ("rad/s²", ABOVE_ZERO),
               "torque_nm": ("Nm", ABOVE_ZERO)}
"""The per-joint limits of a robot config: unit and range of each."""


def load_robot_config(name_or_path: str | pathlib.Path) -> RobotConfig:
    """Load a robot config from a YAML path, a robot folder, or by robot name (`iiwa14`, a shipped one); a missing or
    wrong value is one ModelError naming the file, the key and what it expects (config_values)."""
    path = robot_config_path(name_or_path)
    raw = ConfigSection(read_yaml_mapping(path, "robot config"), str(path))
    joint_names = raw.texts("joint_names")
    limits, topics = raw.section("limits"), raw.section("topics")
    floor_z_m = raw.number("floor_z_m", "m")
    return RobotConfig(
        robot=raw.text("robot"),
        urdf_path=(path.parent / raw.text("urdf")).resolve(),
        joint_names=joint_names,
        flange_frame=raw.text("flange_frame"),
        gravity_m_s2=tuple(raw.numbers("gravity_m_s2", 3, "m/s²", each="x, y, z in the base frame")),
        limits=JointLimits(**{key: limits.numbers(key, len(joint_names), unit, limit, "one per joint")
                              for key, (unit, limit) in LIMIT_UNITS.items()},
                           flange_speed_m_s=limits.number("flange_speed_m_s", "m/s", ABOVE_ZERO)),
        floor_z_m=floor_z_m,
        state_rate_hz=raw.number("state_rate_hz", "Hz", ABOVE_ZERO),
        joint_states_topic=topics.text("joint_states"),
        joint_trajectory_topic=topics.text("joint_trajectory"),
        offline_only=raw.text("offline_only") if raw.has("offline_only") else None,
        robot_description_topic=topics.text("robot_description") if topics.has("robot_description")
        else "/robot_description",
        torque_filter_time_constant_s=raw.number("torque_filter_time_constant_s", "s", AT_LEAST_ZERO),
        datasheet_mass_kg=raw.optional_number("datasheet_mass_kg", "kg", ABOVE_ZERO),
        rated_payload_kg=raw.optional_number("rated_payload_kg", "kg", AT_LEAST_ZERO),
        collision=_collision(raw.section("collision") if raw.has("collision") else None, path, floor_z_m),
        load_frame=raw.text("load_frame") if raw.has("load_frame") else None,
    )


def _collision(raw: ConfigSection | None, path: pathlib.Path, floor_z_m: float) -> CollisionGeometry | None:
    """The `collision:` entry of a robot config: geometry file (relative to the config), clearance_m, boxes."""
    if raw is None:
        return None
    geometry_path = (path.parent / raw.text("geometry")).resolve()
    clearance_m = raw.number("clearance_m", "m", AT_LEAST_ZERO)
    capsules, allowed, reference = read_capsules(geometry_path)
    return CollisionGeometry(capsules, clearance_m, floor_z_m, environment_boxes(raw.values.get("boxes"), str(path)),
                             allowed, str(geometry_path), reference)
