"""Recorder benchmark: robot_id_recorder with 7-joint JointState at 1 kHz for --minutes of published time.

A publisher process (this script, `recorder.py publish`) sends sensor_msgs/JointState for lbr_A1..lbr_A7 on
/lbr/joint_states (reliable, depth 100), header stamps 1 ms apart (1 kHz of published time), paced by an absolute
schedule at --pace × real time (asleep until the k-th message is due, back to back when behind). The default pace 2
sends the 10 minutes in 5 minutes of wall time, 2 kHz of messages: about the most a Python subscriber keeps up with
on this 2-core machine (benchmarks/sim.py), so the recorder is tested at its limit; --pace 1 is the real-time case.
The publisher starts once the recorder's subscription is matched (nothing lost to discovery) and, done, waits until
every message is acknowledged (Fast DDS discards the undelivered last ones of a publisher that goes).

The recorder (`robot_id_recorder.node`, rate_hz 1000, no acknowledgements) is started first; its CPU time and RSS
are read from /proc every 5 s. When the publisher is done it gets 2 s, then SIGINT (it closes the bag), and the bag
is read with rosbags: messages recorded, dropped (published − recorded; goal: 0), stamps missing from the published
span, duplicated. CPU share: recorder CPU seconds per wall second from the first message to the SIGINT. Memory
should stay flat (growth per wall minute, a line fitted to the samples): the recorder writes as it goes and keeps an
8-byte stamp per sample (0.48 MB per minute at 1 kHz, in a buffer that doubles). Both processes get their own
ROS_DOMAIN_ID and ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST and are stopped with SIGINT (then killed), also on errors.

Run: `source env.sh && python benchmarks/recorder.py [--minutes 10] [--pace 2] [--storage mcap]` (about 5
minutes with the defaults). Prints the memory over time and a summary, and ends with one JSON line.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import pathlib
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

from robot_id_contract.processes import stop_process

TOPIC, JOINTS, RATE_HZ = "/lbr/joint_states", [f"lbr_A{i}" for i in range(1, 8)], 1000.0
START_NS = 1_000_000_000  # header stamp of the first message; the k-th is START_NS + k ms
SAMPLE_S, TABLE_EVERY_S, DRAIN_S = 5.0, 30.0, 2.0  # /proc sampling, memory table rows, recorder time after the last
START_TIMEOUT_S, STOP_TIMEOUT_S = 60.0, 30.0
RECORDER_MAIN = "import sys; from robot_id_recorder.node import main; sys.exit(main(sys.argv[1:]))"
SRC = pathlib.Path(__file__).resolve().parent.parent / "src" / "robot_id_recorder"


def publish(argv: list[str]) -> int:
    """The publisher process: prints 'matched' once the recorder subscribed, then one JSON line when done."""
    parser = argparse.ArgumentParser(prog="recorder.py publish")
    parser.add_argument("--minutes", type=float, required=True)
    parser.add_argument("--pace", type=float, required=True)
    args = parser.parse_args(argv)
    import rclpy
    from rclpy.duration import Duration
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState

    rclpy.init()
    node = rclpy.create_node("joint_state_bench")
    pub = node.create_publisher(JointState, TOPIC, QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE))
    count, late_max_s, began, wall_s, acked = 0, 0.0, time.monotonic(), 0.0, False
    try:
        while pub.get_subscription_count() < 1:
            if time.monotonic() - began > START_TIMEOUT_S:
                raise RuntimeError("no subscriber matched")
            time.sleep(0.05)
        print("matched", flush=True)
        msg = JointState(name=JOINTS, position=[0.0] * 7, velocity=[0.0] * 7, effort=[0.0] * 7)
        wall_period_s = 1.0 / (RATE_HZ * args.pace)
        total = round(args.minutes * 60.0 * RATE_HZ)
        began = time.monotonic()
        for k in range(total):
            due = began + k * wall_period_s
            if (ahead := due - time.monotonic()) > 0:
                time.sleep(ahead)
            else:
                late_max_s = max(late_max_s, -ahead)
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(START_NS + k * 1_000_000, 1_000_000_000)
            pub.publish(msg)
            count += 1
        wall_s = time.monotonic() - began
        # Fast DDS drops what is not yet delivered when the publisher goes: the last message(s) without this
        acked = pub.wait_for_all_acked(Duration(seconds=10.0))
    except KeyboardInterrupt:
        wall_s = time.monotonic() - began
    finally:
        print(json.dumps({"published": count, "wall_s": wall_s, "late_max_s": late_max_s, "acked": acked}),
              flush=True)
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


class Process:
    """A started process; its output lines are collected by threads."""

    def __init__(self, name: str, command: list[str], env: dict) -> None:
        self.name, self.lines = name, {"stdout": [], "stderr": []}
        self.popen = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, bufsize=1)
        self.threads = [threading.Thread(target=self._collect, args=(getattr(self.popen, s), self.lines[s]),
                                         daemon=True) for s in self.lines]
        for thread in self.threads:
            thread.start()

    @staticmethod
    def _collect(stream, lines: list[str]) -> None:
        lines.extend(line.rstrip("\n") for line in stream)

    def wait_for(self, text: str, stream: str, timeout_s: float) -> None:
        end = time.monotonic() + timeout_s
        while not any(text in line for line in self.lines[stream]):
            if self.popen.poll() is not None or time.monotonic() > end:
                raise RuntimeError(f"{self.name} did not print '{text}' (exit code {self.popen.poll()}):\n"
                                   + "\n".join((self.lines["stdout"] + self.lines["stderr"])[-15:]))
            time.sleep(0.05)

    def stop(self) -> int:
        """SIGINT, then SIGKILL after STOP_TIMEOUT_S; the exit code."""
        code = stop_process(self.popen, signal.SIGINT, STOP_TIMEOUT_S)
        for thread in self.threads:
            thread.join(1.0)
        return code


def proc_sample(pid: int) -> tuple[float, float]:
    """(user + system CPU time [s], VmRSS [MB]) of a process, from /proc."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    cpu_s = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime: fields 14, 15
    rss = next(line for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines()
               if line.startswith("VmRSS:"))
    return cpu_s, int(rss.split()[1]) / 1024


def read_bag(bag: pathlib.Path, published: int) -> dict:
    """Joint states in the bag, and their stamps against the published ones (k = 0 .. published − 1)."""
    from rosbags.rosbag2 import Reader

    with Reader(bag) as reader:
        connections = [c for c in reader.connections if c.topic == TOPIC]
        # header.stamp after the 4-byte CDR encapsulation header (byte 1: 1 little endian, 0 big endian)
        pairs = [struct.unpack_from("<iI" if r[1] & 1 else ">iI", r, 4) for _, _, r in reader.messages(connections)]
    stamps = np.array([sec * 1_000_000_000 + nanosec for sec, nanosec in pairs], dtype=np.int64)
    k = (stamps - START_NS) / 1e6
    index = np.unique(np.rint(k).astype(np.int64))
    in_span = index[(index >= 0) & (index < published)]
    return {"recorded": len(stamps), "missing": int(published - len(in_span)), "duplicates": len(stamps) - len(index),
            "gaps": int(np.sum(np.diff(in_span) > 1)), "off_grid": int(np.sum(np.abs(k - np.rint(k)) > 1e-3)),
            "bag_mb": round(sum(f.stat().st_size for f in bag.rglob("*") if f.is_file()) / 1e6, 1)}


def main(argv: list[str]) -> int:
    if argv[:1] == ["publish"]:
        return publish(argv[1:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="published time [min] (1 kHz of stamps)")
    parser.add_argument("--pace", type=float, default=2.0, help="published time per wall time (1: real time)")
    parser.add_argument("--storage", choices=("mcap", "sqlite3"), default="mcap")
    args = parser.parse_args(argv)
    if args.minutes <= 0 or args.pace <= 0:
        parser.error("--minutes and --pace must be positive")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))  # stop the processes started, too
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", ROS_DOMAIN_ID=str(10 + os.getpid() % 200),
               PYTHONUNBUFFERED="1", RCUTILS_LOGGING_BUFFERED_STREAM="0")
    # The repository's src/robot_id_recorder on the children's PYTHONPATH only when the recorder is not importable
    # (not built into install/ yet). robot_id_recorder.node is looked for, not only `import robot_id_recorder`: an
    # older install/ may hold the package without its node module (find_spec raises when the package is missing).
    try:
        importable = importlib.util.find_spec("robot_id_recorder.node") is not None
    except ImportError:
        importable = False
    if not importable:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH")) if p)
    began, started = time.monotonic(), []
    samples: list[tuple[float, float, float]] = []  # (wall s since the first message, CPU s, RSS MB)
    with tempfile.TemporaryDirectory() as tmp:
        bag = pathlib.Path(tmp) / "bag"
        try:
            recorder = Process("recorder", [sys.executable, "-c", RECORDER_MAIN, "--ros-args", "-p", "robot:=iiwa14",
                                            "-p", f"bag_path:={bag}", "-p", "rate_hz:=1000.0", "-p", "ack_name:=''",
                                            "-p", f"storage:={args.storage}"], env)
            started.append(recorder)  # first: the publisher waits for its subscription
            recorder.wait_for("recording [", "stderr", START_TIMEOUT_S)
            publisher = Process("publisher", [sys.executable, os.path.abspath(__file__), "publish", "--minutes",
                                              str(args.minutes), "--pace", str(args.pace)], env)
            started.append(publisher)
            publisher.wait_for("matched", "stdout", START_TIMEOUT_S)
            t0 = time.monotonic()
            samples.append((0.0, *proc_sample(recorder.popen.pid)))
            deadline = t0 + 1.5 * args.minutes * 60.0 / args.pace + START_TIMEOUT_S
            while publisher.popen.poll() is None:
                if time.monotonic() > deadline or recorder.popen.poll() is not None:
                    raise RuntimeError(f"the publisher overran or the recorder ended (exit code "
                                       f"{recorder.popen.poll()}):\n" + "\n".join(recorder.lines["stderr"][-15:]))
                time.sleep(0.1)
                if time.monotonic() - t0 >= len(samples) * SAMPLE_S:
                    samples.append((time.monotonic() - t0, *proc_sample(recorder.popen.pid)))
            lines = [line for line in publisher.lines["stdout"] if line.startswith("{")]
            if publisher.stop() != 0 or not lines:
                raise RuntimeError("the publisher failed:\n" + "\n".join(publisher.lines["stderr"][-15:]))
            sent = json.loads(lines[-1])
            time.sleep(DRAIN_S)
            samples.append((time.monotonic() - t0, *proc_sample(recorder.popen.pid)))
            recorder_code = recorder.stop()
        finally:
            for process in reversed(started):  # the publisher first, then the recorder
                process.stop()
        if recorder_code != 0:
            raise RuntimeError(f"the recorder failed (exit code {recorder_code}):\n"
                               + "\n".join(recorder.lines["stderr"][-15:]))
        figures = read_bag(bag, sent["published"])
    t, cpu, rss = (np.array(column) for column in zip(*samples, strict=True))
    wall_s, cpu_s, middle = float(t[-1]), float(cpu[-1] - cpu[0]), int(np.argmin(np.abs(t - t[-1] / 2)))
    cpu_share, growth = cpu_s / wall_s, float(np.polyfit(t / 60.0, rss, 1)[0]) if len(t) > 2 else 0.0
    print(f"{'wall s':>7} {'published s':>12} {'RSS MB':>8} {'CPU % of a core':>16}")  # of the recorder
    shown = sorted({int(np.argmin(np.abs(t - s))) for s in np.arange(0.0, wall_s, TABLE_EVERY_S)} | {len(t) - 1})
    for j, i in zip([0, *shown], shown, strict=False):  # CPU share since the row before
        share = (cpu[i] - cpu[j]) / (t[i] - t[j]) * 100 if i else float("nan")
        print(f"{t[i]:>7.0f} {min(t[i] * args.pace, args.minutes * 60):>12.0f} {rss[i]:>8.1f} {share:>16.1f}")
    figures = {"benchmark": "recorder", "minutes": args.minutes, "pace": args.pace, "storage": args.storage,
               "rate_hz": RATE_HZ, "published": sent["published"], **figures,
               "dropped": sent["published"] - figures["recorded"], "publisher_all_acked": sent["acked"],
               "publisher_late_max_s": round(sent["late_max_s"], 3), "wall_s": round(wall_s, 1),
               "messages_per_wall_s": round(sent["published"] / sent["wall_s"], 1), "recorder_cpu_s": round(cpu_s, 1),
               "recorder_cpu_share": round(cpu_share, 3), "recorder_cpu_percent_of_core": round(100 * cpu_share, 1),
               "rss_mb_start": round(float(rss[0]), 1), "rss_mb_middle": round(float(rss[middle]), 1),
               "rss_mb_end": round(float(rss[-1]), 1), "rss_growth_mb_per_min": round(growth, 2),
               "stamps_mb": round(8 * sent["published"] / 1e6, 1), "cpus": os.cpu_count(),
               "memory_mb": [[round(float(t[i])), round(float(rss[i]), 1)] for i in shown],
               "total_s": round(time.monotonic() - began, 1)}
    f = figures
    print(f"published {f['published']} ({f['messages_per_wall_s']:.0f}/s), recorded {f['recorded']}, dropped "
          f"{f['dropped']} (goal 0), missing stamps {f['missing']}, duplicates {f['duplicates']}; recorder CPU "
          f"{cpu_s:.1f} s in {wall_s:.0f} s = {f['recorder_cpu_share']:.3f} ({f['recorder_cpu_percent_of_core']:.1f} "
          f"% of one core); RSS {f['rss_mb_start']:.1f} → {f['rss_mb_middle']:.1f} → {f['rss_mb_end']:.1f} MB "
          f"({growth:+.2f} MB per wall minute; stamps kept: {f['stamps_mb']} MB); bag {f['bag_mb']} MB")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
