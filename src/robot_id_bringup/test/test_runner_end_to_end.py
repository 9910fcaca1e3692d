"""The runner end to end: two graphs in two namespaces identify two arms at once; Ctrl-C and a hold end every
process; a bad request, a trajectory beyond the limits, a bag still being written and a replay the estimator refuses
end before anything starts or at once (the friction sweep through the graph: test_sweep_end_to_end.py)."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest
from runner_processes import RUNNER, environment, processes_in_domain

from robot_id_bringup.graph import Run
from robot_id_lab.truth_check import check_against_truth


@pytest.mark.timeout(900)
def test_two_graphs_in_two_namespaces_of_one_domain_identify_two_arms_at_once(tmp_path, domain_id):
    """The simulated iiwa14's graph in /left and the Panda's in /right, in one ROS domain at the same time: each
    graph's statuses, markers, acknowledgements, clock and result stay in its namespace (the names are relative,
    /clock is remapped), and each identifies its own arm, checked against its own simulator's truth."""
    data = pathlib.Path(__file__).parent / "data"
    runs = {"left": Run("iiwa14", "sim", str(tmp_path / "left"), 2, str(data / "iiwa14_8s.yaml"), namespace="left"),
            "right": Run("panda", "sim", str(tmp_path / "right"), 2, str(data / "panda_8s.yaml"), namespace="right")}
    runners = {name: subprocess.Popen(
        [sys.executable, "-m", "robot_id_bringup", "identify", "--robot", run.robot, "--mode", "sim", "--namespace",
         name, "--trajectory", run.trajectory, "--periods", "2", "--out", run.output_dir, "--timeout", "600"],
        env=environment(domain_id), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for name, run in runs.items()}
    try:
        outputs = {name: runner.communicate(timeout=700)[0] for name, runner in runners.items()}
    finally:
        for runner in runners.values():
            if runner.poll() is None:
                runner.kill()
    for name, run in runs.items():
        assert runners[name].returncode == 0, outputs[name][-4000:]
        identification = pathlib.Path(run.results_path) / "identification.json"
        assert json.loads(identification.read_text())["setup"]["name"] == run.robot
        errors = check_against_truth(run.robot, identification.parent, run.truth_path, simulated=False)
        physical, urdf = errors["true model"].rms_percent_of_torque["identified"], \
            errors["true model"].rms_percent_of_torque["urdf"]
        print(f"{name} ({run.robot}): physical set against its truth {physical.round(2)} %, the URDF {urdf.round(1)} %")
        assert all(physical < 0.25 * urdf), (physical, urdf)
    assert not processes_in_domain(domain_id)


@pytest.mark.parametrize(("after", "delay_s"), [
    ("", 0.3),                        # the runner still importing and checking the request
    ("robot_id: sim run of", 0.5),    # the nodes importing
    ("robot_id: sim run of", 2.0),    # the nodes setting up (rclpy up, the simulator loading)
    ("robot_id: recording:", 0.0),    # every node up
])
def test_ctrl_c_at_any_moment_ends_every_process_without_a_traceback(tmp_path, after, delay_s, domain_id):
    """Exit 130, no traceback from the runner or any node, no process left. The runner stops its nodes with SIGTERM:
    a node still importing ends on it silently, one that is starting ends quietly (its main), a running one shuts
    down; Ctrl-C while the runner itself imports is caught by its entry point."""
    runner = subprocess.Popen([*RUNNER, "--out", str(tmp_path / "run")], env=environment(domain_id),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # a shell's background job ignores SIGINT, and Python then keeps ignoring it until the runner sets its handler:
    # the child gets the default action back, as a terminal's foreground process has it
    seen = []
    try:
        deadline = time.monotonic() + 60.0
        for line in runner.stdout if after else []:
            seen.append(line)
            if line.startswith(after) or time.monotonic() > deadline:
                break
        assert not after or seen[-1].startswith(after), "".join(seen)[-3000:]
        time.sleep(delay_s)
        if after == "robot_id: recording:":
            assert len(processes_in_domain(domain_id)) >= 5  # the runner and its four nodes
        runner.send_signal(signal.SIGINT)
        output = "".join(seen) + runner.communicate(timeout=60)[0]
    finally:
        if runner.poll() is None:  # a failed case ends its nodes too: they would count as left in the next one
            runner.kill()
            runner.wait()
            for pid in processes_in_domain(domain_id):
                os.kill(pid, signal.SIGKILL)
    assert runner.returncode == 130, output[-3000:]
    assert "Traceback" not in output and "KeyboardInterrupt" not in output, output[-5000:]
    time.sleep(0.5)
    left = processes_in_domain(domain_id)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left after Ctrl-C: {left}"


def test_a_hold_ends_the_run_at_once_naming_its_reason(tmp_path, domain_id):
    """An abort during the excitation holds the arm: the recording cannot be whole, so the runner stops every node and
    exits 1 with the excitation node's reason (before, a hold was only a log line and the run waited or passed)."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from std_srvs.srv import Trigger

    from robot_id_contract.topics import EXCITATION_STATUS
    from robot_id_msgs.msg import ExcitationStatus

    log = tmp_path / "runner.log"
    with log.open("w") as out:
        runner = subprocess.Popen([*RUNNER, "--periods", "2", "--out", str(tmp_path / "run"),
                                   "--timeout", "120"], env=environment(domain_id), stdout=out,
                                  stderr=subprocess.STDOUT, text=True)
    context = rclpy.Context()
    rclpy.init(context=context, domain_id=domain_id)
    node = rclpy.create_node("abort_caller", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    statuses: list[ExcitationStatus] = []
    node.create_subscription(ExcitationStatus, EXCITATION_STATUS.name, statuses.append, EXCITATION_STATUS.qos)
    try:
        deadline = time.monotonic() + 90.0
        while not (statuses and statuses[-1].periods_started >= 1) and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
        assert statuses and statuses[-1].state == "exciting", log.read_text()[-3000:]
        client = node.create_client(Trigger, "/excitation/abort")
        future = client.call_async(Trigger.Request())
        executor.spin_until_future_complete(future, timeout_sec=10.0)
        assert future.result() is not None and future.result().success
        assert runner.wait(timeout=60) == 1, log.read_text()[-3000:]
        assert ("robot_id: error: the excitation node stopped the arm: holding (abort requested) after 1 of 2 periods "
                "started; the recording is incomplete") in log.read_text(), log.read_text()[-3000:]
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)
        if runner.poll() is None:
            runner.kill()
    assert not processes_in_domain(domain_id)


@pytest.mark.parametrize(("args", "message"), [
    (["--mode", "replay"], "error: mode replay needs a bag to identify (--bag DIR, or bag:=DIR with ros2 launch)"),
    (["--periods", "-1"], "error: periods must be at least 1 (0: the trajectory's default), not -1"),
    (["--trajectory", "nosuchsweep"], "error: no shipped trajectory 'nosuchsweep'; shipped: ['fr3', "
                                      "'fr3_friction_sweep', 'fr3_hand', 'fr3_hand_friction_sweep', "
                                      "'fr3_hand_payload', 'fr3_payload', 'iiwa14', "
                                      "'iiwa14_friction_sweep', 'iiwa14_payload', 'iiwa7', 'iiwa7_friction_sweep', "
                                      "'iiwa7_payload', 'panda', 'panda_friction_sweep', 'panda_hand', "
                                      "'panda_hand_friction_sweep', 'panda_hand_payload', 'panda_payload']"),
    (["--friction-sweep", "/nonexistent/sweep"], "error: friction sweep bag not found: /nonexistent/sweep"),
    (["--robot", "nosuchrobot"], "error: --robot: no robot config 'nosuchrobot' (shipped: fr3, fr3_hand, iiwa14, "
                                 "iiwa7, panda, panda_hand; or a robot folder or a YAML path)"),
    (["--mode", "replay", "--bag", "/nonexistent/bag"], "error: bag not found: /nonexistent/bag"),
    (["--trajectory", "panda"], "error: --trajectory panda: the trajectory was made for robot 'panda', this robot is "
                                "'iiwa14'"),
    (["--timeout", "-1"], "error: --timeout must be a finite number of seconds, at least 0 (0: never), not -1"),
    (["--timeout", "nan"], "error: --timeout must be a finite number of seconds, at least 0 (0: never), not nan"),
    (["--robot-timeout", "-5"],
     "error: --robot-timeout must be a finite number of seconds, at least 0 (0: never), not -5"),
    (["--yes"], "error: --yes confirms the motion of mode hardware; mode sim moves no robot"),
    (["--bag", "/data/bag"], "error: mode sim records its own bag (into the output directory); a bag to identify is "
                             "for mode replay"),
    (["--mode", "replay", "--bag", "/nonexistent/bag", "--periods", "2"],
     "error: mode replay identifies a bag; it runs no periods"),
])
def test_a_bad_request_is_one_line_and_exit_code_2_before_anything_starts(args, message):
    result = subprocess.run([*RUNNER, *args], capture_output=True, text=True, timeout=60,
                            env=environment(201 + os.getpid() % 30))
    assert result.returncode == 2 and result.stderr.strip() == message
    assert result.stdout == ""  # no node was started (the runner announces them first)


def test_a_trajectory_beyond_the_limits_is_refused_before_anything_starts_naming_the_worst(tmp_path):
    """The excitation node's own check (robot, joints, limits, collisions), run by the runner: one line with the
    count, the worst violation and the command that lists them all."""
    import yaml

    from robot_id_excitation.trajectory_file import shipped_trajectory

    data = yaml.safe_load(shipped_trajectory("iiwa14").read_text())
    data["coefficients_a"] = [[3.0 * c for c in row] for row in data["coefficients_a"]]
    fast = tmp_path / "fast.yaml"
    fast.write_text(yaml.safe_dump(data))
    result = subprocess.run([*RUNNER, "--trajectory", str(fast)], capture_output=True, text=True, timeout=60,
                            env=environment(201 + os.getpid() % 30))
    assert result.returncode == 2 and result.stdout == "" and len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith(f"error: --trajectory {fast}: trajectory violates the robot's limits: "
                                    "INFEASIBLE: "), result.stderr
    assert "; the worst: " in result.stderr
    assert result.stderr.strip().endswith(f"all of them: python -m robot_id_excitation check {fast} --robot iiwa14")


def test_a_bag_still_being_written_is_refused_with_the_command_that_repairs_it(tmp_path):
    """No metadata.yaml yet (the recorder writes it when it closes the bag): before, the estimator said only
    "Expected metadata file ... does not exist"."""
    from robot_id_recorder.__main__ import parser as recorder_parser

    bag = tmp_path / "bag"
    bag.mkdir()
    (bag / "bag_0.mcap").write_bytes(b"\x89MCAP0\r\n")
    result = subprocess.run([*RUNNER[:-2], "--mode", "replay", "--bag", str(bag), "--out", str(tmp_path / "out")],
                            capture_output=True, text=True, timeout=60, env=environment(201 + os.getpid() % 30))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == (f"error: bag {bag} is not closed (no metadata.yaml): its recording is still going on, or "
                             f"its recorder was killed; then make it readable with `python -m robot_id_recorder repair "
                             f"{bag}`\n")
    hint = result.stderr.split("`")[1].split()
    assert hint[:3] == ["python", "-m", "robot_id_recorder"]
    assert vars(recorder_parser().parse_args(hint[3:])) == {"command": "repair", "bag": bag}  # the real command line


def test_a_replay_the_estimator_refuses_ends_at_once_with_its_reason(tmp_path):
    """A bag of other joints: the estimator answers the request with its reason, publishes no result; the runner
    stops everything and says why, instead of waiting for a result that will not come."""
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState

    from robot_id_recorder.bag_writer import BagWriter
    from robot_id_recorder.message_types import typestore_for

    writer = BagWriter(tmp_path / "bag", typestore_for(["sensor_msgs/msg/JointState"]))
    writer.add_topic("/joint_states", "sensor_msgs/msg/JointState")
    for k in range(200):
        msg = JointState(name=["a", "b"], position=[0.0, 0.0], velocity=[0.0, 0.0], effort=[0.0, 0.0])
        msg.header.stamp.nanosec = k * 2_000_000
        writer.write("/joint_states", k * 2_000_000, bytes(serialize_message(msg)))
    writer.close()
    started = time.monotonic()
    result = subprocess.run([*RUNNER[:-2], "--mode", "replay", "--bag", str(tmp_path / "bag"), "--out",
                             str(tmp_path / "out"), "--timeout", "120"], capture_output=True, text=True, timeout=180,
                            env=environment(205 + os.getpid() % 25))
    assert result.returncode == 1
    assert "robot_id: error: the estimator could not identify" in result.stderr
    assert result.stdout.splitlines()[-1] == ("robot_id: no model written: the run ended (exit code 1) before an "
                                              "identification")
    assert time.monotonic() - started < 60.0  # not the 120 s timeout


def test_hardware_mode_with_no_robot_publishing_ends_after_the_robot_timeout_naming_the_topic(tmp_path, domain_id):
    """Before, the runner waited for the robot's joint states for ever. No stack publishes here: after
    --robot-timeout the run ends with exit 1 in one line naming the topic, the domain and what to check, and no
    process of its graph is left."""
    started = time.monotonic()
    result = subprocess.run([*RUNNER[:-2], "--mode", "hardware", "--record-only", "--yes", "--robot-timeout", "2",
                             "--out", str(tmp_path / "run")], capture_output=True, text=True, timeout=60,
                            env=environment(domain_id))
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr.splitlines()[-1] == (
        f"robot_id: error: no joint states on /lbr/joint_states after 2 s: is the robot's stack running and publishing "
        "them, its controller on /lbr/joint_trajectory_controller/joint_trajectory active, in ROS_DOMAIN_ID "
        f"{domain_id} with ROS_AUTOMATIC_DISCOVERY_RANGE LOCALHOST? (--robot-timeout sets how long to wait)")
    assert result.stdout.splitlines()[-1] == ("robot_id: nothing recorded whole: the run ended (exit code 1); no model "
                                              "(a run that only records)")
    assert time.monotonic() - started < 30.0
    assert not processes_in_domain(domain_id)


def test_the_robot_timeout_is_30_s_unless_given():
    from robot_id_bringup.runner import ROBOT_TIMEOUT_S, identify_parser

    assert ROBOT_TIMEOUT_S == 30.0
    assert identify_parser().parse_args([]).robot_timeout == 30.0
    assert identify_parser().parse_args(["--robot-timeout", "0"]).robot_timeout == 0.0
