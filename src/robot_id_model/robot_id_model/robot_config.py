"""One typed configuration per robot (robot_id_description/config/<robot>.yaml)."""

from __future__ import annotations

import pathlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import yaml

from robot_id_model.collision_geometry import CollisionGeometry, environment_boxes, read_capsules
from robot_id_model.robot_model import DEFAULT_FRICTION, ModelError, RobotModel, load_robot_model

DESCRIPTION_PACKAGE = "robot_id_description"


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

    def load_model(self, friction: Sequence[str] = DEFAULT_FRICTION) -> RobotModel:
        """The RobotModel of this robot's URDF, joints and gravity."""
        return load_robot_model(self.urdf_path, self.joint_names, self.gravity_m_s2, friction)


def description_directory() -> pathlib.Path:
    """The installed robot description package (share/robot_id_description: urdf/, config/)."""
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    except ImportError as err:
        raise ModelError("robot names need a built workspace (ament_index_python); pass a config path") from err
    try:
        return pathlib.Path(get_package_share_directory(DESCRIPTION_PACKAGE))
    except PackageNotFoundError as err:
        raise ModelError(f"{DESCRIPTION_PACKAGE} is not installed; source the workspace or pass a path") from err


def config_directory() -> pathlib.Path:
    """Where the shipped robot configs are installed (share/robot_id_description/config); each config's
    `urdf` is relative to its file, so the shipped ones name URDFs in share/robot_id_description/urdf."""
    return description_directory() / "config"


def robot_config_path(name_or_path: str | pathlib.Path) -> pathlib.Path:
    """The file of a robot config given as a YAML path or by robot name (`iiwa14`, from the installed configs);
    ModelError "no robot config 'nosuch' (shipped: iiwa14, ...; or a YAML path)" when it names none."""
    path = pathlib.Path(name_or_path)
    if path.suffix not in (".yaml", ".yml"):
        directory = config_directory()
        path = directory / f"{name_or_path}.yaml"
        if not path.is_file():
            shipped = ", ".join(sorted(p.stem for p in directory.glob("*.yaml")))
            raise ModelError(f"no robot config '{name_or_path}' (shipped: {shipped}; or a YAML path)")
    if not path.is_file():
        raise ModelError(f"no robot config file '{path}'")
    return path


def load_robot_config(name_or_path: str | pathlib.Path) -> RobotConfig:
    """Load a robot config from a YAML path, or by robot name (`iiwa14`) from the installed configs."""
    path = robot_config_path(name_or_path)
    raw = yaml.safe_load(path.read_text())
    try:
        limits = raw["limits"]
        n = len(raw["joint_names"])
        arrays = {
            key: np.asarray(limits[key], dtype=float)
            for key in (
                "position_lower_rad", "position_upper_rad", "velocity_rad_s", "acceleration_rad_s2", "torque_nm"
            )
        }
        wrong = [key for key, value in arrays.items() if value.shape != (n,)]
        if wrong:
            raise ModelError(f"{path}: limits {wrong} must have one value per joint ({n})")
        return RobotConfig(
            robot=raw["robot"],
            urdf_path=(path.parent / raw["urdf"]).resolve(),
            joint_names=tuple(raw["joint_names"]),
            flange_frame=raw["flange_frame"],
            gravity_m_s2=tuple(float(g) for g in raw["gravity_m_s2"]),
            limits=JointLimits(**arrays, flange_speed_m_s=float(limits["flange_speed_m_s"])),
            floor_z_m=float(raw["floor_z_m"]),
            state_rate_hz=float(raw["state_rate_hz"]),
            joint_states_topic=raw["topics"]["joint_states"],
            joint_trajectory_topic=raw["topics"]["joint_trajectory"],
            torque_filter_time_constant_s=float(raw["torque_filter_time_constant_s"]),
            datasheet_mass_kg=None if raw.get("datasheet_mass_kg") is None else float(raw["datasheet_mass_kg"]),
            rated_payload_kg=None if raw.get("rated_payload_kg") is None else float(raw["rated_payload_kg"]),
            collision=_collision(raw.get("collision"), path, float(raw["floor_z_m"])),
        )
    except (KeyError, TypeError) as err:
        raise ModelError(f"{path}: missing or malformed entry {err}") from None


def _collision(raw: dict | None, path: pathlib.Path, floor_z_m: float) -> CollisionGeometry | None:
    """The `collision:` entry of a robot config: geometry file (relative to the config), clearance_m, boxes."""
    if raw is None:
        return None
    try:
        geometry_path = (path.parent / raw["geometry"]).resolve()
        clearance_m = float(raw["clearance_m"])
    except (KeyError, TypeError, ValueError) as err:
        raise ModelError(f"{path}: collision needs geometry (a file) and clearance_m ({err})") from None
    if not clearance_m >= 0:
        raise ModelError(f"{path}: collision clearance_m must be >= 0 m, got {raw['clearance_m']}")
    capsules, allowed, reference = read_capsules(geometry_path)
    return CollisionGeometry(capsules, clearance_m, floor_z_m, environment_boxes(raw.get("boxes"), str(path)),
                             allowed, str(geometry_path), reference)
