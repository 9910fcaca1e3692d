"""The graph's contract: every name relative (a namespace holds one arm's graph), latched topics transient local and
reliable, stamps exact in both directions and read from serialized messages as rclpy reads them."""

from __future__ import annotations

import pytest
from builtin_interfaces.msg import Duration, Time
from rclpy.qos import DurabilityPolicy, ReliabilityPolicy
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState

from robot_id_contract.parameters import descriptor
from robot_id_contract.stamps import header_stamp_ns, stamp_ns, stamp_s, time_msg
from robot_id_contract.topics import GRAPH_TOPICS, IDENTIFY_BAG_SERVICE, LATCHED


def test_every_name_is_relative_and_every_latched_topic_reaches_late_subscribers():
    assert not IDENTIFY_BAG_SERVICE.startswith("/")
    assert all(not topic.name.startswith("/") for topic in GRAPH_TOPICS)
    assert len({topic.name for topic in GRAPH_TOPICS}) == len(GRAPH_TOPICS)
    latched = [topic for topic in GRAPH_TOPICS if topic.qos.durability == DurabilityPolicy.TRANSIENT_LOCAL]
    assert {t.name for t in latched} >= {"robot_id/recording_status", "robot_id/identification_result",
                                         "robot_id/excitation_status", "robot_id/excitation_trajectory"}
    assert all(t.qos is LATCHED and t.qos.reliability == ReliabilityPolicy.RELIABLE for t in latched)


@pytest.mark.parametrize("t_ns", [0, 1, 999_999_999, 1_795_000_000_123_456_789, 2**31 * 10**9 - 1])
def test_stamps_round_trip_exactly_and_read_from_the_bytes(t_ns):
    stamp = time_msg(t_ns)
    assert stamp_ns(stamp) == t_ns and stamp_s(stamp) == pytest.approx(1e-9 * t_ns, abs=1e-6)
    assert stamp_ns(Duration(sec=stamp.sec, nanosec=stamp.nanosec)) == t_ns
    msg = JointState(name=["a"], position=[1.0])
    msg.header.stamp = stamp
    assert header_stamp_ns(bytes(serialize_message(msg))) == t_ns


def test_a_descriptor_is_read_only_unless_said_with_its_range():
    floats = descriptor("a speed", floats=(0.0, 2.0))
    ints = descriptor("a count", ints=(1, 9), read_only=False)
    assert floats.read_only and floats.floating_point_range[0].to_value == 2.0 and not floats.integer_range
    assert not ints.read_only and ints.integer_range[0].from_value == 1 and ints.integer_range[0].step == 1
    assert isinstance(time_msg(5), Time)
