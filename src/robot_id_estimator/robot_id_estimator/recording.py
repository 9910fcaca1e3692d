"""Recordings of joint positions and torques from CSV files or rosbag2 bags, cleaned of what real logs contain.

A CSV has a header row: `t` [s], `q_<joint>` [rad], `tau_<joint>` [Nm] and optionally `dq_<joint>` [rad/s],
`ddq_<joint>` [rad/s²], with `<joint>` the URDF joint name; a column map (csv_columns) reads other headers.
A bag holds sensor_msgs/JointState messages and, when the robot_id recorder wrote it, the
robot_id_msgs/ExcitationTrajectory it ran (period, harmonics) and a robot_id_msgs/PeriodMarker at the start
of every period.
"""

from __future__ import annotations

import csv
import dataclasses
import math
import pathlib
import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.interpolate
from rosbags.rosbag2 import Reader, ReaderError
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

from robot_id_estimator.csv_columns import SIGNALS, TIME, DataError, resolve_columns

MIN_SAMPLES = 3
"""Fewest samples a recording may have: central differences need three."""

UNIFORM_TOL = 1e-4
"""Sample intervals within this relative deviation of their median count as a uniform grid (timestamps
quantised to 1 ns stay uniform up to 10 kHz)."""

RATE_ROUNDING = 0.005
"""Resampling rates are rounded to few significant digits when that changes them by at most this fraction."""

TIME_TOL_S = 1e-9
"""Timestamps resolve 1 ns: a sample this close to a time-window bound is inside it."""

UNMODELLED_MOTION = 0.01
"""Position range [rad, or m for a prismatic joint] above which a joint left out of the model counts as moving."""

SHORT_GAP_FACTOR = 1.5
"""A sample interval longer than this many median intervals is reported as a gap (a sample is probably
missing there); gaps up to max_gap_s are interpolated."""

JOINT_STATE = "sensor_msgs/msg/JointState"
EXCITATION = "robot_id_msgs/msg/ExcitationTrajectory"
PERIOD_MARKER = "robot_id_msgs/msg/PeriodMarker"


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


@dataclass(frozen=True)
class _Unselected:
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
    trajectory description). `period_s` declares the data periodic and overrides a bag's description.
    `columns` maps our CSV column names to the file's (see csv_columns; CSV only). `start_s` and `end_s` keep
    only the samples in [start_s, end_s], in seconds from the first sample of the cleaned recording (for a bag,
    after its cut to whole periods). Joints in the data but not in `joint_names` must not move (their motion
    acts on the torques of the selected joints) unless `unmodelled_motion_ok`, which notes it instead.
    `arm_joints` are all the arm's joints in order, which a column map's {i} numbers (default: joint_names), so
    that a subset in `joint_names` reads its own columns and the others are checked for motion.
    Raises DataError with the reason when the file cannot be used.
    """
    path = pathlib.Path(path)
    if period_s is not None and not 0.0 < period_s < math.inf:
        raise DataError(f"{path}: the period must be positive and finite, got {period_s} s")
    _check_window(path, start_s, end_s)
    if path.is_dir() or path.suffix in (".db3", ".mcap"):
        if columns:
            raise DataError(f"{path}: a column map applies to CSV files, not to a rosbag2 bag")
        rec, unselected = _read_bag(path, joint_names, period_s)
    elif path.suffix.lower() == ".csv":
        rec, unselected = _read_csv(path, joint_names, period_s, columns, arm_joints)
    elif not path.exists():
        raise DataError(f"{path}: no such file or directory")
    else:
        raise DataError(f"{path}: unknown format; give a .csv file or a rosbag2 bag (directory, .db3 or .mcap)")
    rec = _window(clean(rec), start_s, end_s)
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


def _select_joints(source: str, available: Sequence[str], wanted: Sequence[str] | None) -> list[str]:
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
    signals = {key: x[keep] for key, x in _signals(rec).items()}
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


def _check_unmodelled_motion(rec: Recording, unselected: _Unselected, allowed: bool) -> Recording:
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


# ---------------------------------------------------------------------------------------------- CSV


def _read_csv(
    path: pathlib.Path, joint_names: Sequence[str] | None, period_s: float | None, column_map: Mapping[str, str] | None,
    arm_joints: Sequence[str] | None,
) -> tuple[Recording, _Unselected]:
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    with path.open(newline="") as f:
        header = [name.strip() for name in next(csv.reader(f), [])]
    if not header:
        raise DataError(f"{path}: empty file; expected a header row t,q_<joint>,...,tau_<joint>,...")
    columns, unused = resolve_columns(str(path), header, column_map, arm_joints or joint_names)
    if TIME not in columns:
        raise DataError(f"{path}: no 't' column (time in seconds; map one with t=<column>); the header is {header}")
    available = [name[2:] for name in columns if name.startswith("q_")]
    if not available:
        raise DataError(f"{path}: no q_<joint> column; the header is {header}")
    joints = _select_joints(str(path), available, joint_names)
    missing = [f"tau_{j}" for j in joints if f"tau_{j}" not in columns]
    if missing:
        raise DataError(f"{path}: no torque column {missing}; every joint needs q_<joint> and tau_<joint>")

    data, repairs = _csv_values(path, len(header))
    if unused:
        repairs.append(f"ignored CSV columns {unused}")
    signals: dict[str, np.ndarray | None] = {}
    for signal in SIGNALS:
        names = [f"{signal}_{j}" for j in joints]
        present = [name for name in names if name in columns]
        if len(present) == len(names):
            signals[signal] = data[:, [columns[name] for name in names]]
        else:
            signals[signal] = None
            if present:
                repairs.append(f"ignored {present}: {signal} is not given for every joint")
    others = [j for j in available if j not in joints]
    unselected = _Unselected(tuple(others), data[:, columns[TIME]], data[:, [columns[f"q_{j}"] for j in others]])
    return Recording(
        joint_names=tuple(joints),
        t_s=data[:, columns[TIME]],
        q_rad=signals["q"],
        tau_nm=signals["tau"],
        dq_rad_s=signals["dq"],
        ddq_rad_s2=signals["ddq"],
        period_s=period_s,
        harmonics=None,
        source=str(path),
        repairs=tuple(repairs),
    ), unselected


def _csv_values(path: pathlib.Path, n_columns: int) -> tuple[np.ndarray, list[str]]:
    """Numbers below the header; empty fields become NaN, a truncated last line (logger stopped) is dropped."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # a header without rows: refused later as too short
            data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    except ValueError:
        pass
    else:
        if data.shape[1] != n_columns and data.size:
            raise DataError(f"{path}: rows have {data.shape[1]} fields, the header has {n_columns}")
        return data.reshape(-1, n_columns), []
    rows, repairs = [], []
    with path.open(newline="") as f:
        lines = list(csv.reader(f))[1:]
    for number, fields in enumerate(lines, start=2):
        if not fields:
            continue
        if len(fields) != n_columns:
            if number == len(lines) + 1:
                repairs.append(f"dropped the truncated last line {number} ({len(fields)} of {n_columns} fields)")
                continue
            raise DataError(f"{path}: line {number} has {len(fields)} fields, the header has {n_columns}")
        try:
            rows.append([float(x) if x.strip() else math.nan for x in fields])
        except ValueError as err:
            raise DataError(f"{path}: line {number}: {err}") from None
    return np.array(rows, dtype=float).reshape(-1, n_columns), repairs


# ---------------------------------------------------------------------------------------------- bags


def _msg_directory() -> pathlib.Path | None:
    """robot_id_msgs' .msg files: installed share directory, else the source tree next to this package."""
    try:
        from ament_index_python.packages import get_package_share_directory

        installed = pathlib.Path(get_package_share_directory("robot_id_msgs")) / "msg"
    except (ImportError, LookupError, OSError):  # no ament index, package not installed, AMENT_PREFIX_PATH unset
        installed = None
    if installed is not None and installed.is_dir():
        return installed
    source = pathlib.Path(__file__).resolve().parents[2] / "robot_id_msgs" / "msg"
    return source if source.is_dir() else None


def robot_id_typestore() -> Typestore:
    """The ROS 2 message types of rosbags plus robot_id_msgs (registered from their .msg text when found)."""
    store = get_typestore(Stores.ROS2_KILTED)
    directory = _msg_directory()
    if directory is not None:
        types = {}
        for msg in sorted(directory.glob("*.msg")):
            types.update(get_types_from_msg(msg.read_text(), f"robot_id_msgs/msg/{msg.stem}"))
        store.register(types)
    return store


def _stamp_ns(stamp: object) -> int:
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


def _config_topic(robot: str) -> str | None:
    """The joint-states topic of a robot config, when the installed workspace knows the robot."""
    from robot_id_model.robot_config import load_robot_config
    from robot_id_model.robot_model import ModelError

    try:
        return load_robot_config(robot).joint_states_topic
    except ModelError:
        return None


def _read_bag(
    path: pathlib.Path, joint_names: Sequence[str] | None, period_s: float | None
) -> tuple[Recording, _Unselected]:
    directory = path if path.is_dir() else path.parent
    store = robot_id_typestore()
    repairs: list[str] = []
    try:
        with Reader(directory) as reader:
            by_type: dict[str, list] = {}
            for connection in reader.connections:
                by_type.setdefault(connection.msgtype, []).append(connection)
            states = by_type.get(JOINT_STATE, [])
            if not states:
                found = sorted({(c.topic, c.msgtype) for c in reader.connections})
                raise DataError(f"{path}: no {JOINT_STATE} topic in the bag; it holds {found}")
            unknown = [name for name in (EXCITATION, PERIOD_MARKER) if name in by_type and name not in store.fielddefs]
            if unknown:
                repairs.append(f"ignored {unknown}: robot_id_msgs' message definitions were not found")
            descriptions = [store.deserialize_cdr(raw, EXCITATION) for raw in _raw(reader, store, by_type, EXCITATION)]
            markers = sorted(
                (_stamp_ns(marker.header.stamp), float(marker.period_s))
                for marker in (store.deserialize_cdr(raw, PERIOD_MARKER)
                               for raw in _raw(reader, store, by_type, PERIOD_MARKER))
            )
            description = descriptions[-1] if descriptions else None
            if len(descriptions) > 1:
                repairs.append(f"the bag holds {len(descriptions)} trajectory descriptions; used the last")
            topic = _pick_topic(states, description)
            if len(states) > 1:
                repairs.append(f"read joint states from {topic.topic} ({topic.msgcount} messages) of "
                               f"{sorted(c.topic for c in states)}")
            raws = [(stamp, bytes(raw)) for _, stamp, raw in reader.messages([topic])]
    except ReaderError as err:
        raise DataError(f"{path}: not a readable rosbag2 bag ({err})") from None
    if not raws:
        raise DataError(f"{path}: {topic.topic} holds no message")

    default_joints = list(description.joint_names) if description is not None and description.joint_names else None
    t_ns, names, arrays, skipped, other_names = _joint_states(
        str(path), store, [raw for _, raw in raws], joint_names or default_joints
    )
    if skipped:
        repairs.append(f"skipped {skipped} JointState messages without all of the joints {names}")
    if not t_ns.any():
        t_ns = np.array([stamp for stamp, _ in raws], dtype=np.int64)[arrays.pop("keep")]
        repairs.append("JointState header stamps are zero: used the bag's receive times")
    else:
        arrays.pop("keep")
    if arrays["tau"] is None:
        raise DataError(f"{path}: the JointState messages on {topic.topic} carry no effort (joint torques)")
    origin_ns = int(t_ns[0])
    t_s = (t_ns - origin_ns) * 1e-9
    unselected = _Unselected(tuple(other_names), t_s, arrays["others"])

    harmonics = None
    if period_s is None and description is not None and description.period_s > 0.0:
        period_s = float(description.period_s)
        if description.kind == "fourier":
            harmonics = int(description.harmonics)
        else:
            repairs.append(f"{description.kind} excitation: its boundary terms are not band-limited, so "
                           "the harmonics are not used to limit differentiation")
    if period_s is None and description is None and markers and markers[0][1] > 0.0:
        period_s = markers[0][1]
    start_ns = markers[0][0] if markers else None
    if start_ns is None and description is not None and _stamp_ns(description.start_time) > 0:
        start_ns = _stamp_ns(description.start_time)
    keep = np.ones(len(t_s), dtype=bool)
    if period_s is not None and start_ns is not None:
        n_planned = int(description.num_periods) if description is not None else 0
        keep, note = _whole_periods(t_s, (start_ns - origin_ns) * 1e-9, period_s, n_planned)
        repairs.append(note)
    return Recording(
        joint_names=tuple(names),
        t_s=t_s[keep],
        q_rad=arrays["q"][keep],
        tau_nm=arrays["tau"][keep],
        dq_rad_s=None if arrays["dq"] is None else arrays["dq"][keep],
        ddq_rad_s2=None,
        period_s=period_s,
        harmonics=harmonics,
        source=str(path),
        repairs=tuple(repairs),
    ), unselected


def _raw(reader: Reader, store: Typestore, by_type: dict[str, list], msgtype: str) -> list[bytes]:
    """Serialised messages of one type (none when the bag has no such topic or the type is unknown)."""
    connections = by_type.get(msgtype, []) if msgtype in store.fielddefs else []
    return [raw for _, _, raw in reader.messages(connections)] if connections else []


def _pick_topic(states: list, description: object | None) -> object:
    """The robot config's joint-states topic when the description names a known robot, else the busiest."""
    if description is not None and description.robot and len(states) > 1:
        wanted = _config_topic(description.robot)
        for connection in states:
            if connection.topic == wanted:
                return connection
    return max(states, key=lambda c: c.msgcount)


def _whole_periods(t_s: np.ndarray, start_s: float, period_s: float, n_planned: int) -> tuple[np.ndarray, str]:
    """Mask of the samples of the whole periods from `start_s` on (at most `n_planned` when > 0), and a note."""
    everything = np.ones(len(t_s), dtype=bool)
    first_s, last_s = float(np.min(t_s)), float(np.max(t_s))
    if not first_s <= start_s <= last_s:
        return everything, (f"the first period starts at {start_s:.3f} s, outside the joint states "
                            f"({first_s:.3f}–{last_s:.3f} s): kept all samples")
    half_dt = 0.5 * float(np.median(np.diff(np.sort(t_s)))) if len(t_s) > 1 else 0.0
    n_periods = math.floor((last_s + half_dt - start_s) / period_s)
    if n_planned > 0:
        n_periods = min(n_periods, n_planned)
    if n_periods < 1:
        return everything, (f"less than one whole period of {period_s:g} s after the first period start at "
                            f"{start_s:.3f} s: kept all samples")
    before = t_s < start_s - half_dt
    after = t_s >= start_s + n_periods * period_s - half_dt
    return ~(before | after), (f"kept {n_periods} whole periods of {period_s:g} s from {start_s:.3f} s "
                               f"(dropped {np.count_nonzero(before)} samples before and {np.count_nonzero(after)} "
                               "after)")


def _joint_states(
    source: str, store: Typestore, raws: list[bytes], wanted: Sequence[str] | None
) -> tuple[np.ndarray, list[str], dict, int, list[str]]:
    """Stamps [ns], joint names, q/dq/tau arrays (K, n) of JointState messages, and the names of the other
    joints (of the first message), whose positions are arrays["others"] (NaN where a message lacks one);
    messages lacking a selected joint are skipped (their count is returned). arrays["keep"] indexes the
    messages used."""
    fast = _joint_states_fixed_layout(store, raws)
    if fast is not None:
        t_ns, all_names, values = fast
        names = _select_joints(source, all_names, wanted)
        others = [name for name in all_names if name not in names]
        columns = [all_names.index(name) for name in names]
        arrays = {key: None if v is None else v[:, columns] for key, v in values.items()}
        arrays["others"] = values["q"][:, [all_names.index(name) for name in others]]
        arrays["keep"] = slice(None)
        return t_ns, names, arrays, 0, others

    first = store.deserialize_cdr(raws[0], JOINT_STATE)
    names = _select_joints(source, list(first.name), wanted)
    others = [name for name in first.name if name not in names]
    t_ns, keep, rows = [], [], {"q": [], "dq": [], "tau": [], "others": []}
    show_progress = len(raws) > 20_000
    for k, raw in enumerate(raws):
        if show_progress and k % 20_000 == 0:
            print(f"\rreading joint states {100 * k // len(raws)} %", end="", file=sys.stderr, flush=True)
        msg = store.deserialize_cdr(raw, JOINT_STATE)
        index = {name: i for i, name in enumerate(msg.name)}
        if any(name not in index for name in names):
            continue
        columns = [index[name] for name in names]
        keep.append(k)
        t_ns.append(_stamp_ns(msg.header.stamp))
        for key, field in (("q", msg.position), ("dq", msg.velocity), ("tau", msg.effort)):
            rows[key].append(field[columns] if len(field) == len(msg.name) else None)
        rows["others"].append([msg.position[index[name]] if name in index and len(msg.position) == len(msg.name)
                               else math.nan for name in others])
    if show_progress:
        print("\rreading joint states 100 %", file=sys.stderr)
    if not keep:
        raise DataError(f"{source}: no JointState message holds all of the joints {names}")
    arrays = {
        key: None if any(r is None for r in value) else np.array(value, dtype=float)
        for key, value in rows.items()
    }
    if arrays["q"] is None:
        raise DataError(f"{source}: JointState messages without positions")
    arrays["keep"] = np.array(keep)
    return np.array(t_ns, dtype=np.int64), names, arrays, len(raws) - len(keep), others


def _joint_states_fixed_layout(
    store: Typestore, raws: list[bytes]
) -> tuple[np.ndarray, list[str], dict] | None:
    """Vectorised decoding when every message has the byte layout of the first (one publisher, fixed
    joints): stamps and the position/velocity/effort doubles are read at fixed offsets. None otherwise."""
    layout = _joint_state_layout(raws[0])
    size = len(raws[0])
    if layout is None or any(len(raw) != size for raw in raws):
        return None
    names, fields = layout
    table = np.frombuffer(b"".join(raws), dtype=np.uint8).reshape(len(raws), size)
    structural = np.ones(size, dtype=bool)
    structural[4:12] = False
    for offset, count in fields:
        structural[offset:offset + 8 * count] = False
    if not (table[:, structural] == table[0, structural]).all():
        return None
    values = {}
    for key, (offset, count) in zip(("q", "dq", "tau"), fields, strict=True):
        if count == len(names):
            values[key] = np.ascontiguousarray(table[:, offset:offset + 8 * count]).view("<f8").astype(float)
        elif count == 0 and key != "q":
            values[key] = None
        else:
            return None
    sec = np.ascontiguousarray(table[:, 4:8]).view("<i4")[:, 0].astype(np.int64)
    t_ns = sec * 1_000_000_000 + np.ascontiguousarray(table[:, 8:12]).view("<u4")[:, 0]
    for k in (0, len(raws) - 1):
        msg = store.deserialize_cdr(raws[k], JOINT_STATE)
        if list(msg.name) != names or _stamp_ns(msg.header.stamp) != t_ns[k] or not all(
            (values[key] is None and len(field) == 0) or np.array_equal(values[key][k], field)
            for key, field in (("q", msg.position), ("dq", msg.velocity), ("tau", msg.effort))
        ):
            return None
    return t_ns, names, values


def _joint_state_layout(raw: bytes) -> tuple[list[str], list[tuple[int, int]]] | None:
    """Joint names and (byte offset, count) of position, velocity and effort in one little-endian CDR
    JointState (4-byte encapsulation header, alignment counted after it)."""
    if len(raw) < 16 or raw[:2] != b"\x00\x01":
        return None
    base = 4

    def u32(pos: int) -> int:
        return int.from_bytes(raw[pos:pos + 4], "little")

    def align(pos: int, n: int) -> int:
        return base + -(-(pos - base) // n) * n

    try:
        pos = base + 8
        pos += 4 + u32(pos)
        pos = align(pos, 4)
        n_names, pos = u32(pos), pos + 4
        names = []
        for _ in range(n_names):
            pos = align(pos, 4)
            length = u32(pos)
            names.append(raw[pos + 4:pos + 3 + length].decode())
            pos += 4 + length
            if pos > len(raw):
                return None
        fields = []
        for _ in range(3):
            pos = align(pos, 4)
            count, pos = u32(pos), pos + 4
            if count:
                pos = align(pos, 8)
            fields.append((pos, count))
            pos += 8 * count
    except UnicodeDecodeError:
        return None
    return (names, fields) if pos == len(raw) else None


# ---------------------------------------------------------------------------------------------- cleaning


def _signals(rec: Recording) -> dict[str, np.ndarray]:
    arrays = {"q": rec.q_rad, "dq": rec.dq_rad_s, "ddq": rec.ddq_rad_s2, "tau": rec.tau_nm}
    return {key: np.array(value, dtype=float) for key, value in arrays.items() if value is not None}


def _ms(seconds: float) -> str:
    return f"{1e3 * seconds:.3g} ms"


def clean(rec: Recording, max_gap_s: float = 0.05) -> Recording:
    """Repair what can be repaired, refuse the rest with DataError, and list every repair in `repairs`.

    - rows without a finite time are dropped; out-of-order timestamps are sorted when time never steps
      back by more than `max_gap_s`, otherwise refused (concatenated logs, clock reset);
    - duplicate rows (q and tau identical to the previous row: the logger re-read a stale state) and
      rows repeating a timestamp are dropped;
    - gaps in time longer than `max_gap_s` are refused with their position (split the recording there);
    - runs of NaN/inf spanning at most `max_gap_s` are interpolated linearly (dropped at the ends),
      longer runs are refused naming the column and samples;
    - a non-uniform time grid (jitter, dropped rows, short gaps) is resampled at the median rate,
      cubic splines for positions, velocities and accelerations, linear for torques.
    """
    n = len(rec.joint_names)
    t = np.asarray(rec.t_s, dtype=float).ravel()
    signals = _signals(rec)
    for key, x in signals.items():
        if x.shape != (len(t), n):
            raise DataError(f"{rec.source}: {key} has shape {x.shape}, expected ({len(t)}, {n})")
    repairs = list(rec.repairs)
    sample = np.arange(len(t))

    def keep(mask: np.ndarray) -> None:
        nonlocal t, sample
        t, sample = t[mask], sample[mask]
        for key in signals:
            signals[key] = signals[key][mask]

    _require_samples(rec.source, len(t))
    finite_t = np.isfinite(t)
    if not finite_t.all():
        repairs.append(f"dropped {np.count_nonzero(~finite_t)} rows without a finite time")
        keep(finite_t)
        _require_samples(rec.source, len(t))

    steps = np.diff(t)
    if (steps < 0).any():
        worst = int(np.argmin(steps))
        if -steps[worst] > max_gap_s:
            raise DataError(
                f"{rec.source}: time goes back by {-steps[worst]:.6g} s at sample {sample[worst + 1]} "
                f"(t = {t[worst + 1]:.6g} s after {t[worst]:.6g} s): concatenated recordings or a clock reset; "
                "split the file there"
            )
        repairs.append(f"sorted out-of-order timestamps ({np.count_nonzero(steps < 0)} steps back in time, "
                       f"the largest {_ms(-steps[worst])})")
        keep(np.argsort(t, kind="stable"))

    same = np.concatenate([[False], (signals["q"][1:] == signals["q"][:-1]).all(axis=1)
                           & (signals["tau"][1:] == signals["tau"][:-1]).all(axis=1)])
    t_rows = t.copy()
    if same.any():
        repairs.append(f"dropped {np.count_nonzero(same)} duplicate rows (q and tau identical to the previous row)")
        keep(~same)
    repeated = np.concatenate([[False], np.diff(t) == 0.0])
    if repeated.any():
        repairs.append(f"dropped {np.count_nonzero(repeated)} rows repeating the previous timestamp")
        keep(~repeated)
    _require_samples(rec.source, len(t))

    t_rows = np.unique(t_rows)
    _refuse_gaps(rec.source, t_rows, max_gap_s)
    _repair_non_finite(rec, t, sample, signals, max_gap_s, repairs, keep)
    _require_samples(rec.source, len(t))

    t, signals = _uniform(t, t_rows, signals, repairs)
    return dataclasses.replace(
        rec,
        t_s=t,
        q_rad=signals["q"],
        tau_nm=signals["tau"],
        dq_rad_s=signals.get("dq"),
        ddq_rad_s2=signals.get("ddq"),
        repairs=tuple(repairs),
    )


def _require_samples(source: str, k: int) -> None:
    if k < MIN_SAMPLES:
        raise DataError(f"{source}: {k} usable sample(s); a recording needs at least {MIN_SAMPLES}")


def _refuse_gaps(source: str, t: np.ndarray, max_gap_s: float) -> None:
    steps = np.diff(t)
    long = np.flatnonzero(steps > max_gap_s)
    if long.size:
        i = long[np.argmax(steps[long])]
        hint = (f" (the median sample interval {_ms(np.median(steps))} is itself longer)"
                if np.median(steps) > max_gap_s else "")
        raise DataError(
            f"{source}: {long.size} gap(s) longer than max_gap_s = {max_gap_s:g} s{hint}; the longest is "
            f"{steps[i]:.6g} s between t = {t[i]:.6g} s and t = {t[i + 1]:.6g} s: split the recording there"
        )


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """[start, stop) index ranges of the True runs of a boolean vector."""
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True))


def _repair_non_finite(rec, t, sample, signals, max_gap_s, repairs, keep) -> None:
    """Interpolate short NaN/inf runs (drop them at the ends), refuse long ones naming column and samples."""
    edge_rows = np.zeros(len(t), dtype=bool)
    for key in list(signals):
        x = signals[key]
        bad = ~np.isfinite(x)
        for j in np.flatnonzero(bad.any(axis=0)):
            column = f"{key}_{rec.joint_names[j]}"
            runs = _runs(bad[:, j])
            for start, stop in runs:
                span = t[min(stop, len(t) - 1)] - t[max(start - 1, 0)]
                if span > max_gap_s or (start == 0 and stop == len(t)):
                    raise DataError(
                        f"{rec.source}: column {column} is not finite for {stop - start} samples "
                        f"{sample[start]}–{sample[stop - 1]} (t = {t[start]:.6g}–{t[stop - 1]:.6g} s), longer "
                        f"than max_gap_s = {max_gap_s:g} s"
                    )
                if start == 0 or stop == len(t):
                    edge_rows[start:stop] = True
            good = ~bad[:, j]
            x[bad[:, j], j] = np.interp(t[bad[:, j]], t[good], x[good, j])
            repairs.append(f"interpolated {np.count_nonzero(bad[:, j])} non-finite values of {column} in "
                           f"{len(runs)} run(s) (samples {', '.join(f'{sample[a]}–{sample[b - 1]}' for a, b in runs)})")
    if edge_rows.any():
        repairs.append(f"dropped {np.count_nonzero(edge_rows)} rows at the ends with non-finite values")
        keep(~edge_rows)


def _uniform(
    t: np.ndarray, t_logged: np.ndarray, signals: dict[str, np.ndarray], repairs: list[str]
) -> tuple[np.ndarray, dict]:
    """Resample onto a uniform grid at the logged median rate when the kept samples are not uniform.

    `t_logged` are the distinct timestamps as logged (before duplicate rows were dropped): they give the
    rate and the jitter figures; the kept times `t` show the gaps that dropped rows left.
    """
    steps, logged = np.diff(t), np.diff(t_logged)
    median = float(np.median(logged))
    if np.max(np.abs(steps / median - 1.0)) <= UNIFORM_TOL:
        return t, signals
    rate_hz = _round_rate(1.0 / median)
    grid = t[0] + np.arange(math.floor((t[-1] - t[0]) * rate_hz + 1e-9) + 1) / rate_hz
    resampled = {key: resample(t, x, grid, smooth=key != "tau") for key, x in signals.items()}
    repairs.append(
        f"resampled {len(t)} samples onto a uniform {rate_hz:g} Hz grid ({len(grid)} samples); logged sample "
        f"intervals {_ms(logged.min())}–{_ms(logged.max())}, median {_ms(median)}, jitter {_ms(np.std(logged))} RMS"
    )
    gaps = steps > SHORT_GAP_FACTOR * median
    if gaps.any():
        repairs.append(f"interpolated across {np.count_nonzero(gaps)} short gap(s) (dropped rows or missing "
                       f"samples), the longest {_ms(steps.max())} at t = {t[np.argmax(steps)]:.6g} s")
    return grid, resampled


def _round_rate(rate_hz: float) -> float:
    """The rate with the fewest significant digits (up to 3) within RATE_ROUNDING of `rate_hz` (998.3 -> 1000):
    grid times stay true times, only the density of the output grid is rounded."""
    for digits in (1, 2, 3):
        candidate = float(f"{rate_hz:.{digits}g}")
        if abs(candidate - rate_hz) <= RATE_ROUNDING * rate_hz:
            return candidate
    return rate_hz


def resample(t_s: np.ndarray, x: np.ndarray, grid_s: np.ndarray, smooth: bool) -> np.ndarray:
    """x(t_s) at the times `grid_s`: a not-a-knot cubic spline when `smooth`, else linear (noisy torques)."""
    if smooth and len(t_s) >= 4:
        return scipy.interpolate.make_interp_spline(t_s, x, k=3, axis=0)(grid_s)
    return np.stack([np.interp(grid_s, t_s, column) for column in np.moveaxis(x, -1, 0)], axis=-1)
