"""A BagWriter killed with SIGKILL in the middle of a recording (no close, no metadata.yaml), and
`python -m robot_id_recorder repair`: the repaired bag reads with rosbags (and the MCAP one with the mcap library),
the original is kept as <bag>.damaged, and at most one flush period (plus scheduling) of messages is lost."""

from __future__ import annotations

import pathlib
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
from recorder_bags import STATES_TOPIC, child_env, run_cli, write_recording
from rosbags.rosbag2 import Reader, ReaderError

from robot_id_contract.period_index import index_yaml, parse_index
from robot_id_contract.stamps import header_stamp_ns
from robot_id_recorder.__main__ import main as recorder_main
from robot_id_recorder.bag_tools import bag_index

FLUSH_PERIOD_S = 1.0
SCHEDULING_MARGIN_S = 0.2
"""Beyond the flush period: the flush happens at the first write after the period is over (1 ms later at 1 kHz)
and takes a few ms; 0.2 s leaves room for the child being descheduled on a busy 2-core machine."""
RUN_S = 3.0

CHILD = """
import mmap, struct, sys, time
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState
from robot_id_recorder.bag_writer import BagWriter
from robot_id_recorder.message_types import typestore_for
bag, storage, note = sys.argv[1:4]
with open(note, "r+b") as f:
    latest = mmap.mmap(f.fileno(), 8)
writer = BagWriter(bag, typestore_for(["sensor_msgs/msg/JointState"]), storage, flush_period_s=float(sys.argv[4]))
writer.add_topic("/lbr/joint_states", "sensor_msgs/msg/JointState")
start, k, stamp = time.monotonic_ns(), 0, 0
while True:
    stamp = max(time.monotonic_ns(), stamp + 1)  # receive time = header stamp = now: the writer's own clock
    msg = JointState(name=["lbr_A1"], position=[float(k)], effort=[-float(k)])
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
    writer.write("/lbr/joint_states", stamp, bytes(serialize_message(msg)))
    struct.pack_into("<q", latest, 0, stamp)  # the latest stamp written, kept in the page cache past the kill
    k += 1
    time.sleep(max(0.0, (start + k * 1_000_000 - time.monotonic_ns()) * 1e-9))  # ~1 kHz
"""

@pytest.fixture(scope="module")
def killed_bags(tmp_path_factory):
    """An MCAP and an sqlite3 bag, each written at ~1 kHz by its own child process for RUN_S s and then killed
    with SIGKILL; storage -> (bag, header stamp of the last message the child wrote [ns])."""
    root = tmp_path_factory.mktemp("killed")
    children = {}
    try:
        for storage in ("mcap", "sqlite3"):
            note = root / f"{storage}.latest"
            note.write_bytes(bytes(8))
            with (root / f"{storage}.stderr").open("w") as stderr:
                children[storage] = (root / storage, note, subprocess.Popen(
                    [sys.executable, "-c", CHILD, str(root / storage), storage, str(note), str(FLUSH_PERIOD_S)],
                    env=child_env(), stdout=subprocess.DEVNULL, stderr=stderr))
        deadline = time.monotonic() + 30.0
        for storage, (_, note, child) in children.items():
            while not int.from_bytes(note.read_bytes(), "little"):
                assert child.poll() is None, (root / f"{storage}.stderr").read_text()
                assert time.monotonic() < deadline, f"the {storage} child wrote nothing in 30 s"
                time.sleep(0.02)
        time.sleep(RUN_S)
        for _, _, child in children.values():
            assert child.poll() is None, "the writer ended on its own"
            child.send_signal(signal.SIGKILL)
        for _, _, child in children.values():
            assert child.wait(timeout=10) == -signal.SIGKILL
    finally:
        for _, _, child in children.values():
            if child.poll() is None:
                child.kill()
                child.wait()
    return {storage: (bag, int.from_bytes(note.read_bytes(), "little"))
            for storage, (bag, note, _) in children.items()}


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_a_killed_bag_does_not_read_as_it_is(killed_bags, storage):
    bag, _ = killed_bags[storage]
    assert not (bag / "metadata.yaml").exists()
    assert (bag / f"{storage}.{'mcap' if storage == 'mcap' else 'db3'}").stat().st_size > 0
    with pytest.raises((ReaderError, FileNotFoundError)):  # rosbags 0.11.9: FileNotFoundError (no metadata.yaml)
        Reader(bag).open()


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_repair_makes_a_killed_bag_readable_losing_at_most_one_flush_period(killed_bags, storage):
    bag, last_written_ns = killed_bags[storage]
    result = run_cli("repair", str(bag))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"repaired {bag}")
    damaged = bag.with_name(bag.name + ".damaged")
    assert damaged.is_dir() and not (damaged / "metadata.yaml").exists()  # the original, as the kill left it
    assert not bag.with_name(bag.name + ".repairing").exists()
    with Reader(bag) as reader:
        assert [c.topic for c in reader.connections] == [STATES_TOPIC]
        kept = [(t, bytes(raw)) for _, t, raw in reader.messages()]
    stamps = np.array([header_stamp_ns(raw) for _, raw in kept])
    assert [t for t, _ in kept] == stamps.tolist()  # receive time = header stamp, as written
    assert np.all(np.diff(stamps) > 0)
    lost_s = (last_written_ns - stamps[-1]) * 1e-9
    assert 0.0 <= lost_s <= FLUSH_PERIOD_S + SCHEDULING_MARGIN_S
    assert (stamps[-1] - stamps[0]) * 1e-9 >= RUN_S - FLUSH_PERIOD_S - SCHEDULING_MARGIN_S
    if storage == "mcap":
        with next(bag.glob("*.mcap")).open("rb") as f:
            decoded = [m for _, _, _, m in make_reader(f, decoder_factories=[DecoderFactory()])
                       .iter_decoded_messages()]
        assert [m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec for m in decoded] == stamps.tolist()
        positions = np.array([m.position[0] for m in decoded])
        assert np.array_equal(positions, np.arange(len(positions)))  # from the first message, none left out
    assert parse_index((bag / "period_index.yaml").read_text()) == []  # no markers in this recording


def test_the_computed_index_of_a_bag_dumps_and_parses_back(tmp_path):
    """A bag without the recorder's index (as `ros2 bag record` or a repair leaves it): its computed index is
    written as YAML by repair."""
    write_recording(tmp_path / "bag", drop=range(300, 320), with_index=False)
    index = bag_index(tmp_path / "bag")
    assert index.source == "computed" and [e.flagged for e in index.entries] == [False, True, False]
    assert index.rate_hz == 500.0 and index.max_gap_s == 0.1  # measured; no description: harmonics unknown
    assert parse_index(index_yaml(index.entries, index.rate_hz, index.topic, index.rate_hz, index.max_gap_s)) \
        == index.entries


def test_repair_of_a_healthy_bag_says_so_and_changes_nothing(tmp_path):
    bag = tmp_path / "bag"
    write_recording(bag)
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in bag.iterdir()}
    result = run_cli("repair", str(bag))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{bag} reads as it is: nothing to repair"
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in bag.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bag"]  # no .damaged, no .repairing


def _one_error_line(result: subprocess.CompletedProcess) -> str:
    lines = result.stderr.strip().splitlines()
    assert "Traceback" not in result.stderr and len(lines) == 1, result.stderr
    return lines[0]


def test_repair_of_a_directory_with_metadata_but_no_storage_file_exits_2_with_one_line(tmp_path):
    bag = tmp_path / "bag"
    bag.mkdir()
    (bag / "metadata.yaml").write_text("rosbag2_bagfile_information: {version: 9, storage_identifier: mcap}\n")
    result = run_cli("repair", str(bag))
    assert result.returncode == 2
    assert _one_error_line(result) == f"error: {bag}: no .mcap or .db3 storage file to repair"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bag"]


def test_repair_of_a_directory_without_any_bag_file_exits_2_with_one_line(tmp_path):
    (tmp_path / "bag").mkdir()
    result = run_cli("repair", str(tmp_path / "bag"))
    assert result.returncode == 2
    assert _one_error_line(result) == f"error: {tmp_path / 'bag'}: no .mcap or .db3 storage file to repair"


def test_repair_of_a_missing_directory_exits_2_with_one_line(tmp_path):
    result = run_cli("repair", str(tmp_path / "nowhere"))
    assert result.returncode == 2
    assert _one_error_line(result) == f"error: {tmp_path / 'nowhere'}: no such bag directory"



def test_repair_where_the_bag_directory_is_not_writable_exits_2_before_touching_the_bag(tmp_path, monkeypatch,
                                                                                        capsys):
    bag = tmp_path / "bag"
    bag.mkdir()
    (bag / "recording_0.mcap").write_bytes(b"")  # a killed recorder's bag: storage file, no metadata.yaml

    def read_only(path, data):  # root writes anywhere, so a read-only file system is simulated
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(pathlib.Path, "write_bytes", read_only)
    assert recorder_main(["repair", str(bag)]) == 2
    assert capsys.readouterr().err == f"error: repair: the bag's directory {tmp_path} is not writable " \
                                      "(Permission denied)\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bag"]  # no .damaged, no .repairing
