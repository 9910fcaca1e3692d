"""Simulated recordings of the shipped iiwa14 with known parameters, for ground-truth tests."""

from __future__ import annotations

import numpy as np

from robot_id_estimator.friction import stribeck_torque
from robot_id_estimator.recording import Recording
from robot_id_estimator.results import RobotSetup
from robot_id_estimator.simulation import periodic_recording
from robot_id_model import load_robot_config, nominal_parameters, regressor
from robot_id_model.parameters import friction_columns
from robot_id_model.robot_config import config_directory
from robot_id_model.robot_model import RobotModel

CONFIG_DIR = config_directory()
IIWA14 = CONFIG_DIR / "iiwa14.yaml"

FRICTION_TRUE = {"FV": 0.4, "FC": 0.6, "FO": -0.15, "IA": 0.05}
"""Drive terms of every simulated joint: viscous [Nm s/rad], Coulomb [Nm], offset [Nm], rotor inertia [kg m²]."""


def iiwa14_setup() -> RobotSetup:
    return RobotSetup.from_config(load_robot_config(IIWA14))


def true_parameters(robot: RobotModel) -> np.ndarray:
    """The URDF inertials with FRICTION_TRUE (scaled by joint: 1.0 at joint 1 down to 0.4 at joint 7)."""
    pi = nominal_parameters(robot)
    scale = np.linspace(1.0, 0.4, robot.n_joints)
    for t, term in enumerate(robot.friction):
        pi[friction_columns(robot)[:, t]] = FRICTION_TRUE[term] * scale
    return pi


def fourier_motion(
    robot: RobotModel,
    period_s: float,
    harmonics: int,
    t_s: np.ndarray,
    seed: int,
    velocity_fraction: float = 0.6,
    still: tuple[int, ...] = (),
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A random finite Fourier series (Xu et al. 2020, eq. 8) per joint around the middle of the joint range, scaled to
    stay within 70 % of the half range and `velocity_fraction` of the URDF velocity limit. q, dq, ddq at t_s.
    Joints (0-based) in `still` stay at the middle of their range."""
    rng = np.random.default_rng(seed)
    lower, upper = robot.position_limits_rad
    centre, half = 0.5 * (lower + upper), 0.5 * (upper - lower)
    v_max = robot.velocity_limits_rad_s
    w = 2.0 * np.pi / period_s
    ls = np.arange(1, harmonics + 1)
    a, b = rng.normal(size=(2, robot.n_joints, harmonics)) / ls
    phase = w * np.outer(t_s, ls)
    q = (np.sin(phase) @ (a / (w * ls)).T) - (np.cos(phase) @ (b / (w * ls)).T)
    dq = np.cos(phase) @ a.T + np.sin(phase) @ b.T
    ddq = (-np.sin(phase) * w * ls) @ a.T + (np.cos(phase) * w * ls) @ b.T
    grid = np.linspace(0.0, period_s, 2001)
    phase_g = w * np.outer(grid, ls)
    q_g = (np.sin(phase_g) @ (a / (w * ls)).T) - (np.cos(phase_g) @ (b / (w * ls)).T)
    dq_g = np.cos(phase_g) @ a.T + np.sin(phase_g) @ b.T
    scale = np.minimum(0.7 * half / np.max(np.abs(q_g), axis=0),
                       velocity_fraction * v_max / np.max(np.abs(dq_g), axis=0))
    scale[list(still)] = 0.0
    return centre + q * scale, dq * scale, ddq * scale


def simulated_recording(
    robot: RobotModel,
    setup: RobotSetup,
    pi: np.ndarray,
    n_periods: int,
    seed: int = 0,
    period_s: float = 10.0,
    rate_hz: float = 200.0,
    harmonics: int = 5,
    tau_noise_nm: np.ndarray | float = 0.1,
    q_noise_rad: float = 1e-5,
    noise_seed: int = 1,
    still: tuple[int, ...] = (),
) -> Recording:
    """n_periods of a periodic excitation sampled at rate_hz, with the torque the robot would publish:
    τ = Y·π through the robot's torque filter (after a lead-in period), plus Gaussian noise."""
    t_one = np.arange(round(period_s * rate_hz)) / rate_hz
    q, dq, ddq = fourier_motion(robot, period_s, harmonics, t_one, seed, still=still)
    return periodic_recording(robot, pi, q, dq, ddq, period_s, n_periods, setup.torque_filter_time_constant_s,
                              tau_noise_nm, q_noise_rad, noise_seed, harmonics, f"sim{seed}")


STRIBECK_TRUE = np.array([0.3, 0.05, 0.1, 0.6, 0.05, 0.4, 0.02])
"""Stribeck friction of Luo et al. 2024, eq. (7) for simulations: fv1, fv2, fv3, fs, fs1, fc, fc1."""

SWEEP_POSE_RAD = np.array([0.2, 0.6, -0.3, -1.2, 0.4, 0.8, 0.1])
"""Where the joints that are not swept stand: joint 2 carries a large gravity torque."""


def sweep_motion(
    joint: int, speeds_rad_s: np.ndarray, rate_hz: float = 100.0, accel_rad_s2: float = 5.0, pause_s: float = 0.3
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Forward and backward passes of one joint (0-based) at each speed, trapezoidal velocity, the other joints
    at SWEEP_POSE_RAD: (t, q, dq, ddq). Each pass covers 4 s of travel, between 0.05 and 1.5 rad, and returns."""
    dt = 1.0 / rate_hz
    acc_parts = []
    for v in speeds_rad_s:
        distance = min(1.5, max(0.05, 4.0 * v))
        t_acc = v / accel_rad_s2
        t_cruise = distance / v - t_acc
        n_acc, n_cruise, n_pause = max(1, round(t_acc / dt)), round(t_cruise / dt), round(pause_s / dt)
        a = v / (n_acc * dt)
        one_way = np.concatenate([np.full(n_acc, a), np.zeros(n_cruise), np.full(n_acc, -a), np.zeros(n_pause)])
        acc_parts += [one_way, -one_way]
    ddq_j = np.concatenate([np.zeros(round(pause_s / dt)), *acc_parts])
    dq_j = np.concatenate([[0.0], np.cumsum(ddq_j[:-1]) * dt])
    q_j = np.concatenate([[0.0], np.cumsum(0.5 * (dq_j[1:] + dq_j[:-1])) * dt])
    k = len(ddq_j)
    q = np.tile(SWEEP_POSE_RAD, (k, 1))
    dq, ddq = np.zeros((k, 7)), np.zeros((k, 7))
    q[:, joint] += q_j
    dq[:, joint], ddq[:, joint] = dq_j, ddq_j
    return np.arange(k) * dt, q, dq, ddq


def rigid_body_torque(robot: RobotModel, pi: np.ndarray, q, dq, ddq) -> np.ndarray:
    """Y·π without the viscous and Coulomb columns: rigid body plus the constant offset."""
    pi = pi.copy()
    for t, term in enumerate(robot.friction):
        if term in ("FV", "FC"):
            pi[friction_columns(robot)[:, t]] = 0.0
    return regressor(robot, q, dq, ddq) @ pi


def sweep_recording(robot: RobotModel, pi: np.ndarray, joint: int, speeds_rad_s: np.ndarray,
                    tau_noise_nm: float = 0.02, seed: int = 0) -> Recording:
    """A sweep of one joint with Stribeck friction (STRIBECK_TRUE) on every joint and torque noise."""
    t, q, dq, ddq = sweep_motion(joint, speeds_rad_s)
    tau = rigid_body_torque(robot, pi, q, dq, ddq) + stribeck_torque(dq, np.tile(STRIBECK_TRUE, (7, 1)))
    tau += tau_noise_nm * np.random.default_rng(seed).normal(size=tau.shape)
    return Recording(robot.joint_names, t, q, tau, None, None, None, None, f"sweep{joint + 1}", ())


def make_recording(t_s: np.ndarray, q_rad: np.ndarray, tau_nm: np.ndarray, **fields: object) -> Recording:
    """A Recording of joints j1, j2, ... with nothing else known; `fields` override any field."""
    values = dict(joint_names=tuple(f"j{i + 1}" for i in range(q_rad.shape[1])), t_s=t_s, q_rad=q_rad, tau_nm=tau_nm,
                  dq_rad_s=None, ddq_rad_s2=None, period_s=None, harmonics=None, source="test", repairs=())
    return Recording(**(values | fields))


def relative_error(x: np.ndarray, truth: np.ndarray) -> float:
    """Largest absolute error over the largest absolute true value."""
    return float(np.max(np.abs(x - truth)) / np.max(np.abs(truth)))
