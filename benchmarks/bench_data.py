"""Data shared by the benchmarks: simulated periodic runs and the public Panda log (not a benchmark itself)."""

from __future__ import annotations

import pathlib
import sys

import numpy as np

from robot_id_estimator.recording import Recording, load_recording
from robot_id_estimator.results import RobotSetup
from robot_id_estimator.simulation import periodic_recording
from robot_id_model import load_robot_config
from robot_id_model.robot_config import config_directory

ROOT = pathlib.Path(__file__).resolve().parents[1]
CONFIGS = config_directory()
PANDA_LOG = ROOT.parent / "shared" / "datasets" / "panda_gaz2019" / "panda_traj1_robot_log.csv"
PANDA_JOINTS = tuple(f"fer_joint{i}" for i in range(1, 8))
PANDA_COLUMNS = {"t": "t_s", "q": "q{i}_rad", "dq": "dq{i}_rad_s", "tau": "tau{i}_Nm"}
"""The log's own column names (`--columns t=t_s,q=q{i}_rad,dq=dq{i}_rad_s,tau=tau{i}_Nm` on the command line)."""


def progress(text: str) -> None:
    print(f"  … {text}", file=sys.stderr, flush=True)


def robot_setup(name: str) -> RobotSetup:
    return RobotSetup.from_config(load_robot_config(CONFIGS / f"{name}.yaml"))


def fourier_run(robot, period_s: float, per_period: int, harmonics: int, seed: int):
    """q, dq, ddq of one period of a random finite Fourier series (Xu et al. 2020, eq. 8) inside 70 % of the joint
    ranges and 60 % of the velocity limits."""
    rng = np.random.default_rng(seed)
    t = np.arange(per_period) * period_s / per_period
    w, ls = 2.0 * np.pi / period_s, np.arange(1, harmonics + 1)
    a, b = rng.normal(size=(2, robot.n_joints, harmonics)) / ls
    phase = w * np.outer(t, ls)
    q = np.sin(phase) @ (a / (w * ls)).T - np.cos(phase) @ (b / (w * ls)).T
    dq = np.cos(phase) @ a.T + np.sin(phase) @ b.T
    ddq = (-np.sin(phase) * w * ls) @ a.T + (np.cos(phase) * w * ls) @ b.T
    lower, upper = robot.position_limits_rad
    v_max = robot.velocity_limits_rad_s
    scale = np.minimum(0.35 * (upper - lower) / np.abs(q).max(axis=0), 0.6 * v_max / np.abs(dq).max(axis=0))
    return 0.5 * (lower + upper) + q * scale, dq * scale, ddq * scale


def simulated(
    robot, setup, pi, n_periods: int, seed: int, noise_nm: float, period_s: float = 20.0, per_period: int = 10_000
) -> Recording:
    """n_periods of a Fourier run (500 Hz by default) with the torque the robot publishes (its filter, then noise)."""
    q, dq, ddq = fourier_run(robot, period_s, per_period, 5, seed)
    return periodic_recording(robot, pi, q, dq, ddq, period_s, n_periods, setup.torque_filter_time_constant_s,
                              noise_nm, 1e-5, seed + 100, 5, f"simulated seed {seed}")


def panda_log(train_fraction: float = 0.7) -> tuple[Recording, Recording] | None:
    """The Gaz et al. 2019 Panda log read as it is shipped (column map, time windows): (first 70 %, last 30 %) of
    its time span; None if absent."""
    if not PANDA_LOG.is_file():
        return None
    span_s = float(np.loadtxt(PANDA_LOG, delimiter=",", skiprows=1, usecols=0)[[0, -1]] @ [-1.0, 1.0])
    split_s = train_fraction * span_s
    return (load_recording(PANDA_LOG, PANDA_JOINTS, columns=PANDA_COLUMNS, end_s=split_s),
            load_recording(PANDA_LOG, PANDA_JOINTS, columns=PANDA_COLUMNS, start_s=split_s))
