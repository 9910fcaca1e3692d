"""Link inertials as a URDF states them: one link's <inertial> in its link frame, and the known parts (fixed
children such as a gripper) that the model lumps onto an arm link."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

import numpy as np
import pinocchio as pin

from robot_id_model.parameters import PIN_INDEX, inertial_columns, nominal_parameters
from robot_id_model.physical import LinkInertial, inertia_matrix, link_standard_parameters
from robot_id_model.robot_model import RobotModel


def read_link_inertial(urdf_text: str, link_name: str) -> LinkInertial | None:
    """The <inertial> of one URDF link expressed in the link frame (origin rpy applied), or None."""
    for link in ET.fromstring(urdf_text).findall("link"):  # the <robot> tree's links only
        if link.get("name") != link_name:
            continue
        inertial = link.find("inertial")
        if inertial is None:
            return None
        origin = inertial.find("origin")
        xyz = np.array([float(v) for v in (origin.get("xyz", "0 0 0") if origin is not None else "0 0 0").split()])
        rpy = [float(v) for v in (origin.get("rpy", "0 0 0") if origin is not None else "0 0 0").split()]
        i = inertial.find("inertia")
        names = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
        rotation = pin.rpy.rpyToMatrix(*rpy)
        inertia = rotation @ inertia_matrix([float(i.get(name, 0.0)) for name in names]) @ rotation.T
        return LinkInertial(float(inertial.find("mass").get("value")), xyz, inertia)
    raise ValueError(f"URDF has no link named '{link_name}'")


def lumped_known_parts(robot: RobotModel, urdf_text: str) -> tuple[np.ndarray | None, ...]:
    """Per arm joint, the standard parameters (10,) of the links pinocchio lumped onto it (fixed children
    such as a gripper), as given by the URDF; None where the arm link carries nothing else."""
    pi0 = nominal_parameters(robot)
    parts = []
    for name, cols in zip(robot.link_names, inertial_columns(robot), strict=True):
        own = read_link_inertial(urdf_text, name)
        own_pi = link_standard_parameters(own) if own is not None else np.zeros(10)
        rest = pi0[cols] - own_pi
        parts.append(rest if np.abs(rest).max() > 1e-12 else None)
    return tuple(parts)


def all_link_inertials(urdf_text: str) -> list[LinkInertial]:
    """The <inertial> of every URDF link that states one (moving or not)."""
    names = [link.get("name") for link in ET.fromstring(urdf_text).findall("link")]
    return [inertial for inertial in (read_link_inertial(urdf_text, name) for name in names) if inertial is not None]


def fixed_parts(robot: RobotModel, urdf_text: str,
                lumped: Sequence[np.ndarray | None]) -> tuple[np.ndarray | None, ...]:
    """The known parts (lumped_known_parts) to keep fixed in a physical retrieval, except on a link the URDF gives no
    inertial of its own (Kinova's Gen3 lite: the last arm link massless, the gripper's base fixed to it): that link
    is identified as one body with the links fixed to it, and only the links beyond joints outside the arm (the
    fingers, which move and keep their inertials: locked_parts) are known parts there. identified.urdf gives such a
    link that body, and the links fixed to it a massless inertial."""
    moving = locked_parts(robot, urdf_text)
    return tuple(part if has_own_mass(urdf_text, name) else moving[j]
                 for j, (name, part) in enumerate(zip(robot.link_names, lumped, strict=True)))


def has_own_mass(urdf_text: str, link_name: str) -> bool:
    """Whether the URDF gives the link an inertial of its own with a mass."""
    own = read_link_inertial(urdf_text, link_name)
    return own is not None and own.mass_kg > 0.0


def massless_links(robot: RobotModel) -> list[str]:
    """The arm links with no mass in the URDF, nothing fixed to them either: no prior to identify them around."""
    pi0 = nominal_parameters(robot)
    return [name for name, cols in zip(robot.link_names, inertial_columns(robot), strict=True) if pi0[cols][0] <= 0.0]


def fixed_descendants(urdf_text: str, link_name: str) -> list[str]:
    """The links fixed to `link_name` through fixed joints only (a gripper's base), nearest first."""
    joints = ET.fromstring(urdf_text).findall("joint")
    found, frontier = [], [link_name]
    while frontier:
        parent = frontier.pop(0)
        children = [j.find("child").get("link") for j in joints
                    if j.get("type") == "fixed" and j.find("parent").get("link") == parent]
        found += children
        frontier += children
    return found


def locked_parts(robot: RobotModel, urdf_text: str) -> tuple[np.ndarray | None, ...]:
    """Per arm joint, the standard parameters (10,) of the links it carries beyond joints outside the arm (a
    gripper's fingers, locked at their neutral position), as the URDF gives them; None where it carries none.
    They are the part of lumped_known_parts that moves in the URDF: a file keeps them on their own links."""
    if not robot.locked:
        return (None,) * robot.n_joints
    full = pin.buildModelFromXML(urdf_text)
    bare = pin.Model(full)
    for name in robot.locked:
        bare.inertias[bare.getJointId(name)] = pin.Inertia.Zero()
    locked = [full.getJointId(name) for name in robot.locked]
    with_parts, without = (pin.buildReducedModel(m, locked, pin.neutral(full)) for m in (full, bare))
    parts = []
    for jid in range(1, with_parts.njoints):
        part = (with_parts.inertias[jid].toDynamicParameters() - without.inertias[jid].toDynamicParameters())
        parts.append(part[PIN_INDEX] if np.abs(part).max() > 1e-12 else None)
    return tuple(parts)
