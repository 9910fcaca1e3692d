"""What motion a data set holds, so that a validation can say whether it tests a new motion or the same one.

A validation on the motion the model was identified on (another stretch of the same trajectory) shows how the
model copes with noise; only a different motion shows how it generalises. The summary per joint is the
position range and the RMS speed of the processed samples; a joint that does not move at all is static.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robot_id_estimator.processing.samples import ProcessedData

SAME_MOTION_FRACTION = 0.05
"""Two motions count as the same when every joint's range ends and RMS speed agree within this fraction of
the identification motion's range and RMS speed."""

STATIC_RANGE_RAD = 1e-3
"""A joint whose position varies by less than this over the whole data set counts as not moving."""

STILL_RAD = 1e-3
"""Absolute tolerance [rad, rad/s] so that joints which barely move compare sensibly."""


def motion_summary(processed: Sequence[ProcessedData]) -> dict[str, list[float]]:
    """Per joint: lowest and highest position [rad] and RMS speed [rad/s] over all processed samples."""
    q = np.concatenate([d.q_rad for d in processed])
    dq = np.concatenate([d.dq_rad_s for d in processed])
    return {
        "q_min_rad": [float(x) for x in q.min(axis=0)],
        "q_max_rad": [float(x) for x in q.max(axis=0)],
        "dq_rms_rad_s": [float(x) for x in np.sqrt(np.mean(dq**2, axis=0))],
    }


def compare_motion(
    identification: dict[str, list[float]], validation: dict[str, list[float]], joint_names: Sequence[str]
) -> str:
    """One sentence: whether the validation motion is the identification motion, and where it leaves it."""
    lo, hi = np.asarray(identification["q_min_rad"]), np.asarray(identification["q_max_rad"])
    v_lo, v_hi = np.asarray(validation["q_min_rad"]), np.asarray(validation["q_max_rad"])
    speed, v_speed = np.asarray(identification["dq_rms_rad_s"]), np.asarray(validation["dq_rms_rad_s"])
    span = hi - lo
    range_change = np.maximum(np.abs(v_lo - lo), np.abs(v_hi - hi)) / np.maximum(span, STILL_RAD)
    speed_change = np.abs(v_speed - speed) / np.maximum(speed, STILL_RAD)
    outside = np.maximum(lo - v_lo, v_hi - hi) / np.maximum(span, STILL_RAD)
    if np.all(range_change <= SAME_MOTION_FRACTION) and np.all(speed_change <= SAME_MOTION_FRACTION):
        return ("the same motion as the identification data (ranges and RMS speeds within "
                f"{100 * SAME_MOTION_FRACTION:g} %): this validation shows the effect of noise, not how the model "
                "generalises to other motions")
    j_range, j_speed = int(np.argmax(range_change)), int(np.argmax(speed_change))
    text = (f"a different motion from the identification data: ranges differ by up to "
            f"{100 * range_change[j_range]:.3g} % ({joint_names[j_range]}), RMS speeds by up to "
            f"{100 * speed_change[j_speed]:.3g} % ({joint_names[j_speed]})")
    beyond = [f"{joint_names[j]} by {100 * outside[j]:.3g} %" for j in np.flatnonzero(outside > SAME_MOTION_FRACTION)]
    if beyond:
        text += "; it leaves the identified position range (extrapolation) on " + ", ".join(beyond)
    return text


def static_joints(q_rad: np.ndarray) -> np.ndarray:
    """Mask of joints whose position range over the data is below STATIC_RANGE_RAD."""
    return np.ptp(q_rad, axis=0) < STATIC_RANGE_RAD
