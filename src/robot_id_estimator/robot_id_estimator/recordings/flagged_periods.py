"""Periods the recorder flagged as unusable (robot_id_contract.period_index: more than 1 % of the samples missing, or
a gap longer than the estimator fills) in a bag's recording: left out, the later periods moved back onto them (the
motion is periodic), with the periods and the reasons named. When every period is flagged, nothing periodic is
left: the data are used as non-periodic instead (processing's non-periodic path), the longest stretch without a
gap longer than the estimator fills."""

from __future__ import annotations

import pathlib

import numpy as np

from robot_id_contract.period_index import stored_index


def without_flagged_periods(bag: pathlib.Path, t_s: np.ndarray, keep: np.ndarray, origin_ns: int, period_s: float,
                            max_gap_s: float, repairs: list[str]) -> tuple[np.ndarray, np.ndarray, str | None]:
    """Times and mask of the samples `t_s` [s from origin_ns, in stamp order] without the flagged periods, and why
    the data must be processed as non-periodic (None unless every period is flagged)."""
    index = stored_index(bag) or []
    flagged = [e for e in index if e.flagged]
    if not flagged:
        return t_s, keep, None
    named = "; ".join(f"period {e.index} ({', '.join(e.reasons)})" for e in flagged)
    if len(flagged) == len(index):
        keep, stretch = _longest_stretch(t_s, keep, max_gap_s)
        return t_s, keep, (f"all {len(index)} periods were flagged by the recorder: {named}; used the data as "
                           f"non-periodic{stretch}")
    t_s, keep = t_s.copy(), keep.copy()
    for entry in sorted(flagged, key=lambda e: e.start_s, reverse=True):
        start_s = entry.start_s - origin_ns * 1e-9
        inside = (t_s >= start_s) & (t_s < start_s + period_s)
        keep &= ~inside
        t_s[t_s >= start_s + period_s] -= period_s
    repairs.append(f"left out {len(flagged)} of {len(index)} periods, flagged by the recorder: {named}; the later "
                   "periods follow on")
    return t_s, keep, None


def _longest_stretch(t_s: np.ndarray, keep: np.ndarray, max_gap_s: float) -> tuple[np.ndarray, str]:
    """The kept samples of the longest stretch without a gap longer than `max_gap_s` (sorted `t_s`), and a note
    when that leaves some out."""
    kept = np.flatnonzero(keep)
    breaks = np.flatnonzero(np.diff(t_s[kept]) > max_gap_s)
    starts, stops = np.concatenate([[0], breaks + 1]), np.concatenate([breaks, [len(kept) - 1]])
    longest = int(np.argmax(t_s[kept[stops]] - t_s[kept[starts]]))
    if not breaks.size:
        return keep, ""
    first, last = kept[starts[longest]], kept[stops[longest]]
    stretch = np.zeros_like(keep)
    stretch[first:last + 1] = keep[first:last + 1]
    return stretch, (f", its longest stretch without a gap longer than {max_gap_s:.4g} s: t = {t_s[first]:.3f}–"
                     f"{t_s[last]:.3f} s of {t_s[kept[0]]:.3f}–{t_s[kept[-1]]:.3f} s ({breaks.size} longer gaps)")
