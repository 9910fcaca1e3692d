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
    """π of the loaded URDF: its inertials, and for friction its <dynamics> damping (FV) and friction (FC).

    FO is zero and IA is pinocchio's armature (zero unless set), as a URDF cannot state them.
    """
    model = robot.model
    pi = np.zeros(robot.n_params)
    for j, jid in enumerate(range(1, model.njoints)):
        pi[inertial_columns(robot)[j]] = model.inertias[jid].toDynamicParameters()[PIN_INDEX]
        iv = model.joints[jid].idx_v
        nominal = {"FV": model.damping[iv], "FC": model.friction[iv], "FO": 0.0, "IA": model.armature[iv]}
        pi[friction_columns(robot)[j]] = [nominal[term] for term in robot.friction]
    return pi
