"""The model files of an identification of the simulated robot checked against the simulator's truth on a motion
they were not identified on, as a user would check them: identified.urdf by pinocchio with identified.yaml's
friction laws (written_model.py), never the identification's own account of its parameters.

The motion: a random Fourier motion the identification did not see (seeded, around the middle of each joint's
range). Two references on it, both published as the robot publishes torque (through its torque filter, the LBR's
16 ms), without noise or drops:

- the true model: what the true robot's torque sensors read by its true dynamics (links, armature, friction of
  Luo et al. 2024, eq. 7, sensor offset), computed on the motion itself. It answers "how close is the written
  model to the truth?";
- the simulated sensors: the true robot follows the motion in MuJoCo under its tracking controller. At every
  reversal a joint sticks in static friction until the controller has built up the torque to break it loose, then
  catches up: torques no model of position, velocity and acceleration predicts, so this error is larger where
  joints reverse slowly.

Two models predict both on the motion each reference moves along (as commanded; as measured, its accelerations the
differences of the measured velocities), through the same filter: the robot's nominal URDF (rigid body alone) and
the written model.
"""

from __future__ import annotations

import os
import pathlib
from dataclasses import dataclass

import numpy as np

from robot_id_excitation.excitation_guard import STOP_ACCELERATION_FRACTION
from robot_id_excitation.excitation_plan import Points, with_braking_tail
from robot_id_lab.synthetic import SyntheticRun, random_motion
from robot_id_lab.written_model import arm_model, rigid_body_torque_nm, written_torque_nm
from robot_id_model.robot_config import load_robot_config
from robot_id_model.torque_filter import first_order_lowpass
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
MODELS = {"urdf": "nominal URDF", "identified": "identified.urdf + .yaml"}
"""The models the check predicts with, by key, and how a table names them."""


@dataclass(frozen=True)
class TruthErrors:
    """RMS torque error per joint of each model (MODELS' keys) against one reference, in % of the reference's
    torque RMS, on the check's motion."""

    joint_names: tuple[str, ...]
    rms_percent_of_torque: dict[str, np.ndarray]


def check_motion(robot_name: str) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray], slice]:
    """The check's motion at the robot's state rate: times over one lead-in period (for the torque filter) and
    PERIODS periods, (q, dq, ddq) of the random motion of SEED there, and the samples kept (after the lead-in)."""
    config = load_robot_config(robot_name)
    dt_s = 1.0 / config.state_rate_hz
    t_s = np.arange(0.0, (PERIODS + 1) * PERIOD_S - 0.5 * dt_s, dt_s)
    motion = random_motion(config.load_model(), PERIOD_S, HARMONICS, t_s % PERIOD_S, SEED)
    return t_s, motion, slice(round(PERIOD_S / dt_s), None)


def true_model_run(robot_name: str, truth: TrueDynamics) -> SyntheticRun:
    """PERIODS periods (after one lead-in, for the filter) of the check's motion with the torque the true robot's
    sensors read by its true dynamics, through the robot's torque filter."""
    config = load_robot_config(robot_name)
    t_s, (q, dq, ddq), kept = check_motion(robot_name)
    tau = first_order_lowpass(truth.sensed_torque_nm(config.load_model(TRUTH_FRICTION), q, dq, ddq),
                              float(t_s[1] - t_s[0]), config.torque_filter_time_constant_s)
    return SyntheticRun(config.joint_names, t_s[kept] - PERIOD_S, q[kept], tau[kept], PERIOD_S, HARMONICS,
                        f"the simulator's true model, {SOURCE}", dq[kept])


def simulated_run(robot_name: str, truth: TrueDynamics) -> SyntheticRun:
    """One lead-in and PERIODS periods of the check's motion, as the true robot follows it in MuJoCo."""
    config = load_robot_config(robot_name)
    t_s = np.arange(0.0, (PERIODS + 1) * PERIOD_S + 0.005, 0.01)
    motion = random_motion(config.load_model(), PERIOD_S, HARMONICS, t_s % PERIOD_S, SEED)
    return followed(robot_name, truth, t_s, motion, PERIOD_S, HARMONICS, PERIODS, f"simulated sensors, {SOURCE}",
                    lead_in=True)


def followed(robot_name: str, truth: TrueDynamics, t_s: np.ndarray, motion: tuple[np.ndarray, ...], period_s: float,
             harmonics: int | None, periods: int, source: str, lead_in: bool = False) -> SyntheticRun:
    """`periods` periods (after one lead-in, kept too with `lead_in`) of a periodic motion (q, dq, ddq at t_s, at
    least periods + 1 of them) as the true robot follows it in MuJoCo under its tracking controller, at the config's
    state rate, with the velocities it measures. The command ends at rest, as the joint trajectory controller
    requires: a braking tail after the motion's last point, past the samples kept."""
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
    samples = [sim.advance() for _ in range((periods + 1) * per_period)][0 if lead_in else per_period - 1:-1]
    t = np.array([s.t_s for s in samples])
    return SyntheticRun(config.joint_names, t - t[0], np.array([s.q_rad for s in samples]),
                        np.array([s.effort_nm for s in samples]), period_s, harmonics, source,
                        np.array([s.dq_rad_s for s in samples]))


def rms_percent(predicted_nm: np.ndarray, reference_nm: np.ndarray) -> np.ndarray:
    """(n,) RMS of the error per joint in % of the reference's RMS."""
    return 100.0 * np.sqrt(np.mean((predicted_nm - reference_nm) ** 2, axis=0) / np.mean(reference_nm**2, axis=0))


def predicted_torques_nm(robot_name: str, written: pathlib.Path, dt_s: float,
                         motion: tuple[np.ndarray, np.ndarray, np.ndarray], kept: slice) -> dict[str, np.ndarray]:
    """MODELS' torques on a motion sampled every dt_s from a lead-in on, through the robot's torque filter, at the
    samples kept."""
    config = load_robot_config(robot_name)
    joints = config.joint_names
    unfiltered = {"urdf": rigid_body_torque_nm(arm_model(config.urdf_path, joints), *motion),
                  "identified": written_torque_nm(written, joints, *motion)}
    return {key: first_order_lowpass(tau, dt_s, config.torque_filter_time_constant_s)[kept]
            for key, tau in unfiltered.items()}


def errors_against_truth(robot_name: str, written: str | os.PathLike, truth: TrueDynamics,
                         simulated: bool = True) -> dict[str, TruthErrors]:
    """Torque errors of the nominal URDF and of the model files in `written` (identified.urdf, identified.yaml)
    against the true model and, with `simulated`, against the simulated sensors (a MuJoCo run), on the same
    motion."""
    joints, written = load_robot_config(robot_name).joint_names, pathlib.Path(written)
    t_s, motion, kept = check_motion(robot_name)
    true_nm = true_model_run(robot_name, truth).tau_nm
    errors = {"true model": (predicted_torques_nm(robot_name, written, float(t_s[1] - t_s[0]), motion, kept), true_nm)}
    if simulated:
        run = simulated_run(robot_name, truth)
        dt_s = float(run.t_s[1] - run.t_s[0])
        lead = round(PERIOD_S / dt_s) - 1  # the lead-in's samples: the first kept one is at PERIOD_S (followed)
        measured = (run.q_rad, run.dq_rad_s, np.gradient(run.dq_rad_s, dt_s, axis=0))
        errors["simulated sensors"] = (predicted_torques_nm(robot_name, written, dt_s, measured, slice(lead, None)),
                                       run.tau_nm[lead:])
    return {name: TruthErrors(joints, {key: rms_percent(tau, reference) for key, tau in predicted.items()})
            for name, (predicted, reference) in errors.items()}


def check_against_truth(robot_name: str, written: str | os.PathLike, truth_path: str | os.PathLike,
                        simulated: bool = True) -> dict[str, TruthErrors]:
    """errors_against_truth of the model files in the folder `written` against the truth file the simulator
    wrote."""
    return errors_against_truth(robot_name, written, load_truth(truth_path), simulated)
