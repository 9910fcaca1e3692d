"""The excitation node against a fake arm that follows the commanded trajectories (short rclpy runs)."""

from __future__ import annotations

import re
import threading
import time

import numpy as np
import pytest
import rclpy
from rclpy.exceptions import InvalidParameterValueException
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

from robot_id_contract.topics import EXCITATION_STATUS, EXCITATION_TRAJECTORY, PERIOD_MARKER
from robot_id_excitation import excitation_state
from robot_id_excitation import node as excitation_node
from robot_id_excitation.command_messages import stamped, trajectory_msg
from robot_id_excitation.constraints import design_limits
from robot_id_excitation.excitation_plan import Command, Points
from robot_id_excitation.excitation_state import Phase
from robot_id_excitation.fourier import FourierTrajectory
from robot_id_excitation.node import STOPPED, ExcitationNode
from robot_id_excitation.trajectory_file import save_trajectory
from robot_id_model.robot_config import robot_config_path
from robot_id_model.robot_model import DEFAULT_FRICTION
from robot_id_msgs.msg import ExcitationStatus, ExcitationTrajectory, PeriodMarker

START_POSE = np.array([0.3, 0.5, -0.2, -1.0, 0.4, 0.8, 0.1])
PERIOD_S = 1.5

pytestmark = pytest.mark.wall_clock  # the node's state timeouts (0.2 s) and start delays are wall-clock times


def random_coefficients(n: int, harmonics: int, scale: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return scale * rng.normal(size=(n, harmonics)), scale * rng.normal(size=(n, harmonics))


def _seconds(t) -> float:
    return t.sec + 1e-9 * t.nanosec


class FakeArm(Node):
    """Publishes joint states at 100 Hz; follows the last received trajectory by linear interpolation."""

    def __init__(self, config, pose: np.ndarray, follow: bool = True, rate_hz: float = 100.0, stamped: bool = False,
                 **kwargs) -> None:
        super().__init__("fake_arm", **kwargs)
        self.config, self.pose, self.follow, self.stamped = config, np.array(pose, dtype=float), follow, stamped
        self.publishing = True
        self.received: list[tuple[float, JointTrajectory, np.ndarray]] = []
        self.markers: list[PeriodMarker] = []
        self.descriptions: list[ExcitationTrajectory] = []
        self.statuses: list[ExcitationStatus] = []
        self.state_pub = self.create_publisher(JointState, config.joint_states_topic, 10)
        self.create_subscription(JointTrajectory, config.joint_trajectory_topic, self._on_trajectory, 10)
        self.create_subscription(PeriodMarker, PERIOD_MARKER.name, self.markers.append, 10)
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.create_subscription(ExcitationTrajectory, EXCITATION_TRAJECTORY.name, self.descriptions.append, latched)
        self.create_subscription(ExcitationStatus, EXCITATION_STATUS.name, self.statuses.append, latched)
        self.abort_client = self.create_client(Trigger, "/excitation/abort")
        self.create_timer(1.0 / rate_hz, self._tick)

    def now_s(self) -> float:
        return self.get_clock().now().nanoseconds * 1e-9

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        self.received.append((self.now_s(), msg, self.pose.copy()))

    def _tick(self) -> None:
        if self.follow and self.received:
            arrival, msg, pose_at_arrival = self.received[-1]
            start = _seconds(msg.header.stamp) or arrival
            times = np.array([start + _seconds(p.time_from_start) for p in msg.points])
            positions = np.array([p.positions for p in msg.points])
            if times[0] > arrival:
                times, positions = np.concatenate([[arrival], times]), np.vstack([pose_at_arrival, positions])
            now = self.now_s()
            self.pose = np.array([np.interp(now, times, positions[:, j]) for j in range(positions.shape[1])])
        if self.publishing:
            msg = JointState(name=list(self.config.joint_names), position=self.pose.tolist())
            if self.stamped:
                msg.header.stamp = self.get_clock().now().to_msg()
            self.state_pub.publish(msg)


@pytest.fixture
def trajectory_file(tmp_path, iiwa14_config):
    a, b = random_coefficients(7, 2, 0.08, seed=4)
    traj = FourierTrajectory("modified_fourier", "iiwa14", iiwa14_config.joint_names, 1.0 / PERIOD_S, a, b, START_POSE)
    return save_trajectory(traj, tmp_path / "excitation.yaml")


@pytest.fixture
def ros_context():
    context = rclpy.Context()
    rclpy.init(context=context)
    yield context
    rclpy.shutdown(context=context)


def _start(context, trajectory_file, config, arm_pose, follow=True, executor=None, arm_options=None, **overrides):
    params = {"robot": str(robot_config_path("iiwa14")), "trajectory_file": str(trajectory_file), "num_periods": 4,
              "mode": "sim", "start_delay_s": 0.3, "state_timeout_s": 0.2, "rate_hz": 50.0, "settle_s": 0.2,
              "approach_speed_rad_s": 1.0, "approach_acceleration_rad_s2": 3.0, "max_start_error_rad": 0.01,
              "overlap_s": 0.3} | overrides
    node = ExcitationNode(context=context, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()])
    arm = FakeArm(config, arm_pose, follow, context=context, **(arm_options or {}))
    executor = executor or SingleThreadedExecutor(context=context)
    executor.add_node(node)
    executor.add_node(arm)
    return node, arm, executor


def _spin(executor, seconds: float, until=lambda: False) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not until():
        executor.spin_once(timeout_sec=0.01)


def _stop(node, arm, executor) -> None:
    executor.shutdown()
    node.destroy_node()
    arm.destroy_node()


def _assert_within_limits(messages, config) -> None:
    limits = design_limits(config)
    for msg in messages:
        q = np.array([p.positions for p in msg.points])
        dq = np.array([p.velocities for p in msg.points])
        ddq = np.array([p.accelerations for p in msg.points])
        assert np.all(q >= limits.position_lower_rad) and np.all(q <= limits.position_upper_rad)
        assert np.all(np.abs(dq) <= limits.velocity_rad_s)
        assert np.all(np.abs(ddq) <= limits.acceleration_rad_s2)


def test_streams_periods_within_limits_and_holds_on_abort(ros_context, trajectory_file, iiwa14_config):
    away = START_POSE + np.array([0.2, -0.1, 0.0, 0.1, 0.0, 0.0, -0.15])
    node, arm, executor = _start(ros_context, trajectory_file, iiwa14_config, away)
    try:
        _spin(executor, 12.0, until=lambda: len(arm.markers) >= 2)
        assert len(arm.markers) == 2 and [m.period_index for m in arm.markers] == [0, 1]
        assert node.state == "exciting"
        approach, *periods = (msg for _, msg, _ in arm.received)
        assert np.allclose(approach.points[0].positions, away, atol=1e-9)
        assert np.allclose(approach.points[-1].positions, START_POSE, atol=1e-9)
        assert len(periods) >= 2 and all(len(m.points) > 10 for m in periods)
        description = arm.descriptions[-1]
        assert description.kind == "modified_fourier" and description.num_periods == 4
        assert description.period_s == pytest.approx(PERIOD_S)
        assert _seconds(description.start_time) == pytest.approx(_seconds(arm.markers[0].header.stamp))

        future = arm.abort_client.call_async(Trigger.Request())
        _spin(executor, 5.0, until=future.done)
        assert future.result().success
        hold = arm.received[-1][1]
        assert len(hold.points) == 1 and np.allclose(hold.points[0].velocities, 0.0)
        assert np.abs(np.array(hold.points[0].positions) - arm.pose).max() < 0.1
        count = len(arm.received)
        _spin(executor, 2 * PERIOD_S)
        assert len(arm.received) == count, "commands were sent after the abort"
        assert len(arm.markers) <= 3
        assert node.state == "holding"
        _assert_within_limits([msg for _, msg, _ in arm.received], iiwa14_config)
        # every change of state is on the latched status topic, the hold with its reason and the periods started
        states = [m.state for m in arm.statuses]
        changes = [s for i, s in enumerate(states) if i == 0 or s != states[i - 1]]
        assert changes == ["waiting_for_joint_states", "approaching", "exciting", "holding"], states
        last = arm.statuses[-1]
        assert (last.state, last.reason, last.num_periods, last.stopped) == ("holding", "abort requested", 4, True)
        assert not any(m.stopped for m in arm.statuses[:-1])
        assert last.periods_started == len(arm.markers)
    finally:
        _stop(node, arm, executor)


def test_refuses_when_joint_states_are_stale(ros_context, trajectory_file, iiwa14_config):
    node, arm, executor = _start(ros_context, trajectory_file, iiwa14_config, START_POSE, start_delay_s=0.6)
    try:
        _spin(executor, 5.0, until=lambda: node.machine.first_state_s is not None)
        arm.publishing = False
        _spin(executor, 1.5, until=lambda: node.state == "refused")
        assert node.state == "refused" and "stale" in node.reason
        assert arm.received == []
        _spin(executor, 1.0, until=lambda: arm.statuses and arm.statuses[-1].state == "refused")
        assert arm.statuses[-1].state == "refused" and arm.statuses[-1].reason == node.reason
        assert arm.statuses[-1].stopped
    finally:
        _stop(node, arm, executor)


def test_refuses_when_the_arm_does_not_reach_the_start_pose(ros_context, trajectory_file, iiwa14_config):
    away = START_POSE + np.array([0.0, 0.0, 0.0, 0.25, 0.0, 0.0, 0.0])
    node, arm, executor = _start(ros_context, trajectory_file, iiwa14_config, away, follow=False,
                                 max_tracking_error_rad=0.0)
    try:
        _spin(executor, 8.0, until=lambda: node.state == "refused")
        assert node.state == "refused" and "lbr_A4" in node.reason and "start pose" in node.reason
        _spin(executor, 2.0, until=lambda: len(arm.received) >= 2)
        _, hold = (msg for _, msg, _ in arm.received)
        assert len(hold.points) == 1 and np.allclose(hold.points[0].positions, away, atol=1e-9)
        assert arm.markers == []
    finally:
        _stop(node, arm, executor)


def test_holds_when_joint_states_stop_during_the_excitation(ros_context, trajectory_file, iiwa14_config):
    node, arm, executor = _start(ros_context, trajectory_file, iiwa14_config, START_POSE)
    try:
        _spin(executor, 8.0, until=lambda: len(arm.markers) >= 1)
        arm.publishing = False
        _spin(executor, 1.0, until=lambda: node.state == "holding")
        assert node.state == "holding" and "joint states" in node.reason
        _spin(executor, 1.0, until=lambda: len(arm.received[-1][1].points) == 1)
        hold = arm.received[-1][1]
        assert len(hold.points) == 1
        count = len(arm.received)
        _spin(executor, 2 * PERIOD_S)
        assert len(arm.received) == count
    finally:
        _stop(node, arm, executor)


def test_hardware_mode_moves_only_after_confirmation(ros_context, trajectory_file, iiwa14_config):
    node, arm, executor = _start(ros_context, trajectory_file, iiwa14_config, START_POSE, mode="hardware")
    try:
        _spin(executor, 1.5)
        assert arm.received == [] and node.state == "waiting_for_confirmation"
        _spin(executor, 1.0, until=lambda: arm.statuses and arm.statuses[-1].state == "waiting_for_confirmation")
        plan = arm.statuses[-1].reason.split("; ")
        assert plan[0] == "start pose [0.30, 0.50, -0.20, -1.00, 0.40, 0.80, 0.10] rad" and not arm.statuses[-1].stopped
        node.set_parameters([Parameter("confirm", value=True)])
        _spin(executor, 5.0, until=lambda: len(arm.markers) >= 1)
        assert node.state == "exciting" and arm.received
    finally:
        _stop(node, arm, executor)


def _publish_states(arm: FakeArm, rate_hz: float, done: threading.Event, published: list[float]) -> None:
    """The arm's joint states, stamped, at rate_hz from a thread of its own (as from another process)."""
    due_s = time.monotonic()
    while not done.is_set():
        published.append(due_s)
        msg = JointState(name=list(arm.config.joint_names), position=arm.pose.tolist())
        msg.header.stamp = arm.get_clock().now().to_msg()
        arm.state_pub.publish(msg)
        due_s += 1.0 / rate_hz
        time.sleep(max(0.0, due_s - time.monotonic()))


def test_joint_states_count_when_they_arrive_however_slow_a_step(ros_context, trajectory_file, iiwa14_config,
                                                                 monkeypatch):
    """A check of 0.3 s while the approach is planned, and steps that stall for 0.15 s while the arm moves (as a
    busy machine would): the joint states, at 500 Hz, count as received within 20 ms of their stamps (when the
    middleware received them, not when a step took them), none looks stale (no hold), and the node reports the
    slow step and the small state age."""
    check = excitation_state.check_samples
    monkeypatch.setattr(excitation_state, "check_samples", lambda *a, **k: time.sleep(0.3) or check(*a, **k))
    step = excitation_state.ExcitationStateMachine.step

    def slow_step(machine, t_s, confirmed=False):
        if machine.phase is Phase.EXCITING and round(t_s / 0.02) % 25 == 0:
            time.sleep(0.15)
        return step(machine, t_s, confirmed)

    monkeypatch.setattr(excitation_state.ExcitationStateMachine, "step", slow_step)
    away = START_POSE + np.array([0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    node, arm, executor = _start(ros_context, trajectory_file, iiwa14_config, away)
    arm.publishing = False
    latency_s = []
    receive = node.machine.on_joint_state
    node.machine.on_joint_state = lambda t_s, q, dq, stamp_s: latency_s.append(t_s - stamp_s) or receive(t_s, q, dq,
                                                                                                       stamp_s)
    done, published = threading.Event(), []
    publisher = threading.Thread(target=_publish_states, args=(arm, 500.0, done, published))
    publisher.start()
    try:
        _spin(executor, 20.0, until=lambda: len(arm.markers) >= 3 or node.machine.phase in STOPPED)
        assert len(arm.markers) == 3 and node.state == "exciting", node.reason
        # each step takes the newest of the waiting states (sensor-data QoS keeps 5): never all 500 per second
        assert 0 < len(latency_s) < 0.8 * len(published) and max(latency_s) < 0.02, (len(published), max(latency_s))
        assert node.timing.worst_step_s >= 0.15 and node.timing.worst_joint_state_s < 0.02
        assert node.timing.largest_state_age_s < 0.05
    finally:
        done.set()
        publisher.join()
        _stop(node, arm, executor)


def test_a_stall_of_the_node_after_it_took_the_states_is_no_stale_stream(ros_context, trajectory_file,
                                                                        iiwa14_config):
    """The node's thread stalls for longer than the state timeout (0.2 s) right after a step took the joint states,
    while they go on arriving at 500 Hz (as a preempted or collecting interpreter would): the step judges the stream
    by what arrived meanwhile and goes on, rather than holding on states that only look 0.25 s old."""
    away = START_POSE + np.array([0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    node, arm, executor = _start(ros_context, trajectory_file, iiwa14_config, away)
    arm.publishing = False
    take, stalls = node._take_waiting_states, []

    def take_then_stall() -> None:
        take()
        if node.machine.phase is Phase.EXCITING and not stalls:
            stalls.append(time.monotonic())
            time.sleep(0.25)

    node._take_waiting_states = take_then_stall
    done, published = threading.Event(), []
    publisher = threading.Thread(target=_publish_states, args=(arm, 500.0, done, published))
    publisher.start()
    try:
        _spin(executor, 20.0, until=lambda: len(arm.markers) >= 2 or node.machine.phase in STOPPED)
        assert stalls and node.state == "exciting" and len(arm.markers) == 2, node.reason
        assert node.timing.worst_step_s >= 0.25 and node.timing.largest_state_age_s < 0.05
    finally:
        done.set()
        publisher.join()
        _stop(node, arm, executor)


def test_two_arms_in_two_namespaces_and_described_parameters(ros_context, trajectory_file):
    params = [Parameter("robot", value=str(robot_config_path("iiwa14"))),
              Parameter("trajectory_file", value=str(trajectory_file))]
    nodes = [ExcitationNode(context=ros_context, namespace=ns, parameter_overrides=params) for ns in ("left", "right")]
    try:
        for ns, node in zip(("left", "right"), nodes, strict=True):
            assert node.description_pub.topic_name == f"/{ns}/robot_id/excitation_trajectory"
            assert node.marker_pub.topic_name == f"/{ns}/robot_id/period_marker"
        left = nodes[0]
        for name, value in (("robot", "panda"), ("mode", "hardware"), ("trajectory_file", "")):
            assert not left.set_parameters([Parameter(name, value=value)])[0].successful, name
        assert left.set_parameters([Parameter("confirm", value=True)])[0].successful
    finally:
        for node in nodes:
            node.destroy_node()
    for name, value in (("num_periods", 0), ("rate_hz", 0.5), ("max_tracking_error_rad", -0.1)):
        with pytest.raises(InvalidParameterValueException, match=name):
            ExcitationNode(context=ros_context, parameter_overrides=[*params, Parameter(name, value=value)])


def test_the_clock_leap_hold_is_off_only_in_sim_mode(ros_context, trajectory_file):
    """A simulator in lockstep moves its clock in leaps (the sim graph sets max_step_gap_s 0); a real arm keeps it."""
    params = [Parameter("robot", value=str(robot_config_path("iiwa14"))),
              Parameter("trajectory_file", value=str(trajectory_file)), Parameter("max_step_gap_s", value=0.0)]
    with pytest.raises(ValueError, match=r"^max_step_gap_s 0 \(no hold on a leap of the clock or a stall\) is for "
                                         "sim mode only$"):
        ExcitationNode(context=ros_context, parameter_overrides=[*params, Parameter("mode", value="hardware")])
    node = ExcitationNode(context=ros_context, parameter_overrides=params)
    try:
        assert node.machine.settings.max_step_gap_s == 0.0
        assert node.get_parameter("design.friction").value == list(DEFAULT_FRICTION)  # the estimator's default too
    finally:
        node.destroy_node()


def test_a_serialized_command_stamped_in_its_bytes_is_the_message_stamped(iiwa14_config):
    rng = np.random.default_rng(3)
    points = Points(np.linspace(0.0, 1.0, 5), *(rng.normal(size=(5, 7)) for _ in range(3)))
    raw = serialize_message(trajectory_msg(iiwa14_config.joint_names, Command(None, points)))
    for stamp_s in (0.25, 1_795_711_367.193468416, None):
        expected = trajectory_msg(iiwa14_config.joint_names, Command(stamp_s, points))
        assert deserialize_message(stamped(raw, stamp_s), JointTrajectory) == expected


def test_says_so_while_no_joint_states_come(ros_context, trajectory_file, iiwa14_config, monkeypatch):
    """A stack in another ROS domain looks like silence: the node names the topic and its domain, repeatedly."""
    monkeypatch.setattr(excitation_node, "NO_STATES_WARNING_S", 0.4)
    node, arm, executor = _start(ros_context, trajectory_file, iiwa14_config, START_POSE)
    arm.publishing = False
    warned = []
    logger = node.get_logger()
    monkeypatch.setattr(type(logger), "warning", lambda _self, text, *args, **kwargs: warned.append(text))
    try:
        _spin(executor, 1.0)
        assert len(warned) >= 2 and node.state == "waiting_for_joint_states"
        assert re.fullmatch(r"no joint states on /lbr/joint_states yet: is the robot's stack running, in this "
                            r"ROS_DOMAIN_ID \(\d+\)\?", warned[0]), warned
    finally:
        _stop(node, arm, executor)
