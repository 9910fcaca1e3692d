"""The result of a validation that travels: validation.json (robot_id_estimator.validate makes it)."""

from __future__ import annotations

import pathlib
from dataclasses import dataclass, field

import numpy as np

from robot_id_estimator.results.identification import Traces, write_json
from robot_id_estimator.results.json_values import NOT_WRITTEN, dataclass_to_json

VALIDATION_FORMAT = "robot_id validation 3"


@dataclass(frozen=True)
class Validation:
    joint_names: tuple[str, ...]
    sources: tuple[str, ...]
    rms_nm: dict[str, np.ndarray]
    """Per-joint RMS of measured − predicted torque, measured as recorded (period-averaged when periodic),
    for each identified parameter set and the nominal URDF model ("urdf")."""
    rms_percent_of_torque: dict[str, np.ndarray]
    """rms_nm relative to the measured torque's RMS per joint [%]."""
    motion: dict[str, list[float]]
    motion_comparison: str
    """Whether the validation motion is the identification motion, in words (motion_summary.py)."""
    warnings: tuple[str, ...]
    rms_filtered_nm: dict[str, np.ndarray]
    """The same against the low-pass filtered torque of the processing."""
    total_rms_nm: dict[str, float]
    correlation: dict[str, np.ndarray]
    torque_rms_nm: np.ndarray
    """RMS of the measured torque per joint, the scale of the errors."""
    observer_max_nm: dict[str, np.ndarray]
    collision_threshold_nm: dict[str, np.ndarray]
    observer_gain_1_s: float
    collision_safety_factor: float
    notes: tuple[str, ...]
    traces: Traces | None = field(default=None, metadata=NOT_WRITTEN)


def validation_to_dict(v: Validation) -> dict:
    """validation.json: the Validation's fields (results.json_values) with the format."""
    return {"format": VALIDATION_FORMAT, **dataclass_to_json(v)}


def write_validation(v: Validation, path: str | pathlib.Path) -> pathlib.Path:
    return write_json(validation_to_dict(v), path)
