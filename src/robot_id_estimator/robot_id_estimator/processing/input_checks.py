"""Sanity checks of the input before anything is estimated: wrong units and too little data give wrong answers
that look like results, so they are refused with the reason and what to do."""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Sequence

import numpy as np

from robot_id_estimator.processing.samples import ProcessedData
from robot_id_estimator.recordings.recording import DataError, Recording
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_model.parameters import urdf_friction
from robot_id_model.robot_model import RobotModel
from robot_id_model.urdf_inertials import massless_links

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


def check_recording(rec: Recording, robot: RobotModel, allow_outside_limits: bool) -> None:
    """The checks of one recording before processing: its joints, positions within the limits (unless allowed)
    and logged velocities that are the positions' derivative."""
    check_joints(rec, robot.joint_names)
    if not allow_outside_limits:
        check_position_limits(rec, robot.joint_names, *robot.position_limits_rad)
    check_logged_velocities(rec, robot.joint_names)


def with_stack_torque_filter(recordings: Sequence[Recording], setup: RobotSetup) -> tuple[RobotSetup, tuple[str, ...]]:
    """The setup with the torque filter the robot's stack announced in its robot_description (recorded in the bags:
    robot_id_model.stack_hardware) in place of the config's, and the line saying so where they differ; DataError when
    the stack published commanded positions (open loop) or its recordings announce different filters."""
    stacks = [(rec.source, rec.stack) for rec in recordings if rec.stack is not None and rec.stack.says_anything]
    open_loop = [source for source, stack in stacks if stack.open_loop]
    if open_loop:
        raise DataError(f"{open_loop[0]}: the robot's hardware interface ran open loop (open_loop: true in its "
                        "robot_description): its joint positions are the commands, not measurements; set open_loop: "
                        "false (lbr_fri_ros2_stack: lbr_system_config.yaml) and record again")
    said = {(stack.torque_filter_time_constant_s, stack.said_by) for _, stack in stacks
            if stack.torque_filter_time_constant_s is not None}
    if not said:
        return setup, ()
    if len(said) > 1:
        raise DataError(f"the recordings' robots announced different torque filters ({sorted(by for _, by in said)}): "
                        "identify recordings of one set-up together")
    ((time_constant_s, said_by),) = said
    if math.isclose(time_constant_s, setup.torque_filter_time_constant_s, rel_tol=0.01, abs_tol=1e-4):
        return setup, ()
    return dataclasses.replace(setup, torque_filter_time_constant_s=time_constant_s), (
        f"the robot's stack filters its torque with a time constant of {1000 * time_constant_s:g} ms ({said_by} in "
        f"its robot_description), not the configured {1000 * setup.torque_filter_time_constant_s:g} ms: identified "
        f"with the stack's; set torque_filter_time_constant_s: {time_constant_s:g} in the robot config",)


def check_joints(rec: Recording, joint_names: Sequence[str]) -> None:
    """DataError when the recording's joints are not the robot's, in its order."""
    if tuple(rec.joint_names) != tuple(joint_names):
        raise DataError(
            f"{rec.source}: joints {list(rec.joint_names)} do not match the robot's {list(joint_names)}; "
            "load the recording with the robot's joint names"
        )


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


VELOCITY_SCALE_RANGE = (2.0 / 3.0, 1.5)
"""Logged velocities must match the derivative of the logged positions within this scale (deg/s against rad:
1/57; a sign error: −1)."""

TORQUE_SCALE_RANGE = (1.0 / 3.0, 3.0)
"""A loaded joint's measured torque RMS over the rigid-body URDF model's outside this range is warned about (a
wrong URDF, an unmodelled payload, a gripper, large friction)."""

UNIT_SCALE_RANGE = (1.0 / 20.0, 20.0)
"""... and outside this one refused: a factor of 20 no payload or URDF error makes, which every unit mix-up
does (Nm against mNm: 1000; against Nm per degree: 57.3)."""

FLIPPED_CORRELATION = -0.5
"""A loaded joint whose torque correlates with the URDF model's below this has its sign flipped: refused."""

LOADED_FRACTION = 0.1
"""Joints whose URDF-model torque RMS is below this fraction of the largest joint's are not compared."""


def check_logged_velocities(rec: Recording, joint_names: Sequence[str]) -> None:
    """DataError when logged velocities are not the derivative of the logged positions (units, sign, order)."""
    if rec.dq_rad_s is None:
        return
    from_q = np.gradient(rec.q_rad, rec.t_s, axis=0)
    logged = rec.dq_rad_s
    moving = np.ptp(rec.q_rad, axis=0) > 0.01
    power = np.sum(logged**2, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.sum(logged * from_q, axis=0) / power  # from_q ≈ scale · logged (noise in from_q unbiased)
    low, high = VELOCITY_SCALE_RANGE
    wrong = [j for j in np.flatnonzero(moving) if power[j] > 0.0 and not low <= scale[j] <= high]
    if wrong:
        joints = ", ".join(f"{joint_names[j]} ({scale[j]:.3g})" for j in wrong)
        raise DataError(f"{rec.source}: the logged velocities are not the derivative of the positions: the derivative "
                        f"is this many times the logged velocity on {joints} (1/57.3: deg/s; negative: a sign or "
                        "column mix-up); fix the file or leave the dq columns out")


FLAT_FRACTION = 0.02
"""A joint whose measured torque varies (standard deviation) by less than this fraction of the URDF model's torque
does not follow the motion: a dead sensor, a column of zeros or the wrong column. Friction alone varies more."""


def check_torque_follows_motion(source: str, tau_nm: np.ndarray, tau_urdf_nm: np.ndarray,
                                joint_names: Sequence[str]) -> None:
    """DataError naming each joint whose torque is flat where the URDF model's varies (FLAT_FRACTION)."""
    measured, model = np.std(tau_nm, axis=0), np.std(tau_urdf_nm, axis=0)
    flat = [f"{joint_names[j]} varies by {measured[j]:.2g} Nm RMS where the URDF model's varies by {model[j]:.3g}"
            for j in np.flatnonzero(measured < FLAT_FRACTION * model)]
    if flat:
        raise DataError(f"{source}: the torque does not follow the motion: {'; '.join(flat)}: a dead sensor, a "
                        "column of zeros or the wrong column?")


def check_torque_against_urdf(source: str, tau_nm: np.ndarray, tau_urdf_nm: np.ndarray,
                              joint_names: Sequence[str]) -> list[str]:
    """Compare the measured torque with the URDF's rigid-body model on every joint the model loads (RMS at least
    LOADED_FRACTION of the largest joint's): DataError for what is certainly wrong, a scale outside
    UNIT_SCALE_RANGE (units) or a correlation below FLIPPED_CORRELATION (sign); the warnings for what may be
    (a scale outside TORQUE_SCALE_RANGE, a correlation below 0.5)."""
    urdf_rms = np.sqrt(np.mean(tau_urdf_nm**2, axis=0))
    measured_rms = np.sqrt(np.mean(tau_nm**2, axis=0))
    refused, doubtful = [], []
    for j in np.flatnonzero(urdf_rms >= LOADED_FRACTION * urdf_rms.max()):
        scale = measured_rms[j] / urdf_rms[j]
        correlation = np.corrcoef(tau_nm[:, j], tau_urdf_nm[:, j])[0, 1]
        text = f"{joint_names[j]} ({scale:.3g} × the URDF model's torque RMS, correlation {correlation:.2f})"
        if not UNIT_SCALE_RANGE[0] <= scale <= UNIT_SCALE_RANGE[1] or correlation < FLIPPED_CORRELATION:
            refused.append(text)
        elif not TORQUE_SCALE_RANGE[0] <= scale <= TORQUE_SCALE_RANGE[1] or correlation < 0.5:
            doubtful.append(text)
    for j in np.flatnonzero((urdf_rms < LOADED_FRACTION * urdf_rms.max()) & (urdf_rms > 0.0)):
        correlation = np.corrcoef(tau_nm[:, j], tau_urdf_nm[:, j])[0, 1]
        if correlation < FLIPPED_CORRELATION:  # light: friction may dominate, so a warning, not a refusal
            doubtful.append(f"{joint_names[j]} (lightly loaded, correlation {correlation:.2f}: a flipped sign?)")
    if refused:
        raise DataError(f"{source}: the torque cannot be this robot's: {', '.join(refused)}; check the units (Nm), "
                        "signs and joint order, and the robot; if the data are right, pass "
                        "--allow-implausible-torque")
    if doubtful:
        return [f"{source}: the torque differs from the URDF's rigid-body model: {', '.join(doubtful)}; a payload, "
                "a gripper or a URDF far from the robot does this, so do wrong units, signs or joint order"]
    return []


def urdf_friction_note(robot: RobotModel) -> str | None:
    """What the URDF's <dynamics> say and that they are not used (None when it states none): the nominal model
    is rigid-body; a URDF stating the same friction on every joint is flagged as holding placeholders."""
    values = urdf_friction(robot)
    if not values.any():
        return None
    same = bool(np.all(values == values[0]))
    stated = (f"damping {values[0, 0]:g} Nm·s/rad, friction {values[0, 1]:g} Nm on every joint" if same else
              "damping " + ", ".join(f"{v:g}" for v in values[:, 0]) + " Nm·s/rad, friction "
              + ", ".join(f"{v:g}" for v in values[:, 1]) + " Nm")
    return (f"the URDF's friction values (<dynamics>): {stated}" + (" — the same on every joint: placeholders, "
            if same else "; ") + "not used (the nominal model for checks and comparisons is rigid-body)")


def refuse_the_same_samples_twice(paths: Sequence[str], recordings: Sequence[Recording], n_fitted: int) -> None:
    """A file given twice, or copied under another name, would count its samples twice (every RSD √2 too small), or
    check the parameters on the data they were fitted to (the first `n_fitted` are fitted)."""
    digests = [hashlib.sha256(np.ascontiguousarray(r.q_rad).tobytes() + np.ascontiguousarray(r.tau_nm).tobytes())
               .hexdigest() for r in recordings]
    for i, digest in enumerate(digests):
        if digest in digests[:i]:
            first = paths[digests.index(digest)]
            why = ("they would count twice (every RSD √2 too small)" if i < n_fitted else
                   "a check on the data fitted checks nothing")
            raise ValueError(f"--data: {first} and {paths[i]} hold the same samples: {why}; give each recording once")


def refuse_massless_links(robot: RobotModel, urdf_path: str) -> None:
    """An arm link with no mass in the URDF and nothing fixed to it has no prior to identify around: refused."""
    massless = massless_links(robot)
    if massless:
        raise DataError(f"{urdf_path}: the arm link(s) {', '.join(massless)} have no mass in the "
                        "URDF (no <inertial>, nothing fixed to them): give each arm link one, a rough one does (it is "
                        "where the identification starts from)")
