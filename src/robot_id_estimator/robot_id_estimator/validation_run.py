"""Validation of an identification on other recordings: each parameter set's torque prediction, the nominal
URDF model's beside it, momentum-observer residuals, and whether the motion is a new one."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robot_id_estimator.input_checks import check_recording, check_torque_against_urdf
from robot_id_estimator.model_side import (
    Progress,
    concatenated_times,
    nominal_base_values,
    robot_filtered,
    say,
    stribeck_model_torque,
    torque_side,
)
from robot_id_estimator.motion_summary import compare_motion, motion_summary
from robot_id_estimator.processing import ProcessedData, detect_period, process
from robot_id_estimator.recording import DataError, Recording
from robot_id_estimator.results import Identification, Traces
from robot_id_estimator.settings import EstimatorConfig
from robot_id_estimator.validation import (
    collision_thresholds,
    correlation,
    momentum_observer,
    momentum_regressors,
    predict_torque,
    rms_error,
    total_rms_error,
)
from robot_id_estimator.validation_results import Validation
from robot_id_model.regressor import regressor


def measured_reference(rec: Recording, data: ProcessedData) -> np.ndarray:
    """The recorded torque at the processed samples, without the processing's low-pass filter: averaged over
    the same periods for periodic data (Xu et al. 2020, eq. 11), the samples themselves otherwise."""
    def at(times: np.ndarray) -> np.ndarray:
        return np.column_stack([np.interp(times, rec.t_s, rec.tau_nm[:, j]) for j in range(rec.tau_nm.shape[1])])

    if data.n_periods == 0:
        return at(data.t_s)
    period_s = rec.period_s if rec.period_s is not None else detect_period(rec.t_s, rec.q_rad)
    return np.mean([at(data.t_s + m * period_s) for m in range(data.n_periods)], axis=0)


def validate(
    result: Identification,
    recordings: Sequence[Recording],
    config: EstimatorConfig | None = None,
    progress: Progress = None,
    allow_outside_limits: bool = False,
    allow_implausible_torque: bool = False,
) -> Validation:
    """Torque prediction errors and momentum-observer residuals of each parameter set on other recordings,
    refused as in identify (robot_id_estimator.input_checks) unless allowed."""
    if not recordings:
        raise DataError("no recording to validate on")
    config = config or result.config
    setup = result.setup
    robot = setup.model(result.friction_terms)
    sets = (*result.parameter_sets, "urdf")
    values = {s: result.parameter_values(s) for s in result.parameter_sets}
    values["urdf"] = nominal_base_values(robot, result.columns)
    measured, filtered, times, notes, processed = [], [], [], [], []
    predicted: dict[str, list[np.ndarray]] = {s: [] for s in sets}
    smoothed: dict[str, list[np.ndarray]] = {s: [] for s in sets}
    residuals: dict[str, list[np.ndarray]] = {s: [] for s in sets}
    for i, rec in enumerate(recordings, 1):
        check_recording(rec, robot, allow_outside_limits)
        say(progress, f"validation {i}/{len(recordings)}: processing {rec.source}")
        data = process(rec, config.processing)
        notes += [f"{rec.source}: {note}" for note in data.notes]
        say(progress, f"validation {i}/{len(recordings)}: regressors of {len(data.t_s)} samples")
        yb = robot_filtered(
            regressor(robot, data.q_rad, data.dq_rad_s, data.ddq_rad_s2)[..., result.columns], data,
            setup.torque_filter_time_constant_s,
        )
        stribeck = stribeck_model_torque(result.friction.stribeck, data.dq_rad_s)
        reference = measured_reference(rec, data)
        if not allow_implausible_torque:
            check_torque_against_urdf(rec.source, data.tau_nm, predict_torque(yb, values["urdf"]), robot.joint_names)
        yp, yn = momentum_regressors(robot, result.columns, data.q_rad, data.dq_rad_s)
        for s in sets:
            friction = np.zeros_like(stribeck) if s == "urdf" else stribeck  # the URDF model has no sweeps
            predicted[s].append(predict_torque(yb, values[s]) + robot_filtered(friction, data,
                                                                              setup.torque_filter_time_constant_s))
            smoothed[s].append(torque_side(predicted[s][-1], data, config.processing, 0.0))
            momentum = robot_filtered(yp @ values[s], data, setup.torque_filter_time_constant_s)
            model_input = robot_filtered(yn @ values[s] - friction, data, setup.torque_filter_time_constant_s)
            residuals[s].append(momentum_observer(data.t_s, reference, momentum, model_input, config.observer_gain_1_s))
        measured.append(reference)
        filtered.append(data.tau_nm)
        times.append(data.t_s)
        processed.append(data)
    measured_all, filtered_all = np.concatenate(measured), np.concatenate(filtered)
    pred = {s: np.concatenate(predicted[s]) for s in sets}
    res = {s: np.concatenate(residuals[s]) for s in sets}
    rms = {s: rms_error(measured_all, pred[s]) for s in sets}
    torque_rms = np.sqrt(np.mean(measured_all**2, axis=0))
    motion = motion_summary(processed)
    warnings = [f"{rec.source}: {w}" for rec, d in zip(recordings, processed, strict=True) for w in d.warnings]
    warnings += robot_mismatch(rms, robot.joint_names)
    return Validation(
        joint_names=robot.joint_names,
        sources=tuple(rec.source for rec in recordings),
        rms_nm=rms,
        rms_percent_of_torque={s: 100.0 * rms[s] / np.maximum(torque_rms, 1e-12) for s in sets},
        motion=motion,
        motion_comparison=compare_motion(result.metrics.motion, motion, robot.joint_names),
        warnings=tuple(warnings),
        rms_filtered_nm={s: rms_error(filtered_all, np.concatenate(smoothed[s])) for s in sets},
        total_rms_nm={s: total_rms_error(measured_all, pred[s]) for s in sets},
        correlation={s: correlation(measured_all, pred[s]) for s in sets},
        torque_rms_nm=torque_rms,
        observer_max_nm={s: np.max(np.abs(res[s]), axis=0) for s in sets},
        collision_threshold_nm={s: collision_thresholds(res[s], config.collision_safety_factor)
                                for s in sets},
        observer_gain_1_s=config.observer_gain_1_s,
        collision_safety_factor=config.collision_safety_factor,
        notes=tuple(notes),
        traces=Traces(concatenated_times(times), measured_all, pred, res),
    )


def robot_mismatch(rms_nm: dict[str, np.ndarray], joint_names: Sequence[str]) -> list[str]:
    """A warning when the identified base parameters predict the data worse than the URDF model on most joints:
    the data are probably from another robot or payload than the identification's."""
    worse = [name for j, name in enumerate(joint_names) if rms_nm["base"][j] > rms_nm["urdf"][j]]
    if len(worse) <= len(joint_names) // 2:
        return []
    return [f"the identified model predicts these data worse than the nominal URDF model on {', '.join(worse)}: "
            "are they from the same robot, tool and payload as the identification data?"]
