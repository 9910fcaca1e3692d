"""Validation of an identified model: torque prediction errors and momentum-observer residuals (Xu et al. 2020,
IV-E, IV-F)."""

from __future__ import annotations

import dataclasses

import numpy as np

from robot_id_model.parameters import friction_columns
from robot_id_model.regressor import regressor
from robot_id_model.robot_model import RobotModel

VELOCITY_STEP_S = 1e-6
"""Step h of the central difference Ṁ(q)·q̇ ≈ (M(q + h·q̇) − M(q − h·q̇))·q̇ / 2h."""


def predict_torque(yb: np.ndarray, values: np.ndarray) -> np.ndarray:
    """τ = Yb·πb for a (K, n, b) base regressor; parameters that were not estimated (NaN) contribute nothing."""
    return yb @ np.nan_to_num(np.asarray(values, dtype=float), nan=0.0)


def rms_error(measured_nm: np.ndarray, predicted_nm: np.ndarray) -> np.ndarray:
    """Per-joint RMS of measured − predicted torque [Nm] (Xu et al. 2020, Table 8)."""
    return np.sqrt(np.mean((measured_nm - predicted_nm) ** 2, axis=0))


def total_rms_error(measured_nm: np.ndarray, predicted_nm: np.ndarray) -> float:
    """RMS of the torque error over every joint and sample [Nm]."""
    return float(np.sqrt(np.mean((measured_nm - predicted_nm) ** 2)))


def correlation(measured_nm: np.ndarray, predicted_nm: np.ndarray) -> np.ndarray:
    """Per-joint Pearson correlation of measured and predicted torque (NaN for a constant signal)."""
    m = measured_nm - measured_nm.mean(axis=0)
    p = predicted_nm - predicted_nm.mean(axis=0)
    denominator = np.sqrt(np.sum(m**2, axis=0) * np.sum(p**2, axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0.0, np.sum(m * p, axis=0) / denominator, np.nan)


def _gravity_free(robot: RobotModel) -> RobotModel:
    model = robot.model.copy()
    model.gravity.linear = np.zeros(3)
    return dataclasses.replace(robot, model=model)


def momentum_regressors(
    robot: RobotModel, columns: np.ndarray, q_rad: np.ndarray, dq_rad_s: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Regressors of the momentum observer's model terms, linear in the base parameters: (Yp, Yn), each (K, n, b).

    Generalised momentum p = M(q)·q̇ = Yp·πb, and Yn·πb = Cᵀ(q, q̇)·q̇ − g(q) − τ_f(q̇), the model input of the
    observer (Haddadin et al., the observer of Xu et al. 2020, section IV-F). Both come from the torque regressor, so
    they exist for base and essential parameters, which have no mass matrix of their own:
    - M(q)·w is the gravity-free regressor at (q, 0, w) without the drive-friction columns;
    - Cᵀq̇ = Ṁq̇ − Cq̇ (skew symmetry of Ṁ − 2C), with Ṁq̇ by a central difference along q̇ and
      C·q̇ + g + τ_f the regressor at (q, q̇, 0).
    The structural base-parameter relations hold for these columns too: a direction of π that changes no torque
    for any motion changes neither M(q) nor g(q).
    """
    free = _gravity_free(robot)
    zero = np.zeros_like(dq_rad_s)
    drive = [t for t, term in enumerate(robot.friction) if term != "IA"]
    drive_cols = friction_columns(robot)[:, drive].ravel()

    def inertia_times(q: np.ndarray, w: np.ndarray) -> np.ndarray:
        y = regressor(free, q, zero, w)
        y[:, :, drive_cols] = 0.0
        return y[..., columns]

    h = VELOCITY_STEP_S
    yp = inertia_times(q_rad, dq_rad_s)
    m_dot = (inertia_times(q_rad + h * dq_rad_s, dq_rad_s) - inertia_times(q_rad - h * dq_rad_s, dq_rad_s)) / (2 * h)
    yn = m_dot - regressor(robot, q_rad, dq_rad_s, zero)[..., columns]
    return yp, yn


def momentum_observer(
    t_s: np.ndarray, tau_nm: np.ndarray, p_nm_s: np.ndarray, n_nm: np.ndarray, gain_1_s: float
) -> np.ndarray:
    """Residual r of the generalised-momentum observer (Xu et al. 2020, section IV-F, after Haddadin et al.).

    r(t) = K_O·(p(t) − p(0) − ∫₀ᵗ (τ + Cᵀq̇ − g − τ_f + r) ds), with n = Cᵀq̇ − g − τ_f. The known input is
    integrated by the trapezoidal rule and r implicitly (backward Euler), which is stable for any K_O·Δt.
    Without external torque r is the model error low-passed at K_O; r tends to τ_model − τ_measured.
    """
    dt = np.diff(t_s)
    u = tau_nm + n_nm
    integral = np.concatenate([np.zeros((1, u.shape[1])), np.cumsum(0.5 * (u[1:] + u[:-1]) * dt[:, None], axis=0)])
    e = p_nm_s - p_nm_s[0] - integral
    r = np.zeros_like(e)
    r_integral = np.zeros(e.shape[1])
    for k in range(1, len(t_s)):
        r[k] = gain_1_s * (e[k] - r_integral) / (1.0 + gain_1_s * dt[k - 1])
        r_integral += r[k] * dt[k - 1]
    return r


def collision_thresholds(residual_nm: np.ndarray, safety_factor: float = 1.2) -> np.ndarray:
    """Per-joint detection thresholds: the largest collision-free |r| times a safety factor (Xu et al. 2020, IV-F)."""
    return safety_factor * np.max(np.abs(residual_nm), axis=0)
