"""The simulator's outgoing messages as the CDR bytes the middleware sends: sensor_msgs/JointState for one arm's
joints from a template, and rosgraph_msgs/Clock.

Why not rclpy's messages: building a JointState in Python (its header, 7 names, three lists of floats) and having
rclpy convert it to C took about 16 µs per sample on this machine (of 125 µs for the Panda's whole simulated sample
at 1 kHz; the Clock message 5 µs more); the bytes take about 1 µs, and rclpy publishes bytes as they are (a
serialized message). Only the stamp and the
three arrays change from sample to sample: the template is rclpy's own serialization of a message with these names,
and where the stamp and the arrays lie in it is found by serializing marker values (so the layout, alignment and
padding included, is rclpy's, not re-derived here).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState

from robot_id_contract.stamps import NS_PER_S

_STAMP_AT = 4
"""The header stamp (int32 sec, uint32 nanosec) follows the 4-byte encapsulation header."""
_STAMP = struct.Struct("<iI")
_CDR_LE = b"\x00\x01\x00\x00"
"""The encapsulation header of little-endian CDR."""


def clock_cdr(stamp_ns: int) -> bytes:
    """rosgraph_msgs/Clock at stamp_ns: the encapsulation header, then its one field, the stamp."""
    return _CDR_LE + _STAMP.pack(*divmod(stamp_ns, NS_PER_S))


class JointStateCdr:
    """The serialized JointState of `joint_names` (empty frame_id) at a stamp, with positions, velocities, efforts."""

    def __init__(self, joint_names: Sequence[str]) -> None:
        n = len(joint_names)
        markers = [np.arange(1, n + 1) * (1.0 + k) * np.pi * 1e100 for k in range(3)]  # in no other field
        message = JointState(name=list(joint_names), position=markers[0].tolist(), velocity=markers[1].tolist(),
                             effort=markers[2].tolist())
        message.header.stamp.sec, message.header.stamp.nanosec = marker_stamp = (0x7A5B3C2D, 0x1E0F0A0B)
        template = serialize_message(message)
        if template[:_STAMP_AT] != _CDR_LE or template[_STAMP_AT:_STAMP_AT + _STAMP.size] != _STAMP.pack(*marker_stamp):
            raise RuntimeError("rclpy's JointState is not little-endian CDR with the stamp after its header")
        starts = [template.find(np.asarray(m, "<f8").tobytes()) for m in markers]
        if min(starts) < 0 or starts != sorted(starts):
            raise RuntimeError("the JointState arrays were not found in rclpy's serialization")
        ends = [start + 8 * n for start in starts]
        self._head = template[:_STAMP_AT]
        self._after_stamp = template[_STAMP_AT + _STAMP.size:starts[0]]  # frame_id, names, position's length
        self._after_position = template[ends[0]:starts[1]]
        self._after_velocity = template[ends[1]:starts[2]]
        self._tail = template[ends[2]:]

    def serialize(self, stamp_ns: int, position: np.ndarray, velocity: np.ndarray, effort: np.ndarray) -> bytes:
        """The message's bytes; the arrays hold one float64 value per joint each."""
        return b"".join((self._head, _STAMP.pack(*divmod(stamp_ns, NS_PER_S)), self._after_stamp,
                         np.asarray(position, "<f8").tobytes(), self._after_position,
                         np.asarray(velocity, "<f8").tobytes(), self._after_velocity,
                         np.asarray(effort, "<f8").tobytes(), self._tail))
