"""The model side filtered like the torque it is compared with (parallel filtering). In: model-side signals
(K, ...) and the processed data's time axis. Out: the same signals through the robot's torque filter and the
processing's low-pass."""

from __future__ import annotations

import math

import numpy as np

from robot_id_estimator.processing.samples import (
    ProcessedData,
    zero_phase_lowpass,
    zero_phase_lowpass_periodic,
)
from robot_id_estimator.settings import ProcessingConfig
from robot_id_model.torque_filter import first_order_lowpass

FILTER_SETTLE_TIME_CONSTANTS = 20
"""A periodic signal runs through the robot's first-order torque filter for this many time constants before
the kept period, so the result is its periodic steady state (transient below e^-20)."""


def robot_filtered(x: np.ndarray, data: ProcessedData, time_constant_s: float) -> np.ndarray:
    """Apply the robot's first-order torque filter (first_order_lowpass) along time to model-side
    signals (K, ...) so that they match the filtered torque the robot published.

    For periodic data (one averaged period) the filter's periodic steady state is returned (it runs through
    FILTER_SETTLE_TIME_CONSTANTS of the period's own samples before the period); otherwise the
    filter runs causally, as on the robot, from the state it has on the signal's linear continuation before the
    first sample (FILTER_SETTLE_TIME_CONSTANTS of it): the robot's filter was running before the recording began,
    and starting it at rest on the first sample would leave a lag of τ·dx/dt there.
    """
    if time_constant_s == 0.0:
        return x
    dt_s = float(data.t_s[1] - data.t_s[0])
    lead = min(math.ceil(FILTER_SETTLE_TIME_CONSTANTS * time_constant_s / dt_s), 100_000)
    if data.n_periods == 0:
        slope = x[1] - x[0] if len(x) > 1 else np.zeros_like(x[0])
        before = x[0] + slope * np.arange(-lead, 0).reshape((-1,) + (1,) * (x.ndim - 1))
    else:  # the period's own samples before it (as many periods over as the lead needs)
        before = np.take(x, np.arange(-lead, 0) % len(x), axis=0)
    return first_order_lowpass(np.concatenate([before, x]), dt_s, time_constant_s)[lead:]


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
