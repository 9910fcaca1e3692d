"""load_recording: a CSV file or a rosbag2 bag read (csv_reading, bag_reading), cleaned (cleaning), cut to a time
window and checked for motion of joints outside the model."""

from __future__ import annotations

import dataclasses
import math
import pathlib
from collections.abc import Mapping, Sequence

import numpy as np

from robot_id_estimator.recordings.recording import MIN_SAMPLES, TIME_TOL_S, DataError, Recording, Unselected

UNMODELLED_MOTION = 0.01
"""Position range [rad, or m for a prismatic joint] above which a joint left out of the model counts as moving."""


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
    # The readers imported here, not at the top: the command lines answer --help without rosbags.
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
