"""Load a serial arm from a URDF into pinocchio, with clear errors for what we do not support."""

from __future__ import annotations

import dataclasses
import pathlib
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from robot_id_model.coulomb_laws import SIGN, CoulombLaw, coulomb_signals

if TYPE_CHECKING:  # pinocchio is imported where a model is built: command lines start without it
    import pinocchio as pin

FRICTION_TERMS = ("FV", "FC", "FO", "IA")
"""Per-joint friction/drive terms the model knows: viscous Fv·dq, Coulomb Fc times its law (sign(dq) unless
RobotModel.coulomb_laws says otherwise: the coulomb_laws package), constant offset, rotor (armature) inertia Ia·ddq."""

DEFAULT_FRICTION = ("FV", "FC", "FO")
STANDARD_GRAVITY_M_S2 = (0.0, 0.0, -9.81)
"""Gravity along the base's −z, the default wherever a URDF's arm stands upright."""

_UNSUPPORTED_JOINTS = {
    "JointModelFreeFlyer": "floating",
    "JointModelPlanar": "planar",
    "JointModelSpherical": "spherical",
    "JointModelSphericalZYX": "spherical",
    "JointModelTranslation": "translation",
}


class ModelError(ValueError):
    """A robot description that robot_id cannot use, with the reason in the message."""


@dataclass(frozen=True)
class RobotModel:
    """A fixed-base serial arm reduced to its identified joints.

    `model` is the pinocchio model with only the arm joints left movable; every other joint (gripper
    fingers, ...) is locked at its neutral position and its links are lumped into the arm link they hang on.
    """

    model: pin.Model
    joint_names: tuple[str, ...]
    link_names: tuple[str, ...]
    friction: tuple[str, ...]
    locked: tuple[str, ...] = ()
    """The URDF's other movable joints, locked at their neutral position (a gripper's fingers)."""
    coulomb_laws: tuple[CoulombLaw, ...] = ()
    """Per joint, the law of its Coulomb column (the coulomb_laws package); none given: sign(dq) at every joint."""

    def with_coulomb_laws(self, laws: Sequence[CoulombLaw]) -> RobotModel:
        """The same arm with these Coulomb laws, one per joint."""
        laws = tuple(laws)
        if len(laws) != self.n_joints:
            raise ModelError(f"coulomb_laws needs one law per joint ({self.n_joints}), got {len(laws)}")
        return dataclasses.replace(self, coulomb_laws=() if all(law == SIGN for law in laws) else laws)

    def coulomb_signal(self, q_rad: np.ndarray, dq_rad_s: np.ndarray) -> np.ndarray:
        """The Coulomb columns' signals along samples (K, n) in their order: each joint's law."""
        return coulomb_signals(q_rad, dq_rad_s, self.coulomb_laws)

    @property
    def n_joints(self) -> int:
        return len(self.joint_names)

    @property
    def params_per_joint(self) -> int:
        return 10 + len(self.friction)

    @property
    def n_params(self) -> int:
        return self.n_joints * self.params_per_joint

    @property
    def position_limits_rad(self) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper joint limits from the URDF (±inf for continuous joints)."""
        lower = np.full(self.n_joints, -np.inf)
        upper = np.full(self.n_joints, np.inf)
        for j, jid in enumerate(range(1, self.model.njoints)):
            if self.model.joints[jid].nq == 1:
                iq = self.model.joints[jid].idx_q
                lower[j] = self.model.lowerPositionLimit[iq]
                upper[j] = self.model.upperPositionLimit[iq]
        return lower, upper

    @property
    def velocity_limits_rad_s(self) -> np.ndarray:
        """Joint speed limits from the URDF."""
        return np.array([self.model.velocityLimit[self.model.joints[j].idx_v] for j in range(1, self.model.njoints)])

    def configuration(self, q_rad: np.ndarray) -> np.ndarray:
        """Pinocchio configuration(s) from joint angles (K×n or n); continuous joints become (cos, sin)."""
        return pinocchio_configuration(self.model, q_rad)


def _parse_xml(urdf: str | pathlib.Path) -> tuple[str, str]:
    """Return (URDF text, a label for messages); check the XML is well formed and is a URDF."""
    text = str(urdf)
    if not text.lstrip().startswith("<"):
        path = pathlib.Path(text)
        if not path.is_file():
            raise ModelError(f"URDF file not found: {path}")
        label, text = str(path), path.read_text()
    else:
        label = "URDF string"
    try:
        root = ET.fromstring(text)
    except ET.ParseError as err:
        raise ModelError(f"{label}: not well-formed XML ({err})") from None
    if root.tag != "robot":
        raise ModelError(f"{label}: root element is <{root.tag}>, a URDF starts with <robot>")
    for joint in root.iter("joint"):
        if joint.get("type") in ("floating", "planar"):
            raise ModelError(
                f"{label}: joint '{joint.get('name')}' is {joint.get('type')}; robot_id identifies "
                "fixed-base serial arms (remove the joint or make it fixed)"
            )
    return text, label


def load_robot_model(
    urdf: str | pathlib.Path,
    joint_names: Sequence[str] | None = None,
    gravity_m_s2: Sequence[float] = STANDARD_GRAVITY_M_S2,
    friction: Sequence[str] = DEFAULT_FRICTION,
) -> RobotModel:
    """Load a URDF (path or XML text) and keep `joint_names` movable (default: its arm, arm_chain); every other
    joint (a gripper's fingers) is locked at its neutral position and its links lumped into the arm.

    The URDF's root link is the fixed base. Raises ModelError with the reason for a malformed file, an
    unknown joint name, a floating base, or a selection of joints that is not a serial chain.
    """
    text, label = _parse_xml(urdf)
    unknown = [t for t in friction if t not in FRICTION_TERMS]
    if unknown or len(set(friction)) != len(friction):
        raise ModelError(f"friction terms must be distinct, from {FRICTION_TERMS}; got {tuple(friction)}")
    import pinocchio as pin

    try:
        full = pin.buildModelFromXML(text)
    except (RuntimeError, ValueError) as err:
        raise ModelError(f"{label}: pinocchio could not build a model ({err})") from None

    movable = [full.names[j] for j in range(1, full.njoints)]
    for j in range(1, full.njoints):
        kind = _UNSUPPORTED_JOINTS.get(full.joints[j].shortname())
        if kind:
            raise ModelError(f"{label}: joint '{full.names[j]}' is {kind}; only 1-DOF joints are supported")
    if joint_names is None:
        joint_names = arm_chain(full)
        if not movable:
            raise ModelError(f"{label}: no movable joint (every joint is fixed): no arm to identify")
        if not joint_names:
            raise ModelError(f"{label}: the movable joints branch at the base, so there is no one arm to take; name "
                             "the arm's joints base to tip (--joints)")
    missing = [name for name in joint_names if name not in movable]
    if missing:
        raise ModelError(f"{label}: no movable joint named {missing}; movable joints are {movable}")
    if not joint_names:
        raise ModelError(f"{label}: no movable joint to identify")

    locked = [full.getJointId(name) for name in movable if name not in joint_names]
    model = pin.buildReducedModel(full, locked, pin.neutral(full)) if locked else full
    ordered = [model.names[j] for j in range(1, model.njoints)]
    if ordered != list(joint_names):
        raise ModelError(
            f"{label}: joints must be listed from base to tip; the URDF order is {ordered}"
        )
    for jid in range(1, model.njoints):
        if model.parents[jid] != jid - 1:
            raise ModelError(
                f"{label}: joint '{model.names[jid]}' does not follow '{model.names[jid - 1]}'; the selected "
                f"joints are not a serial chain (the URDF's arm from its base: {', '.join(arm_chain(full))})"
            )
    model.gravity.linear = np.asarray(gravity_m_s2, dtype=float)
    link_names = tuple(_child_link(model, jid) for jid in range(1, model.njoints))
    return RobotModel(model, tuple(joint_names), link_names, tuple(friction),
                      tuple(name for name in movable if name not in joint_names))


def arm_chain(full: pin.Model) -> list[str]:
    """The URDF's arm: the movable joints from the base, each the only movable child of the one before, up to the
    first that has none or several (a gripper's fingers branch there, as on the FR3 hand and Robotiq grippers)."""
    chain, parent = [], 0
    while True:
        children = [j for j in range(1, full.njoints) if full.parents[j] == parent]
        if len(children) != 1:
            return chain
        parent = children[0]
        chain.append(full.names[parent])


def _child_link(model: pin.Model, jid: int) -> str:
    """Name of the URDF link that moves with joint `jid` (its body frame)."""
    import pinocchio as pin

    for frame in model.frames:
        if frame.parentJoint == jid and frame.type == pin.FrameType.BODY:
            return frame.name
    raise ModelError(f"joint '{model.names[jid]}' carries no link")


def pinocchio_configuration(model: pin.Model, q_rad: np.ndarray) -> np.ndarray:
    """The configuration(s) of a pinocchio model whose joints are the arm's, base to tip, from joint angles (K×n or
    n); a continuous joint becomes (cos, sin)."""
    q_rad = np.asarray(q_rad, dtype=float)
    if model.nq == model.njoints - 1:
        return q_rad
    out = np.zeros((*q_rad.shape[:-1], model.nq))
    for j, jid in enumerate(range(1, model.njoints)):
        iq = model.joints[jid].idx_q
        if model.joints[jid].nq == 2:
            out[..., iq] = np.cos(q_rad[..., j])
            out[..., iq + 1] = np.sin(q_rad[..., j])
        else:
            out[..., iq] = q_rad[..., j]
    return out
