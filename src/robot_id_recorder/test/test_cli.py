"""`python -m robot_id_recorder info BAG`: the period table, exit 0 for a clean bag and 3 when a period is flagged;
exit 2 with one line (no traceback) for what is not a bag."""

from __future__ import annotations

import sys

import pytest
from recorder_bags import STATES_TOPIC, run_cli, write_recording

from robot_id_recorder.bag_tools import bag_index


def _table(stdout: str) -> list[list[str]]:
    """The period rows, split at whitespace: index, start, end, samples, expected, missing, gaps, longest gap,
    jitter, dup, flag..."""
    lines = stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:1] == ["period"])
    assert lines[header].split() == ("period start [s] end [s] samples expected missing gaps longest [s] jitter [ms] "
                                     "dup flag").split()
    return [line.split() for line in lines[header + 1:]]


def _one_error_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    assert "Traceback" not in result.stderr and len(lines) == 1, result.stderr
    assert result.stdout == ""
    return lines[0]


def test_info_on_a_clean_bag_prints_every_period_and_exits_0(tmp_path):
    write_recording(tmp_path / "bag", duplicates=(600,))
    result = run_cli("info", str(tmp_path / "bag"))
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith(f"joint states on {STATES_TOPIC}: 751 messages over 1.498 s, rate 500.0 Hz")
    assert "0 gaps, 1 duplicate stamps" in first
    assert "periods (recorder index; flagged: more than 1 % missing or a gap longer than 0.1 s):" in result.stdout
    rows = _table(result.stdout)
    assert [r[0] for r in rows] == ["0", "1", "2"]
    assert [r[3:] for r in rows] == [["250", "250", "0", "0", "0.0020", "0.000", "0", "ok"],
                                     ["250", "250", "0", "0", "0.0020", "0.000", "0", "ok"],
                                     ["251", "250", "0", "0", "0.0020", "0.000", "1", "ok"]]  # counted, not missing
    assert [float(r[2]) - float(r[1]) for r in rows] == pytest.approx([0.5] * 3, abs=1e-3)  # printed to 1 ms


@pytest.mark.parametrize("stored", [True, False], ids=["recorder index", "computed index"])
def test_info_exits_3_when_a_period_is_flagged(tmp_path, stored):
    """The same gap found from the recorder's stored index and computed from the messages (a bag from
    `ros2 bag record`)."""
    write_recording(tmp_path / "bag", drop=range(300, 320), with_index=stored)
    result = run_cli("info", str(tmp_path / "bag"))
    assert result.returncode == 3, result.stderr
    assert f"periods ({'recorder' if stored else 'computed'} index; flagged:" in result.stdout
    rows = _table(result.stdout)
    assert [[*r[3:10], " ".join(r[10:])] for r in rows] == [
        ["250", "250", "0", "0", "0.0020", "0.000", "0", "ok"],
        ["230", "250", "20", "1", "0.0420", "0.000", "0", "20 of 250 samples missing (8 %, more than 1 %)"],
        ["250", "250", "0", "0", "0.0020", "0.000", "0", "ok"]]
    assert "1 gaps, 0 duplicate stamps" in result.stdout.splitlines()[0]


def test_info_on_a_bag_without_period_markers_says_so(tmp_path):
    write_recording(tmp_path / "bag", with_markers=False)
    result = run_cli("info", str(tmp_path / "bag"))
    assert result.returncode == 0, result.stderr
    assert _table(result.stdout) == [["none:", "the", "bag", "holds", "no", "period", "markers"]]
    assert "750 messages" in result.stdout


def test_info_on_a_missing_directory_exits_2_with_one_line(tmp_path):
    result = run_cli("info", str(tmp_path / "nowhere"))
    assert result.returncode == 2
    assert _one_error_line(result) == f"error: {tmp_path / 'nowhere'}: no such bag directory"


def test_info_on_a_directory_with_unreadable_metadata_exits_2_with_one_line(tmp_path):
    (tmp_path / "bag").mkdir()
    (tmp_path / "bag" / "metadata.yaml").write_text("rosbag2_bagfile_information: {version: 9}\n")
    result = run_cli("info", str(tmp_path / "bag"))
    assert result.returncode == 2
    line = _one_error_line(result)
    assert line.startswith(f"error: {tmp_path / 'bag'}: not a readable bag (")
    assert line.endswith(f"run `python -m robot_id_recorder repair {tmp_path / 'bag'}`")


def test_info_on_a_directory_that_is_no_bag_exits_2_with_one_line(tmp_path):
    (tmp_path / "photos").mkdir()
    (tmp_path / "photos" / "cat.jpg").write_bytes(b"\xff\xd8")
    result = run_cli("info", str(tmp_path / "photos"))
    assert result.returncode == 2
    assert _one_error_line(result).startswith(f"error: {tmp_path / 'photos'}: not a readable bag")


def test_a_bag_without_joint_states_exits_2_with_one_line(tmp_path):
    write_recording(tmp_path / "bag", periods=0, with_markers=False)  # a JointState topic, no message
    result = run_cli("info", str(tmp_path / "bag"))
    assert result.returncode == 2
    assert _one_error_line(result) == f"error: {tmp_path / 'bag'}: fewer than two joint states on {STATES_TOPIC}"


def test_reading_a_bag_shows_a_progress_bar_on_a_terminal_only(tmp_path, monkeypatch, capsys):
    write_recording(tmp_path / "bag")
    assert len(bag_index(tmp_path / "bag").stamps_ns) == 750
    assert capsys.readouterr().err == ""  # not a terminal: no bar characters in logs
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    bag_index(tmp_path / "bag")
    err = capsys.readouterr().err
    assert "joint states:   0%" in err and "0/750 [" in err
