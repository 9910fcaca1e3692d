"""Least-squares estimation of base and essential parameters with their uncertainty.

Ordinary least squares is Xu et al. 2020, eq. (6); with per-joint torque noise variances it becomes the weighted least
squares that the maximum-likelihood estimator of Jia et al. 2019 and Wu et al. 2012 reduces to when position
noise is negligible.
Uncertainty is the relative standard deviation of Xu et al. 2020, eq. (7), computed from the weighted
covariance for WLS.
Essential parameters follow the iterative elimination of Xu et al. 2020, section II-A.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.signal

from robot_id_estimator.processing.motion_summary import STATIC_RANGE_RAD

RANK_TOL = 1e-8
"""A unit-norm regressor column whose pivoted-QR residual is below this is not identifiable on the data."""


@dataclass(frozen=True)
class ReducedSystem:
    """The (weighted) stacked least-squares problem reduced by one QR factorisation.

    With A = W^½·Yb stacked and column-scaled, A·P = Q·R; every fit on a subset of columns is then an exact
    b×b problem on `r_cols` = R·Pᵀ and z = Qᵀy, plus the part of y outside span(A), `outside_sq`.
    """

    r_cols: np.ndarray
    """(b, b) R·Pᵀ: column j belongs to base parameter j (scaled)."""
    z: np.ndarray
    outside_sq: float
    scale: np.ndarray
    """Column norms of A; scaled values are values·scale."""
    n_obs: int
    pivots: np.ndarray
    rank_diagonal: np.ndarray
    """|R_ii| of the pivoted QR, for the rank decision."""


@dataclass(frozen=True)
class Fit:
    """Estimate on a subset of base parameters; arrays are over `columns`."""

    columns: np.ndarray
    values: np.ndarray
    std: np.ndarray
    rsd_percent: np.ndarray
    residual_variance: float
    """σ²_ρ of Xu et al. 2020, eq. (7): ‖W^½(τ − Yb·πb)‖² / (Kn − b), W normalised to mean 1."""


@dataclass(frozen=True)
class Essential:
    """Essential parameters (Xu et al. 2020, section II-A): the kept columns, their fit, and what was dropped
    in order."""

    fit: Fit
    eliminated: tuple[int, ...]
    """Base-parameter indices in the order they were eliminated."""


def reduce_system(rows: np.ndarray, n_obs: int) -> ReducedSystem:
    """QR-reduce the stacked, weighted, column-scaled system W^½·Yb·πb = W^½·τ (Xu et al. 2020, eq. 5).

    `rows` = [A y] are any rows with the Gram matrix of the full weighted system [W^½·Yb W^½·τ]
    (reduction.weighted_rows), standing for `n_obs` equations; every result depends on that Gram matrix only.
    """
    a, y = rows[:, :-1], rows[:, -1]
    scale = np.linalg.norm(a, axis=0)
    zero = scale <= RANK_TOL * max(scale.max(), 1e-300)
    scale[zero] = 1.0
    a = np.where(zero, 0.0, a / scale)
    q, r, pivots = scipy.linalg.qr(a, mode="economic", pivoting=True)
    z = q.T @ y
    outside_sq = float(np.sum((y - q @ z) ** 2))
    r_cols = np.empty_like(r)
    r_cols[:, pivots] = r
    return ReducedSystem(r_cols, z, outside_sq, scale, n_obs, pivots, np.abs(np.diag(r)))


def fit_columns(system: ReducedSystem, columns: np.ndarray) -> Fit:
    """Least squares on the base parameters `columns`, with standard deviations and RSD (Xu et al. 2020, eq. 6, 7)."""
    columns = np.asarray(columns, dtype=int)
    r_sub = system.r_cols[:, columns]
    q_s, r_s = np.linalg.qr(r_sub)
    qz = q_s.T @ system.z
    scaled = scipy.linalg.solve_triangular(r_s, qz)
    inside = system.z - q_s @ qz
    residual_sq = system.outside_sq + float(inside @ inside)
    dof = system.n_obs - len(columns)
    sigma2 = max(residual_sq, 0.0) / dof if dof > 0 else np.nan
    r_inv = scipy.linalg.solve_triangular(r_s, np.eye(len(columns)))
    std_scaled = np.sqrt(sigma2 * np.sum(r_inv**2, axis=1))
    values = scaled / system.scale[columns]
    std = std_scaled / system.scale[columns]
    return Fit(columns, values, std, relative_std_dev(values, std), sigma2)


def relative_std_dev(values: np.ndarray, std: np.ndarray) -> np.ndarray:
    """σ_πj,r% = 100·σ_πj/|π_j| (Xu et al. 2020, eq. 7); infinite for a value of exactly zero."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(values != 0.0, 100.0 * std / np.abs(values), np.inf)


def rsd_filter_factor(fs_hz: float, cutoff_hz: float, order: int) -> float:
    """Factor by which eq. (7) understates standard deviations when the torque was low-pass filtered.

    Eq. (7) treats the residual as white. After a zero-phase Butterworth filter (gain |H|²) white noise keeps
    the fraction ρ = mean |H(f)|⁴ over 0..fs/2 of its variance, so σ²_ρ sees only ρ of the noise while the
    estimate, whose regressor lives below the cutoff, carries all of it: the standard deviation is larger by
    1/√ρ (about 4 for 6 Hz at 200 Hz).
    """
    if not 0.0 < cutoff_hz < 0.5 * fs_hz:
        return 1.0
    sos = scipy.signal.butter(order, cutoff_hz, fs=fs_hz, output="sos")
    _, response = scipy.signal.freqz_sos(sos, worN=4096, fs=fs_hz)
    rho = float(np.mean(np.abs(response) ** 4))
    return 1.0 / np.sqrt(min(max(rho, 1e-12), 1.0))


def identifiable_columns(system: ReducedSystem) -> np.ndarray:
    """Base parameters whose (unit-norm) columns are independent on the data, by pivoted QR."""
    rank = int(np.sum(system.rank_diagonal > RANK_TOL * max(system.rank_diagonal[0], 1e-300)))
    return np.sort(system.pivots[:rank])


def condition_number(a: np.ndarray, columns: np.ndarray | None = None, scaled: bool = False) -> float:
    """cond of the stacked base regressor (Xu et al. 2020, eq. 9) from any rows `a` with its Gram matrix
    (reduction.weighted_rows with unit weights), unweighted; unscaled as the field reports it, or with unit-norm
    columns (`scaled`), which does not depend on the parameters' units."""
    if columns is not None:
        a = a[:, columns]
    if scaled:
        a = a / np.maximum(np.linalg.norm(a, axis=0), 1e-300)
    singular = np.linalg.svd(a, compute_uv=False)
    if singular[-1] <= 0.0:
        return float("inf")
    return float(singular[0] / singular[-1])


def essential_parameters(
    system: ReducedSystem,
    columns: np.ndarray,
    value_threshold: float = 0.01,
    rsd_threshold_percent: float = 40.0,
) -> Essential:
    """Iterative elimination of Xu et al. 2020, section II-A.

    Starting from `columns`, re-estimate and drop, among the parameters with |value| < value_threshold and
    RSD > rsd_threshold_percent, the one with the largest RSD; stop when no parameter meets both thresholds.
    Restricting the choice to those parameters means a large, well-modelled parameter is never dropped.
    """
    kept = np.asarray(columns, dtype=int)
    eliminated: list[int] = []
    fit = fit_columns(system, kept)
    while len(kept) > 1:
        candidates = (np.abs(fit.values) < value_threshold) & (fit.rsd_percent > rsd_threshold_percent)
        if not np.any(candidates):
            break
        worst = int(np.argmax(np.where(candidates, fit.rsd_percent, -np.inf)))
        eliminated.append(int(kept[worst]))
        kept = np.delete(kept, worst)
        fit = fit_columns(system, kept)
    return Essential(fit, tuple(eliminated))


def joint_of(name: str) -> int | None:
    """1-based joint index of a parameter name such as ZZ3, MX2R or FV7; None if it has none."""
    match = re.search(r"(\d+)R?$", name)
    return int(match.group(1)) if match else None


def unexcited_reasons(
    system: ReducedSystem,
    names: Sequence[str],
    q_rad: np.ndarray,
    dq_rad_s: np.ndarray,
    ddq_rad_s2: np.ndarray,
) -> dict[int, str]:
    """For every base parameter the data do not identify, the reason, keyed by base-parameter index.

    A parameter is not identified when its scaled column is numerically zero or a combination of the columns
    of other parameters (pivoted QR, RANK_TOL). The message names the combination and the motion of the joint
    the parameter belongs to.
    """
    identifiable = identifiable_columns(system)
    missing = np.setdiff1d(np.arange(len(names)), identifiable)
    reasons = {}
    r_id = system.r_cols[:, identifiable]
    for j in missing:
        column = system.r_cols[:, j]
        norm = np.linalg.norm(column)
        if norm <= RANK_TOL:
            what = "its regressor column is zero on these data"
        else:
            scaled = np.linalg.lstsq(r_id, column, rcond=None)[0]
            coef = scaled * system.scale[j] / system.scale[identifiable]
            order = np.argsort(-np.abs(scaled))[:3]
            terms = " ".join(f"{coef[i]:+.3g}·{names[identifiable[i]]}" for i in order)
            what = f"its regressor column equals {terms} on these data"
        reasons[int(j)] = f"{names[j]}: not identifiable, {what}; {_motion(names[j], q_rad, dq_rad_s, ddq_rad_s2)}"
    return reasons


def _motion(name: str, q_rad: np.ndarray, dq_rad_s: np.ndarray, ddq_rad_s2: np.ndarray) -> str:
    """Why the data may not excite the parameter: the motion of its joint."""
    joint = joint_of(name)
    if joint is None or joint > q_rad.shape[1]:
        return "the data do not excite it"
    i = joint - 1
    span, v_max, a_max = np.ptp(q_rad[:, i]), np.max(np.abs(dq_rad_s[:, i])), np.max(np.abs(ddq_rad_s2[:, i]))
    figures = (f"range of q{joint} {span:.3g} rad, max |dq{joint}| = {v_max:.3g} rad/s, "
               f"max |ddq{joint}| = {a_max:.3g} rad/s²")
    if span < STATIC_RANGE_RAD:
        return f"joint {joint} does not move ({figures})"
    if name.startswith("FC") and (np.all(dq_rad_s[:, i] >= 0.0) or np.all(dq_rad_s[:, i] <= 0.0)):
        return f"joint {joint} never reverses, so sign(dq{joint}) is constant ({figures})"
    return f"the motion does not separate it ({figures})"
