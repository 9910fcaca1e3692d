"""The one list of constraints every physical retrieval imposes (Xu et al. 2020, eqs. 16–18, the configured
orderings, and a margin from the consistency boundary), and the check of a solution against all of them.

µ per joint: [m, cx, cy, cz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz, <friction terms>] (eq. 12, robot_id_model.physical_vector):
the bounds (eq. 16) and the linear rows G·µ ≤ h (eqs. 17, 18, orderings) are stated in µ; the margin is on each
link body's Σ_C = ½tr(I_C)E − I_C (robot_id_model.physical.relative_margin). Both methods take their constraints
from here; the convex program restates them in the standard parameters (physical.lmi_rows).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from robot_id_estimator.physical.problem import PhysicalBounds
from robot_id_estimator.physical.size_bounds import SIZE_MARGIN
from robot_id_estimator.results.plausibility import SIZE
from robot_id_model.parameters import friction_columns, inertial_columns
from robot_id_model.physical import (
    consistency_violations,
    inertia_six,
    link_from_standard,
    relative_margin,
    sigma_matrix,
)
from robot_id_model.physical_vector import MU_NAMES, mu_from_pi
from robot_id_model.robot_model import RobotModel

if TYPE_CHECKING:
    from robot_id_estimator.physical.size_bounds import LinkSize

DIAG = (4, 7, 9)  # Ixx, Iyy, Izz within a link's µ block
OFF_DIAG = (5, 6, 8)  # Ixy, Ixz, Iyz
TOLERANCE = 1e-7
"""A constraint counts as met up to this fraction of its scale (solvers stop at about 1e-8)."""


def mu_index(robot: RobotModel) -> dict[str, int]:
    """Index in µ of every name: m1, cx1, ..., Izz1, FV1, ..."""
    names = MU_NAMES + robot.friction
    return {
        f"{name}{j + 1}": j * robot.params_per_joint + k for j in range(robot.n_joints) for k, name in enumerate(names)
    }


def linear_constraints(robot: RobotModel, bounds: PhysicalBounds) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """G µ ≤ h for eqs. (17), (18) (the triangle inequality with the margin) and the configured orderings, with a
    label per row. Raises ValueError for an ordering that does not name two entries of µ."""
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
    ratio, off_ratio, eps = bounds.max_inertia_ratio, bounds.max_off_diagonal_ratio, bounds.margin
    for cols in inertial_columns(robot):
        diag, off = cols[list(DIAG)], cols[list(OFF_DIAG)]
        for a in range(3):
            others = [d for d in range(3) if d != a]
            d_a, d_b, d_c = (names[diag[k]] for k in (a, *others))
            # I_a ≤ I_b + I_c − ε·(I_a + I_b + I_c): the diagonal's share of λ_min(Σ_C) ≥ ε·tr(Σ_C)
            margin = f" − {eps:g}·tr" if eps > 0.0 else ""
            row({diag[a]: 1.0 + eps, diag[others[0]]: eps - 1.0, diag[others[1]]: eps - 1.0}, 0.0,
                f"{d_a} ≤ {d_b} + {d_c}{margin} (eq. 18)")
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


def link_size(bounds: PhysicalBounds, j: int) -> LinkSize | None:
    """Link j's size bound (physical.size_bounds), or None."""
    return bounds.link_sizes[j] if j < len(bounds.link_sizes) else None


def body_spread(bounds: PhysicalBounds, j: int, pi_link: np.ndarray) -> float | None:
    """The spread of link j's own body against its size bound's hull, None without a bound."""
    size = link_size(bounds, j)
    if size is None:
        return None
    body = link_from_standard(body_pi(bounds, j, pi_link))
    return size.spread(sigma_matrix(inertia_six(body.inertia_com_kg_m2)))


def box_bounds(robot: RobotModel, bounds: PhysicalBounds) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bound of every entry of µ (eq. 16); off-diagonal inertias within ± the diagonal bound."""
    lower, upper = np.empty(robot.n_params), np.empty(robot.n_params)
    for j, cols in enumerate(inertial_columns(robot)):
        d = bounds.inertia_diag_upper_kg_m2[j]
        lower[cols] = [bounds.mass_lower_kg[j], *bounds.com_lower_m[j], 0.0, -d, -d, 0.0, -d, 0.0]
        upper[cols] = [bounds.mass_upper_kg[j], *bounds.com_upper_m[j], d, d, d, d, d, d]
    lower[friction_columns(robot)] = bounds.friction_lower
    upper[friction_columns(robot)] = bounds.friction_upper
    return lower, upper


def lumped_part(bounds: PhysicalBounds, j: int) -> np.ndarray | None:
    """The known standard parameters (10,) lumped onto joint j's link (a gripper), or None."""
    return bounds.fixed_inertials[j] if j < len(bounds.fixed_inertials) else None


def body_pi(bounds: PhysicalBounds, j: int, pi_link: np.ndarray) -> np.ndarray:
    """The standard parameters (10,) of link j's own body: the lumped known part taken off."""
    fixed = lumped_part(bounds, j)
    return pi_link if fixed is None else pi_link - fixed


class ConstraintSet:
    """Every configured constraint of one robot and bounds, built once, to check many parameter vectors."""

    def __init__(self, robot: RobotModel, bounds: PhysicalBounds, tol: float = TOLERANCE) -> None:
        self.robot, self.bounds, self.tol = robot, bounds, tol
        self.names = list(mu_index(robot))
        self.lower, self.upper = box_bounds(robot, bounds)
        scale = np.maximum(np.abs(self.upper), np.abs(self.lower))
        self.box_scale = np.where(np.isfinite(scale), np.maximum(scale, 1e-3), 1.0)
        self.g, self.h, self.labels = linear_constraints(robot, bounds)

    def violations(self, pi: np.ndarray) -> list[str]:
        """Every constraint that π does not meet, with the amount, in words; empty when all hold."""
        robot, tol = self.robot, self.tol
        if not np.all(np.isfinite(pi)):
            return ["parameters are not finite"]
        masses = pi[inertial_columns(robot)[:, 0]]
        if np.any(masses <= 0.0):
            return [f"link {robot.link_names[j]}: mass {masses[j]:g} kg is not positive"
                    for j in np.flatnonzero(masses <= 0)]
        mu, lower, upper = mu_from_pi(robot, pi), self.lower, self.upper
        out = [
            f"{self.names[i]} = {mu[i]:.6g} outside [{lower[i]:.6g}, {upper[i]:.6g}] by "
            f"{max(lower[i] - mu[i], mu[i] - upper[i]):.3g}"
            for i in np.flatnonzero((mu < lower - tol * self.box_scale) | (mu > upper + tol * self.box_scale))
        ]
        slack = self.g @ mu - self.h
        for k in np.flatnonzero(slack > tol * np.maximum(1.0, np.abs(self.g) @ np.abs(mu))):
            out.append(f"{self.labels[k]} violated by {slack[k]:.3g}")
        for j, cols in enumerate(inertial_columns(robot)):
            out += [f"link {robot.link_names[j]}: {r}" for r in self._link_reasons(j, pi[cols])]
        return out

    def active(self, pi: np.ndarray, fraction: float) -> list[str]:
        """The constraints π lies on: a bound within `fraction` of its range, a row within `fraction` of its terms,
        a margin within `fraction` of its largest value (1/3)."""
        mu = mu_from_pi(self.robot, pi)
        span = self.upper - self.lower
        out = [
            f"{self.names[i]} = {mu[i]:.6g} at its {word} bound {bound:.6g} (eq. 16)"
            for i in np.flatnonzero(np.isfinite(span) & (span > 0.0))
            for bound, word in ((self.lower[i], "lower"), (self.upper[i], "upper"))
            if abs(mu[i] - bound) <= fraction * span[i]
        ]
        slack = self.h - self.g @ mu
        out += [f"{self.labels[k]} (slack {slack[k]:.3g})"
                for k in np.flatnonzero(slack <= fraction * np.maximum(np.abs(self.g) @ np.abs(mu), 1e-12))]
        for j, cols in enumerate(inertial_columns(self.robot)):
            margin = relative_margin(link_from_standard(body_pi(self.bounds, j, pi[cols])).inertia_com_kg_m2)
            if margin - self.bounds.margin <= fraction / 3.0:
                out.append(f"link {self.robot.link_names[j]}: relative margin {margin:.4g} at its bound "
                           f"{self.bounds.margin:g}")
            spread, size = body_spread(self.bounds, j, pi[cols]), link_size(self.bounds, j)
            if spread is not None and spread <= size.fraction * (1.0 + SIZE_MARGIN) * (1.0 + fraction):
                out.append(f"link {self.robot.link_names[j]}: spread {spread:.4g} at its size bound "
                           f"{size.fraction:.3g} {SIZE}")
        return out

    def _link_reasons(self, j: int, pi_link: np.ndarray) -> list[str]:
        """Why link j's body is not consistent or too near the boundary (own part when something is lumped)."""
        reasons = consistency_violations(link_from_standard(pi_link))
        own = body_pi(self.bounds, j, pi_link)
        if lumped_part(self.bounds, j) is not None and not reasons:
            reasons = [f"own part: {r}" for r in consistency_violations(link_from_standard(own))]
        spread, size = body_spread(self.bounds, j, pi_link), link_size(self.bounds, j)
        if not reasons and spread is not None and spread < size.fraction * (1.0 - self.tol):
            reasons.append(f"spread {spread:.4g} below its size bound {size.fraction:.3g} {SIZE}")
        if not reasons and self.bounds.margin > 0.0:
            margin = relative_margin(link_from_standard(own).inertia_com_kg_m2)
            if margin < self.bounds.margin - self.tol:
                reasons.append(f"relative margin λ_min(Σ_C)/tr(Σ_C) = {margin:.4g} below {self.bounds.margin:g} "
                               f"by {self.bounds.margin - margin:.3g}")
        return reasons


def constraint_violations(robot: RobotModel, bounds: PhysicalBounds, pi: np.ndarray,
                          tol: float = TOLERANCE) -> list[str]:
    """Every configured constraint that π does not meet, with the amount, in words; empty when all hold."""
    return ConstraintSet(robot, bounds, tol).violations(pi)
