"""The messages of the excitation node's commands: built from their points, serialized once, and stamped when
sent (the stamp written into the serialized bytes)."""

from __future__ import annotations

import struct

from builtin_interfaces.msg import Duration, Time
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_id_excitation.excitation_plan import Command


def time_msg(seconds: float) -> Time:
    sec, nanosec = divmod(round(seconds * 1e9), 1_000_000_000)
    return Time(sec=sec, nanosec=nanosec)


def duration_msg(seconds: float) -> Duration:
    sec, nanosec = divmod(round(seconds * 1e9), 1_000_000_000)
    return Duration(sec=sec, nanosec=nanosec)


def trajectory_msg(joint_names: list[str], command: Command) -> JointTrajectory:
    """The message of a command (header stamp zero: due on arrival)."""
    msg = JointTrajectory(joint_names=list(joint_names))
    if command.stamp_s is not None:
        msg.header.stamp = time_msg(command.stamp_s)
    p = command.points
    msg.points = [
        JointTrajectoryPoint(positions=q.tolist(), velocities=dq.tolist(), accelerations=ddq.tolist(),
                             time_from_start=duration_msg(float(t)))
        for t, q, dq, ddq in zip(p.t_rel_s, p.q_rad, p.dq_rad_s, p.ddq_rad_s2, strict=True)
    ]
    return msg


def stamped(raw: bytes, stamp_s: float | None) -> bytes:
    """A serialized message whose first field is a std_msgs/Header, with its stamp set (None: left zero); the
    stamp follows the 4-byte CDR encapsulation header, in the byte order that header names."""
    if stamp_s is None:
        return raw
    sec, nanosec = divmod(round(stamp_s * 1e9), 1_000_000_000)
    stamped = bytearray(raw)
    struct.pack_into("<iI" if stamped[1] & 1 else ">iI", stamped, 4, sec, nanosec)
    return bytes(stamped)
