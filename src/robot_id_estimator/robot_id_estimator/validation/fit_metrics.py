"""Every parameter set against the data it was fitted to: the condition of the regressor (Xu et al. 2020, eq. 9),
each set's residual, the torque noise and joint weights, the motion (results.Metrics)."""

from __future__ import annotations

import numpy as np

from robot_id_estimator.estimation import least_squares as estimation
from robot_id_estimator.estimation.base_stage import BaseEstimate
from robot_id_estimator.processing.motion_summary import motion_summary
from robot_id_estimator.processing.reduction import weighted_rows
from robot_id_estimator.processing.regression_data import RegressionData
from robot_id_estimator.results import Metrics
from robot_id_estimator.settings import EstimatorConfig


def residual_rms_nm(data: RegressionData, values: np.ndarray) -> list[float]:
    """Per-joint RMS of τ − Yb·πb over the samples of its equations, from the reduced regression
    (reduction.JointBlocks)."""
    residual_sq = sum(b.residual_sq_nm2(values) for b in data.blocks)
    return list(map(float, np.sqrt(residual_sq / np.maximum(sum(b.n_rows for b in data.blocks), 1))))


def identification_metrics(config: EstimatorConfig, data: RegressionData, estimate: BaseEstimate,
                           essential: estimation.Essential, values: dict[str, np.ndarray]) -> Metrics:
    """The fit's metrics: the regressor's condition, each set's residual, the noise and weights, the motion (the
    notes and the stages' wall times are the pipeline's to add)."""
    processing = config.processing
    rows, _ = weighted_rows(data.blocks, [np.ones(data.tau_nm.shape[1])] * len(data.blocks))
    return Metrics(
        condition_number=estimation.condition_number(rows[:, :-1], estimate.columns),
        condition_number_scaled=estimation.condition_number(rows[:, :-1], estimate.columns, scaled=True),
        n_samples=len(data.tau_nm),
        n_periods=tuple(d.n_periods for d in data.processed),
        noise_var_nm2=tuple(None if d.noise_var_nm2 is None else list(map(float, d.noise_var_nm2))
                            for d in data.processed),
        joint_weights=tuple(list(map(float, w)) for w in estimate.joint_weights),
        residual_rms_nm={s: residual_rms_nm(data, v) for s, v in values.items()},
        residual_variance={"base": estimate.fit.residual_variance, "essential": essential.fit.residual_variance},
        rsd_filter_factor=max(
            estimation.rsd_filter_factor(1.0 / float(d.t_s[1] - d.t_s[0]), processing.torque_cutoff_hz,
                                         processing.filter_order) for d in data.processed
        ),
        sources=data.sources,
        motion=motion_summary(data.processed),
        notes=(),
        timings_s={},
    )
