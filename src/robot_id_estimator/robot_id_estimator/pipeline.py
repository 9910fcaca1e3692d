"""From recordings to an identified model, as plain functions.

identify: process every recording (robot_id_estimator.processing), build the base regressor (robot_id_model),
make it see the robot's torque filter, check which base parameters the data identify, estimate them by WLS
or OLS with RSDs, reduce them to essential parameters, collect friction (linear and, from sweeps, Stribeck),
retrieve physically consistent parameters, and check every parameter set against the data
(robot_id_estimator.set_checks). Validation on other data is robot_id_estimator.validation_run.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from robot_id_estimator import estimation
from robot_id_estimator.determination import determination, hold_friction
from robot_id_estimator.friction_sweeps import extrapolation_notes, friction_sweeps
from robot_id_estimator.input_checks import check_enough_data, check_recording, check_torque_against_urdf
from robot_id_estimator.model_side import (
    Progress,
    concatenated_times,
    nominal_base_values,
    say,
    stribeck_model_torque,
    torque_side,
)
from robot_id_estimator.motion_summary import motion_summary
from robot_id_estimator.physical_retrieval import RetrievalError, default_bounds, retrieve_lmi, retrieve_multistart
from robot_id_estimator.processing import ProcessedData, process
from robot_id_estimator.recording import DataError, Recording
from robot_id_estimator.results import Friction, Identification, Metrics, ParameterSet, Physical, RobotSetup, Traces
from robot_id_estimator.set_checks import SetCheck, check_sets
from robot_id_estimator.settings import EstimatorConfig, PhysicalConfig
from robot_id_estimator.validation import predict_torque, rms_error
from robot_id_model.base_parameters import BaseParameters, base_parameters
from robot_id_model.parameters import nominal_parameters, parameter_names
from robot_id_model.regressor import regressor
from robot_id_model.robot_model import RobotModel
from robot_id_model.urdf_inertials import lumped_known_parts


def _sanitised_motion(data: ProcessedData, static: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Motion with the joints that do not move held exactly still, for the structural rank test."""
    q, dq, ddq = data.q_rad.copy(), data.dq_rad_s.copy(), data.ddq_rad_s2.copy()
    q[:, static] = np.mean(data.q_rad[:, static], axis=0)
    dq[:, static] = 0.0
    ddq[:, static] = 0.0
    return q, dq, ddq


def identify(
    recordings: Sequence[Recording],
    setup: RobotSetup,
    config: EstimatorConfig | None = None,
    sweeps: Sequence[Recording] = (),
    progress: Progress = None,
    allow_outside_limits: bool = False,
    allow_implausible_torque: bool = False,
) -> Identification:
    """Identify base, essential and physical parameters and friction from recordings of `setup`'s joints, and
    check every parameter set against the data (Identification.checks, .warnings).

    Refused (robot_id_estimator.input_checks): positions outside the URDF's limits unless
    `allow_outside_limits`, torque that cannot be this robot's unless `allow_implausible_torque`, too little data.
    A physical retrieval that fails (solver) leaves `physical` None and its check failed, with the reason.
    """
    config = config or EstimatorConfig()
    if not recordings:
        raise DataError("no recording to identify from")
    t_start = time.perf_counter()
    timings: dict[str, float] = {}
    robot = setup.model(config.friction)
    base = base_parameters(robot)
    names = base.names
    notes: list[str] = []

    stribeck = stribeck_rms = None
    if sweeps:
        say(progress, f"fitting Stribeck friction to {len(sweeps)} sweep recording(s)")
        stribeck, stribeck_rms, sweep_notes, sweep_ranges = friction_sweeps(sweeps, robot.joint_names,
                                                                           config.processing)
        notes += sweep_notes

    processed, yb_parts, tau_parts = [], [], []
    t_mark = time.perf_counter()
    for i, rec in enumerate(recordings, 1):
        check_recording(rec, robot, allow_outside_limits)
        say(progress, f"processing {i}/{len(recordings)}: {rec.source} ({len(rec.t_s)} samples)")
        data = process(rec, config.processing)
        processed.append(data)
        notes += [f"{rec.source}: {note}" for note in data.notes]
    check_enough_data(processed, config.processing.torque_cutoff_hz, base.n_base)
    timings["processing"] = time.perf_counter() - t_mark

    t_mark = time.perf_counter()
    for i, data in enumerate(processed, 1):
        say(progress, f"regressor {i}/{len(processed)}: {len(data.t_s)} samples × {robot.n_joints} joints")
        yb = regressor(robot, data.q_rad, data.dq_rad_s, data.ddq_rad_s2)[..., base.independent]
        yb_parts.append(torque_side(yb, data, config.processing, setup.torque_filter_time_constant_s))
        friction_part = torque_side(stribeck_model_torque(stribeck, data.dq_rad_s), data, config.processing,
                                    setup.torque_filter_time_constant_s)
        tau_parts.append(data.tau_nm - friction_part)
    if stribeck is not None:
        notes += extrapolation_notes(stribeck, sweep_ranges, processed, robot.joint_names)
    robot_filter = (f"the robot's first-order filter ({setup.torque_filter_time_constant_s:g} s) and "
                    if setup.torque_filter_time_constant_s > 0.0 else "")
    notes.append(f"regressor columns filtered like the torque: {robot_filter}the zero-phase Butterworth at "
                 f"{config.processing.torque_cutoff_hz:g} Hz")
    yb_all, tau_all = np.concatenate(yb_parts), np.concatenate(tau_parts)
    if not allow_implausible_torque:
        check_torque_against_urdf(", ".join(rec.source for rec in recordings),
                                  np.concatenate([d.tau_nm for d in processed]),
                                  predict_torque(yb_all, nominal_base_values(robot, base.independent)),
                                  robot.joint_names)
    timings["regressor"] = time.perf_counter() - t_mark

    t_mark = time.perf_counter()
    say(progress, f"estimating {base.n_base} base parameters ({config.method.upper()}) from {len(tau_all)} samples")
    ones = np.ones(robot.n_joints)
    ols_system = estimation.reduce_system(yb_all, tau_all, ones)
    unidentified = _unidentified(robot, base.independent, processed, ols_system, names, ones, config.processing, setup)
    replaced = _replaced_by_stribeck(names, robot.joint_names, stribeck)
    columns = np.array([j for j in range(len(names)) if names[j] not in unidentified and j not in replaced], dtype=int)
    notes += list(unidentified.values())
    if not len(columns):
        raise DataError(f"the data identify none of the {len(names)} base parameters: "
                        + "; ".join(unidentified.values()))
    if replaced:
        notes.append(f"{[names[j] for j in sorted(replaced)]} replaced by the Stribeck friction of the sweeps")

    weights, noise, weight_notes = _weights(config.method, processed, yb_parts, tau_parts, ols_system, columns,
                                            config.processing)
    notes += weight_notes
    row_weights = np.concatenate([np.repeat(w, len(t), axis=0) for w, t in zip(weights, tau_parts, strict=True)])
    system = estimation.reduce_system(yb_all, tau_all, row_weights) if config.method == "wls" else ols_system
    fit = estimation.fit_columns(system, columns)
    values, rsd = np.full(len(names), np.nan), np.full(len(names), np.nan)
    values[columns], rsd[columns] = fit.values, fit.rsd_percent
    timings["estimation"] = time.perf_counter() - t_mark

    t_mark = time.perf_counter()
    say(progress, "essential parameters: iterative elimination")
    essential = estimation.essential_parameters(
        system, columns, config.essential_value_threshold, config.essential_rsd_threshold_percent
    )
    timings["essential"] = time.perf_counter() - t_mark

    essential_set = ParameterSet(
        tuple(names[j] for j in essential.fit.columns), essential.fit.values, essential.fit.rsd_percent
    )
    essential_values = np.zeros(len(names))
    essential_values[essential.fit.columns] = essential.fit.values
    predicted = {"base": predict_torque(yb_all, values), "essential": predict_torque(yb_all, essential_values)}

    physical, physical_failure = None, None
    if config.physical.method != "none":
        t_mark = time.perf_counter()
        target = essential.fit.columns if config.physical.target == "essential" else columns
        say(progress, f"physical parameters: {config.physical.method} on {len(target)} {config.physical.target} "
                       "parameter columns")
        sqrt_w = np.sqrt(row_weights)
        try:
            physical = retrieve_physical(robot, base, setup, yb_all * sqrt_w[:, :, None], tau_all * sqrt_w, target,
                                         config.physical)
        except RetrievalError as err:
            physical_failure = f"physical parameters not retrieved: {err}"
        else:
            predicted["physical"] = predict_torque(yb_all, physical.base_values)
        timings["physical"] = time.perf_counter() - t_mark
    measured = np.concatenate([d.tau_nm for d in processed])
    friction_all = measured - tau_all
    timings["total"] = time.perf_counter() - t_start
    metrics = Metrics(
        condition_number=estimation.condition_number(yb_all, columns),
        condition_number_scaled=estimation.condition_number(yb_all, columns, scaled=True),
        n_samples=len(tau_all),
        n_periods=tuple(d.n_periods for d in processed),
        noise_var_nm2=tuple(None if v is None else list(map(float, v)) for v in noise),
        joint_weights=tuple(list(map(float, w[0])) for w in weights),
        residual_rms_nm={s: list(map(float, rms_error(tau_all, predicted[s]))) for s in predicted},
        residual_variance={"base": fit.residual_variance, "essential": essential.fit.residual_variance},
        rsd_filter_factor=max(
            estimation.rsd_filter_factor(1.0 / float(d.t_s[1] - d.t_s[0]), config.processing.torque_cutoff_hz,
                                         config.processing.filter_order) for d in processed
        ),
        sources=tuple(rec.source for rec in recordings),
        motion=motion_summary(processed),
        notes=tuple(notes),
        timings_s={k: round(v, 4) for k, v in timings.items()},
    )
    checks = check_sets(metrics.residual_rms_nm, np.sqrt(np.mean(measured**2, axis=0)), robot.joint_names,
                        {"physical": physical.violations} if physical is not None else None)
    if physical_failure is not None:
        checks["physical"] = SetCheck(False, (physical_failure,))
    warnings = [f"{rec.source}: {w}" for rec, d in zip(recordings, processed, strict=True) for w in d.warnings]
    warnings += [f for c in checks.values() for f in c.failures]
    say(progress, f"identified {len(columns)} of {len(names)} base parameters, {len(essential_set.names)} essential; "
                   f"cond(Yb) = {metrics.condition_number:.4g}")
    return Identification(
        setup=setup,
        friction_terms=robot.friction,
        columns=base.independent,
        base=ParameterSet(names, values, rsd),
        base_expressions=base.expressions,
        unidentified=unidentified,
        essential=essential_set,
        eliminated=tuple(names[j] for j in essential.eliminated),
        friction=_friction(names, robot.joint_names, values, stribeck, stribeck_rms),
        metrics=metrics,
        config=config,
        traces=Traces(concatenated_times([d.t_s for d in processed]), measured,
                      {s: predicted[s] + friction_all for s in predicted}),
        physical=physical,
        checks=checks,
        warnings=tuple(warnings),
    )


def retrieve_physical(
    robot: RobotModel,
    base: BaseParameters,
    setup: RobotSetup,
    yb: np.ndarray,
    tau_nm: np.ndarray,
    target_columns: np.ndarray,
    config: PhysicalConfig,
) -> Physical:
    """Physical parameters whose `target_columns` base parameters best explain τ (Xu et al. 2020, eq. 15).

    `yb` (K, n, b) and `tau_nm` (K, n) are the processed, filtered identification data. Links that carry known
    fixed links (a gripper in the URDF) keep those parts' inertials; their own part is kept consistent too.
    """
    w = yb[:, :, target_columns].reshape(-1, len(target_columns))
    tau = tau_nm.reshape(-1)
    target_from_pi = base.beta_from_pi[target_columns]
    with open(setup.urdf_path) as f:
        lumped = lumped_known_parts(robot, f.read())
    bounds = default_bounds(
        robot,
        mass_factor=config.mass_factor,
        com_margin_m=config.com_margin_m,
        inertia_factor=config.inertia_factor,
        total_mass_factor=config.total_mass_factor,
        fixed_inertials=lumped,
        max_inertia_ratio=config.max_inertia_ratio,
        max_off_diagonal_ratio=config.max_off_diagonal_ratio,
        orderings=config.orderings,
    )
    det = determination(robot, target_from_pi, nominal_parameters(robot))
    bounds = hold_friction(robot, bounds, det)
    if config.method == "lmi":
        result = retrieve_lmi(robot, w, tau, target_from_pi, bounds, config.regularizer,
                              config.weight(config.regularizer))
    else:
        result = retrieve_multistart(robot, w, tau, target_from_pi, bounds, config.starts, config.seed,
                                     weight=config.weight("euclidean"))
    return Physical(
        method=result.method,
        link_names=robot.link_names,
        links=result.links,
        standard_names=tuple(parameter_names(robot)),
        standard_values=result.pi,
        base_values=base.values(result.pi),
        status=det.status,
        held_values=det.held_values,
        residual_norm_nm=result.residual_norm_nm,
        unconstrained_residual_norm_nm=result.unconstrained_residual_norm_nm,
        target=config.target,
        violations=result.violations,
        wall_time_s=result.wall_time_s,
        notes=result.notes,
    )


def _unidentified(robot, independent, processed, system, names, weights, processing, setup) -> dict[str, str]:
    """Base parameters the data do not identify, with the reason (estimation.unexcited_reasons).

    When a joint does not move, its noisy derivatives would make columns look independent that carry no
    information; the rank test then runs on the same samples with that joint held exactly still.
    """
    q_all = np.concatenate([d.q_rad for d in processed])
    dq_all = np.concatenate([d.dq_rad_s for d in processed])
    ddq_all = np.concatenate([d.ddq_rad_s2 for d in processed])
    static = estimation.static_joints(q_all)
    if static.any():
        parts = []
        for data in processed:
            yb = regressor(robot, *_sanitised_motion(data, static))[..., independent]
            parts.append(torque_side(yb, data, processing, setup.torque_filter_time_constant_s))
        yb_static = np.concatenate(parts)
        system = estimation.reduce_system(yb_static, np.zeros(yb_static.shape[:2]), weights)
    reasons = estimation.unexcited_reasons(system, names, q_all, dq_all, ddq_all)
    return {names[j]: reason for j, reason in sorted(reasons.items())}


def _replaced_by_stribeck(names: Sequence[str], joint_names: Sequence[str], stribeck: np.ndarray | None) -> set[int]:
    """Base-parameter indices of the viscous and Coulomb terms of joints with a Stribeck model."""
    if stribeck is None:
        return set()
    fitted = [j + 1 for j in range(len(joint_names)) if not np.isnan(stribeck[j]).any()]
    wanted = {f"{term}{j}" for j in fitted for term in ("FV", "FC")}
    return {i for i, name in enumerate(names) if name in wanted}


def _weights(method, processed, yb_parts, tau_parts, ols_system, columns, processing):
    """Per-recording (1, n) WLS weights 1/σ² of the torque each sample carries (normalised), noise estimates,
    and notes. Periodic data: σ² = period-to-period variance / number of periods (Wu et al. 2012), times the share
    of white noise the torque low-pass keeps; otherwise the per-joint variance of the (filtered) OLS residual
    (the two-step MLE of Jia et al. 2019). Both are then variances of the filtered torque, comparable across
    recordings."""
    n = tau_parts[0].shape[1]
    noise = [d.noise_var_nm2 for d in processed]
    if method == "ols":
        return [np.ones((1, n)) for _ in processed], noise, ["OLS: every joint weighted equally"]
    ols_values = None
    variances, sources = [], []
    for data, yb, tau in zip(processed, yb_parts, tau_parts, strict=True):
        if data.noise_var_nm2 is not None and data.n_periods >= 2 and np.all(data.noise_var_nm2 > 0.0):
            fs_hz = 1.0 / float(data.t_s[1] - data.t_s[0])
            kept = estimation.rsd_filter_factor(fs_hz, processing.torque_cutoff_hz, processing.filter_order) ** -2
            variances.append(np.asarray(data.noise_var_nm2) / data.n_periods * kept)
            sources.append("period-to-period scatter / periods, times the share the torque filter keeps")
        else:
            if ols_values is None:
                ols_values = np.zeros(yb.shape[-1])
                ols_values[columns] = estimation.fit_columns(ols_system, columns).values
            variances.append(np.maximum(estimation.residual_noise_variance(yb, tau, ols_values), 1e-12))
            sources.append("OLS residual")
    inverse = [1.0 / v for v in variances]
    mean = float(np.mean(np.concatenate(inverse)))
    weights = [(w / mean)[None, :] for w in inverse]
    notes = [f"WLS weights per joint {np.array2string(w[0], precision=3)} from the {s}" for w, s in
             zip(weights, sources, strict=True)]
    return weights, noise, notes


def _friction(names, joint_names, values, stribeck, stribeck_rms) -> Friction:
    index = {name: i for i, name in enumerate(names)}

    def term(prefix: str) -> np.ndarray:
        return np.array([values[index[f"{prefix}{j}"]] if f"{prefix}{j}" in index else np.nan
                         for j in range(1, len(joint_names) + 1)])

    return Friction(tuple(joint_names), term("FV"), term("FC"), term("FO"), stribeck, stribeck_rms)
