"""Data shared by the benchmarks: simulated periodic runs (robot_id_lab.synthetic) and the public
Panda log (not a benchmark itself)."""

from __future__ import annotations

import pathlib
import sys
from collections.abc import Callable

import numpy as np

from robot_id_estimator.recordings.loading import load_recording
from robot_id_estimator.recordings.recording import Recording
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_lab.synthetic import random_run, sample_times_s
from robot_id_model import load_robot_config
from robot_id_model.robot_model import RobotModel

ROOT = pathlib.Path(__file__).resolve().parents[1]
PANDA_LOG = ROOT.parent / "shared" / "datasets" / "panda_gaz2019" / "panda_traj1_robot_log.csv"
PANDA_JOINTS = tuple(f"fer_joint{i}" for i in range(1, 8))
PANDA_COLUMNS = {"t": "t_s", "q": "q{i}_rad", "dq": "dq{i}_rad_s", "tau": "tau{i}_Nm"}
"""The log's own column names (`--columns t=t_s,q=q{i}_rad,dq=dq{i}_rad_s,tau=tau{i}_Nm` on the command line)."""


def progress(text: str) -> None:
    print(f"  … {text}", file=sys.stderr, flush=True)


def robot_setup(name: str) -> RobotSetup:
    return RobotSetup.from_config(load_robot_config(name))


def simulated(
    robot: RobotModel,
    setup: RobotSetup,
    pi: np.ndarray,
    n_periods: int,
    seed: int,
    noise_nm: float,
    period_s: float = 20.0,
    rate_hz: float = 500.0,
    joint_friction: Callable[[np.ndarray], np.ndarray] | None = None,
) -> Recording:
    """n_periods of a random 5-harmonic Fourier run (Xu et al. 2020, eq. 8) inside 70 % of the joint ranges and 60 %
    of the velocity limits at its samples, with the torque the robot publishes (its filter, then noise; 1e-5 rad
    on q), `joint_friction` as synthetic.periodic_run's."""
    return Recording.of_arrays(**vars(random_run(
        robot, pi, n_periods, seed=seed, period_s=period_s, rate_hz=rate_hz,
        torque_filter_time_constant_s=setup.torque_filter_time_constant_s, tau_noise_nm=noise_nm, q_noise_rad=1e-5,
        noise_seed=seed + 100, limit_grid_s=sample_times_s(period_s, rate_hz), source=f"simulated seed {seed}",
        joint_friction=joint_friction)))


def panda_log(train_fraction: float = 0.7) -> tuple[Recording, Recording] | None:
    """The Gaz et al. 2019 Panda log read as it is shipped (column map, time windows): (first 70 %, last 30 %) of
    its time span; None if absent."""
    if not PANDA_LOG.is_file():
        return None
    span_s = float(np.loadtxt(PANDA_LOG, delimiter=",", skiprows=1, usecols=0)[[0, -1]] @ [-1.0, 1.0])
    split_s = train_fraction * span_s
    return (load_recording(PANDA_LOG, PANDA_JOINTS, columns=PANDA_COLUMNS, end_s=split_s),
            load_recording(PANDA_LOG, PANDA_JOINTS, columns=PANDA_COLUMNS, start_s=split_s))
