"""The payload's share of the measured torque, with its regressor, from recordings with the load.

In: recordings with the load and the arm's model without it (ArmModel: an identification's best set, the URDF's
rigid bodies, or an identification of baseline recordings of the same excitation without the load, with what it
misses on them). Out: PayloadSamples, τ_load = τ − τ_arm(q, dq, ddq) (− the baseline's residual at the same phase),
every model-side signal filtered exactly as the torque it is compared with (processing.model_side.torque_side). The
arm's torque is predicted on the loaded run's own motion: a robot tracks differently with a load (the simulated
Panda's joint 7 by 28 mrad RMS with 1.7 kg), so the recordings are not subtracted sample by sample alone
(payload.baseline).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robot_id_estimator.estimation.least_squares import rsd_filter_factor
from robot_id_estimator.payload.baseline import BaselineResidual
from robot_id_estimator.processing.model_side import torque_side
from robot_id_estimator.processing.regression_data import N_FOLDS
from robot_id_estimator.processing.samples import ProcessedData, process
from robot_id_estimator.recordings.recording import Recording
from robot_id_estimator.results import Identification
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_estimator.settings import ProcessingConfig
from robot_id_estimator.stribeck_law import stribeck_model_torque
from robot_id_model.parameters import nominal_parameters
from robot_id_model.payload import payload_regressor
from robot_id_model.regressor import regressor
from robot_id_model.robot_model import RobotModel

MIN_SPEED_RAD_S = 0.1
"""A joint's equations are left out where it moves slower than this: at rest its friction is anything up to the
breakaway torque (a joint the payload excitation keeps still has none), and near a reversal the arm's friction with
the load differs from its model's and from the baseline's by more than a small load's inertial torque (the arm
reverses a little earlier or later with the load). At the arm estimator's 0.02 rad/s the simulated Panda's 0.5 kg
box came out with moments 26-37 % off (noise-free data, RSDs 9-17 %); at 0.1 rad/s within 5 %, the 1.5 and 3 kg
loads' within 11 % (benchmarks/payload.py)."""


@dataclass(frozen=True)
class ArmModel:
    """The arm without the load: τ_arm = Y(q, dq, ddq)[:, columns]·values (+ a sweep's Stribeck friction)."""

    robot: RobotModel
    columns: np.ndarray
    values: np.ndarray
    description: str
    stribeck: np.ndarray | None = None
    error_rms_nm: np.ndarray | None = None
    """(n,) its RMS error on motions it was not fitted to (an identification's held-out check); None where its error
    cancels (identified from a baseline of the same motion) or is not known (the URDF's)."""
    baseline: BaselineResidual | None = None
    """What it misses on baseline recordings of the loaded run's excitation (payload.baseline), subtracted too."""

    def torque_nm(self, data: ProcessedData) -> np.ndarray:
        y = regressor(self.robot, data.q_rad, data.dq_rad_s, data.ddq_rad_s2)[..., self.columns]
        return y @ self.values + stribeck_model_torque(self.stribeck, data.dq_rad_s)


def identified_arm(result: Identification, description: str) -> ArmModel:
    """The arm as an identification has it: its best set on held-out data, with its friction."""
    best = result.best_set
    return ArmModel(result.robot_model(), result.columns, result.parameter_values(best), f"{description} ({best} set)",
                    result.friction.stribeck, result.held_out.rms_nm(best) if result.held_out is not None else None)


def urdf_arm(setup: RobotSetup) -> ArmModel:
    """The URDF's rigid bodies, no friction."""
    robot = setup.model(())
    return ArmModel(robot, np.arange(robot.n_params), nominal_parameters(robot), "the URDF's arm (no friction)")


@dataclass(frozen=True)
class PayloadSamples:
    """Per sample the load's regressor and its share of the torque, per joint the noise of one sample."""

    y: np.ndarray
    """(K, n, 10) model side of the load's standard parameters in its frame."""
    tau_nm: np.ndarray
    """(K, n) the load's share of the measured torque."""
    noise_std_nm: np.ndarray | None
    """(n,) standard deviation of one averaged sample from the period-to-period scatter; None: not periodic."""
    blocks: np.ndarray
    """(K,) the time block (of N_FOLDS per recording, as the arm's self-check) each sample belongs to."""
    rsd_factor: float
    """How much eq. (7) understates standard deviations of low-pass filtered samples (rsd_filter_factor)."""
    arm_error_rms_nm: np.ndarray | None
    """(n,) the arm model's error on motions it was not fitted to (ArmModel.error_rms_nm)."""
    notes: tuple[str, ...]


def payload_samples(arm: ArmModel, frame: str, recordings: Sequence[Recording], processing: ProcessingConfig,
                    time_constant_s: float, min_speed_rad_s: float = MIN_SPEED_RAD_S) -> PayloadSamples:
    """The load's samples from every recording with it, against `arm`. A joint's equations where it moves slower
    than `min_speed_rad_s` are left out (zero rows; MIN_SPEED_RAD_S)."""
    parts, notes, factors = [], [], []
    for i, rec in enumerate(recordings):
        data = process(rec, processing)
        factors.append(rsd_filter_factor(1.0 / float(data.t_s[1] - data.t_s[0]), processing.torque_cutoff_hz,
                                         processing.filter_order))
        y = torque_side(payload_regressor(arm.robot, frame, data.q_rad, data.dq_rad_s, data.ddq_rad_s2), data,
                        processing, time_constant_s)
        tau = data.tau_nm - torque_side(arm.torque_nm(data), data, processing, time_constant_s)
        noise_var = None if data.noise_var_nm2 is None or data.n_periods < 2 else data.noise_var_nm2 / data.n_periods
        if arm.baseline is not None:
            tau = tau - arm.baseline.at_phase_of(data, rec)
            baseline_var = arm.baseline.noise_var_nm2
            noise_var = None if noise_var is None or baseline_var is None else noise_var + baseline_var
        moving = np.abs(data.dq_rad_s) >= min_speed_rad_s
        y, tau = y * moving[:, :, None], tau * moving
        noise = None if noise_var is None else np.sqrt(noise_var)
        parts.append((y, tau, noise, np.arange(len(tau)) * N_FOLDS // len(tau) + N_FOLDS * i))
        notes.extend(data.notes)
    noises = [p[2] for p in parts]
    noise = None if any(n is None for n in noises) else np.sqrt(np.mean(np.square(noises), axis=0))
    return PayloadSamples(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]), noise,
                          np.concatenate([p[3] for p in parts]), max(factors), arm.error_rms_nm, tuple(notes))
