"""Validation of an identification on other recordings: each parameter set's torque prediction, the nominal
URDF model's beside it, momentum-observer residuals, and whether the motion is a new one. Given the written model
(output.model_files: identified.urdf by pinocchio, identified.yaml's friction laws), the physical set's prediction is
what those files compute, as a controller loading them would, through the robot's torque filter."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robot_id_estimator.output.model_files import LoadedModel
from robot_id_estimator.processing.input_checks import (
    check_recording,
    check_torque_against_urdf,
    check_torque_follows_motion,
)
from robot_id_estimator.processing.model_side import robot_filtered, torque_side
from robot_id_estimator.processing.motion_summary import compare_motion, motion_summary
from robot_id_estimator.processing.regression_stream import CHUNK_SAMPLES
from robot_id_estimator.processing.samples import ProcessedData, detect_period, process
from robot_id_estimator.progress import Progress, say
from robot_id_estimator.recordings.recording import DataError, Recording
from robot_id_estimator.results import Identification, Traces, concatenated_times
from robot_id_estimator.results.validation import Validation
from robot_id_estimator.settings import EstimatorConfig
from robot_id_estimator.stribeck_law import stribeck_model_torque
from robot_id_estimator.validation.prediction_errors import (
    collision_thresholds,
    correlation,
    momentum_observer,
    momentum_regressors,
    predict_torque,
    rms_error,
    total_rms_error,
)
from robot_id_model.base_parameters import base_parameters
from robot_id_model.parameters import nominal_parameters
from robot_id_model.regressor import regressor
from robot_id_model.robot_model import RobotModel


def measured_reference(rec: Recording, data: ProcessedData) -> np.ndarray:
    """The recorded torque at the processed samples, without the processing's low-pass filter: averaged over
    the same periods for periodic data (Xu et al. 2020, eq. 11), the samples themselves otherwise."""
    def at(times: np.ndarray) -> np.ndarray:
        return np.column_stack([np.interp(times, rec.t_s, rec.tau_nm[:, j]) for j in range(rec.tau_nm.shape[1])])

    if data.n_periods == 0:
        return at(data.t_s)
    period_s = rec.period_s if rec.period_s is not None else detect_period(rec.t_s, rec.q_rad)
    return np.mean([at(data.t_s + m * period_s) for m in range(data.n_periods)], axis=0)


WRITTEN_NOTE = ("physical: the torque of the written model as loaded (identified.urdf by pinocchio's RNEA, "
                "identified.yaml's friction laws)")


def validate(
    result: Identification,
    recordings: Sequence[Recording],
    config: EstimatorConfig | None = None,
    progress: Progress = None,
    allow_outside_limits: bool = False,
    allow_implausible_torque: bool = False,
    written: LoadedModel | None = None,
) -> Validation:
    """Torque prediction errors and momentum-observer residuals of each parameter set on other recordings,
    refused as in identify (robot_id_estimator.processing.input_checks) unless allowed; the physical set's torque
    prediction from the `written` model files when given."""
    if not recordings:
        raise DataError("no recording to validate on")
    config = config or result.config
    setup = result.setup
    robot = result.robot_model()
    sets = (*result.parameter_sets, "urdf")
    values = {s: result.parameter_values(s) for s in result.parameter_sets}
    values["urdf"] = nominal_base_values(robot, result.columns)
    parts = []
    for i, rec in enumerate(recordings, 1):
        check_recording(rec, robot, allow_outside_limits)
        say(progress, f"validation {i}/{len(recordings)}: processing {rec.source}")
        parts.append(_predict_recording(rec, result, robot, values, config, allow_implausible_torque, written))
    processed = [part.data for part in parts]
    notes = [f"{rec.source}: {note}" for rec, d in zip(recordings, processed, strict=True) for note in d.notes]
    notes += [WRITTEN_NOTE] if written is not None else []
    measured_all = np.concatenate([part.reference for part in parts])
    filtered_all = np.concatenate([d.tau_nm for d in processed])
    pred, smoothed, res = ({s: np.concatenate([getattr(part, field)[s] for part in parts]) for s in sets}
                           for field in ("predicted", "smoothed", "residuals"))
    rms = {s: rms_error(measured_all, pred[s]) for s in sets}
    torque_rms = np.sqrt(np.mean(measured_all**2, axis=0))
    motion = motion_summary(processed)
    warnings = [f"{rec.source}: {w}" for rec, d in zip(recordings, processed, strict=True) for w in d.warnings]
    warnings += [w for part in parts for w in part.torque_warnings] + [d for d in (setup.file_drift(),) if d]
    warnings += robot_mismatch(rms, robot.joint_names) + worse_than_no_model(rms, torque_rms, robot.joint_names)
    return Validation(
        joint_names=robot.joint_names,
        sources=tuple(rec.source for rec in recordings),
        rms_nm=rms,
        rms_percent_of_torque={s: 100.0 * rms[s] / np.maximum(torque_rms, 1e-12) for s in sets},
        motion=motion,
        motion_comparison=compare_motion(result.metrics.motion, motion, robot.joint_names),
        warnings=tuple(warnings),
        rms_filtered_nm={s: rms_error(filtered_all, smoothed[s]) for s in sets},
        total_rms_nm={s: total_rms_error(measured_all, pred[s]) for s in sets},
        correlation={s: correlation(measured_all, pred[s]) for s in sets},
        torque_rms_nm=torque_rms,
        observer_max_nm={s: np.max(np.abs(res[s]), axis=0) for s in sets},
        collision_threshold_nm={s: collision_thresholds(res[s], config.collision_safety_factor)
                                for s in sets},
        observer_gain_1_s=config.observer_gain_1_s,
        collision_safety_factor=config.collision_safety_factor,
        notes=tuple(notes),
        traces=Traces(concatenated_times([d.t_s for d in processed]), measured_all, pred, res),
    )


@dataclass(frozen=True)
class _Prediction:
    """One recording: its processing, the measured torque reference, and per parameter set the predicted torque,
    the same low-pass filtered, and the momentum-observer residual."""

    data: ProcessedData
    reference: np.ndarray
    predicted: dict[str, np.ndarray]
    smoothed: dict[str, np.ndarray]
    residuals: dict[str, np.ndarray]
    torque_warnings: tuple[str, ...]


def _predict_recording(rec: Recording, result: Identification, robot: RobotModel, values: dict[str, np.ndarray],
                       config: EstimatorConfig, allow_implausible_torque: bool,
                       written: LoadedModel | None) -> _Prediction:
    """Each parameter set's torque prediction and observer residual on one recording (the URDF model without the
    sweeps' friction; the physical set's prediction the written model's when given)."""
    time_constant_s = result.setup.torque_filter_time_constant_s
    data = process(rec, config.processing)
    model = _model_torques(robot, result.columns, data, values)
    stribeck = stribeck_model_torque(result.friction.stribeck, data.dq_rad_s)
    reference = measured_reference(rec, data)
    predicted, smoothed, residuals = {}, {}, {}
    for s in values:
        friction = np.zeros_like(stribeck) if s == "urdf" else stribeck
        tau_model, momentum, model_input = model[s]
        torque = tau_model + friction
        if s == "physical" and written is not None:
            torque = written.torque_nm(data.q_rad, data.dq_rad_s, data.ddq_rad_s2)
        predicted[s] = robot_filtered(torque, data, time_constant_s)
        smoothed[s] = torque_side(predicted[s], data, config.processing, 0.0)
        momentum = robot_filtered(momentum, data, time_constant_s)
        model_input = robot_filtered(model_input - friction, data, time_constant_s)
        residuals[s] = momentum_observer(data.t_s, reference, momentum, model_input, config.observer_gain_1_s)
    check_torque_follows_motion(rec.source, data.tau_nm, predicted["urdf"], robot.joint_names)
    torque_warnings = () if allow_implausible_torque else tuple(
        check_torque_against_urdf(rec.source, data.tau_nm, predicted["urdf"], robot.joint_names))
    return _Prediction(data, reference, predicted, smoothed, residuals, torque_warnings)


def _model_torques(robot: RobotModel, columns: np.ndarray, data: ProcessedData,
                   values: dict[str, np.ndarray]) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per parameter set, Yb·πb, the momentum Yp·πb and the observer's model input Yn·πb (K, n) each
    (validation.momentum_regressors), from regressors built CHUNK_SAMPLES at a time: each sample's products
    are its own, so the chunks leave no trace; the filters then run on the (K, n) torques (they are linear)."""
    parts: dict[str, list[list[np.ndarray]]] = {s: [[], [], []] for s in values}
    for start in range(0, len(data.t_s), CHUNK_SAMPLES):
        q, dq, ddq = (x[start:start + CHUNK_SAMPLES] for x in (data.q_rad, data.dq_rad_s, data.ddq_rad_s2))
        yb = regressor(robot, q, dq, ddq)[..., columns]
        yp, yn = momentum_regressors(robot, columns, q, dq)
        for s, value in values.items():
            for part, y in zip(parts[s], (yb, yp, yn), strict=True):
                part.append(predict_torque(y, value))
    return {s: tuple(np.concatenate(part) for part in parts[s]) for s in values}


def nominal_base_values(robot: RobotModel, columns: np.ndarray) -> np.ndarray:
    """The base parameters of the URDF's rigid-body model (its inertials), over the identification's columns."""
    base = base_parameters(robot)
    if not np.array_equal(base.independent, columns):
        raise DataError("the identification's base parameters do not match its robot model; identify again")
    return base.values(nominal_parameters(robot))


def robot_mismatch(rms_nm: dict[str, np.ndarray], joint_names: Sequence[str]) -> list[str]:
    """A warning when the identified base parameters predict the data worse than the URDF model on most joints:
    the data are probably from another robot or payload than the identification's."""
    worse = [name for j, name in enumerate(joint_names) if rms_nm["base"][j] > rms_nm["urdf"][j]]
    if len(worse) <= len(joint_names) // 2:
        return []
    return [f"the identified model predicts these data worse than the nominal URDF model on {', '.join(worse)}: "
            "are they from the same robot, tool and payload as the identification data?"]


def worse_than_no_model(rms_nm: dict[str, np.ndarray], torque_rms_nm: np.ndarray,
                        joint_names: Sequence[str]) -> list[str]:
    """A warning naming the joints whose torque every identified set predicts worse than zero torque would (error
    above 100 % of the measured RMS): no model of this robot does that; a flipped sign or swapped columns do."""
    identified = [s for s in rms_nm if s != "urdf"]
    worse = [f"{name} ({100.0 * min(rms_nm[s][j] for s in identified) / max(torque_rms_nm[j], 1e-12):.0f} %)"
             for j, name in enumerate(joint_names) if all(rms_nm[s][j] > torque_rms_nm[j] for s in identified)]
    if not worse:
        return []
    return [f"every identified set predicts {', '.join(worse)} worse than zero torque would (error in % of the "
            "measured RMS): is a torque sign flipped or are columns swapped in these data?"]

