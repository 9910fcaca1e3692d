"""What identification and validation share: the model side filtered like the torque it is compared with,
the Stribeck friction of sweeps, and the bookkeeping of progress, joints and time axes."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from robot_id_estimator.friction import stribeck_torque
from robot_id_estimator.processing import (
    ProcessedData,
    ProcessingConfig,
    first_order_lowpass,
    zero_phase_lowpass,
    zero_phase_lowpass_periodic,
)

Progress = Callable[[str], None] | None

FILTER_SETTLE_TIME_CONSTANTS = 20
"""A periodic signal runs through the robot's first-order torque filter for this many time constants before
the kept period, so the result is its periodic steady state (transient below e^-20)."""


def say(progress: Progress, text: str) -> None:
    if progress is not None:
        progress(text)


def robot_filtered(x: np.ndarray, data: ProcessedData, time_constant_s: float) -> np.ndarray:
    """Apply the robot's first-order torque filter (processing.first_order_lowpass) along time to model-side
    signals (K, ...) so that they match the filtered torque the robot published.

    For periodic data (one averaged period) the filter's periodic steady state is returned; otherwise the
    filter runs causally from the first sample, as on the robot.
    """
    if time_constant_s == 0.0:
        return x
    dt_s = float(data.t_s[1] - data.t_s[0])
    if data.n_periods == 0:
        return first_order_lowpass(x, dt_s, time_constant_s)
    repeats = math.ceil(FILTER_SETTLE_TIME_CONSTANTS * time_constant_s / (dt_s * len(x)))
    return first_order_lowpass(np.concatenate([x] * (repeats + 1)), dt_s, time_constant_s)[-len(x):]


def torque_side(x: np.ndarray, data: ProcessedData, processing: ProcessingConfig, time_constant_s: float) -> np.ndarray:
    """Model-side signals (K, ...) filtered exactly as the torque they are compared with: the robot's filter,
    then the processing's zero-phase Butterworth (periodic or not). Filtering both sides alike ("parallel
    filtering") keeps what the low-pass removes from the torque, such as the steps of Coulomb friction,
    out of the residual."""
    fs_hz = 1.0 / float(data.t_s[1] - data.t_s[0])
    x = robot_filtered(x, data, time_constant_s)
    if data.n_periods == 0:
        return zero_phase_lowpass(x, fs_hz, processing.torque_cutoff_hz, processing.filter_order)
    return zero_phase_lowpass_periodic(x, fs_hz, processing.torque_cutoff_hz, processing.filter_order)


def stribeck_model_torque(coefficients: np.ndarray | None, dq_rad_s: np.ndarray) -> np.ndarray:
    """Stribeck friction of the joints that have a fit (zero for the others)."""
    if coefficients is None:
        return np.zeros_like(dq_rad_s)
    fitted = ~np.isnan(coefficients).any(axis=1)
    tau = np.zeros_like(dq_rad_s)
    tau[:, fitted] = stribeck_torque(dq_rad_s[:, fitted], coefficients[fitted])
    return tau


def concatenated_times(times: Sequence[np.ndarray]) -> np.ndarray:
    """One time axis for several recordings, each continuing where the previous one ended."""
    out, offset = [], 0.0
    for t in times:
        shifted = t - t[0] + offset
        out.append(shifted)
        offset = shifted[-1] + (t[1] - t[0] if len(t) > 1 else 0.0)
    return np.concatenate(out)
