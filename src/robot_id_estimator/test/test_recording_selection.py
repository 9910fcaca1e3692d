"""Which samples and columns a recording is made of: column maps of other tools' logs, time windows, and the
joints the model leaves out (refused when they move)."""


from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from recording_files import JOINTS, grid, motion, moving_note, write_csv

from robot_id_estimator.recordings.csv_columns import parse_column_map
from robot_id_estimator.recordings.loading import UNMODELLED_MOTION, load_recording
from robot_id_estimator.recordings.recording import DataError

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
    t = grid()
    q, dq, tau = motion(t)
    theirs = load_recording(_write_panda_like(tmp_path / "log.csv", t, q, dq, tau), JOINTS,
                            columns=parse_column_map(PANDA_MAP))
    ours = load_recording(write_csv(tmp_path / "ours.csv", t, q, tau, dq), JOINTS)
    assert theirs.joint_names == ours.joint_names == JOINTS
    for field in ("t_s", "q_rad", "dq_rad_s", "tau_nm"):
        np.testing.assert_array_equal(getattr(theirs, field), getattr(ours, field))
    np.testing.assert_array_equal(theirs.q_rad, q)
    assert theirs.repairs == ours.repairs == ()
    without_dq = load_recording(tmp_path / "log.csv", JOINTS, columns={"t": "t_s", "q": "q{i}_rad", "tau": "tau{i}_Nm"})
    assert without_dq.dq_rad_s is None
    assert without_dq.repairs == ("ignored CSV columns ['dq1_rad_s', 'dq2_rad_s', 'dq3_rad_s']",)


def test_exact_per_joint_keys_win_over_templates_and_need_no_joint_names(tmp_path):
    t = grid(200)
    q, _, tau = motion(t)
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
    t = grid(50)
    path = _write_panda_like(tmp_path / "log.csv", t, *motion(t))
    with pytest.raises(DataError, match=message) as error:
        load_recording(path, joints, columns=column_map)
    assert "\n" not in str(error.value)


# ------------------------------------------------------------------------------------------------ time window


def test_time_window_counts_from_the_first_sample_after_sorting_and_keeps_exactly_those_samples(tmp_path):
    t = 100.0 + grid()  # 2000 samples at 1 kHz from t = 100 s
    q, _, tau = motion(t)
    order = np.arange(len(t))
    order[[0, 1]] = [1, 0]  # the first two rows out of order: the window counts from the earliest time
    path = write_csv(tmp_path / "run.csv", t[order], q[order], tau[order])
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
    t = 100.0 + grid()
    path = write_csv(tmp_path / "run.csv", t, *motion(t)[::2])
    with pytest.raises(DataError, match=message):
        load_recording(path, start_s=start_s, end_s=end_s)


def test_moving_joint_left_out_of_the_model_is_refused_unless_allowed(tmp_path):
    t = grid()
    q, _, tau = motion(t)
    path = write_csv(tmp_path / "run.csv", t, q, tau)
    what = moving_note(f"j2 (range {np.ptp(q[:, 1]):.3g})", "['j1', 'j3']")
    with pytest.raises(DataError) as error:
        load_recording(path, ["j1", "j3"])
    assert str(error.value) == (f"{path}: {what}; model them (--urdf with --joints listing them), or pass "
                                "--allow-unmodelled-motion to use the data anyway")
    rec = load_recording(path, ["j1", "j3"], unmodelled_motion_ok=True)
    np.testing.assert_array_equal(rec.q_rad, q[:, [0, 2]])
    assert rec.repairs == (f"{what} (allowed by --allow-unmodelled-motion)",)


def test_still_joint_left_out_of_the_model_passes_and_motion_outside_the_window_does_not_count(tmp_path):
    t = grid()
    q, _, tau = motion(t)
    q[:, 1] = 0.3 + 0.4 * UNMODELLED_MOTION * np.sin(2.0 * np.pi * t)  # a locked gripper's jitter: 0.8 × the limit
    rec = load_recording(write_csv(tmp_path / "still.csv", t, q, tau), ["j1", "j3"])
    assert rec.repairs == ()
    np.testing.assert_array_equal(rec.q_rad, q[:, [0, 2]])
    q[:500, 1] += np.linspace(0.5, 0.0, 500)  # moves in the first 0.5 s only
    path = write_csv(tmp_path / "early.csv", t, q, tau)
    with pytest.raises(DataError, match=r"move: j2 \(range 0.5"):
        load_recording(path, ["j1", "j3"])
    assert load_recording(path, ["j1", "j3"], start_s=0.5).repairs == ("kept 0.5–2.0 s of 2.0 s (1500 of 2000 "
                                                                        "samples)",)
