"""The rules of ros2_controllers' joint_trajectory_controller (JTC, Jazzy 4.42 / Kilted 5.17) for a trajectory
message on its topic, without ROS: which messages it refuses (and the line it logs), where a new message starts
from, and when its constraints (path and goal tolerances, the stopped velocity, the goal time) make it hold the
measured position. docs/jtc_rules.md gives the source of every rule.

Configured from the controller's own ros__parameters (the YAML a lab passes to its controller manager), with the
JTC's defaults for what the file leaves out.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import yaml

FLOAT_EPSILON = float(np.finfo(np.float32).eps)
"""The JTC compares the last point's velocities with std::numeric_limits<float>::epsilon()."""


@dataclass(frozen=True)
class ControllerParameters:
    """The JTC parameters that decide what it accepts and how it splices; defaults are Jazzy's and Kilted's."""

    joints: tuple[str, ...]
    allow_partial_joints_goal: bool = False
    allow_nonzero_velocity_at_trajectory_end: bool = False
    """False from Jazzy on; Humble's default was True"""
    interpolate_from_desired_state: bool = False
    open_loop_control: bool = False
    """Jazzy only (deprecated there, removed in Kilted): splices from the desired state as the parameter above"""

    trajectory_tolerance_rad: tuple[float, ...] = ()
    """constraints.<joint>.trajectory, in `joints` order (0 or absent: not checked)"""
    goal_tolerance_rad: tuple[float, ...] = ()
    """constraints.<joint>.goal, in `joints` order (0 or absent: not checked)"""
    stopped_velocity_tolerance_rad_s: float = 0.01
    goal_time_s: float = 0.0
    """constraints.goal_time: how long after the last point the goal may be missed (0: without limit)"""

    @property
    def checks_constraints(self) -> bool:
        """Whether any constraint can make the controller hold (path tolerances, or a goal time)."""
        return any(t > 0.0 for t in self.trajectory_tolerance_rad) or self.goal_time_s > 0.0

    @property
    def splices_from_desired(self) -> bool:
        """Whether a new message starts from the last command (True) or from the measured state (False)."""
        return self.interpolate_from_desired_state or self.open_loop_control

    @classmethod
    def from_ros_parameters(cls, p: Mapping[str, object]) -> ControllerParameters:
        """From a controller's ros__parameters as in its YAML."""
        joints = tuple(str(j) for j in p.get("joints", ()))
        if not joints:
            raise ValueError("the controller's parameters name no joints")
        flags = ("allow_partial_joints_goal", "allow_nonzero_velocity_at_trajectory_end",
                 "interpolate_from_desired_state", "open_loop_control")
        constraints = p.get("constraints") or {}
        per_joint = [constraints.get(name) or {} for name in joints]
        return cls(joints=joints, **{name: bool(p.get(name, False)) for name in flags},
                   trajectory_tolerance_rad=tuple(float(c.get("trajectory", 0.0)) for c in per_joint),
                   goal_tolerance_rad=tuple(float(c.get("goal", 0.0)) for c in per_joint),
                   stopped_velocity_tolerance_rad_s=float(constraints.get("stopped_velocity_tolerance", 0.01)),
                   goal_time_s=float(constraints.get("goal_time", 0.0)))

    @classmethod
    def as_required(cls, joints: Sequence[str]) -> ControllerParameters:
        """The JTC's defaults with interpolate_from_desired_state: true, the set-up the excitation node requires
        (robot_id_excitation.controller_setup)."""
        return cls(tuple(joints), interpolate_from_desired_state=True)

    @classmethod
    def from_yaml(cls, path: str | os.PathLike, controller: str = "joint_trajectory_controller"
                  ) -> ControllerParameters:
        """From a controller manager's parameter file: the section `controller` (also as /**/controller)."""
        with open(path, encoding="utf-8") as f:
            document = yaml.safe_load(f) or {}
        for key in (controller, f"/**/{controller}"):
            if isinstance(document.get(key), dict) and "ros__parameters" in document[key]:
                return cls.from_ros_parameters(document[key]["ros__parameters"])
        raise ValueError(f"{path} has no ros__parameters for {controller}")


def controller_node_name(joint_trajectory_topic: str) -> str:
    """The controller's name (its section in a parameter file) from its ~/joint_trajectory topic."""
    return joint_trajectory_topic.rstrip("/").rsplit("/", 2)[-2]


def refusal(params: ControllerParameters, now_s: float, stamp_s: float, joint_names: Sequence[str],
            time_from_start_s: np.ndarray, positions_rad: np.ndarray, velocities_rad_s: np.ndarray | None,
            accelerations_rad_s2: np.ndarray | None) -> str | None:
    """The line the JTC logs (RCLCPP_ERROR) when it refuses this message on its topic, or None when it takes it
    (JointTrajectoryController::validate_trajectory_msg, in its order). stamp_s = 0: start on arrival; arrays
    (K, len(joint_names)) in the message's joint order, None where the message leaves the field empty."""
    if not params.allow_partial_joints_goal and len(joint_names) != len(params.joints):
        return "Joints on incoming trajectory don't match the controller joints."
    if len(joint_names) == 0:
        return "Empty joint names on incoming trajectory."
    t = np.asarray(time_from_start_s, float)
    if len(t) == 0:
        return "Empty trajectory received."
    for name in joint_names:
        if name not in params.joints:
            return f"Incoming joint {name} doesn't match the controller's joints."
    if not params.allow_nonzero_velocity_at_trajectory_end and velocities_rad_s is not None:
        for name, v in zip(joint_names, np.asarray(velocities_rad_s, float)[-1], strict=False):
            if abs(v) > FLOAT_EPSILON:
                return f"Velocity of last trajectory point of joint {name} is not zero: {v:.15f}"
    if stamp_s != 0.0 and stamp_s + t[-1] < now_s:
        return (f"Received trajectory with non-zero start time ({stamp_s:f}) that ends in the past "
                f"({stamp_s + t[-1]:f})")
    for i in range(1, len(t)):
        if t[i] <= t[i - 1]:
            return (f"Time between points {i - 1} and {i} is not strictly increasing, it is {t[i - 1]:f} and "
                    f"{t[i]:f} respectively")
    n = len(joint_names)
    for label, values, allow_empty in (("positions", positions_rad, False), ("velocities", velocities_rad_s, True),
                                       ("accelerations", accelerations_rad_s2, True)):
        shape = (len(t), 0) if values is None else np.shape(values)
        if shape != (len(t), n) and not (allow_empty and shape == (len(t), 0)):
            short = len(shape) == 2 and shape[0] < len(t) and shape[1] == n   # points past the rows have none
            width, point = (0, shape[0]) if short else (shape[1] if len(shape) == 2 else 0, 0)
            return f"Mismatch between joint_names size ({n}) and {label} ({width}) at point #{point}."
    return None



def path_failure(params: ControllerParameters, joint_names: Sequence[str], error_rad: np.ndarray) -> str | None:
    """While a trajectory runs: the line the JTC logs when a joint's position error (desired - measured, in
    `joint_names` order) exceeds its constraints.<joint>.trajectory; it then holds the measured position."""
    tolerance = np.array([_per_joint(params.trajectory_tolerance_rad, params.joints, name) for name in joint_names])
    beyond = np.flatnonzero((tolerance > 0.0) & (np.abs(error_rad) > tolerance))
    if not len(beyond):
        return None
    j = beyond[0]
    return (f"State tolerances failed for joint {params.joints.index(joint_names[j])}: position error "
            f"{abs(error_rad[j]):.4f} rad beyond constraints.{joint_names[j]}.trajectory {tolerance[j]:g}; holding "
            "position due to state tolerance violation")


def goal_missed(params: ControllerParameters, joint_names: Sequence[str], error_rad: np.ndarray,
                velocity_rad_s: np.ndarray) -> str | None:
    """After the last point: how the arm misses the goal (a position error beyond constraints.<joint>.goal, a speed
    beyond stopped_velocity_tolerance), or None when it is met and the controller stops checking. Missed for longer
    than goal_time (never when it is 0), the JTC logs "Exceeded goal_time_tolerance: holding position..." and holds
    the measured position."""
    stopped = params.stopped_velocity_tolerance_rad_s
    for name, error, speed in zip(joint_names, np.abs(error_rad), np.abs(velocity_rad_s), strict=True):
        tolerance = _per_joint(params.goal_tolerance_rad, params.joints, name)
        if (tolerance > 0.0 and error > tolerance) or (stopped > 0.0 and speed > stopped):
            return (f"{name}: position error {error:.4f} rad (goal {tolerance:g}), speed {speed:.4f} rad/s "
                    f"(stopped_velocity_tolerance {stopped:g})")
    return None


def _per_joint(values: tuple[float, ...], joints: tuple[str, ...], name: str) -> float:
    return values[joints.index(name)] if values and name in joints else 0.0
