"""The period index: which samples belong to which period, what makes a period unusable flags it (and only it),
duplicates are counted, the YAML round trip, and when a RecordingSession has the last announced period. The rule
against real streams and the measured rate: test_usable_periods.py."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from recorder_bags import DT_NS, RATE_HZ, START_NS, STATES_TOPIC, joint_state_raw, sample_values

from robot_id_contract.period_index import (
    PeriodMarkerStamp,
    index_yaml,
    longest_usable_gap_s,
    parse_index,
    period_entries,
)
from robot_id_recorder.recording_session import RecordingSession

PER_PERIOD = 250
PERIOD_S = PER_PERIOD / RATE_HZ
DT_S = 1.0 / RATE_HZ
MAX_GAP_S = longest_usable_gap_s(None, None)
"""No description: the limit for unknown harmonics (0.1 s)."""
STAMP_RESOLUTION_S = 1e-6
"""Times in the index are float64 seconds since the epoch: at 1.7e9 s they resolve 0.24 µs; 1 µs is that with room."""


def _markers(periods: int = 3) -> list[PeriodMarkerStamp]:
    return [PeriodMarkerStamp(i, START_NS + i * PER_PERIOD * DT_NS, PERIOD_S, periods) for i in range(periods)]


def _stamps(first: int, stop: int, offset_ns: int = 0, drop: range = range(0)) -> np.ndarray:
    """Header stamps of samples first..stop-1 (sample k at START_NS + k × 2 ms + offset), without `drop`."""
    return np.array([START_NS + k * DT_NS + offset_ns for k in range(first, stop) if k not in drop], dtype=np.int64)


@pytest.mark.parametrize("drop", [range(300, 320), range(250, 270), range(480, 500)],
                         ids=["inside", "at the start", "at the end"])
def test_missing_samples_flag_their_period_only_with_the_gap_reported(drop):
    """20 consecutive samples of period 1 (samples 250..499, 8 %) dropped: in its middle, or at either end (where
    the gap is the spacing to the period's edge). Inside, the gap is 21 sample times between the samples around it;
    at an end it is measured to the edge, 20 or 21 sample times depending on where the edge is put. The gap (42 ms)
    is shorter than the 0.1 s the estimator fills: only the missing samples flag the period."""
    rng = np.random.default_rng(0)
    stamps = rng.permutation(_stamps(0, 750, drop=drop))  # any order
    entries = period_entries(stamps, _markers(), RATE_HZ, MAX_GAP_S)
    assert [e.flagged for e in entries] == [False, True, False]
    flagged = entries[1]
    assert flagged.samples == 230 and flagged.expected == 250 and flagged.missing == 20 and flagged.gaps == 1
    if drop.start == 300:
        assert flagged.longest_gap_s == pytest.approx(21 * DT_S, abs=STAMP_RESOLUTION_S)
    else:
        assert 20 * DT_S - STAMP_RESOLUTION_S <= flagged.longest_gap_s <= 21 * DT_S + STAMP_RESOLUTION_S
    assert flagged.reasons == ["20 of 250 samples missing (8 %, more than 1 %)"]
    for clean in (entries[0], entries[2]):
        assert clean.samples == clean.expected == 250 and clean.gaps == 0 and clean.reasons == []
        assert clean.missing == 0 and clean.jitter_s == pytest.approx(0.0, abs=STAMP_RESOLUTION_S)
        assert clean.longest_gap_s <= DT_S + STAMP_RESOLUTION_S


def test_duplicate_stamps_are_counted_without_flagging_the_period():
    stamps = np.concatenate([_stamps(0, 750), _stamps(600, 603)])  # samples 600..602 (period 2) twice
    entries = period_entries(stamps, _markers(), RATE_HZ, MAX_GAP_S)
    assert [e.duplicate_stamps for e in entries] == [0, 0, 3]
    assert entries[2].samples == 253 and entries[2].gaps == 0
    assert not any(e.flagged for e in entries)


def test_samples_before_the_first_marker_and_after_the_last_period_belong_to_no_period():
    entries = period_entries(_stamps(-40, 790), _markers(), RATE_HZ, MAX_GAP_S)  # 40 samples on either side
    assert [e.samples for e in entries] == [250, 250, 250]
    assert not any(e.flagged for e in entries)
    assert entries[0].first_sample_s == pytest.approx(entries[0].start_s, abs=STAMP_RESOLUTION_S)
    assert entries[2].last_sample_s == pytest.approx(entries[2].end_s - DT_S, abs=STAMP_RESOLUTION_S)
    for entry, marker in zip(entries, _markers(), strict=True):  # [start, start + T) from the marker
        assert entry.start_s == marker.start_ns * 1e-9
        assert entry.end_s == pytest.approx(entry.start_s + PERIOD_S, abs=STAMP_RESOLUTION_S)


@pytest.mark.parametrize("offset", [
    0.0, 0.25, 0.5, 0.75,
])
def test_a_complete_period_is_not_flagged_whatever_the_phase_of_its_samples(offset):
    """All 250 samples of every period, starting `offset` sample times after the marker (the excitation's
    commanded start and the robot's sample clock are independent): nothing missing, no gap, nothing flagged."""
    entries = period_entries(_stamps(-5, 755, offset_ns=round(offset * DT_NS)), _markers(), RATE_HZ, MAX_GAP_S)
    assert [e.samples for e in entries] == [250, 250, 250]
    assert [e.reasons for e in entries] == [[], [], []]
    assert not any(e.flagged for e in entries)


def test_a_period_without_samples_is_flagged_with_all_of_them_missing():
    entries = period_entries(_stamps(0, 500), _markers(), RATE_HZ, MAX_GAP_S)  # the recorder stopped after 1
    assert entries[2].samples == 0 and entries[2].first_sample_s is None and entries[2].flagged
    assert entries[2].reasons[0] == "250 of 250 samples missing (100 %, more than 1 %)"
    assert entries[2].missing == 250 and entries[2].jitter_s is None


def test_the_index_yaml_round_trips():
    stamps = np.concatenate([_stamps(0, 500, drop=range(300, 320)), _stamps(100, 101)])
    entries = period_entries(stamps, _markers(), RATE_HZ, MAX_GAP_S)  # clean, flagged, empty; a duplicate in 0
    text = index_yaml(entries, RATE_HZ, STATES_TOPIC, 100.0, MAX_GAP_S)
    assert parse_index(text) == entries  # every field exactly, None and the reasons included
    raw = yaml.safe_load(text)
    assert (raw["format"], raw["joint_states_topic"], raw["rate_hz"]) == (2, STATES_TOPIC, RATE_HZ)
    assert (raw["configured_rate_hz"], raw["max_missing_fraction"], raw["max_gap_s"]) == (100.0, 0.01, MAX_GAP_S)
    with pytest.raises(ValueError, match="not a period index"):
        parse_index("rosbag2_bagfile_information: {}\n")


class _NullWriter:
    def write(self, topic: str, timestamp_ns: int, raw: bytes) -> None:
        pass


def test_a_session_is_finished_once_the_last_sample_of_the_last_period_is_in():
    """The last sample of a period lies one sample time before its end: the period counts as recorded from that
    sample on, not one sample earlier."""
    session = RecordingSession(_NullWriter(), STATES_TOPIC, RATE_HZ)
    assert session.periods_expected == 0 and not session.finished
    recorded = []
    for k in range(750):
        if k % PER_PERIOD == 0:
            session.on_marker(_markers()[k // PER_PERIOD])
        stamp = START_NS + k * DT_NS
        session.on_message(STATES_TOPIC, stamp + 150_000, joint_state_raw(stamp, *sample_values(k)))
        recorded.append(session.periods_recorded())
        assert session.finished == (k == 749), k
    assert session.periods_expected == 3 and session.samples == 750
    assert recorded.index(1) == 249 and recorded.index(2) == 499 and recorded.index(3) == 749
    assert session.stamps_ns.tolist() == _stamps(0, 750).tolist()  # the header stamps, not the receive times


def test_a_session_keeps_every_stamp_past_its_initial_buffer():
    session = RecordingSession(_NullWriter(), STATES_TOPIC, RATE_HZ)
    for k in range(2500):
        stamp = START_NS + k * DT_NS
        session.on_message(STATES_TOPIC, stamp, joint_state_raw(stamp, [0.0], [0.0]))
    session.on_message("/other", START_NS, b"")  # other topics are written, not counted
    assert session.samples == 2500 and session.stamps_ns.tolist() == _stamps(0, 2500).tolist()
