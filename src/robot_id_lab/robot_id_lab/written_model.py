"""identified.urdf and identified.yaml as a user loads them, never by the tool's own account: the URDF by pinocchio
(the joints outside the arm locked at their neutral position), each joint's friction by the terms identified.yaml
states, its formulas written again here: viscous, offset, rotor inertia, the Coulomb level times its law (sign,
tanh, Gaz et al.'s off-centre sigmoid, a Stribeck rise), or a friction sweep's Stribeck curve (Luo et al. 2024,
eq. 7), which then holds the joint's whole speed law. A path-dependent law (Dahl's presliding state) is the one
thing evaluated by robot_id_model's law registry: a state integrated along the samples is not a one-line formula.

The estimator's tests, the benchmarks and the demo's check against the simulator's truth compare these torques
with the truth; the estimator's own loader (robot_id_estimator.output.model_files) is the tool's account."""

from __future__ import annotations

import pathlib
from collections.abc import Mapping, Sequence

import numpy as np
import pinocchio as pin
import yaml

from robot_id_model.robot_model import pinocchio_configuration

URDF_FILE = "identified.urdf"
YAML_FILE = "identified.yaml"


def arm_model(urdf: str | pathlib.Path, joints: Sequence[str]) -> pin.Model:
    """The URDF's model by pinocchio with every joint but `joints` locked at its neutral position."""
    full = pin.buildModelFromUrdf(str(urdf))
    locked = [full.getJointId(full.names[j]) for j in range(1, full.njoints) if full.names[j] not in joints]
    return pin.buildReducedModel(full, locked, pin.neutral(full)) if locked else full


def rigid_body_torque_nm(model: pin.Model, q_rad: np.ndarray, dq_rad_s: np.ndarray,
                         ddq_rad_s2: np.ndarray) -> np.ndarray:
    """(K, n) pinocchio's inverse dynamics (RNEA) along the samples."""
    data = model.createData()
    return np.array([pin.rnea(model, data, pinocchio_configuration(model, q), dq, ddq)
                     for q, dq, ddq in zip(q_rad, dq_rad_s, ddq_rad_s2, strict=True)])


def coulomb_shape(law: Mapping, q_rad: np.ndarray, dq_rad_s: np.ndarray) -> np.ndarray:
    """One joint's Coulomb law as identified.yaml states it, along its samples."""
    family, v = law["family"], law.get("velocity_rad_s")
    if family == "sign":
        return np.sign(dq_rad_s)
    if family == "tanh":
        return np.tanh(dq_rad_s / v)
    if family == "sigmoid":
        return np.tanh((dq_rad_s + law["shift_rad_s"]) / v) - np.tanh(law["shift_rad_s"] / v)
    if family == "stribeck":
        return np.sign(dq_rad_s) * (1.0 + law["ratio"] * np.exp(-((dq_rad_s / v) ** 2)))
    from robot_id_model.coulomb_laws import CoulombLaw

    return CoulombLaw.from_dict(law).signal(dq_rad_s, q_rad)


def stribeck_curve_nm(curve: Mapping[str, float], dq_rad_s: np.ndarray) -> np.ndarray:
    """A sweep's Stribeck curve, Luo et al. 2024, eq. (7): fv1·q̇ + fv2·sgn(q̇)·q̇² + fv3·q̇³ +
    fs·sgn(q̇)·exp(−(q̇/fs1)²) + fc·sgn(q̇)·(1 − exp(−(q̇/fc1)²))."""
    sign = np.sign(dq_rad_s)
    return (curve["fv1"] * dq_rad_s + curve["fv2"] * sign * dq_rad_s**2 + curve["fv3"] * dq_rad_s**3
            + curve["fs"] * sign * np.exp(-((dq_rad_s / curve["fs1"]) ** 2))
            + curve["fc"] * sign * (1.0 - np.exp(-((dq_rad_s / curve["fc1"]) ** 2))))


def friction_torque_nm(yaml_path: str | pathlib.Path, joints: Sequence[str], q_rad: np.ndarray, dq_rad_s: np.ndarray,
                       ddq_rad_s2: np.ndarray) -> np.ndarray:
    """(K, n) the friction torque (rotor inertia included) of identified.yaml; a term it leaves out or null is 0."""
    friction = yaml.safe_load(pathlib.Path(yaml_path).read_text())["friction"]
    tau_nm = np.zeros_like(dq_rad_s)
    for j, name in enumerate(joints):
        joint = friction[name]
        q, dq = q_rad[:, j], dq_rad_s[:, j]
        tau_nm[:, j] = (joint.get("rotor_inertia_kg_m2") or 0.0) * ddq_rad_s2[:, j] + (joint.get("offset_nm") or 0.0)
        if joint.get("stribeck"):
            tau_nm[:, j] += stribeck_curve_nm(joint["stribeck"], dq)
        else:
            tau_nm[:, j] += ((joint.get("viscous_nm_s_rad") or 0.0) * dq
                             + (joint.get("coulomb_nm") or 0.0) * coulomb_shape(joint["coulomb_law"], q, dq))
    return tau_nm


def written_torque_nm(out: str | pathlib.Path, joints: Sequence[str], q_rad: np.ndarray, dq_rad_s: np.ndarray,
                      ddq_rad_s2: np.ndarray) -> np.ndarray:
    """(K, n) the joint torque the model files in `out` give: identified.urdf by pinocchio plus identified.yaml's
    friction."""
    out = pathlib.Path(out)
    model = arm_model(out / URDF_FILE, joints)
    return (rigid_body_torque_nm(model, q_rad, dq_rad_s, ddq_rad_s2)
            + friction_torque_nm(out / YAML_FILE, joints, q_rad, dq_rad_s, ddq_rad_s2))
