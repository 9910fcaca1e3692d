"""Which period each joint-state sample belongs to, and the quality of every period.

Period k covers [start_k, start_k + T) of the samples' header stamps, start_k from the excitation's period markers.
Per period the index reports: first and last sample, samples against the expected count (T × rate), the samples
missing, gaps (spacing above GAP_FACTOR × the nominal sample time, also from the period's start to its first sample
and from its last sample to its end: a complete period has both below one sample time, whatever the phase of the
samples against the marker), the longest gap, the jitter (RMS deviation of the other spacings from the nominal
sample time) and duplicate timestamps.

A period is flagged only for what makes it unusable; the estimator leaves flagged periods out of the average:
- more than MAX_MISSING_FRACTION (1 %) of its expected samples missing, or
- a gap longer than longest_usable_gap_s: MAX_GAP_FRACTION (5 %) of the motion's shortest time scale, which is the
  period of the highest harmonic (T / L) of a Fourier excitation whose description gives its harmonics L
  (robot_id_msgs/ExcitationTrajectory), and UNKNOWN_TIME_SCALE_S when the harmonics are unknown (a friction
  sweep, no description). For the shipped excitations (T = 20 s, L = 5) that is 200 ms, else 100 ms.
The estimator interpolates every shorter gap (positions by a cubic spline, torques linearly, on the same times).
A few missing samples, jitter and short stalls of a non-real-time publisher over DDS are reported, not flagged.

The rate is the one the joint states have (measured_rate_hz: from the header stamps of their first
RATE_WINDOW_S), not the one a robot config says: the lbr stack publishes at its controller_manager update_rate.
"""

from __future__ import annotations

import pathlib
from dataclasses import asdict, dataclass

import numpy as np
import yaml

GAP_FACTOR = 1.5
"""A spacing above this many nominal sample times is a gap (reported)."""

MAX_MISSING_FRACTION = 0.01
"""A period with more than this fraction of its expected samples missing is flagged."""

MAX_GAP_FRACTION = 0.05
"""A period with a gap longer than this fraction of the motion's shortest time scale is flagged: over such a gap
linear interpolation of a sinusoid of that period errs by at most (2π·0.05)²/8 = 1.2 % of its amplitude, a cubic
spline by far less, and only on the samples in the gap."""

UNKNOWN_TIME_SCALE_S = 2.0
"""The motion's shortest time scale when the harmonics are unknown: half the highest harmonic's period of the
shipped excitations (20 s / 5); a friction sweep's passes are constant-speed motions, which interpolation follows."""

RATE_WINDOW_S = 1.0
"""The joint states' rate is measured over the header stamps of their first this many seconds."""

FORMAT = 2
METADATA_KEY = "robot_id.period_index"
"""custom_data key of a bag's metadata.yaml holding the period index (YAML text)."""


@dataclass(frozen=True)
class PeriodMarkerStamp:
    """A period start as the excitation announced it."""

    index: int
    start_ns: int
    period_s: float
    num_periods: int


@dataclass(frozen=True)
class PeriodEntry:
    index: int
    start_s: float
    end_s: float
    samples: int
    expected: int
    missing: int
    """Expected samples without a (distinct) sample."""
    first_sample_s: float | None
    last_sample_s: float | None
    gaps: int
    longest_gap_s: float
    jitter_s: float | None
    """RMS deviation of the spacings that are not gaps from the nominal sample time; None without two samples."""
    duplicate_stamps: int
    flagged: bool
    reasons: list[str]
    """Why the period is flagged (empty when it is usable)."""


def longest_usable_gap_s(period_s: float | None, harmonics: int | None) -> float:
    """The longest gap a usable period may have: MAX_GAP_FRACTION of the highest harmonic's period T / L, or of
    UNKNOWN_TIME_SCALE_S when the harmonics are unknown (0 or None)."""
    known = bool(harmonics) and period_s is not None and period_s > 0.0
    return MAX_GAP_FRACTION * (period_s / harmonics if known else UNKNOWN_TIME_SCALE_S)


def measured_rate_hz(stamps_ns: np.ndarray) -> float | None:
    """The joint states' rate from the distinct header stamps (any order) of their first RATE_WINDOW_S: each stamp's
    sample slot counted in whole median spacings (a drop or a stall counts its slots, a burst after a stall none),
    one over the least-squares slope of the stamps against their slots, to 1 mHz (0.5 ms jitter at 100 Hz: about
    0.02 %). None until the stamps span that window."""
    stamps = np.unique(np.asarray(stamps_ns, dtype=np.int64))
    if len(stamps) < 2 or stamps[-1] - stamps[0] < round(RATE_WINDOW_S * 1e9):
        return None
    window = stamps[stamps <= stamps[0] + round(RATE_WINDOW_S * 1e9)] - stamps[0]
    spacing_ns = np.diff(window)
    slots = np.concatenate([[0.0], np.cumsum(np.round(spacing_ns / np.median(spacing_ns)))])
    return round(1e9 / float(np.polyfit(slots, window.astype(float), 1)[0]), 3)


def period_entries(stamps_ns: np.ndarray, markers: list[PeriodMarkerStamp], rate_hz: float,
                   max_gap_s: float) -> list[PeriodEntry]:
    """The index of every announced period from the samples' header stamps (any order), flagged by the module's
    rule with gaps longer than `max_gap_s` (longest_usable_gap_s)."""
    stamps = np.sort(np.asarray(stamps_ns, dtype=np.int64))
    return [_entry(stamps, marker, rate_hz, max_gap_s) for marker in sorted(markers, key=lambda m: m.index)]


def _entry(stamps: np.ndarray, marker: PeriodMarkerStamp, rate_hz: float, max_gap_s: float) -> PeriodEntry:
    dt_s = 1.0 / rate_hz
    end_ns = marker.start_ns + round(marker.period_s * 1e9)
    inside = stamps[(stamps >= marker.start_ns) & (stamps < end_ns)]
    t = inside * 1e-9
    edges = np.concatenate([[marker.start_ns * 1e-9], t, [end_ns * 1e-9]]) if len(t) else np.array([])
    spacing = np.diff(edges) if len(edges) else np.array([marker.period_s])
    gap = spacing > GAP_FACTOR * dt_s
    between = np.diff(np.unique(inside)) * 1e-9
    regular = between[between <= GAP_FACTOR * dt_s]
    expected = round(marker.period_s * rate_hz)
    duplicates = int(np.count_nonzero(np.diff(inside) == 0))
    missing = max(expected - (len(inside) - duplicates), 0)
    longest_s = float(spacing.max())
    reasons = _reasons(missing, expected, int(gap.sum()), longest_s, max_gap_s)
    return PeriodEntry(
        index=marker.index, start_s=marker.start_ns * 1e-9, end_s=end_ns * 1e-9, samples=len(inside),
        expected=expected, missing=missing, first_sample_s=float(t[0]) if len(t) else None,
        last_sample_s=float(t[-1]) if len(t) else None, gaps=int(gap.sum()), longest_gap_s=longest_s,
        jitter_s=float(np.sqrt(np.mean((regular - dt_s) ** 2))) if len(regular) else None,
        duplicate_stamps=duplicates, flagged=bool(reasons), reasons=reasons,
    )


def _reasons(missing: int, expected: int, gaps: int, longest_gap_s: float, max_gap_s: float) -> list[str]:
    """What makes a period unusable by the module's rule (none: usable)."""
    reasons = []
    if missing > MAX_MISSING_FRACTION * expected:
        reasons.append(f"{missing} of {expected} samples missing ({100 * missing / expected:.3g} %, more than "
                       f"{100 * MAX_MISSING_FRACTION:g} %)")
    if gaps and longest_gap_s > max_gap_s:
        reasons.append(f"a gap of {longest_gap_s:.4f} s, longer than the {max_gap_s:.4g} s the estimator fills")
    return reasons


def index_yaml(entries: list[PeriodEntry], rate_hz: float, joint_states_topic: str, configured_rate_hz: float,
               max_gap_s: float) -> str:
    """The period index as YAML (stored in the bag's metadata and beside it): the rate used (measured) and the
    configured one, the rule's limits, and the periods."""
    return yaml.safe_dump({"format": FORMAT, "joint_states_topic": joint_states_topic, "rate_hz": rate_hz,
                           "configured_rate_hz": configured_rate_hz, "max_missing_fraction": MAX_MISSING_FRACTION,
                           "max_gap_s": max_gap_s, "periods": [asdict(e) for e in entries]}, sort_keys=False)


def parse_index(text: str) -> list[PeriodEntry]:
    """The entries of a period index YAML; ValueError when it is not one. An index of format 1 (earlier recorders
    flagged any missing sample or gap) is judged again by this module's rule, with the limit for unknown harmonics,
    from its figures (missing samples counted here, no jitter)."""
    raw = yaml.safe_load(text)
    if not isinstance(raw, dict) or raw.get("format") not in (1, FORMAT):
        raise ValueError(f"not a period index of format 1 or {FORMAT}")
    if raw["format"] == FORMAT:
        return [PeriodEntry(**entry) for entry in raw["periods"]]
    entries = []
    for e in raw["periods"]:
        missing = max(e["expected"] - e["samples"] + e["duplicate_stamps"], 0)
        reasons = _reasons(missing, e["expected"], e["gaps"], e["longest_gap_s"], longest_usable_gap_s(None, None))
        entries.append(PeriodEntry(**(e | {"flagged": bool(reasons), "reasons": reasons}), missing=missing,
                                   jitter_s=None))
    return entries


def stored_index(bag: pathlib.Path) -> list[PeriodEntry] | None:
    """The recorder's period index from a bag's metadata.yaml (custom_data), when it has one."""
    metadata = pathlib.Path(bag) / "metadata.yaml"
    if not metadata.is_file():
        return None
    info = yaml.safe_load(metadata.read_text()).get("rosbag2_bagfile_information", {})
    text = (info.get("custom_data") or {}).get(METADATA_KEY)
    return None if text is None else parse_index(text)
