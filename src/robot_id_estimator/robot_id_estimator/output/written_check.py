"""The written model files checked as they will be loaded: identified.urdf by pinocchio, identified.yaml's friction
laws and identified.xml by MuJoCo (output.model_files) must give the torque of the identified physical parameters
on the identification's own samples; a payload's files (the arm with the load, its MJCF and payload.urdf alone) the
identified load's. A difference beyond numerical noise is a bug in what was written, and the run fails on it (the
command line's exit code 5), naming the file and the joints or bodies that differ."""

from __future__ import annotations

import pathlib
from collections.abc import Sequence

import numpy as np
import pinocchio as pin

from robot_id_estimator.output.model_files import (
    LoadedModel,
    load_written_model,
    mujoco_rigid_body_nm,
    urdf_arm_model,
)
from robot_id_estimator.output.urdf_export import ModelFiles
from robot_id_estimator.results import Identification
from robot_id_estimator.results.written_check import WrittenCheck
from robot_id_estimator.stribeck_law import stribeck_model_torque
from robot_id_model.base_parameters import random_states
from robot_id_model.parameters import PIN_INDEX, friction_columns, inertial_columns
from robot_id_model.payload import payload_regressor
from robot_id_model.regressor import regressor
from robot_id_model.robot_model import load_robot_model

RELATIVE_TOLERANCE = 1e-6
"""A file's torque may differ from the parameters' by this fraction of the joint's torque RMS: the URDF and YAML
hold every float as its shortest exact text (1e-12 measured)."""
MJCF_RELATIVE_TOLERANCE = 1e-4
"""The same for an MJCF: MuJoCo writes its principal-axis inertias and orientations with fewer digits (1.4e-6
measured on the iiwa14)."""
ABSOLUTE_TOLERANCE_NM = 1e-9
BODY_TOLERANCE = 1e-9
"""A body's standard parameters differ when one differs by more than this, relative to the body's largest."""
PAYLOAD_STATES = 200
"""Random states within the joint limits on which a payload's files are checked."""


def check_written_model(result: Identification, files: ModelFiles) -> WrittenCheck:
    """identified.urdf + identified.yaml (and identified.xml's rigid body when written) against the physical set's
    torque at the identification's trace samples (Identification.traces)."""
    traces = result.traces
    q, dq, ddq = traces.q_rad, traces.dq_rad_s, traces.ddq_rad_s2
    robot = result.robot_model()
    y = regressor(robot, q, dq, ddq)
    pi = result.physical.standard_values
    inertial, friction = inertial_columns(robot).ravel(), friction_columns(robot).ravel()
    rigid_nm = y[..., inertial] @ pi[inertial]
    friction_nm = y[..., friction] @ pi[friction] + stribeck_model_torque(result.friction.stribeck, dq)
    names = robot.joint_names
    loaded = load_written_model(files.urdf, files.yaml, names, result.setup.gravity_m_s2)
    bodies = differing_bodies(loaded, robot.link_names, pi[inertial_columns(robot)])
    where = f"; bodies that differ from the identified ones: {', '.join(bodies)}" if bodies else ""
    compared = [(files.urdf.name, loaded.rigid_body_nm(q, dq, ddq), rigid_nm, where),
                (files.yaml.name, loaded.friction_nm(q, dq, ddq), friction_nm, "")]
    if files.mjcf is not None:
        compared.append((files.mjcf.name, mujoco_rigid_body_nm(files.mjcf, names, q, dq, ddq), rigid_nm, ""))
    return _compared(compared, names)


def check_payload_files(arm_urdf_text: str, attached: pathlib.Path, alone: pathlib.Path, mjcf: pathlib.Path | None,
                        load: np.ndarray, frame: str, joint_names: Sequence[str],
                        gravity_m_s2: Sequence[float]) -> WrittenCheck:
    """The arm with the load (arm_with_payload.urdf by pinocchio, its MJCF by MuJoCo) less the arm alone must give
    the load's torque (its standard parameters `load` in `frame`, robot_id_model.payload) on random states within
    the joint limits; payload.urdf alone, loaded by pinocchio, must hold `load` in its root frame."""
    robot = load_robot_model(arm_urdf_text, joint_names, gravity_m_s2, friction=())
    q, dq, ddq = random_states(robot, PAYLOAD_STATES, seed=0)
    load_nm = payload_regressor(robot, frame, q, dq, ddq) @ load
    arm_nm = LoadedModel(robot.model, tuple(joint_names), ()).rigid_body_nm(q, dq, ddq)  # the arm alone
    with_load = urdf_arm_model(attached.read_text(), joint_names, gravity_m_s2)
    compared = [(attached.name, with_load.rigid_body_nm(q, dq, ddq) - arm_nm, load_nm, "")]
    if mjcf is not None:
        compared.append((mjcf.name, mujoco_rigid_body_nm(mjcf, joint_names, q, dq, ddq) - arm_nm, load_nm, ""))
    check = _compared(compared, joint_names)
    written = pin.buildModelFromXML(alone.read_text()).inertias[0].toDynamicParameters()[PIN_INDEX]
    if np.max(np.abs(written - load)) > BODY_TOLERANCE * max(np.max(np.abs(load)), 1e-12):
        failure = (f"{alone.name} does not hold the identified load (mass {written[0]:.6g} kg written, "
                   f"{load[0]:.6g} kg identified)")
        return WrittenCheck(check.difference_percent, (*check.failures, failure))
    return check


def _compared(compared: Sequence[tuple[str, np.ndarray, np.ndarray, str]], names: Sequence[str]) -> WrittenCheck:
    """Each (file, its torque, the identified torque, what else to say) compared per joint within the tolerance
    of its kind."""
    difference, failures = {}, []
    for name, from_file, identified, where in compared:
        error = np.sqrt(np.mean((from_file - identified) ** 2, axis=0))
        scale = np.sqrt(np.mean(identified**2, axis=0))
        difference[name] = float(100.0 * np.max(error / np.maximum(scale, ABSOLUTE_TOLERANCE_NM)))
        tolerance = MJCF_RELATIVE_TOLERANCE if name.endswith(".xml") else RELATIVE_TOLERANCE
        bad = error > tolerance * scale + ABSOLUTE_TOLERANCE_NM
        if bad.any():
            joints = ", ".join(f"{names[j]} {100.0 * error[j] / max(scale[j], 1e-12):.3g} %"
                               for j in np.flatnonzero(bad))
            failures.append(f"{name} does not reproduce the identified model's torque ({joints} of the torque "
                            f"RMS){where}")
    return WrittenCheck(difference, tuple(failures))


def differing_bodies(loaded: LoadedModel, link_names: Sequence[str], identified: np.ndarray) -> list[str]:
    """The arm links whose body in the loaded URDF (with what it carries, as pinocchio lumps it) differs from the
    identified standard parameters (n, 10)."""
    model = loaded.model
    out = []
    for j, name in enumerate(link_names):
        written = model.inertias[j + 1].toDynamicParameters()[PIN_INDEX]
        if np.max(np.abs(written - identified[j])) > BODY_TOLERANCE * max(np.max(np.abs(identified[j])), 1e-12):
            out.append(f"{name} (mass {written[0]:.4g} kg written, {identified[j][0]:.4g} kg identified)")
    return out
