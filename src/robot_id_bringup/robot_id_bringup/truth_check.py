"""An identification of the simulated robot checked against the simulator's truth on a different motion.

The motion: a random Fourier motion the identification did not see (seeded, around the middle of each joint's
range). Two references on it, both published as the robot publishes torque (through its torque filter, the LBR's
16 ms, which the validation applies to the predictions too), without noise or drops:

- the true model: what the true robot's torque sensors read by its true dynamics (links, armature, friction of
  Luo et al. 2024, eq. 7, sensor offset), computed on the motion itself. It answers "how close are the identified
  parameters to the truth?";
- the simulated sensors: the true robot follows the motion in MuJoCo under its tracking controller. At every
  reversal a joint sticks in static friction until the controller
  has built up the torque to break it loose, then catches up: torques no model of position, velocity and
  acceleration predicts, so this error is larger where joints reverse slowly.

The estimator's validation predicts both with the nominal URDF and with each identified parameter set.
"""

from __future__ import annotations

import pathlib

import numpy as np

from robot_id_estimator.processing.samples import first_order_lowpass
from robot_id_estimator.recordings.recording import Recording
from robot_id_estimator.results import read_identification
from robot_id_estimator.results.validation import Validation
from robot_id_estimator.synthetic import random_motion
from robot_id_estimator.validate import validate
from robot_id_excitation.excitation_guard import STOP_ACCELERATION_FRACTION
from robot_id_excitation.excitation_plan import Points, with_braking_tail
from robot_id_model.robot_config import load_robot_config
from robot_id_sim.sensors import SensorOptions
from robot_id_sim.simulated_robot import SimSettings, SimulatedRobot
from robot_id_sim.trajectory_follower import TrajectoryCommand
from robot_id_sim.true_dynamics import TRUTH_FRICTION, TrueDynamics
from robot_id_sim.truth_file import load_truth

PERIOD_S = 10.0
HARMONICS = 5
PERIODS = 2
SEED = 7
SOURCE = f"random motion {SEED}"


def true_model_recording(robot_name: str, truth: TrueDynamics) -> Recording:
    """PERIODS periods (after one lead-in, for the filter) of the random motion of SEED at the robot's state rate,
    with the torque the true robot's sensors read by its true dynamics, through the robot's torque filter."""
    config = load_robot_config(robot_name)
    dt_s = 1.0 / config.state_rate_hz
    t_s = np.arange(0.0, (PERIODS + 1) * PERIOD_S - 0.5 * dt_s, dt_s)
    q, dq, ddq = random_motion(config.load_model(), PERIOD_S, HARMONICS, t_s % PERIOD_S, SEED)
    tau = first_order_lowpass(truth.sensed_torque_nm(config.load_model(TRUTH_FRICTION), q, dq, ddq), dt_s,
                              config.torque_filter_time_constant_s)
    kept = slice(round(PERIOD_S / dt_s), None)
    return Recording(config.joint_names, t_s[kept] - PERIOD_S, q[kept], tau[kept], dq[kept], None, PERIOD_S,
                     HARMONICS, f"the simulator's true model, {SOURCE}", ())


def simulated_recording(robot_name: str, truth: TrueDynamics) -> Recording:
    """PERIODS periods (after one lead-in) of the random motion of SEED, as the true robot follows it in MuJoCo."""
    config = load_robot_config(robot_name)
    t_s = np.arange(0.0, (PERIODS + 1) * PERIOD_S + 0.005, 0.01)
    motion = random_motion(config.load_model(), PERIOD_S, HARMONICS, t_s % PERIOD_S, SEED)
    return followed(robot_name, truth, t_s, motion, PERIOD_S, HARMONICS, PERIODS, f"simulated sensors, {SOURCE}")


def followed(robot_name: str, truth: TrueDynamics, t_s: np.ndarray, motion: tuple[np.ndarray, ...], period_s: float,
             harmonics: int | None, periods: int, source: str) -> Recording:
    """`periods` periods (after one lead-in) of a periodic motion (q, dq, ddq at t_s, at least periods + 1 of them)
    as the true robot follows it in MuJoCo under its tracking controller, at the config's state rate. The command
    ends at rest, as the joint trajectory controller requires: a braking tail after the motion's last point, past
    the samples kept."""
    config = load_robot_config(robot_name)
    nominal = config.load_model()
    rate_hz = config.state_rate_hz
    sensors = SensorOptions(torque_filter_time_constant_s=config.torque_filter_time_constant_s)
    sim = SimulatedRobot(config, nominal, config.urdf_path.read_text(), truth, SimSettings(rate_hz), sensors,
                         motion[0][0])
    points = with_braking_tail(Points(t_s, *motion), STOP_ACCELERATION_FRACTION * config.limits.acceleration_rad_s2,
                               1.0 / float(t_s[1] - t_s[0]))
    reason = sim.command(TrajectoryCommand(0.0, config.joint_names, points.t_rel_s, points.q_rad, points.dq_rad_s,
                                           points.ddq_rad_s2))
    if reason:
        raise ValueError(f"the motion was refused: {reason}")
    per_period = round(period_s * rate_hz)
    samples = [sim.advance() for _ in range((periods + 1) * per_period)][per_period - 1:-1]
    t = np.array([s.t_s for s in samples])
    return Recording(config.joint_names, t - t[0], np.array([s.q_rad for s in samples]),
                     np.array([s.effort_nm for s in samples]),
                     np.array([s.dq_rad_s for s in samples]), None, period_s, harmonics, source, ())


def check_against_truth(robot_name: str, identification_json: str | pathlib.Path,
                        truth_path: str | pathlib.Path, simulated: bool = True) -> dict[str, Validation]:
    """Torque errors of the nominal URDF and of every identified set against the true model and, with
    `simulated`, against the simulated sensors (a MuJoCo run of the motion), on the same motion."""
    result = read_identification(identification_json)
    truth = load_truth(truth_path)
    checks = {"true model": validate(result, [true_model_recording(robot_name, truth)])}
    if simulated:
        checks["simulated sensors"] = validate(result, [simulated_recording(robot_name, truth)])
    return checks
