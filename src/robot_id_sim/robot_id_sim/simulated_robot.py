"""The simulated arm without ROS: MuJoCo physics of the true robot, a joint trajectory follower, a joint-level
tracking controller and the sensors, advanced one published sample at a time."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from robot_id_model.robot_config import RobotConfig
from robot_id_model.robot_model import RobotModel
from robot_id_sim.joint_trajectory_controller import ControllerParameters
from robot_id_sim.mujoco_plant import MujocoPlant
from robot_id_sim.sensors import Measurement, SensorOptions, Sensors
from robot_id_sim.trajectory_follower import TrajectoryCommand, TrajectoryFollower
from robot_id_sim.true_dynamics import TrueDynamics

MAX_FUTURE_S = 10.0
"""A trajectory stamped further ahead than this, or further before the robot's time 0, is refused: its publisher is
on another clock."""


@dataclass(frozen=True)
class SimSettings:
    state_rate_hz: float                  # published joint states per second of sim time
    physics_rate_hz: float = 2000.0       # MuJoCo steps per second (rounded to a multiple of the state rate)
    tracking_bandwidth_hz: float = 15.0   # natural frequency of the tracking error dynamics
    tracking_damping: float = 1.0         # its damping ratio

    def problems(self) -> list[str]:
        """What is wrong with these settings, one line each."""
        problems = []
        if not 0.0 < self.state_rate_hz <= self.physics_rate_hz:
            problems.append(f"state_rate_hz must be in (0, physics_rate_hz = {self.physics_rate_hz:g}]")
        if not 0.0 < self.tracking_bandwidth_hz < self.physics_rate_hz / 20.0:
            problems.append("tracking_bandwidth_hz must be positive and below physics_rate_hz / 20")
        if not self.tracking_damping > 0.0:
            problems.append("tracking_damping must be positive")
        return problems


INTEGRAL_BAND_RAD = 0.05
"""The tracking controller integrates a joint's error only while it is below this (a load the nominal model misses
sags a wrist joint by about 0.02 rad), as position loops separate their integral from large errors."""
MOVING_RAD_S = 1e-3
"""... and only while the joint is commanded to move: held at rest in static friction, an integral winds up until
the joint breaks loose, again and again (hunting), where a robot rests."""


class TrackingController:
    """PID with the nominal model's feed-forward, in computed-torque form:
    τ = (M̂(q) + Ia)·(ddq_d + ω²·e + 2ζω·de + ω³/100·∫e dt) + ĥ(q, dq), e = q_d − q, saturated at the torque limits.

    M̂, ĥ are the nominal URDF's (the controller does not know the true links, payload or friction); Ia is the
    rotor inertia, which a drive is tuned for. Scaling the gains by the whole mass matrix keeps the loop stable
    where decentralised gains are not (Panda with joints 1 and 3 aligned: the inverse mass matrix is large). The
    integral, a pole near ω/100 beside the PD pair's (slow: at ω/10 it changed how the joints stick at reversals, the
    demo's A1 19 → 28 % off the simulated sensors), holds a pose under a load the model does not know, as a robot's
    position loop does (without it a 2.8 kg load on the simulated iiwa14's flange left joint 6 0.023 rad below its
    start pose); it integrates only near the desired motion (INTEGRAL_BAND_RAD), while it moves (MOVING_RAD_S) and
    with the torque not saturated, so that a fault (a blocked joint, a leap of the trajectory) does not wind it up and
    static friction does not make it hunt; it starts settled (settle)."""

    def __init__(self, nominal: RobotModel, armature_kg_m2: np.ndarray, bandwidth_hz: float, damping: float,
                 torque_limits_nm: np.ndarray) -> None:
        self.model, self.data = nominal.model, nominal.model.createData()
        self.configuration = nominal.configuration
        self.armature_kg_m2 = np.asarray(armature_kg_m2, dtype=float)
        omega = 2.0 * math.pi * bandwidth_hz
        self.kp, self.kd, self.ki = omega**2, 2.0 * damping * omega, omega**3 / 100.0
        self.torque_limits_nm = np.asarray(torque_limits_nm, dtype=float)
        self.lower_torque_nm = -self.torque_limits_nm
        self.error_integral_rad_s = np.zeros(nominal.model.nv)

    def settle(self, q_rad: np.ndarray, gravity_nm: np.ndarray) -> None:
        """Start as a loop that has held `q_rad` at rest for a while: its integral holds what the nominal model's
        gravity misses of the true `gravity_nm` there."""
        mass = pin.crba(self.model, self.data, self.configuration(q_rad))
        mass = np.triu(mass) + np.triu(mass, 1).T + np.diag(self.armature_kg_m2)
        nominal = pin.computeGeneralizedGravity(self.model, self.data, self.configuration(q_rad))
        self.error_integral_rad_s = np.linalg.solve(mass, gravity_nm - nominal) / self.ki

    def torque_nm(self, q_rad: np.ndarray, dq_rad_s: np.ndarray, desired: tuple[np.ndarray, ...],
                  dt_s: float) -> np.ndarray:
        """The drive torque at this state; the error's integral advanced by `dt_s` where it integrates (the class
        docstring)."""
        q_d, dq_d, ddq_d = desired
        error_rad = q_d - q_rad
        ddq_ref = (ddq_d + self.kp * error_rad + self.kd * (dq_d - dq_rad_s)
                   + self.ki * (self.error_integral_rad_s + error_rad * dt_s))
        tau = pin.rnea(self.model, self.data, self.configuration(q_rad), dq_rad_s, ddq_ref)
        tau = tau + self.armature_kg_m2 * ddq_ref
        near = ((np.abs(tau) < self.torque_limits_nm) & (np.abs(error_rad) < INTEGRAL_BAND_RAD)
                & (np.abs(dq_d) > MOVING_RAD_S))
        integral = self.error_integral_rad_s.copy()
        np.add(integral, error_rad * dt_s, out=integral, where=near)  # np.where and np.clip: 3 µs each, per step
        self.error_integral_rad_s = integral
        return np.minimum(np.maximum(tau, self.lower_torque_nm), self.torque_limits_nm)


class SimulatedRobot:
    """Advance the true robot by one published sample at a time, following trajectory commands."""

    def __init__(self, config: RobotConfig, nominal: RobotModel, urdf_text: str, truth: TrueDynamics,
                 settings: SimSettings, sensors: SensorOptions, q0_rad: np.ndarray,
                 controller: ControllerParameters | None = None) -> None:
        """controller: the joint trajectory controller's parameters (None: its defaults for the config's joints)."""
        problems = settings.problems()
        if problems:
            raise ValueError("; ".join(problems))
        self.substeps = max(round(settings.physics_rate_hz / settings.state_rate_hz), 1)
        self.dt_s = 1.0 / settings.state_rate_hz
        self.plant = MujocoPlant(urdf_text, config.joint_names, config.gravity_m_s2, truth,
                                 self.dt_s / self.substeps)
        self.plant.reset(q0_rad)
        limits = config.limits
        self.follower = TrajectoryFollower(config.joint_names, limits.position_lower_rad, limits.position_upper_rad,
                                           limits.velocity_rad_s, controller=controller)
        self.follower.hold(q0_rad)
        self.controller = TrackingController(nominal, truth.armature_kg_m2, settings.tracking_bandwidth_hz,
                                             settings.tracking_damping, limits.torque_nm)
        self.controller.settle(q0_rad, self.plant.gravity_nm())
        self.sensors = Sensors(sensors, truth.torque_offset_nm, self.dt_s / self.substeps)
        self.samples = 0
        self.constraint_failure: str | None = None
        """What the joint trajectory controller logged at the last sample when its constraints failed (it holds)."""
        self.tau_drive_nm = self._control(0.0, 0.0)
        self.sensors.sense_torque(self.tau_drive_nm)

    @property
    def t_s(self) -> float:
        """Sim time of the last published sample."""
        return self.samples * self.dt_s

    def command(self, command: TrajectoryCommand) -> str | None:
        """Follow a new trajectory from now; the reason it was refused, or None."""
        if command.stamp_s > self.t_s + MAX_FUTURE_S:
            return (f"the trajectory starts {command.stamp_s - self.t_s:.1f} s after the simulator's time "
                    f"{self.t_s:.3f} s: its publisher is on another clock (set use_sim_time)")
        if command.stamp_s < -MAX_FUTURE_S:
            return (f"the trajectory starts {-command.stamp_s:.1f} s before the simulator started: its publisher is "
                    "on another clock (use_sim_time, with a simulator on the wall clock?)")
        return self.follower.command(self.t_s, command, (self.plant.q_rad, self.plant.dq_rad_s, None))

    def block_joint(self, name: str) -> None:
        """A fault: the joint `name` stops where it is and moves no more, whatever is commanded (MujocoPlant.block)."""
        self.plant.block(self.follower.joint_names.index(name))

    def tracking_error_rad(self) -> np.ndarray:
        """Desired minus true joint position now."""
        return self.follower.desired(self.t_s)[0] - self.plant.q_rad

    def advance(self) -> Measurement | None:
        """Simulate one state period; the measurement published at its end (None when it is dropped)."""
        t0 = self.t_s
        for k in range(1, self.substeps + 1):
            self.plant.step(self.tau_drive_nm)
            self.tau_drive_nm = self._control(t0 + k * self.dt_s / self.substeps, self.dt_s / self.substeps)
            self.sensors.sense_torque(self.tau_drive_nm)
        self.samples += 1
        self.constraint_failure = self.follower.constraint_failure(self.t_s, self.plant.q_rad, self.plant.dq_rad_s)
        return self.sensors.measure(self.t_s, self.plant.q_rad, self.plant.dq_rad_s)

    def _control(self, t_s: float, dt_s: float) -> np.ndarray:
        """The drive torque from now until the next physics step (`dt_s` after the last), computed at the present
        state: with that state it is what the joint torque sensors read (link side, gravity included)."""
        return self.controller.torque_nm(self.plant.q_rad, self.plant.dq_rad_s, self.follower.desired(t_s), dt_s)
