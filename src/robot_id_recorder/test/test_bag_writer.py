"""BagWriter under a RecordingSession: what rosbags and an independent MCAP reader read back, the period index in
metadata.yaml and beside the storage file, the sqlite3 storage, and the refusals."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
import yaml
from mcap.exceptions import EndOfFile
from mcap.reader import make_reader
from mcap.records import Message
from mcap.stream_reader import StreamReader
from mcap_ros2.decoder import DecoderFactory
from recorder_bags import (
    DT_NS,
    JOINT_STATE,
    MARKER_TOPIC,
    PERIOD_MARKER,
    START_NS,
    STATES_TOPIC,
    joint_state_raw,
    sample_values,
    write_recording,
)
from rosbags.rosbag2 import Reader

from robot_id_contract.period_index import METADATA_KEY, parse_index
from robot_id_contract.stamps import header_stamp_ns
from robot_id_recorder.bag_writer import BagWriter
from robot_id_recorder.message_types import typestore_for
from robot_id_recorder.recording_session import INDEX_FILE

PERIODS, PER_PERIOD = 3, 250


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    """The same 3 × 250 samples at 500 Hz with their markers, once as MCAP and once as sqlite3."""
    root = tmp_path_factory.mktemp("bags")
    return {storage: write_recording(root / storage, storage, PERIODS, PER_PERIOD) for storage in ("mcap", "sqlite3")}


def _read_with_rosbags(path):
    """(topic -> message count from the bag's connections, JointState header stamps, markers (index, stamp,
    period_s, num_periods), JointState raw messages) via rosbags."""
    store = typestore_for([PERIOD_MARKER])
    with Reader(path) as reader:
        counts = {c.topic: c.msgcount for c in reader.connections}
        states = [c for c in reader.connections if c.topic == STATES_TOPIC]
        markers_c = [c for c in reader.connections if c.topic == MARKER_TOPIC]
        raws = [bytes(raw) for _, _, raw in reader.messages(states)]
        markers = []
        for _, _, raw in reader.messages(markers_c):
            m = store.deserialize_cdr(raw, PERIOD_MARKER)
            markers.append((m.period_index, header_stamp_ns(raw), m.period_s, m.num_periods))
    return counts, np.array([header_stamp_ns(r) for r in raws]), markers, raws


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_rosbags_reads_every_message_and_every_period(recordings, storage):
    recording = recordings[storage]
    counts, stamps, markers, raws = _read_with_rosbags(recording.path)
    assert counts == {STATES_TOPIC: PERIODS * PER_PERIOD, MARKER_TOPIC: PERIODS}
    assert stamps.tolist() == recording.stamps_ns  # exact: the header stamps are integers, in write order
    assert [(i, s) for i, s, _, _ in markers] == [(m.index, m.start_ns) for m in recording.markers]
    assert all(period_s == 0.5 and n == PERIODS for _, _, period_s, n in markers)
    for index, start_ns, period_s, _ in markers:  # by header stamp against the markers, as the estimator splits
        inside = (stamps >= start_ns) & (stamps < start_ns + round(period_s * 1e9))
        assert np.count_nonzero(inside) == PER_PERIOD, index
    # the values too (compared decoded: serialize_message leaves CDR padding bytes unzeroed, so raw bytes of two
    # serialisations of one message may differ)
    store = typestore_for([JOINT_STATE])
    for raw, k in zip(raws, recording.samples, strict=True):
        msg = store.deserialize_cdr(raw, JOINT_STATE)
        position, effort = sample_values(k)
        assert msg.position.tolist() == position and msg.effort.tolist() == effort


def test_an_independent_mcap_reader_decodes_every_joint_state(recordings):
    """mcap + mcap-ros2-support decode from the file's own ros2msg schemas: the file is standard MCAP and its
    schemas are complete (JointState's std_msgs/Header and builtin_interfaces/Time included)."""
    recording = recordings["mcap"]
    decoded = {STATES_TOPIC: [], MARKER_TOPIC: []}
    with (recording.path / "mcap.mcap").open("rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        for schema, channel, message, msg in reader.iter_decoded_messages():
            assert schema.encoding == "ros2msg" and channel.message_encoding == "cdr"
            decoded[channel.topic].append((schema.name, message.log_time, msg))
    states = decoded[STATES_TOPIC]
    assert len(states) == PERIODS * PER_PERIOD and len(decoded[MARKER_TOPIC]) == PERIODS
    for (name, log_time, msg), stamp, k in zip(states, recording.stamps_ns, recording.samples, strict=True):
        position, effort = sample_values(k)
        assert name == JOINT_STATE
        assert msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec == stamp
        assert log_time == stamp + 150_000  # the receive time the session was given, not the header stamp
        assert list(msg.position) == position and list(msg.effort) == effort  # float64 through CDR: exact
        assert list(msg.name) == [f"lbr_A{i}" for i in range(1, 8)]
    for (name, _, msg), marker in zip(decoded[MARKER_TOPIC], recording.markers, strict=True):
        assert name == PERIOD_MARKER
        assert (msg.period_index, msg.num_periods, msg.period_s) == (marker.index, PERIODS, 0.5)


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_the_period_index_in_metadata_and_beside_the_bag_agree(recordings, storage):
    recording = recordings[storage]
    metadata = yaml.safe_load((recording.path / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    from_metadata = parse_index(metadata["custom_data"][METADATA_KEY])
    from_file = parse_index((recording.path / INDEX_FILE).read_text())
    assert from_metadata == from_file == recording.session.index()
    assert [(e.index, e.samples, e.expected, e.gaps, e.flagged) for e in from_file] == [
        (i, PER_PERIOD, PER_PERIOD, 0, False) for i in range(PERIODS)]
    assert metadata["storage_identifier"] == storage


def test_refuses_an_existing_path_and_an_unknown_storage(tmp_path):
    store = typestore_for([JOINT_STATE])
    (tmp_path / "taken").mkdir()
    with pytest.raises(FileExistsError, match="taken"):
        BagWriter(tmp_path / "taken", store)
    with pytest.raises(ValueError, match="zip"):
        BagWriter(tmp_path / "new", store, storage="zip")
    assert not (tmp_path / "new").exists()  # refused before anything is created


def test_typestore_for_an_unknown_type_names_its_package():
    with pytest.raises(KeyError, match="no_such_pkg"):
        typestore_for(["no_such_pkg/msg/Thing"])


def test_typestore_for_registers_every_referenced_type_from_msg_files(tmp_path):
    """A type of an uninstalled package whose .msg refers to another such type: both are registered, so the bag
    stores the complete definition."""
    files = {("pkg_a", "Outer"): "std_msgs/Header header\npkg_b/Inner[] inners\n",
             ("pkg_b", "Inner"): "float64 value\nstring label\n"}
    for (package, name), text in files.items():
        (tmp_path / f"{package}_{name}.msg").write_text(text)

    def find(package, name):
        path = tmp_path / f"{package}_{name}.msg"
        return path if path.is_file() else None

    store = typestore_for(["pkg_a/msg/Outer"], find)
    assert "pkg_b/msg/Inner" in store.fielddefs
    definition, _ = store.generate_msgdef("pkg_a/msg/Outer", ros_version=2)
    assert "MSG: pkg_b/Inner" in definition and "MSG: std_msgs/Header" in definition
    with pytest.raises(KeyError, match="pkg_c"):
        typestore_for(["pkg_c/msg/Missing"], find)


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_a_flush_puts_everything_written_on_disk_once_the_flush_period_is_over(tmp_path, storage):
    """With an injected clock: nothing is forced out before flush_period_s, everything (complete records another
    reader can parse) once a write sees the period over; the bag is left unclosed, as a killed recorder leaves it."""
    now = [100.0]
    writer = BagWriter(tmp_path / "bag", typestore_for([JOINT_STATE]), storage, flush_period_s=1.0,
                       clock_s=lambda: now[0])
    writer.add_topic(STATES_TOPIC, JOINT_STATE)
    for k in range(10):
        writer.write(STATES_TOPIC, START_NS + k * DT_NS, joint_state_raw(START_NS + k * DT_NS, *sample_values(k)))
    assert _on_disk(tmp_path / "bag", storage) == []
    now[0] += 0.999
    writer.write(STATES_TOPIC, START_NS + 10 * DT_NS, joint_state_raw(START_NS + 10 * DT_NS, *sample_values(10)))
    assert _on_disk(tmp_path / "bag", storage) == []
    now[0] = 101.0  # the period is over: this write flushes all eleven
    writer.write(STATES_TOPIC, START_NS + 11 * DT_NS, joint_state_raw(START_NS + 11 * DT_NS, *sample_values(11)))
    assert _on_disk(tmp_path / "bag", storage) == [START_NS + k * DT_NS for k in range(12)]
    writer.write(STATES_TOPIC, START_NS + 12 * DT_NS, joint_state_raw(START_NS + 12 * DT_NS, *sample_values(12)))
    now[0] = 102.0  # no message comes any more: the node's timer calls flush_if_due
    writer.flush_if_due()
    assert _on_disk(tmp_path / "bag", storage) == [START_NS + k * DT_NS for k in range(13)]
    writer.close()


def _on_disk(bag, storage) -> list[int]:
    """Header stamps of the joint states another process would find in the storage file now."""
    if storage == "mcap":
        stamps = []
        with (bag / "bag.mcap").open("rb") as f:
            try:
                for record in StreamReader(f).records:
                    if isinstance(record, Message):
                        stamps.append(header_stamp_ns(record.data))
            except EndOfFile:  # an unclosed file ends after its last complete record (no footer)
                pass
        return stamps
    connection = sqlite3.connect(f"file:{bag / 'bag.db3'}?mode=ro", uri=True)
    try:
        return [header_stamp_ns(bytes(d)) for (d,) in connection.execute("SELECT data FROM messages ORDER BY id")]
    finally:
        connection.close()
