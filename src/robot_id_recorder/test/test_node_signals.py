"""The recorder node as its own process: SIGINT and SIGTERM close the bag with everything received, ~/stop closes it
and leaves the node up with a latched finished status, and a bad parameter gives one line and exit code 2."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from recorder_bags import JOINTS, STATES_TOPIC, child_env
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_typestore
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from robot_id_contract.stamps import header_stamp_ns
from robot_id_msgs.msg import ExcitationStatus, RecordingStatus
from robot_id_recorder.message_types import typestore_for

NODE = "import sys; from robot_id_recorder.node import main; sys.exit(main(sys.argv[1:]))"
RATE_HZ = 500.0
RELIABLE = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
LATCHED = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
DISCOVERY_S = 2.0
"""Messages published before the recorder has subscribed are not delivered (volatile QoS): it polls for new
publishers every 0.2 s, and endpoint discovery on localhost takes 0.07–0.5 s here, more on a loaded machine (a CI
run took 0.501 s)."""
EXIT_S = 5.0


@pytest.fixture
def probe():
    """A node of the test process (in a context of its own) and spin(seconds, until)."""
    context = rclpy.Context()
    rclpy.init(context=context)
    node = Node("recorder_test_probe", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)

    def spin(seconds: float, until) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end and not until():
            executor.spin_once(timeout_sec=0.02)

    yield node, spin
    executor.remove_node(node)
    node.destroy_node()
    rclpy.shutdown(context=context)


@pytest.fixture
def recorder(tmp_path):
    """start(*parameters) -> the recorder process (robot iiwa14, bag tmp_path/bag); ended (killed at worst)."""
    processes = []
    with (tmp_path / "recorder.stderr").open("w") as stderr:

        def start(*parameters: str) -> subprocess.Popen:
            args = ["-p", "robot:=iiwa14", "-p", f"bag_path:={tmp_path / 'bag'}"]
            for p in parameters:
                args += ["-p", p]
            process = subprocess.Popen([sys.executable, "-c", NODE, "--ros-args", *args], env=child_env(),
                                       stdout=subprocess.DEVNULL, stderr=stderr)
            processes.append(process)
            return process

        try:
            yield start
        finally:
            for process in processes:
                if process.poll() is None:
                    process.send_signal(signal.SIGINT)
                    try:
                        process.wait(timeout=EXIT_S)
                    except subprocess.TimeoutExpired:
                        process.kill()
                        process.wait()


def _wait_until_up(node: Node, process: subprocess.Popen, timeout_s: float = 20.0) -> None:
    """The recorder has opened its bag and created its publishers (its status publisher is in the graph)."""
    deadline = time.monotonic() + timeout_s
    while node.count_publishers("/robot_id/recording_status") < 1:
        assert process.poll() is None, f"the recorder ended with {process.returncode}"
        assert time.monotonic() < deadline, "the recorder did not come up"
        time.sleep(0.05)


def _publish(node: Node, seconds: float) -> tuple[list[float], float | None]:
    """Publish joint states at 500 Hz for `seconds` (position[0] = message number k, a distinct header stamp);
    the monotonic time of every publish and when a subscriber matched first."""
    publisher = node.create_publisher(JointState, STATES_TOPIC, RELIABLE)
    sent, matched = [], None
    start_s, stamp0 = time.monotonic(), time.time_ns()
    for k in range(round(seconds * RATE_HZ)):
        time.sleep(max(0.0, start_s + k / RATE_HZ - time.monotonic()))
        msg = JointState(name=JOINTS, position=[float(k)] * 7, velocity=[0.0] * 7, effort=[-float(k)] * 7)
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp0 + k * 2_000_000, 1_000_000_000)
        publisher.publish(msg)
        sent.append(time.monotonic())
        if matched is None and publisher.get_subscription_count() > 0:
            matched = time.monotonic()
    return sent, matched


def _recorded(bag) -> tuple[list[int], list[int]]:
    """Message numbers k and header stamps of the joint states in the bag (rosbags)."""
    store = get_typestore(Stores.ROS2_KILTED)
    with Reader(bag) as reader:
        raws = [bytes(raw) for _, _, raw in reader.messages([c for c in reader.connections
                                                             if c.topic == STATES_TOPIC])]
    return ([int(store.deserialize_cdr(r, "sensor_msgs/msg/JointState").position[0]) for r in raws],
            [header_stamp_ns(r) for r in raws])


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_closes_the_bag_with_every_message_received(probe, recorder, tmp_path, signum):
    node, _ = probe
    process = recorder()
    _wait_until_up(node, process)
    sent, matched = _publish(node, 4.0)
    time.sleep(0.3)  # the last messages are delivered and written (reliable, depth 1000)
    signalled = time.monotonic()
    process.send_signal(signum)
    assert process.wait(timeout=EXIT_S) == 0, (tmp_path / "recorder.stderr").read_text()
    assert time.monotonic() - signalled < EXIT_S
    ks, stamps = _recorded(tmp_path / "bag")
    # every message from the first one received to the last one published, in order, none twice
    assert ks == list(range(ks[0], len(sent))), "messages lost or reordered after discovery"
    assert np.all(np.diff(stamps) == 2_000_000)
    # the only loss: the messages published while the recorder was discovering the publisher
    assert sent[ks[0]] - sent[0] <= DISCOVERY_S, f"the first {ks[0]} messages lost ({sent[ks[0]] - sent[0]:.3f} s)"
    assert matched is not None and matched - sent[0] <= DISCOVERY_S
    assert (tmp_path / "bag" / "period_index.yaml").is_file()


def test_stop_service_closes_the_bag_and_the_node_stays_up_with_a_latched_finished_status(probe, recorder, tmp_path):
    node, spin = probe
    process = recorder()
    _wait_until_up(node, process)
    sent, _ = _publish(node, 1.0)
    time.sleep(0.3)
    client = node.create_client(Trigger, "/recorder/stop")
    assert client.wait_for_service(timeout_sec=5.0)

    def stop() -> Trigger.Response:
        future = client.call_async(Trigger.Request())
        spin(5.0, until=future.done)
        assert future.done()
        return future.result()

    response = stop()
    ks, _ = _recorded(tmp_path / "bag")  # closed: metadata.yaml written, rosbags reads it
    assert response.success and response.message.startswith(f"stop requested: {len(ks)} joint states")
    assert ks == list(range(ks[0], len(sent))) and len(sent) - len(ks) <= DISCOVERY_S * RATE_HZ

    time.sleep(1.0)
    assert process.poll() is None  # exit_when_done is false: the node stays up

    statuses: list[RecordingStatus] = []
    node.create_subscription(RecordingStatus, "/robot_id/recording_status", statuses.append, LATCHED)
    spin(5.0, until=lambda: bool(statuses))  # created after the stop: the latched status still arrives
    assert statuses and statuses[0].finished
    assert statuses[0].samples_recorded == len(ks) and statuses[0].bag_path == str(tmp_path / "bag")
    assert statuses[0].periods_expected == 0 and statuses[0].periods_flagged == 0

    again = stop()
    assert not again.success and again.message == "already stopped"
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=EXIT_S) == 0
    assert _recorded(tmp_path / "bag")[0] == ks  # closing again at exit changed nothing


def test_a_bad_storage_parameter_gives_one_line_and_exit_code_2(recorder, tmp_path):
    process = recorder("storage:=zip")
    assert process.wait(timeout=30) == 2
    stderr = (tmp_path / "recorder.stderr").read_text()
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "storage must be one of ['mcap', 'sqlite3'], not 'zip'" in lines[0], stderr
    assert not (tmp_path / "bag").exists()


def test_a_hold_of_the_excitation_closes_the_bag_with_its_status_in_it(probe, recorder, tmp_path):
    """The excitation node holds (or refuses, or is aborted): no more periods will come, so the recorder closes the bag
    at once with what it received and the status that says why, and reports itself finished."""
    node, spin = probe
    process = recorder()
    _wait_until_up(node, process)
    sent, _ = _publish(node, 1.0)
    status_pub = node.create_publisher(ExcitationStatus, "/robot_id/excitation_status", LATCHED)
    statuses: list[RecordingStatus] = []
    node.create_subscription(RecordingStatus, "/robot_id/recording_status", statuses.append, LATCHED)
    status_pub.publish(ExcitationStatus(state="holding", reason="abort requested", stopped=True, periods_started=1,
                                       num_periods=3))
    spin(10.0, until=lambda: bool(statuses) and statuses[-1].finished)
    assert statuses and statuses[-1].finished
    ks, _ = _recorded(tmp_path / "bag")
    assert 0 < len(ks) <= len(sent) and statuses[-1].samples_recorded == len(ks)
    with Reader(tmp_path / "bag") as reader:
        connections = [c for c in reader.connections if c.topic == "/robot_id/excitation_status"]
        assert connections and connections[0].msgtype == "robot_id_msgs/msg/ExcitationStatus"
        raw = [bytes(r) for _, _, r in reader.messages(connections)]
    store = typestore_for(["robot_id_msgs/msg/ExcitationStatus"])
    recorded = store.deserialize_cdr(raw[-1], "robot_id_msgs/msg/ExcitationStatus")
    assert (recorded.state, recorded.reason) == ("holding", "abort requested")
    assert process.poll() is None  # the node stays up with its latched finished status
