"""One recording without ROS: messages into the bag as they come, the joint states' stamps and the period markers
kept for the period index, and the decision that the last period is in."""

from __future__ import annotations

import pathlib
import struct

import numpy as np

from robot_id_recorder.bag_writer import BagWriter
from robot_id_recorder.period_index import PeriodEntry, PeriodMarkerStamp, index_yaml, period_entries

INDEX_FILE = "period_index.yaml"


def header_stamp_ns(raw: bytes) -> int:
    """The header stamp of a CDR-serialised message whose first field is std_msgs/Header [ns]."""
    sec, nanosec = struct.unpack_from("<iI" if raw[1] & 1 else ">iI", raw, 4)
    return sec * 1_000_000_000 + nanosec


class RecordingSession:
    """Feeds a BagWriter; the joint-states topic's stamps and the markers make the period index."""

    def __init__(self, writer: BagWriter, joint_states_topic: str, rate_hz: float) -> None:
        self.writer = writer
        self.joint_states_topic = joint_states_topic
        self.rate_hz = rate_hz
        self._stamps = np.empty(1024, dtype=np.int64)
        self.samples = 0
        self.latest_ns = 0
        self.markers: dict[int, PeriodMarkerStamp] = {}

    def on_message(self, topic: str, receive_ns: int, raw: bytes) -> None:
        """Write any message; joint states also count for the period index."""
        self.writer.write(topic, receive_ns, raw)
        if topic == self.joint_states_topic:
            if self.samples == len(self._stamps):
                self._stamps = np.resize(self._stamps, 2 * len(self._stamps))
            stamp = header_stamp_ns(raw)
            self._stamps[self.samples] = stamp
            self.latest_ns = max(self.latest_ns, stamp)
            self.samples += 1

    def on_marker(self, marker: PeriodMarkerStamp) -> None:
        self.markers[marker.index] = marker

    @property
    def stamps_ns(self) -> np.ndarray:
        return self._stamps[: self.samples]

    @property
    def periods_expected(self) -> int:
        """Periods the excitation announced (0 before its first marker)."""
        return max((m.num_periods for m in self.markers.values()), default=0)

    def _passed_ns(self) -> int:
        """Periods ending up to here are in: their last sample lies one sample time before their end."""
        return self.latest_ns + round(1.5e9 / self.rate_hz) if self.samples else -1

    def periods_recorded(self) -> int:
        """Announced periods whose last sample is in."""
        passed = self._passed_ns()
        return sum(1 for m in self.markers.values() if m.start_ns + round(m.period_s * 1e9) <= passed)

    @property
    def finished(self) -> bool:
        """The last announced period is in the bag."""
        return self.periods_expected > 0 and self.periods_recorded() >= self.periods_expected

    def index(self) -> list[PeriodEntry]:
        return period_entries(self.stamps_ns, list(self.markers.values()), self.rate_hz)

    def recorded_index(self) -> list[PeriodEntry]:
        """The index of the periods that are in (one still running is not missing anything)."""
        passed_s = self._passed_ns() * 1e-9
        return [e for e in self.index() if e.end_s <= passed_s]

    def close(self) -> pathlib.Path:
        """Close the bag with its period index (in metadata.yaml and as period_index.yaml beside the storage
        file); the index file's path."""
        text = index_yaml(self.index(), self.rate_hz, self.joint_states_topic)
        self.writer.close(text)
        path = self.writer.path / INDEX_FILE
        path.write_text(text)
        return path
