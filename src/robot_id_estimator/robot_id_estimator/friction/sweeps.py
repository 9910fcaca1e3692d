"""Stribeck friction from forward/backward joint sweeps (Luo et al., eqs. 7 and 15), for the identification."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from robot_id_estimator.friction.stribeck_fit import MIN_LEVELS, fit_stribeck, mirrored_friction, speed_levels
from robot_id_estimator.processing.input_checks import check_joints
from robot_id_estimator.processing.samples import zero_phase_lowpass
from robot_id_estimator.recordings.recording import DataError, Recording
from robot_id_estimator.settings import ProcessingConfig
from robot_id_estimator.stribeck_law import STRIBECK_NAMES, stribeck_torque
from robot_id_model.torque_filter import first_order_lowpass


def friction_sweeps(
    recordings: Sequence[Recording], joint_names: Sequence[str], processing: ProcessingConfig,
    torque_filter_time_constant_s: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, list[str], np.ndarray]:
    """Stribeck coefficients (n, 7) per joint from friction-sweep recordings (Luo et al. 2024, eqs. 15 and 7), their fit
    RMS (n,), notes, and the swept speed range (n, 2).

    The motion first goes through the robot's first-order torque filter (`torque_filter_time_constant_s`, the
    LBR's), so that a torque pairs with the position it was measured at: its lag would otherwise pair the passes'
    torques at positions v·τ apart, and on a joint carrying gravity that difference grows with speed like viscous
    friction. Then each recording is filtered as non-periodic data (zero-phase Butterworth; logged velocities
    when present), the torque at the motion's cutoff so that a sample at constant speed is not smeared with the
    inertial torque of a nearby speed ramp. Every joint contributes the mirrored friction points of its
    forward/backward passes, whether it was swept alone or with the others on one schedule. A recording in which no
    joint has passes at MIN_LEVELS speeds (what the fit needs) is refused: it is no sweep (the velocity peaks of an
    excitation pair up by chance, at one speed per joint, at most two in 80 random excitations of the iiwa14). A
    joint whose points cannot determine a plausible curve (friction.fit_stribeck) keeps a NaN row and the linear
    friction of the regressor; a note says why.
    """
    n = len(joint_names)
    speeds: list[list[np.ndarray]] = [[] for _ in range(n)]
    frictions: list[list[np.ndarray]] = [[] for _ in range(n)]
    for rec in recordings:
        check_joints(rec, joint_names)
        passes = _mirrored_passes(rec, processing, torque_filter_time_constant_s)
        most = max(speed_levels(v) for v, _ in passes)
        if most < MIN_LEVELS:  # an excitation's velocity peaks pair up by chance, one speed per joint
            raise DataError(f"{rec.source}: no joint moves forward and backward at {MIN_LEVELS} or more constant "
                            f"speeds (the most: {most}), as the Stribeck fit needs: not a friction sweep (an "
                            "excitation recording given as a friction sweep?), or one of too few speeds")
        for j, (v, f) in enumerate(passes):
            speeds[j].append(v)
            frictions[j].append(f)
    coefficients = np.full((n, len(STRIBECK_NAMES)), np.nan)
    rms = np.full(n, np.nan)
    ranges = np.full((n, 2), np.nan)
    notes = []
    for j, name in enumerate(joint_names):
        v, f = np.concatenate(speeds[j]), np.concatenate(frictions[j])
        if not len(v):
            notes.append(f"friction sweep: {name} has no forward/backward passes at a constant speed: linear friction")
            continue
        try:
            fit = fit_stribeck(v, f)
        except ValueError as err:
            notes.append(f"friction sweep: {name}: {err}; linear friction")
            continue
        coefficients[j], rms[j], ranges[j] = fit.coefficients, fit.rms_nm, fit.speed_range_rad_s
        notes.append(
            f"friction sweep: {name} Stribeck fit on {fit.n_points} points at {fit.n_levels} speeds, "
            f"{fit.speed_range_rad_s[0]:.3g}–{fit.speed_range_rad_s[1]:.3g} rad/s, RMS {fit.rms_nm:.3g} Nm; {fit.terms}"
        )
    return coefficients, rms, notes, ranges


def _mirrored_passes(rec: Recording, processing: ProcessingConfig,
                     torque_filter_time_constant_s: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each joint's (speed, friction) points of one recording (mirrored_friction), its motion lagged by the torque
    filter and everything filtered as friction_sweeps says."""
    fs_hz = 1.0 / float(np.median(np.diff(rec.t_s)))
    lag = functools.partial(first_order_lowpass, dt_s=1.0 / fs_hz, time_constant_s=torque_filter_time_constant_s)
    try:
        q = zero_phase_lowpass(lag(rec.q_rad), fs_hz, processing.motion_cutoff_hz, processing.filter_order)
        dq = (np.gradient(q, 1.0 / fs_hz, axis=0) if rec.dq_rad_s is None else
              zero_phase_lowpass(lag(rec.dq_rad_s), fs_hz, processing.motion_cutoff_hz, processing.filter_order))
        tau = zero_phase_lowpass(rec.tau_nm, fs_hz, processing.motion_cutoff_hz, processing.filter_order)
    except ValueError as err:
        raise DataError(f"{rec.source}: {err}") from None
    return [mirrored_friction(q[:, j], dq[:, j], tau[:, j]) for j in range(q.shape[1])]


def extrapolation_notes(stribeck, ranges, processed, joint_names) -> list[str]:
    """Warn where the data move a joint faster than its sweeps did (the fit was checked only up to the sweeps'
    top speed), with the friction eq. (7) gives at both speeds."""
    fastest = np.max([np.max(np.abs(d.dq_rad_s), axis=0) for d in processed], axis=0)
    notes = []
    for j, name in enumerate(joint_names):
        if np.isnan(stribeck[j]).any() or fastest[j] <= 1.05 * ranges[j, 1]:
            continue
        top, at_top, at_fastest = ranges[j, 1], *stribeck_torque(np.array([ranges[j, 1], fastest[j]]), stribeck[j])
        notes.append(f"{name} reaches {fastest[j]:.3g} rad/s, its sweeps only {top:.3g} rad/s: the Stribeck model "
                     f"is extrapolated there ({at_top:.3g} Nm at {top:.3g} rad/s, {at_fastest:.3g} Nm at "
                     f"{fastest[j]:.3g} rad/s)")
    return notes
