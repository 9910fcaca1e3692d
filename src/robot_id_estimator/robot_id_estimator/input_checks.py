"""Sanity checks of the input before anything is estimated: wrong units and too little data give wrong answers
that look like results, so they are refused with the reason and what to do."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robot_id_estimator.processing import ProcessedData
from robot_id_estimator.recording import DataError, Recording

LIMIT_MARGIN_RAD = 0.05
"""Positions may exceed the URDF's joint limits by this much (calibration, limits set conservatively)."""

MIN_EQUATIONS_PER_PARAMETER = 3.0
"""Fewest independent torque equations per estimated parameter. A torque low-passed at f_c carries about
2·f_c·T independent samples per joint over T seconds (the Nyquist rate of its band)."""


def check_position_limits(rec: Recording, joint_names: Sequence[str], lower_rad: np.ndarray,
                          upper_rad: np.ndarray) -> None:
    """DataError naming every joint whose positions leave the URDF's limits by more than LIMIT_MARGIN_RAD,
    with a hint when the values look like degrees."""
    q = rec.q_rad
    low, high = q.min(axis=0), q.max(axis=0)
    outside = [j for j in range(q.shape[1])
               if low[j] < lower_rad[j] - LIMIT_MARGIN_RAD or high[j] > upper_rad[j] + LIMIT_MARGIN_RAD]
    if not outside:
        return
    joints = "; ".join(f"{joint_names[j]} spans [{low[j]:.4g}, {high[j]:.4g}] rad, its limits are "
                       f"[{lower_rad[j]:.4g}, {upper_rad[j]:.4g}] rad" for j in outside)
    hint = (" The values look like degrees: convert them to radians." if np.abs(q).max() > 2.0 * np.pi + 0.1
            else " Check the joint order, the URDF and any joint offsets.")
    raise DataError(f"{rec.source}: positions outside the URDF's joint limits: {joints}.{hint} If the data are "
                    "right, pass --allow-outside-limits.")


def independent_equations(data: ProcessedData, cutoff_hz: float) -> float:
    """About how many independent torque equations the processed samples hold: 2·f_c·T per joint, f_c the
    torque cutoff (at most Nyquist), T the processed span."""
    dt_s = float(data.t_s[1] - data.t_s[0])
    span_s = dt_s * len(data.t_s)
    return data.tau_nm.shape[1] * 2.0 * min(cutoff_hz, 0.5 / dt_s) * span_s


def check_enough_data(processed: Sequence[ProcessedData], cutoff_hz: float, n_parameters: int) -> None:
    """DataError when the data hold fewer than MIN_EQUATIONS_PER_PARAMETER independent equations per parameter,
    saying how many seconds would be needed."""
    available = sum(independent_equations(d, cutoff_hz) for d in processed)
    needed = MIN_EQUATIONS_PER_PARAMETER * n_parameters
    if available >= needed:
        return
    n_joints = processed[0].tau_nm.shape[1]
    seconds = needed / (n_joints * 2.0 * cutoff_hz)
    span = sum(float(d.t_s[1] - d.t_s[0]) * len(d.t_s) for d in processed)
    raise DataError(
        f"too little data: {span:.3g} s of processed samples hold about {available:.0f} independent torque equations "
        f"(2 × {cutoff_hz:g} Hz torque bandwidth × {n_joints} joints per second); {n_parameters} parameters need "
        f"at least {needed:.0f} ({MIN_EQUATIONS_PER_PARAMETER:g} each): record at least {seconds:.2g} s of exciting "
        "motion (one period of periodic data counts once)"
    )
