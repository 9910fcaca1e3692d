"""The estimator reads what the recorder writes: a period the recorder flagged is left out with a note (the later
periods follow on), and bags from the standard recorder (no period index; MCAP or sqlite3) are cut at the markers."""

from __future__ import annotations

import numpy as np
import pytest
from rclpy.serialization import serialize_message
from rosbags.rosbag2 import StoragePlugin, Writer
from sensor_msgs.msg import JointState

from robot_id_contract.period_index import PeriodMarkerStamp
from robot_id_estimator.recordings.loading import load_recording
from robot_id_msgs.msg import PeriodMarker
from robot_id_recorder.bag_writer import BagWriter
from robot_id_recorder.message_types import typestore_for
from robot_id_recorder.recording_session import RecordingSession

RATE_HZ = 200.0
PERIOD_S = 1.0
PERIODS = 3
START_NS = 500_000_000
JOINTS = [f"j{i}" for i in range(1, 4)]
TYPES = ["sensor_msgs/msg/JointState", "robot_id_msgs/msg/PeriodMarker"]


def _stamp(msg, t_ns: int) -> None:
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(t_ns, 1_000_000_000)


def _messages(skip: range = range(0)) -> list[tuple[str, int, bytes]]:
    """(topic, t_ns, raw): a periodic motion from START_NS on for PERIODS periods (samples `skip` left out), and a
    marker at each period start."""
    out = []
    for k in range(round(PERIODS * PERIOD_S * RATE_HZ)):
        if k in skip:
            continue
        t_ns = START_NS + round(k * 1e9 / RATE_HZ)
        phase = 2 * np.pi * (t_ns - START_NS) * 1e-9 / PERIOD_S
        msg = JointState(name=JOINTS, position=[0.3 * np.sin(phase + i) for i in range(3)],
                         velocity=[0.0] * 3, effort=[2.0 * np.cos(phase + i) for i in range(3)])
        _stamp(msg, t_ns)
        out.append(("/joint_states", t_ns, bytes(serialize_message(msg))))
    for p in range(PERIODS):
        marker = PeriodMarker(period_index=p, num_periods=PERIODS, period_s=PERIOD_S)
        t_ns = START_NS + round(p * PERIOD_S * 1e9)
        _stamp(marker, t_ns)
        out.append(("/robot_id/period_marker", t_ns, bytes(serialize_message(marker))))
    return sorted(out, key=lambda m: m[1])


def test_a_flagged_period_is_left_out_and_the_later_ones_follow_on(tmp_path):
    writer = BagWriter(tmp_path / "bag", typestore_for(TYPES))
    writer.add_topic("/joint_states", TYPES[0])
    writer.add_topic("/robot_id/period_marker", TYPES[1])
    session = RecordingSession(writer, "/joint_states", RATE_HZ)
    gap = range(260, 280)  # 0.1 s missing in period 1
    for topic, t_ns, raw in _messages(skip=gap):
        session.on_message(topic, t_ns, raw)
        if topic == "/robot_id/period_marker":
            session.on_marker(PeriodMarkerStamp(t_ns // round(PERIOD_S * 1e9), t_ns, PERIOD_S, PERIODS))
    session.close()

    recording = load_recording(tmp_path / "bag")
    per_period = round(PERIOD_S * RATE_HZ)
    assert len(recording.t_s) == 2 * per_period  # periods 0 and 2
    assert np.allclose(np.diff(recording.t_s), 1.0 / RATE_HZ)  # no hole where period 1 was
    note = next(r for r in recording.repairs if r.startswith("left out "))
    assert note == ("left out 1 of 3 periods, flagged by the recorder: period 1 (20 of 200 samples missing (10 %, "
                    "more than 1 %), a gap of 0.1050 s, longer than the 0.1 s the estimator fills); the later periods "
                    "follow on")
    # period 2 moved back onto period 1's place: the motion is periodic, so it continues period 0 exactly
    assert np.allclose(recording.q_rad[:per_period], recording.q_rad[per_period:], atol=1e-12)


@pytest.mark.parametrize("storage", [StoragePlugin.MCAP, StoragePlugin.SQLITE3])
def test_bags_of_the_standard_recorder_are_cut_at_the_markers(tmp_path, storage):
    store = typestore_for(TYPES)
    writer = Writer(tmp_path / "bag", version=9, storage_plugin=storage)
    writer.open()
    connections = {"/joint_states": writer.add_connection("/joint_states", TYPES[0], typestore=store),
                   "/robot_id/period_marker": writer.add_connection("/robot_id/period_marker", TYPES[1],
                                                                    typestore=store)}
    lead_in = JointState(name=JOINTS, position=[0.0] * 3, velocity=[0.0] * 3, effort=[0.0] * 3)
    _stamp(lead_in, START_NS - 100_000_000)  # before the first period: cut away
    writer.write(connections["/joint_states"], START_NS - 100_000_000, bytes(serialize_message(lead_in)))
    for topic, t_ns, raw in _messages():
        writer.write(connections[topic], t_ns, raw)
    writer.close()

    recording = load_recording(tmp_path / "bag")
    assert recording.period_s == PERIOD_S
    assert len(recording.t_s) == PERIODS * round(PERIOD_S * RATE_HZ)
    assert not any(r.startswith("left out ") for r in recording.repairs)
