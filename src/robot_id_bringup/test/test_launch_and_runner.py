"""launch/identify.launch.py and the runner start the same nodes with the same parameters (both from graph.py); the
runner's command lines are what rcl parses; bad requests are one line.

launch and launch_ros are not installed on these machines (no ROS 2 apt repository): the launch file is run here
against stand-ins that record what it asks for, the way launch would call it.
"""

from __future__ import annotations

import importlib.util
import io
import pathlib
import socket
import sys
import threading
import time
import types

import pytest
import yaml

from robot_id_bringup.graph import DEFAULT_PERIODS, SWEEP_PERIODS, Run, identify_graph
from robot_id_bringup.runner import (
    DOMAINS,
    command,
    console,
    domain_in_use,
    free_domain_id,
    parameter_argument,
    ros_environment,
)
from robot_id_excitation.trajectory_file import shipped_trajectory

LAUNCH_FILE = pathlib.Path(__file__).resolve().parents[1] / "launch" / "identify.launch.py"


class _Recorded:
    def __init__(self, *args, **kwargs) -> None:
        self.args, self.kwargs = args, kwargs


def _launch_stand_ins(monkeypatch) -> None:
    """Minimal launch/launch_ros modules: actions record their arguments; LaunchConfiguration reads a dict."""
    launch = types.ModuleType("launch")
    launch.LaunchDescription = _Recorded
    actions = types.ModuleType("launch.actions")
    actions.DeclareLaunchArgument = _Recorded
    actions.OpaqueFunction = _Recorded
    substitutions = types.ModuleType("launch.substitutions")

    class LaunchConfiguration:
        def __init__(self, name: str) -> None:
            self.name = name

        def perform(self, context: dict) -> str:
            return context[self.name]

    substitutions.LaunchConfiguration = LaunchConfiguration
    launch_ros = types.ModuleType("launch_ros")
    ros_actions = types.ModuleType("launch_ros.actions")
    ros_actions.Node = _Recorded
    for name, module in {"launch": launch, "launch.actions": actions, "launch.substitutions": substitutions,
                         "launch_ros": launch_ros, "launch_ros.actions": ros_actions}.items():
        monkeypatch.setitem(sys.modules, name, module)


def _launched(monkeypatch, **arguments: str) -> list[dict]:
    """The Node actions identify.launch.py creates for the given launch arguments (defaults for the rest)."""
    _launch_stand_ins(monkeypatch)
    spec = importlib.util.spec_from_file_location("identify_launch", LAUNCH_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    description = module.generate_launch_description()
    declared = {a.args[0]: a.kwargs["default_value"] for a in description.args[0] if a.args}
    opaque = next(a for a in description.args[0] if "function" in a.kwargs)
    return [node.kwargs for node in opaque.kwargs["function"](declared | arguments)]


@pytest.mark.parametrize("arguments", [
    {}, {"robot": "fr3", "mode": "hardware", "periods": "3"},
    {"mode": "replay", "bag": "/data/run1/bag"}, {"robot": "iiwa7", "trajectory": "/tmp/exc.yaml", "output_dir": "r"},
    {"friction_sweep": "/data/sweep/bag,/data/sweep2/bag"}, {"trajectory": "iiwa14_friction_sweep"},
    {"namespace": "left"}, {"namespace": "lab/arm_2", "mode": "hardware"},
    {"robot": "fr3", "mode": "hardware", "confirm": "true"},
    {"robot": "panda", "payload": "true", "sim_load": "3", "baseline": "/data/bare/bag"},
    {"payload": "true", "record_only": "true"}, {"payload": "true", "arm": "/data/arm/identification.json"},
])
def test_the_launch_file_and_the_runner_start_the_same_nodes(monkeypatch, arguments):
    nodes = _launched(monkeypatch, **arguments)
    values = {"robot": "iiwa14", "mode": "sim", "output_dir": "results/run", "periods": "0", "trajectory": "",
              "bag": "", "friction_sweep": "", "confirm": "false", "namespace": "", "payload": "false", "arm": "",
              "baseline": "", "record_only": "false", "sim_load": "-1"} | arguments
    run = Run(values["robot"], values["mode"], values["output_dir"], int(values["periods"]), values["trajectory"],
              values["bag"], tuple(b for b in values["friction_sweep"].split(",") if b), values["confirm"] == "true",
              values["namespace"], payload=values["payload"] == "true", payload_arm=values["arm"],
              payload_baselines=tuple(b for b in values["baseline"].split(",") if b),
              record_only=values["record_only"] == "true", sim_load_seed=int(values["sim_load"]))
    specs = identify_graph(run)
    assert [(n["package"], n["executable"], n["name"]) for n in nodes] == [
        (s.package, s.executable, s.name) for s in specs]
    assert [n["parameters"] for n in nodes] == [[s.parameters] for s in specs]
    assert [(n["namespace"], n["remappings"]) for n in nodes] == [(s.namespace, list(s.remappings)) for s in specs]
    for spec in specs:  # the runner passes every parameter on the command line, in rcl's syntax
        args = command(spec)
        assert args[args.index("--ros-args") + 2] == f"__node:={spec.name}"
        for name, value in spec.parameters.items():
            assert parameter_argument(name, value) in args
        for source, target in spec.remappings:
            assert f"{source}:={target}" in args


def test_a_friction_sweep_run_records_only_and_its_bag_goes_to_the_next_runs_estimator():
    sweep = {s.name: s for s in identify_graph(Run("iiwa14", "sim", "out/sweep", trajectory="iiwa14_friction_sweep"))}
    assert set(sweep) == {"robot_id_sim", "recorder", "excitation"}
    assert sweep["excitation"].parameters["num_periods"] == SWEEP_PERIODS
    main = {s.name: s for s in identify_graph(Run("iiwa14", "sim", "out", friction_sweeps=("out/sweep/bag",)))}
    assert main["estimator"].parameters["friction_sweep_bags"] == ["out/sweep/bag"]
    assert main["excitation"].parameters["num_periods"] == DEFAULT_PERIODS
    assert "friction_sweep_bags" not in {s.name: s for s in identify_graph(Run())}["estimator"].parameters


def test_a_payload_run_excites_the_wrist_and_asks_the_estimator_for_the_load():
    """Its baseline records the payload excitation only; the loaded run's estimator identifies the load against it,
    the simulator carrying the seeded load; the arm's own excitation and identification are untouched."""
    baseline = {s.name: s for s in identify_graph(Run("panda", "sim", "out/bare", payload=True, record_only=True))}
    assert set(baseline) == {"robot_id_sim", "recorder", "excitation"}
    assert baseline["excitation"].parameters["trajectory_file"] == "panda_payload"
    assert "load_seed" not in baseline["robot_id_sim"].parameters
    loaded = Run("panda", "sim", "out/loaded", payload=True, payload_baselines=("out/bare/bag",), sim_load_seed=3)
    nodes = {s.name: s for s in identify_graph(loaded)}
    assert nodes["robot_id_sim"].parameters["load_seed"] == 3
    assert nodes["estimator"].parameters | {"payload": True, "payload_baseline_bags": ["out/bare/bag"]} == \
        nodes["estimator"].parameters
    assert loaded.results_path == "out/loaded/bag_payload"
    arm = {s.name: s for s in identify_graph(Run("panda"))}
    assert arm["excitation"].parameters["trajectory_file"] == "panda" and "payload" not in arm["estimator"].parameters


@pytest.mark.parametrize(("run", "problem"), [
    (Run(payload_arm="a.json"), "an arm (--arm) and baseline bags (--baseline) are for a payload run (--payload)"),
    (Run(payload=True, payload_arm="a.json", payload_baselines=("b",)), "not both"),
    (Run(payload=True, record_only=True, payload_baselines=("b",)), "a run that only records identifies nothing"),
    (Run(mode="hardware", sim_load_seed=1), "a simulated load (--sim-load) is for mode sim, not hardware"),
    (Run(sim_load_seed=-2), "a simulated load's seed (--sim-load) is 0 or more (-1: none), not -2"),
    (Run(periods=1, payload=True, payload_baselines=("b",)), "a loaded run compared with a baseline needs 2 or more"),
    (Run(payload=True, friction_sweeps=("s",)), "--friction-sweep is for an arm's identification"),
])
def test_a_payload_request_that_cannot_work_is_refused_in_one_line(run, problem):
    assert any(problem in line for line in run.problems()), run.problems()


def test_the_runner_picks_a_domain_nobody_here_uses(domain_id):
    """A port of the domain's second participant held (as a node of another graph would): the runner moves on."""
    start = domain_id
    assert not domain_in_use(start) and free_domain_id(start) == start
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as held:
        held.bind(("", 7400 + 250 * start + 12))
        assert domain_in_use(start) and free_domain_id(start) == free_domain_id(start + 1) != start
    environ = ros_environment({"PATH": "/bin"})
    assert environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST" and int(environ["ROS_DOMAIN_ID"]) in DOMAINS
    assert ros_environment({"ROS_DOMAIN_ID": "5"})["ROS_DOMAIN_ID"] == "5"  # the user's choice stays


def test_parameter_arguments_are_yaml_as_rcl_reads_them():
    assert parameter_argument("robot", "iiwa14") == "robot:=iiwa14"
    assert parameter_argument("bag_path", "") == "bag_path:=''"
    assert parameter_argument("use_sim_time", True) == "use_sim_time:=true"
    assert parameter_argument("real_time_factor", 0.0) == "real_time_factor:=0.0"
    assert parameter_argument("lockstep_subscribers", ["recorder"]) == "lockstep_subscribers:=[recorder]"
    assert parameter_argument("trajectory_file", "5") == "trajectory_file:='5'"  # stays a string


def test_the_sim_graph_is_lockstep_with_the_recorder_and_the_excitation_on_the_simulators_clock():
    specs = {s.name: s for s in identify_graph(Run("iiwa14", "sim", "out", 2))}
    assert specs["robot_id_sim"].parameters["lockstep_subscribers"] == ["recorder", "excitation"]
    assert specs["recorder"].parameters["ack_name"] == "recorder"
    assert specs["excitation"].parameters["ack_name"] == "excitation"
    assert all(specs[n].parameters["use_sim_time"] for n in ("recorder", "excitation", "estimator"))
    assert specs["recorder"].parameters["bag_path"] == str(pathlib.Path("out") / "bag")
    # in lockstep the excitation node keeps its hardware safety settings (no sim-only relaxations)
    safety = {"max_step_gap_s", "state_timeout_s", "lead_s", "max_tracking_error_rad"}
    assert not safety & specs["excitation"].parameters.keys()
    hardware = {s.name: s for s in identify_graph(Run("fr3", "hardware", "out", 2))}
    assert not safety & hardware["excitation"].parameters.keys() and not hardware["excitation"].parameters["ack_name"]
    assert "robot_id_sim" not in hardware and hardware["excitation"].parameters["mode"] == "hardware"
    assert not hardware["recorder"].parameters["use_sim_time"]


@pytest.mark.parametrize(("payload", "trajectory", "start_key"), [
    (False, "", "offsets_rad"), (True, "", "offsets_rad"), (False, "iiwa14_friction_sweep", "hold_rad")])
def test_the_simulated_arm_starts_at_rest_where_its_motion_starts(payload, trajectory, start_key):
    """Nothing to approach in sim mode: the simulator's start pose is the one the trajectory file states (read here
    from the shipped YAML itself); a trajectory that does not load leaves the simulator's default (mid-range)."""
    run = Run("iiwa14", "sim", "out", 2, trajectory, payload=payload)
    shipped = yaml.safe_load(pathlib.Path(shipped_trajectory(run.trajectory_name)).read_text())
    sim = {s.name: s for s in identify_graph(run)}["robot_id_sim"]
    assert sim.parameters["start_position_rad"] == shipped[start_key]
    missing = {s.name: s for s in identify_graph(Run("iiwa14", "sim", "out", 2, "/nonexistent/x.yaml"))}
    assert "start_position_rad" not in missing["robot_id_sim"].parameters


def test_a_graph_in_a_namespace_has_every_node_there_and_on_sim_time_its_own_clock():
    """Names are relative (robot_id_contract.topics), so the namespace holds the whole graph; /clock is global and
    is remapped into it, else two simulators in one domain would each drive the other's graph."""
    sim = identify_graph(Run("iiwa14", "sim", "out", 2, namespace="left"))
    assert {s.namespace for s in sim} == {"/left"}
    assert all(s.remappings == (("/clock", "/left/clock"),) for s in sim)
    hardware = identify_graph(Run("fr3", "hardware", "out", 2, namespace="/lab/arm_2/"))
    assert {(s.namespace, s.remappings) for s in hardware} == {("/lab/arm_2", ())}
    assert Run(namespace="lab/arm_2").node_path("excitation") == "/lab/arm_2/excitation"
    assert Run().node_path("excitation") == "/excitation" and not identify_graph(Run())[0].remappings


@pytest.mark.parametrize(("run", "message"), [
    (Run(mode="replay"), r"mode replay needs a bag to identify \(--bag DIR, or bag:=DIR with ros2 launch\)"),
    (Run("panda", "hardware"), r"mode hardware: franka_ros2 drives the FR3, not the FER \(Panda\): record the FER "
                               r"with what drives it .* identify the log offline"),
    (Run(mode="dry"), "mode must be one of sim, hardware, replay, not 'dry'"),
    (Run(periods=-1), r"periods must be at least 1 \(0: the trajectory's default\), not -1"),
    (Run(mode="replay", bag="b", trajectory="iiwa14"), "mode replay identifies a bag; it runs no trajectory"),
    (Run(namespace="2nd arm"), "namespace '2nd arm' is no ROS namespace"),
])
def test_a_bad_request_is_refused_with_its_reason(run, message):
    with pytest.raises(ValueError, match=message):
        identify_graph(run)


def test_the_time_left_counts_from_the_first_period_not_from_the_start(monkeypatch, capsys):
    """30 s of start-up and approach, then 20 s periods: after the first of five, 4 × 20 s are left (not 4 × 50)."""
    from robot_id_bringup import run_monitor
    from robot_id_msgs.msg import RecordingStatus

    now = {"s": 0.0}
    monkeypatch.setattr(run_monitor.time, "monotonic", lambda: now["s"])
    monitor = run_monitor.RunMonitor(Run())
    try:
        for t_s, recorded, expected in ((1.0, 0, 0), (30.0, 0, 5), (50.0, 1, 5)):
            now["s"] = t_s
            monitor._on_status(RecordingStatus(periods_recorded=recorded, periods_expected=expected))
    finally:
        monitor.close()
    assert "robot_id: recording: 1/5 periods, 0 joint states, 0 missing, 0 periods flagged (50 s, about 80 s left)" \
        in capsys.readouterr().out


def test_lines_from_the_nodes_and_the_runner_stay_whole_on_the_console():
    """The nodes' output is forwarded from a thread per node while the runner prints its own progress; print() wrote
    a line and its newline apart ("... (148 s)[estimator] [WARN] ..." in the demo)."""
    class SlowStream(io.StringIO):  # a character at a time, letting other threads in between
        def write(self, text: str) -> int:
            for character in text:
                super().write(character)
                time.sleep(0)
            return len(text)

    stream = SlowStream()
    expected = [f"[node{k}] line {i} {'x' * 40}" for k in range(4) for i in range(30)]

    def write(k: int) -> None:
        for line in expected[30 * k:30 * (k + 1)]:
            console(line, stream)

    threads = [threading.Thread(target=write, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(stream.getvalue().splitlines()) == sorted(expected)


def test_a_replay_writes_its_results_where_a_recording_run_does(monkeypatch, domain_id):
    """<output_dir>/<bag name>_identification, as docs/real_robots.md says (bag_identification/ for the recorder's
    bags); before, a replay wrote into the output directory itself. The request the runner sends says so."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    from robot_id_bringup.run_monitor import RunMonitor
    from robot_id_contract.topics import IDENTIFY_BAG_SERVICE
    from robot_id_msgs.srv import IdentifyBag

    assert Run("iiwa14", "sim", "out").results_path == str(pathlib.Path("out") / "bag_identification")
    replay = Run("iiwa14", "replay", "out", bag="/data/run1/bag/")
    assert replay.results_path == str(pathlib.Path("out") / "bag_identification")
    other = Run("iiwa14", "replay", "o", bag="/data/sweep_2")
    assert other.results_path == str(pathlib.Path("o") / "sweep_2_identification")
    monkeypatch.setenv("ROS_DOMAIN_ID", str(domain_id))
    context = rclpy.Context()
    rclpy.init(context=context)
    estimator = rclpy.create_node("estimator", context=context)
    requests = []

    def answer(request, response):
        requests.append(request)
        response.success, response.message = False, "stand-in"
        return response

    estimator.create_service(IdentifyBag, IDENTIFY_BAG_SERVICE, answer)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(estimator)
    monitor = RunMonitor(replay)
    try:
        deadline = time.monotonic() + 20.0
        while monitor.failure is None and time.monotonic() < deadline:
            monitor.spin_once(0.05)
            executor.spin_once(timeout_sec=0.05)
    finally:
        monitor.close()
        executor.shutdown()
        estimator.destroy_node()
        rclpy.shutdown(context=context)
    assert [(r.bag_path, r.output_dir) for r in requests] == [(replay.bag, replay.results_path)]
    assert monitor.failure == "stand-in"


def test_a_ctrl_c_a_library_swallows_while_the_runner_starts_still_starts_nothing(monkeypatch, tmp_path):
    """CI saw a Ctrl-C 0.3 s after the start lost: the runner went on to run the whole graph. The interrupt is now
    remembered: swallowed during the input checks (as a C extension that clears the error would), the run exits 130
    without a node or the monitor started."""
    import os
    import signal

    from robot_id_bringup import __main__ as entry
    from robot_id_bringup import interrupts, runner

    def swallowing_checks(_run: Run) -> list[str]:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1.0)
        except KeyboardInterrupt:
            pass
        return []

    started = []
    monkeypatch.setattr(interrupts, "RECEIVED", [])
    monkeypatch.setattr(runner, "input_problems", swallowing_checks)
    monkeypatch.setattr(runner, "Child", lambda spec, env: started.append(spec.name))
    monkeypatch.setattr("robot_id_bringup.run_monitor.RunMonitor", lambda run: started.append("monitor"))
    monkeypatch.setenv("ROS_DOMAIN_ID", "99")
    previous = signal.getsignal(signal.SIGINT)
    try:
        code = entry.main(["identify", "--robot", "iiwa14", "--mode", "sim", "--out", str(tmp_path / "run")])
    finally:
        signal.signal(signal.SIGINT, previous)
    assert code == 130 and not started, started
