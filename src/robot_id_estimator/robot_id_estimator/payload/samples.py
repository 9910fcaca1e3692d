"""The payload's share of the measured torque, with its regressor, from recordings with the load.

In: recordings with the load; the arm's model (identified or the URDF's standard parameters, friction included) or
recordings of the same excitation without the load. Out: PayloadSamples, every model-side signal filtered exactly as
the torque it is compared with (processing.model_side.torque_side).

- Arm model: τ_load = τ − Y_arm·π_arm, the load's torque as far as the arm's model is right.
- Baseline: τ_load = τ_with − τ_without on the same excitation (period-averaged), the arm's own terms cancel
  whatever their model; the two recordings must follow the same motion (checked).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robot_id_estimator.estimation.least_squares import rsd_filter_factor
from robot_id_estimator.processing.model_side import torque_side
from robot_id_estimator.processing.samples import ProcessedData, ProcessingConfig, process
from robot_id_estimator.recordings.recording import DataError, Recording
from robot_id_model.payload import payload_regressor
from robot_id_model.regressor import regressor
from robot_id_model.robot_model import RobotModel

SAME_MOTION_RAD = 0.01
"""A baseline's averaged period may differ from the loaded one's by at most this RMS [rad] on any joint."""


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
    """(K,) the time block (of N_BLOCKS per recording) each sample belongs to, for cross-validation."""
    rsd_factor: float
    """How much eq. (7) understates standard deviations of low-pass filtered samples (rsd_filter_factor)."""
    notes: tuple[str, ...]


N_BLOCKS = 5


def payload_samples(robot: RobotModel, frame: str, recordings: Sequence[Recording], processing: ProcessingConfig,
                    time_constant_s: float, arm_pi: np.ndarray | None = None,
                    baseline: Sequence[Recording] = ()) -> PayloadSamples:
    """The load's samples from every recording: against `arm_pi` (the arm model, standard parameters of `robot`
    with its friction) or against `baseline` (one recording without the load per recording with it)."""
    if (arm_pi is None) == (not baseline):
        raise ValueError("give the arm's parameters or baseline recordings, not both or neither")
    if baseline and len(baseline) != len(recordings):
        raise DataError(f"{len(recordings)} recordings with the load and {len(baseline)} without: give one "
                        "baseline per recording, of the same excitation")
    parts, notes, factors = [], [], []
    for i, rec in enumerate(recordings):
        data = process(rec, processing)
        factors.append(rsd_filter_factor(1.0 / float(data.t_s[1] - data.t_s[0]), processing.torque_cutoff_hz,
                                         processing.filter_order))
        y = torque_side(payload_regressor(robot, frame, data.q_rad, data.dq_rad_s, data.ddq_rad_s2), data,
                        processing, time_constant_s)
        if baseline:
            base = process(baseline[i], processing)
            _check_same_motion(data, base)
            tau = data.tau_nm - base.tau_nm
            noise = _noise_std(data, base)
        else:
            arm = regressor(robot, data.q_rad, data.dq_rad_s, data.ddq_rad_s2) @ arm_pi
            tau = data.tau_nm - torque_side(arm, data, processing, time_constant_s)
            noise = _noise_std(data)
        parts.append((y, tau, noise, np.arange(len(tau)) * N_BLOCKS // len(tau) + N_BLOCKS * i))
        notes.extend(data.notes)
    noises = [p[2] for p in parts]
    noise = None if any(n is None for n in noises) else np.sqrt(np.mean(np.square(noises), axis=0))
    return PayloadSamples(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]), noise,
                          np.concatenate([p[3] for p in parts]), max(factors), tuple(notes))


def _noise_std(*data: ProcessedData) -> np.ndarray | None:
    """One averaged sample's noise, the sum of each recording's when a difference of recordings is taken."""
    if any(d.noise_var_nm2 is None or d.n_periods < 2 for d in data):
        return None
    return np.sqrt(sum(d.noise_var_nm2 / d.n_periods for d in data))


def _check_same_motion(loaded: ProcessedData, base: ProcessedData) -> None:
    """DataError unless the baseline's averaged period is the loaded one's motion, sample for sample."""
    if loaded.q_rad.shape != base.q_rad.shape:
        raise DataError(f"the baseline has {len(base.q_rad)} samples per period and the recording with the load "
                        f"{len(loaded.q_rad)}: record both with the same excitation and rate")
    rms = np.sqrt(np.mean((loaded.q_rad - base.q_rad) ** 2, axis=0))
    if rms.max() > SAME_MOTION_RAD:
        worst = loaded.joint_names[int(rms.argmax())]
        raise DataError(f"the baseline does not follow the same motion as the recording with the load ({worst} "
                        f"differs by {rms.max():.3g} rad RMS, at most {SAME_MOTION_RAD} allowed): record both with "
                        "the same excitation from its start")
