"""The command lines' shared helpers: help with defaults, output-path checks, a progress bar only on a terminal."""

import argparse
import subprocess
import sys

import pytest

from robot_id_cli.command_line import (
    HelpFormatter,
    check_writable_directory,
    joint_names,
    missing_files,
    progress_bar,
    say,
)


def test_help_ends_each_option_with_its_default_unless_it_says_it():
    parser = argparse.ArgumentParser(formatter_class=HelpFormatter)
    parser.add_argument("--harmonics", type=int, default=5, help="harmonics per joint")
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    parser.add_argument("--time-limit", type=float, default=None, help="wall time [s] (default: no limit)")
    parser.add_argument("--plot", default=None, help="PNG path")
    parser.add_argument("--quick", action="store_true", help="fewer iterations")
    parser.add_argument("--bag", default="", help="bag to replay (required with --mode replay)")
    text = " ".join(parser.format_help().split())
    assert "harmonics per joint (default: 5)" in text
    assert "random seed (default: 0)" in text  # 0 is a default, not "no value"
    assert "(default: no limit)" in text and "(default: None)" not in text
    assert "PNG path" in text and "fewer iterations" in text and "(default: False)" not in text
    assert "bag to replay (required with --mode replay)" in text and "(default: )" not in text


def test_an_output_directory_below_a_file_is_refused_with_the_option(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    with pytest.raises(OSError, match=r"^--out: output directory .*a_file/out is not writable \(Not a directory\)$"):
        check_writable_directory(blocker / "out")
    with pytest.raises(OSError, match=r"^--out: output directory .*a_file is a file, not a directory$"):
        check_writable_directory(blocker)


def test_a_writable_directory_is_created_and_left_clean(tmp_path):
    out = check_writable_directory(tmp_path / "new" / "out")
    assert out.is_dir() and list(out.iterdir()) == []


@pytest.mark.parametrize("writes", [False, True])
def test_a_command_that_wrote_nothing_leaves_no_folder_it_created(tmp_path, writes):
    """A command that fails after checking --out (bad data, say) leaves neither its output folder nor the parents it
    created; one that wrote there keeps it, and a folder that was there before stays."""
    (tmp_path / "there").mkdir()
    script = ("import pathlib, sys\nfrom robot_id_cli.command_line import check_writable_directory\n"
              f"out = check_writable_directory({str(tmp_path / 'new' / 'out')!r})\n"
              f"check_writable_directory({str(tmp_path / 'there')!r})\n"
              + ("(out / 'identified.urdf').write_text('')\n" if writes else "") + "sys.exit(2)\n")
    assert subprocess.run([sys.executable, "-c", script]).returncode == 2
    assert (tmp_path / "new").exists() == writes and (tmp_path / "new" / "out").exists() == writes
    assert (tmp_path / "there").is_dir()


def test_missing_files_are_named_with_their_option(tmp_path):
    (tmp_path / "run.csv").write_text("t\n")
    found = missing_files([("--data", tmp_path / "run.csv"), ("--data", tmp_path / "gone.csv"), ("--urdf", None)])
    assert found == [f"--data {tmp_path / 'gone.csv'}: no such file or directory"]


def test_joints_are_read_space_or_comma_separated():
    assert joint_names(["a1", "a2,a3", "a4,", " a5"]) == ("a1", "a2", "a3", "a4", "a5")
    assert joint_names(["a1, a2"]) == ("a1", "a2")
    assert joint_names(None) is None and joint_names([]) is None


def test_progress_bar_shows_on_a_terminal_and_keeps_lines_above_it(monkeypatch, capsys):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    for i in progress_bar(range(3), description="starts", unit="start"):
        say(f"start {i} done")
    text = capsys.readouterr().err
    assert "starts:   0%" in text and "0/3" in text
    assert [line.split("\r")[-1] for line in text.split("\n")[:3]] == ["start 0 done", "start 1 done", "start 2 done"]


def test_progress_bar_is_silent_off_a_terminal(capsys):
    assert list(progress_bar(range(3), description="starts")) == [0, 1, 2]
    say("a line")
    assert capsys.readouterr().err == "a line\n"
