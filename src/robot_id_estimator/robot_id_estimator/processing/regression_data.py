"""The processing stage: from recordings to the regression the estimation solves.

Every recording is checked (input_checks), processed (processing: period check and averaging, derivatives,
torque low-pass), and its base regressor is built and filtered exactly like the torque it explains: the robot's
own first-order torque filter, then the processing's zero-phase Butterworth ("parallel filtering",
model_side.torque_side), chunk by chunk and reduced as it is built (regression_stream), so that no later stage
holds a (K, n, b) array. The torque to explain is the processed torque minus the Stribeck friction of sweeps
when there are any. Nothing later in the pipeline filters again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robot_id_estimator.processing.input_checks import (
    check_enough_data,
    check_recording,
    check_torque_against_urdf,
    check_torque_follows_motion,
    urdf_friction_note,
)
from robot_id_estimator.processing.model_side import torque_side
from robot_id_estimator.processing.motion_summary import static_joints
from robot_id_estimator.processing.reduction import JointBlocks
from robot_id_estimator.processing.regression_stream import StreamedRecording, stream_recording
from robot_id_estimator.processing.samples import ProcessedData, process
from robot_id_estimator.progress import Progress, say
from robot_id_estimator.recordings.recording import Recording
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_estimator.settings import EstimatorConfig
from robot_id_estimator.stribeck_law import stribeck_model_torque
from robot_id_model.base_parameters import BaseParameters
from robot_id_model.coulomb_laws import CoulombLaw
from robot_id_model.parameters import friction_columns, nominal_parameters
from robot_id_model.robot_model import RobotModel

N_FOLDS = 5
"""Contiguous time blocks of each recording, each held out once (K-fold cross-validation, Hastie et al. 2009,
section 7.10): by the Coulomb-law choice and the parameter sets' self-check."""


@dataclass(frozen=True)
class RegressionData:
    """Per recording, the processed samples and the reduced regression of its filtered base regressor with the
    torque to explain (regression_stream.StreamedRecording); the torques stacked."""

    sources: tuple[str, ...]
    processed: tuple[ProcessedData, ...]
    streamed: tuple[StreamedRecording, ...]
    tau_nm: np.ndarray
    """Processed torque minus the sweeps' Stribeck friction, stacked."""
    measured_nm: np.ndarray
    """Processed torque, stacked."""
    notes: tuple[str, ...]
    warnings: tuple[str, ...]

    @property
    def blocks(self) -> tuple[JointBlocks, ...]:
        return tuple(s.blocks for s in self.streamed)


def min_speeds_rad_s(processed: Sequence[ProcessedData], min_speed_rad_s: float) -> np.ndarray:
    """(n,) per joint, the speed below which its equations are left out (EstimatorConfig.min_speed_rad_s): none
    for a joint that does not move in any recording (estimation.base_stage takes it as held exactly still)."""
    return np.where(static_joints(np.concatenate([d.q_rad for d in processed])), 0.0, min_speed_rad_s)


def coulomb_columns(robot: RobotModel, base: BaseParameters) -> np.ndarray:
    """(n,) per joint, the base column of its Coulomb parameter, −1 where it has none (no FC term, or a joint that
    does not move and so has no identifiable Coulomb column)."""
    if "FC" not in robot.friction:
        return np.full(robot.n_joints, -1)
    position = {int(c): i for i, c in enumerate(base.independent)}
    fc = friction_columns(robot)[:, robot.friction.index("FC")]
    return np.array([position.get(int(c), -1) for c in fc])


def replaced_by_stribeck(names: Sequence[str], joint_names: Sequence[str], stribeck: np.ndarray | None) -> set[int]:
    """Base-parameter indices of the viscous and Coulomb terms of joints with a Stribeck model."""
    if stribeck is None:
        return set()
    fitted = [j + 1 for j in range(len(joint_names)) if not np.isnan(stribeck[j]).any()]
    wanted = {f"{term}{j}" for j in fitted for term in ("FV", "FC")}
    return {i for i, name in enumerate(names) if name in wanted}


def _model_notes(robot: RobotModel, time_constant_s: float, cutoff_hz: float) -> list[str]:
    """What the user should know of the model the regression is built from."""
    notes = []
    urdf_note = urdf_friction_note(robot)
    notes += [urdf_note] if urdf_note else []
    if robot.locked:
        notes.append(f"the URDF's joints {', '.join(robot.locked)} are not the arm's: locked at their neutral "
                     "position, their links lumped into the arm link they hang on")
    robot_filter = f"the robot's first-order filter ({time_constant_s:g} s) and " if time_constant_s > 0.0 else ""
    notes.append(f"regressor columns filtered like the torque: {robot_filter}the zero-phase Butterworth at "
                 f"{cutoff_hz:g} Hz")
    return notes


def regression_data(
    recordings: Sequence[Recording],
    setup: RobotSetup,
    robot: RobotModel,
    base: BaseParameters,
    config: EstimatorConfig,
    stribeck: np.ndarray | None = None,
    progress: Progress = None,
    allow_outside_limits: bool = False,
    allow_implausible_torque: bool = False,
    coulomb_candidates: Sequence[CoulombLaw] = (),
    n_folds: int = N_FOLDS,
    for_fitting: bool = True,
) -> RegressionData:
    """Check and process every recording, then build its base regressor filtered like its torque; a recording
    whose torque cannot be this robot's (input_checks.check_torque_against_urdf) is refused unless allowed. Each
    recording's `n_folds` contiguous time folds are reduced on their own, with the Coulomb-law candidates' columns
    beside the regressor (coulomb_law_choice, validation.held_out). Recordings only predicted (not `for_fitting`)
    need not hold enough data to identify the parameters."""
    processed, notes = [], []
    for i, rec in enumerate(recordings, 1):
        check_recording(rec, robot, allow_outside_limits)
        say(progress, f"processing {i}/{len(recordings)}: {rec.source} ({len(rec.t_s)} samples)")
        data = process(rec, config.processing)
        processed.append(data)
        notes += [f"{rec.source}: {note}" for note in data.notes]
    if for_fitting:
        check_enough_data(processed, config.processing.torque_cutoff_hz, base.n_base)

    time_constant_s = setup.torque_filter_time_constant_s
    nominal = base.values(nominal_parameters(robot))
    min_speeds = min_speeds_rad_s(processed, config.min_speed_rad_s)
    streamed, tau_parts, torque_warnings = [], [], []
    for i, (rec, data) in enumerate(zip(recordings, processed, strict=True), 1):
        say(progress, f"regressor {i}/{len(processed)}: {len(data.t_s)} samples × {robot.n_joints} joints, "
                      "built and reduced in chunks")
        friction = stribeck_model_torque(stribeck, data.dq_rad_s)
        tau_parts.append(data.tau_nm - torque_side(friction, data, config.processing, time_constant_s))
        streamed.append(stream_recording(robot, base.independent, data, tau_parts[-1], nominal, config.processing,
                                         time_constant_s, min_speeds, coulomb_candidates, n_folds))
        if config.min_speed_rad_s > 0.0:
            left_out = 1.0 - streamed[-1].blocks.n_rows / len(data.t_s)
            notes.append(f"{rec.source}: equations left out where a joint moves slower than {config.min_speed_rad_s:g} "
                         f"rad/s (static friction): {np.array2string(100 * left_out, precision=1)} % per joint")
        check_torque_follows_motion(rec.source, data.tau_nm, streamed[-1].nominal_nm, robot.joint_names)
        if not allow_implausible_torque:
            torque_warnings += check_torque_against_urdf(rec.source, data.tau_nm, streamed[-1].nominal_nm,
                                                         robot.joint_names)
    notes += _model_notes(robot, time_constant_s, config.processing.torque_cutoff_hz)
    return RegressionData(
        sources=tuple(rec.source for rec in recordings),
        processed=tuple(processed),
        streamed=tuple(streamed),
        tau_nm=np.concatenate(tau_parts),
        measured_nm=np.concatenate([d.tau_nm for d in processed]),
        notes=tuple(notes),
        warnings=tuple(f"{rec.source}: {w}" for rec, d in zip(recordings, processed, strict=True)
                       for w in d.warnings) + tuple(torque_warnings),
    )


def restreamed(data: RegressionData, setup: RobotSetup, robot: RobotModel, base: BaseParameters,
               config: EstimatorConfig, progress: Progress = None) -> RegressionData:
    """The regression of the same processed recordings and torque built again for `robot` (its Coulomb laws
    chosen), without candidates (those were built on regression_stream.choice_samples only)."""
    say(progress, "regressor built again with the chosen Coulomb laws")
    nominal = base.values(nominal_parameters(robot))
    min_speeds = min_speeds_rad_s(data.processed, config.min_speed_rad_s)
    tau = np.split(data.tau_nm, np.cumsum([len(d.t_s) for d in data.processed])[:-1])
    streamed = tuple(stream_recording(robot, base.independent, d, t, nominal, config.processing,
                                      setup.torque_filter_time_constant_s, min_speeds, (), len(s.folds))
                     for d, t, s in zip(data.processed, tau, data.streamed, strict=True))
    return dataclasses.replace(data, streamed=streamed)


def without_candidates(data: RegressionData) -> RegressionData:
    """The regression as it is (its folds are those of the sign law), the candidates' columns let go."""
    return dataclasses.replace(data, streamed=tuple(dataclasses.replace(s, candidate_folds=())
                                                    for s in data.streamed))
