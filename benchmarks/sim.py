"""Simulated robot benchmark: the real-time factor robot_id_sim reaches on this machine, and the joint states lost.

For the iiwa14 (joint states at 500 Hz, its config's rate) and the Panda (1 kHz), each run a process of its own:

- capacity: the node's per-sample work (MuJoCo steps, controller, sensors, JointState publish) in a tight loop for
  5 s, no pacer, no executor: the most any pacing could reach;
- alone: the sim node (`robot_id_sim.node`, defaults otherwise) for --seconds of wall time with nobody subscribed,
  real_time_factor --factor (20: far above what this machine reaches, i.e. "as fast as it can"; below `capacity`
  by the executor's and the timer's share);
- recorded: the same with a recorder process started first that receives the joint states as robot_id_recorder does
  (rclpy, a raw subscription, reliable, its depth 1000, the messages waiting taken in one batch every 10 ms rather
  than one executor callback each), keeping every message's bytes and stamp;
- lockstep: real_time_factor 0 with lockstep_subscribers ['recorder'] (window 0.1 s, the default); the same
  recorder acknowledges the newest stamp of each batch on robot_id/sim_ack (sensor_msgs/TimeReference), as
  robot_id_recorder does.

Real-time factor: read from the node's own status lines (every 5 s of wall time: samples published, log stamp),
between the first and the last one, so start-up is left out and nothing is added to the graph; a /clock
subscriber would be one more subscriber (250 Hz of sim time, about 1 kHz of callbacks at x4) on a 2-core machine.
Lost: the samples between the first and the last received that never arrived (goal: 0); apart, "missed at
start": published before the first one received. A Python subscriber taking one executor callback per message
keeps up with about 2 kHz of JointState, the batches with more: in `recorded`, losses are possible when the
recorder falls 1000 messages behind; in `lockstep` nothing may be lost, at the start neither (the node starts its
clock once the recorder is connected).

Every process started gets ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and its own ROS_DOMAIN_ID (from this pid, one
per run), and is stopped with SIGINT (then killed after a timeout), also on errors, Ctrl-C and SIGTERM.

Run: `make bench` or `source env.sh && python benchmarks/sim.py [--seconds 15] [--factor 20]` (about
2.5 minutes with the defaults). Prints a table and ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from robot_id_contract.processes import stop_process

ROBOTS = ("iiwa14", "panda")
CONFIGURATIONS = ("capacity", "alone", "recorded", "lockstep")
FACTOR = 20.0
"""Default real_time_factor of the unpaced runs: far above what this machine reaches."""
CAPACITY_S = 5.0
RECORDER = "recorder"
PYTHON_SUBSCRIBER_HZ = 2000.0
"""About how many JointState messages per second a Python subscriber that deserialises them, one executor callback
each, keeps up with (machine guide); the recorder here, taking them in batches, keeps up with more."""
START_TIMEOUT_S = 60.0
DRAIN_S = 0.5
"""Wall time the recorder gets after the sim stopped, for messages still under way."""
STATUS = re.compile(r"\[(?P<wall>\d+\.\d+)\] \[robot_id_sim\]: sim time [\d.]+ s \(x(?P<factor>[\d.]+) real time\), "
                    r"(?P<published>\d+) joint states published, (?P<dropped>\d+) dropped")
SIM_MAIN = "import sys; from robot_id_sim.node import main; sys.exit(main(sys.argv[1:]))"


# ---------------------------------------------------------------------------------------------------------------
# the processes the benchmark starts: `python sim.py record ...` and `python sim.py capacity ...`

def record(argv: list[str]) -> int:
    """Subscribe to the joint states (raw CDR bytes, kept), note each stamp and arrival time,
    optionally acknowledge as a lockstep subscriber; on SIGINT write stamps_ns, wall_s and the byte count to --out
    (.npz)."""
    parser = argparse.ArgumentParser(prog="sim.py record")
    parser.add_argument("--topic", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--ack-name", default="", help="acknowledge on robot_id/sim_ack under this name")
    args = parser.parse_args(argv)

    import rclpy
    from builtin_interfaces.msg import Time
    from rclpy.executors import ExternalShutdownException
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState, TimeReference

    from robot_id_contract.taken_messages import TakenByTheNode, take_waiting
    from robot_id_contract.topics import SIM_ACK
    from robot_id_recorder.node import DEPTH, TAKE_PERIOD_S

    qos = QoSProfile(depth=DEPTH, reliability=ReliabilityPolicy.RELIABLE)
    stamps_ns: list[int] = []
    wall_s: list[float] = []
    kept: list = []  # every message, as a recorder keeps it until written
    rclpy.init()
    node = rclpy.create_node(RECORDER)
    ack_pub = node.create_publisher(TimeReference, SIM_ACK.name, SIM_ACK.qos)

    def keep(msg: bytes) -> None:
        wall_s.append(time.monotonic())
        kept.append(msg)
        # CDR: 4-byte encapsulation header (byte 1: 1 little endian, 0 big endian), then header.stamp
        sec, nanosec = struct.unpack_from("<iI" if msg[1] & 1 else ">iI", msg, 4)
        stamps_ns.append(sec * 1_000_000_000 + nanosec)

    states = node.create_subscription(JointState, args.topic, keep, qos, raw=True, callback_group=TakenByTheNode())

    def take_states() -> None:
        """The joint states waiting, oldest first, in one batch; the newest acknowledged (as robot_id_recorder)."""
        received = len(stamps_ns)
        for msg, _info in take_waiting(states):
            keep(msg)
        if args.ack_name and len(stamps_ns) > received:
            sec, nanosec = divmod(max(stamps_ns[received:]), 1_000_000_000)
            ack_pub.publish(TimeReference(time_ref=Time(sec=sec, nanosec=nanosec), source=args.ack_name))

    node.create_timer(TAKE_PERIOD_S, take_states)
    print("ready", flush=True)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        if rclpy.ok():  # else the stop: SIGINT can shut the context down while the executor builds its wait set
            raise
    finally:
        take_states()
        np.savez(args.out, stamps_ns=np.array(stamps_ns, dtype=np.int64), wall_s=np.array(wall_s),
                 bytes=sum(len(b) for b in kept))
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


def capacity(argv: list[str]) -> int:
    """The sim node's per-sample work (SimulatedRobot.advance and SimNode._publish) in a loop for --seconds; prints
    one JSON line: samples per wall second and sim seconds per wall second."""
    parser = argparse.ArgumentParser(prog="sim.py capacity")
    parser.add_argument("--robot", required=True)
    parser.add_argument("--seconds", type=float, default=CAPACITY_S)
    args = parser.parse_args(argv)

    import rclpy

    from robot_id_sim.node import SimNode

    rclpy.init(args=["--ros-args", "-p", f"robot:={args.robot}"])
    node = SimNode()
    try:
        samples = 0
        began = time.monotonic()
        while (wall_s := time.monotonic() - began) < args.seconds:
            node._publish(node.robot.advance())
            samples += 1
        print(json.dumps({"samples_per_s": samples / wall_s, "rtf": node.robot.t_s / wall_s}), flush=True)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


# ---------------------------------------------------------------------------------------------------------------
# the benchmark

@dataclass
class Process:
    """A started process whose output lines are collected by threads (time.monotonic() of arrival, line)."""

    name: str
    popen: subprocess.Popen
    stdout: list[tuple[float, str]] = field(default_factory=list)
    stderr: list[tuple[float, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.threads = [threading.Thread(target=self._collect, args=(stream, lines), daemon=True)
                        for stream, lines in ((self.popen.stdout, self.stdout), (self.popen.stderr, self.stderr))]
        for thread in self.threads:
            thread.start()

    @staticmethod
    def _collect(stream, lines: list[tuple[float, str]]) -> None:
        for line in stream:
            lines.append((time.monotonic(), line.rstrip("\n")))

    def wait_for(self, text: str, in_stderr: bool, timeout_s: float) -> None:
        """Until a line containing text arrives; RuntimeError if the process ends or the time runs out first."""
        lines = self.stderr if in_stderr else self.stdout
        end = time.monotonic() + timeout_s
        while not any(text in line for _, line in lines):
            if self.popen.poll() is not None or time.monotonic() > end:
                raise RuntimeError(f"{self.name} did not print '{text}' (exit code {self.popen.poll()}):\n"
                                   + self.tail())
            time.sleep(0.05)

    def tail(self, n: int = 15) -> str:
        return "\n".join(line for _, line in sorted(self.stdout + self.stderr)[-n:])

    def stop(self) -> int:
        """SIGINT, then SIGKILL after processes.STOP_TIMEOUT_S; the exit code, once its output is collected."""
        code = stop_process(self.popen, signal.SIGINT)
        for thread in self.threads:
            thread.join(1.0)
        return code


def start(name: str, command: list[str], domain_id: int, started: list[Process]) -> Process:
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", ROS_DOMAIN_ID=str(domain_id),
               PYTHONUNBUFFERED="1", RCUTILS_LOGGING_BUFFERED_STREAM="0")
    process = Process(name, subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                             stderr=subprocess.PIPE, text=True, bufsize=1))
    started.append(process)
    return process


def status_lines(sim: Process, rate_hz: float) -> list[tuple[float, float, float]]:
    """(log wall time [s], sim time [s] from the samples counted, the line's factor since start) per status line."""
    return [(float(m["wall"]), (int(m["published"]) + int(m["dropped"])) / rate_hz, float(m["factor"]))
            for _, line in sim.stderr if (m := STATUS.search(line))]


def reached_factor(status: list[tuple[float, float, float]]) -> float | None:
    """Sim seconds per wall second between the first and the last status line (one line: its own, since start)."""
    if len(status) >= 2:
        (wall0, sim0, _), (wall1, sim1, _) = status[0], status[-1]
        return (sim1 - sim0) / (wall1 - wall0)
    return status[0][2] if status else None


def losses(stamps_ns: np.ndarray, rate_hz: float, published: int) -> dict:
    """What the recorded stamps say: the samples (stamp = k / rate, the first is k = 1) between the first and the
    last received that never arrived; the samples before the first one received (with nothing received: the
    `published` count of the node's last status line); duplicates, gaps."""
    if len(stamps_ns) == 0:
        return {"received": 0, "lost": 0, "missed_at_start": published, "duplicates": 0, "gaps": 0}
    exact = stamps_ns * rate_hz / 1e9
    index = np.rint(exact).astype(np.int64)
    unique = np.unique(index)
    return {
        "received": len(stamps_ns),
        "lost": int(unique[-1] - unique[0] + 1 - len(unique)),
        "missed_at_start": int(unique[0] - 1),
        "duplicates": len(index) - len(unique),
        "gaps": int(np.sum(np.diff(unique) > 1)),
        "out_of_order": int(np.sum(np.diff(index) < 0)),
        "off_period_grid": int(np.sum(np.abs(exact - index) > 1e-3)),
    }


def run_capacity(robot: str, domain_id: int) -> dict:
    started: list[Process] = []
    try:
        process = start("capacity", [sys.executable, os.path.abspath(__file__), "capacity", "--robot", robot],
                        domain_id, started)
        code = process.popen.wait(CAPACITY_S + START_TIMEOUT_S)
    finally:
        for process in started:
            process.stop()
    lines = [line for _, line in process.stdout if line.startswith("{")]
    if code != 0 or not lines:
        raise RuntimeError(f"the capacity run failed (exit code {code}):\n{process.tail()}")
    figures = json.loads(lines[-1])
    return {"rtf": round(figures["rtf"], 3), "samples_per_s": round(figures["samples_per_s"], 1)}


def run_node(robot: str, configuration: str, seconds: float, factor: float, domain_id: int, tmp: str) -> dict:
    """One run of the sim node (and the recorder) in `configuration`; its figures."""
    from robot_id_model.robot_config import load_robot_config

    config = load_robot_config(robot)
    rate_hz = config.state_rate_hz
    out = os.path.join(tmp, f"{robot}_{configuration}.npz")
    paced = 0.0 if configuration == "lockstep" else float(factor)
    parameters = {"robot": robot, "real_time_factor": repr(paced)}  # a double: "20.0", not "20"
    if configuration == "lockstep":
        parameters["lockstep_subscribers"] = f"['{RECORDER}']"
    started: list[Process] = []
    recorder = None
    try:
        if configuration != "alone":
            command = [sys.executable, os.path.abspath(__file__), "record", "--topic", config.joint_states_topic,
                       "--out", out] + (["--ack-name", RECORDER] if configuration == "lockstep" else [])
            recorder = start("recorder", command, domain_id, started)
            recorder.wait_for("ready", in_stderr=False, timeout_s=START_TIMEOUT_S)
        command = [sys.executable, "-c", SIM_MAIN, "--ros-args"]
        for name, value in parameters.items():
            command += ["-p", f"{name}:={value}"]
        sim = start("robot_id_sim", command, domain_id, started)
        sim.wait_for("joint states on", in_stderr=True, timeout_s=START_TIMEOUT_S)
        time.sleep(seconds + 0.5)  # the status line at `seconds` (a multiple of 5 s) is in
        if sim.popen.poll() is not None:
            raise RuntimeError(f"robot_id_sim ended early (exit code {sim.popen.returncode}):\n{sim.tail()}")
        sim_code = sim.stop()
        if recorder is not None:
            time.sleep(DRAIN_S)
            if recorder.stop() != 0 or not os.path.exists(out):
                raise RuntimeError(f"the recorder failed (exit code {recorder.popen.returncode}):\n{recorder.tail()}")
    finally:
        for process in started:  # the sim first, then the recorder
            process.stop()
    status = status_lines(sim, rate_hz)
    factor_reached = reached_factor(status)
    figures = {"rtf": None if factor_reached is None else round(factor_reached, 3), "status_lines": len(status),
               "sim_exit_code": sim_code}
    if recorder is not None:
        data = np.load(out)
        stamps_ns, wall_s = data["stamps_ns"], data["wall_s"]
        published = round(status[-1][1] * rate_hz) if status else 0
        figures.update(losses(stamps_ns, rate_hz, published))
        if len(stamps_ns) > 1:
            figures["received_per_wall_s"] = round((len(stamps_ns) - 1) / float(wall_s[-1] - wall_s[0]), 1)
        figures["megabytes"] = round(int(data["bytes"]) / 1e6, 1)
    if configuration == "lockstep":
        figures["stalled"] = len(status) >= 2 and status[-1][1] == status[0][1]
        if figures["stalled"]:
            figures["stalled_at_sim_s"] = status[-1][1]
            figures["stall_status_line"] = next(line for _, line in reversed(sim.stderr) if STATUS.search(line))
    return figures


def print_table(results: dict, rates: dict, factor: float, recorder: str) -> None:
    header = (f"{'robot':<8} {'rate':>7}  {'configuration':<22} {'RTF':>6} {'msgs/s':>7} {'received':>9} "
              f"{'lost':>5} {'missed at start':>15} {'dup':>4}")
    print(header)
    print("-" * len(header))
    labels = {"capacity": "capacity (no pacer)", "alone": f"alone, factor {factor:g}",
              "recorded": f"recorded, factor {factor:g}", "lockstep": "lockstep, factor 0"}
    for robot, by_configuration in results.items():
        rate = rates[robot]
        for configuration, f in by_configuration.items():
            rtf = f["rtf"]
            row = (f"{robot:<8} {rate:>5.0f}Hz  {labels[configuration]:<22} {'-' if rtf is None else f'{rtf:.2f}':>6} "
                   f"{'-' if rtf is None else f'{rate * rtf:.0f}':>7}")
            if "received" in f:
                row += f" {f['received']:>9} {f['lost']:>5} {f['missed_at_start']:>15} {f['duplicates']:>4}"
            else:
                row += f" {'-':>9} {'-':>5} {'-':>15} {'-':>4}"
            if f.get("stalled"):
                row += f"  STALLED at sim time {f['stalled_at_sim_s']:g} s"
            print(row)
    print(f"RTF: sim s per wall s (runs of the node: from its status lines, steady state); msgs/s = rate x RTF, joint "
          f"states published per wall s. lost: samples missing between the first and the last received; missed at "
          f"start: published before the first one received. A Python subscriber deserialising JointState, one callback "
          f"each, keeps up with about {PYTHON_SUBSCRIBER_HZ:.0f} msgs/s (recorder here: {recorder}, with more); "
          f"'recorded' may lose messages when it falls 1000 behind; 'lockstep' must lose none (goal: 0 and 0).")
    for robot, by_configuration in results.items():
        lockstep = by_configuration.get("lockstep", {})
        if lockstep.get("stalled"):
            print(f"  {robot} lockstep STALLED: {lockstep['stall_status_line']}")


def main(argv: list[str]) -> int:
    if argv[:1] == ["record"]:
        return record(argv[1:])
    if argv[:1] == ["capacity"]:
        return capacity(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15.0,
                        help="wall time of each node run after the node started (status lines every 5 s; >= 10)")
    parser.add_argument("--factor", type=float, default=FACTOR,
                        help="real_time_factor of the alone and recorded runs (0 < factor <= 100)")
    parser.add_argument("--robots", nargs="+", default=list(ROBOTS), choices=ROBOTS)
    parser.add_argument("--configurations", nargs="+", default=list(CONFIGURATIONS), choices=CONFIGURATIONS)
    args = parser.parse_args(argv)
    if args.seconds < 10.0:
        parser.error("--seconds must be at least 10 (two status lines, 5 s apart)")
    if not 0.0 < args.factor <= 100.0:
        parser.error("--factor must be in (0, 100]")

    from robot_id_model.robot_config import load_robot_config

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))  # stop the processes started, too
    rates = {robot: load_robot_config(robot).state_rate_hz for robot in args.robots}
    n_runs = len(ROBOTS) * len(CONFIGURATIONS)
    base_domain = 10 + (os.getpid() % (220 // n_runs)) * n_runs  # one ROS_DOMAIN_ID per run, all <= 230
    began = time.monotonic()
    results: dict[str, dict[str, dict]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for robot in args.robots:
            results[robot] = {}
            for configuration in [c for c in CONFIGURATIONS if c in args.configurations]:
                domain_id = base_domain + ROBOTS.index(robot) * len(CONFIGURATIONS) \
                    + CONFIGURATIONS.index(configuration)
                print(f"  … {robot} {configuration} (ROS_DOMAIN_ID {domain_id})", file=sys.stderr, flush=True)
                if configuration == "capacity":
                    results[robot][configuration] = run_capacity(robot, domain_id)
                else:
                    results[robot][configuration] = run_node(robot, configuration, args.seconds, args.factor,
                                                             domain_id, tmp)
    print_table(results, rates, args.factor, "raw bytes taken in batches, not deserialised")
    figures: dict = {"benchmark": "sim", "seconds_per_run": args.seconds, "factor": args.factor,
                     "recorder": "raw, taken in batches", "cpus": os.cpu_count()}
    for robot, by_configuration in results.items():
        case: dict = {}
        for configuration, f in by_configuration.items():
            case[f"{configuration}_rtf"] = f["rtf"]
            for key in ("received", "lost", "missed_at_start", "duplicates", "stalled"):
                if key in f:
                    case[f"{configuration}_{key}"] = f[key]
        case["details"] = by_configuration
        figures[f"{robot}_{rates[robot]:.0f}hz"] = case
    figures["total_s"] = round(time.monotonic() - began, 1)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
