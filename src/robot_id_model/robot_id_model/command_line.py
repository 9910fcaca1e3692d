"""What every robot_id command line shares: help that shows defaults, checks of the output paths before any
computation, progress bars (tqdm) that stay quiet when stderr is not a terminal, and progress lines that do not
break a running bar. Light on purpose: a command imports this, parses its arguments and checks its inputs before
it imports pinocchio, scipy, cvxpy, matplotlib, mujoco or rosbags."""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
from collections.abc import Iterable

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
    not writable (<reason>)" otherwise."""
    directory = pathlib.Path(directory)
    if directory.exists() and not directory.is_dir():
        raise OSError(f"{label} {directory} is a file, not a directory")
    probe = directory / f".robot_id_write_test_{os.getpid()}"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as err:
        raise OSError(f"{label} {directory} is not writable ({err.strerror or err})") from None
    return directory


def check_writable_file(path: str | pathlib.Path, option: str) -> pathlib.Path:
    """Prove that `path` can be written (its directory created if needed, an existing file replaced), before any
    computation; OSError naming `option` and the reason otherwise. Leaves no file behind."""
    path = pathlib.Path(path)
    if path.is_dir():
        raise OSError(f"{option} {path}: is a directory, not a file")
    if path.exists() and not os.access(path, os.W_OK):
        raise OSError(f"{option} {path}: the file is not writable")
    return check_writable_directory(path.parent, f"{option} {path}: its directory") / path.name


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
