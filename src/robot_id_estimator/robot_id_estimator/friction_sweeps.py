"""Stribeck friction from forward/backward joint sweeps (Luo et al., eqs. 7 and 15), for the identification."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robot_id_estimator.friction import MIN_POINTS, STRIBECK_NAMES, fit_stribeck, mirrored_friction
from robot_id_estimator.input_checks import check_joints
from robot_id_estimator.processing import ProcessingConfig, zero_phase_lowpass
from robot_id_estimator.recording import DataError, Recording


def friction_sweeps(
    recordings: Sequence[Recording], joint_names: Sequence[str], processing: ProcessingConfig
) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray]:
    """Stribeck coefficients (n, 7) per joint from friction-sweep recordings (Luo et al. 2024, eqs. 15 and 7), their fit
    RMS (n,), notes, and the swept speed range (n, 2).

    Each recording is filtered as non-periodic data (zero-phase Butterworth; logged velocities when present),
    the torque at the motion's cutoff so that a sample at constant speed is not smeared with the inertial
    torque of a nearby speed ramp; every joint contributes the mirrored friction points of its forward/backward
    passes. A joint with too few points keeps a NaN row and the linear friction of the regressor.
    """
    n = len(joint_names)
    speeds: list[list[np.ndarray]] = [[] for _ in range(n)]
    frictions: list[list[np.ndarray]] = [[] for _ in range(n)]
    for rec in recordings:
        check_joints(rec, joint_names)
        fs_hz = 1.0 / float(np.median(np.diff(rec.t_s)))
        try:
            q = zero_phase_lowpass(rec.q_rad, fs_hz, processing.motion_cutoff_hz, processing.filter_order)
            dq = (np.gradient(q, 1.0 / fs_hz, axis=0) if rec.dq_rad_s is None else
                  zero_phase_lowpass(rec.dq_rad_s, fs_hz, processing.motion_cutoff_hz, processing.filter_order))
            tau = zero_phase_lowpass(rec.tau_nm, fs_hz, processing.motion_cutoff_hz, processing.filter_order)
        except ValueError as err:
            raise DataError(f"{rec.source}: {err}") from None
        for j in range(n):
            v, f = mirrored_friction(q[:, j], dq[:, j], tau[:, j])
            speeds[j].append(v)
            frictions[j].append(f)
    coefficients = np.full((n, len(STRIBECK_NAMES)), np.nan)
    rms = np.full(n, np.nan)
    ranges = np.full((n, 2), np.nan)
    notes = []
    for j, name in enumerate(joint_names):
        v, f = np.concatenate(speeds[j]), np.concatenate(frictions[j])
        if len(v) < MIN_POINTS:
            notes.append(f"friction sweep: {name} has {len(v)} mirrored points (needs {MIN_POINTS}): linear friction")
            continue
        try:
            fit = fit_stribeck(v, f)
        except ValueError as err:
            notes.append(f"friction sweep: {name}: {err}: linear friction")
            continue
        coefficients[j], rms[j], ranges[j] = fit.coefficients, fit.rms_nm, fit.speed_range_rad_s
        notes.append(
            f"friction sweep: {name} Stribeck fit on {fit.n_points} points, {fit.speed_range_rad_s[0]:.3g}–"
            f"{fit.speed_range_rad_s[1]:.3g} rad/s, RMS {fit.rms_nm:.3g} Nm"
        )
    return coefficients, rms, notes, ranges


def extrapolation_notes(stribeck, ranges, processed, joint_names) -> list[str]:
    """Warn where the data move a joint faster than its sweeps did: eq. (7) is a polynomial there."""
    fastest = np.max([np.max(np.abs(d.dq_rad_s), axis=0) for d in processed], axis=0)
    return [
        f"{name} reaches {fastest[j]:.3g} rad/s, its sweeps only {ranges[j, 1]:.3g} rad/s: the Stribeck model "
        "is extrapolated there"
        for j, name in enumerate(joint_names)
        if not np.isnan(stribeck[j]).any() and fastest[j] > 1.05 * ranges[j, 1]
    ]
