"""Recordings of a known model: the ground truth for tests, benchmarks and the offline demo."""

from __future__ import annotations

import numpy as np

from robot_id_estimator.processing import first_order_lowpass
from robot_id_estimator.recording import Recording
from robot_id_model.regressor import regressor
from robot_id_model.robot_model import RobotModel


def periodic_recording(
    robot: RobotModel,
    pi: np.ndarray,
    q_rad: np.ndarray,
    dq_rad_s: np.ndarray,
    ddq_rad_s2: np.ndarray,
    period_s: float,
    n_periods: int,
    torque_filter_time_constant_s: float = 0.0,
    tau_noise_nm: np.ndarray | float = 0.0,
    q_noise_rad: float = 0.0,
    seed: int = 0,
    harmonics: int | None = None,
    source: str = "simulated",
) -> Recording:
    """`n_periods` repetitions of one period of motion (K samples over `period_s`) with the torque a robot of
    standard parameters `pi` publishes: τ = Y·π, through its first-order torque filter in periodic steady
    state (after one lead-in period), plus Gaussian noise on τ and q."""
    per_period = len(q_rad)
    tau = np.tile(regressor(robot, q_rad, dq_rad_s, ddq_rad_s2) @ pi, (n_periods + 1, 1))
    tau = first_order_lowpass(tau, period_s / per_period, torque_filter_time_constant_s)[per_period:]
    rng = np.random.default_rng(seed)
    k, n = n_periods * per_period, robot.n_joints
    q = np.tile(q_rad, (n_periods, 1)) + q_noise_rad * rng.normal(size=(k, n))
    tau = tau + np.asarray(tau_noise_nm) * rng.normal(size=(k, n))
    return Recording(robot.joint_names, np.arange(k) * period_s / per_period, q, tau, None, None, period_s,
                     harmonics, source, ())
