"""Bags after the fact: the period index of any bag (the recorder's, or computed from the messages of a bag from
`ros2 bag record`), and the repair of a bag whose recorder was killed before it could close it."""

from __future__ import annotations

import pathlib
import shutil
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from mcap.exceptions import McapError
from mcap.records import Channel, Message, Schema
from mcap.stream_reader import StreamReader
from rosbags.rosbag2 import Reader, ReaderError, StoragePlugin, Writer

from robot_id_cli.command_line import progress_bar
from robot_id_contract.period_index import (
    RATE_WINDOW_S,
    PeriodEntry,
    PeriodMarkerStamp,
    index_yaml,
    longest_usable_gap_s,
    measured_rate_hz,
    period_entries,
    stored_index,
)
from robot_id_contract.stamps import header_stamp_ns
from robot_id_recorder.message_types import typestore_for, typestore_from_definition
from robot_id_recorder.recording_session import INDEX_FILE

JOINT_STATE = "sensor_msgs/msg/JointState"
PERIOD_MARKER = "robot_id_msgs/msg/PeriodMarker"
EXCITATION = "robot_id_msgs/msg/ExcitationTrajectory"


class BagError(ValueError):
    """A bag that cannot be read or repaired, with the reason."""


@dataclass(frozen=True)
class BagIndex:
    entries: list[PeriodEntry]
    rate_hz: float
    """Measured from the header stamps of the first second (period_index.measured_rate_hz)."""
    max_gap_s: float
    """The longest gap of a usable period (period_index.longest_usable_gap_s)."""
    topic: str
    stamps_ns: np.ndarray
    """Header stamps of the joint states [ns], in bag order."""
    source: str
    """Where the index comes from: the recorder's metadata, or computed here."""


def bag_index(bag: pathlib.Path) -> BagIndex:
    """The period index of a bag: the recorder's when stored, else computed from its joint states (the busiest
    JointState topic, header stamps), period markers and excitation description, at their measured rate."""
    try:
        with Reader(bag) as reader:
            states = [c for c in reader.connections if c.msgtype == JOINT_STATE]
            if not states:
                raise BagError(f"{bag}: no {JOINT_STATE} topic")
            topic = max(states, key=lambda c: c.msgcount)
            messages = progress_bar(reader.messages([topic]), total=topic.msgcount, description="joint states",
                                    unit="msg")
            stamps = np.array([header_stamp_ns(raw) for _, _, raw in messages], dtype=np.int64)
            markers = [PeriodMarkerStamp(m.period_index, header_stamp_ns(raw), m.period_s, m.num_periods)
                       for raw, m in _decoded(reader, PERIOD_MARKER)]
            descriptions = [m for _, m in _decoded(reader, EXCITATION)]
    except (ReaderError, FileNotFoundError) as err:
        raise BagError(f"{bag}: not a readable bag ({err}); if its recorder was killed, run "
                       f"`python -m robot_id_recorder repair {bag}`") from None
    if len(stamps) < 2:
        raise BagError(f"{bag}: fewer than two joint states on {topic.topic}")
    rate_hz = measured_rate_hz(stamps)
    if rate_hz is None:
        raise BagError(f"{bag}: the joint states on {topic.topic} span less than the {RATE_WINDOW_S:g} s their rate "
                       "is measured over")
    last = descriptions[-1] if descriptions else None
    max_gap_s = longest_usable_gap_s(last.period_s if last else None, last.harmonics if last else None)
    stored = stored_index(bag)
    entries = stored if stored is not None else period_entries(stamps, markers, rate_hz, max_gap_s)
    return BagIndex(entries, rate_hz, max_gap_s, topic.topic, stamps, "recorder" if stored is not None else "computed")


def _decoded(reader: Reader, msgtype: str) -> list[tuple[bytes, object]]:
    """(raw, message) of every message of one type in the bag, in bag order."""
    connections = [c for c in reader.connections if c.msgtype == msgtype]
    if not connections:
        return []
    store = typestore_for([msgtype])
    return [(raw, store.deserialize_cdr(raw, msgtype)) for _, _, raw in reader.messages(connections)]


# --- repair ---------------------------------------------------------------------------------------------------


def _mcap_messages(path: pathlib.Path) -> Iterator[tuple[str, str, str, int, bytes]]:
    """(topic, type, definition, log time, data) of every complete message of an MCAP file, up to where it ends."""
    schemas: dict[int, Schema] = {}
    channels: dict[int, Channel] = {}
    with path.open("rb") as stream:
        try:
            for record in StreamReader(stream).records:
                if isinstance(record, Schema):
                    schemas[record.id] = record
                elif isinstance(record, Channel):
                    channels[record.id] = record
                elif isinstance(record, Message) and record.channel_id in channels:
                    channel = channels[record.channel_id]
                    schema = schemas[channel.schema_id]
                    yield channel.topic, schema.name, schema.data.decode(), record.log_time, record.data
        except (McapError, EOFError, ValueError):
            return  # the file ends in the middle of a record: everything before it is kept


def _sqlite_messages(path: pathlib.Path) -> Iterator[tuple[str, str, str, int, bytes]]:
    """The same for an sqlite3 storage file (committed transactions only)."""
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        definitions = dict(connection.execute(
            "SELECT topic_type, encoded_message_definition FROM message_definitions").fetchall())
        topics = {row[0]: row[1:] for row in connection.execute("SELECT id, name, type FROM topics")}
        for topic_id, timestamp, data in connection.execute(
                "SELECT topic_id, timestamp, data FROM messages ORDER BY id"):
            name, msgtype = topics[topic_id]
            yield name, msgtype, definitions.get(msgtype, ""), timestamp, bytes(data)
    finally:
        connection.close()


def repair(bag: pathlib.Path) -> str:
    """Make a bag whose recorder died readable again: every complete message is copied into a new bag of the same
    storage, with metadata and the period index; the damaged original is kept beside it as <bag>.damaged. A bag
    that reads already is left alone. Returns what was done, in one line."""
    try:
        with Reader(bag):
            return f"{bag} reads as it is: nothing to repair"
    except (ReaderError, FileNotFoundError):  # a killed recorder leaves no metadata.yaml
        pass
    files = sorted(bag.glob("*.mcap")) or sorted(bag.glob("*.db3"))
    if not files:
        raise BagError(f"{bag}: no .mcap or .db3 storage file to repair")
    storage = StoragePlugin.MCAP if files[0].suffix == ".mcap" else StoragePlugin.SQLITE3
    read = _mcap_messages if storage == StoragePlugin.MCAP else _sqlite_messages
    workspace = bag.with_name(bag.name + ".repairing")  # the new bag gets the old one's name (and file names)
    if workspace.exists():
        shutil.rmtree(workspace)
    workspace.mkdir()
    writer = Writer(workspace / bag.name, version=9, storage_plugin=storage)
    writer.open()
    connections: dict[str, object] = {}
    count = 0
    for file in files:
        for topic, msgtype, definition, timestamp, data in read(file):
            if topic not in connections:
                store = typestore_from_definition(msgtype, definition)
                connections[topic] = writer.add_connection(topic, msgtype, typestore=store)
            writer.write(connections[topic], timestamp, data)
            count += 1
    writer.close()
    damaged = bag.with_name(bag.name + ".damaged")
    bag.rename(damaged)
    (workspace / bag.name).rename(bag)
    workspace.rmdir()
    index = bag_index(bag)
    (bag / INDEX_FILE).write_text(index_yaml(index.entries, index.rate_hz, index.topic, index.rate_hz,
                                             index.max_gap_s))
    return (f"repaired {bag}: {count} messages kept ({len(connections)} topics), the damaged original is "
            f"{damaged}")
