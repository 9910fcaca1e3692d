"""The standard parameter vector π of Xu et al. 2020, eq. (3), extended with per-joint friction terms.

Per joint i (1-based) the block is [Mi, MXi, MYi, MZi, XXi, XYi, XZi, YYi, YZi, ZZi, <friction terms>],
inertias about the origin of link frame i. Friction terms are any of FV (viscous), FC (Coulomb),
FO (offset), IA (rotor inertia), in the order the RobotModel lists them.
"""

from __future__ import annotations

import numpy as np

from robot_id_model.robot_model import RobotModel

INERTIAL_NAMES = ("M", "MX", "MY", "MZ", "XX", "XY", "XZ", "YY", "YZ", "ZZ")

PIN_INDEX = np.array([0, 1, 2, 3, 4, 5, 7, 6, 8, 9])
"""seed-order[k] = pinocchio-order[PIN_INDEX[k]]; pinocchio stores (m, mc, Ixx, Ixy, Iyy, Ixz, Iyz, Izz)."""


def parameter_names(robot: RobotModel) -> list[str]:
    """Names of π in order: M1, MX1, ..., ZZ1, FV1, FC1, FO1, M2, ..."""
    per_joint = INERTIAL_NAMES + robot.friction
    return [f"{name}{i}" for i in range(1, robot.n_joints + 1) for name in per_joint]


def inertial_columns(robot: RobotModel) -> np.ndarray:
    """Indices in π of the 10 inertial parameters of each joint, shape (n, 10)."""
    starts = np.arange(robot.n_joints)[:, None] * robot.params_per_joint
    return starts + np.arange(10)[None, :]


def friction_columns(robot: RobotModel) -> np.ndarray:
    """Indices in π of the friction terms of each joint, shape (n, len(robot.friction))."""
    starts = np.arange(robot.n_joints)[:, None] * robot.params_per_joint
    return starts + 10 + np.arange(len(robot.friction))[None, :]


def nominal_parameters(robot: RobotModel) -> np.ndarray:
    """π of the rigid-body model the URDF states: its inertials; friction zero, and IA pinocchio's armature (zero
    unless set), as a URDF cannot state it.

    A URDF's <dynamics> are not part of it: shipped URDFs carry placeholders there (lbr_description: damping 10,
    friction 0.1 on every joint), which taken as friction make correct data look wrong. urdf_friction reads them.
    """
    model = robot.model
    pi = np.zeros(robot.n_params)
    for j, jid in enumerate(range(1, model.njoints)):
        pi[inertial_columns(robot)[j]] = model.inertias[jid].toDynamicParameters()[PIN_INDEX]
        if "IA" in robot.friction:
            pi[friction_columns(robot)[j][robot.friction.index("IA")]] = model.armature[model.joints[jid].idx_v]
    return pi


def nominal_mass_kg(robot: RobotModel) -> float:
    """The URDF mass of the identified links (fixed children lumped in): the scale of a tool the arm may carry."""
    return float(nominal_parameters(robot)[inertial_columns(robot)[:, 0]].sum())


def urdf_friction(robot: RobotModel) -> np.ndarray:
    """(n, 2) each joint's <dynamics> damping [Nm·s/rad] and friction [Nm] as the URDF states them (0 if absent)."""
    model = robot.model
    iv = [model.joints[jid].idx_v for jid in range(1, model.njoints)]
    return np.column_stack([model.damping[iv], model.friction[iv]])
