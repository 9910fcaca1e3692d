"""The identified model as a user loads it: identified.urdf by pinocchio from the file's text (the joints outside
the arm locked at their neutral position, as pinocchio's buildReducedModel does), each joint's friction by the laws
identified.yaml states, identified.xml by MuJoCo. Nothing here reads the identification's parameters: what these
functions return is what the files do."""

from __future__ import annotations

import pathlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
import yaml

from robot_id_estimator.output.urdf_export import URDF_NAME, YAML_NAME
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_estimator.stribeck_law import STRIBECK_NAMES, stribeck_torque
from robot_id_model.coulomb_laws import CoulombLaw
from robot_id_model.robot_model import pinocchio_configuration


@dataclass(frozen=True)
class JointFrictionLaw:
    """One joint's friction as identified.yaml states it: viscous, offset, rotor inertia and the Coulomb level with
    its law, or a Stribeck curve (a friction sweep's fit, which then holds the joint's whole speed law)."""

    viscous_nm_s_rad: float
    coulomb_nm: float
    offset_nm: float
    rotor_inertia_kg_m2: float
    coulomb_law: CoulombLaw
    stribeck: np.ndarray | None

    def torque_nm(self, q_rad: np.ndarray, dq_rad_s: np.ndarray, ddq_rad_s2: np.ndarray) -> np.ndarray:
        """(K,) the friction torque along samples in time order (a presliding law is a state of the path)."""
        inertia = self.rotor_inertia_kg_m2 * ddq_rad_s2 + self.offset_nm
        if self.stribeck is not None:
            return inertia + stribeck_torque(dq_rad_s, self.stribeck)
        return inertia + self.viscous_nm_s_rad * dq_rad_s + self.coulomb_nm * self.coulomb_law.signal(dq_rad_s, q_rad)


def read_friction_laws(yaml_path: str | pathlib.Path, joint_names: Sequence[str]) -> tuple[JointFrictionLaw, ...]:
    """Each joint's friction law from identified.yaml; a term the file leaves out or null is zero."""
    friction = yaml.safe_load(pathlib.Path(yaml_path).read_text())["friction"]
    laws = []
    for name in joint_names:
        joint = friction[name]
        stribeck = joint.get("stribeck")
        laws.append(JointFrictionLaw(
            float(joint.get("viscous_nm_s_rad") or 0.0), float(joint.get("coulomb_nm") or 0.0),
            float(joint.get("offset_nm") or 0.0), float(joint.get("rotor_inertia_kg_m2") or 0.0),
            CoulombLaw.from_dict(joint["coulomb_law"]),
            np.array([stribeck[key] for key in STRIBECK_NAMES], dtype=float) if stribeck else None))
    return tuple(laws)


@dataclass(frozen=True)
class LoadedModel:
    """A URDF's arm as pinocchio loads it, with identified.yaml's friction laws (none: no friction)."""

    model: pin.Model
    joint_names: tuple[str, ...]
    friction: tuple[JointFrictionLaw, ...]

    def rigid_body_nm(self, q_rad: np.ndarray, dq_rad_s: np.ndarray, ddq_rad_s2: np.ndarray) -> np.ndarray:
        """(K, n) the rigid-body torque by pinocchio's RNEA."""
        data = self.model.createData()
        return np.array([pin.rnea(self.model, data, pinocchio_configuration(self.model, q), dq, ddq)
                         for q, dq, ddq in zip(q_rad, dq_rad_s, ddq_rad_s2, strict=True)])

    def friction_nm(self, q_rad: np.ndarray, dq_rad_s: np.ndarray, ddq_rad_s2: np.ndarray) -> np.ndarray:
        """(K, n) the friction torque of identified.yaml's laws (zero without them)."""
        if not self.friction:
            return np.zeros_like(dq_rad_s)
        return np.column_stack([law.torque_nm(q_rad[:, j], dq_rad_s[:, j], ddq_rad_s2[:, j])
                                for j, law in enumerate(self.friction)])

    def torque_nm(self, q_rad: np.ndarray, dq_rad_s: np.ndarray, ddq_rad_s2: np.ndarray) -> np.ndarray:
        """(K, n) the joint torque the files model: rigid body plus friction."""
        return self.rigid_body_nm(q_rad, dq_rad_s, ddq_rad_s2) + self.friction_nm(q_rad, dq_rad_s, ddq_rad_s2)


def load_written_model(urdf_path: str | pathlib.Path, yaml_path: str | pathlib.Path, joint_names: Sequence[str],
                       gravity_m_s2: Sequence[float]) -> LoadedModel:
    """identified.urdf and identified.yaml loaded as a user does (urdf_arm_model, with the YAML's friction laws)."""
    arm = urdf_arm_model(pathlib.Path(urdf_path).read_text(), joint_names, gravity_m_s2)
    return LoadedModel(arm.model, arm.joint_names, read_friction_laws(yaml_path, joint_names))


def written_model_beside(folder: pathlib.Path, setup: RobotSetup) -> LoadedModel | None:
    """identified.urdf and identified.yaml in `folder` (beside an identification.json) loaded for the robot of
    `setup`; None when they are not there (no physical set, or it was rejected: identified.rejected.urdf)."""
    urdf, model_yaml = folder / URDF_NAME, folder / YAML_NAME
    if not (urdf.is_file() and model_yaml.is_file()):
        return None
    return load_written_model(urdf, model_yaml, setup.joint_names, setup.gravity_m_s2)


def urdf_arm_model(urdf_text: str, joint_names: Sequence[str], gravity_m_s2: Sequence[float]) -> LoadedModel:
    """A URDF's arm `joint_names` as pinocchio loads it, every other joint locked at its neutral position, gravity
    as the robot's setup states it (a URDF holds none); no friction."""
    full = pin.buildModelFromXML(urdf_text)
    locked = [full.getJointId(full.names[j]) for j in range(1, full.njoints) if full.names[j] not in joint_names]
    model = pin.buildReducedModel(full, locked, pin.neutral(full)) if locked else full
    model.gravity.linear = np.asarray(gravity_m_s2, dtype=float)
    return LoadedModel(model, tuple(joint_names), ())


def mujoco_rigid_body_nm(xml_path: str | pathlib.Path, joint_names: Sequence[str], q_rad: np.ndarray,
                         dq_rad_s: np.ndarray, ddq_rad_s2: np.ndarray) -> np.ndarray:
    """(K, n) identified.xml's rigid-body torque of the arm's joints by MuJoCo's inverse dynamics (its own gravity;
    joint damping, friction loss, armature and constraints left out), every other joint at its reference."""
    import mujoco

    model = mujoco.MjModel.from_xml_path(str(xml_path))
    model.opt.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONSTRAINT | mujoco.mjtDisableBit.mjDSBL_DAMPER
                               | mujoco.mjtDisableBit.mjDSBL_SPRING)
    model.dof_armature[:] = 0.0
    data = mujoco.MjData(model)
    qpos = [model.joint(name).qposadr[0] for name in joint_names]
    dofs = [model.joint(name).dofadr[0] for name in joint_names]
    out = np.empty_like(q_rad)
    for k in range(len(q_rad)):
        data.qpos[:] = model.qpos0
        data.qvel[:] = 0.0
        data.qacc[:] = 0.0
        data.qpos[qpos], data.qvel[dofs], data.qacc[dofs] = q_rad[k], dq_rad_s[k], ddq_rad_s2[k]
        mujoco.mj_inverse(model, data)
        out[k] = data.qfrc_inverse[dofs]
    return out
