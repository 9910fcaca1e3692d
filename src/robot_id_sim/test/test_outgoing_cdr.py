"""The simulator publishes its joint states and /clock as CDR bytes it writes itself: byte for byte what rclpy
serializes for the same message (the reference: rosidl's C serializer), whatever the names' lengths (so every
alignment), stamps and values (NaN, infinities, signed zeros)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from rclpy.serialization import deserialize_message, serialize_message
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState

from robot_id_sim.outgoing_cdr import JointStateCdr, clock_cdr

NAMES = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=13)
"""ROS strings end at their first NUL."""
VALUES = st.floats(allow_nan=True, allow_infinity=True)
STAMPS_NS = st.integers(0, (2**31 - 1) * 1_000_000_000 + 999_999_999)


@st.composite
def joint_states(draw) -> tuple[list[str], int, np.ndarray]:
    n = draw(st.integers(1, 9))
    names = draw(st.lists(NAMES, min_size=n, max_size=n))
    stamp_ns = draw(STAMPS_NS)
    values = np.array(draw(st.lists(VALUES, min_size=3 * n, max_size=3 * n))).reshape(3, n)
    return names, stamp_ns, values


@settings(max_examples=200, deadline=None)
@given(joint_states())
def test_the_bytes_are_rclpys_serialization_of_the_same_message(case):
    names, stamp_ns, (position, velocity, effort) = case
    reference = JointState(name=names, position=position.tolist(), velocity=velocity.tolist(), effort=effort.tolist())
    reference.header.stamp.sec, reference.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)

    written = JointStateCdr(names).serialize(stamp_ns, position, velocity, effort)

    assert written == serialize_message(reference)


@given(STAMPS_NS)
def test_the_clock_is_rclpys_serialization_of_the_same_message(stamp_ns):
    reference = Clock()
    reference.clock.sec, reference.clock.nanosec = divmod(stamp_ns, 1_000_000_000)
    assert clock_cdr(stamp_ns) == serialize_message(reference)


def test_one_template_serves_sample_after_sample():
    """The template is not changed by writing: the second sample reads back as itself, not as the first."""
    cdr = JointStateCdr(["A1", "A2", "A3"])
    cdr.serialize(5_000_000, np.ones(3), np.ones(3), np.ones(3))
    back = deserialize_message(cdr.serialize(1_002_000_000, np.array([0.1, -0.2, 0.3]), np.zeros(3),
                                             np.array([-1.5, 2.5, 40.0])), JointState)
    assert (back.header.stamp.sec, back.header.stamp.nanosec) == (1, 2_000_000)
    assert back.name == ["A1", "A2", "A3"] and back.header.frame_id == ""
    assert list(back.position) == [0.1, -0.2, 0.3] and list(back.velocity) == [0.0, 0.0, 0.0]
    assert list(back.effort) == [-1.5, 2.5, 40.0]
