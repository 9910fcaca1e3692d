"""Loading rosbag2 bags: descriptions, periods, joint selection, time windows, refusals."""


from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from recording_files import grid, motion, moving_note, recording, stamp, write_bag
from rosbags.rosbag2 import Writer

from robot_id_estimator.recordings.bag_reading import EXCITATION, PERIOD_MARKER, robot_id_typestore
from robot_id_estimator.recordings.loading import load_recording
from robot_id_estimator.recordings.recording import DataError


@pytest.mark.parametrize("varying_layout", [False, True], ids=["one-layout", "varying-layout"])
def test_bag_round_trip_reads_description_and_keeps_whole_periods(tmp_path, varying_layout):
    truth = write_bag(tmp_path / "bag", varying_layout=varying_layout)
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
    write_bag(tmp_path / "bag")
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
    truth = write_bag(tmp_path / "markers", with_description=False)
    rec = load_recording(tmp_path / "markers")
    assert rec.joint_names == ("j2", "finger", "j1", "j3")  # message order without a description
    assert rec.period_s == 2.0 and rec.harmonics is None
    assert len(rec.t_s) == 600
    np.testing.assert_array_equal(rec.tau_nm[:, 2], truth["tau"][50:650, 0])
    write_bag(tmp_path / "described", with_markers=False)  # period 0 starts at the description's start_time
    rec = load_recording(tmp_path / "described")
    assert rec.period_s == 2.0 and rec.harmonics == 3
    assert "kept 3 whole periods of 2 s from 0.500 s (dropped 50 samples before and 180 after)" in rec.repairs


def test_bag_with_modified_fourier_description_does_not_limit_harmonics(tmp_path):
    write_bag(tmp_path / "bag", kind="modified_fourier")
    rec = load_recording(tmp_path / "bag")
    assert rec.period_s == 2.0 and rec.harmonics is None
    assert any(r.startswith("modified_fourier excitation") for r in rec.repairs)


def test_bag_without_torques_or_joint_states_is_refused(tmp_path):
    write_bag(tmp_path / "bag", effort=False)
    with pytest.raises(DataError, match=r"carry no effort \(joint torques\)"):
        load_recording(tmp_path / "bag")
    store = robot_id_typestore()
    with Writer(tmp_path / "other", version=9) as writer:
        conn = writer.add_connection("/excitation/period", PERIOD_MARKER, typestore=store)
        marker = store.types[PERIOD_MARKER](
            header=store.types["std_msgs/msg/Header"](stamp=stamp(store, 0), frame_id=""),
            period_index=0, num_periods=1, period_s=1.0,
        )
        writer.write(conn, 0, store.serialize_cdr(marker, PERIOD_MARKER))
    with pytest.raises(DataError, match=r"no sensor_msgs/msg/JointState topic in the bag; it holds "
                                        r"\[\('/excitation/period', 'robot_id_msgs/msg/PeriodMarker'\)\]"):
        load_recording(tmp_path / "other")


def test_message_definitions_come_from_the_installed_share_directory_only(tmp_path, monkeypatch):
    """Without an installed robot_id_msgs (the source tree is never read), the recorder's messages are ignored."""
    assert EXCITATION in robot_id_typestore().fielddefs
    write_bag(tmp_path / "bag")
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path))
    assert EXCITATION not in robot_id_typestore().fielddefs
    rec = load_recording(tmp_path / "bag")
    assert rec.period_s is None and len(rec.t_s) == 830
    assert rec.repairs[0] == (f"ignored {[EXCITATION, PERIOD_MARKER]}: robot_id_msgs' message definitions were "
                              "not found")


def test_recording_is_frozen():
    t = grid(10)
    rec = recording(t, *motion(t)[::2])
    with pytest.raises(dataclasses.FrozenInstanceError):
        rec.period_s = 1.0


# ------------------------------------------------------------------------------------------------ column maps


def test_bag_time_window_counts_from_the_first_whole_period_and_a_column_map_is_refused(tmp_path):
    truth = write_bag(tmp_path / "bag")
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


@pytest.mark.parametrize("varying_layout", [False, True], ids=["one-layout", "varying-layout"])
def test_bag_moving_finger_outside_the_described_joints_is_refused_unless_allowed(tmp_path, varying_layout):
    truth = write_bag(tmp_path / "bag", varying_layout=varying_layout, finger_stroke_m=0.04)
    what = moving_note(f"finger (range {0.04 * 599 / 830:.3g})", "['j1', 'j2', 'j3']")  # over the kept samples 50–649
    with pytest.raises(DataError, match="bag: " + re.escape(what)):
        load_recording(tmp_path / "bag")
    rec = load_recording(tmp_path / "bag", unmodelled_motion_ok=True)
    np.testing.assert_array_equal(rec.q_rad, truth["q"][50:650])
    assert rec.repairs[-1] == f"{what} (allowed by --allow-unmodelled-motion)"
