"""The excitation node: moves the arm to the start pose, then streams N periods to a joint trajectory controller.

Publishes the trajectory description (robot_id_msgs/ExcitationTrajectory, transient local) on
/robot_id/excitation_trajectory and a robot_id_msgs/PeriodMarker on /robot_id/period_marker at every period
start. Commands go to the robot config's joint trajectory topic (the controller's ~/joint_trajectory), one
message per period (longer periods in pieces of at most `max_chunk_s`), each overlapping the previous one by
`overlap_s` so the controller's re-planning at arrival lands on the same curve.

Safety: the trajectory is checked against the robot config's hard limits when loaded, and every point of
every message again before it is sent; it refuses to start if the joint states are stale or the robot did
not reach the start pose; it holds (a single stop point, decelerating within half the acceleration limits)
on ~/abort, when joint states stop arriving, when tracking error grows beyond `max_tracking_error_rad`, and
on Ctrl-C. In `hardware` mode nothing moves until the parameter `confirm` is set to true.

Parameters: robot (config path or installed name), trajectory_file (path, or a shipped name such as iiwa14;
empty: design one on start-up with the design.* parameters), num_periods, mode (sim | hardware), confirm,
state_timeout_s, max_start_error_rad, max_tracking_error_rad (0: off), start_delay_s, approach_speed_rad_s,
approach_acceleration_rad_s2, settle_s, rate_hz (points per second), lead_s, overlap_s, max_chunk_s.
"""

from __future__ import annotations

import math
import signal
import sys

import numpy as np
import rclpy
from builtin_interfaces.msg import Duration, Time
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_id_excitation.check import check_trajectory
from robot_id_excitation.constraints import check_samples, design_limits
from robot_id_excitation.design import DesignError, DesignOptions, design_excitation
from robot_id_excitation.fourier import FourierTrajectory
from robot_id_excitation.quintic import evaluate_quintic, quintic_coefficients, rest_to_rest_duration
from robot_id_excitation.trajectory_file import Trajectory, load_trajectory
from robot_id_model.robot_config import load_robot_config
from robot_id_model.robot_model import ModelError
from robot_id_msgs.msg import ExcitationTrajectory, PeriodMarker

TRAJECTORY_TOPIC = "/robot_id/excitation_trajectory"
MARKER_TOPIC = "/robot_id/period_marker"
STOP_ACCELERATION_FRACTION = 0.5
"""A hold decelerates with at most this fraction of the acceleration limits."""


def _time_msg(seconds: float) -> Time:
    sec, nanosec = divmod(round(seconds * 1e9), 1_000_000_000)
    return Time(sec=sec, nanosec=nanosec)


def _duration_msg(seconds: float) -> Duration:
    sec, nanosec = divmod(round(seconds * 1e9), 1_000_000_000)
    return Duration(sec=sec, nanosec=nanosec)


def stop_point(
    q_rad: np.ndarray, dq_rad_s: np.ndarray, acceleration_rad_s2: np.ndarray, lower_rad: np.ndarray,
    upper_rad: np.ndarray,
) -> tuple[np.ndarray, float]:
    """Where and when a quintic from (q, dq, 0) to rest stops with peak deceleration ≤ STOP_ACCELERATION_FRACTION·a.

    The quintic to q + dq·T/2 has peak acceleration 1.5·|dq|/T, so T = 1.5·max|dq|/a (at least 0.1 s).
    """
    a = STOP_ACCELERATION_FRACTION * np.asarray(acceleration_rad_s2, dtype=float)
    duration = max(0.1, float(np.max(1.5 * np.abs(dq_rad_s) / a)))
    return np.clip(q_rad + 0.5 * dq_rad_s * duration, lower_rad, upper_rad), duration


class ExcitationNode(Node):
    def __init__(self, **kwargs) -> None:
        super().__init__("excitation", **kwargs)
        p = self.declare_parameter
        self.robot_param = p("robot", "").value
        self.trajectory_file = p("trajectory_file", "").value
        self.num_periods = int(p("num_periods", 5).value)
        self.mode = p("mode", "sim").value
        p("confirm", False)
        self.state_timeout_s = float(p("state_timeout_s", 0.2).value)
        self.max_start_error_rad = float(p("max_start_error_rad", 0.02).value)
        self.max_tracking_error_rad = float(p("max_tracking_error_rad", 0.3).value)
        self.start_delay_s = float(p("start_delay_s", 1.0).value)
        self.approach_speed_rad_s = float(p("approach_speed_rad_s", 0.2).value)
        self.approach_acceleration_rad_s2 = float(p("approach_acceleration_rad_s2", 0.5).value)
        self.settle_s = float(p("settle_s", 0.5).value)
        self.rate_hz = float(p("rate_hz", 100.0).value)
        self.lead_s = float(p("lead_s", 0.1).value)
        self.overlap_s = float(p("overlap_s", 0.5).value)
        self.max_chunk_s = float(p("max_chunk_s", 30.0).value)
        design = {
            "kind": p("design.kind", "modified_fourier").value,
            "harmonics": int(p("design.harmonics", 5).value),
            "base_frequency_hz": float(p("design.base_frequency_hz", 0.05).value),
            "criterion": p("design.criterion", "cond").value,
            "starts": int(p("design.starts", 4).value),
            "seed": int(p("design.seed", 0).value),
            "time_limit_s": float(p("design.time_limit_s", 300.0).value),
        }
        design_margin = float(p("design.position_margin_rad", 0.1).value)
        design_velocity_scale = float(p("design.velocity_scale", 1.0).value)
        design_friction = tuple(p("design.friction", ["FV", "FC"]).value)

        if self.mode not in ("sim", "hardware"):
            raise ValueError(f"mode must be 'sim' or 'hardware', got '{self.mode}'")
        if not self.robot_param:
            raise ValueError("parameter 'robot' (robot config path or name) is required")
        self.config = load_robot_config(self.robot_param)
        self.robot = self.config.load_model(design_friction)
        self.hard_limits = design_limits(self.config)
        self.trajectory = self._load_or_design(design, design_margin, design_velocity_scale)
        report = check_trajectory(self.robot, self.hard_limits, self.trajectory)
        if not report.feasible:
            raise ValueError("trajectory violates the robot's limits:\n" + "\n".join(report.lines()))
        self.start_pose = self.trajectory.evaluate(np.zeros(1))[0][0]

        self.state = "waiting_for_joint_states"
        self.reason = ""
        self.q_meas: np.ndarray | None = None
        self.dq_meas = np.zeros(self.robot.n_joints)
        self.last_state_s: float | None = None
        self.first_state_s: float | None = None
        self.motion: dict = {}
        self._warned: set[str] = set()

        self.command_pub = self.create_publisher(JointTrajectory, self.config.joint_trajectory_topic, 10)
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             reliability=ReliabilityPolicy.RELIABLE)
        self.description_pub = self.create_publisher(ExcitationTrajectory, TRAJECTORY_TOPIC, latched)
        self.marker_pub = self.create_publisher(PeriodMarker, MARKER_TOPIC, 10)
        self.create_subscription(JointState, self.config.joint_states_topic, self._on_joint_state,
                                 qos_profile_sensor_data)
        self.create_service(Trigger, "~/abort", self._on_abort)
        self.create_timer(0.02, self._tick)
        self.get_logger().info(
            f"{self.config.robot}: {self.trajectory.kind} trajectory, period {self.trajectory.period_s:.3g} s, "
            f"{self.num_periods} period(s), mode {self.mode}; commands on {self.config.joint_trajectory_topic}, "
            f"joint states from {self.config.joint_states_topic}"
        )

    # -- set-up --------------------------------------------------------------------------------------------
    def _load_or_design(self, design: dict, margin: float, velocity_scale: float) -> Trajectory:
        if self.trajectory_file:
            trajectory = load_trajectory(self.trajectory_file)
        else:
            self.get_logger().info("no trajectory_file: designing one (this takes minutes)")
            limits = design_limits(self.config, margin, velocity_scale)
            try:
                result = design_excitation(self.robot, limits, DesignOptions(**design), self.config.robot,
                                           progress=lambda line: self.get_logger().info(line))
            except DesignError as err:
                raise ValueError(str(err)) from None
            trajectory = result.trajectory
        if tuple(trajectory.joint_names) != tuple(self.config.joint_names):
            raise ValueError(f"trajectory joints {trajectory.joint_names} differ from the robot's "
                             f"{self.config.joint_names}")
        return trajectory

    # -- helpers -------------------------------------------------------------------------------------------
    def _now_s(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _states_fresh(self, now: float) -> bool:
        return self.last_state_s is not None and now - self.last_state_s <= self.state_timeout_s

    def _refuse(self, reason: str) -> None:
        self.state, self.reason = "refused", reason
        self.get_logger().error(f"refusing to move: {reason}")

    def _checked_message(self, stamp_s: float, t_rel: np.ndarray, q: np.ndarray, dq: np.ndarray,
                         ddq: np.ndarray) -> JointTrajectory | None:
        """A JointTrajectory of the points, or None (after logging why) if any point breaks a hard limit."""
        report = check_samples(self.robot, self.hard_limits, t_rel, q, dq, ddq)
        if not report.feasible:
            self.get_logger().error("not sending a trajectory that breaks a limit: " + report.violations[0].describe())
            return None
        msg = JointTrajectory(joint_names=list(self.config.joint_names))
        msg.header.stamp = _time_msg(stamp_s)
        msg.points = [
            JointTrajectoryPoint(positions=q[k].tolist(), velocities=dq[k].tolist(), accelerations=ddq[k].tolist(),
                                 time_from_start=_duration_msg(float(t_rel[k])))
            for k in range(len(t_rel))
        ]
        return msg

    def _commanded(self, now: float) -> tuple[np.ndarray, np.ndarray] | None:
        """Commanded position and velocity now, if a motion is under way."""
        if self.state == "approaching":
            m = self.motion
            tau = np.clip(np.array([now - m["start_s"]]), 0.0, m["duration_s"])
            q, dq, _ = evaluate_quintic(m["coefficients"], tau)
            return q[0], dq[0]
        if self.state == "exciting":
            q, dq, _ = self.trajectory.evaluate(np.array([max(0.0, now - self.motion["t0_s"])]))
            return q[0], dq[0]
        return None

    def hold(self, reason: str) -> None:
        """Stop where the arm can: a single point ahead of the measured (or, if stale, commanded) state."""
        now = self._now_s()
        commanded = self._commanded(now)
        if self._states_fresh(now) or commanded is None:
            q, dq = self.q_meas, self.dq_meas
        else:
            q, dq = commanded
        self.state, self.reason = "holding", reason
        if q is None:
            self.get_logger().error(f"hold ({reason}): no joint state known, nothing sent")
            return
        target, duration = stop_point(q, dq, self.hard_limits.acceleration_rad_s2,
                                      self.hard_limits.position_lower_rad, self.hard_limits.position_upper_rad)
        msg = JointTrajectory(joint_names=list(self.config.joint_names))
        msg.points = [JointTrajectoryPoint(positions=target.tolist(), velocities=[0.0] * len(target),
                                           accelerations=[0.0] * len(target),
                                           time_from_start=_duration_msg(duration))]
        self.command_pub.publish(msg)
        self.get_logger().warning(f"holding: {reason}")

    # -- callbacks -----------------------------------------------------------------------------------------
    def _on_joint_state(self, msg: JointState) -> None:
        index = {name: i for i, name in enumerate(msg.name)}
        missing = [j for j in self.config.joint_names if j not in index]
        if missing:
            if "names" not in self._warned:
                self._warned.add("names")
                self.get_logger().warning(f"joint states without {missing}; ignored")
            return
        idx = [index[j] for j in self.config.joint_names]
        self.q_meas = np.array([msg.position[i] for i in idx])
        if len(msg.velocity) == len(msg.name):
            self.dq_meas = np.array([msg.velocity[i] for i in idx])
        self.last_state_s = self._now_s()
        if self.first_state_s is None:
            self.first_state_s = self.last_state_s

    def _on_abort(self, _request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        moving = self.state in ("approaching", "exciting")
        if moving:
            self.hold("abort requested")
        elif self.state not in ("holding", "done"):
            self.state, self.reason = "aborted", "abort requested before motion"
        response.success = True
        response.message = f"state {self.state}: {self.reason}" if moving else f"not moving (state {self.state})"
        return response

    def _tick(self) -> None:
        now = self._now_s()
        if self.state in ("approaching", "exciting"):
            if not self._states_fresh(now):
                self.hold(f"joint states stopped arriving (none for {now - self.last_state_s:.2f} s)")
                return
            commanded = self._commanded(now)
            error = np.abs(commanded[0] - self.q_meas).max()
            if self.max_tracking_error_rad > 0 and error > self.max_tracking_error_rad:
                self.hold(f"tracking error {error:.3f} rad exceeds {self.max_tracking_error_rad} rad")
                return
        handler = {
            "waiting_for_joint_states": self._tick_waiting,
            "approaching": self._tick_approaching,
            "exciting": self._tick_exciting,
        }.get(self.state)
        if handler is not None:
            handler(now)

    def _tick_waiting(self, now: float) -> None:
        if self.first_state_s is None or now - self.first_state_s < self.start_delay_s:
            return
        if self.mode == "hardware" and not self.get_parameter("confirm").value:
            if "confirm" not in self._warned:
                self._warned.add("confirm")
                self.get_logger().warning("hardware mode: set the parameter confirm:=true to start moving")
            return
        if not self._states_fresh(now):
            self._refuse(f"joint states are stale (last {now - self.last_state_s:.2f} s ago, "
                         f"timeout {self.state_timeout_s} s)")
            return
        lim = self.hard_limits
        outside = (self.q_meas < lim.position_lower_rad) | (self.q_meas > lim.position_upper_rad)
        if outside.any():
            self._refuse(f"joints {[self.config.joint_names[i] for i in np.flatnonzero(outside)]} are outside "
                         "their position limits")
            return
        self._start_approach(now)

    def _start_approach(self, now: float) -> None:
        distance = self.start_pose - self.q_meas
        if np.abs(distance).max() <= self.max_start_error_rad:
            self._start_excitation(now)
            return
        n = self.robot.n_joints
        duration = rest_to_rest_duration(distance, np.full(n, self.approach_speed_rad_s),
                                         np.full(n, self.approach_acceleration_rad_s2))
        zeros = np.zeros(n)
        coefficients = quintic_coefficients(duration, (self.q_meas, zeros, zeros), (self.start_pose, zeros, zeros))
        t_rel = np.linspace(0.0, duration, max(2, int(np.ceil(duration * self.rate_hz)) + 1))
        start = now + self.lead_s
        msg = self._checked_message(start, t_rel, *evaluate_quintic(coefficients, t_rel))
        if msg is None:
            self._refuse("the approach to the start pose breaks a limit")
            return
        self.motion = {"start_s": start, "duration_s": duration, "coefficients": coefficients}
        self.state = "approaching"
        self.command_pub.publish(msg)
        self.get_logger().info(f"moving to the start pose in {duration:.1f} s "
                               f"(largest distance {np.abs(distance).max():.3f} rad)")

    def _tick_approaching(self, now: float) -> None:
        if now < self.motion["start_s"] + self.motion["duration_s"] + self.settle_s:
            return
        error = np.abs(self.q_meas - self.start_pose)
        if error.max() > self.max_start_error_rad:
            j = int(np.argmax(error))
            self.hold("did not reach the start pose")
            self._refuse(f"robot is {error[j]:.3f} rad from the start pose on {self.config.joint_names[j]} "
                         f"(allowed {self.max_start_error_rad} rad)")
            return
        self._start_excitation(now)

    def _start_excitation(self, now: float) -> None:
        period = self.trajectory.period_s
        pieces = max(1, math.ceil(period / self.max_chunk_s))
        t0 = now + self.lead_s + self.overlap_s
        chunks = [(k, k * period + j * period / pieces, period / pieces)
                  for k in range(self.num_periods) for j in range(pieces)]
        self.motion = {"t0_s": t0, "chunks": chunks, "next_chunk": 0, "next_marker": 0}
        self.state = "exciting"
        self._publish_description(t0)
        self.get_logger().info(f"excitation: {self.num_periods} period(s) of {period:.3g} s from t = {t0:.3f}")
        self._tick_exciting(now)

    def _publish_description(self, t0: float) -> None:
        traj = self.trajectory
        msg = ExcitationTrajectory(robot=self.config.robot, kind=traj.kind, joint_names=list(traj.joint_names),
                                   period_s=float(traj.period_s), base_frequency_hz=1.0 / float(traj.period_s),
                                   num_periods=self.num_periods)
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.start_time = _time_msg(t0)
        msg.offsets_rad = traj.rest_pose_rad.tolist()
        if isinstance(traj, FourierTrajectory):
            msg.base_frequency_hz = float(traj.base_frequency_hz)
            msg.harmonics = traj.harmonics
            msg.coefficients_a = traj.coefficients_a.ravel().tolist()
            msg.coefficients_b = traj.coefficients_b.ravel().tolist()
        self.description_pub.publish(msg)

    def _tick_exciting(self, now: float) -> None:
        m = self.motion
        t0, period = m["t0_s"], self.trajectory.period_s
        while m["next_chunk"] < len(m["chunks"]):
            _, start, length = m["chunks"][m["next_chunk"]]
            overlap = min(self.overlap_s, start)
            if now < t0 + start - overlap - self.lead_s:
                break
            t_rel = np.linspace(0.0, length + overlap, max(2, int(np.ceil((length + overlap) * self.rate_hz)) + 1))
            states = self.trajectory.evaluate(start - overlap + t_rel)
            msg = self._checked_message(t0 + start - overlap, t_rel, *states)
            if msg is None:
                self.hold("a commanded point breaks a limit")
                return
            self.command_pub.publish(msg)
            m["next_chunk"] += 1
        while m["next_marker"] < self.num_periods and now >= t0 + m["next_marker"] * period:
            marker = PeriodMarker(period_index=m["next_marker"], num_periods=self.num_periods, period_s=float(period))
            marker.header.stamp = _time_msg(t0 + m["next_marker"] * period)
            self.marker_pub.publish(marker)
            m["next_marker"] += 1
        if now >= t0 + self.num_periods * period + self.settle_s:
            self.state, self.reason = "done", f"{self.num_periods} period(s) commanded"
            self.get_logger().info("excitation finished")


def _interrupt(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def main(args: list[str] | None = None) -> None:
    # SIGINT and SIGTERM are handled here rather than by rclpy, so that a hold can still be published.
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _interrupt)
    node = None
    try:
        node = ExcitationNode()
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        if node is not None and node.state in ("approaching", "exciting") and rclpy.ok():
            node.hold("shutting down")
    except (ModelError, ValueError, FileNotFoundError) as err:
        print(f"excitation_node: error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
