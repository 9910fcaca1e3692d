"""A robot that does not wait: joint states of a non-real-time publisher at the lbr stack's 100 Hz while
the config says 500 Hz (stamp jitter, 50–100 ms delivery stalls followed by bursts of late samples that carry their
own correct stamps, lost stretches up to 96 ms, random drops) go through the recorder's session into a bag; the
recorder flags nothing, the estimator orders the samples by their stamps, fills the gaps and identifies the true
parameters. A bag whose periods the recorder all flagged is identified as non-periodic data, saying so."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from estimator_synthetic import SIGN_LAW, iiwa14_setup
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState

from robot_id_contract.period_index import PeriodMarkerStamp
from robot_id_estimator.pipeline import identify
from robot_id_estimator.recordings.loading import load_recording
from robot_id_estimator.recordings.recording import Recording
from robot_id_lab.synthetic import random_motion, urdf_with_friction
from robot_id_model import regressor
from robot_id_msgs.msg import ExcitationTrajectory, PeriodMarker
from robot_id_recorder.bag_writer import BagWriter
from robot_id_recorder.message_types import typestore_for
from robot_id_recorder.recording_session import RecordingSession

RATE_HZ = 100.0
CONFIGURED_HZ = 500.0
PERIOD_S = 20.0
HARMONICS = 5
PERIODS = 3
START_NS = 1_700_000_000_000_000_000
LEAD_IN_S = 1.5
TYPES = {"/lbr/joint_states": "sensor_msgs/msg/JointState", "/robot_id/period_marker": "robot_id_msgs/msg/PeriodMarker",
         "/robot_id/excitation_trajectory": "robot_id_msgs/msg/ExcitationTrajectory"}


@dataclasses.dataclass
class Stream:
    stamps_ns: np.ndarray
    """Header stamps of the samples published (their true sample times), in stamp order."""
    arrival_ns: np.ndarray
    lost: np.ndarray
    """Nominal sample numbers never published."""


def non_real_time_stream(seed: int, drop_fraction: float = 5e-4, long_gap_s: float = 0.0) -> Stream:
    """Samples at RATE_HZ from LEAD_IN_S before the first period to its end: stamps with 0.5 ms Gaussian jitter;
    per period three delivery stalls of 50–100 ms (the samples then arrive in a burst, shuffled) and one lost stretch
    of 50–96 ms; random drops of `drop_fraction`; and a lost stretch of `long_gap_s` in the middle of period 2."""
    rng = np.random.default_rng(seed)
    k = np.arange(-round(LEAD_IN_S * RATE_HZ), round(PERIODS * PERIOD_S * RATE_HZ))
    t_s = k / RATE_HZ + rng.normal(0.0, 0.5e-3, len(k))
    lost = rng.random(len(k)) < drop_fraction
    arrival_s = t_s + rng.uniform(0.5e-3, 2e-3, len(k))
    for p in range(PERIODS):
        for start_s in p * PERIOD_S + rng.uniform(0.5, PERIOD_S - 0.5, 3):
            end_s = start_s + rng.uniform(0.05, 0.1)
            stalled = (t_s >= start_s) & (t_s < end_s)
            arrival_s[stalled] = end_s + rng.permutation(np.count_nonzero(stalled)) * 1e-5
        start_s = p * PERIOD_S + rng.uniform(0.5, PERIOD_S - 0.5)
        lost |= (t_s > start_s) & (t_s < start_s + rng.uniform(0.05, 0.096))
    lost |= (t_s > 1.5 * PERIOD_S) & (t_s < 1.5 * PERIOD_S + long_gap_s)
    stamps_ns = START_NS + np.round(t_s * 1e9).astype(np.int64)
    return Stream(stamps_ns[~lost], START_NS + np.round(arrival_s[~lost] * 1e9).astype(np.int64), k[lost])


def _excitation_messages() -> list[tuple[str, int, bytes]]:
    joints = list(_setup().joint_names)
    trajectory = ExcitationTrajectory(robot="iiwa14", kind="fourier", joint_names=joints, period_s=PERIOD_S,
                                      base_frequency_hz=1.0 / PERIOD_S, harmonics=HARMONICS, num_periods=PERIODS,
                                      coefficients_a=[0.0] * (len(joints) * HARMONICS),
                                      coefficients_b=[0.0] * (len(joints) * HARMONICS), offsets_rad=[0.0] * len(joints))
    trajectory.start_time.sec, trajectory.start_time.nanosec = divmod(START_NS, 1_000_000_000)
    out = [("/robot_id/excitation_trajectory", START_NS - round(LEAD_IN_S * 1e9) - 1, trajectory)]
    for p in range(PERIODS):
        marker = PeriodMarker(period_index=p, num_periods=PERIODS, period_s=PERIOD_S)
        t_ns = START_NS + round(p * PERIOD_S * 1e9)
        marker.header.stamp.sec, marker.header.stamp.nanosec = divmod(t_ns, 1_000_000_000)
        out.append(("/robot_id/period_marker", t_ns, marker))
    return [(topic, t_ns, bytes(serialize_message(msg))) for topic, t_ns, msg in out]


def _setup():
    return dataclasses.replace(iiwa14_setup(), torque_filter_time_constant_s=0.0)  # samples at their own times


def record(path, stream: Stream, robot, pi: np.ndarray, tau_noise_nm: float = 0.05) -> RecordingSession:
    """The stream of the true robot `pi` on a random excitation through a RecordingSession into a bag at `path`,
    in arrival order; the session (closed)."""
    t_s = (stream.stamps_ns - START_NS) * 1e-9
    q, dq, ddq = random_motion(robot, PERIOD_S, HARMONICS, np.maximum(t_s, 0.0), seed=3)
    tau = regressor(robot, q, dq, ddq) @ pi + tau_noise_nm * np.random.default_rng(4).normal(size=q.shape)
    names = list(robot.joint_names)
    messages = _excitation_messages()
    for i, stamp in enumerate(stream.stamps_ns):
        msg = JointState(name=names, position=q[i].tolist(), velocity=dq[i].tolist(), effort=tau[i].tolist())
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(stamp), 1_000_000_000)
        messages.append(("/lbr/joint_states", int(stream.arrival_ns[i]), bytes(serialize_message(msg))))
    writer = BagWriter(path, typestore_for(TYPES.values()))
    for topic, msgtype in TYPES.items():
        writer.add_topic(topic, msgtype)
    session = RecordingSession(writer, "/lbr/joint_states", CONFIGURED_HZ, lambda _text: None)
    for topic, t_ns, raw in sorted(messages, key=lambda m: m[1]):
        session.on_message(topic, t_ns, raw)
        if topic == "/robot_id/period_marker":
            session.on_marker(PeriodMarkerStamp(round((t_ns - START_NS) / (PERIOD_S * 1e9)), t_ns, PERIOD_S,
                                                PERIODS))
        elif topic == "/robot_id/excitation_trajectory":
            session.on_description(PERIOD_S, HARMONICS)
    session.close()
    return session


@pytest.fixture(scope="module")
def arm():
    setup = _setup()
    robot = setup.model(("FV", "FC", "FO"))
    return setup, robot, urdf_with_friction(robot)


def _prediction_error(result, robot, pi) -> np.ndarray:
    """RMS torque error of the base parameters on another motion, per joint, relative to the torque RMS."""
    t = np.arange(0.0, PERIOD_S, 0.01)
    y = regressor(robot, *random_motion(robot, PERIOD_S, HARMONICS, t, seed=7))
    tau = y @ pi
    error = y[..., result.columns] @ result.parameter_values("base") - tau
    return np.sqrt(np.mean(error**2, axis=0) / np.mean(tau**2, axis=0))


def test_a_non_real_time_stream_at_100_hz_is_recorded_unflagged_and_identifies(tmp_path, arm):
    setup, robot, pi = arm
    stream = non_real_time_stream(seed=0)
    session = record(tmp_path / "bag", stream, robot, pi)
    assert session.rate_hz == pytest.approx(RATE_HZ, rel=1e-3)
    index = session.index()
    assert not any(e.flagged for e in index)
    period_of_lost = stream.lost[stream.lost >= 0] // round(PERIOD_S * RATE_HZ)
    assert [e.missing for e in index] == pytest.approx(np.bincount(period_of_lost, minlength=PERIODS), abs=1)
    assert max(e.longest_gap_s for e in index) < 0.1 + 0.01

    rec = load_recording(tmp_path / "bag")
    assert any(r.startswith("ordered the joint states by their header stamps") for r in rec.repairs)
    assert not any("left out" in r for r in rec.repairs)
    assert any(r.startswith("interpolated across") for r in rec.repairs)
    assert rec.t_s[-1] - rec.t_s[0] == pytest.approx(PERIODS * PERIOD_S - 1.0 / RATE_HZ, abs=1e-3)
    result = identify([rec], setup, SIGN_LAW)
    assert result.metrics.n_periods == (PERIODS,)
    assert np.all(_prediction_error(result, robot, pi) < 0.01)


def test_a_bag_whose_periods_are_all_flagged_identifies_as_non_periodic_data(tmp_path, arm):
    """2 % of the samples dropped flags every period; a 0.3 s lost stretch in the middle of period 2 leaves the
    data before it as the longest stretch the estimator can fill."""
    setup, robot, pi = arm
    session = record(tmp_path / "bag", non_real_time_stream(seed=1, drop_fraction=0.02, long_gap_s=0.3), robot, pi)
    assert all(e.flagged for e in session.index())
    rec = load_recording(tmp_path / "bag")
    assert rec.non_periodic_reason.startswith("all 3 periods were flagged by the recorder: period 0 (")
    assert "samples missing" in rec.non_periodic_reason and "a gap of 0.3" in rec.non_periodic_reason
    assert rec.t_s[-1] - rec.t_s[0] == pytest.approx(1.5 * PERIOD_S, abs=0.05)  # up to the long gap
    result = identify([rec], setup, SIGN_LAW)
    assert result.metrics.n_periods == (0,)
    assert any("all 3 periods were flagged by the recorder" in w for w in result.warnings)
    assert np.all(_prediction_error(result, robot, pi) < 0.03)


def test_a_clean_recording_with_jittery_stamps_keeps_its_last_period():
    """5 × 20 s at 500 Hz whose first stamp came late and last early (0.3 of a sample each, as a driver's stamps
    jitter): resampled onto the grid, every sample stays, and all 5 periods are averaged (on main the grid came
    out one sample short and the last period was dropped, on every run of the graph)."""
    from robot_id_estimator.processing.samples import process
    from robot_id_estimator.recordings.cleaning import clean

    robot = iiwa14_setup().model(("FV", "FC", "FO"))
    k, dt = 50_000, 0.002
    t = np.arange(k) * dt + np.random.default_rng(3).uniform(-0.1, 0.1, k) * dt
    t[0], t[-1] = 0.3 * dt, (k - 1.3) * dt
    q, dq, _ = random_motion(robot, 20.0, 5, t % 20.0, 0)
    rec = Recording(robot.joint_names, t, q, np.zeros_like(q), dq, None, 20.0, 5, "jittery", ())
    cleaned = clean(rec)
    assert len(cleaned.t_s) == k
    assert process(cleaned).n_periods == 5
