"""The simulator reads JointTrajectory from the middleware's bytes: the same arrays as rclpy's own message for what
rclpy serializes (a reference written in C by others), and a robot on the wall clock that no longer goes silent while
a long command arrives."""

from __future__ import annotations

import numpy as np
import pytest
from builtin_interfaces.msg import Duration, Time
from hypothesis import given, settings
from hypothesis import strategies as st
from rclpy.serialization import serialize_message
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_id_sim.trajectory_cdr import trajectory_command_from_cdr

EPOCH_NS = 1_795_000_000_123_456_789
FLOATS = st.floats(-1e3, 1e3, allow_nan=False)
NAMES = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=9)
"""ROS strings end at their first NUL."""


@st.composite
def trajectories(draw) -> JointTrajectory:
    """Names and frame ids of every length (so every alignment), given or empty velocities, accelerations and
    efforts, and sometimes a ragged point."""
    n = draw(st.integers(1, 7))
    msg = JointTrajectory(joint_names=draw(st.lists(NAMES, min_size=n, max_size=n)))
    msg.header.frame_id = draw(NAMES)
    msg.header.stamp = Time(sec=draw(st.integers(0, 2**31 - 1)), nanosec=draw(st.integers(0, 999_999_999)))
    given_fields = draw(st.tuples(st.booleans(), st.booleans(), st.booleans()))
    for k in range(draw(st.integers(0, 6))):
        size = n + (1 if draw(st.integers(0, 9)) == 0 else 0)
        arrays = [draw(st.lists(FLOATS, min_size=size, max_size=size)) if given else [] for given in given_fields]
        msg.points.append(JointTrajectoryPoint(
            positions=draw(st.lists(FLOATS, min_size=size, max_size=size)), velocities=arrays[0],
            accelerations=arrays[1], effort=arrays[2], time_from_start=Duration(sec=k, nanosec=k * 1000)))
    return msg


def _rows(lists: list) -> np.ndarray | None:
    """What the follower gets for one field: None when no point has it, a (K, n) array, or (0, 0) when ragged."""
    lengths = {len(x) for x in lists}
    if lengths <= {0}:
        return None
    return np.array([list(x) for x in lists]) if len(lengths) == 1 else np.empty((0, 0))


@settings(max_examples=200, deadline=None)
@given(trajectories())
def test_the_bytes_read_as_rclpys_own_message(msg):
    command = trajectory_command_from_cdr(serialize_message(msg), EPOCH_NS)
    stamp_ns = msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
    assert command.stamp_s == pytest.approx(1e-9 * (stamp_ns - EPOCH_NS) if stamp_ns else 0.0, abs=1e-6)
    assert command.joint_names == tuple(msg.joint_names)
    np.testing.assert_array_equal(command.time_from_start_s,
                                  [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in msg.points])
    positions = _rows([p.positions for p in msg.points])
    np.testing.assert_array_equal(command.positions_rad, np.empty((0, 0)) if positions is None else positions)
    for read, field in ((command.velocities_rad_s, "velocities"), (command.accelerations_rad_s2, "accelerations")):
        expected = _rows([getattr(p, field) for p in msg.points])
        assert (read is None) == (expected is None)
        if expected is not None:
            np.testing.assert_array_equal(read, expected)


def test_a_zero_stamp_stays_on_arrival_and_bytes_that_are_no_trajectory_are_refused():
    assert trajectory_command_from_cdr(serialize_message(JointTrajectory()), EPOCH_NS).stamp_s == 0.0
    data = bytes(serialize_message(JointTrajectory(joint_names=["a"], points=[JointTrajectoryPoint(positions=[1.0])])))
    for bad in (data[:50], b"\x01\x00\x00\x00" + data[4:], b"ab"):
        with pytest.raises(ValueError):
            trajectory_command_from_cdr(bad)
