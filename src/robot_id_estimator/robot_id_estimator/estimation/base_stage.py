"""The estimation stage: which base parameters the data identify, their WLS or OLS estimate with RSD
(Xu et al. 2020, eqs. 6 and 7; the MLE of Jia et al. 2019 and Wu et al. 2012 as WLS), and the noise behind it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from robot_id_estimator.estimation import least_squares as estimation
from robot_id_estimator.processing.motion_summary import static_joints
from robot_id_estimator.processing.reduction import weighted_rows
from robot_id_estimator.processing.regression_data import RegressionData, min_speeds_rad_s
from robot_id_estimator.processing.regression_stream import stream_recording
from robot_id_estimator.processing.samples import ProcessedData
from robot_id_estimator.recordings.recording import DataError
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_estimator.settings import EstimatorConfig, ProcessingConfig
from robot_id_model.base_parameters import BaseParameters
from robot_id_model.robot_model import RobotModel


@dataclass(frozen=True)
class BaseEstimate:
    """The base parameters estimated from a RegressionData."""

    columns: np.ndarray
    """Base-parameter indices that were estimated."""
    values: np.ndarray
    """Over all base parameters; NaN where not estimated."""
    rsd_percent: np.ndarray
    fit: estimation.Fit
    system: estimation.ReducedSystem
    """The (weighted) reduced least-squares problem, for the essential and physical parameters."""
    unidentified: dict[str, str]
    joint_weights: tuple[np.ndarray, ...]
    """Per recording, the (n,) weight of each joint's equations: WLS weights, or ones for OLS."""
    notes: tuple[str, ...]


@dataclass(frozen=True)
class _Weights:
    per_recording: list[np.ndarray]
    notes: list[str]


def estimate_base(
    data: RegressionData,
    robot: RobotModel,
    base: BaseParameters,
    setup: RobotSetup,
    config: EstimatorConfig,
    replaced: set[int] = frozenset(),
) -> BaseEstimate:
    """Estimate the base parameters the data identify, except `replaced` (terms a Stribeck fit replaces)."""
    names = base.names
    ones = np.ones(robot.n_joints)
    ols_system = estimation.reduce_system(*weighted_rows(data.blocks, [ones] * len(data.blocks)))
    unidentified = _unidentified(robot, base, data.processed, ols_system, config, setup)
    columns = np.array([j for j in range(len(names)) if names[j] not in unidentified and j not in replaced],
                       dtype=int)
    if not len(columns):
        raise DataError(f"the data identify none of the {len(names)} base parameters: "
                        + "; ".join(unidentified.values()))
    notes = ([f"{[names[j] for j in sorted(replaced)]} replaced by the Stribeck friction of the sweeps"]
             if replaced else [])
    weights = _weights(config.method, data, ols_system, columns, config.processing)
    system = (estimation.reduce_system(*weighted_rows(data.blocks, weights.per_recording))
              if config.method == "wls" else ols_system)
    columns, unidentified = _weighted_identifiable(system, columns, names, unidentified)
    fit = estimation.fit_columns(system, columns)
    values, rsd = np.full(len(names), np.nan), np.full(len(names), np.nan)
    values[columns], rsd[columns] = fit.values, fit.rsd_percent
    return BaseEstimate(
        columns=columns, values=values, rsd_percent=rsd, fit=fit, system=system, unidentified=unidentified,
        joint_weights=tuple(weights.per_recording),
        notes=tuple(list(unidentified.values()) + notes + weights.notes),
    )


def _sanitised_motion(data: ProcessedData, static: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Motion with the joints that do not move held exactly still, for the structural rank test."""
    q, dq, ddq = data.q_rad.copy(), data.dq_rad_s.copy(), data.ddq_rad_s2.copy()
    q[:, static] = np.mean(data.q_rad[:, static], axis=0)
    dq[:, static] = 0.0
    ddq[:, static] = 0.0
    return q, dq, ddq


def _unidentified(
    robot: RobotModel,
    base: BaseParameters,
    processed: Sequence[ProcessedData],
    system: estimation.ReducedSystem,
    config: EstimatorConfig,
    setup: RobotSetup,
) -> dict[str, str]:
    """Base parameters the data do not identify, with the reason (estimation.unexcited_reasons).

    When a joint does not move, its noisy derivatives would make columns look independent that carry no
    information; the rank test then runs on the same samples with that joint held exactly still, each joint's
    equations where the estimation has them (regression_data.min_speeds_rad_s).
    """
    q_all = np.concatenate([d.q_rad for d in processed])
    dq_all = np.concatenate([d.dq_rad_s for d in processed])
    ddq_all = np.concatenate([d.ddq_rad_s2 for d in processed])
    static = static_joints(q_all)
    if static.any():
        blocks = []
        min_speeds = min_speeds_rad_s(processed, config.min_speed_rad_s)
        for data in processed:
            q, dq, ddq = _sanitised_motion(data, static)
            still = replace(data, q_rad=q, dq_rad_s=dq, ddq_rad_s2=ddq)
            blocks.append(stream_recording(robot, base.independent, still, np.zeros_like(q), np.zeros(base.n_base),
                                           config.processing, setup.torque_filter_time_constant_s,
                                           min_speeds).blocks)
        system = estimation.reduce_system(*weighted_rows(blocks, [np.ones(robot.n_joints)] * len(blocks)))
    reasons = estimation.unexcited_reasons(system, base.names, q_all, dq_all, ddq_all)
    return {base.names[j]: reason for j, reason in sorted(reasons.items())}


def _weights(
    method: str,
    data: RegressionData,
    ols_system: estimation.ReducedSystem,
    columns: np.ndarray,
    processing: ProcessingConfig,
) -> _Weights:
    """Per-recording (n,) WLS weights 1/σ² of the torque each sample carries (normalised), and notes.

    Periodic data: σ² = period-to-period variance / number of periods (Wu et al. 2012), times the share of white
    noise the torque low-pass keeps; otherwise the per-joint variance of the (filtered) OLS residual (the two-step
    MLE of Jia et al. 2019). Both are then variances of the filtered torque, comparable across recordings.
    """
    n = data.tau_nm.shape[1]
    if method == "ols":
        return _Weights([np.ones(n) for _ in data.processed], ["OLS: every joint weighted equally"])
    ols_values = None
    variances, sources = [], []
    for processed, blocks in zip(data.processed, data.blocks, strict=True):
        noise = processed.noise_var_nm2
        if noise is not None and processed.n_periods >= 2 and np.all(noise > 0.0):
            fs_hz = 1.0 / float(processed.t_s[1] - processed.t_s[0])
            kept = estimation.rsd_filter_factor(fs_hz, processing.torque_cutoff_hz, processing.filter_order) ** -2
            variances.append(np.asarray(noise) / processed.n_periods * kept)
            sources.append("period-to-period scatter / periods, times the share the torque filter keeps")
        else:
            if ols_values is None:
                ols_values = np.zeros(len(ols_system.scale))
                ols_values[columns] = estimation.fit_columns(ols_system, columns).values
            variances.append(np.maximum(blocks.residual_sq_nm2(ols_values) / np.maximum(blocks.n_rows, 1), 1e-12))
            sources.append("OLS residual")
    inverse = [1.0 / v for v in variances]
    mean = float(np.mean(np.concatenate(inverse)))
    weights = [w / mean for w in inverse]
    notes = [f"WLS weights per joint {np.array2string(w, precision=3)} from the {s}" for w, s in
             zip(weights, sources, strict=True)]
    return _Weights(weights, notes)


def _weighted_identifiable(system: estimation.ReducedSystem, columns: np.ndarray, names: Sequence[str],
                           unidentified: dict[str, str]) -> tuple[np.ndarray, dict[str, str]]:
    """The columns the weighted system still identifies: a joint whose noise estimate is huge (it sticks, it barely
    moves) weighs its equations near zero, and the parameters only they determine are then not identified."""
    kept = set(estimation.identifiable_columns(system).tolist())
    lost = [c for c in columns if c not in kept]
    if not lost:
        return columns, unidentified
    reason = ("the weighted data do not identify it: the joints whose equations determine it weigh next to nothing "
              "(their torque noise, from the periods' scatter, is huge: they stick or barely move)")
    return (np.array([c for c in columns if c in kept], dtype=int),
            {**unidentified, **{names[c]: f"{names[c]}: {reason}" for c in lost}})
