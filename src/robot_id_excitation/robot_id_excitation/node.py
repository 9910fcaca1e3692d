"""The excitation node: moves the arm to the start pose, then streams N periods to a joint trajectory controller.

Publishes the trajectory description (robot_id_msgs/ExcitationTrajectory, transient local) on
robot_id/excitation_trajectory and a robot_id_msgs/PeriodMarker on robot_id/period_marker at every period start;
both names are relative, so a namespace holds one arm. Commands go to the robot config's joint trajectory topic
(the controller's ~/joint_trajectory), one message per period (longer periods in pieces of at most `max_chunk_s`),
each overlapping the previous one by `overlap_s` so the controller's re-planning at arrival lands on the same curve.

Safety (docs/safety.md): a trajectory for another robot, other joints or beyond the robot config's hard limits
is refused when loaded, and every point of every message is checked again before it is sent (with
`monitor_commands`, also by the independent checker of command_check.py, on the message itself); it refuses to
start if the joint states are stale or faulty, the arm is moving or outside its limits, or did not reach the
start pose; it holds (a single stop point, decelerating within the acceleration limits) on ~/abort, when joint
states stop arriving or are not finite or out of order, when the clock jumps back, when tracking error grows
beyond `max_tracking_error_rad`, and on Ctrl-C/SIGTERM. In `hardware` mode nothing moves until the parameter
`confirm` is set to true. After a hold, the node waits (at most STOP_ACK_TIMEOUT_S) for the controller to
acknowledge the stop before it is destroyed.

The decisions are ExcitationStateMachine's (excitation_state.py); this node moves messages between it and ROS.
Parameters: see parameters() (`ros2 param describe` shows their descriptions and ranges); all but `confirm` are
read once at start-up and therefore read-only.
"""

from __future__ import annotations

import math
import signal
import sys
from dataclasses import fields
from typing import Any

import numpy as np
import rclpy
from builtin_interfaces.msg import Duration, Time
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.duration import Duration as RclpyDuration
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState, TimeReference
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_id_excitation.command_check import check_command
from robot_id_excitation.constraints import design_limits
from robot_id_excitation.criteria import CRITERIA
from robot_id_excitation.design import DesignError, design_excitation
from robot_id_excitation.design_problem import DesignOptions
from robot_id_excitation.excitation_guard import trajectory_refusal
from robot_id_excitation.excitation_state import (
    Command,
    ExcitationSettings,
    ExcitationStateMachine,
    LogLine,
    Phase,
    Severity,
    Step,
)
from robot_id_excitation.fourier import KINDS, FourierTrajectory
from robot_id_excitation.trajectory_file import Trajectory, load_trajectory
from robot_id_model.robot_config import load_robot_config
from robot_id_model.robot_model import DEFAULT_FRICTION, FRICTION_TERMS, ModelError
from robot_id_msgs.msg import ExcitationStatus, ExcitationTrajectory, PeriodMarker

TRAJECTORY_TOPIC = "robot_id/excitation_trajectory"
MARKER_TOPIC = "robot_id/period_marker"
STATUS_TOPIC = "robot_id/excitation_status"
STOPPED = (Phase.HOLDING, Phase.REFUSED, Phase.ABORTED)
"""Phases after which the arm moves no more before its last period (ExcitationStatus.stopped)."""
ACK_TOPIC = "robot_id/sim_ack"
MODES = ("sim", "hardware")
STOP_ACK_TIMEOUT_S = 1.0
"""How long the node waits for the subscribers to acknowledge a stop command before it is destroyed."""


def _descriptor(description: str, *, floats: tuple[float, float] | None = None, ints: tuple[int, int] | None = None,
                read_only: bool = True, constraints: str = "") -> ParameterDescriptor:
    """A parameter descriptor with an inclusive range of floats or integers (step 1)."""
    descriptor = ParameterDescriptor(description=description, read_only=read_only,
                                     additional_constraints=constraints)
    if floats is not None:
        descriptor.floating_point_range = [FloatingPointRange(from_value=floats[0], to_value=floats[1])]
    if ints is not None:
        descriptor.integer_range = [IntegerRange(from_value=ints[0], to_value=ints[1], step=1)]
    return descriptor


def parameters() -> dict[str, tuple[object, ParameterDescriptor]]:
    """Name: (default, descriptor) of every parameter; new descriptors on each call (rclpy fills them in)."""
    return {
        "robot": ("", _descriptor("robot config: a path or an installed name such as iiwa14 (required)")),
        "trajectory_file": ("", _descriptor("trajectory file, or a shipped name such as iiwa14; empty: design one "
                                            "on start-up with the design.* parameters")),
        "num_periods": (5, _descriptor("periods to stream", ints=(1, 10_000))),
        "mode": ("sim", _descriptor("sim, or hardware (nothing moves until confirm is true)",
                                    constraints="one of " + ", ".join(MODES))),
        "confirm": (False, _descriptor("hardware mode: set to true to let the arm move", read_only=False)),
        "state_timeout_s": (0.2, _descriptor("joint states older than this are stale (s)", floats=(0.001, 10.0))),
        "max_start_error_rad": (0.02, _descriptor("largest distance from the start pose before the excitation (rad)",
                                                  floats=(0.0, math.pi))),
        "max_tracking_error_rad": (0.3, _descriptor("hold when a joint is further from the commanded position "
                                                    "(rad; 0: off)", floats=(0.0, math.pi))),
        "start_delay_s": (1.0, _descriptor("wait after the first joint state before moving (s)", floats=(0.0, 60.0))),
        "approach_speed_rad_s": (0.2, _descriptor("peak joint speed of the approach to the start pose (rad/s)",
                                                  floats=(0.001, 10.0))),
        "approach_acceleration_rad_s2": (0.5, _descriptor("peak joint acceleration of the approach (rad/s²)",
                                                          floats=(0.001, 100.0))),
        "settle_s": (0.5, _descriptor("wait after the approach and after the last period (s)", floats=(0.0, 60.0))),
        "rate_hz": (100.0, _descriptor("points per second of a command", floats=(1.0, 1000.0))),
        "lead_s": (0.1, _descriptor("send a command this long before its first point is due (s)", floats=(0.0, 5.0))),
        "overlap_s": (0.5, _descriptor("each command starts this long before the previous one ends (s)",
                                       floats=(0.0, 10.0))),
        "max_chunk_s": (30.0, _descriptor("longest command; longer periods are sent in pieces (s)",
                                          floats=(0.1, 3600.0))),
        "max_step_gap_s": (0.5, _descriptor("hold when two steps are further apart on the node's clock: a leap of the "
                                            "clock or a stall (s; 0: off, only in sim mode)", floats=(0.0, 60.0))),
        "ack_name": ("", _descriptor("sim: acknowledge each step on robot_id/sim_ack under this name, so that a "
                                     "lockstep simulation waits for this node (empty: no acknowledgements)")),
        "monitor_commands": (True, _descriptor("check every command message independently before it is sent "
                                               "(command_check.py); hold instead of sending one that fails")),
        "design.kind": ("modified_fourier", _descriptor("trajectory kind of a design",
                                                        constraints="one of " + ", ".join(KINDS))),
        "design.harmonics": (5, _descriptor("harmonics of a design", ints=(1, 50))),
        "design.base_frequency_hz": (0.05, _descriptor("base frequency of a design (Hz)", floats=(0.001, 10.0))),
        "design.criterion": ("cond", _descriptor("criterion of a design", constraints="one of " + ", ".join(CRITERIA))),
        "design.starts": (4, _descriptor("multi-start count of a design", ints=(1, 1000))),
        "design.seed": (0, _descriptor("random seed of a design", ints=(0, 2**31 - 1))),
        "design.time_limit_s": (300.0, _descriptor("time limit of a design (s)", floats=(1.0, 86_400.0))),
        "design.position_margin_rad": (0.1, _descriptor("margin inside the position limits of a design (rad)",
                                                        floats=(0.0, 1.0))),
        "design.velocity_scale": (1.0, _descriptor("fraction of the velocity limits a design may use",
                                                   floats=(0.01, 1.0))),
        "design.friction": (list(DEFAULT_FRICTION), _descriptor(
            "friction terms of the robot model (torque checks, design)",
            constraints="from " + ", ".join(FRICTION_TERMS))),
    }


def _time_msg(seconds: float) -> Time:
    sec, nanosec = divmod(round(seconds * 1e9), 1_000_000_000)
    return Time(sec=sec, nanosec=nanosec)


def _duration_msg(seconds: float) -> Duration:
    sec, nanosec = divmod(round(seconds * 1e9), 1_000_000_000)
    return Duration(sec=sec, nanosec=nanosec)


def trajectory_msg(joint_names: list[str], command: Command) -> JointTrajectory:
    """The message of a command (header stamp zero: due on arrival)."""
    msg = JointTrajectory(joint_names=list(joint_names))
    if command.stamp_s is not None:
        msg.header.stamp = _time_msg(command.stamp_s)
    msg.points = [
        JointTrajectoryPoint(positions=q.tolist(), velocities=dq.tolist(), accelerations=ddq.tolist(),
                             time_from_start=_duration_msg(float(t)))
        for t, q, dq, ddq in zip(command.t_rel_s, command.q_rad, command.dq_rad_s, command.ddq_rad_s2, strict=True)
    ]
    return msg


def _settings(values: dict) -> ExcitationSettings:
    """The state machine's settings from the parameters of the same names."""
    names = [f.name for f in fields(ExcitationSettings) if f.name in values]
    return ExcitationSettings(require_confirm=values["mode"] == "hardware", **{name: values[name] for name in names})


class ExcitationNode(Node):
    """Moves joint states, abort requests and the confirm parameter into the state machine, its steps out."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("excitation", **kwargs)
        self._stop_sent = False  # before anything can fail: destroy_node reads it
        values = {name: self.declare_parameter(name, default, descriptor).value
                  for name, (default, descriptor) in parameters().items()}
        if values["mode"] not in MODES:
            raise ValueError(f"mode must be 'sim' or 'hardware', got '{values['mode']}'")
        if values["mode"] == "hardware" and values["max_step_gap_s"] == 0.0:
            raise ValueError("max_step_gap_s 0 (no hold on a leap of the clock or a stall) is for sim mode only")
        if not values["robot"]:
            raise ValueError("parameter 'robot' (robot config path or name) is required")
        self.config = load_robot_config(values["robot"])
        self.robot = self.config.load_model(tuple(values["design.friction"]))
        self.hard_limits = design_limits(self.config)
        self.trajectory = self._load_or_design(values)
        refusal = trajectory_refusal(self.trajectory, self.robot, self.hard_limits, self.config.robot)
        if refusal:
            raise ValueError(refusal)
        self._monitor = values["monitor_commands"]
        self.machine = ExcitationStateMachine(self.trajectory, self.robot, self.hard_limits, _settings(values))
        self._stop_sent = False
        self._names_warned = False

        self.command_pub = self.create_publisher(JointTrajectory, self.config.joint_trajectory_topic, 10)
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             reliability=ReliabilityPolicy.RELIABLE)
        self.description_pub = self.create_publisher(ExcitationTrajectory, TRAJECTORY_TOPIC, latched)
        self.marker_pub = self.create_publisher(PeriodMarker, MARKER_TOPIC, 10)
        self.status_pub = self.create_publisher(ExcitationStatus, STATUS_TOPIC, latched)
        self._ack_name = values["ack_name"]
        self.ack_pub = (self.create_publisher(TimeReference, ACK_TOPIC, QoSProfile(depth=100))
                        if self._ack_name else None)
        self._periods_started = 0
        self._status_sent: tuple[str, str, int] | None = None
        self._publish_status()
        self.create_subscription(JointState, self.config.joint_states_topic, self._on_joint_state,
                                 qos_profile_sensor_data)
        self.create_service(Trigger, "~/abort", self._on_abort)
        self.create_timer(0.02, self._tick)
        self.get_logger().info(
            f"{self.config.robot}: {self.trajectory.kind} trajectory, period {self.trajectory.period_s:.3g} s, "
            f"{values['num_periods']} period(s), mode {values['mode']}; commands on "
            f"{self.command_pub.topic_name}, joint states from {self.config.joint_states_topic}"
        )

    @property
    def state(self) -> str:
        return self.machine.phase

    @property
    def reason(self) -> str:
        return self.machine.reason

    def _load_or_design(self, values: dict) -> Trajectory:
        if values["trajectory_file"]:
            trajectory = load_trajectory(values["trajectory_file"])
        else:
            self.get_logger().info("no trajectory_file: designing one (this takes minutes)")
            limits = design_limits(self.config, values["design.position_margin_rad"], values["design.velocity_scale"])
            options = DesignOptions(
                kind=values["design.kind"], harmonics=values["design.harmonics"],
                base_frequency_hz=values["design.base_frequency_hz"], criterion=values["design.criterion"],
                starts=values["design.starts"], seed=values["design.seed"],
                time_limit_s=values["design.time_limit_s"],
            )
            try:
                result = design_excitation(self.robot, limits, options, self.config.robot,
                                           progress=lambda line: self.get_logger().info(line))
            except DesignError as err:
                raise ValueError(str(err)) from None
            trajectory = result.trajectory
        return trajectory

    def _now_s(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def hold(self, reason: str) -> None:
        """Stop where the arm can (see ExcitationStateMachine.hold)."""
        self._publish(self.machine.hold(self._now_s(), reason))

    def destroy_node(self) -> None:
        """After a hold, wait (bounded) until the subscribers acknowledged the stop, then destroy the node."""
        timeout = RclpyDuration(seconds=STOP_ACK_TIMEOUT_S)
        if self._stop_sent and not self.command_pub.wait_for_all_acked(timeout):
            self.get_logger().warning(f"the stop command was not acknowledged within {STOP_ACK_TIMEOUT_S} s")
        super().destroy_node()

    # -- from the state machine to ROS ---------------------------------------------------------------------
    def _publish(self, step: Step) -> None:
        for line in step.log:
            self._log(line)
        if step.excitation_start_s is not None:
            self._publish_description(step.excitation_start_s)
        for command in step.commands:
            msg = trajectory_msg(self.config.joint_names, command)
            problems = check_command(msg, self.robot, self.hard_limits) if self._monitor else []
            if problems:
                self.get_logger().error("command monitor: not sending a command with " + "; ".join(problems))
                self._publish(self.machine.hold(self._now_s(), "the command monitor refused a command"))
                return
            self.command_pub.publish(msg)
        if step.stop is not None:
            self.command_pub.publish(trajectory_msg(self.config.joint_names, step.stop))
            self._stop_sent = True
        for marker in step.markers:
            msg = PeriodMarker(period_index=marker.index, num_periods=self.machine.settings.num_periods,
                               period_s=float(self.trajectory.period_s))
            msg.header.stamp = _time_msg(marker.t_s)
            self.marker_pub.publish(msg)
            self._periods_started = marker.index + 1
        self._publish_status()

    def _publish_status(self) -> None:
        """The state and its reason (latched) whenever they or the periods started change."""
        status = (str(self.machine.phase), self.machine.reason, self._periods_started)
        if status == self._status_sent:
            return
        self._status_sent = status
        msg = ExcitationStatus(state=status[0], reason=status[1], stopped=self.machine.phase in STOPPED,
                               periods_started=status[2], num_periods=self.machine.settings.num_periods)
        msg.header.stamp = self.get_clock().now().to_msg()
        self.status_pub.publish(msg)

    def _log(self, line: LogLine) -> None:
        # rclpy fixes the severity of each call site, hence one call per severity.
        logger = self.get_logger()
        if line.severity is Severity.ERROR:
            logger.error(line.text)
        elif line.severity is Severity.WARNING:
            logger.warning(line.text)
        else:
            logger.info(line.text)

    def _publish_description(self, t0_s: float) -> None:
        traj = self.trajectory
        msg = ExcitationTrajectory(robot=self.config.robot, kind=traj.kind, joint_names=list(traj.joint_names),
                                   period_s=float(traj.period_s), base_frequency_hz=1.0 / float(traj.period_s),
                                   num_periods=self.machine.settings.num_periods)
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.start_time = _time_msg(t0_s)
        msg.offsets_rad = traj.rest_pose_rad.tolist()
        if isinstance(traj, FourierTrajectory):
            msg.base_frequency_hz = float(traj.base_frequency_hz)
            msg.harmonics = traj.harmonics
            msg.coefficients_a = traj.coefficients_a.ravel().tolist()
            msg.coefficients_b = traj.coefficients_b.ravel().tolist()
        self.description_pub.publish(msg)

    # -- from ROS to the state machine ---------------------------------------------------------------------
    def _on_joint_state(self, msg: JointState) -> None:
        index = {name: i for i, name in enumerate(msg.name)}
        missing = [j for j in self.config.joint_names if j not in index]
        if missing:
            if not self._names_warned:
                self._names_warned = True
                self.get_logger().warning(f"joint states without {missing}; ignored")
            return
        idx = [index[j] for j in self.config.joint_names]
        dq_rad_s = np.array([msg.velocity[i] for i in idx]) if len(msg.velocity) == len(msg.name) else None
        stamp_s = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        q_rad = np.array([msg.position[i] if i < len(msg.position) else math.nan for i in idx])
        self.machine.on_joint_state(self._now_s(), q_rad, dq_rad_s, stamp_s or None)

    def _on_abort(self, _request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        step, response.message = self.machine.abort(self._now_s())
        self._publish(step)
        response.success = True
        return response

    def _tick(self) -> None:
        now_s = self._now_s()
        self._publish(self.machine.step(now_s, confirmed=self.get_parameter("confirm").value))
        if self.ack_pub is not None:  # everything up to now_s is commanded: a lockstep simulation may go on
            self.ack_pub.publish(TimeReference(time_ref=_time_msg(now_s), source=self._ack_name))


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
        if node is not None and node.machine.moving and rclpy.ok():
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
