"""Safety constraints of an excitation motion, evaluated on sampled joint states.

Joint position (with a margin), velocity, acceleration, torque of the nominal model (pinocchio RNEA plus the
URDF friction), Cartesian speed of the flange (Luo et al. 2024, eq. 20), a workspace floor: no link origin and not
the flange below the plane z = floor_z_m of the base frame, and, with the robot's collision geometry, the distance
between every pair of non-adjacent links and from every link to the floor and the boxes (robot_id_model's capsules):
at least the clearance, or for a pair allowed closer, its allowed clearance (collision_geometry.ALLOWED_CLEARANCE_M).

Each constraint group (one kind on one joint, point or pair) has a normalised value g ≤ 0 per sample:
|q − mid|/half_range − 1, |dq|/dq_max − 1, |ddq|/ddq_max − 1, |τ|/τ_max − 1, (‖v‖² − v_max²)/(2 v_max²),
(floor_z − z)/1 m, (clearance of the pair − distance)/0.1 m; optionally with its partial derivatives with respect
to q, dq and ddq for the design.
"""

from __future__ import annotations

import dataclasses
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robot_id_model.collision_distance import capsule_distances
from robot_id_model.collision_geometry import CollisionGeometry, bind, pair_lists
from robot_id_model.robot_config import JointLimits, RobotConfig
from robot_id_model.robot_model import RobotModel

FLOOR_SCALE_M = 1.0
COLLISION_SCALE_M = 0.1
"""A distance's normalised value is (clearance − distance) / COLLISION_SCALE_M."""
DESIGN_CLEARANCE_MARGIN_M = 0.005
"""A design keeps this much more than the config's clearance, so that the controller's interpolation between the
samples it was checked on, and any finer grid, keeps the clearance itself."""
DEFAULT_TOLERANCE = 1e-9
"""A normalised value above this counts as a violation (numerical zero)."""
REST_TOLERANCE = 1e-9
"""Position error, velocity and acceleration below this count as at rest."""


@dataclass(frozen=True)
class DesignLimits(JointLimits):
    """A robot config's joint limits as a trajectory must respect them (positions already shrunk by the margin),
    with the joints they belong to, the workspace floor and the frame whose speed is limited."""

    joint_names: tuple[str, ...]
    floor_z_m: float
    flange_frame: str
    collision: CollisionGeometry | None = None
    """capsules, environment and clearance; None: distances are not checked"""

    def as_dict(self) -> dict:
        """The limits for a trajectory file (joint names are stored beside them; of the collision geometry, its
        clearance, file, boxes and the pairs allowed closer with their clearance, which a check of the file
        applies: trajectory_file.recorded_allowed_pairs)."""
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "collision":
                out[f.name] = None if value is None else {
                    "clearance_m": value.clearance_m, "geometry": pathlib.Path(value.source).name,
                    "boxes": [{"name": b.name, "centre_m": b.centre_m.tolist(), "size_m": (2 * b.half_size_m).tolist()}
                              for b in value.boxes],
                    "allowed_pairs": pair_lists(value.allowed_pairs), "allowed_clearance_m": value.allowed_clearance_m}
            elif f.name != "joint_names":
                out[f.name] = value.tolist() if isinstance(value, np.ndarray) else value
        return out


def design_limits(
    config: RobotConfig,
    position_margin_rad: float = 0.0,
    velocity_scale: float | Sequence[float] = 1.0,
    acceleration_scale: float | Sequence[float] = 1.0,
    torque_scale: float = 1.0,
    flange_speed_m_s: float | None = None,
    floor_z_m: float | None = None,
    clearance_margin_m: float = 0.0,
) -> DesignLimits:
    """Limits of a robot config, positions shrunk by the margin and the rest scaled (scale 1: the config); the
    collision geometry's floor is the limits' floor, its clearance and its allowed pairs' the config's plus
    `clearance_margin_m`."""
    lim = config.limits
    lower = lim.position_lower_rad + position_margin_rad
    upper = lim.position_upper_rad - position_margin_rad
    if np.any(lower >= upper):
        narrow = [config.joint_names[i] for i in np.flatnonzero(lower >= upper)]
        raise ValueError(f"position margin {position_margin_rad} rad leaves no range on joints {narrow}")
    floor = config.floor_z_m if floor_z_m is None else floor_z_m
    collision = config.collision
    if collision is not None:
        collision = dataclasses.replace(collision, floor_z_m=floor,
                                        clearance_m=collision.clearance_m + clearance_margin_m,
                                        allowed_clearance_m=collision.allowed_clearance_m + clearance_margin_m)
    return DesignLimits(
        joint_names=config.joint_names,
        position_lower_rad=lower,
        position_upper_rad=upper,
        velocity_rad_s=lim.velocity_rad_s * np.asarray(velocity_scale, dtype=float),
        acceleration_rad_s2=lim.acceleration_rad_s2 * np.asarray(acceleration_scale, dtype=float),
        torque_nm=lim.torque_nm * torque_scale,
        flange_speed_m_s=lim.flange_speed_m_s if flange_speed_m_s is None else flange_speed_m_s,
        floor_z_m=floor,
        flange_frame=config.flange_frame,
        collision=collision,
    )


@dataclass(frozen=True)
class ConstraintGroup:
    """One constraint on one joint or point over K samples: physical quantity, normalised value, partials."""

    constraint: str
    where: str
    unit: str
    quantity: np.ndarray
    """(K,) the physical quantity: q, |dq|, |ddq|, |τ|, ‖v‖, or z"""
    bound: np.ndarray
    """(K,) the bound it is compared with at each sample"""
    excess: np.ndarray
    """(K,) how far beyond the bound, in `unit` (negative inside)"""
    value: np.ndarray
    """(K,) normalised, ≤ 0 where the constraint holds"""
    d_q: np.ndarray | None = None
    d_dq: np.ndarray | None = None
    d_ddq: np.ndarray | None = None
    """(K, n) partial derivatives of `value`, when requested"""


def _frame_id(robot: RobotModel, frame: str) -> int:
    if not robot.model.existFrame(frame):
        raise ValueError(f"flange frame '{frame}' is not in the robot model")
    return robot.model.getFrameId(frame)


def _kinematics(robot: RobotModel, flange: int, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray, partials: bool):
    """Per sample: τ, flange velocity (world axes), heights of the link origins and the flange, and the joint
    placements (rotation, origin; with partials the joint Jacobians in world axes too); with partials."""
    import pinocchio as pin

    model, data = robot.model, robot.model.createData()
    k_samples, n = q.shape
    n_bodies = model.njoints
    tau = np.empty((k_samples, n))
    vel = np.empty((k_samples, 3))
    z = np.empty((k_samples, n + 1))
    rotation, origin = np.empty((k_samples, n_bodies, 3, 3)), np.empty((k_samples, n_bodies, 3))
    d = {}
    if partials:
        d = {key: np.zeros((k_samples, *shape)) for key, shape in
             (("tau_q", (n, n)), ("tau_dq", (n, n)), ("tau_ddq", (n, n)), ("vel_q", (3, n)), ("vel_dq", (3, n)),
              ("z_q", (n + 1, n)), ("joint_jacobian", (n_bodies, 6, n)))}
    joints = range(1, n_bodies)
    for k in range(k_samples):
        if partials:
            pin.computeRNEADerivatives(model, data, q[k], dq[k], ddq[k])
            d["tau_q"][k], d["tau_dq"][k], d["tau_ddq"][k] = data.dtau_dq, data.dtau_dv, data.M
            tau[k] = pin.rnea(model, data, q[k], dq[k], ddq[k])
            pin.computeForwardKinematicsDerivatives(model, data, q[k], dq[k], ddq[k])
            pin.updateFramePlacements(model, data)
            rot = data.oMf[flange].rotation
            v_local = pin.getFrameVelocity(model, data, flange, pin.LOCAL).linear
            dv_q, _ = pin.getFrameVelocityDerivatives(model, data, flange, pin.LOCAL)
            pin.computeJointJacobians(model, data, q[k])
            jac = pin.getFrameJacobian(model, data, flange, pin.LOCAL_WORLD_ALIGNED)
            vel[k] = rot @ v_local
            # d(R v)/dq_j = ω_j × (R v) + R ∂v/∂q_j, ω_j the world angular Jacobian column
            d["vel_q"][k] = np.cross(jac[3:].T, vel[k]).T + rot @ dv_q[:3]
            d["vel_dq"][k] = jac[:3]
            for j in joints:
                d["joint_jacobian"][k, j] = pin.getJointJacobian(model, data, j, pin.LOCAL_WORLD_ALIGNED)
            d["z_q"][k, :n] = d["joint_jacobian"][k, 1:, 2]
            d["z_q"][k, n] = jac[2]
        else:
            tau[k] = pin.rnea(model, data, q[k], dq[k], ddq[k])
            pin.forwardKinematics(model, data, q[k], dq[k])
            pin.updateFramePlacements(model, data)
            vel[k] = pin.getFrameVelocity(model, data, flange, pin.LOCAL_WORLD_ALIGNED).linear
        for j in range(n_bodies):
            rotation[k, j], origin[k, j] = data.oMi[j].rotation, data.oMi[j].translation
        z[k, n] = data.oMf[flange].translation[2]
    z[:, :n] = origin[:, 1:, 2]
    tau += model.damping * dq + model.friction * np.sign(dq)
    if partials:
        d["tau_dq"] += np.diag(model.damping)[None]
    return tau, vel, z, (rotation, origin), d


def collision_groups(robot: RobotModel, geometry: CollisionGeometry, placements: tuple[np.ndarray, np.ndarray],
                     jacobian: np.ndarray | None) -> list[ConstraintGroup]:
    """One group per checked pair (link–link, link–floor, link–box): distance against the pair's clearance."""
    distances = capsule_distances(geometry, bind(geometry, robot), *placements, jacobian)
    k_samples = distances.distance_m.shape[0]
    zeros = None if jacobian is None else np.zeros((k_samples, robot.n_joints))
    groups = []
    for g, (first, second) in enumerate(distances.names):
        distance, clearance = distances.distance_m[:, g], geometry.clearance_of(first, second)
        parts = (None,) * 3 if jacobian is None else (-distances.d_q[:, g] / COLLISION_SCALE_M, zeros, zeros)
        groups.append(ConstraintGroup("collision", f"{first}–{second}", "m", distance, np.full(k_samples, clearance),
                                      clearance - distance, (clearance - distance) / COLLISION_SCALE_M, *parts))
    return groups


def constraint_groups(
    robot: RobotModel,
    limits: DesignLimits,
    q_rad: np.ndarray,
    dq_rad_s: np.ndarray,
    ddq_rad_s2: np.ndarray,
    partials: bool = False,
) -> list[ConstraintGroup]:
    """Every constraint group on the samples (K, n); with `partials`, the derivatives of the normalised values."""
    q, dq, ddq = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q_rad, dq_rad_s, ddq_rad_s2))
    k_samples, n = q.shape
    if n != robot.n_joints or tuple(limits.joint_names) != tuple(robot.joint_names):
        raise ValueError(f"limits are for joints {limits.joint_names}, the robot has {robot.joint_names}")
    flange = _frame_id(robot, limits.flange_frame)
    tau, vel, z, placements, d = _kinematics(robot, flange, q, dq, ddq, partials)
    groups = _joint_groups(robot, limits, q, dq, ddq, tau, d, partials)
    zeros = np.zeros((k_samples, n)) if partials else None
    vmax = limits.flange_speed_m_s
    speed_sq = np.einsum("kx,kx->k", vel, vel)
    parts = (None,) * 3
    if partials:
        parts = (np.einsum("kx,kxj->kj", vel, d["vel_q"]) / vmax**2,
                 np.einsum("kx,kxj->kj", vel, d["vel_dq"]) / vmax**2, zeros)
    groups.append(ConstraintGroup(
        "flange_speed", limits.flange_frame, "m/s", np.sqrt(speed_sq), np.full(k_samples, vmax),
        np.sqrt(speed_sq) - vmax, (speed_sq - vmax**2) / (2 * vmax**2), *parts,
    ))
    for p, point in enumerate([*robot.link_names, limits.flange_frame]):
        below = limits.floor_z_m - z[:, p]
        groups.append(ConstraintGroup(
            "floor", point, "m", z[:, p], np.full(k_samples, limits.floor_z_m), below, below / FLOOR_SCALE_M,
            *((-d["z_q"][:, p, :] / FLOOR_SCALE_M, zeros, zeros) if partials else (None,) * 3),
        ))
    if limits.collision is not None:
        groups += collision_groups(robot, limits.collision, placements, d.get("joint_jacobian"))
    return groups


def _joint_groups(robot: RobotModel, limits: DesignLimits, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray,
                  tau: np.ndarray, d: dict | None, partials: bool) -> list[ConstraintGroup]:
    """Position, velocity, acceleration and torque of every joint, normalised by their limits."""
    k_samples, n = q.shape
    groups = []

    def one_joint(values: np.ndarray, i: int) -> np.ndarray:
        out = np.zeros((k_samples, n))
        out[:, i] = values
        return out

    zeros = np.zeros((k_samples, n)) if partials else None
    mid = 0.5 * (limits.position_upper_rad + limits.position_lower_rad)
    half = 0.5 * (limits.position_upper_rad - limits.position_lower_rad)
    for i, name in enumerate(robot.joint_names):
        side = np.where(q[:, i] >= mid[i], 1.0, -1.0)
        excess = np.abs(q[:, i] - mid[i]) - half[i]
        groups.append(ConstraintGroup(
            "position", name, "rad", q[:, i], np.where(side > 0, limits.position_upper_rad[i],
                                                       limits.position_lower_rad[i]),
            excess, excess / half[i], *((one_joint(side / half[i], i), zeros, zeros) if partials else (None,) * 3),
        ))
        for slot, (kind, x, lim, unit) in enumerate((
            ("velocity", dq, limits.velocity_rad_s[i], "rad/s"),
            ("acceleration", ddq, limits.acceleration_rad_s2[i], "rad/s²"),
            ("torque", tau, limits.torque_nm[i], "Nm"),
        )):
            magnitude = np.abs(x[:, i])
            parts: tuple = (None,) * 3
            if partials:
                sign = np.sign(x[:, i]) / lim
                if kind == "torque":
                    parts = tuple(sign[:, None] * d[key][:, i, :] for key in ("tau_q", "tau_dq", "tau_ddq"))
                else:
                    parts = (zeros, one_joint(sign, i), zeros) if slot == 0 else (zeros, zeros, one_joint(sign, i))
            groups.append(ConstraintGroup(
                kind, name, unit, magnitude, np.full(k_samples, lim), magnitude - lim, magnitude / lim - 1.0, *parts
            ))
    return groups


@dataclass(frozen=True)
class ConstraintCheck:
    """The worst sample of one constraint group."""

    constraint: str
    where: str
    unit: str
    value: float
    limit: float
    excess: float
    """how far beyond the limit, in `unit` (negative: the margin left)"""
    normalised: float
    """normalised value at the worst sample (> 0: violated)"""
    time_s: float

    @property
    def violated(self) -> bool:
        return not self.normalised <= DEFAULT_TOLERANCE  # a NaN sample (a NaN state) is no proof of safety

    def describe(self) -> str:
        if self.constraint == "floor":
            where = f"z {self.value:.4g} m, floor {self.limit:.4g} m"
            state = f"below it by {self.excess:.4g} m" if self.violated else f"above it by {-self.excess:.4g} m"
        elif self.constraint == "collision":
            where = f"distance {self.value:.4g} m, clearance {self.limit:.4g} m"
            state = f"closer by {self.excess:.4g} m" if self.violated else f"margin {-self.excess:.4g} m"
        else:
            where = f"{self.value:.4g} {self.unit}, limit {self.limit:.4g}"
            state = (f"exceeds by {self.excess:.4g} {self.unit}" if self.violated
                     else f"margin {-self.excess:.4g} {self.unit}")
        return f"{self.constraint:<13} {self.where:<14} {where} at t = {self.time_s:.3f} s: {state}"


@dataclass(frozen=True)
class CheckReport:
    """Worst value of every constraint on a time grid."""

    checks: tuple[ConstraintCheck, ...]
    n_samples: int

    @property
    def feasible(self) -> bool:
        return not any(c.violated for c in self.checks)

    @property
    def violations(self) -> tuple[ConstraintCheck, ...]:
        return tuple(sorted((c for c in self.checks if c.violated), key=lambda c: -c.normalised))

    def closest(self, constraint: str) -> ConstraintCheck | None:
        """The check of `constraint` nearest to (or furthest beyond) its limit; None if there is none."""
        return max((c for c in self.checks if c.constraint == constraint), key=lambda c: c.normalised, default=None)

    def least(self, constraint: str) -> ConstraintCheck | None:
        """The check of `constraint` with the smallest value (for distances: the closest pair, allowed or not);
        None if there is none."""
        return min((c for c in self.checks if c.constraint == constraint), key=lambda c: c.value, default=None)

    def binding(self, count: int = 5) -> tuple[ConstraintCheck, ...]:
        """The `count` constraints closest to (or furthest beyond) their limits."""
        return tuple(sorted(self.checks, key=lambda c: -c.normalised)[:count])

    def lines(self) -> list[str]:
        head = "FEASIBLE" if self.feasible else f"INFEASIBLE: {len(self.violations)} constraint(s) violated"
        shown = self.violations or self.binding()
        label = "violated" if self.violations else "closest to their limits"
        return [f"{head} (checked on {self.n_samples} samples); {label}:", *("  " + c.describe() for c in shown)]


def rest_checks(
    where: str, q_error_rad: np.ndarray, dq_rad_s: np.ndarray, ddq_rad_s2: np.ndarray, time_s: float = 0.0
) -> list[ConstraintCheck]:
    """Checks that a state is at rest where it should be, to REST_TOLERANCE."""
    checks = []
    for label, value, unit in (
        ("position error", np.abs(q_error_rad).max(), "rad"),
        ("velocity", np.abs(dq_rad_s).max(), "rad/s"),
        ("acceleration", np.abs(ddq_rad_s2).max(), "rad/s²"),
    ):
        checks.append(ConstraintCheck(
            "rest", f"{where} {label}", unit, float(value), REST_TOLERANCE, float(value - REST_TOLERANCE),
            float(value / REST_TOLERANCE - 1.0), time_s,
        ))
    return checks


def check_samples(
    robot: RobotModel,
    limits: DesignLimits,
    t_s: np.ndarray,
    q_rad: np.ndarray,
    dq_rad_s: np.ndarray,
    ddq_rad_s2: np.ndarray,
    extra: Sequence[ConstraintCheck] = (),
) -> CheckReport:
    """Worst sample of every constraint group on the given samples."""
    checks = list(extra)
    for g in constraint_groups(robot, limits, q_rad, dq_rad_s, ddq_rad_s2):
        k = int(np.argmax(g.value))
        checks.append(ConstraintCheck(
            g.constraint, g.where, g.unit, float(g.quantity[k]), float(g.bound[k]), float(g.excess[k]),
            float(g.value[k]), float(np.asarray(t_s, dtype=float)[k]),
        ))
    return CheckReport(tuple(checks), len(np.atleast_1d(t_s)))
