"""Loading CSV files and rosbag2 bags, and every repair or refusal of messy data."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest
from rosbags.rosbag2 import Writer

from robot_id_estimator.bag_reading import EXCITATION, JOINT_STATE, PERIOD_MARKER, robot_id_typestore
from robot_id_estimator.cleaning import clean
from robot_id_estimator.csv_columns import parse_column_map
from robot_id_estimator.recording import UNMODELLED_MOTION, DataError, Recording, load_recording

JOINTS = ("j1", "j2", "j3")


def _motion(t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Smooth q, dq and a torque for three joints at times t."""
    w = np.array([1.3, 2.1, 0.7])
    q = np.sin(w * t[:, None]) + np.array([0.1, -0.5, 1.0])
    dq = w * np.cos(w * t[:, None])
    tau = 5.0 * q + 0.3 * dq
    return q, dq, tau


def _write_csv(path: Path, t, q, tau, dq=None, joints=JOINTS, extra: dict | None = None) -> Path:
    columns = {"t": np.asarray(t)[:, None]}
    columns.update({f"q_{j}": q[:, [i]] for i, j in enumerate(joints)})
    if dq is not None:
        columns.update({f"dq_{j}": dq[:, [i]] for i, j in enumerate(joints)})
    columns.update({f"tau_{j}": tau[:, [i]] for i, j in enumerate(joints)})
    columns.update(extra or {})
    np.savetxt(path, np.hstack(list(columns.values())), delimiter=",", header=",".join(columns), comments="",
               fmt="%.17g")
    return path


def _recording(t, q, tau, **kwargs) -> Recording:
    fields = dict(joint_names=JOINTS, t_s=t, q_rad=q, tau_nm=tau, dq_rad_s=None, ddq_rad_s2=None, period_s=None,
                  harmonics=None, source="test", repairs=())
    fields.update(kwargs)
    return Recording(**fields)


def _grid(n: int = 2000, rate_hz: float = 1000.0) -> np.ndarray:
    return np.arange(n) / rate_hz


# ------------------------------------------------------------------------------------------------ CSV


def test_csv_selects_and_reorders_joints_and_keeps_logged_velocities(tmp_path):
    t = _grid()
    q, dq, tau = _motion(t)
    path = _write_csv(tmp_path / "run.csv", t, q, tau, dq, extra={"temperature_c": np.ones((len(t), 1))})
    rec = load_recording(path, joint_names=["j3", "j1"], period_s=2.5, unmodelled_motion_ok=True)  # j2 moves
    assert rec.joint_names == ("j3", "j1")
    np.testing.assert_array_equal(rec.q_rad, q[:, [2, 0]])
    np.testing.assert_array_equal(rec.dq_rad_s, dq[:, [2, 0]])
    np.testing.assert_array_equal(rec.tau_nm, tau[:, [2, 0]])
    assert rec.ddq_rad_s2 is None and rec.period_s == 2.5 and rec.harmonics is None
    assert rec.repairs[0] == "ignored CSV columns ['temperature_c']"
    assert rec.repairs[1].startswith(f"joints not in the model move: j2 (range {np.ptp(q[:, 1]):.3g})")
    assert rec.source == str(path)


def test_unknown_joint_name_is_refused_listing_the_joints(tmp_path):
    t = _grid(100)
    path = _write_csv(tmp_path / "run.csv", t, *_motion(t)[::2])
    with pytest.raises(DataError, match=r"no joint named \['lbr_A1'\].*\['j1', 'j2', 'j3'\]"):
        load_recording(path, joint_names=["j1", "lbr_A1"])


def test_missing_torque_column_is_refused(tmp_path):
    t = _grid(100)
    q, _, tau = _motion(t)
    path = tmp_path / "run.csv"
    header = "t,q_j1,q_j2,tau_j1"
    np.savetxt(path, np.column_stack([t, q[:, :2], tau[:, 0]]), delimiter=",", header=header, comments="")
    with pytest.raises(DataError, match=r"no torque column \['tau_j2'\]"):
        load_recording(path)


def test_missing_time_column_and_unknown_format_are_refused(tmp_path):
    path = tmp_path / "run.csv"
    path.write_text("t_s,q_j1,tau_j1\n0,1,2\n")
    with pytest.raises(DataError, match=r"no 't' column"):
        load_recording(path)
    other = tmp_path / "run.txt"
    other.write_text("0 1 2\n")
    with pytest.raises(DataError, match="unknown format"):
        load_recording(other)
    with pytest.raises(DataError, match="no such file"):
        load_recording(tmp_path / "absent.csv")


def test_single_sample_and_header_only_are_refused(tmp_path):
    t = _grid(1)
    with pytest.raises(DataError, match=r"1 usable sample\(s\); a recording needs at least 3"):
        load_recording(_write_csv(tmp_path / "one.csv", t, *_motion(t)[::2]))
    empty = tmp_path / "empty.csv"
    empty.write_text("t,q_j1,tau_j1\n")
    with pytest.raises(DataError, match=r"0 usable sample"):
        load_recording(empty)


def test_empty_fields_become_nan_and_a_truncated_last_line_is_dropped(tmp_path):
    t = _grid(200)
    q, _, tau = _motion(t)
    path = _write_csv(tmp_path / "run.csv", t, q, tau)
    lines = path.read_text().splitlines()
    fields = lines[51].split(",")
    fields[2] = ""  # q_j2 of sample 50
    lines[51] = ",".join(fields)
    lines.append("0.2,0.1,0.2")  # the logger stopped mid-line
    path.write_text("\n".join(lines) + "\n")
    rec = load_recording(path)
    assert len(rec.t_s) == 200
    assert "dropped the truncated last line 202 (3 of 7 fields)" in rec.repairs
    assert "interpolated 1 non-finite values of q_j2 in 1 run(s) (samples 50–50)" in rec.repairs
    assert rec.q_rad[50, 1] == pytest.approx(q[50, 1], abs=1e-6)


def test_row_with_wrong_field_count_in_the_middle_is_refused(tmp_path):
    t = _grid(50)
    path = _write_csv(tmp_path / "run.csv", t, *_motion(t)[::2])
    lines = path.read_text().splitlines()
    lines[10] = "0.1,1"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match="line 11 has 2 fields, the header has 7"):
        load_recording(path)


# ------------------------------------------------------------------------------------------------ clean


def test_duplicate_rows_are_dropped_and_the_grid_restored(tmp_path):
    t = _grid()
    q, _, tau = _motion(t)
    stale = np.array([100, 101, 700, 1500])  # the logger re-read the previous state: values repeat, time moves on
    q[stale], tau[stale] = q[stale - 1], tau[stale - 1]
    q[101], tau[101] = q[99], tau[99]
    rec = load_recording(_write_csv(tmp_path / "run.csv", t, q, tau))
    assert rec.repairs[0] == "dropped 4 duplicate rows (q and tau identical to the previous row)"
    assert "resampled 1996 samples onto a uniform 1000 Hz grid (2000 samples)" in rec.repairs[1]
    np.testing.assert_allclose(rec.t_s, t, atol=1e-12)
    q_true, _, tau_true = _motion(t)
    np.testing.assert_allclose(rec.q_rad, q_true, atol=1e-8)
    np.testing.assert_allclose(rec.tau_nm, tau_true, atol=1e-4)


def test_the_grid_keeps_the_logged_rate_when_most_rows_are_stale():
    t = _grid(1000)
    q, _, tau = _motion(t)
    q[1::2], tau[1::2] = q[::2], tau[::2]  # every other row re-reads the previous state
    rec = clean(_recording(t, q, tau))
    assert rec.repairs[0] == "dropped 500 duplicate rows (q and tau identical to the previous row)"
    assert "uniform 1000 Hz grid (999 samples); logged sample intervals 1 ms–1 ms" in rec.repairs[1]
    assert rec.repairs[2].startswith("interpolated across 499 short gap(s)")
    np.testing.assert_allclose(rec.q_rad, _motion(rec.t_s)[0], atol=1e-7)


def test_repeated_timestamps_are_dropped():
    t = _grid(500)
    q, _, tau = _motion(t)
    t2 = np.insert(t, 201, t[200])  # a second reading stamped like the one before it
    q2, tau2 = np.insert(q, 201, q[200] + 1e-3, axis=0), np.insert(tau, 201, tau[200], axis=0)
    rec = clean(_recording(t2, q2, tau2))
    assert rec.repairs == ("dropped 1 rows repeating the previous timestamp",)
    np.testing.assert_array_equal(rec.q_rad, q)


def test_jittery_timestamps_are_resampled_at_the_median_rate():
    rng = np.random.default_rng(1)
    t = _grid(3000) + rng.uniform(-0.2e-3, 0.2e-3, 3000)
    t[0] = 0.0
    q, dq, tau = _motion(t)
    rec = clean(_recording(t, q, tau, dq_rad_s=dq))
    (note,) = rec.repairs
    assert "uniform 1000 Hz grid" in note and "jitter" in note and "median 1 ms" in note
    steps = np.diff(rec.t_s)
    np.testing.assert_allclose(steps, 1e-3, rtol=1e-9)
    q_true, dq_true, tau_true = _motion(rec.t_s)
    np.testing.assert_allclose(rec.q_rad, q_true, atol=1e-7)
    np.testing.assert_allclose(rec.dq_rad_s, dq_true, atol=1e-6)
    np.testing.assert_allclose(rec.tau_nm, tau_true, atol=1e-4)


def test_short_gap_is_interpolated():
    t = _grid()
    q, _, tau = _motion(t)
    keep = np.ones(len(t), dtype=bool)
    keep[1000:1030] = False  # 31 ms without samples
    rec = clean(_recording(t[keep], q[keep], tau[keep]), max_gap_s=0.05)
    assert any("interpolated across 1 short gap(s) (dropped rows or missing samples), the longest 31 ms at "
               "t = 0.999 s" in r
               for r in rec.repairs)
    np.testing.assert_allclose(rec.t_s, t, atol=1e-12)
    q_true, _, tau_true = _motion(t)
    np.testing.assert_allclose(rec.q_rad, q_true, atol=1e-5)
    np.testing.assert_allclose(rec.tau_nm, tau_true, atol=5e-3)  # linear across 31 ms: h²/8·max|tau''|


def test_long_gap_is_refused_with_its_position():
    t = _grid()
    q, _, tau = _motion(t)
    keep = np.ones(len(t), dtype=bool)
    keep[1200:1400] = False
    with pytest.raises(DataError, match=r"1 gap\(s\) longer than max_gap_s = 0.05 s.*0.201 s between "
                                        r"t = 1.199 s and t = 1.4 s: split the recording there"):
        clean(_recording(t[keep], q[keep], tau[keep]))


def test_short_nan_run_is_interpolated():
    t = _grid(1000)
    q, _, tau = _motion(t)
    q[100:105, 1] = np.nan
    tau[400, 0] = np.inf
    rec = clean(_recording(t, q.copy(), tau.copy()))
    assert rec.repairs == (
        "interpolated 5 non-finite values of q_j2 in 1 run(s) (samples 100–104)",
        "interpolated 1 non-finite values of tau_j1 in 1 run(s) (samples 400–400)",
    )
    q_true, _, tau_true = _motion(t)
    np.testing.assert_allclose(rec.q_rad, q_true, atol=1e-5)
    np.testing.assert_allclose(rec.tau_nm, tau_true, atol=1e-4)
    assert np.isnan(q[100, 1]), "the caller's arrays are left untouched"


def test_nan_at_the_ends_drops_those_rows():
    t = _grid(1000)
    q, _, tau = _motion(t)
    q[:3, 0] = np.nan
    rec = clean(_recording(t, q, tau))
    assert rec.repairs[-1] == "dropped 3 rows at the ends with non-finite values"
    np.testing.assert_array_equal(rec.t_s, t[3:])


def test_long_nan_run_is_refused_naming_column_and_rows():
    t = _grid(1000)
    q, _, tau = _motion(t)
    tau[300:400, 0] = np.nan
    with pytest.raises(DataError, match=r"column tau_j1 is not finite for 100 samples 300–399 "
                                        r"\(t = 0.3–0.399 s\), longer than max_gap_s"):
        clean(_recording(t, q, tau))


def test_slightly_out_of_order_timestamps_are_sorted():
    t = _grid(500)
    q, _, tau = _motion(t)
    order = np.arange(500)
    order[[10, 11]] = [11, 10]
    order[[300, 302]] = [302, 300]
    rec = clean(_recording(t[order], q[order], tau[order]))
    assert rec.repairs == ("sorted out-of-order timestamps (3 steps back in time, the largest 1 ms)",)
    np.testing.assert_array_equal(rec.t_s, t)
    np.testing.assert_array_equal(rec.q_rad, q)


def test_time_jumping_back_is_refused():
    t = _grid(500)
    q, _, tau = _motion(t)
    t2 = np.concatenate([t, t])  # two logs concatenated
    with pytest.raises(DataError, match=r"time goes back by 0.499 s at sample 500 .*split the file there"):
        clean(_recording(t2, np.vstack([q, q]), np.vstack([tau, tau])))


def test_wrong_shapes_are_refused():
    t = _grid(10)
    q, _, tau = _motion(t)
    with pytest.raises(DataError, match=r"tau has shape \(10, 2\), expected \(10, 3\)"):
        clean(_recording(t, q, tau[:, :2]))


def test_clean_data_pass_unchanged_and_cleaning_is_idempotent():
    t = _grid(1000)
    q, _, tau = _motion(t)
    rec = clean(_recording(t, q, tau))
    assert rec.repairs == ()
    np.testing.assert_array_equal(rec.q_rad, q)
    q[[5, 6]] = q[4]
    tau[[5, 6]] = tau[4]
    once = clean(_recording(t + 0.0001 * np.sin(t), q, tau))
    twice = clean(once)
    assert twice.repairs == once.repairs
    np.testing.assert_array_equal(twice.q_rad, once.q_rad)


# ------------------------------------------------------------------------------------------------ bags


def _stamp(store, t_ns: int):
    return store.types["builtin_interfaces/msg/Time"](sec=t_ns // 10**9, nanosec=t_ns % 10**9)


def _joint_state(store, t_ns: int, names, q, dq, tau, frame_id: str = ""):
    types = store.types
    header = types["std_msgs/msg/Header"](stamp=_stamp(store, t_ns), frame_id=frame_id)
    return types[JOINT_STATE](header=header, name=list(names), position=np.array(q, dtype=float),
                              velocity=np.array(dq, dtype=float), effort=np.array(tau, dtype=float))


def _write_bag(path: Path, *, varying_layout=False, kind="fourier", effort=True, start_ns=10**18,
               with_description=True, with_markers=True, finger_stroke_m=0.0) -> dict:
    """A recorder-like bag: 100 Hz joint states of 3 arm joints and a finger (opening by `finger_stroke_m` over
    the bag), a 30 Hz merged topic, the trajectory description (2 s period, 3 harmonics, 3 periods) and a marker
    at every period start."""
    store = robot_id_typestore()
    rate_hz, period_s = 100, 2.0
    t = np.arange(830) / rate_hz
    q, dq, tau = _motion(t)
    first_period_ns = start_ns + 500_000_000
    msg_names = ["j2", "finger", "j1", "j3"]
    with Writer(path, version=9) as writer:
        states = writer.add_connection("/lbr/joint_states", JOINT_STATE, typestore=store)
        merged = writer.add_connection("/joint_states", JOINT_STATE, typestore=store)
        description = writer.add_connection("/excitation/trajectory", EXCITATION, typestore=store)
        markers = writer.add_connection("/excitation/period", PERIOD_MARKER, typestore=store)
        traj = store.types[EXCITATION](
            header=store.types["std_msgs/msg/Header"](stamp=_stamp(store, start_ns), frame_id=""),
            robot="not_a_known_robot", kind=kind, joint_names=["j1", "j2", "j3"], period_s=period_s,
            base_frequency_hz=1.0 / period_s, harmonics=3, coefficients_a=np.zeros(9), coefficients_b=np.zeros(9),
            offsets_rad=np.zeros(3), num_periods=3, start_time=_stamp(store, first_period_ns),
        )
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
            msg = _joint_state(store, t_ns, names, columns[:, 0], columns[:, 1],
                               columns[:, 2] if effort else [], frame_id="base" * (1 + k % 2 * varying_layout))
            writer.write(states, t_ns, store.serialize_cdr(msg, JOINT_STATE))
            if k % 3 == 0:
                writer.write(merged, t_ns, store.serialize_cdr(msg, JOINT_STATE))
        for index in range(3 if with_markers else 0):
            marker_ns = first_period_ns + index * int(period_s * 1e9)
            marker = store.types[PERIOD_MARKER](
                header=store.types["std_msgs/msg/Header"](stamp=_stamp(store, marker_ns), frame_id=""),
                period_index=index, num_periods=3, period_s=period_s,
            )
            writer.write(markers, marker_ns, store.serialize_cdr(marker, PERIOD_MARKER))
    return {"t": t, "q": q, "dq": dq, "tau": tau}


@pytest.mark.parametrize("varying_layout", [False, True], ids=["one-layout", "varying-layout"])
def test_bag_round_trip_reads_description_and_keeps_whole_periods(tmp_path, varying_layout):
    truth = _write_bag(tmp_path / "bag", varying_layout=varying_layout)
    rec = load_recording(tmp_path / "bag")
    assert rec.joint_names == ("j1", "j2", "j3")
    assert rec.period_s == 2.0 and rec.harmonics == 3
    kept = slice(50, 650)  # 3 periods of 2 s at 100 Hz from the first marker at 0.5 s
    np.testing.assert_allclose(rec.t_s, truth["t"][kept], atol=1e-9)
    np.testing.assert_array_equal(rec.q_rad, truth["q"][kept])
    np.testing.assert_array_equal(rec.dq_rad_s, truth["dq"][kept])
    np.testing.assert_array_equal(rec.tau_nm, truth["tau"][kept])
    assert rec.repairs == (
        "read joint states from /lbr/joint_states (830 messages) of ['/joint_states', '/lbr/joint_states']",
        "kept 3 whole periods of 2 s from 0.500 s (dropped 50 samples before and 180 after)",
    )


def test_bag_joint_selection_and_user_period(tmp_path):
    _write_bag(tmp_path / "bag")
    db3 = next((tmp_path / "bag").glob("*.db3"))
    with pytest.raises(DataError, match=r"joints not in the model move: j2 \(range 2\), j1 \(range 2\)"):
        load_recording(db3, joint_names=["finger", "j3"], period_s=4.0)
    rec = load_recording(db3, joint_names=["finger", "j3"], period_s=4.0, unmodelled_motion_ok=True)
    assert rec.joint_names == ("finger", "j3")
    assert rec.period_s == 4.0 and rec.harmonics is None
    np.testing.assert_array_equal(rec.q_rad[:, 0], 0.02)
    assert "kept 1 whole periods of 4 s from 0.500 s (dropped 50 samples before and 380 after)" in rec.repairs
    with pytest.raises(DataError, match=r"no joint named \['lbr_A1'\]; the joints in the data are"):
        load_recording(tmp_path / "bag", joint_names=["lbr_A1"])


def test_bag_period_from_markers_alone_or_from_the_description_start_time(tmp_path):
    truth = _write_bag(tmp_path / "markers", with_description=False)
    rec = load_recording(tmp_path / "markers")
    assert rec.joint_names == ("j2", "finger", "j1", "j3")  # message order without a description
    assert rec.period_s == 2.0 and rec.harmonics is None
    assert len(rec.t_s) == 600
    np.testing.assert_array_equal(rec.tau_nm[:, 2], truth["tau"][50:650, 0])
    _write_bag(tmp_path / "described", with_markers=False)  # period 0 starts at the description's start_time
    rec = load_recording(tmp_path / "described")
    assert rec.period_s == 2.0 and rec.harmonics == 3
    assert "kept 3 whole periods of 2 s from 0.500 s (dropped 50 samples before and 180 after)" in rec.repairs


def test_bag_with_modified_fourier_description_does_not_limit_harmonics(tmp_path):
    _write_bag(tmp_path / "bag", kind="modified_fourier")
    rec = load_recording(tmp_path / "bag")
    assert rec.period_s == 2.0 and rec.harmonics is None
    assert any(r.startswith("modified_fourier excitation") for r in rec.repairs)


def test_bag_without_torques_or_joint_states_is_refused(tmp_path):
    _write_bag(tmp_path / "bag", effort=False)
    with pytest.raises(DataError, match=r"carry no effort \(joint torques\)"):
        load_recording(tmp_path / "bag")
    store = robot_id_typestore()
    with Writer(tmp_path / "other", version=9) as writer:
        conn = writer.add_connection("/excitation/period", PERIOD_MARKER, typestore=store)
        marker = store.types[PERIOD_MARKER](
            header=store.types["std_msgs/msg/Header"](stamp=_stamp(store, 0), frame_id=""),
            period_index=0, num_periods=1, period_s=1.0,
        )
        writer.write(conn, 0, store.serialize_cdr(marker, PERIOD_MARKER))
    with pytest.raises(DataError, match=r"no sensor_msgs/msg/JointState topic in the bag; it holds "
                                        r"\[\('/excitation/period', 'robot_id_msgs/msg/PeriodMarker'\)\]"):
        load_recording(tmp_path / "other")


def test_message_definitions_come_from_the_installed_share_directory_only(tmp_path, monkeypatch):
    """Without an installed robot_id_msgs (the source tree is never read), the recorder's messages are ignored."""
    assert EXCITATION in robot_id_typestore().fielddefs
    _write_bag(tmp_path / "bag")
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path))
    assert EXCITATION not in robot_id_typestore().fielddefs
    rec = load_recording(tmp_path / "bag")
    assert rec.period_s is None and len(rec.t_s) == 830
    assert rec.repairs[0] == (f"ignored {[EXCITATION, PERIOD_MARKER]}: robot_id_msgs' message definitions were "
                              "not found")


def test_recording_is_frozen():
    t = _grid(10)
    rec = _recording(t, *_motion(t)[::2])
    with pytest.raises(dataclasses.FrozenInstanceError):
        rec.period_s = 1.0


# ------------------------------------------------------------------------------------------------ column maps

PANDA_MAP = "t=t_s,q=q{i}_rad,dq=dq{i}_rad_s,tau=tau{i}_Nm"


def _write_panda_like(path: Path, t, q, dq, tau) -> Path:
    """A CSV with the header of the shared real Panda log (Gaz et al. 2019): t_s, q{i}_rad, dq{i}_rad_s, tau{i}_Nm."""
    n = q.shape[1]
    header = ["t_s"] + [f"{signal}{i}_{unit}" for signal, unit in (("q", "rad"), ("dq", "rad_s"), ("tau", "Nm"))
                        for i in range(1, n + 1)]
    np.savetxt(path, np.column_stack([t, q, dq, tau]), delimiter=",", header=",".join(header), comments="",
               fmt="%.17g")
    return path


def test_parse_column_map_reads_the_command_line_text():
    assert parse_column_map(" t=t_s, q=q{i}_rad,dq=dq{i}_rad_s ,tau=tau{i}_Nm") == {
        "t": "t_s", "q": "q{i}_rad", "dq": "dq{i}_rad_s", "tau": "tau{i}_Nm"
    }
    assert parse_column_map("q_fer_joint1=pos=1") == {"q_fer_joint1": "pos=1"}  # split at the first '='


@pytest.mark.parametrize("text, message", [
    ("t=t_s,q", r"column map 't=t_s,q': 'q' is not KEY=COLUMN; expected e.g. t=t_s,q=q\{i\}_rad,"),
    ("t=t_s,,tau=tau{i}_Nm", r"'' is not KEY=COLUMN"),
    ("=t_s", r"'=t_s' is not KEY=COLUMN"),
    ("t=", r"'t=' is not KEY=COLUMN"),
    ("t=t_s,t=time", r"column map 't=t_s,t=time': t is mapped twice"),
], ids=["no-equals", "empty-entry", "no-key", "no-column", "twice"])
def test_malformed_column_map_text_is_refused(text, message):
    with pytest.raises(DataError, match=message):
        parse_column_map(text)


def test_panda_like_header_loads_with_templates_as_our_layout_does(tmp_path):
    t = _grid()
    q, dq, tau = _motion(t)
    theirs = load_recording(_write_panda_like(tmp_path / "log.csv", t, q, dq, tau), JOINTS,
                            columns=parse_column_map(PANDA_MAP))
    ours = load_recording(_write_csv(tmp_path / "ours.csv", t, q, tau, dq), JOINTS)
    assert theirs.joint_names == ours.joint_names == JOINTS
    for field in ("t_s", "q_rad", "dq_rad_s", "tau_nm"):
        np.testing.assert_array_equal(getattr(theirs, field), getattr(ours, field))
    np.testing.assert_array_equal(theirs.q_rad, q)
    assert theirs.repairs == ours.repairs == ()
    without_dq = load_recording(tmp_path / "log.csv", JOINTS, columns={"t": "t_s", "q": "q{i}_rad", "tau": "tau{i}_Nm"})
    assert without_dq.dq_rad_s is None
    assert without_dq.repairs == ("ignored CSV columns ['dq1_rad_s', 'dq2_rad_s', 'dq3_rad_s']",)


def test_exact_per_joint_keys_win_over_templates_and_need_no_joint_names(tmp_path):
    t = _grid(200)
    q, _, tau = _motion(t)
    path = tmp_path / "log.csv"
    header = "time,q1_rad,q2_rad,q3_rad,encoder_j1,effort_j1,effort_j2,effort_j3"
    np.savetxt(path, np.column_stack([t, q[:, 0] + 1.0, q[:, 1:], q[:, 0], tau]), delimiter=",", header=header,
               comments="", fmt="%.17g")
    column_map = {"t": "time", "q": "q{i}_rad", "q_j1": "encoder_j1", "tau": "effort_{joint}"}
    rec = load_recording(path, JOINTS, columns=column_map)
    np.testing.assert_array_equal(rec.q_rad, q)
    np.testing.assert_array_equal(rec.tau_nm, tau)
    assert rec.repairs == ("ignored CSV columns ['q1_rad']",)
    one = load_recording(path, columns={"t": "time", "q_j2": "q2_rad", "tau_j2": "effort_j2"})
    assert one.joint_names == ("j2",)
    np.testing.assert_array_equal(one.q_rad[:, 0], q[:, 1])
    np.testing.assert_array_equal(one.tau_nm[:, 0], tau[:, 1])


@pytest.mark.parametrize("column_map, joints, message", [
    ({"time": "t_s"}, JOINTS,
     r"unknown column-map key\(s\) \['time'\]; keys are t, q, dq, ddq, tau .* the file's header is \['t_s', 'q1_rad',"),
    ({"t": "t_s", "q": "q{i}_rad", "tau": "tau{i}_Nm"}, (*JOINTS, "j4"),
     r"the column map names \['q4_rad', 'tau4_Nm'\] \(for \['q_j4', 'tau_j4'\]\), which the file does not have; "
     r"its header is \['t_s', 'q1_rad', .*'tau3_Nm'\]$"),
    ({"t": "t_s", "q_j1": "position_1"}, JOINTS, r"the column map names \['position_1'\] \(for \['q_j1'\]\)"),
    ({"t": "t_s", "q": "q{i}_rad", "tau": "tau{i}_Nm"}, None,
     r"the column-map templates \['q', 'tau'\] need joint_names: they are filled in for each joint in that order"),
    ({"t": "t_s", "q": "q{k}_rad"}, JOINTS,
     r"column-map entry q=q\{k\}_rad: the template takes only the placeholders \{i\} \(1-based joint index\) and "
     r"\{joint\} \(KeyError: 'k'\)"),
    ({"t": "t{i}"}, JOINTS, r"column-map entry t=t\{i\}: the template takes no placeholder"),
    ({"t": "t_s", "q": "q{i}_rad", "dq": "q{i}_rad", "tau": "tau{i}_Nm"}, JOINTS,
     r"the column map reads the file's column 'q1_rad' as both q_j1 and dq_j1"),
    ({"q": "q{i}_rad", "tau": "tau{i}_Nm"}, JOINTS, r"no 't' column \(time in seconds; map one with t=<column>\)"),
], ids=["unknown-key", "missing-columns", "missing-exact", "no-joint-names", "bad-placeholder", "time-placeholder",
        "column-twice", "no-time"])
def test_column_map_errors_name_the_key_and_the_file_header(tmp_path, column_map, joints, message):
    t = _grid(50)
    path = _write_panda_like(tmp_path / "log.csv", t, *_motion(t))
    with pytest.raises(DataError, match=message) as error:
        load_recording(path, joints, columns=column_map)
    assert "\n" not in str(error.value)


# ------------------------------------------------------------------------------------------------ time window


def test_time_window_counts_from_the_first_sample_after_sorting_and_keeps_exactly_those_samples(tmp_path):
    t = 100.0 + _grid()  # 2000 samples at 1 kHz from t = 100 s
    q, _, tau = _motion(t)
    order = np.arange(len(t))
    order[[0, 1]] = [1, 0]  # the first two rows out of order: the window counts from the earliest time
    path = _write_csv(tmp_path / "run.csv", t[order], q[order], tau[order])
    rec = load_recording(path, start_s=0.5, end_s=1.2)
    np.testing.assert_array_equal(rec.t_s, t[500:1201])
    np.testing.assert_array_equal(rec.q_rad, q[500:1201])
    np.testing.assert_array_equal(rec.tau_nm, tau[500:1201])
    assert rec.repairs == ("sorted out-of-order timestamps (1 steps back in time, the largest 1 ms)",
                           "kept 0.5–1.2 s of 2.0 s (701 of 2000 samples)")
    head = load_recording(path, end_s=0.25)
    np.testing.assert_array_equal(head.t_s, t[:251])
    assert head.repairs[-1] == "kept 0–0.25 s of 2.0 s (251 of 2000 samples)"
    tail = load_recording(path, start_s=1.5)
    np.testing.assert_array_equal(tail.t_s, t[1500:])
    assert tail.repairs[-1] == "kept 1.5–2.0 s of 2.0 s (500 of 2000 samples)"


@pytest.mark.parametrize("start_s, end_s, message", [
    (-0.1, None, r"the time window's start must be ≥ 0 s \(seconds from the first sample\), got -0.1 s"),
    (None, -1.0, r"the time window's end must be ≥ 0 s"),
    (1.0, 0.5, r"the time window's start 1 s must come before its end 0.5 s"),
    (2.5, None, r"the time window's start 2.5 s is beyond the recording's length of 1.999 s \(times count from "
                r"its first sample\)"),
    (0.5, 3.0, r"the time window's end 3 s is beyond the recording's length of 1.999 s"),
    (0.5, 0.5005, r"the time window 0.5–0.5005 s holds 1 sample\(s\); a recording needs at least 3"),
], ids=["negative-start", "negative-end", "reversed", "start-beyond", "end-beyond", "empty"])
def test_bad_time_window_is_refused(tmp_path, start_s, end_s, message):
    t = 100.0 + _grid()
    path = _write_csv(tmp_path / "run.csv", t, *_motion(t)[::2])
    with pytest.raises(DataError, match=message):
        load_recording(path, start_s=start_s, end_s=end_s)


def test_bag_time_window_counts_from_the_first_whole_period_and_a_column_map_is_refused(tmp_path):
    truth = _write_bag(tmp_path / "bag")
    rec = load_recording(tmp_path / "bag", start_s=1.0, end_s=3.0)
    kept = slice(150, 351)  # whole periods start at 0.5 s: 1.5–3.5 s of the bag
    np.testing.assert_allclose(rec.t_s, truth["t"][kept], atol=1e-9)
    np.testing.assert_array_equal(rec.q_rad, truth["q"][kept])
    np.testing.assert_array_equal(rec.tau_nm, truth["tau"][kept])
    assert rec.repairs[-2:] == ("kept 3 whole periods of 2 s from 0.500 s (dropped 50 samples before and 180 after)",
                                "kept 1–3 s of 6.0 s (201 of 600 samples)")
    with pytest.raises(DataError, match=r"bag: a column map applies to CSV files, not to a rosbag2 bag"):
        load_recording(tmp_path / "bag", columns={"t": "t_s"})


# ------------------------------------------------------------------------------------------------ unmodelled motion


def _moving_note(moving: str, selected: str) -> str:
    return (f"joints not in the model move: {moving} [rad, or m if prismatic]; their motion acts on the torques of "
            f"the selected joints {selected}")


def test_moving_joint_left_out_of_the_model_is_refused_unless_allowed(tmp_path):
    t = _grid()
    q, _, tau = _motion(t)
    path = _write_csv(tmp_path / "run.csv", t, q, tau)
    what = _moving_note(f"j2 (range {np.ptp(q[:, 1]):.3g})", "['j1', 'j3']")
    with pytest.raises(DataError) as error:
        load_recording(path, ["j1", "j3"])
    assert str(error.value) == (f"{path}: {what}; model them (--urdf with --joints listing them), or pass "
                                "--allow-unmodelled-motion to use the data anyway")
    rec = load_recording(path, ["j1", "j3"], unmodelled_motion_ok=True)
    np.testing.assert_array_equal(rec.q_rad, q[:, [0, 2]])
    assert rec.repairs == (f"{what} (allowed by --allow-unmodelled-motion)",)


def test_still_joint_left_out_of_the_model_passes_and_motion_outside_the_window_does_not_count(tmp_path):
    t = _grid()
    q, _, tau = _motion(t)
    q[:, 1] = 0.3 + 0.4 * UNMODELLED_MOTION * np.sin(2.0 * np.pi * t)  # a locked gripper's jitter: 0.8 × the limit
    rec = load_recording(_write_csv(tmp_path / "still.csv", t, q, tau), ["j1", "j3"])
    assert rec.repairs == ()
    np.testing.assert_array_equal(rec.q_rad, q[:, [0, 2]])
    q[:500, 1] += np.linspace(0.5, 0.0, 500)  # moves in the first 0.5 s only
    path = _write_csv(tmp_path / "early.csv", t, q, tau)
    with pytest.raises(DataError, match=r"move: j2 \(range 0.5"):
        load_recording(path, ["j1", "j3"])
    assert load_recording(path, ["j1", "j3"], start_s=0.5).repairs == ("kept 0.5–2.0 s of 2.0 s (1500 of 2000 "
                                                                        "samples)",)


@pytest.mark.parametrize("varying_layout", [False, True], ids=["one-layout", "varying-layout"])
def test_bag_moving_finger_outside_the_described_joints_is_refused_unless_allowed(tmp_path, varying_layout):
    truth = _write_bag(tmp_path / "bag", varying_layout=varying_layout, finger_stroke_m=0.04)
    what = _moving_note(f"finger (range {0.04 * 599 / 830:.3g})", "['j1', 'j2', 'j3']")  # over the kept samples 50–649
    with pytest.raises(DataError, match="bag: " + re.escape(what)):
        load_recording(tmp_path / "bag")
    rec = load_recording(tmp_path / "bag", unmodelled_motion_ok=True)
    np.testing.assert_array_equal(rec.q_rad, truth["q"][50:650])
    assert rec.repairs[-1] == f"{what} (allowed by --allow-unmodelled-motion)"
