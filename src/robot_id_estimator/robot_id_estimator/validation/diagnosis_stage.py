"""The diagnosis stage: when the base set explains its data less well than it should, or predicts held-out data
far worse, or a joint's friction gives the motion energy, the likely mistake in the data (validation.diagnosis). In:
the identification's stages' results. Out: the Diagnosis (a warning line; a data mistake rejects the model), or
None."""

from __future__ import annotations

import numpy as np

from robot_id_estimator.estimation import least_squares as estimation
from robot_id_estimator.estimation.base_stage import BaseEstimate
from robot_id_estimator.processing.regression_data import RegressionData
from robot_id_estimator.progress import Progress, say
from robot_id_estimator.results import Metrics
from robot_id_estimator.results.held_out import HeldOut
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_estimator.settings import EstimatorConfig
from robot_id_estimator.validation.diagnosis import (
    POOR_FRACTION,
    Diagnosis,
    diagnose,
    diagnosis_problem,
    energy_giving,
    matters,
    poor_generalisation,
)
from robot_id_model.base_parameters import BaseParameters
from robot_id_model.robot_model import RobotModel


def diagnosis_of(setup: RobotSetup, robot: RobotModel, base: BaseParameters, config: EstimatorConfig,
                 data: RegressionData, estimate: BaseEstimate, essential: estimation.Essential, metrics: Metrics,
                 held_out: HeldOut, torque_rms_nm: np.ndarray, progress: Progress) -> Diagnosis | None:
    """The likely mistake behind a misfit, else why the base set generalises poorly (validation.diagnosis), else
    None."""
    return (_diagnosis(setup, robot, base, config, data, estimate, metrics, torque_rms_nm, held_out, progress)
            or poor_generalisation(np.asarray(metrics.residual_rms_nm["base"]), held_out.rms_nm("base"),
                                   _periods_noise_nm(data, metrics), robot.joint_names, estimate.rsd_percent,
                                   essential.fit.rsd_percent, _recorded_seconds(data), metrics.condition_number,
                                   torque_rms_nm))


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
               held_out: HeldOut, progress: Progress) -> Diagnosis | None:
    """The likely mistake behind a misfit (validation.diagnosis): every one when the base set leaves more than
    POOR_FRACTION of some joint's torque RMS unexplained or predicts held-out data far worse than its training data
    by an error that matters (the base set can take up a flipped sign on the data it is fitted to), and a joint's
    torque sign and encoder when its friction gives energy."""
    residual = np.asarray(metrics.residual_rms_nm["base"])
    poor = residual > POOR_FRACTION * torque_rms_nm
    generalising_poorly = matters(residual, held_out.rms_nm("base"), torque_rms_nm)
    energy = energy_giving(base.names, estimate.values, estimate.rsd_percent, robot.n_joints)
    if not (poor.any() or generalising_poorly.any() or energy.any()):
        return None
    say(progress, "diagnosis: the model explains the data less well than it should; trying the usual mistakes")
    tau = np.split(data.tau_nm, np.cumsum([len(d.t_s) for d in data.processed])[:-1])
    # against the sign law: a law chosen on these data can take up a mistake (a filter's lag looks like presliding)
    problem = diagnosis_problem(setup.model(config.friction), base.independent, estimate.columns, config.processing,
                                setup.torque_filter_time_constant_s, data.processed, tau)
    flagged = next(mask for mask in (poor, generalising_poorly, energy) if mask.any())
    return diagnose(problem, robot.joint_names, flagged, bool(poor.any() or generalising_poorly.any()),
                    bool(poor.any()), energy)
