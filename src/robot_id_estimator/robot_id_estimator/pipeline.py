"""From recordings to an identified model, stage by stage, as plain functions.

identify: the processing stage (regression_data: checks, processing, the regressor filtered like the torque, built
and reduced in chunks so that later stages never depend on the number of samples), the estimation stage
(estimation.base_stage: identifiable base parameters, WLS or OLS with RSD), essential parameters (Xu et al. 2020,
section II-A), physical parameters (physical.retrieval, Xu et al. 2020, section III), and the check of every
parameter set on data it was not fitted to (validation.held_out, results.set_checks). Each stage takes the
previous one's typed result; the data flow one way. Validation on other data is robot_id_estimator.validate.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from robot_id_estimator.estimation import least_squares as estimation
from robot_id_estimator.estimation.base_stage import BaseEstimate, estimate_base
from robot_id_estimator.friction.coulomb_law_choice import with_chosen_laws
from robot_id_estimator.friction.sweep_choice import dropped_notes, sweeps_predicting_worse
from robot_id_estimator.friction.sweeps import extrapolation_notes, friction_sweeps
from robot_id_estimator.physical.problem import RetrievalError
from robot_id_estimator.physical.retrieval import physical_retrieval_of, retrieve_physical
from robot_id_estimator.processing.input_checks import refuse_massless_links
from robot_id_estimator.processing.regression_data import (
    N_FOLDS,
    RegressionData,
    coulomb_columns,
    regression_data,
    replaced_by_stribeck,
)
from robot_id_estimator.processing.torque_filter import found_time_constant
from robot_id_estimator.progress import Progress, say
from robot_id_estimator.recordings.recording import DataError, Recording
from robot_id_estimator.results import (
    Friction,
    Identification,
    Metrics,
    ParameterSet,
    Physical,
    Traces,
    concatenated_times,
)
from robot_id_estimator.results.held_out import HeldOut
from robot_id_estimator.results.law_choice import CoulombLawChoice
from robot_id_estimator.results.set_checks import SetCheck, check_sets
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_estimator.settings import EstimatorConfig
from robot_id_estimator.validation.diagnosis_stage import diagnosis_of
from robot_id_estimator.validation.fit_metrics import identification_metrics
from robot_id_estimator.validation.held_out import cross_validate, predicted_blocks
from robot_id_estimator.validation.prediction_errors import predict_torque
from robot_id_model.base_parameters import BaseParameters, base_parameters
from robot_id_model.coulomb_laws import candidate_laws
from robot_id_model.robot_model import RobotModel


@dataclass(frozen=True)
class SweepFriction:
    """Stribeck friction fitted to sweep recordings (Luo et al. 2024): coefficients (n, 7), fit RMS (n,), the
    swept speed range (n, 2), and notes."""

    coefficients: np.ndarray
    rms_nm: np.ndarray
    ranges_rad_s: np.ndarray
    notes: tuple[str, ...]


@dataclass(frozen=True)
class PhysicalOutcome:
    """The physical stage: retrieved parameters and the same retrieval as a function of a reduced system (for the
    held-out check), or why there are none (None, None: not asked for)."""

    physical: Physical | None
    failure: str | None
    refit: Callable[[estimation.ReducedSystem], np.ndarray] | None = None


class _Timer:
    """Wall time of each stage, for the result's metrics."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.seconds: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        yield
        self.seconds[name] = round(time.perf_counter() - t0, 4)


def identify(
    recordings: Sequence[Recording],
    setup: RobotSetup,
    config: EstimatorConfig | None = None,
    sweeps: Sequence[Recording] = (),
    progress: Progress = None,
    allow_outside_limits: bool = False,
    allow_implausible_torque: bool = False,
    validation_recordings: Sequence[Recording] = (),
) -> Identification:
    """Identify base, essential and physical parameters and friction from recordings of `setup`'s joints, and
    check every parameter set and choose the Coulomb laws on held-out data (Identification.checks, .warnings):
    `validation_recordings` (another motion, not fitted) when given, else the recordings' own time blocks by
    cross-validation.

    Refused (robot_id_estimator.processing.input_checks): positions outside the URDF's limits unless
    `allow_outside_limits`, torque that cannot be this robot's unless `allow_implausible_torque`, too little data.
    A physical retrieval that fails (solver) leaves `physical` None and its check failed, with the reason.
    """
    config = config or EstimatorConfig()
    if not recordings:
        raise DataError("no recording to identify from")
    robot = setup.model(config.friction)
    refuse_massless_links(robot, setup.urdf_path)
    sweep = _sweep_friction(sweeps, robot, setup, config, progress)

    def run(friction: SweepFriction | None, used: EstimatorConfig = config) -> Identification:
        return _identified(recordings, setup, used, robot, friction, progress, allow_outside_limits,
                           allow_implausible_torque, validation_recordings)

    if sweep is None or not config.chooses_coulomb_law:
        return run(sweep)
    say(progress, "each joint's friction sweep against the excitation's own Coulomb law, on held-out data")
    quick = dataclasses.replace(config, physical=dataclasses.replace(config.physical, method="none"))
    with_sweep = run(sweep, quick).held_out.rms_nm("base")
    without = np.array(with_sweep, dtype=float)
    for j in np.flatnonzero(~np.isnan(sweep.coefficients).any(axis=1)):  # each swept joint's left out in turn
        one_less = dataclasses.replace(sweep, coefficients=np.where(np.arange(len(without))[:, None] == j, np.nan,
                                                                    sweep.coefficients))
        without[j] = run(one_less, quick).held_out.rms_nm("base")[j]
    dropped = sweeps_predicting_worse(sweep.coefficients, with_sweep, without)
    if not dropped.any():
        return run(sweep)
    return run(dataclasses.replace(sweep, coefficients=np.where(dropped[:, None], np.nan, sweep.coefficients),
                                   notes=(*sweep.notes, *dropped_notes(robot.joint_names, dropped, with_sweep,
                                                                        without))))


def _identified(recordings: Sequence[Recording], setup: RobotSetup, config: EstimatorConfig, robot: RobotModel,
                sweep: SweepFriction | None, progress: Progress, allow_outside_limits: bool,
                allow_implausible_torque: bool, validation_recordings: Sequence[Recording]) -> Identification:
    """identify with the sweeps' friction `sweep` (or none) in place of the swept joints' linear friction."""
    timer = _Timer()
    base = base_parameters(robot)
    stribeck = sweep.coefficients if sweep else None
    replaced = replaced_by_stribeck(base.names, robot.joint_names, stribeck)
    fc = coulomb_columns(robot, base)
    fc[np.isin(fc, sorted(replaced))] = -1
    candidates = candidate_laws() if config.chooses_coulomb_law and (fc >= 0).any() else ()
    with timer.stage("processing"):
        data = regression_data(recordings, setup, robot, base, config, stribeck, progress, allow_outside_limits,
                               allow_implausible_torque, candidates)
        fit = found_time_constant(robot, base.independent, config.processing, setup.torque_filter_time_constant_s,
                                  data.processed)
        if fit.replaces:  # the data show another torque filter than the config's: identified with theirs
            setup = dataclasses.replace(setup, torque_filter_time_constant_s=fit.found_s)
            data = regression_data(recordings, setup, robot, base, config, stribeck, progress, allow_outside_limits,
                                   allow_implausible_torque, candidates)
            data = dataclasses.replace(data, warnings=(*data.warnings, fit.warning()))
        validation = regression_data(validation_recordings, setup, robot, base, _every_speed(config), stribeck,
                                     progress, allow_outside_limits, allow_implausible_torque, candidates,
                                     for_fitting=False) if validation_recordings else None
    law_choice = None
    if len(candidates):
        with timer.stage("coulomb law"):
            data, validation, robot, law_choice = with_chosen_laws(data, validation, setup, robot, base, fc, config,
                                                                   candidates, progress)
    with timer.stage("estimation"):
        say(progress, f"estimating {base.n_base} base parameters ({config.method.upper()}) from "
                      f"{len(data.tau_nm)} samples")
        estimate = estimate_base(data, robot, base, setup, config, replaced)
    with timer.stage("essential"):
        say(progress, "essential parameters: iterative elimination")
        essential = estimation.essential_parameters(estimate.system, estimate.columns,
                                                    config.essential_value_threshold,
                                                    config.essential_rsd_threshold_percent)
    with timer.stage("physical"):
        outcome = _physical_stage(robot, base, setup, data, estimate, essential, config, progress)
    metrics = identification_metrics(config, data, estimate, essential, _set_values(estimate, essential, outcome))
    with timer.stage("held-out check"):
        held_out = _held_out(data, estimate, essential, outcome, validation, progress)
    timer.seconds["total"] = round(time.perf_counter() - timer.start, 4)
    return _assemble(setup, robot, base, config, data, estimate, essential, outcome, sweep, law_choice, held_out,
                     dataclasses.replace(metrics, timings_s=timer.seconds), progress)


def _every_speed(config: EstimatorConfig) -> EstimatorConfig:
    """The config a validation motion is processed with: every sample predicted, also where a joint moves slower
    than min_speed_rad_s (left out of the fit for static friction): the model is used at every speed, and the
    Coulomb laws differ only near rest (with it, a tanh(dq/0.01) truth was told from sign on 2 of 7 iiwa14 joints
    of a slow validation motion, without it on 5)."""
    return dataclasses.replace(config, min_speed_rad_s=0.0)


def _sweep_friction(sweeps: Sequence[Recording], robot: RobotModel, setup: RobotSetup, config: EstimatorConfig,
                    progress: Progress) -> SweepFriction | None:
    if not sweeps:
        return None
    say(progress, f"fitting Stribeck friction to {len(sweeps)} sweep recording(s)")
    coefficients, rms, notes, ranges = friction_sweeps(sweeps, robot.joint_names, config.processing,
                                                       setup.torque_filter_time_constant_s)
    return SweepFriction(coefficients, rms, ranges, tuple(notes))


def _physical_stage(
    robot: RobotModel,
    base: BaseParameters,
    setup: RobotSetup,
    data: RegressionData,
    estimate: BaseEstimate,
    essential: estimation.Essential,
    config: EstimatorConfig,
    progress: Progress,
) -> PhysicalOutcome:
    """Physical parameters fitted to the target columns with the estimate's weights (a solver failure is an
    outcome, not an exception)."""
    if config.physical.method == "none":
        return PhysicalOutcome(None, None)
    target = _target_columns(estimate, essential, config)
    say(progress, f"physical parameters: {config.physical.method} on {len(target)} {config.physical.target} "
                  "parameter columns")
    system = estimate.system
    try:
        physical = retrieve_physical(robot, base, setup, system.r_cols * system.scale, system.z, system.outside_sq,
                                     target, config.physical)
    except RetrievalError as err:
        return PhysicalOutcome(None, f"physical parameters not retrieved: {err}")
    return PhysicalOutcome(physical, None, physical_retrieval_of(robot, base, setup, target, config.physical))


def _target_columns(estimate: BaseEstimate, essential: estimation.Essential, config: EstimatorConfig) -> np.ndarray:
    """The base parameters the physical set is fitted to (PhysicalConfig.target)."""
    return essential.fit.columns if config.physical.target == "essential" else estimate.columns


def _set_values(estimate: BaseEstimate, essential: estimation.Essential, outcome: PhysicalOutcome) -> dict:
    """Each parameter set's values over the base parameters (essential: zero where eliminated)."""
    essential_values = np.zeros(len(estimate.values))
    essential_values[essential.fit.columns] = essential.fit.values
    values = {"base": estimate.values, "essential": essential_values}
    if outcome.physical is not None:
        values["physical"] = outcome.physical.base_values
    return values


def _held_out(data: RegressionData, estimate: BaseEstimate, essential: estimation.Essential, outcome: PhysicalOutcome,
              validation: RegressionData | None, progress: Progress) -> HeldOut:
    """Every set's prediction of data it was not fitted to: the validation recordings when given, else each of the
    recordings' N_FOLDS time blocks by the sets fitted on the others."""
    if validation is not None:
        say(progress, f"self-check: every set predicts {', '.join(validation.sources)} (not fitted)")
        return predicted_blocks([s.folds for s in validation.streamed], _set_values(estimate, essential, outcome),
                                f"the validation recording(s) {', '.join(validation.sources)}, not fitted, in "
                                f"{N_FOLDS} time blocks")
    say(progress, f"self-check: each set fitted on {N_FOLDS - 1} of {N_FOLDS} time blocks predicts the other")
    return cross_validate([s.folds for s in data.streamed], estimate.joint_weights, estimate.columns,
                          essential.fit.columns, outcome.refit)


def _assemble(
    setup: RobotSetup,
    robot: RobotModel,
    base: BaseParameters,
    config: EstimatorConfig,
    data: RegressionData,
    estimate: BaseEstimate,
    essential: estimation.Essential,
    outcome: PhysicalOutcome,
    sweep: SweepFriction | None,
    law_choice: CoulombLawChoice | None,
    held_out: HeldOut,
    metrics: Metrics,
    progress: Progress,
) -> Identification:
    """The Identification of the stages' results, with every parameter set checked on held-out data."""
    names = base.names
    values = _set_values(estimate, essential, outcome)
    notes = [*(sweep.notes if sweep else ()), *data.notes, *estimate.notes, *held_out.notes,
             *(law_choice.describe(robot.joint_names) if law_choice else ())]
    if sweep is not None:
        notes += extrapolation_notes(sweep.coefficients, sweep.ranges_rad_s, data.processed, robot.joint_names)
    metrics = dataclasses.replace(metrics, notes=tuple(notes))
    torque_rms_nm = np.sqrt(np.mean(data.measured_nm**2, axis=0))
    checks = check_sets(held_out, torque_rms_nm, robot.joint_names,
                        {"physical": outcome.physical.violations} if outcome.physical is not None else None)
    if outcome.failure is not None:
        checks["physical"] = SetCheck(False, (outcome.failure,))
    say(progress, f"identified {len(estimate.columns)} of {len(names)} base parameters, "
                  f"{len(essential.fit.columns)} essential; cond(Yb) = {metrics.condition_number:.4g}")
    diagnosis = diagnosis_of(setup, robot, base, config, data, estimate, essential, metrics, held_out, torque_rms_nm,
                             progress)
    return Identification(
        setup=setup,
        friction_terms=robot.friction,
        columns=base.independent,
        base=ParameterSet(names, estimate.values, estimate.rsd_percent),
        base_expressions=base.expressions,
        unidentified=estimate.unidentified,
        essential=ParameterSet(tuple(names[j] for j in essential.fit.columns), essential.fit.values,
                               essential.fit.rsd_percent),
        eliminated=tuple(names[j] for j in essential.eliminated),
        friction=_friction(names, robot, estimate.values, sweep, law_choice),
        metrics=metrics,
        config=config,
        traces=_traces(data, values, names),
        physical=outcome.physical,
        held_out=held_out,
        checks=checks,
        warnings=(*data.warnings, *(f for c in checks.values() for f in c.failures),
                  *(outcome.physical.plausibility.warnings() if outcome.physical is not None else ()),
                  *((diagnosis.line,) if diagnosis else ())),
        mistake=diagnosis.line if diagnosis and diagnosis.data_mistake else None,
    )


def _traces(data: RegressionData, values: dict[str, np.ndarray], names: Sequence[str]) -> Traces:
    """Measured and predicted torque at the samples the streaming kept for drawing (every k-th): each parameter
    set's with the sweeps' friction, and the nominal URDF model's ('urdf', without it, as in validation); with the
    velocities there and the friction the data show (measured less the base set's rigid body)."""
    times = concatenated_times([d.t_s for d in data.processed])
    offsets = np.cumsum([0, *(len(d.t_s) for d in data.processed)])
    index = np.concatenate([s.trace_index + o for s, o in zip(data.streamed, offsets[:-1], strict=True)])
    friction = data.measured_nm[index] - data.tau_nm[index]
    yb = np.concatenate([s.trace_yb for s in data.streamed])
    predicted = {s: predict_torque(yb, v) + friction for s, v in values.items()}
    predicted["urdf"] = np.concatenate([s.nominal_nm[s.trace_index] for s in data.streamed])
    rigid = np.array([not name.startswith(("FV", "FC", "FO")) for name in names])
    q, dq, ddq = (np.concatenate([getattr(d, name) for d in data.processed])[index]
                  for name in ("q_rad", "dq_rad_s", "ddq_rad_s2"))
    shown = data.measured_nm[index] - predict_torque(yb, np.where(rigid, values["base"], 0.0))
    return Traces(times[index], data.measured_nm[index], predicted, dq_rad_s=dq, q_rad=q, friction_nm=shown,
                  ddq_rad_s2=ddq)


def _friction(names: Sequence[str], robot: RobotModel, values: np.ndarray, sweep: SweepFriction | None,
              law_choice: CoulombLawChoice | None) -> Friction:
    index = {name: i for i, name in enumerate(names)}

    def term(prefix: str) -> np.ndarray:
        return np.array([values[index[f"{prefix}{j}"]] if f"{prefix}{j}" in index else np.nan
                         for j in range(1, robot.n_joints + 1)])

    return Friction(robot.joint_names, term("FV"), term("FC"), term("FO"), sweep.coefficients if sweep else None,
                    sweep.rms_nm if sweep else None, robot.coulomb_laws, law_choice)
