"""Why robot_id_estimator decodes JointState bytes itself: loading a rosbag2 bag of 100 000 JointState messages.

A Panda with its hand at 1 kHz for 100 s (9 joints: position, velocity, effort), written twice: once as a robot
driver records it (one publisher, every message the same byte layout), read by the estimator's fixed-layout
decoder; once with the header's frame_id alternating, so that the layout varies and every message goes through
rosbags' deserialiser. Both must load the same recording. Xu et al. 2020's data size (20 periods × 10 000
samples) is twice this bag, and identify + validate load two recordings.

Run: `make bench` or `source env.sh && python benchmarks/bag_reading.py`. Ends with one JSON line.
"""

import json
import pathlib
import tempfile
import time

import numpy as np
from rosbags.rosbag2 import Reader, Writer

from robot_id_estimator.recordings.bag_reading import JOINT_STATE, robot_id_typestore
from robot_id_estimator.recordings.loading import load_recording
from robot_id_estimator.recordings.recording import Recording

MESSAGES = 100_000
RATE_HZ = 1000.0
JOINTS = [f"panda_joint{i}" for i in range(1, 8)] + ["panda_finger_joint1", "panda_finger_joint2"]


def write_bag(path: pathlib.Path, varying_layout: bool) -> None:
    """MESSAGES JointState messages of a smooth motion on /joint_states."""
    store = robot_id_typestore()
    types = store.types
    t_s = np.arange(MESSAGES) / RATE_HZ
    q_rad = 0.5 * np.sin(np.outer(t_s, 0.3 * np.arange(1, len(JOINTS) + 1)))
    start_ns = 1_700_000_000 * 10**9
    with Writer(path, version=9) as writer:
        connection = writer.add_connection("/joint_states", JOINT_STATE, typestore=store)
        for k in range(MESSAGES):
            t_ns = start_ns + k * 1_000_000
            stamp = types["builtin_interfaces/msg/Time"](sec=t_ns // 10**9, nanosec=t_ns % 10**9)
            frame_id = "panda_link0" if varying_layout and k % 2 else ""
            msg = types[JOINT_STATE](header=types["std_msgs/msg/Header"](stamp=stamp, frame_id=frame_id),
                                     name=JOINTS, position=q_rad[k], velocity=2.0 * q_rad[k], effort=3.0 * q_rad[k])
            writer.write(connection, t_ns, store.serialize_cdr(msg, JOINT_STATE))


def best_load_s(path: pathlib.Path, repeats: int) -> tuple[float, Recording]:
    """The shortest of `repeats` load_recording times [s], and the recording."""
    times_s = []
    for _ in range(repeats):
        start = time.perf_counter()
        rec = load_recording(path)
        times_s.append(time.perf_counter() - start)
    return min(times_s), rec


def deserialise_s(path: pathlib.Path) -> float:
    """Time [s] rosbags takes to deserialise every JointState message of a bag (bytes already read)."""
    store = robot_id_typestore()
    with Reader(path) as reader:
        raws = [bytes(raw) for _, _, raw in reader.messages()]
    start = time.perf_counter()
    for raw in raws:
        store.deserialize_cdr(raw, JOINT_STATE)
    return time.perf_counter() - start


def same(a: Recording, b: Recording) -> bool:
    """Whether two recordings hold the same times, signals and notes."""
    return all(np.array_equal(x, y) for x, y in ((a.t_s, b.t_s), (a.q_rad, b.q_rad), (a.dq_rad_s, b.dq_rad_s),
                                                 (a.tau_nm, b.tau_nm))) and a.repairs == b.repairs


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        fixed, varying = pathlib.Path(tmp) / "fixed", pathlib.Path(tmp) / "varying"
        write_bag(fixed, varying_layout=False)
        write_bag(varying, varying_layout=True)
        fixed_s, fixed_rec = best_load_s(fixed, repeats=3)
        rosbags_s, rosbags_rec = best_load_s(varying, repeats=2)
        figures = {
            "messages": MESSAGES,
            "joints": len(JOINTS),
            "load_fixed_layout_s": round(fixed_s, 2),
            "load_rosbags_s": round(rosbags_s, 2),
            "speedup": round(rosbags_s / fixed_s, 1),
            "rosbags_deserialise_only_s": round(deserialise_s(fixed), 2),
            "same_recording": same(fixed_rec, rosbags_rec),
        }
    print(f"load_recording, {MESSAGES} JointState messages of {len(JOINTS)} joints: fixed-layout decoder "
          f"{figures['load_fixed_layout_s']:.2f} s, rosbags deserialiser {figures['load_rosbags_s']:.2f} s "
          f"({figures['speedup']:.1f}×; rosbags' deserialisation alone {figures['rosbags_deserialise_only_s']:.2f} s);"
          f" same recording: {figures['same_recording']}")
    print(json.dumps({"benchmark": "bag_reading", **figures}))


if __name__ == "__main__":
    main()
