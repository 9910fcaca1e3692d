"""Reading a rosbag2 bag into a Recording: joint states in the order of their header stamps, and the recorder's
trajectory description and period markers, from which whole periods are cut (the periods the recorder flagged
are left out: flagged_periods).

robot_id_msgs' definitions come from its installed share directory. JointState messages that all share one
byte layout (one publisher, fixed joints: what a robot driver records) are decoded at once from their CDR
bytes; other bags go through rosbags' deserialiser, message by message: for 100 000 messages the whole load
takes 7–9× as long (about 4 s instead of 0.5 s; benchmarks/bag_reading.py).
"""

from __future__ import annotations

import dataclasses
import math
import pathlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from rosbags.rosbag2 import Reader, ReaderError
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

from robot_id_contract.period_index import longest_usable_gap_s
from robot_id_contract.stamps import stamp_ns
from robot_id_estimator.recordings.described_excitation import (
    described_excitation,
    excitation_period,
    first_period_ns,
)
from robot_id_estimator.recordings.flagged_periods import without_flagged_periods
from robot_id_estimator.recordings.recording import DataError, Recording, Unselected, select_joints
from robot_id_model.stack_hardware import StackSensors, stack_sensors

JOINT_STATE = "sensor_msgs/msg/JointState"
EXCITATION = "robot_id_msgs/msg/ExcitationTrajectory"
STRING = "std_msgs/msg/String"
PERIOD_MARKER = "robot_id_msgs/msg/PeriodMarker"
STORAGE_SUFFIXES = (".mcap", ".db3")
REPAIR = "python -m robot_id_recorder repair"
"""The command that makes a bag readable whose recorder was killed (robot_id_recorder.bag_tools.repair)."""


@dataclass(frozen=True)
class _BagContents:
    """What a bag holds for a recording: one joint-states topic, the recorder's excitation messages and the robot's
    description."""

    topic: str
    receive_ns: np.ndarray
    """(K,) the bag's receive time of each joint-states message [ns]."""
    raws: list[bytes]  # the joint-states messages, CDR-serialised
    description: object | None  # the last robot_id_msgs/ExcitationTrajectory, if any
    markers: list[tuple[int, float]]
    """(stamp [ns], period [s]) of every period marker, in time order."""
    stack: StackSensors | None  # what the robot's stack said of its sensors in the last robot_description recorded


@dataclass(frozen=True)
class _JointStates:
    """Decoded JointState messages: the selected joints' signals (K, n) and the other joints' positions."""

    t_ns: np.ndarray
    """(K,) header stamps [ns]."""
    names: list[str]
    q_rad: np.ndarray
    dq_rad_s: np.ndarray | None
    tau_nm: np.ndarray | None
    others: list[str]
    """The joints of the first message that were not selected."""
    q_others_rad: np.ndarray
    """(K, len(others)); NaN where a message lacks the joint."""
    used: np.ndarray | slice
    """Indexes the messages decoded (messages lacking a selected joint are skipped)."""
    skipped: int


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


def read_bag(
    path: pathlib.Path, joint_names: Sequence[str] | None, period_s: float | None
) -> tuple[Recording, Unselected, float]:
    """The recording as logged (not yet cleaned) in the order of its header stamps, cut to whole periods when the bag
    marks them and without the periods the recorder flagged (flagged_periods), the positions of the joints
    `joint_names` leaves out (default: the description's joints, else all), and the longest gap cleaning fills: the
    recorder's longest usable gap (period_index.longest_usable_gap_s of the description's harmonics)."""
    store = robot_id_typestore()
    repairs: list[str] = []
    bag = _bag_contents(path, store, repairs)
    description = bag.description
    default_joints = list(description.joint_names) if description is not None and description.joint_names else None
    states = _joint_states(str(path), store, bag.raws, joint_names or default_joints)
    if states.skipped:
        repairs.append(f"skipped {states.skipped} JointState messages without all of the joints {states.names}")
    if not states.t_ns.any():
        states = dataclasses.replace(states, t_ns=bag.receive_ns[states.used])
        repairs.append("JointState header stamps are zero: used the bag's receive times")
    if states.tau_nm is None:
        raise DataError(f"{path}: the JointState messages on {bag.topic} carry no effort (joint torques)")
    states = _in_stamp_order(states, repairs)
    origin_ns = int(states.t_ns[0])
    t_s = (states.t_ns - origin_ns) * 1e-9
    unselected = Unselected(tuple(states.others), t_s, states.q_others_rad)
    described = description is not None
    max_gap_s = longest_usable_gap_s(description.period_s if described else None,
                                     description.harmonics if described else None)

    period_s, harmonics = excitation_period(description, bag.markers, period_s, repairs)
    start_ns = first_period_ns(description, bag.markers)
    keep, reason = np.ones(len(t_s), dtype=bool), None
    if period_s is not None and start_ns is not None:
        n_planned = int(description.num_periods) if description is not None else 0
        keep, note = _whole_periods(t_s, (start_ns - origin_ns) * 1e-9, period_s, n_planned)
        repairs.append(note)
        t_s, keep, reason = without_flagged_periods(path if path.is_dir() else path.parent, t_s, keep, origin_ns,
                                                    period_s, max_gap_s, repairs)
    return Recording(
        joint_names=tuple(states.names),
        t_s=t_s[keep],
        q_rad=states.q_rad[keep],
        tau_nm=states.tau_nm[keep],
        dq_rad_s=None if states.dq_rad_s is None else states.dq_rad_s[keep],
        ddq_rad_s2=None,
        period_s=period_s,
        harmonics=harmonics,
        source=str(path),
        repairs=tuple(repairs),
        non_periodic_reason=reason,
        excitation=described_excitation(description),
        stack=bag.stack,
    ), unselected, max_gap_s


def _in_stamp_order(states: _JointStates, repairs: list[str]) -> _JointStates:
    """The joint states ordered by their header stamps (a sample that arrived late carries its own time)."""
    late = int(np.count_nonzero(np.diff(states.t_ns) < 0))
    if not late:
        return states
    order = np.argsort(states.t_ns, kind="stable")
    repairs.append(f"ordered the joint states by their header stamps ({late} arrived after a later-stamped one)")
    return dataclasses.replace(
        states, t_ns=states.t_ns[order], q_rad=states.q_rad[order], q_others_rad=states.q_others_rad[order],
        dq_rad_s=None if states.dq_rad_s is None else states.dq_rad_s[order], tau_nm=states.tau_nm[order])


def _msg_directory() -> pathlib.Path | None:
    """robot_id_msgs' .msg files in its installed share directory; None when the package is not installed."""
    try:
        from ament_index_python.packages import get_package_share_directory

        directory = pathlib.Path(get_package_share_directory("robot_id_msgs")) / "msg"
    except (ImportError, LookupError, OSError):  # no ament index, package not installed, AMENT_PREFIX_PATH unset
        return None
    return directory if directory.is_dir() else None


def _config_topic(robot: str) -> str | None:
    """The joint-states topic of a robot config, when the installed workspace knows the robot."""
    from robot_id_model.robot_config import load_robot_config
    from robot_id_model.robot_model import ModelError

    try:
        return load_robot_config(robot).joint_states_topic
    except ModelError:
        return None


def _bag_contents(path: pathlib.Path, store: Typestore, repairs: list[str]) -> _BagContents:
    """The joint-states topic (see _pick_topic) with its messages, the description and the period markers."""
    try:
        with Reader(path if path.is_dir() else path.parent) as reader:
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
                (stamp_ns(marker.header.stamp), float(marker.period_s))
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
            robot_urdfs = {STRING: [c for c in by_type.get(STRING, []) if c.topic.endswith("robot_description")]}
            urdfs = [store.deserialize_cdr(raw, STRING).data for raw in _raw(reader, store, robot_urdfs, STRING)]
    except ReaderError as err:
        raise DataError(f"{path}: not a readable rosbag2 bag ({err}); if its recording was killed, make it readable "
                        f"with `{REPAIR} {_folder(path)}`") from None
    except FileNotFoundError:
        raise DataError(_without_metadata(path)) from None
    if not raws:
        raise DataError(f"{path}: {topic.topic} holds no message")
    receive_ns = np.array([stamp for stamp, _ in raws], dtype=np.int64)
    return _BagContents(topic.topic, receive_ns, [raw for _, raw in raws], description, markers,
                        stack_sensors(urdfs[-1]) if urdfs else None)


def _folder(path: pathlib.Path) -> pathlib.Path:
    """The bag's directory, given it or one of its storage files."""
    return path if path.is_dir() else path.parent


def _without_metadata(path: pathlib.Path) -> str:
    """Why a bag without metadata.yaml cannot be read: with storage files it was never closed (still recording, or
    its recorder was killed: the repair mends it), without any it is no bag."""
    folder = _folder(path)
    if any(f.suffix in STORAGE_SUFFIXES for f in folder.iterdir()):
        return (f"{path}: the bag is not closed (no metadata.yaml in {folder}): its recording is still going on, or "
                f"its recorder was killed; then make it readable with `{REPAIR} {folder}`")
    return (f"{path}: not a rosbag2 bag: {folder} holds no metadata.yaml (give the bag's directory as ros2 bag record "
            "writes it)")


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
    n_periods = math.floor((last_s + 3.0 * half_dt - start_s) / period_s)  # a period's last sample is dt before its end
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


# ---------------------------------------------------------------------------------------------- JointState


def _joint_states(source: str, store: Typestore, raws: list[bytes], wanted: Sequence[str] | None) -> _JointStates:
    """The JointState messages decoded, by their fixed byte layout when they share one, else one by one."""
    fast = _joint_states_fixed_layout(store, raws)
    if fast is None:
        return _joint_states_per_message(source, store, raws, wanted)
    t_ns, all_names, values = fast
    names = select_joints(source, all_names, wanted)
    others = [name for name in all_names if name not in names]
    columns = [all_names.index(name) for name in names]
    q, dq, tau = (None if values[key] is None else values[key][:, columns] for key in ("q", "dq", "tau"))
    q_others = values["q"][:, [all_names.index(name) for name in others]]
    return _JointStates(t_ns, names, q, dq, tau, others, q_others, slice(None), 0)


def _joint_states_per_message(
    source: str, store: Typestore, raws: list[bytes], wanted: Sequence[str] | None
) -> _JointStates:
    """Each message deserialised by rosbags: any joint order or set per message; messages lacking a selected
    joint are skipped, and the other joints of the first message are NaN where a message lacks them."""
    first = store.deserialize_cdr(raws[0], JOINT_STATE)
    names = select_joints(source, list(first.name), wanted)
    others = [name for name in first.name if name not in names]
    t_ns, used, rows = [], [], {"q": [], "dq": [], "tau": [], "others": []}
    show_progress = len(raws) > 20_000
    for k, raw in enumerate(raws):
        if show_progress and k % 20_000 == 0:
            print(f"\rreading joint states {100 * k // len(raws)} %", end="", file=sys.stderr, flush=True)
        msg = store.deserialize_cdr(raw, JOINT_STATE)
        index = {name: i for i, name in enumerate(msg.name)}
        if any(name not in index for name in names):
            continue
        columns = [index[name] for name in names]
        used.append(k)
        t_ns.append(stamp_ns(msg.header.stamp))
        for key, field in (("q", msg.position), ("dq", msg.velocity), ("tau", msg.effort)):
            rows[key].append(field[columns] if len(field) == len(msg.name) else None)
        rows["others"].append([msg.position[index[name]] if name in index and len(msg.position) == len(msg.name)
                               else math.nan for name in others])
    if show_progress:
        print("\rreading joint states 100 %", file=sys.stderr)
    if not used:
        raise DataError(f"{source}: no JointState message holds all of the joints {names}")
    arrays = {key: None if any(r is None for r in value) else np.array(value, dtype=float)
              for key, value in rows.items()}
    if arrays["q"] is None:
        raise DataError(f"{source}: JointState messages without positions")
    return _JointStates(np.array(t_ns, dtype=np.int64), names, arrays["q"], arrays["dq"], arrays["tau"], others,
                        arrays["others"], np.array(used), len(raws) - len(used))


def _joint_states_fixed_layout(
    store: Typestore, raws: list[bytes]
) -> tuple[np.ndarray, list[str], dict[str, np.ndarray | None]] | None:
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
        if list(msg.name) != names or stamp_ns(msg.header.stamp) != t_ns[k] or not all(
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
