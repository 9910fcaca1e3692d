"""Nonlinear Stribeck friction (Luo et al. 2024, eq. 7) fitted by Levenberg–Marquardt to friction sweeps (eq. 15)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import scipy.optimize

STRIBECK_NAMES = ("fv1", "fv2", "fv3", "fs", "fs1", "fc", "fc1")
"""Coefficients of Luo et al. 2024, eq. (7), in this order: viscous [Nm s/rad], quadratic [Nm s²/rad²], cubic
[Nm s³/rad³], static [Nm], static (Stribeck) velocity [rad/s], Coulomb [Nm], Coulomb velocity [rad/s]."""

MIN_STEADY_SAMPLES = 3
"""A pass needs at least this many samples at constant speed to count."""

OUTLIER_MADS = 6.0
"""Friction points further than this many (normal-consistent) median absolute deviations from the median of
their pass are dropped."""

MIN_POINTS = 12
"""Fewer mirrored friction points than this (twice the free coefficients) cannot support a fit."""


@dataclass(frozen=True)
class StribeckFit:
    """Stribeck coefficients of one joint (STRIBECK_NAMES order) and how well they fit the sweep points."""

    coefficients: np.ndarray
    rms_nm: float
    n_points: int
    speed_range_rad_s: tuple[float, float]


def stribeck_torque(dq_rad_s: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """Friction torque of Luo et al. 2024, eq. (7).

    τ_f = fv1·q̇ + fv2·sgn(q̇)·q̇² + fv3·q̇³ + fs·sgn(q̇)·exp(−(q̇/fs1)²) + fc·sgn(q̇)·(1 − exp(−(q̇/fc1)²)).
    `coefficients` is (7,) for one joint or (n, 7) for the columns of a (K, n) `dq_rad_s`.
    """
    dq = np.asarray(dq_rad_s, dtype=float)
    fv1, fv2, fv3, fs, fs1, fc, fc1 = np.moveaxis(np.asarray(coefficients, dtype=float), -1, 0)
    sign = np.sign(dq)
    return (
        fv1 * dq
        + fv2 * sign * dq**2
        + fv3 * dq**3
        + fs * sign * np.exp(-((dq / fs1) ** 2))
        + fc * sign * (1.0 - np.exp(-((dq / fc1) ** 2)))
    )


def _runs(dq: np.ndarray, min_speed: float) -> list[tuple[int, int, int]]:
    """Contiguous runs (start, stop, sign) where |dq| > min_speed with a constant sign."""
    sign = np.where(dq > min_speed, 1, np.where(dq < -min_speed, -1, 0))
    edges = np.flatnonzero(np.diff(sign)) + 1
    bounds = np.concatenate([[0], edges, [len(dq)]])
    return [(int(a), int(b), int(sign[a])) for a, b in itertools.pairwise(bounds) if sign[a] != 0]


def _cruise_speed(speed: np.ndarray) -> float:
    """The constant speed of a pass: its 90th percentile, on the plateau even when the ramps are longer."""
    return float(np.percentile(np.abs(speed), 90))


def _steady(speed: np.ndarray, tolerance: float) -> np.ndarray:
    """Samples of a run at its cruise speed: they and both neighbours within `tolerance` of it (so the
    acceleration is small too); the first and last samples of a run are never steady."""
    cruise = _cruise_speed(speed)
    near = np.abs(np.abs(speed) - cruise) <= tolerance * cruise
    steady = near.copy()
    steady[1:] &= near[:-1]
    steady[:-1] &= near[1:]
    steady[[0, -1]] = False
    return steady


def mirrored_friction(
    q_rad: np.ndarray,
    dq_rad_s: np.ndarray,
    tau_nm: np.ndarray,
    min_speed_rad_s: float = 1e-3,
    speed_tolerance: float = 0.05,
) -> tuple[np.ndarray, np.ndarray]:
    """Friction points of one joint from forward/backward passes at constant speed (Luo et al. 2024, eq. 15).

    Each run of positive velocity is paired with the adjacent run of negative velocity at the same speed; at
    every position both passes cover, τ(t) − τ(T−t) = 2·τ_f(q̇(t)): gravity is the same at the same position,
    the velocity-quadratic terms are the same at opposite velocity, and at constant speed there is no inertial
    torque. T−t is found by position, so the passes need not be time-symmetric. Only the constant-speed part of
    each pass is used: samples that, with their neighbours, are within `speed_tolerance` of the pass's cruise
    speed, without the outliers of each pass (OUTLIER_MADS). Returns
    (speed > 0, friction torque at that speed).
    """
    q, dq, tau = (np.asarray(x, dtype=float).ravel() for x in (q_rad, dq_rad_s, tau_nm))
    # runs without a constant-speed stretch (filter ringing around a stop) would break the pairing
    runs = [
        r for r in _runs(dq, min_speed_rad_s)
        if r[1] - r[0] >= MIN_STEADY_SAMPLES and _steady(dq[r[0]:r[1]], speed_tolerance).sum() >= MIN_STEADY_SAMPLES
    ]
    speeds, frictions = [], []
    i = 0
    while i + 1 < len(runs):
        first, second = runs[i], runs[i + 1]
        speed_first = _cruise_speed(dq[first[0]:first[1]])
        speed_second = _cruise_speed(dq[second[0]:second[1]])
        if first[2] == second[2] or abs(speed_first - speed_second) > speed_tolerance * speed_first:
            i += 1  # not a forward/backward pair at one speed (a spurious run, or a change of speed)
            continue
        forward, backward = (first, second) if first[2] > 0 else (second, first)
        fwd = slice(forward[0], forward[1])
        bwd = slice(backward[0], backward[1])
        q_b, order = q[bwd], np.argsort(q[bwd])
        inside = (q[fwd] >= q_b.min()) & (q[fwd] <= q_b.max())
        q_f = q[fwd][inside]
        dq_b = np.interp(q_f, q_b[order], dq[bwd][order])
        tau_b = np.interp(q_f, q_b[order], tau[bwd][order])
        dq_f, tau_f = dq[fwd][inside], tau[fwd][inside]
        steady_f = _steady(dq[fwd], speed_tolerance)[inside]
        steady_b = _steady(dq[bwd], speed_tolerance).astype(float)
        # a constant-speed forward sample, and a backward value interpolated between constant-speed samples
        steady = steady_f & (np.interp(q_f, q_b[order], steady_b[order]) == 1.0)
        speed, friction = 0.5 * (dq_f - dq_b)[steady], 0.5 * (tau_f - tau_b)[steady]
        if len(friction):
            # at one speed eq. (7) is one value: drop what the pass's own scatter calls an outlier (a sample at
            # the edge of a speed ramp still carries inertial torque)
            deviation = np.abs(friction - np.median(friction))
            keep = deviation <= OUTLIER_MADS * 1.4826 * np.median(deviation) + 1e-12
            speeds.append(speed[keep])
            frictions.append(friction[keep])
        i += 2
    if not speeds:
        return np.zeros(0), np.zeros(0)
    return np.concatenate(speeds), np.concatenate(frictions)


def _linear_part(speed: np.ndarray, friction: np.ndarray, fs1: float, fc1: float) -> tuple[np.ndarray, float]:
    """Given the two velocity scales, eq. (7) is linear in fv1, fv2, fv3, fs, fc: solve that, return its SSE."""
    basis = np.column_stack(
        [speed, speed**2, speed**3, np.exp(-((speed / fs1) ** 2)), 1.0 - np.exp(-((speed / fc1) ** 2))]
    )
    linear, *_ = np.linalg.lstsq(basis, friction, rcond=None)
    return linear, float(np.sum((basis @ linear - friction) ** 2))


def _initial_guess(speed: np.ndarray, friction: np.ndarray, grid: int = 16) -> np.ndarray:
    """Start of the fit: the best pair of velocity scales on a log grid over the swept speeds (variable
    projection: the other five coefficients are linear), so that LM starts in the right basin."""
    scales = np.geomspace(0.5 * speed.min(), speed.max(), grid)
    best = min(((fs1, fc1) for fs1 in scales for fc1 in scales), key=lambda s: _linear_part(speed, friction, *s)[1])
    linear, _ = _linear_part(speed, friction, *best)
    fv1, fv2, fv3, fs, fc = linear
    return np.array([fv1, fv2, fv3, fs, np.log(best[0]), fc, np.log(best[1])])


def fit_stribeck(speed_rad_s: np.ndarray, friction_nm: np.ndarray) -> StribeckFit:
    """Levenberg–Marquardt fit of eq. (7) to friction points (scipy least_squares, method "lm").

    The two velocity scales are fitted as logarithms so that they stay positive. Raises ValueError with the
    reason when the points cannot determine the model.
    """
    speed = np.abs(np.asarray(speed_rad_s, dtype=float))
    friction = np.asarray(friction_nm, dtype=float) * np.sign(speed_rad_s)
    if len(speed) < MIN_POINTS:
        raise ValueError(f"{len(speed)} friction points; the Stribeck fit needs at least {MIN_POINTS}")
    if np.ptp(speed) <= 0.1 * speed.max():
        raise ValueError(
            f"sweep speeds span only {speed.min():.3g}..{speed.max():.3g} rad/s; sweep several speeds"
        )

    def coefficients(x: np.ndarray) -> np.ndarray:
        return np.array([x[0], x[1], x[2], x[3], np.exp(x[4]), x[5], np.exp(x[6])])

    def residual(x: np.ndarray) -> np.ndarray:
        return stribeck_torque(speed, coefficients(x)) - friction

    solution = scipy.optimize.least_squares(residual, _initial_guess(speed, friction), method="lm", x_scale="jac")
    coef = coefficients(solution.x)
    rms = float(np.sqrt(np.mean(residual(solution.x) ** 2)))
    return StribeckFit(coef, rms, len(speed), (float(speed.min()), float(speed.max())))
