"""The simulated robot free running on the wall clock (`clock: wall`, robot_id_lab.testbed): does it keep real time?

For the iiwa14 at 100 Hz (what lbr_fri_ros2_stack publishes) and 500 Hz (its config's rate) and the Panda at 1 kHz,
each with no load, a busy process per core, and a busy process per core plus the slow subscriber (5 ms per message,
reliable: it falls behind above 200 Hz), the test bed runs the simulator for --seconds, at the test bed's realtime
priority (SCHED_FIFO 10), and once more with a busy process per core at normal scheduling (priority 0); a probe
(`sim_wall_clock.py probe`: a raw subscription with the recorder's QoS) notes each joint state's stamp and its arrival
on the system clock.

- sim: joint states published per second of its log time, from its status lines (goal: the parameter);
- probe: arrivals per second; lost: missing stamps between the first and the last received (a Python subscriber at
  normal priority, as the recorder, may fall behind under load: that is the load's effect on it, not the robot's);
- spacing: arrival intervals at the probe (mean, standard deviation, 1st and 99th percentile, max);
- latency: arrival minus stamp at the probe (median, 99th percentile, max), which includes DDS and the probe's own
  scheduling; stamps in the future of their arrival (goal: 0);
- late: the simulator's own count, from its status lines (samples published more than one period after they
  were due, between the first and the last status line; the largest since start);
- CPU: the simulator's share of one core (utime + stime from /proc over the measured window).

Run: `source env.sh && python benchmarks/sim_wall_clock.py [--seconds 10]` (about 3.5 minutes). Prints a table and
ends with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

from robot_id_lab.testbed import end, hardware_standin
from robot_id_model.robot_config import load_robot_config

CASES = (("iiwa14", 100.0), ("iiwa14", 500.0), ("panda", 1000.0))
LOADS = (("none", 10), ("busy", 10), ("busy+slow", 10), ("busy", 0))
"""(load, the simulator's realtime_priority)"""
WARM_UP_S = 2.0
STATUS = re.compile(r"\[(?P<wall_s>\d+\.\d+)\] \[robot_id_sim\]: [\d.]+ s on the wall clock, (?P<published>\d+) joint "
                    r"states published, (?P<dropped>\d+) dropped .*; (?P<late>\d+) of (?P<samples>\d+) published more "
                    r"than one period late \(at most (?P<max_ms>[\d.]+) ms")
TICKS_S = os.sysconf("SC_CLK_TCK")


def probe(argv: list[str]) -> int:
    """Note each joint state's stamp and arrival (system time, ns) on --topic until SIGINT, then save them to --out
    (.npz: stamps_ns, arrival_ns)."""
    parser = argparse.ArgumentParser(prog="sim_wall_clock.py probe")
    parser.add_argument("--topic", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)

    import rclpy
    from rclpy.executors import ExternalShutdownException
    from sensor_msgs.msg import JointState

    from robot_id_contract.stamps import header_stamp_ns
    from robot_id_lab.slow_subscriber import RECORDER_QOS

    stamps_ns: list[int] = []
    arrival_ns: list[int] = []

    def on_state(raw: bytes) -> None:
        arrival_ns.append(time.time_ns())
        stamps_ns.append(header_stamp_ns(raw))

    rclpy.init()
    node = rclpy.create_node("probe")
    node.create_subscription(JointState, args.topic, on_state, RECORDER_QOS, raw=True)
    print("ready", flush=True)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        np.savez(args.out, stamps_ns=np.array(stamps_ns, dtype=np.int64), arrival_ns=np.array(arrival_ns, np.int64))
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS_S


def probe_figures(stamps_ns: np.ndarray, arrival_ns: np.ndarray, rate_hz: float) -> dict:
    """Arrivals per second, losses, spacing and latency of what the probe received (after the warm-up)."""
    keep = arrival_ns >= arrival_ns[0] + WARM_UP_S * 1e9
    stamps_ns, arrival_ns = stamps_ns[keep], arrival_ns[keep]
    spacing_ms = np.diff(arrival_ns) * 1e-6
    latency_ms = (arrival_ns - stamps_ns) * 1e-6
    index = np.rint((stamps_ns - stamps_ns[0]) * rate_hz / 1e9).astype(np.int64)
    return {
        "received": len(stamps_ns),
        "rate_arrivals_hz": round(1e9 * (len(arrival_ns) - 1) / float(arrival_ns[-1] - arrival_ns[0]), 2),
        "lost": int(index[-1] + 1 - len(np.unique(index))),
        "spacing_ms": {k: round(float(v), 3) for k, v in (
            ("mean", spacing_ms.mean()), ("std", spacing_ms.std()), ("p1", np.percentile(spacing_ms, 1)),
            ("p99", np.percentile(spacing_ms, 99)), ("max", spacing_ms.max()))},
        "latency_ms": {k: round(float(v), 2) for k, v in (
            ("median", np.median(latency_ms)), ("p99", np.percentile(latency_ms, 99)), ("max", latency_ms.max()))},
        "stamped_in_future": int(np.sum(latency_ms < 0.0)),
    }


def sim_figures(log: pathlib.Path) -> dict:
    """From the simulator's status lines: joint states published per second of their log time and the late ones,
    between the first and the last line; the largest lateness since start."""
    found = list(STATUS.finditer(log.read_text()))
    if len(found) < 2:
        raise RuntimeError(f"fewer than two status lines of the simulator in {log}")
    first, last = found[0], found[-1]
    published = sum(int(last[k]) - int(first[k]) for k in ("published", "dropped"))
    return {"published_hz": round(published / (float(last["wall_s"]) - float(first["wall_s"])), 2),
            "late": int(last["late"]) - int(first["late"]), "of": int(last["samples"]) - int(first["samples"]),
            "max_late_ms": float(last["max_ms"])}


def run(robot: str, rate_hz: float, load: str, priority: int, seconds: float, domain_id: int,
        tmp: pathlib.Path) -> dict:
    """One run of the test bed with a probe; its figures."""
    name = f"{robot}_{rate_hz:.0f}_{load}_{priority}"
    log, out = tmp / f"{name}.log", tmp / f"{name}.npz"
    topic = load_robot_config(robot).joint_states_topic
    with hardware_standin(robot, rate_hz, domain_id, tmp / f"{name}_truth.yaml", busy=load != "none",
                          slow_subscriber=load == "busy+slow", realtime_priority=priority, log_file=log) as standin:
        listener = subprocess.Popen([sys.executable, __file__, "probe", "--topic", topic, "--out", str(out)],
                                    env=standin.env, stdout=subprocess.PIPE, text=True)
        try:
            if listener.stdout.readline().strip() != "ready":
                raise RuntimeError(f"the probe failed (exit code {listener.wait()})")
            time.sleep(WARM_UP_S)
            cpu0_s, wall0_s = cpu_s(standin.sim.pid), time.monotonic()
            time.sleep(seconds)
            cpu_share = (cpu_s(standin.sim.pid) - cpu0_s) / (time.monotonic() - wall0_s)
        finally:
            end(listener)
    data = np.load(out)
    figures = probe_figures(data["stamps_ns"], data["arrival_ns"], rate_hz)
    return sim_figures(log) | {"cpu_share": round(cpu_share, 3)} | figures


def print_table(results: dict) -> None:
    header = (f"{'case':<28} {'sim: Hz':>8} {'late':>10} {'max ms':>7} {'CPU':>5}  {'probe: Hz':>9} {'lost':>5} "
              f"{'spacing ms: std':>15} {'p1':>6} {'p99':>6} {'max':>6}  {'latency ms: med':>15} {'p99':>7} "
              f"{'max':>7}")
    print(header)
    print("-" * len(header))
    for case, f in results.items():
        s, lat = f["spacing_ms"], f["latency_ms"]
        print(f"{case:<28} {f['published_hz']:>8.2f} {f['late']:>4}/{f['of']:<5} {f['max_late_ms']:>7.1f} "
              f"{f['cpu_share']:>5.2f}  {f['rate_arrivals_hz']:>9.2f} {f['lost']:>5} {s['std']:>15.3f} {s['p1']:>6.3f} "
              f"{s['p99']:>6.3f} {s['max']:>6.2f}  {lat['median']:>15.2f} {lat['p99']:>7.2f} {lat['max']:>7.1f}")
    print("sim: joint states published per second, samples published more than one period after due / samples "
          "(both between its first and last status line), the largest lateness since start, CPU share of one core. "
          "probe (normal scheduling, like the recorder): arrivals per second, stamps lost, arrival spacing, arrival "
          "minus stamp. p10: SCHED_FIFO 10, p0: normal scheduling.")


def main(argv: list[str]) -> int:
    if argv[:1] == ["probe"]:
        return probe(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="measured wall time of each run (>= 6)")
    args = parser.parse_args(argv)
    if args.seconds < 6.0:
        parser.error("--seconds must be at least 6 (two status lines of the simulator, 5 s apart)")
    base_domain = 120 + os.getpid() % 50 * 2
    began = time.monotonic()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for k, ((robot, rate_hz), (load, priority)) in enumerate((c, x) for c in CASES for x in LOADS):
            print(f"  … {robot} {rate_hz:g} Hz, load {load}, priority {priority}", file=sys.stderr, flush=True)
            results[f"{robot} {rate_hz:g} Hz {load} p{priority}"] = run(
                robot, rate_hz, load, priority, args.seconds, base_domain + k % 2, pathlib.Path(tmp))
    print_table(results)
    print(json.dumps({"benchmark": "sim_wall_clock", "seconds_per_run": args.seconds, "cpus": os.cpu_count(),
                      "cases": results, "total_s": round(time.monotonic() - began, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
