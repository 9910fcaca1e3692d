"""An independent check of the joint trajectory commands the excitation node publishes (docs/safety.md).

It reads the messages themselves (trajectory_msgs/JointTrajectory, or anything with the same fields), not the
state machine's bookkeeping, and reports every way a command could move the arm beyond the robot's limits:
joint names, finite values, increasing times, each point's position, velocity and acceleration, the flange speed
and the heights of the link origins and the flange (forward kinematics of the robot model), the distances between
the links and to the environment at every point and halfway between points (the robot's capsules), the finite
differences between neighbouring points, and the quintic a joint trajectory controller runs between them.

`ControllerModel` is the controller the checks assume, for the tests' simulated arm and for the motion a new
command implies from the state the arm is in when it arrives (`check_transition`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from robot_id_contract.stamps import stamp_s
from robot_id_excitation.constraints import DesignLimits
from robot_id_model.collision_distance import arm_distances
from robot_id_model.collision_geometry import bind
from robot_id_model.robot_model import RobotModel

TOLERANCE = 1e-6
"""Relative tolerance of a point's values against the limits (floor: in metres)."""
INTERPOLATION_TOLERANCE = 1e-2
"""Relative tolerance of finite differences and of the interpolation between points, which sampling alone
cannot bound exactly (a curve within its limits at every sample may exceed them slightly in between)."""
INTERIOR = np.array([0.25, 0.5, 0.75])
"""Where between two points the interpolation is checked (fractions of the interval)."""


@dataclass(frozen=True)
class CommandPoints:
    """A command as arrays: points due at stamp_s + t_rel_s (stamp_s 0: on arrival)."""

    joint_names: tuple[str, ...]
    stamp_s: float
    t_rel_s: np.ndarray
    """(K,)"""
    q_rad: np.ndarray
    """(K, n), as dq_rad_s and ddq_rad_s2; NaN where a point lacks a value"""
    dq_rad_s: np.ndarray
    ddq_rad_s2: np.ndarray

    def due_s(self, arrival_s: float) -> np.ndarray:
        return (self.stamp_s if self.stamp_s > 0 else arrival_s) + self.t_rel_s


def command_points(msg: object) -> CommandPoints:
    """The arrays of a JointTrajectory message; a point with the wrong number of values gets NaN there."""
    n = len(msg.joint_names)

    def column(values: Sequence[float]) -> list[float]:
        return list(values) if len(values) == n else [np.nan] * n

    points = msg.points
    return CommandPoints(
        tuple(msg.joint_names), stamp_s(msg.header.stamp),
        np.array([stamp_s(p.time_from_start) for p in points], dtype=float),
        *(np.array([column(getattr(p, key)) for p in points], dtype=float).reshape(len(points), n)
          for key in ("positions", "velocities", "accelerations")),
    )


def quintic_segments(p0: np.ndarray, v0: np.ndarray, a0: np.ndarray, p1: np.ndarray, v1: np.ndarray,
                     a1: np.ndarray, duration_s: np.ndarray) -> np.ndarray:
    """(6, ...) coefficients in τ of the quintics from (p0, v0, a0) to (p1, v1, a1) over duration_s."""
    t, dp = duration_s, p1 - p0
    return np.stack([
        p0, v0, 0.5 * a0,
        (20 * dp - (8 * v1 + 12 * v0) * t - (3 * a0 - a1) * t**2) / (2 * t**3),
        (-30 * dp + (14 * v1 + 16 * v0) * t + (3 * a0 - 2 * a1) * t**2) / (2 * t**4),
        (12 * dp - 6 * (v1 + v0) * t - (a0 - a1) * t**2) / (2 * t**5),
    ])


def evaluate_segments(c: np.ndarray, tau_s: np.ndarray | float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Position, velocity, acceleration of quintics with coefficients c (6, ...) at local times τ."""
    p = c[0] + tau_s * (c[1] + tau_s * (c[2] + tau_s * (c[3] + tau_s * (c[4] + tau_s * c[5]))))
    v = c[1] + tau_s * (2 * c[2] + tau_s * (3 * c[3] + tau_s * (4 * c[4] + tau_s * 5 * c[5])))
    a = 2 * c[2] + tau_s * (6 * c[3] + tau_s * (12 * c[4] + tau_s * 20 * c[5]))
    return p, v, a


def _joint_excess(limits: DesignLimits, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray, tol: float) -> list[str]:
    """What of (..., n) values lies beyond the joint limits by more than `tol` (relative)."""
    half = 0.5 * (limits.position_upper_rad - limits.position_lower_rad)
    out = []
    for what, value, bound in (
        ("position below", limits.position_lower_rad - q, tol * half),
        ("position above", q - limits.position_upper_rad, tol * half),
        ("velocity", np.abs(dq) - limits.velocity_rad_s * (1 + tol), 0.0),
        ("acceleration", np.abs(ddq) - limits.acceleration_rad_s2 * (1 + tol), 0.0),
    ):
        beyond = (value > bound).reshape(-1, len(limits.joint_names)).any(axis=0)
        out += [f"{what} limit on {limits.joint_names[j]} (by {value.reshape(-1, beyond.size)[:, j].max():.4g})"
                for j in np.flatnonzero(beyond)]
    return out


def _cartesian(robot: RobotModel, limits: DesignLimits, q: np.ndarray, dq: np.ndarray) -> list[str]:
    """Flange speed and heights of the link origins and the flange of each point, by forward kinematics."""
    model, data = robot.model, robot.model.createData()
    flange = model.getFrameId(limits.flange_frame)
    speed, z = np.empty(len(q)), np.empty(len(q))
    for k in range(len(q)):
        pin.forwardKinematics(model, data, robot.configuration(q[k]), dq[k])
        pin.updateFramePlacements(model, data)
        speed[k] = np.linalg.norm(pin.getFrameVelocity(model, data, flange, pin.LOCAL_WORLD_ALIGNED).linear)
        z[k] = min(min(data.oMi[j].translation[2] for j in range(1, model.njoints)), data.oMf[flange].translation[2])
    out = []
    if np.any(speed > limits.flange_speed_m_s * (1 + TOLERANCE)):
        out.append(f"flange speed {speed.max():.4g} m/s beyond {limits.flange_speed_m_s} m/s")
    if np.any(z < limits.floor_z_m - TOLERANCE):
        out.append(f"a link {limits.floor_z_m - z.min():.4g} m below the floor")
    return out


def _distances(robot: RobotModel, limits: DesignLimits, poses: dict[str, np.ndarray]) -> list[str]:
    """Per kind of pose ("point", "interpolated": arrays (K, n)), the pair of links (or link and obstacle) furthest
    within its clearance (an allowed pair's: collision_geometry.ALLOWED_CLEARANCE_M), if one is; all poses in one
    evaluation."""
    geometry = limits.collision
    if geometry is None:
        return []
    stacked = np.concatenate(list(poses.values()))
    result = arm_distances(robot, geometry, bind(geometry, robot), stacked)
    clearance = np.array([geometry.clearance_of(*pair) for pair in result.names])
    within = clearance - result.distance_m
    out, start = [], 0
    for kind, q in poses.items():
        part = within[start:start + len(q)]
        start += len(q)
        if part.size == 0 or part.max() <= TOLERANCE:
            continue
        k, g = np.unravel_index(np.argmax(part), part.shape)
        first, second = result.names[g]
        out.append(f"{kind} {first} and {second} {clearance[g] - part[k, g]:.4g} m apart, clearance "
                   f"{clearance[g]:.4g} m")
    return out


def check_points(points: CommandPoints, robot: RobotModel, limits: DesignLimits) -> list[str]:
    """Every problem of one command (empty: it keeps the arm within the limits)."""
    if points.joint_names != tuple(limits.joint_names):
        return [f"joints {list(points.joint_names)} are not the robot's {list(limits.joint_names)}"]
    t, q, dq, ddq = points.t_rel_s, points.q_rad, points.dq_rad_s, points.ddq_rad_s2
    if len(t) == 0:
        return ["no points"]
    if not (np.isfinite(points.stamp_s) and all(np.isfinite(x).all() for x in (t, q, dq, ddq))):
        return ["values that are missing or not finite"]
    if t[0] < 0 or np.any(np.diff(t) <= 0):
        return ["times from start that are negative or do not increase"]
    problems = [f"point {p}" for p in _joint_excess(limits, q, dq, ddq, TOLERANCE)]
    problems += [f"point {p}" for p in _cartesian(robot, limits, q, dq)]
    poses = {"point": q}
    if len(t) > 1:
        dt = np.diff(t)[:, None]
        problems += [f"finite-difference {p}" for p in _joint_excess(
            limits, q[:-1], np.diff(q, axis=0) / dt, np.diff(dq, axis=0) / dt, INTERPOLATION_TOLERANCE)
            if not p.startswith("position")]
        c = quintic_segments(q[:-1], dq[:-1], ddq[:-1], q[1:], dq[1:], ddq[1:], dt)
        between = evaluate_segments(c[:, None], INTERIOR[:, None, None] * dt[None])
        problems += [f"interpolated {p}" for p in _joint_excess(limits, *between, INTERPOLATION_TOLERANCE)]
        poses["interpolated"] = between[0][1]
    return problems + _distances(robot, limits, poses)


def check_command(msg: object, robot: RobotModel, limits: DesignLimits) -> list[str]:
    """check_points on a JointTrajectory message."""
    return check_points(command_points(msg), robot, limits)


class ControllerModel:
    """A joint trajectory controller as docs/safety.md assumes it (closed loop, without acceleration state
    interfaces, as for the iiwa and the Panda): a command replaces the previous one when it arrives; from the
    arm's position and velocity then, with zero acceleration, the arm moves along a quintic to the first point
    (points already due are skipped), then along quintics through the points, and it rests at the last one."""

    def __init__(self, q_rad: np.ndarray) -> None:
        q = np.asarray(q_rad, dtype=float)
        self._t = np.zeros(1)
        self._rest = q
        self._c = np.zeros((6, 0, len(q)))

    def receive(self, arrival_s: float, points: CommandPoints, state: tuple[np.ndarray, ...] | None = None) -> None:
        """A command arrives; the arm is in `state` (q, dq, ...) then, or where this model has it."""
        q0, dq0 = (state if state is not None else self.state(arrival_s))[:2]
        ddq0 = np.zeros_like(q0)
        due = points.due_s(arrival_s)
        keep = due > arrival_s
        if not keep.any():
            keep[-1] = True
            due = np.where(np.arange(len(due)) == len(due) - 1, arrival_s + 1e-9, due)
        self._t = np.r_[arrival_s, due[keep]]
        q, dq, ddq = (np.vstack([x0, x[keep]]) for x0, x in (
            (q0, points.q_rad), (dq0, points.dq_rad_s), (ddq0, points.ddq_rad_s2)))
        self._c = quintic_segments(q[:-1], dq[:-1], ddq[:-1], q[1:], dq[1:], ddq[1:], np.diff(self._t)[:, None])
        self._rest = q[-1]

    def state(self, t_s: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q, dq, ddq at t_s (at rest at the last point after it)."""
        k = int(np.searchsorted(self._t, t_s, side="right")) - 1
        if k >= self._c.shape[1]:
            return self._rest.copy(), np.zeros_like(self._rest), np.zeros_like(self._rest)
        k = max(k, 0)
        tau = max(t_s - self._t[k], 0.0)
        t2, t3 = tau * tau, tau * tau * tau
        c = self._c[:, k]
        return (np.array([1.0, tau, t2, t3, t3 * tau, t3 * t2]) @ c,
                np.array([0.0, 1.0, 2 * tau, 3 * t2, 4 * t3, 5 * t3 * tau]) @ c,
                np.array([0.0, 0.0, 2.0, 6 * tau, 12 * t2, 20 * t3]) @ c)

    def first_segment(self, samples: int = 21) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q, dq, ddq (samples, n) along the motion from the state at arrival to the first point."""
        tau_s = np.linspace(0.0, self._t[1] - self._t[0], samples)[:, None]
        return evaluate_segments(self._c[:, 0][:, None], tau_s)


def check_transition(controller: ControllerModel, arrival_s: float, points: CommandPoints, limits: DesignLimits,
                     state: tuple[np.ndarray, ...] | None = None,
                     tolerance: float = INTERPOLATION_TOLERANCE) -> list[str]:
    """Let the command arrive at the controller; what of the motion from the arm's state to its first point
    lies beyond the joint limits."""
    controller.receive(arrival_s, points, state)
    return [f"on the way to the first point: {p}" for p in _joint_excess(limits, *controller.first_segment(),
                                                                          tolerance)]
