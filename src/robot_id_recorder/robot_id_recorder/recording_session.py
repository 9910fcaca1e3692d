"""One recording without ROS: messages into the bag as they come, the joint states' stamps, the excitation's
harmonics and the period markers kept for the period index, and the decision that the last period is in.

The index uses the rate the joint states have, measured from the header stamps of their first second
(period_index.measured_rate_hz), not the configured one; until then the configured rate. When the two differ by
more than RATE_WARNING_FRACTION, `warn` is called once with both."""

from __future__ import annotations

import pathlib
import sys
from collections.abc import Callable

import numpy as np

from robot_id_contract.period_index import (
    RATE_WINDOW_S,
    PeriodEntry,
    PeriodMarkerStamp,
    index_yaml,
    longest_usable_gap_s,
    measured_rate_hz,
    period_entries,
)
from robot_id_contract.stamps import header_stamp_ns
from robot_id_recorder.bag_writer import BagWriter

INDEX_FILE = "period_index.yaml"
RATE_WARNING_FRACTION = 0.1
"""A measured joint-state rate this far (relative) from the configured one is warned about."""


def _to_stderr(text: str) -> None:
    print(f"warning: {text}", file=sys.stderr)


class RecordingSession:
    """Feeds a BagWriter; the joint-states topic's stamps and the markers make the period index."""

    def __init__(self, writer: BagWriter, joint_states_topic: str, configured_rate_hz: float,
                 warn: Callable[[str], None] = _to_stderr) -> None:
        self.writer = writer
        self.joint_states_topic = joint_states_topic
        self.configured_rate_hz = configured_rate_hz
        self.measured_rate_hz: float | None = None
        self.warn = warn
        self._stamps = np.empty(1024, dtype=np.int64)
        self.samples = 0
        self.latest_ns = 0
        self.earliest_ns = 0
        self.markers: dict[int, PeriodMarkerStamp] = {}
        self.max_gap_s = longest_usable_gap_s(None, None)
        """The longest gap a usable period may have (period_index), from the excitation's description."""

    def on_message(self, topic: str, receive_ns: int, raw: bytes) -> None:
        """Write any message; joint states also count for the period index."""
        self.writer.write(topic, receive_ns, raw)
        if topic == self.joint_states_topic:
            if self.samples == len(self._stamps):
                self._stamps = np.resize(self._stamps, 2 * len(self._stamps))
            stamp = header_stamp_ns(raw)
            self._stamps[self.samples] = stamp
            self.latest_ns = max(self.latest_ns, stamp)
            self.earliest_ns = min(self.earliest_ns, stamp) if self.samples else stamp
            self.samples += 1
            if self.measured_rate_hz is None and self.latest_ns - self.earliest_ns >= RATE_WINDOW_S * 1e9:
                self._measure_rate()

    def _measure_rate(self) -> None:
        """Take the rate from the first second of stamps (they span it now); warn once when it is not the
        configured one."""
        self.measured_rate_hz = measured_rate_hz(self.stamps_ns)
        configured = self.configured_rate_hz
        if abs(self.measured_rate_hz / configured - 1.0) > RATE_WARNING_FRACTION:
            self.warn(f"joint states come at {self.measured_rate_hz:.1f} Hz (their header stamps), not at the "
                      f"configured {configured:g} Hz: the period index uses {self.measured_rate_hz:.1f} Hz")

    def on_marker(self, marker: PeriodMarkerStamp) -> None:
        self.markers[marker.index] = marker

    def on_description(self, period_s: float, harmonics: int) -> None:
        """The excitation's description: its period and harmonics set the longest usable gap."""
        self.max_gap_s = longest_usable_gap_s(period_s, harmonics)

    @property
    def rate_hz(self) -> float:
        """Joint states per second: measured once the first second is in, the configured rate until then."""
        return self.measured_rate_hz or self.configured_rate_hz

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
        return period_entries(self.stamps_ns, list(self.markers.values()), self.rate_hz, self.max_gap_s)

    def recorded_index(self) -> list[PeriodEntry]:
        """The index of the periods that are in (one still running is not missing anything)."""
        passed_s = self._passed_ns() * 1e-9
        return [e for e in self.index() if e.end_s <= passed_s]

    def close(self) -> pathlib.Path:
        """Close the bag with its period index (in metadata.yaml and as period_index.yaml beside the storage
        file); the index file's path."""
        text = index_yaml(self.index(), self.rate_hz, self.joint_states_topic, self.configured_rate_hz,
                          self.max_gap_s)
        self.writer.close(text)
        path = self.writer.path / INDEX_FILE
        path.write_text(text)
        return path
