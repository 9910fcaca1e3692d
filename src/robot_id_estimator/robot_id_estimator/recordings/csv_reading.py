"""Reading a CSV log into a Recording: header and column map (csv_columns), numbers, and the joints left out."""

from __future__ import annotations

import csv
import math
import pathlib
import warnings
from collections.abc import Mapping, Sequence

import numpy as np

from robot_id_estimator.recordings.csv_columns import SIGNALS, TIME, resolve_columns
from robot_id_estimator.recordings.recording import DataError, Recording, Unselected, select_joints


def read_csv(
    path: pathlib.Path, joint_names: Sequence[str] | None, period_s: float | None, column_map: Mapping[str, str] | None,
    arm_joints: Sequence[str] | None,
) -> tuple[Recording, Unselected]:
    """The recording as logged (not yet cleaned) and the positions of the joints `joint_names` leaves out.

    `column_map` reads the file's own header as our layout; its {i} numbers `arm_joints` (default: joint_names).
    """
    if not path.is_file():
        raise DataError(f"{path}: no such file")
    with path.open(newline="") as f:
        header = [name.strip() for name in next(csv.reader(f), [])]
    if not header:
        raise DataError(f"{path}: empty file; expected a header row t,q_<joint>,...,tau_<joint>,...")
    columns, unused = resolve_columns(str(path), header, column_map, arm_joints or joint_names)
    if TIME not in columns:
        raise DataError(f"{path}: no 't' column (time in seconds; map one with t=<column>); the header is {header}")
    available = [name[2:] for name in columns if name.startswith("q_")]
    if not available:
        raise DataError(f"{path}: no q_<joint> column; the header is {header}")
    joints = select_joints(str(path), available, joint_names)
    missing = [f"tau_{j}" for j in joints if f"tau_{j}" not in columns]
    if missing:
        raise DataError(f"{path}: no torque column {missing}; every joint needs q_<joint> and tau_<joint>")

    data, repairs = _csv_values(path, len(header))
    if unused:
        repairs.append(f"ignored CSV columns {unused}")
    signals: dict[str, np.ndarray | None] = {}
    for signal in SIGNALS:
        names = [f"{signal}_{j}" for j in joints]
        present = [name for name in names if name in columns]
        if len(present) == len(names):
            signals[signal] = data[:, [columns[name] for name in names]]
        else:
            signals[signal] = None
            if present:
                repairs.append(f"ignored {present}: {signal} is not given for every joint")
    others = [j for j in available if j not in joints]
    unselected = Unselected(tuple(others), data[:, columns[TIME]], data[:, [columns[f"q_{j}"] for j in others]])
    return Recording(
        joint_names=tuple(joints),
        t_s=data[:, columns[TIME]],
        q_rad=signals["q"],
        tau_nm=signals["tau"],
        dq_rad_s=signals["dq"],
        ddq_rad_s2=signals["ddq"],
        period_s=period_s,
        harmonics=None,
        source=str(path),
        repairs=tuple(repairs),
    ), unselected


def _csv_values(path: pathlib.Path, n_columns: int) -> tuple[np.ndarray, list[str]]:
    """Numbers below the header; empty fields become NaN, a truncated last line (logger stopped) is dropped."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # a header without rows: refused later as too short
            data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    except ValueError:
        pass
    else:
        if data.shape[1] != n_columns and data.size:
            raise DataError(f"{path}: rows have {data.shape[1]} fields, the header has {n_columns}")
        return data.reshape(-1, n_columns), []
    rows, repairs = [], []
    with path.open(newline="") as f:
        lines = list(csv.reader(f))[1:]
    for number, fields in enumerate(lines, start=2):
        if not fields:
            continue
        if len(fields) != n_columns:
            if number == len(lines) + 1:
                repairs.append(f"dropped the truncated last line {number} ({len(fields)} of {n_columns} fields)")
                continue
            raise DataError(f"{path}: line {number} has {len(fields)} fields, the header has {n_columns}")
        try:
            rows.append([float(x) if x.strip() else math.nan for x in fields])
        except ValueError as err:
            raise DataError(f"{path}: line {number}: {err}") from None
    return np.array(rows, dtype=float).reshape(-1, n_columns), repairs
