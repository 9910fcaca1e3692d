"""The result of a validation that travels: validation.json (robot_id_estimator.validation.run makes it)."""

from __future__ import annotations

import pathlib
from dataclasses import dataclass

import numpy as np

from robot_id_estimator.output.json_values import json_list, json_number
from robot_id_estimator.results import Traces, write_json

VALIDATION_FORMAT = "robot_id validation 2"


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
    traces: Traces | None = None


def validation_to_dict(v: Validation) -> dict:
    sets = list(v.rms_nm)
    return {
        "format": VALIDATION_FORMAT,
        "joint_names": list(v.joint_names),
        "sources": list(v.sources),
        "rms_nm": {k: json_list(v.rms_nm[k]) for k in sets},
        "rms_percent_of_torque": {k: json_list(v.rms_percent_of_torque[k]) for k in sets},
        "motion": v.motion,
        "motion_comparison": v.motion_comparison,
        "warnings": list(v.warnings),
        "rms_filtered_nm": {k: json_list(v.rms_filtered_nm[k]) for k in sets},
        "total_rms_nm": {k: json_number(v.total_rms_nm[k]) for k in sets},
        "correlation": {k: json_list(v.correlation[k]) for k in sets},
        "torque_rms_nm": json_list(v.torque_rms_nm),
        "momentum_observer": {
            "gain_1_s": v.observer_gain_1_s,
            "safety_factor": v.collision_safety_factor,
            "max_residual_nm": {k: json_list(v.observer_max_nm[k]) for k in sets},
            "collision_threshold_nm": {k: json_list(v.collision_threshold_nm[k]) for k in sets},
        },
        "notes": list(v.notes),
    }


def write_validation(v: Validation, path: str | pathlib.Path) -> pathlib.Path:
    return write_json(validation_to_dict(v), path)
