"""What the robot's sensors make of the true joint state: encoder noise and quantisation, torque-sensor offset
and noise, the LBR's first-order measured-torque filter, and dropped messages."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SensorOptions:
    torque_noise_nm: tuple[float, ...] | float = 0.0     # σ of white torque noise per filter step, one or per joint
    encoder_noise_rad: float = 0.0                      # σ of white position noise
    encoder_resolution_rad: float = 0.0                 # quantisation step of the published position (0: none)
    torque_filter_time_constant_s: float = 0.0          # first-order low-pass of the measured torque (0: off)
    drop_probability: float = 0.0                       # chance that a joint state message is not published
    seed: int = 0

    def problems(self, n_joints: int) -> list[str]:
        """What is wrong with these options, one line each."""
        noise = np.atleast_1d(np.asarray(self.torque_noise_nm, dtype=float))
        problems = []
        if noise.size not in (1, n_joints) or not np.all(noise >= 0.0):
            problems.append(f"torque_noise_nm must be one value or {n_joints} values, all >= 0")
        for name in ("encoder_noise_rad", "encoder_resolution_rad", "torque_filter_time_constant_s"):
            if not getattr(self, name) >= 0.0:
                problems.append(f"{name} must be >= 0")
        if not 0.0 <= self.drop_probability < 1.0:
            problems.append("drop_probability must be in [0, 1)")
        return problems


@dataclass(frozen=True)
class Measurement:
    """One published joint state: sim time [s], position [rad], velocity [rad/s], effort [Nm]."""

    t_s: float
    q_rad: np.ndarray
    dq_rad_s: np.ndarray
    effort_nm: np.ndarray


class Sensors:
    """Turns the true state into published measurements (None for a dropped message). The torque sensors read
    every filter step of dt_s (the robot's control cycle: the simulator's physics step), where the robot's
    filter runs; a published sample holds the filter's output at that moment, as the LBR's measured torque does."""

    def __init__(self, options: SensorOptions, torque_offset_nm: np.ndarray, dt_s: float) -> None:
        problems = options.problems(len(torque_offset_nm))
        if problems:
            raise ValueError("; ".join(problems))
        self.options = options
        self.offset_nm = np.asarray(torque_offset_nm, dtype=float)
        self.torque_noise_nm = np.broadcast_to(np.asarray(options.torque_noise_nm, float), self.offset_nm.shape)
        tau = options.torque_filter_time_constant_s
        self.alpha = 1.0 if tau == 0.0 else -math.expm1(-dt_s / tau)
        self.rng = np.random.default_rng(options.seed)
        self.filtered_nm: np.ndarray | None = None

    def sense_torque(self, tau_nm: np.ndarray) -> None:
        """One filter step: the joint torque over the last dt_s, with the sensor's offset and white noise."""
        raw = tau_nm + self.offset_nm + self.torque_noise_nm * self.rng.normal(size=tau_nm.shape)
        if self.filtered_nm is None:
            self.filtered_nm = raw.copy()
        else:
            self.filtered_nm = self.filtered_nm + self.alpha * (raw - self.filtered_nm)

    def measure(self, t_s: float, q_rad: np.ndarray, dq_rad_s: np.ndarray) -> Measurement | None:
        """The published joint state at t_s: the encoders' reading of (q, dq) and the filtered torque."""
        if self.filtered_nm is None:
            raise RuntimeError("measure before the first sense_torque")
        o = self.options
        q = q_rad + o.encoder_noise_rad * self.rng.normal(size=q_rad.shape)
        if o.encoder_resolution_rad > 0.0:
            q = np.round(q / o.encoder_resolution_rad) * o.encoder_resolution_rad
        if o.drop_probability > 0.0 and self.rng.random() < o.drop_probability:
            return None
        return Measurement(t_s, q, dq_rad_s.copy(), self.filtered_nm.copy())
