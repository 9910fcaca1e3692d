"""trajectory_msgs/JointTrajectory read from the bytes the middleware received (CDR as ROS 2 sends it: a 4-byte
encapsulation header, then every field aligned to its size from the end of that header), point by point in Python.

Why not rclpy's own message: rclpy turns the bytes into a message in C, holding the interpreter lock throughout,
40-150 ms for a 20 s command of 2001 points on this machine. The wall clock's thread, which publishes the joint
states, needs that lock: the simulated robot went silent for as long, and the excitation node rightly held the arm on
joint states 0.21 s old (CI, Panda at 1 kHz with a busy process per core). A real robot's controller reads its
commands beside its control loop, never instead of it. Read here, the interpreter hands the lock over every few
milliseconds.
"""

from __future__ import annotations

import struct

import numpy as np

from robot_id_sim.trajectory_follower import TrajectoryCommand


class _CdrReader:
    """Fields in order from CDR bytes; positions count from the end of the encapsulation header."""

    def __init__(self, data: bytes) -> None:
        if len(data) < 4 or data[0] != 0 or data[1] not in (0, 1):  # CDR_BE, CDR_LE
            raise ValueError("not a CDR-encoded message")
        self.order = "<" if data[1] == 1 else ">"
        self.body = memoryview(data)[4:]
        self.position = 0

    def _take(self, size: int, count: int = 1) -> int:
        """Align to `size`, check that `count` values follow; their start."""
        self.position += -self.position % size
        start = self.position
        self.position += size * count
        if self.position > len(self.body):
            raise ValueError("the message ends before its last field")
        return start

    def int32(self) -> int:
        return struct.unpack_from(f"{self.order}i", self.body, self._take(4))[0]

    def uint32(self) -> int:
        return struct.unpack_from(f"{self.order}I", self.body, self._take(4))[0]

    def string(self) -> str:
        length = self.uint32()  # the terminating NUL included
        start = self._take(1, length)
        return bytes(self.body[start:start + max(length - 1, 0)]).decode("utf-8")

    def float64s(self) -> np.ndarray:
        count = self.uint32()
        if count == 0:  # nothing follows, so nothing is aligned
            return np.empty(0)
        start = self._take(8, count)
        return np.frombuffer(self.body, dtype=f"{self.order}f8", count=count, offset=start)

    def seconds(self) -> tuple[int, int]:
        """builtin_interfaces Time or Duration: seconds and nanoseconds."""
        return self.int32(), self.uint32()


def trajectory_command_from_cdr(data: bytes, epoch_ns: int = 0) -> TrajectoryCommand:
    """A serialized JointTrajectory as plain arrays, its stamp in seconds after `epoch_ns` (the robot's time 0; a
    zero stamp stays 0: on arrival); ragged positions, velocities or accelerations become an unusable shape that the
    follower refuses with its reason. ValueError when the bytes are not a JointTrajectory."""
    reader = _CdrReader(data)
    stamp_sec, stamp_nanosec = reader.seconds()
    reader.string()  # header.frame_id
    joint_names = tuple(reader.string() for _ in range(reader.uint32()))
    fields: list[list[np.ndarray]] = [[], [], []]
    t_s = []
    for _ in range(reader.uint32()):
        for values in fields:
            values.append(reader.float64s())
        reader.float64s()  # effort
        sec, nanosec = reader.seconds()
        t_s.append(sec + 1e-9 * nanosec)
    stamp_ns = stamp_sec * 1_000_000_000 + stamp_nanosec
    positions, velocities, accelerations = (_stacked(values) for values in fields)
    return TrajectoryCommand(
        stamp_s=1e-9 * (stamp_ns - epoch_ns) if stamp_ns else 0.0, joint_names=joint_names,
        time_from_start_s=np.array(t_s), positions_rad=np.empty((0, 0)) if positions is None else positions,
        velocities_rad_s=velocities, accelerations_rad_s2=accelerations)


def _stacked(rows: list[np.ndarray]) -> np.ndarray | None:
    """The rows as a (K, n) array; None when every row is empty (not given); an unusable (0, 0) when ragged."""
    lengths = {len(row) for row in rows}
    if lengths <= {0}:
        return None
    return np.array(rows, dtype=float) if len(lengths) == 1 else np.empty((0, 0))
