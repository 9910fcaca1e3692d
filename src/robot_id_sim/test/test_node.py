"""The simulated robot node over DDS: topics and rates of the robot config, the latched description, following and
refusing trajectories, lockstep pacing, and one clear line for a bad parameter."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest
import rclpy
import yaml
from builtin_interfaces.msg import Duration
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState, TimeReference
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_id_contract.topics import RECORDING_STATUS, SIM_ACK
from robot_id_model.robot_config import load_robot_config
from robot_id_model.stack_hardware import StackSensors, stack_sensors
from robot_id_msgs.msg import RecordingStatus
from robot_id_sim.node import STATUS_PERIOD_S, SimNode
from robot_id_sim.true_dynamics import TRUTH_FRICTION

IIWA14 = load_robot_config("iiwa14")
RELIABLE = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
PROBE_QOS = QoSProfile(depth=10_000, reliability=ReliabilityPolicy.RELIABLE)
"""The probe keeps every joint state of a test: it shares one executor thread with the simulator and, on a loaded
machine, falls more than 100 messages behind (depth 100 then dropped the oldest: gaps of 4-12 ms in a CI run)."""


def _seconds(stamp) -> float:
    return stamp.sec + 1e-9 * stamp.nanosec


class Probe(Node):
    """Records joint states and /clock; optionally acknowledges as a lockstep subscriber, only every ack_every-th
    message (a slow subscriber)."""

    def __init__(self, ack_name: str = "", ack_every: int = 1) -> None:
        super().__init__(ack_name or "probe")  # a lockstep subscriber is known by its node name
        self.stamps: list[float] = []
        self.states: list[JointState] = []
        self.clock: list[float] = []
        self.ack_name, self.ack_every = ack_name, ack_every
        self.create_subscription(JointState, IIWA14.joint_states_topic, self._on_state, PROBE_QOS)
        self.create_subscription(Clock, "/clock", lambda m: self.clock.append(_seconds(m.clock)), 10)
        self.ack_pub = self.create_publisher(TimeReference, SIM_ACK.name, RELIABLE)
        self.trajectory_pub = self.create_publisher(JointTrajectory, IIWA14.joint_trajectory_topic, 10)

    def _on_state(self, msg: JointState) -> None:
        self.states.append(msg)
        self.stamps.append(_seconds(msg.header.stamp))
        if self.ack_name and len(self.stamps) % self.ack_every == 0:
            self.ack_pub.publish(TimeReference(time_ref=msg.header.stamp, source=self.ack_name))


@pytest.fixture
def graph():
    """(start(parameters) -> (sim, probe), spin(seconds, until=None)); every node is destroyed afterwards."""
    rclpy.init()
    executor = SingleThreadedExecutor()
    nodes: list[Node] = []

    def start(probe: Probe | None = None, **parameters):
        sim = SimNode(parameter_overrides=[Parameter(k, value=v) for k, v in parameters.items()])
        probe = probe or Probe()
        for node in (sim, probe):
            nodes.append(node)
            executor.add_node(node)
        return sim, probe

    def spin(seconds: float, until=None) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and not (until and until()):
            executor.spin_once(timeout_sec=0.01)

    yield start, spin
    for node in nodes:
        executor.remove_node(node)
        node.destroy_node()
    rclpy.shutdown()


def test_publishes_the_configs_joint_states_at_its_rate_and_a_latched_description(graph):
    start, spin = graph
    sim, probe = start(robot="iiwa14", torque_noise_nm=[0.0], real_time_factor=1.0)
    spin(10.0, until=lambda: len(probe.stamps) >= 500)
    assert len(probe.stamps) >= 500
    assert probe.states[0].name == list(IIWA14.joint_names)
    period = np.diff(probe.stamps)
    assert np.allclose(period, 1.0 / IIWA14.state_rate_hz)  # 500 Hz of sim time, no gap
    # held upright at rest: A1 turns about the vertical, so it carries no gravity, only the sensor offset (< 0.64 Nm)
    effort = np.array([s.effort for s in probe.states])
    assert np.all(np.isfinite(effort)) and abs(effort[-1, 0]) < 1.0
    clock = np.array(probe.clock)
    # clock_rate_hz 250: every time on its grid, and consecutive but for a rare miss (/clock is not latched, the
    # first ones go while discovery runs; its depth of 10 keeps the latest time, not every one, for a slow reader)
    ticks = np.diff(clock[-100:]) * 250.0
    assert len(clock) > 100 and np.allclose(ticks, np.round(ticks)) and np.median(ticks) == pytest.approx(1.0)

    late = Node("late_listener", context=sim.context)
    received: list[String] = []
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    late.create_subscription(String, "/lbr/robot_description", received.append, latched)
    executor = rclpy.executors.SingleThreadedExecutor(context=sim.context)
    executor.add_node(late)
    end = time.monotonic() + 5.0
    while not received and time.monotonic() < end:
        executor.spin_once(timeout_sec=0.05)
    late.destroy_node()
    assert received and "<robot" in received[0].data and "lbr_A1" in received[0].data


def _trajectory(goal_rad: np.ndarray, after_s: float) -> JointTrajectory:
    point = JointTrajectoryPoint(positions=goal_rad.tolist(), velocities=[0.0] * len(goal_rad),
                                 time_from_start=Duration(sec=int(after_s), nanosec=int(after_s % 1 * 1e9)))
    return JointTrajectory(joint_names=list(IIWA14.joint_names), points=[point])


def test_follows_a_trajectory_and_refuses_one_outside_the_limits(graph):
    start, spin = graph
    sim, probe = start(robot="iiwa14", real_time_factor=2.0)
    spin(5.0, until=lambda: len(probe.stamps) > 10)
    goal = np.array([0.3, 0.4, -0.2, -0.5, 0.1, 0.3, 0.2])
    probe.trajectory_pub.publish(_trajectory(goal, 1.0))
    spin(10.0, until=lambda: probe.stamps and probe.stamps[-1] > probe.stamps[0] + 3.0)
    reached = np.array(probe.states[-1].position)
    assert np.abs(reached - goal).max() < 0.01  # PD + nominal feed-forward holds within static friction
    assert sim.refused == 0

    outside = goal.copy()
    outside[3] = IIWA14.limits.position_upper_rad[3] + 0.1
    probe.trajectory_pub.publish(_trajectory(outside, 1.0))
    spin(5.0, until=lambda: sim.refused > 0)
    assert sim.refused == 1
    first = len(probe.states)
    spin(10.0, until=lambda: len(probe.states) > first + 500)
    assert np.abs(np.array(probe.states[-1].position) - goal).max() < 0.01  # still holding the last goal


def test_lockstep_waits_for_a_slow_subscriber_and_loses_nothing(graph):
    start, spin = graph
    window_s = 0.05
    slow = Probe(ack_name="recorder", ack_every=20)
    sim, probe = start(slow, robot="iiwa14", real_time_factor=0.0, lockstep_subscribers=["recorder"],
                       lockstep_window_s=window_s)
    spin(20.0, until=lambda: len(probe.stamps) >= 2000)
    stamps = np.array(probe.stamps)
    assert len(stamps) >= 2000
    assert np.allclose(np.diff(stamps), 1.0 / IIWA14.state_rate_hz)  # every sample, in order
    acked = max(sim.pacer.acknowledged_s.values())
    assert sim.robot.t_s <= acked + window_s + 1.0 / IIWA14.state_rate_hz + 1e-9


def test_once_the_recording_is_finished_the_simulation_holds_and_waits_for_nobody(graph):
    """The recorder stops acknowledging once its recording is finished; the simulation used to report "waiting for
    ['recorder']" every few seconds until it was stopped, long after the result was in."""
    start, spin = graph
    recorder = Probe(ack_name="recorder")
    sim, probe = start(recorder, robot="iiwa14", real_time_factor=0.0, lockstep_subscribers=["recorder"])
    lines: list[str] = []

    class Log:
        def info(self, text: str) -> None:
            lines.append(text)

    spin(20.0, until=lambda: len(probe.stamps) >= 200)
    sim.get_logger = Log
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    status = recorder.create_publisher(RecordingStatus, RECORDING_STATUS.name, latched)
    recorder.ack_name = ""  # done: no more acknowledgements, as the recorder
    status.publish(RecordingStatus(bag_path="run/bag", periods_recorded=1, periods_expected=1, finished=True))
    spin(10.0, until=lambda: sim.pacer.finished)
    held_s = sim.robot.t_s
    spin(STATUS_PERIOD_S + 1.0)
    assert sim.robot.t_s == held_s and sim.pacer.waiting_for(held_s) == []
    assert lines == [f"the recording is finished (run/bag): the simulation holds at sim time {held_s:.3f} s"]


@pytest.mark.parametrize(("arguments", "line"), [
    (["true_dynamics:=bogus"], "true_dynamics must be one of ('perturbed', 'urdf'), not 'bogus'"),
    (["clock:=wall", "real_time_factor:=2.0"], "clock wall runs in real time and waits for nobody: real_time_factor "
                                               "must be 1 and lockstep_subscribers empty"),
])
def test_a_bad_parameter_gives_one_line_and_exit_code_2(arguments, line):
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    command = [sys.executable, "-c", "import sys; from robot_id_sim.node import main; sys.exit(main(sys.argv[1:]))",
               "--ros-args"]
    for argument in arguments:
        command += ["-p", argument]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 2
    assert line in result.stderr
    assert "Traceback" not in result.stderr


def test_simulates_an_identified_urdf_as_it_is_and_publishes_it(graph, tmp_path):
    start, spin = graph
    urdf = tmp_path / "identified.urdf"
    urdf.write_text(IIWA14.urdf_path.read_text().replace("<robot name=", "<!-- identified --><robot name=", 1))
    truth_path = tmp_path / "truth.yaml"
    _sim, probe = start(robot="iiwa14", urdf=str(urdf), true_dynamics="urdf", truth_file=str(truth_path))
    received: list[String] = []
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    probe.create_subscription(String, IIWA14.robot_description_topic, received.append, latched)
    spin(5.0, until=lambda: bool(received))
    # the file as it is, with the simulated hardware's ros2_control element (read here as the recorder's reader does)
    assert received and _without_ros2_control(received[0].data) == _without_ros2_control(urdf.read_text())
    filter_s = IIWA14.torque_filter_time_constant_s
    assert stack_sensors(received[0].data) == StackSensors(filter_s, False, f"measured_torque_tau: {filter_s!r}")
    truth = yaml.safe_load(truth_path.read_text())
    assert truth["source"] == f"{urdf} as it is" and truth["payload"] is None
    nominal = IIWA14.load_model(TRUTH_FRICTION)
    assert truth["links"][0]["mass_kg"] == pytest.approx(nominal.model.inertias[1].mass)
    assert all(j["torque_offset_nm"] == 0.0 for j in truth["joints"])


def _without_ros2_control(urdf_text: str) -> str:
    return re.sub(r"\s*<ros2_control.*</ros2_control>", "", urdf_text, flags=re.S)
