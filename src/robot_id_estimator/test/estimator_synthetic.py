"""Simulated recordings of the shipped iiwa14 with known parameters, for ground-truth tests: the lab's synthetic
runs (robot_id_lab.synthetic) as the estimator's Recording."""

from __future__ import annotations

import dataclasses
import pathlib

import numpy as np
import yaml

from robot_id_estimator.recordings.recording import Recording
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_estimator.settings import EstimatorConfig, PhysicalConfig, config_to_dict
from robot_id_estimator.stribeck_law import stribeck_torque
from robot_id_lab.synthetic import periodic_run, random_run, scaled_links
from robot_id_model import base_parameters, load_robot_config, regressor, stack
from robot_id_model.base_parameters import random_states
from robot_id_model.parameters import friction_columns
from robot_id_model.robot_config import robot_config_path
from robot_id_model.robot_model import RobotModel

IIWA14 = robot_config_path("iiwa14")


def periodic_recording(*args, **kwargs) -> Recording:
    """robot_id_lab.synthetic.periodic_run (same arguments) as a Recording."""
    return Recording.of_arrays(**vars(periodic_run(*args, **kwargs)))


def random_recording(*args, **kwargs) -> Recording:
    """robot_id_lab.synthetic.random_run (same arguments) as a Recording."""
    return Recording.of_arrays(**vars(random_run(*args, **kwargs)))


WITHOUT_PHYSICAL = EstimatorConfig(physical=PhysicalConfig(method="none"))
"""The default settings without the physical stage (seconds per identification), for tests of the other stages."""
SIGN_LAW = dataclasses.replace(WITHOUT_PHYSICAL, coulomb_law="sign")
"""WITHOUT_PHYSICAL with the Coulomb law the simulations use, sign(dq), held instead of chosen (4 periods of the
iiwa14: 0.2 s CPU instead of 1.5 s), for tests of stages the law does not concern."""


def write_without_physical(directory: pathlib.Path, **changes: object) -> pathlib.Path:
    """WITHOUT_PHYSICAL (with `changes` to its fields) as a config file in `directory`, for the command line and
    the node."""
    path = directory / "without_physical.yaml"
    path.write_text(yaml.safe_dump(config_to_dict(dataclasses.replace(WITHOUT_PHYSICAL, **changes))))
    return path


def iiwa14_setup() -> RobotSetup:
    return RobotSetup.from_config(load_robot_config(IIWA14))


def simulated_recording(
    robot: RobotModel,
    setup: RobotSetup,
    pi: np.ndarray,
    n_periods: int,
    seed: int = 0,
    tau_noise_nm: np.ndarray | float = 0.1,
    q_noise_rad: float = 1e-5,
    noise_seed: int = 1,
    still: tuple[int, ...] = (),
) -> Recording:
    """n_periods of the random 5-harmonic excitation of `seed` (10 s at 200 Hz; joints in `still` at rest) with the
    torque the robot would publish: τ = Y·π through the robot's torque filter, plus Gaussian noise."""
    return random_recording(robot, pi, n_periods, seed=seed, period_s=10.0, rate_hz=200.0,
                            torque_filter_time_constant_s=setup.torque_filter_time_constant_s,
                            tau_noise_nm=tau_noise_nm, q_noise_rad=q_noise_rad, noise_seed=noise_seed, still=still,
                            source=f"sim{seed}")


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


def scaled_truth(robot: RobotModel) -> np.ndarray:
    """The URDF model with each link scaled by ±10 % and friction added (offsets of both signs): a truth the prior
    does not know, as consistent as the URDF (the Panda's link 4 is not)."""
    return scaled_links(robot, friction_range=(0.2, 1.0), offset_shift_nm=-0.6, consistent=False)


def identification_problem(name: str, friction: tuple[str, ...] = ("FV", "FC", "FO")) -> tuple:
    """The shipped robot `name` with a scaled_truth, 400 random states: (robot, base, π_true, W_base, τ), stacked."""
    robot = load_robot_config(name).load_model(friction)
    base = base_parameters(robot)
    pi_true = scaled_truth(robot)
    y = regressor(robot, *random_states(robot, 400, seed=3))
    return robot, base, pi_true, stack(base.regressor(y)), stack(y) @ pi_true
