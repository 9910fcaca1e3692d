"""The first-order filter a robot runs on its measured joint torques before publishing them (the LBR's 16 ms; the
robot config's torque_filter_time_constant_s): what the estimator applies to its model side, and what synthetic
data and the checks against the simulator's truth pass their torques through, with the same arithmetic."""

from __future__ import annotations

import math

import numpy as np


def first_order_lowpass(x: np.ndarray, dt_s: float, time_constant_s: float) -> np.ndarray:
    """The LBR's measured-torque filter 1/(1 + τs), causal along axis 0 for any trailing shape (K, ...), as the
    robot runs it on its controller's fast cycle and publishes samples of: the exact response of the continuous
    filter to a signal linear between samples (first-order-hold discretisation, Franklin, Powell and Workman 1998,
    sec. 6.3.2), y_k = a·y_{k−1} + b0·x_k + b1·x_{k−1} with a = exp(−dt/τ), b0 = 1 − c, b1 = c − a,
    c = (τ/dt)(1 − a); starting at rest on x_0 (y_0 = x_0). A filter of the samples themselves (y_k = α·x_k +
    (1 − α)·y_{k−1}) delays by 1/(exp(dt/τ) − 1) samples, not τ: 11.5 ms instead of 16 at 100 Hz.

    Applied to regressor columns (K, n, p) it makes the model side match torques the robot filtered before
    publishing. A time constant of 0 returns x unchanged."""
    import scipy.signal  # here, not at the top: the command lines start without scipy

    x = np.asarray(x, dtype=float)
    if time_constant_s == 0.0:
        return x.copy()
    if not time_constant_s > 0.0 or not dt_s > 0.0:
        raise ValueError(f"time constant ({time_constant_s} s) and sample time ({dt_s} s) must be positive")
    a = math.exp(-dt_s / time_constant_s)
    c = -time_constant_s / dt_s * math.expm1(-dt_s / time_constant_s)
    b, den = [1.0 - c, c - a], [1.0, -a]
    initial = scipy.signal.lfilter_zi(b, den).reshape((1,) + (1,) * (x.ndim - 1)) * x[:1]
    return scipy.signal.lfilter(b, den, x, axis=0, zi=initial)[0]
