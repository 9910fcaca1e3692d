"""Recordings of joint positions and torques from CSV files or rosbag2 bags, cleaned of what real logs contain.

A CSV has a header row: `t` [s], `q_<joint>` [rad], `tau_<joint>` [Nm] and optionally `dq_<joint>` [rad/s],
`ddq_<joint>` [rad/s²], with `<joint>` the URDF joint name; a column map (csv_columns) reads other headers.
A bag holds sensor_msgs/JointState messages and, when the robot_id recorder wrote it, the
robot_id_msgs/ExcitationTrajectory it ran (period, harmonics) and a robot_id_msgs/PeriodMarker at the start
of every period.

This module holds the data type and the entry point, load_recording; the jobs behind it have their own modules:
csv_reading (CSV files), bag_reading (rosbag2 bags) and cleaning (the repairs and refusals of messy data).
"""

from __future__ import annotations

import dataclasses
import math
import pathlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from robot_id_estimator.recordings.described_excitation import Excitation
from robot_id_model.stack_hardware import StackSensors

MIN_SAMPLES = 3
"""Fewest samples a recording may have: central differences need three."""

TIME_TOL_S = 1e-9
"""Timestamps resolve 1 ns: a sample this close to a time-window bound is inside it."""

UNMODELLED_MOTION = 0.01
"""Position range [rad, or m for a prismatic joint] above which a joint left out of the model counts as moving."""


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


def load_recording(
    path: str | pathlib.Path,
    joint_names: Sequence[str] | None = None,
    period_s: float | None = None,
    *,
    columns: Mapping[str, str] | None = None,
    start_s: float | None = None,
    end_s: float | None = None,
    unmodelled_motion_ok: bool = False,
    arm_joints: Sequence[str] | None = None,
) -> Recording:
    """Load a CSV file or a rosbag2 bag (directory, or its .db3/.mcap file) and clean it.

    `joint_names` selects and orders the joints (default: all, in file order, or the joints of the bag's
    trajectory description). `period_s` declares the data periodic and overrides a bag's description. Gaps are
    interpolated up to cleaning.MAX_GAP_S in a CSV file and up to the recorder's longest usable gap in a bag
    (robot_id_contract.period_index.longest_usable_gap_s: 5 % of the highest harmonic's period).
    `columns` maps our CSV column names to the file's (see csv_columns; CSV only). `start_s` and `end_s` keep
    only the samples in [start_s, end_s], in seconds from the first sample of the cleaned recording (for a bag,
    after its cut to whole periods). Joints in the data but not in `joint_names` must not move (their motion
    acts on the torques of the selected joints) unless `unmodelled_motion_ok`, which notes it instead.
    `arm_joints` are all the arm's joints in order, which a column map's {i} numbers (default: joint_names), so
    that a subset in `joint_names` reads its own columns and the others are checked for motion.
    Raises DataError with the reason when the file cannot be used.
    """
    # The readers and the cleaning build on Recording and DataError, so they import this module: imported here.
    from robot_id_estimator.recordings.bag_reading import read_bag
    from robot_id_estimator.recordings.cleaning import MAX_GAP_S, clean
    from robot_id_estimator.recordings.csv_reading import read_csv

    path = pathlib.Path(path)
    if period_s is not None and not 0.0 < period_s < math.inf:
        raise DataError(f"{path}: the period must be positive and finite, got {period_s} s")
    _check_window(path, start_s, end_s)
    if path.is_dir() or path.suffix in (".db3", ".mcap"):
        if columns:
            raise DataError(f"{path}: a column map applies to CSV files, not to a rosbag2 bag")
        rec, unselected, max_gap_s = read_bag(path, joint_names, period_s)
    elif path.suffix.lower() == ".csv":
        max_gap_s = MAX_GAP_S
        rec, unselected = read_csv(path, joint_names, period_s, columns, arm_joints)
    elif not path.exists():
        raise DataError(f"{path}: no such file or directory")
    else:
        raise DataError(f"{path}: unknown format; give a .csv file or a rosbag2 bag (directory, .db3 or .mcap)")
    rec = _window(clean(rec, max_gap_s), start_s, end_s)
    return _check_unmodelled_motion(rec, unselected, unmodelled_motion_ok)


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


def _check_window(path: pathlib.Path, start_s: float | None, end_s: float | None) -> None:
    for name, value in (("start", start_s), ("end", end_s)):
        if value is not None and not value >= 0.0:
            raise DataError(f"{path}: the time window's {name} must be ≥ 0 s (seconds from the first sample), "
                            f"got {value:g} s")
    if start_s is not None and end_s is not None and not start_s < end_s:
        raise DataError(f"{path}: the time window's start {start_s:g} s must come before its end {end_s:g} s")


def _window(rec: Recording, start_s: float | None, end_s: float | None) -> Recording:
    """The samples in [start_s, end_s] seconds from the first sample, with a note; the whole recording if neither."""
    if start_s is None and end_s is None:
        return rec
    length_s = float(rec.t_s[-1] - rec.t_s[0])
    start = 0.0 if start_s is None else start_s
    end = length_s if end_s is None else end_s
    half_step_s = 0.5 * float(np.median(np.diff(rec.t_s)))
    for name, value, limit in (("start", start, length_s), ("end", end, length_s + half_step_s)):
        if value > limit:
            raise DataError(f"{rec.source}: the time window's {name} {value:g} s is beyond the recording's length "
                            f"of {length_s:.6g} s (times count from its first sample)")
    since_s = rec.t_s - rec.t_s[0]
    keep = (since_s >= start - TIME_TOL_S) & (since_s <= end + TIME_TOL_S)
    if np.count_nonzero(keep) < MIN_SAMPLES:
        raise DataError(f"{rec.source}: the time window {start:g}–{end:g} s holds {np.count_nonzero(keep)} "
                        f"sample(s); a recording needs at least {MIN_SAMPLES}")
    signals = {key: x[keep] for key, x in rec.signal_arrays().items()}
    end_text = f"{end:g}" if end_s is not None else f"{length_s:.1f}"
    return dataclasses.replace(
        rec,
        t_s=rec.t_s[keep],
        q_rad=signals["q"],
        tau_nm=signals["tau"],
        dq_rad_s=signals.get("dq"),
        ddq_rad_s2=signals.get("ddq"),
        repairs=(*rec.repairs, f"kept {start:g}–{end_text} s of {length_s:.1f} s "
                               f"({np.count_nonzero(keep)} of {len(keep)} samples)"),
    )


def _check_unmodelled_motion(rec: Recording, unselected: Unselected, allowed: bool) -> Recording:
    """Refuse (or, when `allowed`, note) joints left out of the model that move while the recording runs."""
    during = (unselected.t_s >= rec.t_s[0] - TIME_TOL_S) & (unselected.t_s <= rec.t_s[-1] + TIME_TOL_S)
    moving = []
    for name, q in zip(unselected.names, unselected.q[during].T, strict=True):
        finite = q[np.isfinite(q)]
        if finite.size and np.ptp(finite) > UNMODELLED_MOTION:
            moving.append(f"{name} (range {np.ptp(finite):.3g})")
    if not moving:
        return rec
    what = (f"joints not in the model move: {', '.join(moving)} [rad, or m if prismatic]; their motion acts on "
            f"the torques of the selected joints {list(rec.joint_names)}")
    if not allowed:
        raise DataError(f"{rec.source}: {what}; model them (--urdf with --joints listing them), or pass "
                        "--allow-unmodelled-motion to use the data anyway")
    return dataclasses.replace(rec, repairs=(*rec.repairs, f"{what} (allowed by --allow-unmodelled-motion)"))
