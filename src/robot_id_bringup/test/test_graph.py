"""The real node graph: the simulated iiwa14 (lockstep with the recorder), the excitation node streaming two short
periods, and the recorder; the bag reads back period by period, its periods match the markers, and the estimator
reads it. With the estimator and the runner's monitor as well, every topic of the graph has publishers and
subscribers that use its QoS and are compatible."""

from __future__ import annotations

import time

import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, ReliabilityPolicy
from rosbags.rosbag2 import Reader

from robot_id_bringup.graph import Run
from robot_id_bringup.run_monitor import RunMonitor
from robot_id_contract.stamps import header_stamp_ns
from robot_id_contract.topics import GRAPH_TOPICS, IDENTIFIED_DESCRIPTION, Topic
from robot_id_estimator.node import EstimatorNode
from robot_id_estimator.recordings.loading import load_recording
from robot_id_excitation.fourier import FourierTrajectory
from robot_id_excitation.node import ExcitationNode
from robot_id_excitation.trajectory_file import save_trajectory
from robot_id_model.robot_config import load_robot_config
from robot_id_recorder.bag_tools import bag_index
from robot_id_recorder.node import RecorderNode
from robot_id_sim.node import SimNode

IIWA14 = load_robot_config("iiwa14")
PERIOD_S = 1.5
PERIODS = 2
START_POSE = np.array([0.3, 0.5, -0.2, -1.0, 0.4, 0.8, 0.1])


def _parameters(**values) -> list[Parameter]:
    return [Parameter(name, value=value) for name, value in values.items()]


def _graph_nodes(tmp_path) -> list:
    """The simulator (lockstep with the recorder), the recorder and the excitation node of two short periods."""
    rng = np.random.default_rng(4)
    a, b = 0.08 * rng.normal(size=(2, 7, 2))
    trajectory = FourierTrajectory("modified_fourier", "iiwa14", IIWA14.joint_names, 1.0 / PERIOD_S, a, b, START_POSE)
    trajectory_file = save_trajectory(trajectory, tmp_path / "excitation.yaml")
    return [
        SimNode(parameter_overrides=_parameters(robot="iiwa14", real_time_factor=0.0, lockstep_subscribers=["recorder"],
                                                start_position_rad=(START_POSE + 0.05).tolist())),
        RecorderNode(parameter_overrides=_parameters(robot="iiwa14", bag_path=str(tmp_path / "bag"),
                                                     use_sim_time=True)),
        ExcitationNode(parameter_overrides=_parameters(
            robot="iiwa14", trajectory_file=str(trajectory_file), num_periods=PERIODS, mode="sim",
            start_delay_s=0.3, settle_s=0.2, use_sim_time=True)),
    ]


@pytest.fixture
def recorded_bag(tmp_path):
    """Runs the graph until the recorder has closed the bag; the bag's path and the recorder's last status."""
    bag = tmp_path / "bag"
    rclpy.init()
    executor = SingleThreadedExecutor()
    nodes = _graph_nodes(tmp_path)
    for node in nodes:
        executor.add_node(node)
    recorder = nodes[1]
    try:
        deadline = time.monotonic() + 120.0
        while not recorder.done and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.01)
        status = recorder._status()
    finally:
        for node in nodes:
            executor.remove_node(node)
            node.destroy_node()
        rclpy.shutdown()
    assert recorder.done, "the recorder did not see the last period within 120 s"
    return bag, status


def test_two_periods_through_the_graph_read_back_period_by_period(recorded_bag):
    bag, status = recorded_bag
    assert status.finished and status.periods_recorded == PERIODS == status.periods_expected
    assert status.samples_missing == 0 and status.periods_flagged == 0

    index = bag_index(bag)
    assert index.source == "recorder" and [e.index for e in index.entries] == [0, 1]
    expected = round(PERIOD_S * IIWA14.state_rate_hz)
    for entry in index.entries:
        assert not entry.flagged and entry.expected == expected
        assert entry.samples == expected and entry.gaps == 0 and entry.duplicate_stamps == 0

    with Reader(bag) as reader:
        topics = {c.topic: c for c in reader.connections}
        states = topics[IIWA14.joint_states_topic]
        stamps_ns = np.array([header_stamp_ns(raw) for _, _, raw in reader.messages([states])])
        markers = topics["/robot_id/period_marker"]
        marker_ns = sorted(header_stamp_ns(raw) for _, _, raw in reader.messages([markers]))
        assert topics["/robot_id/excitation_trajectory"].msgcount == 1
    assert len(marker_ns) == PERIODS
    assert np.allclose([e.start_s for e in index.entries], np.array(marker_ns) * 1e-9)  # the markers bound periods
    assert np.allclose(np.diff(stamps_ns) * 1e-9, 1.0 / IIWA14.state_rate_hz)  # lockstep: not one sample lost
    for start_ns in marker_ns:  # in integer nanoseconds: a float sum can put the next period's first sample inside
        inside = (stamps_ns >= start_ns) & (stamps_ns < start_ns + round(PERIOD_S * 1e9))
        assert np.count_nonzero(inside) == expected

    recording = load_recording(bag)
    assert recording.period_s == pytest.approx(PERIOD_S)
    assert len(recording.t_s) == PERIODS * expected  # cut to the whole periods the markers announce


def _compatible(publisher, subscription) -> bool:
    """DDS request-offered rules: a reliable reader needs a reliable writer, a transient-local one a transient-local
    writer."""
    pub, sub = publisher.qos_profile, subscription.qos_profile
    return (sub.reliability != ReliabilityPolicy.RELIABLE or pub.reliability == ReliabilityPolicy.RELIABLE) and \
        (sub.durability != DurabilityPolicy.TRANSIENT_LOCAL or pub.durability == DurabilityPolicy.TRANSIENT_LOCAL)


def _endpoints(node, topic: Topic) -> tuple[list, list]:
    return node.get_publishers_info_by_topic(f"/{topic.name}"), node.get_subscriptions_info_by_topic(f"/{topic.name}")


def test_every_topic_of_the_graph_has_publishers_and_subscribers_on_its_qos_and_compatible(tmp_path):
    rclpy.init()
    executor = SingleThreadedExecutor()
    nodes = [*_graph_nodes(tmp_path), EstimatorNode(parameter_overrides=_parameters(robot="iiwa14"))]
    monitor = RunMonitor(Run("iiwa14", "sim", str(tmp_path / "out")))
    listened = [t for t in GRAPH_TOPICS if t != IDENTIFIED_DESCRIPTION]  # robot_description_identified: for rviz
    try:
        for node in nodes:
            executor.add_node(node)
        deadline = time.monotonic() + 20.0
        while time.monotonic() < deadline and not all(all(_endpoints(nodes[0], t)) for t in listened):
            executor.spin_once(timeout_sec=0.05)
            monitor.spin_once(0.0)
        for topic in GRAPH_TOPICS:
            publishers, subscriptions = _endpoints(nodes[0], topic)
            assert publishers and (subscriptions or topic not in listened), topic.name
            for endpoint in publishers + subscriptions:
                qos = endpoint.qos_profile
                assert (qos.reliability, qos.durability) == (topic.qos.reliability, topic.qos.durability), \
                    f"{topic.name}: {endpoint.node_name} uses {qos.reliability.name}, {qos.durability.name}"
            assert all(_compatible(p, s) for p in publishers for s in subscriptions), topic.name
    finally:
        monitor.close()
        for node in nodes:
            executor.remove_node(node)
            node.destroy_node()
        rclpy.shutdown()
