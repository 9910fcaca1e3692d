"""Loading CSV files, and every repair or refusal of messy data (bags: test_recording_bags.py; column maps,
time windows and joint selection: test_recording_selection.py)."""


from __future__ import annotations

import numpy as np
import pytest
from recording_files import grid, motion, recording, write_csv

from robot_id_estimator.recordings.cleaning import clean
from robot_id_estimator.recordings.loading import load_recording
from robot_id_estimator.recordings.recording import DataError


def test_csv_selects_and_reorders_joints_and_keeps_logged_velocities(tmp_path):
    t = grid()
    q, dq, tau = motion(t)
    path = write_csv(tmp_path / "run.csv", t, q, tau, dq, extra={"temperature_c": np.ones((len(t), 1))})
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
    t = grid(100)
    path = write_csv(tmp_path / "run.csv", t, *motion(t)[::2])
    with pytest.raises(DataError, match=r"no joint named \['lbr_A1'\].*\['j1', 'j2', 'j3'\]"):
        load_recording(path, joint_names=["j1", "lbr_A1"])


def test_missing_torque_column_is_refused(tmp_path):
    t = grid(100)
    q, _, tau = motion(t)
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
    t = grid(1)
    with pytest.raises(DataError, match=r"1 usable sample\(s\); a recording needs at least 3"):
        load_recording(write_csv(tmp_path / "one.csv", t, *motion(t)[::2]))
    empty = tmp_path / "empty.csv"
    empty.write_text("t,q_j1,tau_j1\n")
    with pytest.raises(DataError, match=r"0 usable sample"):
        load_recording(empty)


def test_empty_fields_become_nan_and_a_truncated_last_line_is_dropped(tmp_path):
    t = grid(200)
    q, _, tau = motion(t)
    path = write_csv(tmp_path / "run.csv", t, q, tau)
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
    t = grid(50)
    path = write_csv(tmp_path / "run.csv", t, *motion(t)[::2])
    lines = path.read_text().splitlines()
    lines[10] = "0.1,1"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match="line 11 has 2 fields, the header has 7"):
        load_recording(path)


# ------------------------------------------------------------------------------------------------ clean


def test_duplicate_rows_are_dropped_and_the_grid_restored(tmp_path):
    t = grid()
    q, _, tau = motion(t)
    stale = np.array([100, 101, 700, 1500])  # the logger re-read the previous state: values repeat, time moves on
    q[stale], tau[stale] = q[stale - 1], tau[stale - 1]
    q[101], tau[101] = q[99], tau[99]
    rec = load_recording(write_csv(tmp_path / "run.csv", t, q, tau))
    assert rec.repairs[0] == "dropped 4 duplicate rows (q and tau identical to the previous row)"
    assert "resampled 1996 samples onto a uniform 1000 Hz grid (2000 samples)" in rec.repairs[1]
    np.testing.assert_allclose(rec.t_s, t, atol=1e-12)
    q_true, _, tau_true = motion(t)
    np.testing.assert_allclose(rec.q_rad, q_true, atol=1e-8)
    np.testing.assert_allclose(rec.tau_nm, tau_true, atol=1e-4)


def test_the_grid_keeps_the_logged_rate_when_most_rows_are_stale():
    t = grid(1000)
    q, _, tau = motion(t)
    q[1::2], tau[1::2] = q[::2], tau[::2]  # every other row re-reads the previous state
    rec = clean(recording(t, q, tau))
    assert rec.repairs[0] == "dropped 500 duplicate rows (q and tau identical to the previous row)"
    assert "uniform 1000 Hz grid (999 samples); logged sample intervals 1 ms–1 ms" in rec.repairs[1]
    assert rec.repairs[2].startswith("interpolated across 499 short gap(s)")
    np.testing.assert_allclose(rec.q_rad, motion(rec.t_s)[0], atol=1e-7)


def test_repeated_timestamps_are_dropped():
    t = grid(500)
    q, _, tau = motion(t)
    t2 = np.insert(t, 201, t[200])  # a second reading stamped like the one before it
    q2, tau2 = np.insert(q, 201, q[200] + 1e-3, axis=0), np.insert(tau, 201, tau[200], axis=0)
    rec = clean(recording(t2, q2, tau2))
    assert rec.repairs == ("dropped 1 rows repeating the previous timestamp",)
    np.testing.assert_array_equal(rec.q_rad, q)


def test_jittery_timestamps_are_resampled_at_the_median_rate():
    rng = np.random.default_rng(1)
    t = grid(3000) + rng.uniform(-0.2e-3, 0.2e-3, 3000)
    t[0] = 0.0
    q, dq, tau = motion(t)
    rec = clean(recording(t, q, tau, dq_rad_s=dq))
    (note,) = rec.repairs
    assert "uniform 1000 Hz grid" in note and "jitter" in note and "median 1 ms" in note
    steps = np.diff(rec.t_s)
    np.testing.assert_allclose(steps, 1e-3, rtol=1e-9)
    q_true, dq_true, tau_true = motion(rec.t_s)
    np.testing.assert_allclose(rec.q_rad, q_true, atol=1e-7)
    np.testing.assert_allclose(rec.dq_rad_s, dq_true, atol=1e-6)
    np.testing.assert_allclose(rec.tau_nm, tau_true, atol=1e-4)


def test_short_gap_is_interpolated():
    t = grid()
    q, _, tau = motion(t)
    keep = np.ones(len(t), dtype=bool)
    keep[1000:1030] = False  # 31 ms without samples
    rec = clean(recording(t[keep], q[keep], tau[keep]), max_gap_s=0.05)
    assert any("interpolated across 1 short gap(s) (dropped rows or missing samples), the longest 31 ms at "
               "t = 0.999 s" in r
               for r in rec.repairs)
    np.testing.assert_allclose(rec.t_s, t, atol=1e-12)
    q_true, _, tau_true = motion(t)
    np.testing.assert_allclose(rec.q_rad, q_true, atol=1e-5)
    np.testing.assert_allclose(rec.tau_nm, tau_true, atol=5e-3)  # linear across 31 ms: h²/8·max|tau''|


def test_long_gap_is_refused_with_its_position():
    t = grid()
    q, _, tau = motion(t)
    keep = np.ones(len(t), dtype=bool)
    keep[1200:1400] = False
    with pytest.raises(DataError, match=r"1 gap\(s\) longer than max_gap_s = 0.05 s.*0.201 s between "
                                        r"t = 1.199 s and t = 1.4 s: split the recording there"):
        clean(recording(t[keep], q[keep], tau[keep]))


def test_a_time_column_in_milliseconds_is_named_not_taken_for_gaps():
    t = grid()
    q, _, tau = motion(t)
    with pytest.raises(DataError, match=r"^test: the median sample interval 1e\+03 ms is longer than max_gap_s = "
                                        r"0.05 s: is the time column in seconds \(milliseconds are 1000 × too "
                                        r"large\)\?$"):
        clean(recording(1000.0 * t, q, tau))


def test_short_nan_run_is_interpolated():
    t = grid(1000)
    q, _, tau = motion(t)
    q[100:105, 1] = np.nan
    tau[400, 0] = np.inf
    rec = clean(recording(t, q.copy(), tau.copy()))
    assert rec.repairs == (
        "interpolated 5 non-finite values of q_j2 in 1 run(s) (samples 100–104)",
        "interpolated 1 non-finite values of tau_j1 in 1 run(s) (samples 400–400)",
    )
    q_true, _, tau_true = motion(t)
    np.testing.assert_allclose(rec.q_rad, q_true, atol=1e-5)
    np.testing.assert_allclose(rec.tau_nm, tau_true, atol=1e-4)
    assert np.isnan(q[100, 1]), "the caller's arrays are left untouched"


def test_nan_at_the_ends_drops_those_rows():
    t = grid(1000)
    q, _, tau = motion(t)
    q[:3, 0] = np.nan
    rec = clean(recording(t, q, tau))
    assert rec.repairs[-1] == "dropped 3 rows at the ends with non-finite values"
    np.testing.assert_array_equal(rec.t_s, t[3:])


def test_long_nan_run_is_refused_naming_column_and_rows():
    t = grid(1000)
    q, _, tau = motion(t)
    tau[300:400, 0] = np.nan
    with pytest.raises(DataError, match=r"column tau_j1 is not finite for 100 samples 300–399 "
                                        r"\(t = 0.3–0.399 s\), longer than max_gap_s"):
        clean(recording(t, q, tau))


def test_slightly_out_of_order_timestamps_are_sorted():
    t = grid(500)
    q, _, tau = motion(t)
    order = np.arange(500)
    order[[10, 11]] = [11, 10]
    order[[300, 302]] = [302, 300]
    rec = clean(recording(t[order], q[order], tau[order]))
    assert rec.repairs == ("sorted out-of-order timestamps (3 steps back in time, the largest 1 ms)",)
    np.testing.assert_array_equal(rec.t_s, t)
    np.testing.assert_array_equal(rec.q_rad, q)


def test_time_jumping_back_is_refused():
    t = grid(500)
    q, _, tau = motion(t)
    t2 = np.concatenate([t, t])  # two logs concatenated
    with pytest.raises(DataError, match=r"time goes back by 0.499 s at sample 500 .*split the file there"):
        clean(recording(t2, np.vstack([q, q]), np.vstack([tau, tau])))


def test_wrong_shapes_are_refused():
    t = grid(10)
    q, _, tau = motion(t)
    with pytest.raises(DataError, match=r"tau has shape \(10, 2\), expected \(10, 3\)"):
        clean(recording(t, q, tau[:, :2]))


def test_clean_data_pass_unchanged_and_cleaning_is_idempotent():
    t = grid(1000)
    q, _, tau = motion(t)
    rec = clean(recording(t, q, tau))
    assert rec.repairs == ()
    np.testing.assert_array_equal(rec.q_rad, q)
    q[[5, 6]] = q[4]
    tau[[5, 6]] = tau[4]
    once = clean(recording(t + 0.0001 * np.sin(t), q, tau))
    twice = clean(once)
    assert twice.repairs == once.repairs
    np.testing.assert_array_equal(twice.q_rad, once.q_rad)


# ------------------------------------------------------------------------------------------------ bags


def test_a_jittery_log_with_dropped_rows_is_resampled_within_its_own_time_span():
    """Like the real Panda log: 1 kHz stamps with 0.2 ms jitter, one row in ten dropped. The grid once started 46 ms
    before its first stamp (its phase counted along rounded steps drifted), cubic-extrapolated positions there."""
    rng = np.random.default_rng(4)
    t = np.sort(grid(20_000) + rng.normal(0.0, 2e-4, 20_000))
    t = t[rng.random(len(t)) > 0.1]
    q, _, tau = motion(t)
    out = clean(recording(t, q, tau))
    assert t[0] - 0.5e-3 <= out.t_s[0] and out.t_s[-1] <= t[-1] + 0.5e-3
    q_true, _, _ = motion(out.t_s)
    assert np.max(np.abs(out.q_rad - q_true)) < 1e-5
