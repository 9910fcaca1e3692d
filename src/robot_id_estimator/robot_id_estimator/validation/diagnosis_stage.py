"""The diagnosis stage: when the base set explains its data less well than it should, or predicts held-out data
far worse, the likely mistake in the data (validation.diagnosis). In: the identification's stages' results. Out:
warnings, one line each."""

from __future__ import annotations

import numpy as np

from robot_id_estimator.estimation import least_squares as estimation
from robot_id_estimator.estimation.base_stage import BaseEstimate
from robot_id_estimator.processing.regression_data import RegressionData
from robot_id_estimator.progress import Progress, say
from robot_id_estimator.results import Metrics
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_estimator.settings import EstimatorConfig
from robot_id_estimator.validation.diagnosis import (
    NOISE_FACTOR,
    POOR_FRACTION,
    diagnose,
    diagnosis_problem,
    generalises_poorly,
    poor_generalisation,
)
from robot_id_estimator.validation.held_out import HeldOut
from robot_id_model.base_parameters import BaseParameters
from robot_id_model.robot_model import RobotModel


def diagnosis_warnings(setup: RobotSetup, robot: RobotModel, base: BaseParameters, config: EstimatorConfig,
                       data: RegressionData, estimate: BaseEstimate, essential: estimation.Essential, metrics: Metrics,
                       held_out: HeldOut, torque_rms_nm: np.ndarray, progress: Progress) -> list[str]:
    """The likely mistake behind a misfit, else why the base set generalises poorly (validation.diagnosis), else
    nothing."""
    return (_diagnosis(setup, robot, base, config, data, estimate, metrics, torque_rms_nm, held_out, progress)
            or poor_generalisation(np.asarray(metrics.residual_rms_nm["base"]), held_out.rms_nm("base"),
                                   _periods_noise_nm(data, metrics), robot.joint_names, estimate.rsd_percent,
                                   essential.fit.rsd_percent, _recorded_seconds(data), metrics.condition_number))


def _periods_noise_nm(data: RegressionData, metrics: Metrics) -> np.ndarray | None:
    """(n,) the noise of the averaged, filtered torque the periods show (estimation.base_stage's noise model; the
    largest of the recordings'), None without periodic recordings of two periods or more."""
    noise = [np.sqrt(np.asarray(d.noise_var_nm2) / d.n_periods) / metrics.rsd_filter_factor
             for d in data.processed if d.noise_var_nm2 is not None and d.n_periods >= 2]
    return np.max(noise, axis=0) if noise else None


def _recorded_seconds(data: RegressionData) -> float:
    """Seconds of data behind the estimate: every period of periodic recordings."""
    return float(sum((d.t_s[-1] - d.t_s[0]) * max(d.n_periods, 1) for d in data.processed))


def _diagnosis(setup: RobotSetup, robot: RobotModel, base: BaseParameters, config: EstimatorConfig,
               data: RegressionData, estimate: BaseEstimate, metrics: Metrics, torque_rms_nm: np.ndarray,
               held_out: HeldOut, progress: Progress) -> list[str]:
    """The likely mistake behind a misfit (validation.diagnosis): every one when the base set leaves more than
    POOR_FRACTION of some joint's torque RMS unexplained, the torque filter's when more than NOISE_FACTOR × the
    noise of the averaged torque (periodic data, estimation.base_stage's noise model) or when it predicts held-out
    data far worse than its training data (a friction law can take up a filter's lag on the data it is fitted to)."""
    residual = np.asarray(metrics.residual_rms_nm["base"])
    poor = residual > POOR_FRACTION * torque_rms_nm
    noise = _periods_noise_nm(data, metrics)
    above_noise = residual > NOISE_FACTOR * noise if noise is not None else np.zeros(len(residual), bool)
    above_noise |= generalises_poorly(residual, held_out.rms_nm("base"), noise)
    if not (poor.any() or above_noise.any()):
        return []
    say(progress, "diagnosis: the model explains the data less well than it should; trying the usual mistakes")
    tau = np.split(data.tau_nm, np.cumsum([len(d.t_s) for d in data.processed])[:-1])
    # against the sign law: a law chosen on these data can take up a mistake (a filter's lag looks like presliding)
    problem = diagnosis_problem(setup.model(config.friction), base.independent, estimate.columns, config.processing,
                                setup.torque_filter_time_constant_s, data.processed, tau)
    return diagnose(problem, robot.joint_names, poor if poor.any() else above_noise, bool(poor.any()))
