"""Recordings written here for the loading tests: a smooth three-joint motion as CSV files and rosbag2 bags."""


from __future__ import annotations

from pathlib import Path

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer

from robot_id_estimator.recordings.bag_reading import EXCITATION, JOINT_STATE, PERIOD_MARKER, robot_id_typestore
from robot_id_estimator.recordings.recording import Recording

JOINTS = ("j1", "j2", "j3")


def motion(t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Smooth q, dq and a torque for three joints at times t."""
    w = np.array([1.3, 2.1, 0.7])
    q = np.sin(w * t[:, None]) + np.array([0.1, -0.5, 1.0])
    dq = w * np.cos(w * t[:, None])
    tau = 5.0 * q + 0.3 * dq
    return q, dq, tau


def write_csv(path: Path, t, q, tau, dq=None, joints=JOINTS, extra: dict | None = None) -> Path:
    columns = {"t": np.asarray(t)[:, None]}
    columns.update({f"q_{j}": q[:, [i]] for i, j in enumerate(joints)})
    if dq is not None:
        columns.update({f"dq_{j}": dq[:, [i]] for i, j in enumerate(joints)})
    columns.update({f"tau_{j}": tau[:, [i]] for i, j in enumerate(joints)})
    columns.update(extra or {})
    np.savetxt(path, np.hstack(list(columns.values())), delimiter=",", header=",".join(columns), comments="",
               fmt="%.17g")
    return path


def recording(t, q, tau, **kwargs) -> Recording:
    fields = dict(joint_names=JOINTS, t_s=t, q_rad=q, tau_nm=tau, dq_rad_s=None, ddq_rad_s2=None, period_s=None,
                  harmonics=None, source="test", repairs=())
    fields.update(kwargs)
    return Recording(**fields)


def grid(n: int = 2000, rate_hz: float = 1000.0) -> np.ndarray:
    return np.arange(n) / rate_hz


# ------------------------------------------------------------------------------------------------ CSV


def stamp(store, t_ns: int):
    return store.types["builtin_interfaces/msg/Time"](sec=t_ns // 10**9, nanosec=t_ns % 10**9)


def excitation_description(store, t_ns: int, robot: str, kind: str, joint_names, period_s: float, harmonics: int,
                           num_periods: int, start_ns: int):
    """The excitation node's trajectory description (zero coefficients), stamped t_ns, first period at start_ns."""
    n = len(joint_names)
    return store.types[EXCITATION](
        header=store.types["std_msgs/msg/Header"](stamp=stamp(store, t_ns), frame_id=""), robot=robot, kind=kind,
        joint_names=list(joint_names), period_s=period_s, base_frequency_hz=1.0 / period_s, harmonics=harmonics,
        coefficients_a=np.zeros(harmonics * n), coefficients_b=np.zeros(harmonics * n), offsets_rad=np.zeros(n),
        num_periods=num_periods, start_time=stamp(store, start_ns),
    )


def joint_state(store, t_ns: int, names, q, dq, tau, frame_id: str = ""):
    types = store.types
    header = types["std_msgs/msg/Header"](stamp=stamp(store, t_ns), frame_id=frame_id)
    return types[JOINT_STATE](header=header, name=list(names), position=np.array(q, dtype=float),
                              velocity=np.array(dq, dtype=float), effort=np.array(tau, dtype=float))


def write_bag(path: Path, *, varying_layout=False, kind="fourier", effort=True, start_ns=10**18,
               with_description=True, with_markers=True, finger_stroke_m=0.0,
               storage: StoragePlugin = StoragePlugin.SQLITE3) -> dict:
    """A recorder-like bag: 100 Hz joint states of 3 arm joints and a finger (opening by `finger_stroke_m` over
    the bag), a 30 Hz merged topic, the trajectory description (2 s period, 3 harmonics, 3 periods) and a marker
    at every period start; in `storage`."""
    store = robot_id_typestore()
    rate_hz, period_s = 100, 2.0
    t = np.arange(830) / rate_hz
    q, dq, tau = motion(t)
    first_period_ns = start_ns + 500_000_000
    msg_names = ["j2", "finger", "j1", "j3"]
    with Writer(path, version=9, storage_plugin=storage) as writer:
        states = writer.add_connection("/lbr/joint_states", JOINT_STATE, typestore=store)
        merged = writer.add_connection("/joint_states", JOINT_STATE, typestore=store)
        description = writer.add_connection("/excitation/trajectory", EXCITATION, typestore=store)
        markers = writer.add_connection("/excitation/period", PERIOD_MARKER, typestore=store)
        traj = excitation_description(store, start_ns, "not_a_known_robot", kind, JOINTS, period_s, 3, 3,
                                      first_period_ns)
        if with_description:
            writer.write(description, start_ns, store.serialize_cdr(traj, EXCITATION))
        for k in range(len(t)):
            t_ns = start_ns + k * 10_000_000
            order = [1, 3, 0, 2] if varying_layout and k % 2 else [0, 1, 2, 3]
            names = [msg_names[i] for i in order]
            values = {
                "j1": (q[k, 0], dq[k, 0], tau[k, 0]), "j2": (q[k, 1], dq[k, 1], tau[k, 1]),
                "j3": (q[k, 2], dq[k, 2], tau[k, 2]), "finger": (0.02 + finger_stroke_m * k / len(t), 0.0, 1.0),
            }
            columns = np.array([values[name] for name in names])
            msg = joint_state(store, t_ns, names, columns[:, 0], columns[:, 1],
                               columns[:, 2] if effort else [], frame_id="base" * (1 + k % 2 * varying_layout))
            writer.write(states, t_ns, store.serialize_cdr(msg, JOINT_STATE))
            if k % 3 == 0:
                writer.write(merged, t_ns, store.serialize_cdr(msg, JOINT_STATE))
        for index in range(3 if with_markers else 0):
            marker_ns = first_period_ns + index * int(period_s * 1e9)
            marker = store.types[PERIOD_MARKER](
                header=store.types["std_msgs/msg/Header"](stamp=stamp(store, marker_ns), frame_id=""),
                period_index=index, num_periods=3, period_s=period_s,
            )
            writer.write(markers, marker_ns, store.serialize_cdr(marker, PERIOD_MARKER))
    return {"t": t, "q": q, "dq": dq, "tau": tau}


def moving_note(moving: str, selected: str) -> str:
    return (f"joints not in the model move: {moving} [rad, or m if prismatic]; their motion acts on the torques of "
            f"the selected joints {selected}")
