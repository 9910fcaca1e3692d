"""The period of a recording: detect it (detect_period), and check that the periods repeat (check_periods).

Averaging over periods (Xu et al. 2020, eq. (11)) assumes every period is the same motion. A ramp-in (the arm
accelerating into the periodic motion) or a ramp-out, a disturbed period, or a wrong period on non-periodic data
breaks that assumption and the average is neither motion. check_periods decides, per period m and joint j
over the K samples of a period, with q̃ and τ̃ the per-sample medians over the M periods (the median period):

- distances d_q[m, j] = RMS_k (q_m[k, j] − q̃[k, j]) and d_τ[m, j] = RMS_k (τ_m[k, j] − τ̃[k, j]);
- typical scatter D_q[j] = median_m d_q[m, j], D_τ[j] likewise;
- period m is an outlier when on some joint d_τ > OUTLIER_FACTOR·D_τ + TAU_FLOOR_FRACTION·RMS(τ_j), or on a
  moving joint d_q > OUTLIER_FACTOR·D_q + Q_FLOOR_RAD (the floors keep noise-free data from ever being flagged);
- leading and trailing runs of outliers are transients and dropped;
- the kept periods disagree when an outlier remains among them (or none is left), or when on a moving joint
  their typical position scatter (the median over kept periods of d_q) exceeds MAX_POSITION_SCATTER·(the
  joint's position RMS about its mean over all periods) + Q_FLOOR_RAD: periods that do not repeat at all (a
  period given for non-periodic data), or two periods that differ, where a median cannot tell which is wrong.

A joint moves when its position RMS about its mean is at least MOVING_MIN_RAD; other joints decide nothing on
their positions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

PERIODIC_MAX_DISSIMILARITY = 0.05
"""detect_period: largest mean squared difference between the signal and its shift by one period, relative
to twice its variance (1 − correlation), for the data to count as clearly periodic."""

STILL_VARIANCE_RATIO = 1e-12
"""detect_period: joints whose position variance is below this fraction of the largest one do not move."""

SUBPERIOD_TOL = 1e-3
"""detect_period: a shorter lag is the period when its dissimilarity is within the best one plus the larger
of this and the best one (noise-free data repeat to better than this)."""

OUTLIER_FACTOR = 4.0
"""A period is an outlier when its distance to the median period exceeds this many times the typical one
(plus the floor) [-]."""

Q_FLOOR_RAD = 1e-4
"""Position distance [rad] added to every position threshold."""

TAU_FLOOR_FRACTION = 1e-3
"""Torque distance added to every torque threshold, as a fraction of the joint's torque RMS [-]."""

MAX_POSITION_SCATTER = 0.05
"""Largest typical position distance to the median period of the kept periods, as a fraction of the joint's
motion RMS about its mean [-]."""

MOVING_MIN_RAD = 0.01
"""Position RMS about the mean [rad] from which a joint counts as moving."""


def detect_period(t_s: np.ndarray, q_rad: np.ndarray) -> float | None:
    """Period of uniformly sampled positions from their normalised mean squared difference to shifted
    copies (1 − autocorrelation), or None when the data do not repeat clearly at least twice.

    The shortest lag whose dissimilarity is close to the best one is taken (a multiple of the period
    repeats as well), then refined on the largest multiple that fits, to a fraction of a sample.
    """
    t_s, q_rad = np.asarray(t_s, dtype=float), np.asarray(q_rad, dtype=float).reshape(len(t_s), -1)
    k = len(t_s)
    x = q_rad - q_rad.mean(axis=0)
    variance = x.var(axis=0)
    if k < 2 or not variance.max() > 0.0:
        return None
    moving = variance > STILL_VARIANCE_RATIO * variance.max()
    x = x[:, moving] / np.sqrt(variance[moving])
    d = _dissimilarity(x)
    max_lag = k // 2
    above = np.flatnonzero(d[1:max_lag + 1] > 0.5)
    if above.size == 0:
        return None
    lags = np.arange(above[0] + 1, max_lag + 1)
    minima = lags[(d[lags] <= d[lags - 1]) & (d[lags] <= d[np.minimum(lags + 1, k - 1)])]
    if minima.size == 0:
        return None
    best = float(d[minima].min())
    if best > PERIODIC_MAX_DISSIMILARITY:
        return None
    lag = int(minima[d[minima] <= best + max(best, SUBPERIOD_TOL)][0])
    multiple = max(1, k // lag - 1)
    around = multiple * lag + np.arange(-2 * multiple - 1, 2 * multiple + 2)
    around = around[(around > 0) & (around < k - 1)]
    centre = int(around[np.argmin(d[around])])
    left, mid, right = d[centre - 1], d[centre], d[centre + 1]
    curvature = left - 2.0 * mid + right
    shift = 0.5 * (left - right) / curvature if curvature > 0.0 else 0.0
    dt_s = (t_s[-1] - t_s[0]) / (k - 1)
    return float((centre + np.clip(shift, -0.5, 0.5)) / multiple * dt_s)


def _dissimilarity(x: np.ndarray) -> np.ndarray:
    """d(τ) = mean over joints and overlap of (x(t+τ) − x(t))² / 2 for unit-variance columns, all lags."""
    k = len(x)
    size = 1 << (2 * k - 1).bit_length()
    spectrum = np.fft.rfft(x, n=size, axis=0)
    cross = np.fft.irfft(np.abs(spectrum) ** 2, n=size, axis=0)[:k].sum(axis=1)
    energy = np.concatenate([[0.0], np.cumsum((x**2).sum(axis=1))])
    lags = np.arange(k)
    tail = energy[k] - energy[lags]
    head = energy[k - lags]
    overlap = (k - lags) * x.shape[1]
    return 0.5 * (head + tail - 2.0 * cross) / np.maximum(overlap, 1)


@dataclass(frozen=True)
class PeriodCheck:
    """The verdict of check_periods."""

    first: int
    stop: int
    """Kept periods: first … stop − 1 (0-based); the others are transients at the ends."""
    q_distance_rad: np.ndarray
    """(M, n) RMS distance of each period's positions to the median period."""
    tau_distance_nm: np.ndarray
    """(M, n) same for the torque."""
    consistent: bool
    """The kept periods agree within noise and may be averaged."""
    reason: str
    """The verdict in words, with the figures that decided."""
    dropped: tuple[str, ...]
    """One message per dropped end period, with the figures that decided (empty when not consistent)."""


def rms_distance_to_median(x: np.ndarray) -> np.ndarray:
    """(M, n) RMS over the K samples of each period of x (M, K, n) minus the per-sample median over periods."""
    return np.sqrt(np.mean((x - np.median(x, axis=0)) ** 2, axis=1))


def check_periods(
    q_rad: np.ndarray,
    tau_nm: np.ndarray,
    period_s: float,
    t0_s: float = 0.0,
    joint_names: Sequence[str] | None = None,
) -> PeriodCheck:
    """Apply the module's rule to M >= 2 periods of positions and torques, each (M, K, n), the first period
    starting at `t0_s`; `period_s`, `t0_s` and `joint_names` only name periods and joints in the messages."""
    q_rad, tau_nm = np.asarray(q_rad, dtype=float), np.asarray(tau_nm, dtype=float)
    m, _, n = q_rad.shape
    names = list(joint_names) if joint_names is not None else [f"joint {j + 1}" for j in range(n)]
    d_q, d_tau = rms_distance_to_median(q_rad), rms_distance_to_median(tau_nm)
    motion_rad = q_rad.reshape(-1, n).std(axis=0)
    moving = motion_rad >= MOVING_MIN_RAD
    tau_floor_nm = TAU_FLOOR_FRACTION * np.sqrt(np.mean(tau_nm.reshape(-1, n) ** 2, axis=0))
    # excess = distance / threshold; a period is an outlier where it exceeds 1 (positions of moving joints only)
    excess_q = np.where(moving, d_q / (OUTLIER_FACTOR * np.median(d_q, axis=0) + Q_FLOOR_RAD), 0.0)
    threshold_tau = OUTLIER_FACTOR * np.median(d_tau, axis=0) + tau_floor_nm
    excess_tau = np.divide(d_tau, threshold_tau, out=np.zeros_like(d_tau), where=threshold_tau > 0.0)
    outlier = (excess_q > 1.0).any(axis=1) | (excess_tau > 1.0).any(axis=1)

    def period(i: int) -> str:
        return f"period {i + 1} of {m} (t = {t0_s + i * period_s:.4g}–{t0_s + (i + 1) * period_s:.4g} s)"

    def why(i: int) -> str:
        use_q = excess_q[i].max() >= excess_tau[i].max()
        d, j = (d_q, int(np.argmax(excess_q[i]))) if use_q else (d_tau, int(np.argmax(excess_tau[i])))
        what, unit = ("positions differ", "rad") if use_q else ("torque differs", "Nm")
        return (f"{period(i)}: its {what} from the median period by {d[i, j]:.3g} {unit} RMS on "
                f"{names[j]} (typical {np.median(d[:, j]):.3g} {unit})")

    regular = np.flatnonzero(~outlier)
    first, stop = (int(regular[0]), int(regular[-1]) + 1) if regular.size else (m, m)
    label = f"the {m} periods of {period_s:g} s"

    def verdict(consistent: bool, reason: str) -> PeriodCheck:
        dropped = tuple(f"dropped {why(i)}" for i in [*range(first), *range(stop, m)]) if consistent else ()
        return PeriodCheck(first, stop, d_q, d_tau, consistent, reason, dropped)

    if not regular.size:
        return verdict(False, f"{label} disagree: every period differs from the median period, e.g. {why(0)}")
    inner = [i for i in range(first, stop) if outlier[i]]
    if inner:
        return verdict(False, f"{label} disagree: {'; '.join(why(i) for i in inner)}")
    scatter_rad = np.median(d_q[first:stop], axis=0)
    relative = np.where(moving, (scatter_rad - Q_FLOOR_RAD) / np.maximum(motion_rad, MOVING_MIN_RAD), 0.0)
    j = int(np.argmax(relative))
    if relative[j] > MAX_POSITION_SCATTER:
        return verdict(False, f"{label} disagree: their positions differ by {100 * scatter_rad[j] / motion_rad[j]:.3g} "
                              f"% of the motion on {names[j]} ({scatter_rad[j]:.3g} rad RMS from the median period, "
                              f"motion {motion_rad[j]:.3g} rad RMS)")
    figures = (f"typical distance to the median period {scatter_rad.max():.3g} rad, "
               f"{np.median(d_tau[first:stop], axis=0).max():.3g} Nm RMS")
    if stop - first == 1:
        return verdict(True, f"only period {first + 1} of {m} ({period_s:g} s) kept: {figures}")
    kept = label if stop - first == m else f"periods {first + 1}–{stop} of {m} ({period_s:g} s)"
    return verdict(True, f"{kept} agree within noise: {figures}")


WRAP_FACTOR = 10.0
"""One period joins its own start when the step from its last sample to its first is at most this many times
its largest sample-to-sample step (plus Q_FLOOR_RAD)."""


def wrap_jump(q_rad: np.ndarray, joint_names: Sequence[str] | None = None) -> str | None:
    """Why one period of positions (K, n) is not one period of a periodic motion, or None when it is.

    With a single period there is nothing to compare it with, except itself: a periodic motion continues from
    its last sample into its first with a step like any other; a stretch of other data jumps there.
    """
    names = joint_names or [f"joint {j + 1}" for j in range(q_rad.shape[1])]
    step = np.abs(np.diff(q_rad, axis=0)).max(axis=0)
    jump = np.abs(q_rad[0] - q_rad[-1])
    bad = np.flatnonzero(jump > WRAP_FACTOR * step + Q_FLOOR_RAD)
    if not bad.size:
        return None
    j = int(bad[np.argmax(jump[bad] / np.maximum(step[bad], Q_FLOOR_RAD))])
    return (f"the one whole period does not join its own start: {names[j]} jumps {jump[j]:.3g} rad from its end to "
            f"its start, its largest step is {step[j]:.3g} rad")
