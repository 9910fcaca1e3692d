"""Quintic polynomial segments between two joint states (position, velocity, acceleration)."""

from __future__ import annotations

import numpy as np

REST_TO_REST_PEAK_SPEED = 1.875
"""Peak speed of a rest-to-rest quintic over distance d and time T is 1.875·d/T ..."""
REST_TO_REST_PEAK_ACCELERATION = 10.0 / np.sqrt(3.0)
"""... and its peak acceleration 10/√3·d/T² ≈ 5.77·d/T²."""


def quintic_coefficients(
    duration_s: float,
    start: tuple[np.ndarray, np.ndarray, np.ndarray],
    end: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> np.ndarray:
    """(6, n) coefficients c_k of p(τ) = Σ c_k τ^k, τ ∈ [0, T], matching (p, v, a) at both ends."""
    p0, v0, a0 = (np.atleast_1d(np.asarray(x, dtype=float)) for x in start)
    p1, v1, a1 = (np.atleast_1d(np.asarray(x, dtype=float)) for x in end)
    t = float(duration_s)
    if not t > 0:
        raise ValueError(f"a quintic segment needs a positive duration, got {duration_s}")
    dp = p1 - p0
    c3 = (20 * dp - (8 * v1 + 12 * v0) * t - (3 * a0 - a1) * t**2) / (2 * t**3)
    c4 = (-30 * dp + (14 * v1 + 16 * v0) * t + (3 * a0 - 2 * a1) * t**2) / (2 * t**4)
    c5 = (12 * dp - 6 * (v1 + v0) * t - (a0 - a1) * t**2) / (2 * t**5)
    return np.array([p0, v0, 0.5 * a0, c3, c4, c5])


def evaluate_quintic(coefficients: np.ndarray, tau_s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Position, velocity, acceleration (K, n) of a quintic at local times τ (K,)."""
    tau = np.asarray(tau_s, dtype=float)[:, None]
    c = coefficients
    p = c[0] + tau * (c[1] + tau * (c[2] + tau * (c[3] + tau * (c[4] + tau * c[5]))))
    v = c[1] + tau * (2 * c[2] + tau * (3 * c[3] + tau * (4 * c[4] + tau * 5 * c[5])))
    a = 2 * c[2] + tau * (6 * c[3] + tau * (12 * c[4] + tau * 20 * c[5]))
    return p, v, a


def rest_to_rest_duration(distance_rad: np.ndarray, speed_rad_s: np.ndarray, acceleration_rad_s2: np.ndarray) -> float:
    """Shortest duration of a rest-to-rest quintic that keeps every joint within its speed and acceleration."""
    d = np.abs(np.asarray(distance_rad, dtype=float))
    by_speed = REST_TO_REST_PEAK_SPEED * d / np.asarray(speed_rad_s, dtype=float)
    by_accel = np.sqrt(REST_TO_REST_PEAK_ACCELERATION * d / np.asarray(acceleration_rad_s2, dtype=float))
    return float(np.max(np.maximum(by_speed, by_accel)))
