"""The arm as identified: its URDF, held as text so that a result never depends on a file that may since have moved
or changed (identification.json carries the text and its SHA-256), the joints, gravity and the torque filter of its
driver."""

from __future__ import annotations

import dataclasses
import hashlib
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from robot_id_model.collision_geometry import CollisionGeometry
from robot_id_model.coulomb_laws import CoulombLaw
from robot_id_model.robot_config import RobotConfig
from robot_id_model.robot_model import STANDARD_GRAVITY_M_S2, RobotModel, load_robot_model


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class RobotSetup:
    """What the regressor is rebuilt from."""

    name: str
    urdf_path: str
    joint_names: tuple[str, ...]
    gravity_m_s2: tuple[float, float, float] = STANDARD_GRAVITY_M_S2
    torque_filter_time_constant_s: float = 0.0
    """First-order filter the robot applies to measured torque before publishing (LBR); 0 = none."""
    datasheet_mass_kg: float | None = None
    urdf_text: str = ""
    """The URDF as identified; left empty, it is read from urdf_path when the setup is made."""
    rated_payload_kg: float | None = None
    """The robot config's rated payload: how heavy a tool the URDF does not hold may be (physical bounds)."""
    flange_frame: str | None = None
    """The robot config's flange, where a payload is identified by default; None: the last arm link."""
    load_frame: str | None = None
    """The robot config's load_frame, where the robot's controller takes a load (KUKA's load data, Franka's setLoad);
    None: flange_frame."""
    collision: CollisionGeometry | None = field(default=None, compare=False, repr=False, metadata={"json": False})
    """The robot config's collision geometry (the vendor's meshes), whose hulls bound the links' inertia
    (physical.size_bounds); None: the URDF's <collision> elements are used."""

    JSON_DERIVED = ("urdf_sha256",)

    def __post_init__(self) -> None:
        path = pathlib.Path(self.urdf_path)
        if not self.urdf_text and path.is_file():
            object.__setattr__(self, "urdf_text", path.read_text())

    @classmethod
    def from_config(cls, config: RobotConfig) -> RobotSetup:
        return cls(config.robot, str(config.urdf_path), config.joint_names, config.gravity_m_s2,
                   config.torque_filter_time_constant_s, config.datasheet_mass_kg,
                   rated_payload_kg=config.rated_payload_kg, flange_frame=config.flange_frame,
                   load_frame=config.load_frame, collision=config.collision)

    def with_urdf(self, path: str | pathlib.Path) -> RobotSetup:
        """The same arm described by another URDF file (read now)."""
        return dataclasses.replace(self, urdf_path=str(path), urdf_text="")

    @property
    def urdf_sha256(self) -> str:
        return sha256(self.urdf_text)

    def model(self, friction: Sequence[str], coulomb_laws: Sequence[CoulombLaw] = ()) -> RobotModel:
        """The arm's model with these friction terms and Coulomb laws (RobotModel.coulomb_laws)."""
        robot = load_robot_model(self.urdf_text or self.urdf_path, self.joint_names, self.gravity_m_s2, friction)
        return robot.with_coulomb_laws(coulomb_laws) if coulomb_laws else robot

    def file_drift(self) -> str | None:
        """Why the file at urdf_path is no longer the URDF identified (the held one is used), or None."""
        path = pathlib.Path(self.urdf_path)
        if not path.is_file():
            return f"{path} is not there any more: the URDF held in identification.json is used"
        if sha256(path.read_text()) != self.urdf_sha256:
            return f"{path} has changed since the identification: the URDF held in identification.json is used"
        return None


def held_urdf(robot: dict) -> str:
    """The URDF text an identification.json holds, checked against its SHA-256 ('' in files written before it was
    held: read from the path then). ValueError when the two disagree."""
    text = robot.get("urdf_text", "")
    if text and sha256(text) != robot.get("urdf_sha256"):
        raise ValueError("the URDF held in identification.json does not match its SHA-256: the file was edited")
    return text
