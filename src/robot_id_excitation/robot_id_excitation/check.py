"""Safety check and excitation criteria of any trajectory on a time grid fine enough to hide nothing."""

from __future__ import annotations

import numpy as np

from robot_id_excitation.constraints import CheckReport, DesignLimits, check_samples, rest_checks
from robot_id_excitation.criteria import CriteriaValues, evaluate_criteria
from robot_id_excitation.regressor_sensitivity import BaseColumns, base_columns, base_regressor
from robot_id_excitation.trajectory_file import Trajectory
from robot_id_model.base_parameters import base_parameters
from robot_id_model.robot_model import RobotModel

CHECK_STEP_S = 0.005
"""Default grid of a check: 200 Hz, ten times the design grid of a 20 s period with 200 samples."""


def time_grid(period_s: float, samples: int) -> np.ndarray:
    """`samples` equally spaced times over one period, t = 0 included and t = T excluded."""
    return np.arange(samples) * (period_s / samples)


def check_trajectory(
    robot: RobotModel, limits: DesignLimits, trajectory: Trajectory, samples: int | None = None
) -> CheckReport:
    """Every constraint on `samples` points of one period (default every CHECK_STEP_S), and rest at t = 0."""
    if tuple(trajectory.joint_names) != tuple(robot.joint_names):
        raise ValueError(f"trajectory joints {list(trajectory.joint_names)} differ from the robot's "
                         f"{list(robot.joint_names)}")
    samples = samples or int(np.ceil(trajectory.period_s / CHECK_STEP_S))
    t = time_grid(trajectory.period_s, samples)
    q0, dq0, ddq0 = trajectory.evaluate(np.zeros(1))
    rest = rest_checks("period start", q0[0] - trajectory.rest_pose_rad, dq0[0], ddq0[0])
    return check_samples(robot, limits, t, *trajectory.evaluate(t), extra=rest)


def trajectory_criteria(
    robot: RobotModel,
    trajectory: Trajectory,
    samples: int = 2000,
    noise_std_nm: np.ndarray | None = None,
    columns: BaseColumns | None = None,
    still_joints: tuple[int, ...] = (),
) -> CriteriaValues:
    """cond, log det and Hadamard of the plain regressor over one period (Coulomb column sign(dq)); `columns`:
    the base parameters' by default, or a payload's; the rows of `still_joints` left out, as the design does."""
    columns = columns if columns is not None else base_columns(robot, base_parameters(robot))
    t = time_grid(trajectory.period_s, samples)
    rows = np.ones(robot.n_joints)
    rows[list(still_joints)] = 0.0
    return evaluate_criteria(rows[:, None] * base_regressor(robot, columns, *trajectory.evaluate(t)), noise_std_nm)


def closest_approach_line(report: CheckReport | None, limits: DesignLimits) -> str:
    """One line: the least distance between two links or a link and the environment, allowed pairs included, and
    where it is; its pair's clearance, and any other pair that violates its own."""
    geometry = limits.collision
    if geometry is None:
        return "collision: NOT CHECKED (the robot config names no collision geometry, the URDF has no <collision>)"
    closest, worst = report.least("collision"), report.closest("collision")
    if closest is None:
        return "collision: no pair of links to check"
    first, second = closest.where.split("–")
    clearance = f"clearance {closest.limit * 1000:.1f} mm"
    if closest.limit < geometry.clearance_m:
        clearance = f"an allowed pair: {clearance}, the other pairs' {geometry.clearance_m * 1000:.1f} mm"
    violated = ", VIOLATED" if closest.violated else f"; {worst.where} VIOLATES its clearance" if worst.violated else ""
    return (f"closest approach (capsules and convex hulls, never more than the meshes): {closest.value * 1000:.1f} mm "
            f"between {first} and {second} at t = {closest.time_s:.3f} s ({clearance}{violated})")
