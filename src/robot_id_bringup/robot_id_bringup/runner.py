"""The runner: the identification graph (graph.py) as separate processes over DDS, for machines without the ROS 2
command line (and with it: it is what `ros2 launch robot_id_bringup identify.launch.py` starts, without launch).

Each node runs its installed executable with `--ros-args`; the runner prefixes and forwards their output, follows
the run on robot_id/recording_status, robot_id/excitation_status and robot_id/identification_result (all transient
local), asks for the confirmation of hardware mode (confirmation.py), and stops every process (SIGTERM) on Ctrl-C,
when one fails, and when the identification result is in. The request is checked before anything starts
(input_checks.py). Discovery stays on this machine
(ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST unless set) and in a domain of its own (ROS_DOMAIN_ID from the process id
unless set).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

import yaml

from robot_id_bringup import interrupts
from robot_id_bringup.confirmation import Confirmation, TerminalLine
from robot_id_bringup.graph import (
    DEFAULT_PERIODS,
    EXCITATION_NAME,
    MODES,
    SWEEP_PERIODS,
    NodeSpec,
    Run,
    identify_graph,
)
from robot_id_bringup.input_checks import input_problems, option_problems
from robot_id_bringup.model_line import model_line
from robot_id_cli.command_line import HelpFormatter, check_writable_directory, robot_option_help
from robot_id_contract.processes import stop_process
from robot_id_model.exit_codes import add_exit_codes

if TYPE_CHECKING:
    from robot_id_bringup.run_monitor import RunMonitor
    from robot_id_msgs.msg import IdentificationResult

DOMAINS = range(1, 102)  # 0 is everyone's default; 101 domains keep every RTPS port below 33 000
PARTICIPANTS_PROBED = 16
ROBOT_TIMEOUT_S = 30.0
"""hardware mode: how long after the start the runner waits for the robot's first joint state (counted by the
recorder) before it ends the run (--robot-timeout; the nodes start in a few seconds, the robot's stack publishes at
once)."""


CONSOLE = threading.Lock()


def console(text: str, stream: TextIO | None = None) -> None:
    """One line on the runner's console (stdout unless `stream`), written whole: the nodes' output is forwarded from
    other threads, and print() writes a line and its newline separately, so two lines could run into one."""
    stream = stream or sys.stdout
    with CONSOLE:
        stream.write(f"{text}\n")
        stream.flush()


class RunnerError(RuntimeError):
    """Why the graph could not run, in one line."""


def parameter_argument(name: str, value: object) -> str:
    """`name:=value` with the value in YAML, as rcl parses parameter overrides (strings quoted when needed)."""
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000).strip()
    return f"{name}:={text.removesuffix('...').strip()}"


def command(spec: NodeSpec) -> list[str]:
    """The node's installed executable (lib/<package>/<executable>) with its name, namespace and parameters."""
    from ament_index_python.packages import PackageNotFoundError, get_package_prefix

    try:
        path = pathlib.Path(get_package_prefix(spec.package)) / "lib" / spec.package / spec.executable
    except PackageNotFoundError:
        raise RunnerError(f"{spec.package} is not installed: build the workspace (make setup) and source it") from None
    if not path.is_file():
        raise RunnerError(f"{path} does not exist: rebuild the workspace (make setup)")
    args = [str(path), "--ros-args", "-r", f"__node:={spec.name}"]
    if spec.namespace:
        args += ["-r", f"__ns:={spec.namespace}"]
    for source, target in spec.remappings:
        args += ["-r", f"{source}:={target}"]
    for name, value in spec.parameters.items():
        args += ["-p", parameter_argument(name, value)]
    return args


def domain_in_use(domain_id: int) -> bool:
    """Whether a DDS participant on this machine holds one of the domain's unicast ports (the RTPS port mapping
    every ROS 2 middleware uses: 7400 + 250·domain + 10 + 2·participant, and + 1 for user traffic)."""
    base = 7400 + 250 * domain_id + 10
    for port in range(base, base + 2 * PARTICIPANTS_PROBED):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            try:
                probe.bind(("", port))
            except OSError:
                return True
    return False


def free_domain_id(start: int) -> int:
    """The first domain of DOMAINS from `start` on (wrapping around) that no participant on this machine uses."""
    first = DOMAINS.index(start) if start in DOMAINS else 0
    for k in range(len(DOMAINS)):
        domain_id = DOMAINS[(first + k) % len(DOMAINS)]
        if not domain_in_use(domain_id):
            return domain_id
    raise RunnerError(f"every ROS domain {DOMAINS.start}-{DOMAINS.stop - 1} is in use here: set ROS_DOMAIN_ID")


def ros_environment(environ: dict[str, str] | None = None) -> dict[str, str]:
    """The children's environment: localhost discovery and a free domain unless the user set them."""
    env = dict(os.environ if environ is None else environ)
    env.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    if "ROS_DOMAIN_ID" not in env:
        env["ROS_DOMAIN_ID"] = str(free_domain_id(DOMAINS[os.getpid() % len(DOMAINS)]))
    env["PYTHONUNBUFFERED"] = "1"
    return env


class Child:
    """One node process; its output lines are forwarded with the node's name in front."""

    def __init__(self, spec: NodeSpec, env: dict[str, str]) -> None:
        self.name = spec.name
        self.popen = subprocess.Popen(command(spec), env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.thread = threading.Thread(target=self._forward, daemon=True)
        self.thread.start()

    def _forward(self) -> None:
        for line in self.popen.stdout:
            console(f"[{self.name}] {line.rstrip()}")

    def stop(self) -> int:
        """SIGTERM, then SIGKILL after STOP_TIMEOUT_S; the exit code."""
        code = stop_process(self.popen)
        self.thread.join(timeout=2.0)
        return code


def run_graph(run: Run, timeout_s: float = 0.0, assume_yes: bool = False,
              robot_timeout_s: float = ROBOT_TIMEOUT_S) -> int:
    """Start the graph, follow it to its identification result (a friction sweep: to the end of its recording);
    the exit code (0 identified and every check passed, or the sweep recorded whole; 1 a node failed, the excitation
    held or refused to move, the motion was not confirmed, the time ran out, the robot published no joint state
    within `robot_timeout_s` in hardware mode (0: wait for it) or a sweep period was flagged; 3 identified but a
    parameter set failed its check; 128 + the signal when interrupted: 130 on Ctrl-C); its last line says where the
    model is. `assume_yes`: in hardware mode, confirm the excitation node's plan without asking."""
    from robot_id_bringup.run_monitor import RunMonitor

    specs = identify_graph(run)
    domain_chosen = "ROS_DOMAIN_ID" not in os.environ
    env = ros_environment()
    os.environ.update({k: env[k] for k in ("ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_DOMAIN_ID")})
    pathlib.Path(run.output_dir).mkdir(parents=True, exist_ok=True)
    console(f"robot_id: {run.mode} run of {run.robot}, ROS_DOMAIN_ID {env['ROS_DOMAIN_ID']}, results in "
            f"{run.output_dir}; nodes: {', '.join(s.name for s in specs)}")
    children: list[Child] = []
    received = interrupts.RECEIVED  # also one that arrived, and was swallowed, before the graph
    previous = {sig: signal.signal(sig, interrupts.remember) for sig in (signal.SIGINT, signal.SIGTERM)}
    monitor = None
    terminal = TerminalLine.of_stdin()
    confirmation = (Confirmation(console, run.node_path(EXCITATION_NAME), env["ROS_DOMAIN_ID"], assume_yes,
                                 terminal is not None) if run.mode == "hardware" else None)
    code = None
    try:
        if not received:
            monitor = RunMonitor(run)
        for spec in specs:
            if not received:
                children.append(Child(spec, env))
        started = time.monotonic()
        while code is None:
            if received:
                console("robot_id: interrupted: stopping every node")
                code = 128 + received[0]
                break
            if confirmation is not None and monitor.graph_up():  # the arm moves once the whole graph is up: CI saw
                confirmation.step(monitor, terminal)  # the Panda's states stall as the estimator started meanwhile
            code = _outcome(run, children, monitor, confirmation)
            if (code is None and run.mode == "hardware" and robot_timeout_s and not monitor.joint_states_came()
                    and time.monotonic() - started > robot_timeout_s):
                console(f"robot_id: error: {silent_robot(run, robot_timeout_s, env, domain_chosen)}", sys.stderr)
                code = 1
            if code is None and timeout_s and time.monotonic() - started > timeout_s:
                console(f"robot_id: error: no identification result after {timeout_s:g} s", sys.stderr)
                code = 1
    finally:
        for child in reversed(children):
            child.stop()
        if monitor is not None:
            monitor.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    console(_last_line(run, monitor.result if monitor is not None else None, code))
    return code


def _last_line(run: Run, result: IdentificationResult | None, code: int) -> str:
    """The run's last line, after the nodes' own last words: where the model is and which set it holds
    (model_line), or where the recording is."""
    if not run.records_only:
        return model_line(result, code)
    if code != 0:
        return f"robot_id: nothing recorded whole: the run ended (exit code {code}); no model (a run that only records)"
    what = "friction sweep" if run.records_sweep else "trajectory"
    use = (f"identify with --friction-sweep {run.bag_path}" if run.records_sweep else
           f"identify a load against it with --payload --baseline {run.bag_path}" if run.payload else
           f"identify it with --mode replay --bag {run.bag_path}")
    return f"robot_id: {what} recorded in {run.bag_path}; {use}"


def robot_topic(run: Run, topic: str) -> str:
    """A topic of the robot config (`topic`: its field, e.g. joint_states_topic) as the nodes resolve it: a relative
    name in the run's namespace."""
    from robot_id_model.robot_config import load_robot_config

    name = getattr(load_robot_config(run.robot), topic)
    return name if name.startswith("/") else f"{run.namespace_path.rstrip('/')}/{name}"


def silent_robot(run: Run, robot_timeout_s: float, env: dict[str, str], domain_chosen: bool) -> str:
    """Why a hardware run ends when no joint state came, and what to check, in one line."""
    domain = (f"ROS_DOMAIN_ID {env['ROS_DOMAIN_ID']} (chosen by the runner: export the robot stack's ROS_DOMAIN_ID)"
              if domain_chosen else f"ROS_DOMAIN_ID {env['ROS_DOMAIN_ID']}")
    return (f"no joint states on {robot_topic(run, 'joint_states_topic')} after {robot_timeout_s:g} s: is the "
            f"robot's stack running and publishing them, its controller on "
            f"{robot_topic(run, 'joint_trajectory_topic')} active, in {domain} with ROS_AUTOMATIC_DISCOVERY_RANGE "
            f"{env['ROS_AUTOMATIC_DISCOVERY_RANGE']}? (--robot-timeout sets how long to wait)")


def _outcome(run: Run, children: list[Child], monitor: RunMonitor, confirmation: Confirmation | None) -> int | None:
    """After one turn of the monitor: the run's exit code once it is over (with its reason), None while it goes on."""
    failed = next((c for c in children if c.popen.poll() is not None), None)
    if failed is not None and monitor.result is None:
        console(f"robot_id: error: node '{failed.name}' exited with code {failed.popen.returncode} "
                "before the identification was done", sys.stderr)
        return 1
    monitor.spin_once(0.1)
    if monitor.failure is not None:
        console(f"robot_id: error: the estimator could not identify {run.bag}: {monitor.failure}", sys.stderr)
        return 1
    if monitor.result is not None:
        return 0 if monitor.result.success else 3
    if monitor.excitation_stopped is not None:
        console(f"robot_id: error: the excitation node stopped the arm: {monitor.excitation_stopped}; "
                "the recording is incomplete", sys.stderr)
        return 1
    if confirmation is not None and confirmation.refusal:
        console(f"robot_id: error: {confirmation.refusal}: stopping every node; nothing moved", sys.stderr)
        return 1
    if run.records_only and monitor.status is not None and monitor.status.finished:
        return _recorded(run, monitor.status)
    return None


def _recorded(run: Run, status) -> int:
    """A run that only records: 0 when its trajectory is in the bag whole, else 1 with the reason (the Stribeck fit
    needs every pass of a sweep, a baseline every period of the loaded run)."""
    what = "friction sweep" if run.records_sweep else "trajectory"
    if status.periods_flagged or status.periods_recorded < status.periods_expected:
        console(f"robot_id: error: the {what} in {status.bag_path} is incomplete ({status.periods_recorded}/"
                f"{status.periods_expected} recorded, {status.periods_flagged} flagged): record it again", sys.stderr)
        return 1
    return 0


def identify_parser() -> argparse.ArgumentParser:
    """The `identify` command's parser: the options of launch/identify.launch.py as command-line options."""
    parser = argparse.ArgumentParser(prog="robot_id identify", description="run the identification graph",
                                     formatter_class=HelpFormatter)
    parser.add_argument("--robot", default="iiwa14", help=robot_option_help())
    parser.add_argument("--mode", default="sim", choices=MODES, help="run against the simulator, the hardware, "
                                                                     "or identify a recorded bag")
    parser.add_argument("--periods", type=int, default=0,
                        help=f"trajectory periods to run (default, also 0: {DEFAULT_PERIODS} of an excitation, "
                             f"{SWEEP_PERIODS} of a friction sweep)")
    parser.add_argument("--trajectory", default="",
                        help="trajectory file or shipped name, e.g. iiwa14_friction_sweep: a friction sweep only "
                             "records (default: the excitation shipped for the robot)")
    parser.add_argument("--bag", default="", help="the bag to identify (required with --mode replay)")
    parser.add_argument("--friction-sweep", action="append", default=[], metavar="BAG",
                        help="bag of a friction-sweep run: the estimator fits Stribeck friction to it (repeatable; "
                             "default: none)")
    parser.add_argument("--payload", action="store_true",
                        help="run the payload excitation shipped for the robot (or --trajectory) and identify the "
                             "load on the flange, not the arm (default: the arm)")
    parser.add_argument("--arm", default="", metavar="JSON",
                        help="--payload: identification.json of the arm without the load (default: the URDF's arm, "
                             "whose error goes into the load; or --baseline)")
    parser.add_argument("--baseline", action="append", default=[], metavar="BAG",
                        help="--payload: bag of the same payload excitation without the load, recorded with "
                             "--payload --record-only: the arm's own terms cancel (repeatable; default: none)")
    parser.add_argument("--record-only", action="store_true",
                        help="record the trajectory and identify nothing, e.g. a payload baseline (default: identify)")
    parser.add_argument("--sim-load", type=int, default=-1, metavar="SEED",
                        help="mode sim: the simulated arm carries the load of this seed on its flange (0.5-3 kg, CoM "
                             "up to 10 cm off the axis; another seed swaps it; default: -1, no load)")
    parser.add_argument("--namespace", default="", metavar="NS",
                        help="the graph's namespace: one arm's graph each, several in one ROS domain (default: none; "
                             "on sim time each namespace has its own clock)")
    parser.add_argument("--out", default="", metavar="DIR", help="results directory (default: results/<robot>_<time>)")
    parser.add_argument("--timeout", type=float, default=0.0, help="give up after this time [s] (default: 0, never)")
    parser.add_argument("--robot-timeout", type=float, default=ROBOT_TIMEOUT_S, metavar="SECONDS",
                        help=f"hardware mode: give up when the robot has published no joint state this long after the "
                             f"start [s] (default: {ROBOT_TIMEOUT_S:g}; 0: wait for it)")
    parser.add_argument("--yes", action="store_true",
                        help="hardware mode: let the arm move without asking (the plan is still printed); without it "
                             "the runner asks on the terminal, or with no terminal waits for confirm to be set")
    return add_exit_codes(parser)


def identify(argv: Sequence[str]) -> int:
    """`identify` command: check the request and the inputs, then run the graph."""
    args = identify_parser().parse_args(argv)
    out = args.out or time.strftime(f"results/{pathlib.Path(args.robot).stem}_%Y%m%d_%H%M%S")
    run = Run(args.robot, args.mode, out, args.periods, args.trajectory, args.bag, tuple(args.friction_sweep),
              namespace=args.namespace, payload=args.payload, payload_arm=args.arm,
              payload_baselines=tuple(args.baseline), record_only=args.record_only, sim_load_seed=args.sim_load)
    problems = run.problems() + option_problems(run, args.timeout, args.yes, args.robot_timeout)
    problems += input_problems(run) if not problems else []
    if problems:
        print(f"error: {'; '.join(problems)}", file=sys.stderr)
        return 2
    try:
        check_writable_directory(out)
        return run_graph(run, args.timeout, args.yes, args.robot_timeout)
    except (RunnerError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
