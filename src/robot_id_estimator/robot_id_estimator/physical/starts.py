"""Starts of the multi-start that meet every constraint by construction.

In µ (Xu et al. 2020, eq. 12) the bounds (eq. 16), the linear rows (eqs. 17, 18, orderings), the margin
Σ_C − ε·tr(Σ_C)E ⪰ 0 and the size bound Σ_C − f·m_0·D ⪰ 0 (physical.size_bounds) are all convex, so a random point
of the bounds (random mass, CoM, principal moments and rotation) is projected onto their intersection by one small
convex program. The constraints that are not convex in µ, the margin and size bound of a link's own part when a
known part is lumped onto it, are met by moving the start towards a feasible anchor (the convex program's solution)
just as far as needed: every other constraint holds along that segment, the set being convex. Start k draws from its
own child of the seed, so that the starts do not depend on how many there are or on how many processes run them.
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np

from robot_id_estimator.physical.constraints import ConstraintSet, box_bounds, link_size, lumped_part
from robot_id_estimator.physical.problem import PhysicalBounds
from robot_id_model.parameters import inertial_columns
from robot_id_model.physical import inertia_six
from robot_id_model.physical_vector import pi_from_mu
from robot_id_model.robot_model import RobotModel

BISECTION_STEPS = 30


def random_point(robot: RobotModel, bounds: PhysicalBounds, rng: np.random.Generator) -> np.ndarray:
    """µ uniform in the bounds, each link's inertia of random principal moments (up to half the diagonal bound)
    and a random rotation."""
    lower, upper = box_bounds(robot, bounds)
    mu = rng.uniform(np.where(np.isfinite(lower), lower, -1.0), np.where(np.isfinite(upper), upper, 1.0))
    for j, cols in enumerate(inertial_columns(robot)):
        d = bounds.inertia_diag_upper_kg_m2[j]
        moments = rng.uniform(0.05 * d, 0.5 * d, 3)
        rotation = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        mu[cols[4:10]] = inertia_six(rotation @ np.diag(moments) @ rotation.T)
    return mu


class Projection:
    """The convex program min ‖(µ − µ_target)/span‖² over the convex constraints in µ, compiled once."""

    def __init__(self, robot: RobotModel, bounds: PhysicalBounds) -> None:
        checks = ConstraintSet(robot, bounds)
        lower, upper, g, h = checks.lower, checks.upper, checks.g, checks.h
        span = np.where(np.isfinite(upper - lower) & (upper > lower), upper - lower, 1.0)
        self.mu = cp.Variable(robot.n_params)
        self.target = cp.Parameter(robot.n_params)
        constraints = [g @ self.mu <= h]
        finite_low, finite_up = np.isfinite(lower), np.isfinite(upper)
        constraints += [self.mu[finite_low] >= lower[finite_low], self.mu[finite_up] <= upper[finite_up]]
        eps = bounds.margin
        for j, cols in enumerate(inertial_columns(robot)):
            xx, xy, xz, yy, yz, zz = (self.mu[c] for c in cols[4:10])
            half = 0.5 * (xx + yy + zz)  # Σ_C = ½tr(I)E − I, tr(Σ_C) = ½tr(I)
            sigma = cp.bmat([[half - xx, -xy, -xz], [-xy, half - yy, -yz], [-xz, -yz, half - zz]])
            constraints.append(sigma - eps * half * np.eye(3) >> 0)
            size = link_size(bounds, j)
            if size is not None and lumped_part(bounds, j) is None:  # a lumped link's own part: _towards
                constraints.append(sigma - size.bound_kg_m2 >> 0)
        objective = cp.sum_squares(cp.multiply(1.0 / span, self.mu - self.target))
        self.program = cp.Problem(cp.Minimize(objective), constraints)

    def __call__(self, target: np.ndarray) -> np.ndarray | None:
        """The projection of `target`, None if the solver fails."""
        self.target.value = target
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                self.program.solve(solver=cp.CLARABEL, max_threads=1)
        except cp.error.SolverError:
            return None
        return None if self.mu.value is None else np.asarray(self.mu.value)


def feasible_starts(robot: RobotModel, bounds: PhysicalBounds, count: int, seed: int,
                    anchor_mu: np.ndarray | None) -> list[np.ndarray]:
    """`count` starts, each a random point projected onto the convex constraints and, where that leaves a violated
    constraint, moved towards `anchor_mu` (feasible) until none is left. Without an anchor such a start stays as
    projected (the local solver then starts outside)."""
    project = Projection(robot, bounds)
    out = []
    for child in np.random.SeedSequence(seed).spawn(count):
        mu = random_point(robot, bounds, np.random.default_rng(child))
        projected = project(mu)
        mu = mu if projected is None else projected
        if anchor_mu is not None:
            mu = _towards(robot, bounds, mu, anchor_mu)
        out.append(mu)
    return out


def _towards(robot: RobotModel, bounds: PhysicalBounds, mu: np.ndarray, anchor_mu: np.ndarray) -> np.ndarray:
    """The point of the segment from `mu` to `anchor_mu` nearest `mu` that meets every constraint (bisection)."""
    checks = ConstraintSet(robot, bounds)

    def feasible(t: float) -> bool:
        return not checks.violations(pi_from_mu(robot, (1.0 - t) * mu + t * anchor_mu))

    if feasible(0.0):
        return mu
    low, high = 0.0, 1.0
    for _ in range(BISECTION_STEPS):
        middle = 0.5 * (low + high)
        low, high = (low, middle) if feasible(middle) else (middle, high)
    return (1.0 - high) * mu + high * anchor_mu
