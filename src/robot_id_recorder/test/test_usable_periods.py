"""Real streams are usable streams: a period is flagged only for what makes it unusable (more than 1 % missing, a
gap longer than 5 % of the highest harmonic's period), its figures are reported either way, and the period index
uses the rate the joint states really have (the lbr stack's 100 Hz while a config says 500 Hz). The whole path from
a non-real-time publisher's stream to an identification: the estimator's test_estimator_reads_recorder_bags.py."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from recorder_bags import START_NS, STATES_TOPIC, joint_state_raw

from robot_id_contract.period_index import PeriodMarkerStamp, longest_usable_gap_s, measured_rate_hz
from robot_id_recorder.recording_session import RecordingSession

PERIOD_S = 20.0
HARMONICS = 5


class _NullWriter:
    path = None

    def write(self, topic: str, timestamp_ns: int, raw: bytes) -> None:
        pass


def _session(stamps_ns: np.ndarray, rate_hz: float, configured_hz: float, harmonics: int | None = HARMONICS,
             periods: int = 1) -> tuple[RecordingSession, list[str]]:
    """A session fed `stamps_ns` (in that order) of a `periods`-period excitation from START_NS, its markers and,
    unless `harmonics` is None, its description; the warnings it gave."""
    warnings: list[str] = []
    session = RecordingSession(_NullWriter(), STATES_TOPIC, configured_hz, warnings.append)
    if harmonics is not None:
        session.on_description(PERIOD_S, harmonics)
    for i in range(periods):
        session.on_marker(PeriodMarkerStamp(i, START_NS + round(i * PERIOD_S * 1e9), PERIOD_S, periods))
    for stamp in stamps_ns:
        session.on_message(STATES_TOPIC, int(stamp), joint_state_raw(int(stamp), [0.0], [0.0]))
    return session, warnings


def _grid(rate_hz: float, periods: int = 1, drop: set[int] = frozenset(), jitter_s: float = 0.0,
          seed: int = 0) -> np.ndarray:
    """Header stamps at rate_hz over `periods` periods from START_NS, with Gaussian jitter; samples `drop` missing."""
    k = np.array([i for i in range(round(periods * PERIOD_S * rate_hz)) if i not in drop])
    noise = np.random.default_rng(seed).normal(0.0, jitter_s, len(k))
    return START_NS + np.round((k / rate_hz + noise) * 1e9).astype(np.int64)


def test_a_period_with_half_a_percent_missing_and_50_ms_gaps_is_used():
    """20 s at 500 Hz, 5 harmonics (the highest 4 s, so gaps up to 0.2 s are usable): 50 of 10 000 samples missing,
    48 of them in two 50 ms gaps. The figures are in the index; nothing flags the period."""
    drop = {*range(3000, 3024), *range(7000, 7024), 5000, 9000}
    session, warnings = _session(_grid(500.0, drop=drop, jitter_s=50e-6), 500.0, 500.0)
    (entry,) = session.index()
    assert warnings == [] and session.max_gap_s == pytest.approx(0.2)
    assert (entry.expected, entry.samples, entry.missing, entry.gaps) == (10_000, 9_950, 50, 4)
    assert entry.longest_gap_s == pytest.approx(0.050, abs=0.5e-3)
    assert entry.jitter_s == pytest.approx(np.sqrt(2) * 50e-6, rel=0.1)  # spacing of two jittered stamps
    assert not entry.flagged and entry.reasons == []


@pytest.mark.parametrize(("harmonics", "drop", "reasons"), [
    (HARMONICS, {*range(50, 10_000, 97)}, ["103 of 10000 samples missing (1.03 %, more than 1 %)"]),
    (HARMONICS, {*range(50, 10_000, 100)}, []),  # 100 missing: 1 %, not more
    (10, {*range(4000, 4059)}, ["a gap of 0.1200 s, longer than the 0.1 s the estimator fills"]),
    (10, {*range(4000, 4039)}, []),  # 0.08 s
    (None, {*range(4000, 4059)}, ["a gap of 0.1200 s, longer than the 0.1 s the estimator fills"]),
    (HARMONICS, {*range(4000, 4059)}, []),  # the same gap within the 0.2 s of 5 harmonics
], ids=["1.03 % missing", "1 % missing", "long gap", "short gap", "gap, harmonics unknown", "gap, 5 harmonics"])
def test_what_makes_a_period_unusable_flags_it_and_nothing_else(harmonics, drop, reasons):
    session, _ = _session(_grid(500.0, drop=drop), 500.0, 500.0, harmonics)
    (entry,) = session.index()
    assert entry.reasons == reasons and entry.flagged == bool(reasons)
    assert entry.missing == len(drop)


def test_joint_states_at_100_hz_work_with_a_config_that_says_500_hz(tmp_path):
    """The lbr stack publishes at its update_rate (100 Hz) whatever state_rate_hz says: the index expects 2000
    samples a period from the measured rate, nothing is flagged, and one warning names both rates."""
    drop = {150, 2500, 3333}
    stamps = _grid(100.0, periods=2, drop=drop, jitter_s=0.3e-3, seed=1)
    session, warnings = _session(stamps, 100.0, 500.0, periods=2)
    assert warnings == ["joint states come at 100.0 Hz (their header stamps), not at the configured 500 Hz: the "
                        "period index uses 100.0 Hz"]
    assert session.rate_hz == pytest.approx(100.0, rel=1e-3) and session.finished
    entries = session.recorded_index()
    assert not any(e.flagged for e in entries) and len(entries) == 2
    # the rate from 1 s of stamps jittered by 0.3 ms is good to about 0.05 %: the counts to one sample
    assert [e.expected for e in entries] == pytest.approx([2000, 2000], abs=1)
    assert [e.missing for e in entries] == pytest.approx([1, 2], abs=1)
    assert all(e.longest_gap_s == pytest.approx(0.02, abs=2e-3) for e in entries)


def test_the_rate_is_measured_over_the_first_second_and_a_close_one_is_not_warned_about():
    stamps = _grid(475.0, periods=1)
    assert measured_rate_hz(stamps[:400]) is None  # 0.84 s: not yet
    stalled = np.delete(stamps, np.arange(100, 140))  # an 84 ms hole in the first second
    assert measured_rate_hz(stalled) == pytest.approx(475.0, rel=1e-3)
    session, warnings = _session(stamps, 475.0, 500.0)
    assert warnings == [] and session.rate_hz == pytest.approx(475.0, rel=1e-3)  # 5 % off: used, not warned
    assert session.index()[0].expected == 9500


def test_the_index_file_carries_the_measured_and_the_configured_rate_and_the_limits(tmp_path):
    from recorder_bags import JOINT_STATE, PERIOD_MARKER

    from robot_id_recorder.bag_writer import BagWriter
    from robot_id_recorder.message_types import typestore_for

    writer = BagWriter(tmp_path / "bag", typestore_for([JOINT_STATE, PERIOD_MARKER]))
    writer.add_topic(STATES_TOPIC, JOINT_STATE)
    session = RecordingSession(writer, STATES_TOPIC, 500.0, lambda _text: None)
    session.on_description(PERIOD_S, HARMONICS)
    session.on_marker(PeriodMarkerStamp(0, START_NS, PERIOD_S, 1))
    for stamp in _grid(100.0):
        session.on_message(STATES_TOPIC, int(stamp), joint_state_raw(int(stamp), [0.0], [0.0]))
    raw = yaml.safe_load(session.close().read_text())
    assert (raw["rate_hz"], raw["configured_rate_hz"], raw["max_missing_fraction"]) == (100.0, 500.0, 0.01)
    assert raw["max_gap_s"] == longest_usable_gap_s(PERIOD_S, HARMONICS) == pytest.approx(0.2)
    assert raw["periods"][0]["expected"] == 2000 and raw["periods"][0]["missing"] == 0
