"""A robot config made from a URDF and the command line, so that any serial arm can be designed for and checked
without writing a config file: positions, velocities and torques from the URDF's <limit> tags; what a URDF does not
state (acceleration limit, flange speed, floor) must be given."""

from __future__ import annotations

import pathlib
from collections.abc import Sequence

import numpy as np

from robot_id_model.robot_config import JointLimits, RobotConfig
from robot_id_model.robot_model import STANDARD_GRAVITY_M_S2, ModelError, load_robot_model
from robot_id_model.urdf_collision import urdf_collision_geometry

DEFAULT_CLEARANCE_M = 0.02
"""Clearance between links, and to the floor, of an arm described by its URDF alone."""


def urdf_robot_config(
    urdf: str | pathlib.Path,
    joint_names: Sequence[str] | None,
    acceleration_rad_s2: Sequence[float],
    flange_speed_m_s: float,
    floor_z_m: float,
    flange_frame: str | None = None,
    clearance_m: float = DEFAULT_CLEARANCE_M,
    allowed_pairs: tuple[tuple[str, str], ...] = (),
) -> RobotConfig:
    """The config of the URDF's arm (`joint_names`, default its arm chain), gravity −9.81 m/s² along the base z.

    One acceleration value serves every joint. The flange defaults to the link of the last joint. The collision
    geometry is the URDF's own <collision> elements (none if it has none), `allowed_pairs` exempt from the
    clearance. The config's topics, state rate and
    torque filter are unused by design and check and left empty.
    """
    robot = load_robot_model(urdf, joint_names)
    n = robot.n_joints
    lower, upper = robot.position_limits_rad
    idx_v = [robot.model.joints[j].idx_v for j in range(1, robot.model.njoints)]
    velocity = np.asarray(robot.model.velocityLimit)[idx_v]
    torque = np.asarray(robot.model.effortLimit)[idx_v]
    ok = np.isfinite(lower) & np.isfinite(upper) & (lower < upper) & (velocity > 0) & (torque > 0)
    ok &= np.isfinite(velocity) & np.isfinite(torque)
    if not ok.all():
        missing = [robot.joint_names[i] for i in np.flatnonzero(~ok)]
        raise ModelError(f"{urdf}: joints {missing} lack a finite position, velocity or effort <limit> in the URDF; "
                         "write a robot config for them (--robot)")
    if len(acceleration_rad_s2) not in (1, n):
        raise ValueError(f"--acceleration-limit needs 1 or {n} values (rad/s²), got {len(acceleration_rad_s2)}")
    acceleration = np.broadcast_to(np.asarray(acceleration_rad_s2, dtype=float), (n,)).copy()
    return RobotConfig(
        robot=pathlib.Path(urdf).stem,
        urdf_path=pathlib.Path(urdf).resolve(),
        joint_names=robot.joint_names,
        flange_frame=flange_frame or robot.link_names[-1],
        gravity_m_s2=STANDARD_GRAVITY_M_S2,
        limits=JointLimits(lower, upper, velocity, acceleration, torque, flange_speed_m_s),
        floor_z_m=floor_z_m,
        state_rate_hz=0.0,
        joint_states_topic="",
        joint_trajectory_topic="",
        torque_filter_time_constant_s=0.0,
        collision=urdf_collision_geometry(urdf, clearance_m, floor_z_m, allowed_pairs),
    )
