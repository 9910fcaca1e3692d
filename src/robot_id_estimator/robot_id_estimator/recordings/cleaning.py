"""Cleaning a recording of what real logs contain: every repair listed in its notes, the rest refused.

Non-finite times, out-of-order timestamps, stale duplicate rows and repeated timestamps, short NaN runs and
gaps, jittery timestamps (resampled to a uniform grid); long gaps, long NaN runs and time running backwards
are refused with their position.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from robot_id_estimator.recordings.recording import MIN_SAMPLES, DataError, Recording

UNIFORM_TOL = 1e-4
"""Sample intervals within this relative deviation of their median count as a uniform grid (timestamps
quantised to 1 ns stay uniform up to 10 kHz)."""

RATE_ROUNDING = 0.005
"""Resampling rates are rounded to few significant digits when that changes them by at most this fraction."""

SHORT_GAP_FACTOR = 1.5
"""A sample interval longer than this many median intervals is reported as a gap (a sample is probably
missing there); gaps up to max_gap_s are interpolated."""

MAX_GAP_S = 0.05
"""The longest gap clean() fills by default (CSV files). A bag's is the recorder's longest usable gap, 5 % of the
highest harmonic's period (robot_id_contract.period_index): over it the torque's chord errs by at most 1.2 % of
that harmonic's amplitude and the positions' spline far less, on the few samples inside."""


@dataclass
class _Rows:
    """The rows clean() works on: times [s], each row's sample number in the input, and the per-joint signals."""

    t_s: np.ndarray
    sample: np.ndarray
    signals: dict[str, np.ndarray]

    def keep(self, mask: np.ndarray) -> None:
        """Keep the rows a boolean mask selects, or take them in the order of an index array."""
        self.t_s, self.sample = self.t_s[mask], self.sample[mask]
        self.signals = {key: x[mask] for key, x in self.signals.items()}


def clean(rec: Recording, max_gap_s: float = MAX_GAP_S) -> Recording:
    """Repair what can be repaired, refuse the rest with DataError, and list every repair in `repairs`.

    - rows without a finite time are dropped; out-of-order timestamps are sorted when time never steps
      back by more than `max_gap_s`, otherwise refused (concatenated logs, clock reset);
    - duplicate rows (q and tau identical to the previous row: the logger re-read a stale state) and
      rows repeating a timestamp are dropped;
    - gaps in time longer than `max_gap_s` are refused with their position (split the recording there);
    - runs of NaN/inf spanning at most `max_gap_s` are interpolated linearly (dropped at the ends),
      longer runs are refused naming the column and samples;
    - a non-uniform time grid (jitter, dropped rows, short gaps) is resampled at the median rate, every signal
      on the same grid times: cubic splines for positions, velocities and accelerations, linear for torques
      (noisy; a spline would ring on the noise).
    """
    t_s = np.asarray(rec.t_s, dtype=float).ravel()
    rows = _Rows(t_s, np.arange(len(t_s)), rec.signal_arrays())
    for key, x in rows.signals.items():
        if x.shape != (len(t_s), len(rec.joint_names)):
            raise DataError(f"{rec.source}: {key} has shape {x.shape}, expected ({len(t_s)}, {len(rec.joint_names)})")
    repairs = list(rec.repairs)
    _require_samples(rec.source, len(rows.t_s))
    _order_times(rec.source, rows, max_gap_s, repairs)
    t_logged_s = np.unique(rows.t_s)
    _drop_repeated_rows(rows, repairs)
    _require_samples(rec.source, len(rows.t_s))
    _refuse_gaps(rec.source, t_logged_s, max_gap_s)
    _repair_non_finite(rec, rows, max_gap_s, repairs)
    _require_samples(rec.source, len(rows.t_s))
    t_s, signals = _uniform(rows.t_s, t_logged_s, rows.signals, repairs)
    return dataclasses.replace(
        rec,
        t_s=t_s,
        q_rad=signals["q"],
        tau_nm=signals["tau"],
        dq_rad_s=signals.get("dq"),
        ddq_rad_s2=signals.get("ddq"),
        repairs=tuple(repairs),
    )


def resample(t_s: np.ndarray, x: np.ndarray, grid_s: np.ndarray, smooth: bool) -> np.ndarray:
    """x(t_s) at the times `grid_s`: a not-a-knot cubic spline when `smooth`, else linear (noisy torques); a grid
    time a fraction of a sample beyond the ends (a jittery first or last stamp) is extrapolated the same way."""
    import scipy.interpolate  # here, not at the top: the command lines start without scipy

    degree = 3 if smooth and len(t_s) >= 4 else 1
    return scipy.interpolate.make_interp_spline(t_s, x, k=degree, axis=0)(grid_s)


def _ms(seconds: float) -> str:
    return f"{1e3 * seconds:.3g} ms"


def _require_samples(source: str, k: int) -> None:
    if k < MIN_SAMPLES:
        raise DataError(f"{source}: {k} usable sample(s); a recording needs at least {MIN_SAMPLES}")


def _order_times(source: str, rows: _Rows, max_gap_s: float, repairs: list[str]) -> None:
    """Drop rows without a finite time, sort out-of-order timestamps; refuse time going back by more than
    `max_gap_s`."""
    finite_t = np.isfinite(rows.t_s)
    if not finite_t.all():
        repairs.append(f"dropped {np.count_nonzero(~finite_t)} rows without a finite time")
        rows.keep(finite_t)
        _require_samples(source, len(rows.t_s))
    t, steps = rows.t_s, np.diff(rows.t_s)
    if (steps < 0).any():
        worst = int(np.argmin(steps))
        if -steps[worst] > max_gap_s:
            raise DataError(
                f"{source}: time goes back by {-steps[worst]:.6g} s at sample {rows.sample[worst + 1]} "
                f"(t = {t[worst + 1]:.6g} s after {t[worst]:.6g} s): concatenated recordings or a clock reset; "
                "split the file there"
            )
        repairs.append(f"sorted out-of-order timestamps ({np.count_nonzero(steps < 0)} steps back in time, "
                       f"the largest {_ms(-steps[worst])})")
        rows.keep(np.argsort(t, kind="stable"))


def _drop_repeated_rows(rows: _Rows, repairs: list[str]) -> None:
    """Drop stale duplicate rows (q and tau as in the previous row), then rows repeating a timestamp."""
    q, tau = rows.signals["q"], rows.signals["tau"]
    same = np.concatenate([[False], (q[1:] == q[:-1]).all(axis=1) & (tau[1:] == tau[:-1]).all(axis=1)])
    if same.any():
        repairs.append(f"dropped {np.count_nonzero(same)} duplicate rows (q and tau identical to the previous row)")
        rows.keep(~same)
    repeated = np.concatenate([[False], np.diff(rows.t_s) == 0.0])
    if repeated.any():
        repairs.append(f"dropped {np.count_nonzero(repeated)} rows repeating the previous timestamp")
        rows.keep(~repeated)


def _refuse_gaps(source: str, t_s: np.ndarray, max_gap_s: float) -> None:
    steps = np.diff(t_s)
    long = np.flatnonzero(steps > max_gap_s)
    if long.size and np.median(steps) > max_gap_s:
        raise DataError(f"{source}: the median sample interval {_ms(np.median(steps))} is longer than max_gap_s = "
                        f"{max_gap_s:g} s: is the time column in seconds (milliseconds are 1000 × too large)?")
    if long.size:
        i = long[np.argmax(steps[long])]
        raise DataError(
            f"{source}: {long.size} gap(s) longer than max_gap_s = {max_gap_s:g} s; the longest is "
            f"{steps[i]:.6g} s between t = {t_s[i]:.6g} s and t = {t_s[i + 1]:.6g} s: split the recording there"
        )


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """[start, stop) index ranges of the True runs of a boolean vector."""
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True))


def _repair_non_finite(rec: Recording, rows: _Rows, max_gap_s: float, repairs: list[str]) -> None:
    """Interpolate short NaN/inf runs (drop them at the ends), refuse long ones naming column and samples."""
    t, sample = rows.t_s, rows.sample
    edge_rows = np.zeros(len(t), dtype=bool)
    for key, x in rows.signals.items():
        bad = ~np.isfinite(x)
        for j in np.flatnonzero(bad.any(axis=0)):
            column = f"{key}_{rec.joint_names[j]}"
            runs = _runs(bad[:, j])
            for start, stop in runs:
                span = t[min(stop, len(t) - 1)] - t[max(start - 1, 0)]
                if span > max_gap_s or (start == 0 and stop == len(t)):
                    raise DataError(
                        f"{rec.source}: column {column} is not finite for {stop - start} samples "
                        f"{sample[start]}–{sample[stop - 1]} (t = {t[start]:.6g}–{t[stop - 1]:.6g} s), longer "
                        f"than max_gap_s = {max_gap_s:g} s"
                    )
                if start == 0 or stop == len(t):
                    edge_rows[start:stop] = True
            good = ~bad[:, j]
            x[bad[:, j], j] = np.interp(t[bad[:, j]], t[good], x[good, j])
            repairs.append(f"interpolated {np.count_nonzero(bad[:, j])} non-finite values of {column} in "
                           f"{len(runs)} run(s) (samples {', '.join(f'{sample[a]}–{sample[b - 1]}' for a, b in runs)})")
    if edge_rows.any():
        repairs.append(f"dropped {np.count_nonzero(edge_rows)} rows at the ends with non-finite values")
        rows.keep(~edge_rows)


def _uniform(
    t_s: np.ndarray, t_logged_s: np.ndarray, signals: dict[str, np.ndarray], repairs: list[str]
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Resample onto a uniform grid at the logged median rate when the kept samples are not uniform.

    `t_logged_s` are the distinct timestamps as logged (before duplicate rows were dropped): they give the
    rate and the jitter figures; the kept times `t_s` show the gaps that dropped rows left.
    """
    steps, logged = np.diff(t_s), np.diff(t_logged_s)
    median = float(np.median(logged))
    if np.max(np.abs(steps / median - 1.0)) <= UNIFORM_TOL:
        return t_s, signals
    rate_hz = _round_rate(1.0 / median)
    grid = _grid(t_s, rate_hz)
    resampled = {key: resample(t_s, x, grid, smooth=key != "tau") for key, x in signals.items()}
    repairs.append(
        f"resampled {len(t_s)} samples onto a uniform {rate_hz:g} Hz grid ({len(grid)} samples); logged sample "
        f"intervals {_ms(logged.min())}–{_ms(logged.max())}, median {_ms(median)}, jitter {_ms(np.std(logged))} RMS"
    )
    gaps = steps > SHORT_GAP_FACTOR * median
    if gaps.any():
        repairs.append(f"interpolated across {np.count_nonzero(gaps)} short gap(s) (dropped rows or missing "
                       f"samples), the longest {_ms(steps.max())} at t = {t_s[np.argmax(steps)]:.6g} s")
    return grid, resampled


def _grid(t_s: np.ndarray, rate_hz: float) -> np.ndarray:
    """The uniform grid the samples were taken on, within half a sample of the first and last stamps: its phase the
    circular mean of the samples' phases at rate_hz, so that jittery first and last stamps lose no sample (from
    their own times, a grid came out one sample short: a periodic recording lost its last period) and no grid time
    lies further beyond the data than half a sample (a phase counted along rounded steps drifted with the jitter
    and started 46 ms before the real Panda log, extrapolated)."""
    relative = (t_s - t_s[0]) * rate_hz
    phase = float(np.angle(np.mean(np.exp(2j * np.pi * relative))) / (2.0 * np.pi))
    first, last = math.ceil(-phase - 0.5), math.floor(relative[-1] - phase + 0.5)
    return t_s[0] + (phase + np.arange(first, last + 1)) / rate_hz


def _round_rate(rate_hz: float) -> float:
    """The rate with the fewest significant digits (up to 3) within RATE_ROUNDING of `rate_hz` (998.3 -> 1000):
    grid times stay true times, only the density of the output grid is rounded."""
    for digits in (1, 2, 3):
        candidate = float(f"{rate_hz:.{digits}g}")
        if abs(candidate - rate_hz) <= RATE_ROUNDING * rate_hz:
            return candidate
    return rate_hz
