"""Shared helpers of the recorder tests: CDR joint states and period markers, a recording written through
RecordingSession/BagWriter with chosen defects, and child processes that import this package from its source."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
from dataclasses import dataclass, field

import numpy as np
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState

from robot_id_contract.period_index import PeriodMarkerStamp
from robot_id_msgs.msg import PeriodMarker
from robot_id_recorder.bag_writer import BagWriter
from robot_id_recorder.message_types import typestore_for
from robot_id_recorder.recording_session import RecordingSession

PACKAGE_DIR = pathlib.Path(__file__).resolve().parents[1]
JOINT_STATE = "sensor_msgs/msg/JointState"
PERIOD_MARKER = "robot_id_msgs/msg/PeriodMarker"
STATES_TOPIC = "/lbr/joint_states"
MARKER_TOPIC = "/robot_id/period_marker"
JOINTS = [f"lbr_A{i}" for i in range(1, 8)]
RATE_HZ = 500.0
DT_NS = 2_000_000
START_NS = 1_700_000_000_123_456_000
"""A realistic epoch stamp: at 1.7e9 s a float64 second resolves ~0.24 µs, the resolution the index works with."""


def child_env() -> dict[str, str]:
    """The environment of a child process: this package imported from its source, not the installed copy."""
    path = os.pathsep.join(p for p in (str(PACKAGE_DIR), os.environ.get("PYTHONPATH", "")) if p)
    return dict(os.environ, PYTHONPATH=path)


def run_cli(*args: str, timeout: float = 60.0) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "robot_id_recorder", *args], capture_output=True, text=True,
                          timeout=timeout, env=child_env())


def _stamp(msg, stamp_ns: int) -> None:
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(stamp_ns), 1_000_000_000)


def joint_state_raw(stamp_ns: int, position: list[float], effort: list[float]) -> bytes:
    msg = JointState(name=JOINTS, position=position, velocity=[0.0] * len(position), effort=effort)
    _stamp(msg, stamp_ns)
    return bytes(serialize_message(msg))


def marker_raw(stamp_ns: int, index: int, num_periods: int, period_s: float) -> bytes:
    msg = PeriodMarker(period_index=index, num_periods=num_periods, period_s=period_s)
    _stamp(msg, stamp_ns)
    return bytes(serialize_message(msg))


def sample_values(k: int) -> tuple[list[float], list[float]]:
    """Positions and efforts of sample k: distinct for every sample and joint."""
    return [0.001 * k + 0.1 * j for j in range(7)], [-0.01 * k - j for j in range(7)]


@dataclass
class Recording:
    path: pathlib.Path
    markers: list[PeriodMarkerStamp]
    stamps_ns: list[int] = field(default_factory=list)
    """Header stamps of the joint states written, in order."""
    samples: list[int] = field(default_factory=list)
    """The sample number k (sample_values) of every joint state written."""
    session: RecordingSession | None = None


def write_recording(path: pathlib.Path, storage: str = "mcap", periods: int = 3, per_period: int = 250,
                    drop: range | None = None, before: int = 0, after: int = 0, duplicates: tuple[int, ...] = (),
                    with_markers: bool = True, with_index: bool = True) -> Recording:
    """`periods` periods of `per_period` samples at 500 Hz from START_NS, `before` samples ahead of the first and
    `after` past the last; sample numbers in `drop` left out, those in `duplicates` written twice. Markers as the
    excitation publishes them (stamp = period start), written before the period's first sample. Closed through
    RecordingSession (period index in metadata and beside the storage file) unless not `with_index`."""
    store = typestore_for([JOINT_STATE, PERIOD_MARKER])
    writer = BagWriter(path, store, storage)
    writer.add_topic(STATES_TOPIC, JOINT_STATE)
    if with_markers:
        writer.add_topic(MARKER_TOPIC, PERIOD_MARKER)
    session = RecordingSession(writer, STATES_TOPIC, RATE_HZ)
    period_s = per_period / RATE_HZ
    recording = Recording(path, [PeriodMarkerStamp(i, START_NS + i * per_period * DT_NS, period_s, periods)
                                 for i in range(periods)], session=session)
    for k in range(-before, periods * per_period + after):
        stamp = START_NS + k * DT_NS
        if with_markers and k >= 0 and k % per_period == 0 and k // per_period < periods:
            marker = recording.markers[k // per_period]
            session.on_message(MARKER_TOPIC, stamp, marker_raw(stamp, marker.index, periods, period_s))
            session.on_marker(marker)
        if drop is not None and k in drop:
            continue
        for _ in range(2 if k in duplicates else 1):
            session.on_message(STATES_TOPIC, stamp + 150_000, joint_state_raw(stamp, *sample_values(k)))
            recording.stamps_ns.append(stamp)
            recording.samples.append(k)
    if with_index:
        session.close()
    else:
        writer.close()
    return recording


def stamps_array(values) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)
