"""What the runner refuses before anything starts, without starting it: bags that are not there, not bags or not
closed, and a friction sweep given to a run that only records."""

from __future__ import annotations

from robot_id_bringup.graph import Run
from robot_id_bringup.input_checks import bag_problem, input_problems


def test_a_bag_is_a_closed_rosbag2_directory_or_its_storage_file(tmp_path):
    closed = tmp_path / "closed"
    closed.mkdir()
    (closed / "closed_0.mcap").write_bytes(b"")
    (closed / "metadata.yaml").write_text("rosbag2_bagfile_information: {}\n")
    assert bag_problem(str(closed)) == "" and bag_problem(str(closed / "closed_0.mcap")) == ""
    empty = tmp_path / "empty"
    empty.mkdir()
    assert bag_problem(str(empty), "friction sweep bag") == (
        f"friction sweep bag {empty} is not a rosbag2 bag (no metadata.yaml, no .mcap or .db3 file)")
    csv = tmp_path / "run.csv"
    csv.write_text("t\n")
    assert bag_problem(str(csv)) == (f"bag {csv} is not a rosbag2 bag (a directory with metadata.yaml, or its .mcap "
                                     "or .db3 file)")
    open_bag = tmp_path / "open"
    open_bag.mkdir()
    (open_bag / "open_0.db3").write_bytes(b"")
    assert bag_problem(str(open_bag / "open_0.db3")).endswith(f"`python -m robot_id_recorder repair {open_bag}`")
    assert bag_problem(str(tmp_path / "none")) == f"bag not found: {tmp_path / 'none'}"


def test_a_run_that_records_a_friction_sweep_takes_no_friction_sweep(tmp_path):
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / "metadata.yaml").write_text("rosbag2_bagfile_information: {}\n")
    recording = Run("iiwa14", "sim", str(tmp_path / "out"), trajectory="iiwa14_friction_sweep",
                    friction_sweeps=(str(sweep),))
    assert input_problems(recording) == [
        "a friction-sweep run only records; give --friction-sweep to the identification run after it"]
    assert input_problems(Run("iiwa14", "sim", str(tmp_path / "out"), friction_sweeps=(str(sweep),))) == []


def test_an_output_directory_that_holds_a_recording_is_refused(tmp_path):
    (tmp_path / "out" / "bag").mkdir(parents=True)
    assert input_problems(Run("iiwa14", "hardware", str(tmp_path / "out"))) == [
        f"--out {tmp_path / 'out'} already holds a recording ({tmp_path / 'out' / 'bag'}): choose a new --out"]
    assert input_problems(Run("iiwa14", "sim", str(tmp_path / "new"))) == []
