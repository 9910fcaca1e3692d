"""The arm's physics in MuJoCo, an engine independent of the pinocchio model used for identification.

The URDF is compiled by MuJoCo's own importer (fixed links fused into their parent, joints outside the arm made
fixed, visuals and collisions dropped, no contacts, no joint-limit forces); then every arm link's inertial is set
to the true one. The true friction (true_friction) is split so that it integrates stably at any speed: the
viscous term is MuJoCo's (implicit) joint damping, the static level of eq. (7), fs·sgn(dq), is MuJoCo's friction
loss (a constraint, so the joint sticks at rest), and the rest, continuous, is applied explicitly; a smooth law,
as steep at rest as fc/fc1, linearised about each step's velocity: its slope there joins the implicit damping, so
that it stays stable at the physics step. A presliding joint's Dahl state is carried from step to step and applied
explicitly.

A joint can be blocked (`block`, a fault for tests: a jammed gear or an obstacle): its damping is then raised far
beyond what any drive torque moves, and MuJoCo's implicit damping stops it within one physics step.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

import mujoco
import numpy as np

from robot_id_sim.true_dynamics import TrueDynamics

BLOCKED_DAMPING_NM_S_RAD = 1e9
"""Damping of a blocked joint: a drive at its torque limit (≤ 320 Nm on the shipped arms) moves it < 1e-6 rad/s."""


class PlantError(ValueError):
    """A robot description the simulator cannot build, with the reason."""


def mujoco_urdf(urdf_text: str, joint_names: Sequence[str]) -> str:
    """The URDF as MuJoCo should compile it: no visuals or collisions, joints outside `joint_names` fixed."""
    root = ET.fromstring(urdf_text)
    for link in root.iter("link"):
        for tag in ("visual", "collision"):
            for element in link.findall(tag):
                link.remove(element)
    for joint in root.iter("joint"):
        if joint.get("type") not in ("fixed", None) and joint.get("name") not in joint_names:
            joint.set("type", "fixed")
    compiler = ET.SubElement(ET.SubElement(root, "mujoco"), "compiler")
    compiler.set("discardvisual", "true")
    compiler.set("fusestatic", "true")
    compiler.set("balanceinertia", "true")  # the URDF's own inertials are replaced by the true ones
    return ET.tostring(root, encoding="unicode")


class MujocoPlant:
    """One simulated arm: set the drive torques, step, read the joint state (all in `joint_names` order)."""

    def __init__(self, urdf_text: str, joint_names: Sequence[str], gravity_m_s2: Sequence[float],
                 truth: TrueDynamics, timestep_s: float) -> None:
        try:
            self.model = mujoco.MjModel.from_xml_string(mujoco_urdf(urdf_text, joint_names))
        except ET.ParseError as err:
            raise PlantError(f"the robot description is not well-formed XML: {err}") from None
        except ValueError as err:
            raise PlantError(f"MuJoCo could not compile the URDF: {err}") from None
        model = self.model
        names = [model.joint(j).name for j in range(model.njnt)]
        missing = [name for name in joint_names if name not in names]
        if missing:
            raise PlantError(f"MuJoCo model has no joint {missing}; it has {names}")
        if model.nv != len(joint_names):
            raise PlantError(f"MuJoCo model moves {model.nv} joints ({names}), the arm has {len(joint_names)}")
        joint_ids = [names.index(name) for name in joint_names]
        self.dof = _as_slice(np.array([model.jnt_dofadr[j] for j in joint_ids]))
        self.qpos = _as_slice(np.array([model.jnt_qposadr[j] for j in joint_ids]))
        self.truth = truth
        for body, link in zip(model.jnt_bodyid[joint_ids], truth.links, strict=True):
            moments, axes = np.linalg.eigh(np.asarray(link.inertia_com_kg_m2, dtype=float))
            if np.linalg.det(axes) < 0.0:
                axes[:, 0] *= -1.0
            quat = np.empty(4)
            mujoco.mju_mat2Quat(quat, axes.ravel())
            model.body_mass[body] = link.mass_kg
            model.body_ipos[body] = link.com_m
            model.body_iquat[body] = quat
            model.body_inertia[body] = moments
        model.dof_damping[self.dof] = truth.friction.fv1
        model.dof_frictionloss[self.dof] = truth.friction.static_nm
        model.dof_armature[self.dof] = truth.armature_kg_m2
        model.dof_solref[self.dof, 0] = 2.0 * timestep_s  # the stiffest friction loss MuJoCo integrates stably
        model.jnt_limited[:] = 0
        model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
        model.opt.gravity[:] = gravity_m_s2
        model.opt.timestep = timestep_s
        self.data = mujoco.MjData(model)
        mujoco.mj_setConst(model, self.data)
        self.ddq_rad_s2 = np.zeros(len(joint_names))
        self.blocked = np.zeros(len(joint_names), dtype=bool)
        self.any_blocked = False
        self.presliding_state = np.zeros(len(joint_names))
        """Dahl's state of the presliding joints (true_friction)"""

    @property
    def timestep_s(self) -> float:
        return float(self.model.opt.timestep)

    @property
    def q_rad(self) -> np.ndarray:
        return self.data.qpos[self.qpos].copy()

    @property
    def dq_rad_s(self) -> np.ndarray:
        return self.data.qvel[self.dof].copy()

    def reset(self, q_rad: np.ndarray) -> None:
        """Put the arm at rest at q_rad."""
        mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[self.qpos] = q_rad
        mujoco.mj_forward(self.model, self.data)
        self.ddq_rad_s2 = np.zeros(len(self.blocked))
        self.presliding_state = np.zeros(len(self.blocked))

    def gravity_nm(self) -> np.ndarray:
        """The true gravity torques at the present pose (MuJoCo's bias force; at rest nothing else)."""
        return self.data.qfrc_bias[self.dof].copy()

    def block(self, joint: int) -> None:
        """Block joint number `joint` (in joint_names order) where it is, for good (see the module docstring)."""
        self.blocked[joint] = True
        self.any_blocked = True

    def step(self, tau_drive_nm: np.ndarray) -> None:
        """One time step with the drives applying tau_drive_nm; ddq_rad_s2 is then the acceleration the
        equations of motion gave at the state before the step."""
        friction, dq = self.truth.friction, self.dq_rad_s
        slope = friction.smooth_slope(dq)
        damping = friction.fv1 + slope
        if self.any_blocked:  # not np.where on every step (3 µs) while none is
            damping[self.blocked] = BLOCKED_DAMPING_NM_S_RAD
        self.model.dof_damping[self.dof] = damping
        continuous = friction.continuous_torque_nm(dq, self.presliding_state)
        self.data.qfrc_applied[self.dof] = np.asarray(tau_drive_nm, dtype=float) - (continuous - slope * dq)
        q_before = self.q_rad
        mujoco.mj_step(self.model, self.data)
        self.ddq_rad_s2 = self.data.qacc[self.dof].copy()
        if friction.presliding_rad is not None:  # else no joint has a state: it stays 0
            self.presliding_state = friction.presliding_step(self.presliding_state, self.q_rad - q_before)

    def friction_loss_nm(self) -> np.ndarray:
        """The friction-loss (static friction) torque opposing the motion at the last step (MuJoCo's constraint
        force; with contacts and joint limits off it is the only constraint)."""
        return -self.data.qfrc_constraint[self.dof].copy()


def _as_slice(indices: np.ndarray) -> slice | np.ndarray:
    """The indices as a slice when they run in steps of one (a view, read per physics step without a gather)."""
    if len(indices) and np.array_equal(indices, np.arange(indices[0], indices[0] + len(indices))):
        return slice(int(indices[0]), int(indices[0]) + len(indices))
    return indices
