"""An identification of the simulated robot checked against the simulator's truth on a different motion.

The true robot of the run (its truth file) follows a random Fourier motion it was not identified on (seeded,
around the middle of each joint's range) in MuJoCo; its torque sensors read without noise, filter or drops (the
offset stays: it is what every torque reading of that robot holds). That reading is the truth. The estimator's
validation then predicts that torque with the nominal URDF and with each identified parameter set.
"""

from __future__ import annotations

import pathlib

import numpy as np

from robot_id_estimator.recording import Recording
from robot_id_estimator.results import read_identification
from robot_id_estimator.synthetic import random_motion
from robot_id_estimator.validation_results import Validation
from robot_id_estimator.validation_run import validate
from robot_id_model.robot_config import load_robot_config
from robot_id_sim.sensors import SensorOptions
from robot_id_sim.simulated_robot import SimSettings, SimulatedRobot
from robot_id_sim.trajectory_follower import TrajectoryCommand
from robot_id_sim.truth_file import load_truth

PERIOD_S = 10.0
HARMONICS = 5
PERIODS = 2
SEED = 7


def truth_recording(robot_name: str, truth_path: str | pathlib.Path) -> Recording:
    """PERIODS periods (after one lead-in) of the random motion of SEED, as the true robot's drives apply it."""
    config = load_robot_config(robot_name)
    nominal = config.load_model()
    truth = load_truth(truth_path)
    rate_hz = config.state_rate_hz
    t_s = np.arange(0.0, (PERIODS + 1) * PERIOD_S + 0.005, 0.01)
    q, dq, ddq = random_motion(nominal, PERIOD_S, HARMONICS, t_s % PERIOD_S, SEED)
    sim = SimulatedRobot(config, nominal, config.urdf_path.read_text(), truth, SimSettings(rate_hz),
                         SensorOptions(), q[0])
    reason = sim.command(TrajectoryCommand(0.0, config.joint_names, t_s, q, dq, ddq))
    if reason:
        raise ValueError(f"the validation motion was refused: {reason}")
    per_period = round(PERIOD_S * rate_hz)
    samples = [sim.advance() for _ in range((PERIODS + 1) * per_period)][per_period - 1:-1]
    t = np.array([s.t_s for s in samples])
    return Recording(config.joint_names, t - t[0], np.array([s.q_rad for s in samples]),
                     np.array([s.effort_nm for s in samples]),
                     np.array([s.dq_rad_s for s in samples]), None, PERIOD_S, HARMONICS,
                     f"simulated truth, random motion {SEED}", ())


def check_against_truth(robot_name: str, identification_json: str | pathlib.Path,
                        truth_path: str | pathlib.Path) -> Validation:
    """Torque errors of the nominal URDF and of every identified set on the truth recording."""
    result = read_identification(identification_json)
    return validate(result, [truth_recording(robot_name, truth_path)])
