"""What every robot_id command line shares: help that shows defaults, checks of the output paths before any
computation, progress bars (tqdm) that stay quiet when stderr is not a terminal, and progress lines that do not
break a running bar. Light on purpose: a command imports this, parses its arguments and checks its inputs before
it imports pinocchio, scipy, cvxpy, matplotlib, mujoco or rosbags."""

from __future__ import annotations

import argparse
import atexit
import os
import pathlib
import sys
from collections.abc import Iterable, Sequence

from tqdm import tqdm


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions as written; each option's help ends with its default unless it is required, a flag, has no
    value by default or already says what its default is."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        no_value = action.default is None or action.default is False or action.default is argparse.SUPPRESS
        empty = isinstance(action.default, (str, list, tuple)) and len(action.default) == 0
        if action.required or not action.option_strings or "default" in text or no_value or empty:
            return text
        return f"{text} (default: %(default)s)"


def check_writable_directory(directory: str | pathlib.Path, label: str = "--out: output directory") -> pathlib.Path:
    """Create `directory` if needed and prove it writable, before any computation; OSError "<label> <directory> is
    not writable (<reason>)" otherwise. The folders created here are removed at exit if nothing was written into
    them (a command that failed leaves no empty --out behind)."""
    directory = pathlib.Path(directory)
    if directory.exists() and not directory.is_dir():
        raise OSError(f"{label} {directory} is a file, not a directory")
    created = [folder for folder in (directory, *directory.parents) if not folder.exists()]
    probe = directory / f".robot_id_write_test_{os.getpid()}"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        atexit.register(_remove_if_empty, created)
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as err:
        raise OSError(f"{label} {directory} is not writable ({err.strerror or err})") from None
    return directory


def _remove_if_empty(folders: list[pathlib.Path]) -> None:
    """Remove these folders, deepest first, while they are empty."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


def joint_names(values: Sequence[str] | None) -> tuple[str, ...] | None:
    """The joints of a `--joints` option (nargs="+"), given space- or comma-separated (`a b`, `a,b`, `a, b`); None
    when the option is not given."""
    if not values:
        return None
    return tuple(name.strip() for value in values for name in value.split(",") if name.strip())


def robot_option_help() -> str:
    """The help of a `--robot` option, naming the shipped robots (the folders of robot_id_description/robots)."""
    from robot_id_model.robot_config import robot_names
    from robot_id_model.robot_model import ModelError

    try:
        shipped = ", ".join(robot_names()) or "none installed"
    except ModelError as err:
        shipped = str(err)
    return f"robot: a shipped one ({shipped}), a robot folder (robot.yaml, URDF, trajectories/) or a robot config YAML"


def robot_source_problems(robot: str | None = None, urdf: str | pathlib.Path | None = None) -> list[str]:
    """One line naming the option and its value for a `--robot` that names no robot config ("--robot: no robot
    config 'nosuch' (shipped: fr3, ...; or a robot folder or a YAML path)") and a `--urdf` that names no file."""
    from robot_id_model.robot_config import robot_config_path
    from robot_id_model.robot_model import ModelError

    problems = missing_files([("--urdf", urdf)])
    if robot is not None:
        try:
            robot_config_path(robot)
        except ModelError as err:
            problems.append(f"--robot: {err}")
    return problems


def missing_files(paths: Iterable[tuple[str, str | pathlib.Path | None]]) -> list[str]:
    """One message per (option, path) whose path does not exist ("--data run.csv: no such file or directory")."""
    return [f"{option} {path}: no such file or directory" for option, path in paths
            if path is not None and not pathlib.Path(path).exists()]


def progress_bar(iterable: Iterable | None = None, total: int | None = None, description: str = "",
                 unit: str = "it") -> tqdm:
    """A tqdm bar on stderr, disabled when stderr is not a terminal (logs and pipes get no bar characters)."""
    return tqdm(iterable, total=total, desc=description, unit=unit, file=sys.stderr, leave=False,
                disable=not sys.stderr.isatty(), dynamic_ncols=True)


def say(text: str) -> None:
    """A progress line on stderr, printed above a running progress bar instead of through it."""
    tqdm.write(text, file=sys.stderr)
    sys.stderr.flush()
