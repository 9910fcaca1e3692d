"""The physical-parameter retrieval problem (Xu et al. 2020, section III): its bounds (eqs. 16–18), the reduced
objective of eq. (15) and the result. The constraints themselves, one list for every method, and the check of a
solution against them are robot_id_estimator.physical.constraints.

µ per joint: [m, cx, cy, cz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz, <friction terms>] (eq. 12, robot_id_model.physical_vector).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from robot_id_estimator.settings import DEFAULT_MARGIN
from robot_id_model.parameters import friction_columns, inertial_columns, nominal_parameters
from robot_id_model.physical import LinkInertial, link_from_standard, link_standard_parameters
from robot_id_model.robot_model import RobotModel

if TYPE_CHECKING:
    from robot_id_estimator.physical.size_bounds import LinkSize


TOOL_REACH_M = 0.15
"""A tool's CoM lies within this distance of its link's CoM (physical bounds of the last link)."""
TOOL_FRACTION = 0.2
"""Without a rated payload, a tool of up to this fraction of the arm's URDF mass (rated payloads: Gen3 lite 9 %,
Panda 17 %, UR5e 24 %, iiwa7 30 %, iiwa14 47 % of the arm's mass)."""


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
    margin: float = DEFAULT_MARGIN
    """Every link body (a link's own part when something is lumped onto it) has λ_min(Σ_C) ≥ margin·tr(Σ_C): its
    principal moments meet the triangle inequality by at least margin·tr(I_C) (relative_margin)."""
    link_sizes: tuple[LinkSize | None, ...] = ()
    """Per joint, the lower bound of its link body's second moments from the link's size (physical.size_bounds);
    empty or None: no such bound."""
    tool_mass_kg: float = 0.0
    """The heaviest tool the URDF does not hold that the last link may carry (default_bounds)."""


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
    margin: float = DEFAULT_MARGIN,
    link_sizes: Sequence[LinkSize | None] = (),
    tool_mass_kg: float = 0.0,
) -> PhysicalBounds:
    """Bounds around the nominal (URDF) model: masses and total mass scaled, CoM within a margin,
    inertia diagonal up to `inertia_factor` × the nominal link's largest principal moment (at least 0.01 kg m²).

    The eq. (18) ratios, unless given, are Xu et al.'s (2020) (100 and 0.1) or twice the nominal model's worst ratio,
    whichever is larger, so that the nominal model is always feasible (the iiwa CAD inertias have off-diagonal terms up
    to 0.4 of the smallest diagonal one). Friction: viscous and Coulomb in [0, 50], offset in ±50, rotor inertia in
    [0, 5]. `margin`, `link_sizes`: PhysicalBounds'. A tool of up to `tool_mass_kg` on the last link, its CoM within
    TOOL_REACH_M of the link's, widens that link's mass, CoM and inertia bounds and the total's for it.
    """
    if not 0.0 <= margin < 1.0 / 3.0:
        raise ValueError(f"the consistency margin must be in [0, 1/3), got {margin}")
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
    tool, reach_m = np.zeros(len(mass)), np.zeros((len(mass), 1))
    tool[-1], reach_m[-1] = tool_mass_kg, TOOL_REACH_M if tool_mass_kg > 0.0 else 0.0
    return PhysicalBounds(
        mass_lower_kg=mass * mass_factor[0],
        mass_upper_kg=mass * mass_factor[1] + tool,
        com_lower_m=com - com_margin_m - reach_m,
        com_upper_m=com + com_margin_m + reach_m,
        inertia_diag_upper_kg_m2=np.maximum(inertia_factor * moments, 0.01) + tool * TOOL_REACH_M**2,
        total_mass_kg=(mass.sum() * total_mass_factor[0], mass.sum() * total_mass_factor[1] + tool_mass_kg),
        friction_lower=lower,
        friction_upper=upper,
        max_inertia_ratio=max_inertia_ratio or max(100.0, 2.0 * inertia_ratio),
        max_off_diagonal_ratio=max_off_diagonal_ratio or max(0.1, 2.0 * off_diagonal_ratio),
        orderings=tuple(orderings),
        fixed_inertials=tuple(fixed_inertials),
        margin=margin,
        link_sizes=tuple(link_sizes),
        tool_mass_kg=tool_mass_kg,
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


def pull_scales(robot: RobotModel, bounds: PhysicalBounds) -> np.ndarray:
    """(n_params,) each standard parameter's scale in the Euclidean pull, D = Σ (π_k − π0_k)² / scale_k: its link's
    ‖π0_i‖²; the last link's mass and first moments also that of the tool it may carry (its mass TOOL_REACH_M off),
    so that taking the tool costs no more than a link's own relative change. Its second moments keep their pull:
    where the data barely see them (a joint that hardly moves) the pull is what holds them."""
    pi0 = nominal_parameters(robot)
    scales = np.ones(len(pi0))
    for cols in inertial_columns(robot):
        scales[cols] = max(float(np.sum(pi0[cols] ** 2)), 1e-12)
    tool = LinkInertial(bounds.tool_mass_kg, np.full(3, TOOL_REACH_M / np.sqrt(3.0)), np.zeros((3, 3)))
    scales[inertial_columns(robot)[-1][:4]] += float(np.sum(link_standard_parameters(tool)[:4] ** 2))
    return scales


def fit_scale(problem: Problem) -> float:
    """The unconstrained fit's squared residual (at least 1e-6 of the torque's, so that noise-free data keep the
    objective well scaled): the unit of both retrievals' objectives, in which the pull towards the URDF model is
    weighed."""
    return max(problem.unconstrained_residual**2, 1e-6 * problem.c, 1e-300)


def residual_norm(problem: Problem, pi: np.ndarray) -> float:
    return float(np.sqrt(max(pi @ problem.q @ pi - 2.0 * problem.b @ pi + problem.c, 0.0)))


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
