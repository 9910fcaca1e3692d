"""What the excitation state machine checks before the arm moves, and where a hold stops it (docs/safety.md).

A hold is one point at rest that a joint trajectory controller reaches along a quintic from the state (q, dq, 0):
over a duration T it travels dq·T/2 with a peak deceleration of 1.5·|dq|/T per joint.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from robot_id_excitation.check import CHECK_STEP_S, check_trajectory, time_grid
from robot_id_excitation.constraints import DEFAULT_TOLERANCE, DesignLimits, constraint_groups
from robot_id_excitation.quintic import REST_TO_REST_PEAK_ACCELERATION, evaluate_quintic, quintic_coefficients
from robot_id_excitation.trajectory_file import Trajectory
from robot_id_model.collision_geometry import CollisionGeometry, pair_lists
from robot_id_model.robot_model import RobotModel

STOP_ACCELERATION_FRACTION = 0.5
"""A hold decelerates with at most this fraction of the acceleration limits, unless a position limit or the
floor is closer than such a stop travels: then it decelerates harder, at most with the full limits."""
MIN_STOP_S = 0.1
"""Shortest stop (a hold from rest too)."""
MIN_LEAD_S = 0.04
"""Shortest lead of a command: two steps of the node, so that a command arrives before its first point is due."""
MAX_DIFFERENCE_S = 0.1
"""Joint states without velocities: the finite difference of two positions at most this far apart."""
MAX_STEP_GAP_S = 0.5
"""Steps further apart than this while moving are taken as a jump of the clock (or a stall): the run holds."""
STOP_CANDIDATES = 8
"""Stop durations tried between the half- and the full-acceleration one."""


def stop_duration_s(dq_rad_s: np.ndarray, acceleration_rad_s2: np.ndarray, fraction: float) -> float:
    """Duration of a quintic stop from dq whose peak deceleration is `fraction` of the limits (≥ MIN_STOP_S)."""
    a = fraction * np.asarray(acceleration_rad_s2, dtype=float)
    return max(MIN_STOP_S, float(np.max(1.5 * np.abs(dq_rad_s) / a)))


def stop_point(
    q_rad: np.ndarray, dq_rad_s: np.ndarray, acceleration_rad_s2: np.ndarray, lower_rad: np.ndarray,
    upper_rad: np.ndarray,
) -> tuple[np.ndarray, float]:
    """Where and when a quintic from (q, dq, 0) to rest stops with peak deceleration ≤ STOP_ACCELERATION_FRACTION·a.

    The quintic to q + dq·T/2 has peak acceleration 1.5·|dq|/T, so T = 1.5·max|dq|/a (at least MIN_STOP_S).
    """
    duration_s = stop_duration_s(dq_rad_s, acceleration_rad_s2, STOP_ACCELERATION_FRACTION)
    return np.clip(q_rad + 0.5 * dq_rad_s * duration_s, lower_rad, upper_rad), duration_s


def _inside(robot: RobotModel, limits: DesignLimits, q_rad: np.ndarray) -> bool:
    """The pose is within the position limits, no link origin nor the flange is below the floor, and no two links
    nor a link and the environment are closer than the clearance."""
    zeros = np.zeros((1, len(q_rad)))
    groups = constraint_groups(robot, limits, q_rad[None, :], zeros, zeros)
    return all(g.value[0] <= DEFAULT_TOLERANCE for g in groups if g.constraint in ("position", "floor", "collision"))


def hold_point(robot: RobotModel, limits: DesignLimits, q_rad: np.ndarray,
               dq_rad_s: np.ndarray) -> tuple[np.ndarray, float]:
    """The stop of a hold from (q, dq): stop_point if its target is inside the limits, above the floor and keeps the
    clearance, else the longest of STOP_CANDIDATES shorter stops (down to the full acceleration limits) whose target
    is. If none is, the full-acceleration stop with the limits first: clamped to the position limits, or q itself
    if that is below the floor or within the clearance; but an arm something pushed outside already is not pulled
    back (no joint beyond its limits is clamped, nor the arm below the floor held at q): it stops where that stop
    takes it.
    """
    a = limits.acceleration_rad_s2
    slow_s = stop_duration_s(dq_rad_s, a, STOP_ACCELERATION_FRACTION)
    fast_s = stop_duration_s(dq_rad_s, a, 1.0)
    for duration_s in np.geomspace(slow_s, fast_s, STOP_CANDIDATES if slow_s > fast_s else 1):
        target = q_rad + 0.5 * dq_rad_s * duration_s
        if _inside(robot, limits, target):
            return target, float(duration_s)
    lower, upper = limits.position_lower_rad, limits.position_upper_rad
    free = q_rad + 0.5 * dq_rad_s * fast_s
    target = np.where((q_rad >= lower) & (q_rad <= upper), np.clip(free, lower, upper), free)
    if _inside(robot, limits, target) or not _inside(robot, limits, q_rad):
        return target, fast_s
    return q_rad, fast_s


def hold_state(t_s: float, states: JointStateStream, commanded: Callable[[float], tuple[np.ndarray, ...] | None],
               timeout_s: float, leap_from_s: float | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """(q, dq) a hold at t_s stops from (None if unknown): the commanded state if the joint states are stale;
    else the latest measured one (a missing velocity: the commanded one), moved on by what the command did since
    it was measured. On the command's clock t_s is later by how far the clock jumped back, if it did; after a
    leap ahead (from leap_from_s, the last step before it) the clock is not trusted: a state received since that
    step is taken as it is, else the command then."""
    leap = leap_from_s is not None
    at_s = leap_from_s if leap else t_s + states.jump_s
    fresh = states.t_s is not None and (states.t_s > leap_from_s if leap else states.fresh(t_s, timeout_s))
    if states.q_rad is None or not fresh:
        return commanded(at_s)
    then = commanded(at_s if leap else states.measured_s)
    if then is None:
        return states.q_rad, states.dq_rad_s if states.dq_rad_s is not None else np.zeros_like(states.q_rad)
    now = then if leap else commanded(max(at_s, states.measured_s))
    dq = states.dq_rad_s if states.dq_rad_s is not None else then[1]
    return states.q_rad + now[0] - then[0], dq + now[1] - then[1]


def controller_samples(t_rel_s: np.ndarray, q_rad: np.ndarray, dq_rad_s: np.ndarray,
                       ddq_rad_s2: np.ndarray) -> tuple[np.ndarray, ...]:
    """The points of a command (equally spaced in time) and the quarter points of the quintics a joint trajectory
    controller runs between them, which at a low rate can leave the limits the points keep."""
    if len(t_rel_s) < 2:
        return t_rel_s, q_rad, dq_rad_s, ddq_rad_s2
    dt_s = float(t_rel_s[1] - t_rel_s[0])
    c = quintic_coefficients(dt_s, (q_rad[:-1], dq_rad_s[:-1], ddq_rad_s2[:-1]), (q_rad[1:], dq_rad_s[1:],
                                                                                  ddq_rad_s2[1:]))
    inner = [evaluate_quintic(c, np.array([x * dt_s])) for x in (0.25, 0.5, 0.75)]
    return (np.r_[t_rel_s, *(t_rel_s[:-1] + x * dt_s for x in (0.25, 0.5, 0.75))],
            *(np.vstack([points, *(v[i] for v in inner)]) for i, points in enumerate((q_rad, dq_rad_s, ddq_rad_s2))))


def allowance_refusal(carried: frozenset[frozenset[str]], collision: CollisionGeometry | None) -> str:
    """Why a trajectory designed allowing the pairs `carried` closer than the clearance must not be used with this
    collision geometry ('' if it may): the geometry allows pairs the trajectory was not designed allowing, or does
    not allow one it was. Without collision geometry nothing is checked (and said so), so nothing is refused."""
    if collision is None or carried == collision.allowed_pairs:
        return ""

    def named(pairs: frozenset[frozenset[str]]) -> str:
        return ", ".join("–".join(pair) for pair in pair_lists(pairs))

    extra, missing = collision.allowed_pairs - carried, carried - collision.allowed_pairs
    reasons = [f"was not designed allowing {named(extra)} closer than the clearance, as the collision geometry "
               f"does ({collision.source}): use it without that allowance, or design it again with it"] if extra else []
    reasons += [f"was designed allowing {named(missing)} closer than the clearance, which the collision geometry "
                f"does not allow ({collision.source}; --allow-pair with --urdf, allowed_pairs in the robot's "
                "collision file)"] if missing else []
    return "the trajectory " + "; and it ".join(reasons)


def trajectory_refusal(trajectory: Trajectory, robot: RobotModel, limits: DesignLimits, robot_name: str = "",
                       carried_pairs: frozenset[frozenset[str]] | None = None) -> str:
    """Why the trajectory must not be run on this robot ('' if it may): made for another robot (when robot_name
    is given), other joints, designed with other allowed pairs than the limits' collision geometry allows (when
    `carried_pairs`, the file's trajectory_file.recorded_allowed_pairs, are given; not for a trajectory designed
    against these limits), values that are not finite, or beyond the limits somewhere in its period."""
    if robot_name and trajectory.robot != robot_name:
        return f"the trajectory was made for robot '{trajectory.robot}', this robot is '{robot_name}'"
    allowance = "" if carried_pairs is None else allowance_refusal(carried_pairs, limits.collision)
    if allowance:
        return allowance
    if tuple(trajectory.joint_names) != tuple(limits.joint_names):
        return f"trajectory joints {list(trajectory.joint_names)} differ from the robot's {list(limits.joint_names)}"
    if not np.isfinite(trajectory.period_s):
        return f"the trajectory's period {trajectory.period_s} s is not finite"
    samples = int(np.ceil(trajectory.period_s / CHECK_STEP_S))
    if not all(np.isfinite(x).all() for x in trajectory.evaluate(time_grid(trajectory.period_s, samples))):
        return "the trajectory has values that are not finite (NaN or inf)"
    report = check_trajectory(robot, limits, trajectory, samples)
    if not report.feasible:
        return "trajectory violates the robot's limits:\n" + "\n".join(report.lines())
    return ""


def clock_refusal(offset_s: float | None, max_offset_s: float) -> str | None:
    """Why the arm may not start when the robot's joint states are stamped further than `max_offset_s` from the
    node's clock (0: not checked; None: no offset known yet): the commands carry absolute stamps."""
    if max_offset_s <= 0.0 or offset_s is None or abs(offset_s) <= max_offset_s:
        return None
    return (f"the robot's joint states are stamped {abs(offset_s):.3f} s {'behind' if offset_s > 0 else 'ahead of'} "
            f"this node's clock (at most {max_offset_s} s): the commands carry absolute stamps; synchronise the two "
            "computers' clocks (chrony or PTP) and start again")


def start_refusal(limits: DesignLimits, q_rad: np.ndarray, dq_rad_s: np.ndarray | None, max_speed_rad_s: float,
                  start_pose_rad: np.ndarray) -> str:
    """Why the arm must not start from the measured state ('' if it may): a start pose that is not finite, the arm
    outside its position limits, or moving (no velocities measured: taken as at rest)."""
    if not np.isfinite(start_pose_rad).all():
        return "the trajectory's start pose is not finite"
    outside = (q_rad < limits.position_lower_rad) | (q_rad > limits.position_upper_rad)
    if outside.any():
        return f"joints {[limits.joint_names[i] for i in np.flatnonzero(outside)]} are outside their position limits"
    speed_rad_s = np.abs(dq_rad_s) if dq_rad_s is not None else np.zeros(len(q_rad))
    if speed_rad_s.max() > max_speed_rad_s:
        j = int(np.argmax(speed_rad_s))
        return (f"the arm is moving ({speed_rad_s[j]:.3f} rad/s on {limits.joint_names[j]}; at rest is below "
                f"{max_speed_rad_s} rad/s)")
    return ""


def start_tolerance_rad(limits: DesignLimits, max_start_error_rad: float, lead_s: float) -> np.ndarray:
    """How far (per joint) the arm may be from the start pose when the excitation starts: max_start_error_rad,
    and no more than the controller closes within lead_s at the acceleration limit (a rest-to-rest quintic)."""
    return np.minimum(max_start_error_rad, limits.acceleration_rad_s2 * lead_s**2 / REST_TO_REST_PEAK_ACCELERATION)


class JointStateStream:
    """The latest good joint state and the first fault of the stream: a state that is not finite, one stamped
    before the previous one, or a clock (receipt or step time) that goes back. A repeated stamp is no news.

    A state's age counts from its receipt plus its delay: how much longer than the quickest state of the stream it
    took from its stamp to its receipt (the stamp's clock may be offset from the caller's; a constant offset
    cancels). A stream that keeps arriving but falls behind, as through a growing queue, thus turns stale too."""

    def __init__(self, n_joints: int) -> None:
        self.n_joints = n_joints
        self.q_rad: np.ndarray | None = None
        self.dq_rad_s: np.ndarray | None = None
        """measured, or the finite difference of the last two positions; None if neither"""
        self.t_s: float | None = None
        """receipt time of the latest good state"""
        self.delay_s = 0.0
        """how much later than the stream's quickest the latest good state was received (0 if unstamped)"""
        self._min_latency_s: float | None = None
        self.first_s: float | None = None
        self.fault = ""
        self._stamp_s: float | None = None
        self.latest_s: float | None = None
        """the latest time seen (it never goes back)"""
        self.jump_s = 0.0
        """how far the clock went back (at least), if it did: add it to the times that follow"""
        self._tick_s: float | None = None

    def receive(self, t_s: float, q_rad: np.ndarray, dq_rad_s: np.ndarray | None, stamp_s: float | None) -> None:
        q = np.asarray(q_rad, dtype=float)
        dq = None if dq_rad_s is None else np.asarray(dq_rad_s, dtype=float)
        shape = (self.n_joints,)
        if q.shape != shape or not np.isfinite(q).all() or (dq is not None and (
                dq.shape != shape or not np.isfinite(dq).all())):
            self._latch("a joint state is not finite (NaN or inf) or has the wrong size")
            return
        if not self.clock(t_s):
            return
        if stamp_s is not None and self._stamp_s is not None and stamp_s <= self._stamp_s:
            if stamp_s < self._stamp_s:
                self._latch(f"joint states out of order (stamped {self._stamp_s - stamp_s:.3f} s before the previous)")
            return
        if dq is None and self.q_rad is not None:  # the finite difference, by the stamps if there are
            dt_s = stamp_s - self._stamp_s if stamp_s is not None and self._stamp_s is not None else t_s - self.t_s
            dq = (q - self.q_rad) / dt_s if 0 < dt_s <= MAX_DIFFERENCE_S else None
        self.q_rad, self.dq_rad_s, self.t_s = q, dq, t_s
        self.delay_s = 0.0
        if stamp_s is not None:
            latency_s = t_s - stamp_s
            self._min_latency_s = latency_s if self._min_latency_s is None else min(self._min_latency_s, latency_s)
            self.delay_s = latency_s - self._min_latency_s
        self._stamp_s = stamp_s if stamp_s is not None else self._stamp_s
        self.first_s = t_s if self.first_s is None else self.first_s

    @property
    def clock_offset_s(self) -> float | None:
        """The caller's clock minus the stamps' at the quickest receipt (their offset plus the least transport
        time); None while no stamped state came."""
        return self._min_latency_s

    def clock(self, t_s: float) -> bool:
        """Note the caller's time; False (and a fault) if it went back."""
        if self.latest_s is not None and t_s < self.latest_s:
            self.jump_s = self.jump_s or self.latest_s - t_s
            self._latch(f"time jumped back by {self.jump_s:.3g} s")
            return False
        self.latest_s = t_s
        return True

    def tick(self, t_s: float) -> float:
        """A step of the caller at t_s: the time since its previous step (0 if the clock went back)."""
        elapsed_s = t_s - self._tick_s if self.clock(t_s) and self._tick_s is not None else 0.0
        self._tick_s = self.latest_s
        return elapsed_s

    @property
    def measured_s(self) -> float | None:
        """When the latest good state was measured, on the caller's clock (its receipt less its delay)."""
        return None if self.t_s is None else self.t_s - self.delay_s

    def age_s(self, t_s: float) -> float:
        """How old the latest good state is at t_s (inf if there is none)."""
        return math.inf if self.t_s is None else t_s - self.measured_s

    def fresh(self, t_s: float, timeout_s: float) -> bool:
        return self.age_s(t_s) <= timeout_s

    def _latch(self, fault: str) -> None:
        self.fault = self.fault or fault
