"""The physical-parameter retrieval problem (Xu et al. 2020, section III): its bounds and constraints (eqs. 16–18),
the reduced objective of eq. (15), the result, and the check of a solution against every constraint.

µ per joint: [m, cx, cy, cz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz, <friction terms>] (eq. 12, robot_id_model.physical_vector).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from robot_id_model.parameters import friction_columns, inertial_columns, nominal_parameters
from robot_id_model.physical import LinkInertial, consistency_violations, link_from_standard
from robot_id_model.physical_vector import MU_NAMES, mu_from_pi
from robot_id_model.robot_model import RobotModel

_DIAG = (4, 7, 9)  # Ixx, Iyy, Izz within a link's µ block
_OFF_DIAG = (5, 6, 8)  # Ixy, Ixz, Iyz


class RetrievalError(RuntimeError):
    """The retrieval's solver failed; the message says how."""


@dataclass(frozen=True)
class PhysicalBounds:
    """Bounds and constraints of the retrieval (Xu et al. 2020, eqs. 16–18), all configurable per robot."""

    mass_lower_kg: np.ndarray
    mass_upper_kg: np.ndarray
    com_lower_m: np.ndarray  # (n, 3)
    com_upper_m: np.ndarray  # (n, 3)
    inertia_diag_upper_kg_m2: np.ndarray  # (n,) bound of Ixx, Iyy, Izz about the CoM
    total_mass_kg: tuple[float, float]
    friction_lower: np.ndarray  # (n, n_friction)
    friction_upper: np.ndarray
    max_inertia_ratio: float  # max diagonal ≤ ratio · min diagonal (eq. 18; Xu et al. 2020: 100)
    max_off_diagonal_ratio: float  # |off-diagonal| ≤ ratio · min diagonal (eq. 18; Xu et al. 2020: 0.1)
    orderings: tuple[str, ...] = ()  # robot-specific linear orderings such as "Izz3 <= Ixx3"
    fixed_inertials: tuple[np.ndarray | None, ...] = ()
    """Per joint, the standard parameters (10,) of links lumped onto it that are known (a gripper); the
    link's own part π_i − π_fixed must then be consistent too. Empty: nothing lumped."""


def default_bounds(
    robot: RobotModel,
    mass_factor: tuple[float, float] = (0.5, 2.0),
    com_margin_m: float = 0.1,
    inertia_factor: float = 5.0,
    total_mass_factor: tuple[float, float] = (0.8, 1.2),
    friction_upper: Sequence[float] | None = None,
    fixed_inertials: Sequence[np.ndarray | None] = (),
    max_inertia_ratio: float | None = None,
    max_off_diagonal_ratio: float | None = None,
    orderings: Sequence[str] = (),
) -> PhysicalBounds:
    """Bounds around the nominal (URDF) model: masses and total mass scaled, CoM within a margin,
    inertia diagonal up to `inertia_factor` × the nominal link's largest principal moment (at least 0.01 kg m²).

    The eq. (18) ratios, unless given, are Xu et al.'s (2020) (100 and 0.1) or twice the nominal model's worst ratio,
    whichever is larger, so that the nominal model is always feasible (the iiwa CAD inertias have off-diagonal terms up
    to 0.4 of the smallest diagonal one). Friction: viscous and Coulomb in [0, 50], offset in ±50, rotor
    inertia in [0, 5].
    """
    pi0 = nominal_parameters(robot)
    links = [link_from_standard(pi0[cols]) for cols in inertial_columns(robot)]
    mass = np.array([link.mass_kg for link in links])
    com = np.array([link.com_m for link in links])
    moments = np.array([np.linalg.eigvalsh(link.inertia_com_kg_m2)[-1] for link in links])
    diagonals = np.array([np.diag(link.inertia_com_kg_m2) for link in links])
    off_diagonals = np.array([np.abs(link.inertia_com_kg_m2[np.triu_indices(3, 1)]) for link in links])
    inertia_ratio = float(np.max(diagonals.max(axis=1) / diagonals.min(axis=1)))
    off_diagonal_ratio = float(np.max(off_diagonals.max(axis=1) / diagonals.min(axis=1)))
    limits = {"FV": (0.0, 50.0), "FC": (0.0, 50.0), "FO": (-50.0, 50.0), "IA": (0.0, 5.0)}
    lower = np.array([[limits[t][0] for t in robot.friction]] * robot.n_joints).reshape(robot.n_joints, -1)
    upper = np.array([[limits[t][1] for t in robot.friction]] * robot.n_joints).reshape(robot.n_joints, -1)
    if friction_upper is not None:
        upper = np.broadcast_to(np.asarray(friction_upper, dtype=float), upper.shape).copy()
    return PhysicalBounds(
        mass_lower_kg=mass * mass_factor[0],
        mass_upper_kg=mass * mass_factor[1],
        com_lower_m=com - com_margin_m,
        com_upper_m=com + com_margin_m,
        inertia_diag_upper_kg_m2=np.maximum(inertia_factor * moments, 0.01),
        total_mass_kg=(mass.sum() * total_mass_factor[0], mass.sum() * total_mass_factor[1]),
        friction_lower=lower,
        friction_upper=upper,
        max_inertia_ratio=max_inertia_ratio or max(100.0, 2.0 * inertia_ratio),
        max_off_diagonal_ratio=max_off_diagonal_ratio or max(0.1, 2.0 * off_diagonal_ratio),
        orderings=tuple(orderings),
        fixed_inertials=tuple(fixed_inertials),
    )


@dataclass(frozen=True)
class RetrievalResult:
    """Retrieved parameters with the figures that say how good they are."""

    method: str
    pi: np.ndarray  # standard parameters π(µ̂)
    links: tuple[LinkInertial, ...]
    friction: np.ndarray  # (n, n_friction)
    residual_norm_nm: float  # ‖τ − W·E·π‖ (eq. 15)
    unconstrained_residual_norm_nm: float  # least-squares residual of the same W, τ without constraints
    violations: tuple[str, ...]  # configured constraints not met (empty on success)
    wall_time_s: float
    starts: int = 1
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def residual_increase(self) -> float:
        """Relative increase of the residual over the unconstrained solution (goal: ≤ 0.02)."""
        return self.residual_norm_nm / self.unconstrained_residual_norm_nm - 1.0


@dataclass(frozen=True)
class Problem:
    """‖τ − Aπ‖² = πᵀQπ − 2bᵀπ + c with A = W·E, reduced once so that K never enters the iterations."""

    q: np.ndarray
    b: np.ndarray
    c: float
    r: np.ndarray  # upper-triangular factor of A (A = Q_A R), for the convex program
    z: np.ndarray  # Q_Aᵀ τ
    unconstrained_residual: float


def reduce_problem(w_target: np.ndarray, tau_nm: np.ndarray, target_from_pi: np.ndarray,
                   outside_sq_nm2: float = 0.0) -> Problem:
    """The Problem of ‖τ − W·E·π‖² + `outside_sq_nm2`: W and τ may be a reduced system (the estimate's
    triangular factor and projected torque), the constant the part of the torque no parameter explains."""
    a = w_target @ target_from_pi
    q_a, r = np.linalg.qr(a)
    z = q_a.T @ tau_nm
    c = float(tau_nm @ tau_nm) + outside_sq_nm2
    theta = np.linalg.lstsq(w_target, tau_nm, rcond=None)[0]
    unconstrained = float(np.sqrt(np.sum((tau_nm - w_target @ theta) ** 2) + outside_sq_nm2))
    return Problem(a.T @ a, a.T @ tau_nm, c, r, z, unconstrained)


def residual_norm(problem: Problem, pi: np.ndarray) -> float:
    return float(np.sqrt(max(pi @ problem.q @ pi - 2.0 * problem.b @ pi + problem.c, 0.0)))


def mu_index(robot: RobotModel) -> dict[str, int]:
    """Index in µ of every name: m1, cx1, ..., Izz1, FV1, ..."""
    names = MU_NAMES + robot.friction
    return {
        f"{name}{j + 1}": j * robot.params_per_joint + k for j in range(robot.n_joints) for k, name in enumerate(names)
    }


def linear_constraints(robot: RobotModel, bounds: PhysicalBounds) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """G µ ≤ h for eqs. (17), (18) and the configured orderings, with a label per row."""
    p = robot.n_params
    rows, rhs, labels = [], [], []
    names = list(mu_index(robot))

    def row(entries: dict[int, float], limit: float, label: str) -> None:
        g = np.zeros(p)
        for index, value in entries.items():
            g[index] += value
        rows.append(g)
        rhs.append(limit)
        labels.append(label)

    masses = inertial_columns(robot)[:, 0]
    low, high = bounds.total_mass_kg
    row(dict.fromkeys(masses, 1.0), high, f"total mass ≤ {high:.4g} kg (eq. 17)")
    row(dict.fromkeys(masses, -1.0), -low, f"total mass ≥ {low:.4g} kg (eq. 17)")
    ratio, off_ratio = bounds.max_inertia_ratio, bounds.max_off_diagonal_ratio
    for cols in inertial_columns(robot):
        diag, off = cols[list(_DIAG)], cols[list(_OFF_DIAG)]
        for a in range(3):
            others = [d for d in range(3) if d != a]
            d_a, d_b, d_c = (names[diag[k]] for k in (a, *others))
            row({diag[a]: 1.0, diag[others[0]]: -1.0, diag[others[1]]: -1.0}, 0.0, f"{d_a} ≤ {d_b} + {d_c} (eq. 18)")
            for b in others:
                row({diag[a]: 1.0, diag[b]: -ratio}, 0.0, f"{d_a} ≤ {ratio:.3g}·{names[diag[b]]} (eq. 18)")
            for o in off:
                label = f"|{names[o]}| ≤ {off_ratio:.3g}·{d_a} (eq. 18)"
                row({o: 1.0, diag[a]: -off_ratio}, 0.0, label)
                row({o: -1.0, diag[a]: -off_ratio}, 0.0, label)
    index = mu_index(robot)
    for ordering in bounds.orderings:
        lhs, _, rhs_name = ordering.partition("<=")
        lhs, rhs_name = lhs.strip(), rhs_name.strip()
        if lhs not in index or rhs_name not in index:
            raise ValueError(f"ordering '{ordering}': use 'A <= B' with names such as {names[:10]}")
        row({index[lhs]: 1.0, index[rhs_name]: -1.0}, 0.0, f"{lhs} ≤ {rhs_name} (ordering)")
    return np.array(rows), np.array(rhs), labels


def box_bounds(robot: RobotModel, bounds: PhysicalBounds) -> tuple[np.ndarray, np.ndarray]:
    lower, upper = np.empty(robot.n_params), np.empty(robot.n_params)
    for j, cols in enumerate(inertial_columns(robot)):
        lower[cols] = [bounds.mass_lower_kg[j], *bounds.com_lower_m[j], 0.0, -np.inf, -np.inf, 0.0, -np.inf, 0.0]
        d = bounds.inertia_diag_upper_kg_m2[j]
        upper[cols] = [bounds.mass_upper_kg[j], *bounds.com_upper_m[j], d, d, d, d, d, d]
        lower[cols[[5, 6, 8]]] = -d
    lower[friction_columns(robot)] = bounds.friction_lower
    upper[friction_columns(robot)] = bounds.friction_upper
    return lower, upper


def constraint_violations(robot: RobotModel, bounds: PhysicalBounds, pi: np.ndarray, tol: float = 1e-7) -> list[str]:
    """Every configured constraint that π does not meet, in words; empty when all hold."""
    mu = mu_from_pi(robot, pi)
    names = list(mu_index(robot))
    lower, upper = box_bounds(robot, bounds)
    scale = np.maximum(np.abs(upper), np.abs(lower))
    scale = np.where(np.isfinite(scale), np.maximum(scale, 1e-3), 1.0)
    out = [
        f"{names[i]} = {mu[i]:.6g} outside [{lower[i]:.6g}, {upper[i]:.6g}]"
        for i in range(len(mu))
        if mu[i] < lower[i] - tol * scale[i] or mu[i] > upper[i] + tol * scale[i]
    ]
    g, h, labels = linear_constraints(robot, bounds)
    slack = g @ mu - h
    for k in np.flatnonzero(slack > tol * np.maximum(1.0, np.abs(g) @ np.abs(mu))):
        out.append(f"{labels[k]} violated by {slack[k]:.3g}")
    for j, cols in enumerate(inertial_columns(robot)):
        reasons = consistency_violations(link_from_standard(pi[cols]))
        fixed = bounds.fixed_inertials[j] if j < len(bounds.fixed_inertials) else None
        if fixed is not None and not reasons:
            reasons = [f"own part: {r}" for r in consistency_violations(link_from_standard(pi[cols] - fixed))]
        out += [f"link {robot.link_names[j]}: {r}" for r in reasons]
    return out


def retrieval_result(robot, method, pi, residual, problem, violations, t0, starts, notes) -> RetrievalResult:
    links = tuple(link_from_standard(pi[cols]) for cols in inertial_columns(robot))
    return RetrievalResult(
        method=method,
        pi=pi,
        links=links,
        friction=pi[friction_columns(robot)],
        residual_norm_nm=residual,
        unconstrained_residual_norm_nm=problem.unconstrained_residual,
        violations=tuple(violations),
        wall_time_s=time.perf_counter() - t0,
        starts=starts,
        notes=tuple(notes),
    )
