"""Time stamps between messages (builtin_interfaces Time and Duration, or any object with sec and nanosec), integer
nanoseconds and float seconds."""

from __future__ import annotations

import struct

from builtin_interfaces.msg import Time

NS_PER_S = 1_000_000_000


def stamp_ns(stamp: object) -> int:
    """A Time or Duration in nanoseconds (also of a message read by rosbags, whose fields may be numpy integers)."""
    return int(stamp.sec) * NS_PER_S + int(stamp.nanosec)


def stamp_s(stamp: object) -> float:
    """A Time or Duration in seconds."""
    return stamp.sec + 1e-9 * stamp.nanosec


def time_msg(t_ns: int) -> Time:
    """builtin_interfaces/Time of t_ns nanoseconds."""
    sec, nanosec = divmod(int(t_ns), NS_PER_S)
    return Time(sec=sec, nanosec=nanosec)


def header_stamp_ns(raw: bytes) -> int:
    """The header stamp of a serialized message that begins with a std_msgs/Header (JointState, ...), without
    deserializing it: CDR puts the stamp right after the 4-byte encapsulation header."""
    order = "<" if raw[1] & 1 else ">"  # CDR_LE, PL_CDR_LE
    sec, nanosec = struct.unpack_from(f"{order}iI", raw, 4)
    return sec * NS_PER_S + nanosec
