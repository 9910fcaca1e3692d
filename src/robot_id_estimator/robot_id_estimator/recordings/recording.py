"""Recordings of joint positions and torques from CSV files or rosbag2 bags, cleaned of what real logs contain.

A CSV has a header row: `t` [s], `q_<joint>` [rad], `tau_<joint>` [Nm] and optionally `dq_<joint>` [rad/s],
`ddq_<joint>` [rad/s²], with `<joint>` the URDF joint name; a column map (csv_columns) reads other headers.
A bag holds sensor_msgs/JointState messages and, when the robot_id recorder wrote it, the
robot_id_msgs/ExcitationTrajectory it ran (period, harmonics) and a robot_id_msgs/PeriodMarker at the start
of every period.

This module holds the data type, what every reader shares and save_csv; the readers build on it: csv_reading (CSV
files), bag_reading (rosbag2 bags), cleaning (the repairs and refusals of messy data), and loading.load_recording,
the entry point that dispatches to them.
"""

from __future__ import annotations

import pathlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robot_id_estimator.recordings.described_excitation import Excitation
from robot_id_model.stack_hardware import StackSensors

MIN_SAMPLES = 3
"""Fewest samples a recording may have: central differences need three."""

TIME_TOL_S = 1e-9
"""Timestamps resolve 1 ns: a sample this close to a time-window bound is inside it."""


class DataError(ValueError):
    """Messy data that cannot be repaired; the message says what and where."""


@dataclass(frozen=True)
class Recording:
    """Joint positions and torques over time, with what is known about the excitation that produced them."""

    joint_names: tuple[str, ...]
    t_s: np.ndarray
    """(K,) strictly increasing sample times [s]."""
    q_rad: np.ndarray
    tau_nm: np.ndarray
    dq_rad_s: np.ndarray | None
    """Logged joint velocities, (K, n), when the source has them."""
    ddq_rad_s2: np.ndarray | None
    period_s: float | None
    """Period of the excitation: from the trajectory description in a bag, or given by the user."""
    harmonics: int | None
    """Number of excited harmonics of 1/period_s when the description is a finite Fourier series."""
    source: str
    repairs: tuple[str, ...]
    """Everything loading and cleaning did to the data, in words."""
    non_periodic_reason: str | None = None
    """Why periodic data must be processed as non-periodic (a bag whose periods the recorder all flagged)."""
    excitation: Excitation | None = None
    """The excitation it ran, where a bag's recorder described it."""
    stack: StackSensors | None = None
    """The torque filter and loop mode the robot's stack announced, where a bag holds its robot_description."""

    @classmethod
    def of_arrays(cls, joint_names: Sequence[str], t_s: np.ndarray, q_rad: np.ndarray, tau_nm: np.ndarray,
                  period_s: float | None = None, harmonics: int | None = None, source: str = "arrays",
                  dq_rad_s: np.ndarray | None = None) -> Recording:
        """A recording of arrays in hand (a Python caller's, the lab's synthetic runs): positions, torques and
        optionally velocities, with the period and harmonics where known; nothing repaired."""
        return cls(tuple(joint_names), t_s, q_rad, tau_nm, dq_rad_s, None, period_s, harmonics, source, ())

    def signal_arrays(self) -> dict[str, np.ndarray]:
        """Copies of the per-joint signals present, as float arrays, keyed q, dq, ddq, tau."""
        arrays = {"q": self.q_rad, "dq": self.dq_rad_s, "ddq": self.ddq_rad_s2, "tau": self.tau_nm}
        return {key: np.array(value, dtype=float) for key, value in arrays.items() if value is not None}


@dataclass(frozen=True)
class Unselected:
    """Positions of the joints in the data that joint_names leaves out, on the recording's time base."""

    names: tuple[str, ...]
    t_s: np.ndarray
    q: np.ndarray
    """(K, len(names)) [rad, or m for a prismatic joint]; NaN where a message lacks the joint."""


def save_csv(rec: Recording, path: str | pathlib.Path) -> pathlib.Path:
    """Write a recording in the CSV layout load_recording reads: t, q_<joint>..., [dq_..., ddq_...,] tau_<joint>..."""
    columns, header = [rec.t_s], ["t"]
    for signal, values in (("q", rec.q_rad), ("dq", rec.dq_rad_s), ("ddq", rec.ddq_rad_s2), ("tau", rec.tau_nm)):
        if values is not None:
            columns.append(values)
            header += [f"{signal}_{joint}" for joint in rec.joint_names]
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savetxt(path, np.column_stack(columns), delimiter=",", header=",".join(header), comments="", fmt="%.10g")
    return path


def select_joints(source: str, available: Sequence[str], wanted: Sequence[str] | None) -> list[str]:
    """The joints `wanted` (default: all `available`, in their order); DataError names unknown or repeated ones."""
    if wanted is None:
        return list(available)
    missing = [name for name in wanted if name not in available]
    if missing:
        raise DataError(f"{source}: no joint named {missing}; the joints in the data are {list(available)}")
    if len(set(wanted)) != len(wanted):
        raise DataError(f"{source}: joint names must be distinct, got {list(wanted)}")
    return list(wanted)


