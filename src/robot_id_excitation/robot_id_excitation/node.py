"""The excitation node: moves the arm to the start pose, then streams N periods to a joint trajectory controller.

Publishes the trajectory description (robot_id_msgs/ExcitationTrajectory, transient local) on
robot_id/excitation_trajectory and a robot_id_msgs/PeriodMarker on robot_id/period_marker at every period start;
both names are relative, so a namespace holds one arm. Commands go to the robot config's joint trajectory topic
(the controller's ~/joint_trajectory), one message per period (longer periods in pieces of at most `max_chunk_s`,
each ending at rest through a braking tail), each overlapping the previous one by `overlap_s` so that the next
arrives while the previous still runs and the controller, starting it from its desired state, stays on the curve.
In hardware mode it reads the controller's parameters at start (controller_setup.py, docs/jtc_rules.md) and refuses
a set-up that would start each command from the measured state, or joint-state stamps further than
`max_clock_offset_s` from its clock.

Safety (docs/safety.md): a trajectory for another robot, other joints, beyond the robot config's hard limits or
designed allowing other pairs of links closer than the clearance than the config's collision file allows is
refused when loaded; every command is checked again (with `monitor_commands`, also by the independent checker
of command_check.py, on the message itself) before the arm moves: the excitation's chunks at start-up, the approach
when it is planned from the measured pose. It refuses to start if the joint states are stale or faulty, the arm is
moving or outside its limits, or did not reach the start pose; it holds (a single stop point, decelerating within
the acceleration limits) on ~/abort, when joint states stop arriving or are not finite or out of order, when the
clock jumps back, when tracking error grows beyond `max_tracking_error_rad`, and on Ctrl-C/SIGTERM. In `hardware`
mode it shows where the arm will go (robot_id/excitation_status: state waiting_for_confirmation, the plan in its
reason) and nothing moves until the parameter `confirm` is set to true. After a hold, the node waits (at most
STOP_ACK_TIMEOUT_S) for the controller to acknowledge the stop before it is destroyed.

Against a robot that does not wait, the node must never stall: while the arm moves a step only sends prepared bytes,
and every step first takes the joint states waiting (the executor never takes them: TakenByTheNode), each counted as
received when the middleware received it, so staleness is judged by when the newest state arrived, however late a
step runs. The longest callback and the oldest joint state seen while the arm moved are logged at the end of a run
and published in the status.

The decisions are ExcitationStateMachine's (excitation_state.py); this node moves messages between it and ROS.
Parameters: node_parameters.py (`ros2 param describe` shows their descriptions and ranges).
"""

from __future__ import annotations

import gc
import math
import os
import signal
import sys
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from rclpy.duration import Duration as RclpyDuration
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from rclpy.serialization import serialize_message
from rclpy.subscription import MessageInfo
from sensor_msgs.msg import JointState, TimeReference
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from robot_id_contract.node_process import NodeProcess, run_node
from robot_id_contract.parameters import declare_parameters
from robot_id_contract.stamps import stamp_s
from robot_id_contract.taken_messages import TakenByTheNode, take_waiting
from robot_id_contract.topics import EXCITATION_STATUS, EXCITATION_TRAJECTORY, PERIOD_MARKER, SIM_ACK
from robot_id_excitation.command_check import check_command
from robot_id_excitation.command_messages import stamped, time_msg, trajectory_msg
from robot_id_excitation.constraints import design_limits
from robot_id_excitation.controller_setup import check_controller
from robot_id_excitation.design import DesignError, design_excitation
from robot_id_excitation.design_problem import DesignOptions
from robot_id_excitation.excitation_guard import trajectory_refusal
from robot_id_excitation.excitation_plan import Command, Points
from robot_id_excitation.excitation_settings import settings_from_parameters
from robot_id_excitation.excitation_state import ExcitationStateMachine, Phase
from robot_id_excitation.excitation_step import LogLine, Severity, Step
from robot_id_excitation.fourier import FourierTrajectory
from robot_id_excitation.node_parameters import MODES, parameters
from robot_id_excitation.node_steps import Timing
from robot_id_excitation.trajectory_file import Trajectory, load_trajectory, recorded_allowed_pairs
from robot_id_model.realtime import keep_threads_realtime
from robot_id_model.robot_config import load_robot_config
from robot_id_model.robot_model import ModelError
from robot_id_msgs.msg import ExcitationStatus, ExcitationTrajectory, PeriodMarker

STOPPED = (Phase.HOLDING, Phase.REFUSED, Phase.ABORTED)
"""Phases after which the arm moves no more before its last period (ExcitationStatus.stopped)."""
NO_STATES_WARNING_S = 5.0
"""While no joint state has come, the node says so every this many seconds."""
STOP_ACK_TIMEOUT_S = 1.0
"""How long the node waits for the subscribers to acknowledge a stop command before it is destroyed."""


class ExcitationNode(Node):
    """Moves joint states, abort requests and the confirm parameter into the state machine, its steps out.

    Every step first takes the joint states waiting (the newest few: sensor-data QoS), each counted as received when
    the middleware received it: however late a step runs, a fresh state never looks stale. A step that finds the
    newest state stale takes again before it judges: its own thread may have stalled after the first take.
    Every command is checked and turned into a message before the arm moves; the approach, planned from the
    measured pose, in a worker thread while the steps go on."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("excitation", **kwargs)
        # before anything can fail: destroy_node reads them, also on a node a stop interrupted while it was built
        self._stop_sent = False
        self._planner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="excitation_plan")
        self.timing = Timing()
        values = declare_parameters(self, parameters())
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
        # a file's allowed pairs must be the config's; a trajectory designed here has the config's
        carried = recorded_allowed_pairs(values["trajectory_file"]) if values["trajectory_file"] else None
        refusal = trajectory_refusal(self.trajectory, self.robot, self.hard_limits, self.config.robot, carried)
        if refusal:
            raise ValueError(refusal)
        if values["mode"] == "hardware":
            check_controller(self, self.config.joint_trajectory_topic, self.config.joint_names,
                             values["controller_timeout_s"])
        self._messages: dict[Points, JointTrajectory] = {}
        self._serialized: dict[Points, bytes] = {}
        self._monitoring = values["monitor_commands"]
        self.machine = ExcitationStateMachine(self.trajectory, self.robot, self.hard_limits,
                                              settings_from_parameters(values), self._prepared, self._planner.submit)
        self._prepare()
        planner_id = self._planner.submit(threading.get_native_id).result()  # normal scheduling: it starves nobody
        gc.callbacks.append(self.timing.on_collection)
        self._names_warned = self._timing_logged = False
        self._silent_since_s = self.now_s()
        self._create_interfaces(values)
        keep_threads_realtime(values["realtime_priority"], {planner_id}, lambda apply: self.create_timer(1.0, apply),
                              self.get_logger().warning)
        self.get_logger().info(
            f"{self.config.robot}: {self.trajectory.kind} trajectory, period {self.trajectory.period_s:.3g} s, "
            f"{values['num_periods']} period(s), mode {values['mode']}; commands on "
            f"{self.command_pub.topic_name}, joint states from {self.config.joint_states_topic}"
        )

    def _create_interfaces(self, values: dict) -> None:
        self.command_pub = self.create_publisher(JointTrajectory, self.config.joint_trajectory_topic, 10)
        self.description_pub = self.create_publisher(ExcitationTrajectory, EXCITATION_TRAJECTORY.name,
                                                     EXCITATION_TRAJECTORY.qos)
        self.marker_pub = self.create_publisher(PeriodMarker, PERIOD_MARKER.name, PERIOD_MARKER.qos)
        self.status_pub = self.create_publisher(ExcitationStatus, EXCITATION_STATUS.name, EXCITATION_STATUS.qos)
        self._ack_name = values["ack_name"]
        self.ack_pub = self.create_publisher(TimeReference, SIM_ACK.name, SIM_ACK.qos) if self._ack_name else None
        self._periods_started = 0
        self._status_sent: tuple[str, str, int] | None = None
        self._publish_status()
        self._state_sub = self.create_subscription(JointState, self.config.joint_states_topic, self._on_joint_state,
                                                   qos_profile_sensor_data, callback_group=TakenByTheNode())
        self.create_service(Trigger, "~/abort", self._on_abort)
        self.create_timer(0.02, self._tick)

    def _prepare(self) -> None:
        """Check every chunk of the excitation and build and serialize its message now, before anything moves."""
        began = time.perf_counter()
        refusal = self.machine.prepare()
        if refusal:
            raise ValueError(refusal)
        gc.freeze()  # the built commands stay out of collections: a full one over them would pause the steps
        self.get_logger().info(f"{len(self._messages)} distinct command(s) of the excitation checked and built in "
                               f"{time.perf_counter() - began:.1f} s")

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

    def now_s(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def stopping_at_rest(self) -> None:
        """Shut down after the last period: the arm is commanded to rest at the start pose; nothing is sent."""
        self.get_logger().info("shutting down after the last period: the arm is commanded to rest at the start pose")
        self._log_timing_once()

    def hold(self, reason: str) -> None:
        """Stop where the arm can (see ExcitationStateMachine.hold)."""
        self._publish(self.machine.hold(self.now_s(), reason))

    def destroy_node(self) -> None:
        """After a hold, wait (bounded) until the subscribers acknowledged the stop, then destroy the node."""
        timeout = RclpyDuration(seconds=STOP_ACK_TIMEOUT_S)
        if self._stop_sent and not self.command_pub.wait_for_all_acked(timeout):
            self.get_logger().warning(f"the stop command was not acknowledged within {STOP_ACK_TIMEOUT_S} s")
        self._planner.shutdown(wait=False, cancel_futures=True)
        if self.timing.on_collection in gc.callbacks:
            gc.callbacks.remove(self.timing.on_collection)
        super().destroy_node()

    # -- from the state machine to ROS ---------------------------------------------------------------------
    def _message(self, points: Points) -> JointTrajectory:
        """The message of these points (built once, stamped when sent)."""
        msg = self._messages.get(points)
        if msg is None:
            msg = self._messages[points] = trajectory_msg(self.config.joint_names, Command(None, points))
        return msg

    def _raw(self, points: Points) -> bytes:
        """The serialized message of these points (header stamp zero), serialized once."""
        raw = self._serialized.get(points)
        if raw is None:
            raw = self._serialized[points] = serialize_message(self._message(points))
        return raw

    def _prepared(self, points: Points) -> list[str]:
        """Build and serialize the message of points the state machine checked (before the arm moves, monitored or
        not); what the independent check (command_check.py) finds in it, with monitor_commands."""
        self._raw(points)
        return check_command(self._message(points), self.robot, self.hard_limits) if self._monitoring else []

    def _publish(self, step: Step) -> None:
        for line in step.log:
            self._log(line)
        if step.excitation_start_s is not None:
            self._publish_description(step.excitation_start_s)
        for command in step.commands:
            self.command_pub.publish(stamped(self._raw(command.points), command.stamp_s))
        if step.stop is not None:
            self.command_pub.publish(trajectory_msg(self.config.joint_names, step.stop))
            self._stop_sent = True
        for marker in step.markers:
            msg = PeriodMarker(period_index=marker.index, num_periods=self.machine.settings.num_periods,
                               period_s=float(self.trajectory.period_s))
            msg.header.stamp = time_msg(marker.t_s)
            self.marker_pub.publish(msg)
            self._periods_started = marker.index + 1
        if self.machine.phase in (*STOPPED, Phase.DONE):
            self._log_timing_once()
        self._publish_status()

    def _log_timing_once(self) -> None:
        if not self._timing_logged:
            self._timing_logged = True
            self.get_logger().info(self.timing.line(self.machine.settings.state_timeout_s))

    def _publish_status(self) -> None:
        """The state and its reason (latched) whenever they or the periods started change."""
        status = (str(self.machine.phase), self.machine.reason, self._periods_started)
        if status == self._status_sent:
            return
        self._status_sent = status
        msg = ExcitationStatus(state=status[0], reason=status[1], stopped=self.machine.phase in STOPPED,
                               periods_started=status[2], num_periods=self.machine.settings.num_periods,
                               worst_callback_s=self.timing.worst_callback_s,
                               largest_state_age_s=self.timing.largest_state_age_s)
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
        msg.start_time = time_msg(t0_s)
        msg.offsets_rad = traj.rest_pose_rad.tolist()
        if isinstance(traj, FourierTrajectory):
            msg.base_frequency_hz = float(traj.base_frequency_hz)
            msg.harmonics = traj.harmonics
            msg.coefficients_a = traj.coefficients_a.ravel().tolist()
            msg.coefficients_b = traj.coefficients_b.ravel().tolist()
        self.description_pub.publish(msg)

    # -- from ROS to the state machine ---------------------------------------------------------------------
    def _on_joint_state(self, msg: JointState, info: MessageInfo) -> None:
        began = time.perf_counter()
        index = {name: i for i, name in enumerate(msg.name)}
        missing = [j for j in self.config.joint_names if j not in index]
        if missing:
            if not self._names_warned:
                self._names_warned = True
                self.get_logger().warning(f"joint states without {missing}; ignored")
            return
        idx = [index[j] for j in self.config.joint_names]
        dq_rad_s = np.array([msg.velocity[i] for i in idx]) if len(msg.velocity) == len(msg.name) else None
        state_stamp_s = stamp_s(msg.header.stamp)
        q_rad = np.array([msg.position[i] if i < len(msg.position) else math.nan for i in idx])
        received_s = self._received_s(info)
        self.machine.on_joint_state(received_s, q_rad, dq_rad_s, state_stamp_s or None)
        if self.machine.moving:
            self.timing.received(received_s, state_stamp_s)
            self.timing.worst_joint_state_s = max(self.timing.worst_joint_state_s, time.perf_counter() - began)

    def _received_s(self, info: MessageInfo) -> float:
        """When the middleware received a message, on the node's clock: its reception time when the node runs on
        the system clock (the middleware's), else now; never before the latest time the state machine saw (the
        two clocks are read at different moments)."""
        now_s = self.now_s()
        received_ns = info.get("received_timestamp", 0)
        received_s = now_s if not received_ns or self.get_clock().ros_time_is_active else min(now_s,
                                                                                              received_ns * 1e-9)
        latest_s = self.machine.states.latest_s
        return received_s if latest_s is None else max(received_s, latest_s)

    def _take_waiting_states(self) -> None:
        """The joint states waiting (the executor never takes them: TakenByTheNode)."""
        for taken in take_waiting(self._state_sub):
            self._on_joint_state(*taken)

    def _on_abort(self, _request: Trigger.Request, response: Trigger.Response) -> Trigger.Response:
        step, response.message = self.machine.abort(self.now_s())
        self._publish(step)
        response.success = True
        return response

    def _tick(self) -> None:
        began, moving = time.perf_counter(), self.machine.moving
        self._take_waiting_states()
        now_s = self.now_s()
        if not self.machine.states_fresh(now_s):
            self._take_waiting_states()  # the thread stalled after the take: what arrived meanwhile counts
            now_s = self.now_s()
        step = self.machine.step(now_s, confirmed=self.get_parameter("confirm").value)
        if self.machine.first_state_s is None and now_s - self._silent_since_s >= NO_STATES_WARNING_S:
            self._silent_since_s = now_s
            self.get_logger().warning(f"no joint states on {self._state_sub.topic_name} yet: is the robot's stack "
                                      f"running, in this ROS_DOMAIN_ID ({os.environ.get('ROS_DOMAIN_ID', '0')})?")
        if self.machine.moving:
            self.timing.largest_state_age_s = max(self.timing.largest_state_age_s, self.machine.states.age_s(now_s))
        self._publish(step)
        if self.ack_pub is not None:  # everything up to now_s is commanded: a lockstep simulation may go on
            self.ack_pub.publish(TimeReference(time_ref=time_msg(now_s), source=self._ack_name))
        if moving or self.machine.moving:
            self.timing.worst_step_s = max(self.timing.worst_step_s, time.perf_counter() - began)


STOP_REQUESTED = threading.Event()


def _interrupt(_signum: int, _frame: object) -> None:
    STOP_REQUESTED.set()
    raise KeyboardInterrupt


def _hold_if_moving(node: ExcitationNode) -> None:
    """On a stop: hold a moving arm; once the last period has ended (the arm commanded to rest while it settles,
    as when a simulation holds its clock after the recording) there is nothing to stop."""
    if node.machine.commanded_to_rest(node.now_s()):
        node.stopping_at_rest()
    elif node.machine.moving:
        node.hold("shutting down")


def main(args: list[str] | None = None) -> int:
    # a stop between the executor making a callback's task and running it leaves that coroutine unawaited: the
    # stop, not a fault, and Python would say so at exit after the run's last lines
    warnings.filterwarnings("ignore", "coroutine .* was never awaited", RuntimeWarning)
    # SIGINT and SIGTERM are handled here rather than by rclpy, so that a hold can still be published
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _interrupt)
    process = NodeProcess("excitation_node", refused=(ModelError, ValueError, FileNotFoundError),
                          on_stop=_hold_if_moving, rclpy_signals=False,
                          is_stop=lambda err: isinstance(err, RuntimeError) and STOP_REQUESTED.is_set())
    return run_node(ExcitationNode, process, args)


if __name__ == "__main__":
    sys.exit(main())
