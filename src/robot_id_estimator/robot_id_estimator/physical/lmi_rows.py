"""The shared constraints (physical.constraints) restated in the standard parameters π for the convex program.

A row g·µ ≤ h of µ = (m, c, I_C, friction) becomes, with h_i = m_i·c_i and I_C = I_O − (hᵀh·E − h·hᵀ)/m
(Xu et al. 2020, eq. 14, the parallel-axis theorem):
- a row on one link's CoM alone: g_c·h_i ≤ h·m_i, linear (m_i > 0);
- any other row: linear terms (masses, I_O, friction) − Σ_i h_iᵀB_i h_i/m_i ≤ h, B_i = tr(A_i)E − A_i with A_i the
  symmetric matrix of the row's inertia coefficients. B_i = P_i − N_i (its positive and negative parts): the N_i part
  is convex (a quadratic over linear), the P_i part concave; the convex-concave procedure (Lipp and Boyd 2016)
  replaces the P_i part by its tangent at the current point, which bounds it from below, so that each convex
  subproblem is an inner approximation and its solution meets the row itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from robot_id_estimator.physical.constraints import box_bounds, linear_constraints, mu_index
from robot_id_estimator.physical.problem import PhysicalBounds
from robot_id_model.parameters import inertial_columns
from robot_id_model.physical import inertia_matrix
from robot_id_model.robot_model import RobotModel

_TRIANGLE = re.compile(r"I\w+ ≤ I\w+ \+ I\w+")


@dataclass(frozen=True)
class ConvexRows:
    """Rows L·π + Σ_t (terms) − tangent(P parts)·π ≤ rhs, each divided by its scale."""

    linear: np.ndarray  # (R, p)
    rhs: np.ndarray  # (R,)
    labels: tuple[str, ...]
    convex_u: np.ndarray  # (3·T, p): u_t = F_tᵀ·h of term t, stacked
    convex_mass: np.ndarray  # (T, p): selects the term's link mass
    convex_rows: np.ndarray  # (R, T): which row each convex term belongs to
    concave: tuple[tuple[int, int, np.ndarray], ...]  # (row, link, P) of each concave part

    def tangent_entries(self, robot: RobotModel) -> tuple[np.ndarray, np.ndarray]:
        """(row, π column) of every coefficient of the tangents: each concave part touches its link's m and h."""
        cols_all = inertial_columns(robot)
        entries = [(r, c) for r, j, _ in self.concave for c in cols_all[j][:4]]
        return np.array([e[0] for e in entries], dtype=int), np.array([e[1] for e in entries], dtype=int)

    def tangent(self, robot: RobotModel, pi_point: np.ndarray) -> np.ndarray:
        """Coefficients, in tangent_entries order, of the tangents of the concave parts h·P·h/m at π_point
        (homogeneous of degree one: the tangent has no constant)."""
        cols_all = inertial_columns(robot)
        out = []
        for _, j, p_matrix in self.concave:
            cols = cols_all[j]
            m, h = pi_point[cols[0]], pi_point[cols[1:4]]
            out += [-float(h @ p_matrix @ h) / m**2, *(2.0 * p_matrix @ h / m)]
        return np.array(out)


def _inertia_coefficients(g6: np.ndarray) -> np.ndarray:
    """A with tr(A·I) = g6·(Ixx, Ixy, Ixz, Iyy, Iyz, Izz)."""
    a = inertia_matrix(g6)
    return a - 0.5 * (a - np.diag(np.diag(a)))


def _rows_not_implied(robot: RobotModel, bounds: PhysicalBounds) -> tuple[list, list, list]:
    """(rows, right-hand sides, names) of the linear constraints and box bounds (eq. 16) that the margin's LMI does
    not imply: not the triangle inequalities, nor the inertia's own sign and off-diagonal bounds (I_C ⪰ 0 keeps the
    diagonal ≥ 0 and |off-diagonal| ≤ the diagonal's bound)."""
    g, h, labels = linear_constraints(robot, bounds)
    implied = [k for k, label in enumerate(labels) if _TRIANGLE.match(label)]  # by Σ_C ⪰ ε·tr(Σ_C)E
    names = [label for k, label in enumerate(labels) if k not in implied]
    rows, rhs = list(np.delete(g, implied, axis=0)), list(np.delete(h, implied))
    lower, upper = box_bounds(robot, bounds)
    cols_all = inertial_columns(robot)
    lower[cols_all[:, 4:10]] = -np.inf
    upper[cols_all[:, [5, 6, 8]]] = np.inf
    mu_names = list(mu_index(robot))
    for i in range(robot.n_params):
        for value, sign, word in ((upper[i], 1.0, "≤"), (lower[i], -1.0, "≥")):
            if np.isfinite(value):
                rows.append(sign * np.eye(robot.n_params)[i])
                rhs.append(sign * value)
                names.append(f"{mu_names[i]} {word} {value:.6g} (eq. 16)")
    return rows, rhs, names


def convex_rows(robot: RobotModel, bounds: PhysicalBounds, pi_scale: np.ndarray) -> ConvexRows:
    """Every bound (eq. 16) and row of physical.constraints.linear_constraints that the margin's LMI (Σ_C ⪰
    ε·tr(Σ_C)E, physical.lmi) does not imply, in π, each divided by
    |linear part|·pi_scale + |rhs|. Raises ValueError for a row that mixes a CoM coordinate with anything else (not
    convex in π; the multistart takes it)."""
    rows, rhs, names = _rows_not_implied(robot, bounds)
    p = robot.n_params
    cols_all = inertial_columns(robot)
    linear = np.zeros((len(rows), p))
    rhs_out = np.zeros(len(rows))
    u_rows, mass_rows, term_row, concave = [], [], [], []
    for r, (row, limit) in enumerate(zip(rows, rhs, strict=True)):
        inertial = np.zeros(p, dtype=bool)
        inertial[cols_all.ravel()] = True
        linear[r, ~inertial] = row[~inertial]  # friction
        com_links = [j for j, cols in enumerate(cols_all) if np.any(row[cols[1:4]] != 0.0)]
        if com_links:
            cols = cols_all[com_links[0]]
            if len(com_links) > 1 or np.count_nonzero(row) != np.count_nonzero(row[cols[1:4]]):
                raise ValueError(f"constraint '{names[r]}' mixes a centre of mass with other quantities: it is not "
                                 "convex in the standard parameters; use the multistart method")
            linear[r, cols[1:4]] = row[cols[1:4]]
            linear[r, cols[0]] = -limit
            continue
        rhs_out[r] = limit
        for j, cols in enumerate(cols_all):
            linear[r, cols[0]] = row[cols[0]]
            g6 = row[cols[4:10]]
            if not np.any(g6):
                continue
            linear[r, cols[4:10]] = g6
            a = _inertia_coefficients(g6)
            values, vectors = np.linalg.eigh(np.trace(a) * np.eye(3) - a)
            if np.any(values > 1e-12):
                concave.append((r, j, (vectors * np.maximum(values, 0.0)) @ vectors.T))
            if np.any(values < -1e-12):
                f = vectors * np.sqrt(np.maximum(-values, 0.0))  # N = F Fᵀ
                u = np.zeros((3, p))
                u[:, cols[1:4]] = f.T
                u_rows.append(u)
                mass_rows.append(np.eye(p)[cols[0]])
                term_row.append(r)
    scale = np.abs(linear) @ np.abs(pi_scale) + np.abs(rhs_out)
    scale = np.where(scale > 0.0, scale, 1.0)
    incidence = np.zeros((len(rows), len(term_row)))
    incidence[term_row, np.arange(len(term_row))] = 1.0
    return ConvexRows(
        linear / scale[:, None], rhs_out / scale, tuple(names),
        np.concatenate(u_rows) if u_rows else np.zeros((0, p)),
        np.array(mass_rows).reshape(-1, p), incidence / scale[:, None],
        tuple((r, j, pm / scale[r]) for r, j, pm in concave),
    )
