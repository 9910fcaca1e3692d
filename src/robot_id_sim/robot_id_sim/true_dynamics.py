"""The simulated robot's true dynamics: the nominal URDF changed in a controlled, seeded way.

Per link: mass scaled, centre of mass shifted, the mass distribution's second moments scaled and its principal
axes turned; a payload on the last link; per joint: friction of a law drawn per joint (true_friction: Luo et al.
2024, eq. 7, Gaz et al. 2019's sigmoid, tanh), rotor inertia
(armature) and a torque-sensor offset. Every link stays physically consistent by construction: the inertia is
built from Σ = ½tr(I)E − I (the second moments of the mass along the principal axes, Wensing et al. 2017), whose
eigenvalues are kept positive, so the triangle inequalities hold strictly.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
from scipy.spatial.transform import Rotation

from robot_id_model.parameters import PIN_INDEX
from robot_id_model.payload import frame_placement, to_joint_frame
from robot_id_model.physical import (
    LinkInertial,
    inertia_six,
    link_from_standard,
    link_standard_parameters,
    sigma_matrix,
    standard_vector,
)
from robot_id_model.regressor import regressor
from robot_id_model.robot_model import RobotModel
from robot_id_sim.true_friction import FRICTION_LAWS, JointFriction

TRUTH_FRICTION = ("FV", "FC", "FO", "IA")
"""The identification model's terms the truth is stated in: viscous, Coulomb, offset, rotor inertia."""


@dataclass(frozen=True)
class Perturbation:
    """How far the true robot is from its URDF; relative sizes of friction, armature and offset are per unit of
    the joint's torque limit (a bigger drive has more of each)."""

    seed: int = 0
    mass_scale: float = 0.10             # each link mass × U(1 − s, 1 + s)
    com_shift_m: float = 0.01            # each CoM coordinate + U(−s, s)
    second_moment_scale: float = 0.10    # each principal second moment × U(1 − s, 1 + s)
    axes_turn_deg: float = 10.0          # principal axes turned by up to this angle
    min_second_moment_kg_m2: float = 2e-4  # floor for a URDF link that breaks the triangle inequality
    payload_mass_kg: float = 1.0
    payload_com_m: tuple[float, float, float] = (0.0, 0.0, 0.06)
    payload_radius_m: float = 0.04       # a solid sphere
    viscous_per_torque_s: tuple[float, float] = (0.005, 0.015)    # fv1 [Nm s/rad] per Nm of the torque limit
    coulomb_per_torque: tuple[float, float] = (0.005, 0.015)      # fc [Nm] per Nm
    static_over_coulomb: float = 1.3     # fs / fc
    stribeck_velocity_rad_s: float = 0.05  # fs1 = fc1
    friction_laws: tuple[str, ...] = ("stribeck",)  # each joint's law drawn from these (true_friction)
    sigmoid_shift: float = 0.3           # a sigmoid joint's φ3 = U(−s, s) × fc1
    presliding_rad: float = 0.002        # a presliding joint's x_c
    armature_per_torque_kg_m2: tuple[float, float] = (0.5e-4, 1.5e-4)  # Ia per Nm
    offset_per_torque: float = 0.002     # sensor offset U(−s, s) per Nm


@dataclass(frozen=True)
class TrueDynamics:
    """What the simulated robot really is: per identified link (payload included in the last one) and per joint."""

    links: list[LinkInertial]
    friction: JointFriction
    armature_kg_m2: np.ndarray
    torque_offset_nm: np.ndarray
    payload: LinkInertial | None = None
    perturbation: Perturbation | None = field(default=None)
    load: LinkInertial | None = None
    """A load carried on the flange besides (seeded_load, swapped between runs), already in its link; in the flange
    frame."""

    def standard_parameters(self, robot: RobotModel) -> np.ndarray:
        """π of the identification model (robot.friction terms from TRUTH_FRICTION): FV = fv1, FC = fc (the
        Coulomb level at speed), FO = sensor offset, IA = armature. Stribeck and fv2, fv3 have no column."""
        values = {"FV": self.friction.fv1, "FC": self.friction.fc, "FO": self.torque_offset_nm,
                  "IA": self.armature_kg_m2}
        unknown = [t for t in robot.friction if t not in values]
        if unknown:
            raise ValueError(f"no true value for friction terms {unknown}")
        return standard_vector(robot, self.links, np.column_stack([values[t] for t in robot.friction]))

    def sensed_torque_nm(self, robot: RobotModel, q_rad: np.ndarray, dq_rad_s: np.ndarray,
                         ddq_rad_s2: np.ndarray) -> np.ndarray:
        """What the joint torque sensors of the true robot read (noise-free, unfiltered) on a motion (K, n):
        inverse dynamics of the true links and armature, the friction of eq. (7) and the sensor offset; a presliding
        joint's friction state integrated along the motion from rest.
        `robot` must have the TRUTH_FRICTION terms. Where a joint rests (dq = 0 exactly) static friction is
        whatever holds it; this returns none there."""
        pi = self.standard_parameters(robot)
        linear = self.friction.fv1 * dq_rad_s + self.friction.fc * np.sign(dq_rad_s)
        state = self.friction.presliding_along(q_rad)
        return regressor(robot, q_rad, dq_rad_s, ddq_rad_s2) @ pi - linear + self.friction.torque_nm(dq_rad_s, state)


def nominal_links(robot: RobotModel) -> list[LinkInertial]:
    """The URDF's inertial of each identified link (fixed children lumped in), from the pinocchio model."""
    links = []
    for jid in range(1, robot.model.njoints):
        links.append(link_from_standard(robot.model.inertias[jid].toDynamicParameters()[PIN_INDEX]))
    return links


def urdf_dynamics(robot: RobotModel) -> TrueDynamics:
    """A robot exactly as its URDF says (an identified URDF, to simulate it beside the nominal one): inertials,
    <dynamics damping> as viscous and <dynamics friction> as Coulomb friction (no Stribeck rise), the armature
    pinocchio read, no sensor offset."""
    model, n = robot.model, robot.n_joints
    iv = [model.joints[jid].idx_v for jid in range(1, model.njoints)]
    fc, ones, zeros = model.friction[iv].copy(), np.ones(n), np.zeros(n)
    friction = JointFriction(model.damping[iv].copy(), zeros, zeros, fc, ones, fc, ones)
    return TrueDynamics(nominal_links(robot), friction, model.armature[iv].copy(), zeros)


def perturbed_dynamics(robot: RobotModel, torque_limits_nm: np.ndarray,
                       perturbation: Perturbation = Perturbation()) -> TrueDynamics:
    """The URDF robot changed as `perturbation` says, drawn from its seed."""
    p = perturbation
    rng = np.random.default_rng(p.seed)
    links = [_perturbed_link(link, p, rng) for link in nominal_links(robot)]
    payload = None
    if p.payload_mass_kg > 0.0:
        moment = 0.4 * p.payload_mass_kg * p.payload_radius_m**2
        payload = LinkInertial(p.payload_mass_kg, np.asarray(p.payload_com_m, dtype=float), moment * np.eye(3))
        links[-1] = link_from_standard(link_standard_parameters(links[-1]) + link_standard_parameters(payload))
    tau_max = np.asarray(torque_limits_nm, dtype=float)
    n = robot.n_joints
    fc = rng.uniform(*p.coulomb_per_torque, n) * tau_max
    vs = np.full(n, p.stribeck_velocity_rad_s)
    friction = JointFriction(
        fv1=rng.uniform(*p.viscous_per_torque_s, n) * tau_max, fv2=np.zeros(n), fv3=np.zeros(n),
        fs=p.static_over_coulomb * fc, fs1=vs, fc=fc, fc1=vs,
    )
    armature = rng.uniform(*p.armature_per_torque_kg_m2, n) * tau_max
    offset = rng.uniform(-p.offset_per_torque, p.offset_per_torque, n) * tau_max
    return TrueDynamics(links, _with_laws(friction, p, rng), armature, offset, payload, p)


def with_payload(truth: TrueDynamics, robot: RobotModel, load: LinkInertial, frame: str) -> TrueDynamics:
    """The same robot carrying `load` (its inertial in `frame`, the flange), lumped into the link of the joint that
    carries the frame (robot_id_model.payload maps its parameters to that link); `load` says which."""
    joint, rotation, origin_m = frame_placement(robot, frame)
    links = list(truth.links)
    added = to_joint_frame(rotation, origin_m) @ link_standard_parameters(load)
    links[joint] = link_from_standard(link_standard_parameters(links[joint]) + added)
    return dataclasses.replace(truth, links=links, load=load)


def _with_laws(friction: JointFriction, p: Perturbation, rng: np.random.Generator) -> JointFriction:
    """Each joint's law drawn from p.friction_laws (drawn last, so that a truth of one law is the same as before
    there were several), a sigmoid joint's shift too."""
    unknown = [law for law in p.friction_laws if law not in FRICTION_LAWS]
    if unknown or not p.friction_laws:
        raise ValueError(f"friction laws must be from {FRICTION_LAWS}, got {list(p.friction_laws)}")
    if p.friction_laws == ("stribeck",):
        return friction
    n = len(friction.fc)
    laws = tuple(str(law) for law in rng.choice(p.friction_laws, n))
    shift = rng.uniform(-p.sigmoid_shift, p.sigmoid_shift, n) * friction.fc1
    return dataclasses.replace(friction, law=laws,
                               shift_rad_s=np.where(np.array(laws) == "sigmoid", shift, 0.0),
                               presliding_rad=np.where(np.array(laws) == "presliding", p.presliding_rad, 0.0))


def _perturbed_link(link: LinkInertial, p: Perturbation, rng: np.random.Generator) -> LinkInertial:
    """One link with mass, CoM, second moments and principal axes changed; consistent by construction."""
    mass = link.mass_kg * rng.uniform(1.0 - p.mass_scale, 1.0 + p.mass_scale)
    com = np.asarray(link.com_m, dtype=float) + rng.uniform(-p.com_shift_m, p.com_shift_m, 3)
    sigma = sigma_matrix(inertia_six(link.inertia_com_kg_m2))
    moments, axes = np.linalg.eigh(sigma)
    moments = np.maximum(moments, p.min_second_moment_kg_m2)
    moments = moments * rng.uniform(1.0 - p.second_moment_scale, 1.0 + p.second_moment_scale, 3) * (
        mass / link.mass_kg)
    turn = Rotation.from_rotvec(np.deg2rad(p.axes_turn_deg) * rng.uniform(-1.0, 1.0, 3) / np.sqrt(3.0))
    axes = turn.as_matrix() @ axes
    sigma = (axes * moments) @ axes.T
    inertia = np.trace(sigma) * np.eye(3) - sigma
    return LinkInertial(mass, com, inertia)
