"""Base parameters by the numerical QR method (Gautier 1990/1991, Hayat et al. 2015).

The columns of the stacked regressor W of random samples are taken in the order of π; a column whose
QR diagonal element vanishes is a combination of the columns before it. The base parameters are the
independent parameters, each regrouped with the dependent ones it absorbs: β = π_I + K_D·π_D, so that
Yb·β = Y·π with Yb = Y[:, I] (Xu et al. 2020, eq. 4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_id_model.parameters import parameter_names
from robot_id_model.regressor import regressor, stack
from robot_id_model.robot_model import RobotModel

RANK_TOL = 1e-8
"""A unit-norm column whose QR residual is below this is dependent on the columns before it."""

COEFFICIENT_TOL = 1e-9
"""Regrouping coefficients below this are numerical zeros."""


@dataclass(frozen=True)
class BaseParameters:
    """Independent columns of π and the map from standard to base parameters."""

    names: tuple[str, ...]
    expressions: tuple[str, ...]
    independent: np.ndarray
    """Indices in π of the base parameters' columns: Yb = Y[..., independent]."""
    beta_from_pi: np.ndarray
    """(b, p) matrix K with β = K·π."""

    @property
    def n_base(self) -> int:
        return len(self.independent)

    def values(self, pi: np.ndarray) -> np.ndarray:
        """β of a standard parameter vector π."""
        return self.beta_from_pi @ pi

    def regressor(self, y: np.ndarray) -> np.ndarray:
        """Base regressor Yb from a regressor Y (any leading shape, last axis p)."""
        return y[..., self.independent]


def random_states(robot: RobotModel, n_samples: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    """Random (q, dq, ddq) inside the position limits (±π where unbounded), |dq| ≤ 2 rad/s, |ddq| ≤ 5 rad/s²."""
    rng = np.random.default_rng(seed)
    lower, upper = robot.position_limits_rad
    lower, upper = np.where(np.isfinite(lower), lower, -np.pi), np.where(np.isfinite(upper), upper, np.pi)
    shape = (n_samples, robot.n_joints)
    q = rng.uniform(lower, upper, shape)
    dq = rng.uniform(-2.0, 2.0, shape)
    ddq = rng.uniform(-5.0, 5.0, shape)
    return q, dq, ddq


def base_parameters(robot: RobotModel, n_samples: int = 200, seed: int = 0) -> BaseParameters:
    """Base parameters of `robot`, deterministic for a given seed."""
    import scipy.linalg  # here, not at the top: robot_id_model's imports stay light for the command lines

    w = stack(regressor(robot, *random_states(robot, n_samples, seed)))
    norms = np.linalg.norm(w, axis=0)
    nonzero = norms > RANK_TOL * norms.max()
    w_unit = np.where(nonzero, w / np.where(nonzero, norms, 1.0), 0.0)

    r = scipy.linalg.qr(w_unit, mode="r")[0]
    independent = np.flatnonzero(np.abs(np.diag(r)) > RANK_TOL)
    pivoted_rank = _rank_pivoted(w_unit)
    if len(independent) != pivoted_rank:
        raise RuntimeError(
            f"base parameters: ordered QR found {len(independent)} independent columns, pivoted QR "
            f"{pivoted_rank}; increase n_samples"
        )
    dependent = np.setdiff1d(np.arange(w.shape[1]), independent)
    k_dep = np.linalg.lstsq(w[:, independent], w[:, dependent], rcond=None)[0]
    k_dep[np.abs(k_dep) < COEFFICIENT_TOL] = 0.0

    beta_from_pi = np.zeros((len(independent), w.shape[1]))
    beta_from_pi[np.arange(len(independent)), independent] = 1.0
    beta_from_pi[:, dependent] = k_dep
    names, expressions = _describe(parameter_names(robot), independent, dependent, k_dep)
    return BaseParameters(tuple(names), tuple(expressions), independent, beta_from_pi)


def _rank_pivoted(w_unit: np.ndarray) -> int:
    import scipy.linalg

    r = scipy.linalg.qr(w_unit, mode="r", pivoting=True)[0]
    return int(np.sum(np.abs(np.diag(r)) > RANK_TOL))


def _describe(
    names: list[str], independent: np.ndarray, dependent: np.ndarray, k_dep: np.ndarray
) -> tuple[list[str], list[str]]:
    """Readable base parameters as Hayat et al. 2015, Table 2: `ZZ2 + 0.16 M3 - YY3`; 'R' marks a regrouped one."""
    base_names, expressions = [], []
    for i, col in enumerate(independent):
        terms = [names[col]]
        for d, coef in zip(dependent, k_dep[i], strict=True):
            if abs(coef) < 1e-6:
                continue
            sign = "-" if coef < 0 else "+"
            magnitude = "" if np.isclose(abs(coef), 1.0, rtol=1e-9) else f"{abs(coef):.4g} "
            terms.append(f"{sign} {magnitude}{names[d]}")
        base_names.append(names[col] + ("R" if len(terms) > 1 else ""))
        expressions.append(" ".join(terms))
    return base_names, expressions
