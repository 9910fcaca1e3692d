"""Which period each joint-state sample belongs to, and the quality of every period.

Period k covers [start_k, start_k + T) of the samples' header stamps, start_k from the excitation's period markers.
Per period: first and last sample, samples against the expected count (T × rate), gaps (spacing above
GAP_FACTOR × the nominal sample time, also from the period's start to its first sample and from its last sample
to its end: a complete period has both below one sample time, whatever the phase of the samples against the
marker) and duplicate timestamps. A period is flagged
when samples are missing or a gap lies in it; the estimator leaves flagged periods out of the average.
"""

from __future__ import annotations

import pathlib
from dataclasses import asdict, dataclass

import numpy as np
import yaml

GAP_FACTOR = 1.5
FORMAT = 1
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
    first_sample_s: float | None
    last_sample_s: float | None
    gaps: int
    longest_gap_s: float
    duplicate_stamps: int
    flagged: bool
    reasons: list[str]


def period_entries(stamps_ns: np.ndarray, markers: list[PeriodMarkerStamp], rate_hz: float) -> list[PeriodEntry]:
    """The index of every announced period from the samples' header stamps (any order)."""
    stamps = np.sort(np.asarray(stamps_ns, dtype=np.int64))
    dt_s = 1.0 / rate_hz
    entries = []
    for marker in sorted(markers, key=lambda m: m.index):
        end_ns = marker.start_ns + round(marker.period_s * 1e9)
        inside = stamps[(stamps >= marker.start_ns) & (stamps < end_ns)]
        t = inside * 1e-9
        edges = np.concatenate([[marker.start_ns * 1e-9], t, [end_ns * 1e-9]]) if len(t) else np.array([])
        spacing = np.diff(edges) if len(edges) else np.array([marker.period_s])
        gap = spacing > GAP_FACTOR * dt_s
        expected = round(marker.period_s * rate_hz)
        duplicates = int(np.count_nonzero(np.diff(inside) == 0))
        unique = len(inside) - duplicates
        reasons = []
        if unique < expected - 1:
            reasons.append(f"{expected - unique} of {expected} samples missing")
        if gap.any():
            reasons.append(f"{int(gap.sum())} gaps, the longest {spacing.max():.4f} s")
        entries.append(PeriodEntry(
            index=marker.index, start_s=marker.start_ns * 1e-9, end_s=end_ns * 1e-9, samples=len(inside),
            expected=expected, first_sample_s=float(t[0]) if len(t) else None,
            last_sample_s=float(t[-1]) if len(t) else None, gaps=int(gap.sum()),
            longest_gap_s=float(spacing.max()), duplicate_stamps=duplicates, flagged=bool(reasons), reasons=reasons,
        ))
    return entries


def index_yaml(entries: list[PeriodEntry], rate_hz: float, joint_states_topic: str) -> str:
    """The period index as YAML (stored in the bag's metadata and beside it)."""
    return yaml.safe_dump({"format": FORMAT, "joint_states_topic": joint_states_topic, "rate_hz": rate_hz,
                           "periods": [asdict(e) for e in entries]}, sort_keys=False)


def parse_index(text: str) -> list[PeriodEntry]:
    """The entries of a period index YAML; ValueError when it is not one."""
    raw = yaml.safe_load(text)
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise ValueError(f"not a period index of format {FORMAT}")
    return [PeriodEntry(**entry) for entry in raw["periods"]]


def stored_index(bag: pathlib.Path) -> list[PeriodEntry] | None:
    """The recorder's period index from a bag's metadata.yaml (custom_data), when it has one."""
    metadata = pathlib.Path(bag) / "metadata.yaml"
    if not metadata.is_file():
        return None
    info = yaml.safe_load(metadata.read_text()).get("rosbag2_bagfile_information", {})
    text = (info.get("custom_data") or {}).get(METADATA_KEY)
    return None if text is None else parse_index(text)
