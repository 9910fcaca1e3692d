"""The Stribeck friction law of Luo et al. 2024, eq. (7): its coefficients and the torque they give
(friction.stribeck_fit fits it to sweeps; the processing, the exports and the validation evaluate it).

Not a Coulomb-law family (robot_id_model.coulomb_laws), on purpose: a family is the shape of the Coulomb column,
a signal the linear regression multiplies by FC beside the viscous and offset columns, chosen among candidates by
held-out data. Eq. (7) fitted to a friction sweep is a joint's whole friction (viscous, quadratic and cubic terms,
static and Coulomb levels, two velocities: seven coefficients, nonlinear in two), fitted apart from the regression
and taking the place of the joint's linear friction columns. The Coulomb family "stribeck" is eq. (7)'s shape with
one velocity, times FC."""

from __future__ import annotations

import numpy as np

STRIBECK_NAMES = ("fv1", "fv2", "fv3", "fs", "fs1", "fc", "fc1")
"""Coefficients of Luo et al. 2024, eq. (7), in this order: viscous [Nm s/rad], quadratic [Nm s²/rad²], cubic
[Nm s³/rad³], static [Nm], static (Stribeck) velocity [rad/s], Coulomb [Nm], Coulomb velocity [rad/s]."""


def stribeck_torque(dq_rad_s: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """Friction torque of Luo et al. 2024, eq. (7).

    τ_f = fv1·q̇ + fv2·sgn(q̇)·q̇² + fv3·q̇³ + fs·sgn(q̇)·exp(−(q̇/fs1)²) + fc·sgn(q̇)·(1 − exp(−(q̇/fc1)²)).
    `coefficients` is (7,) for one joint or (n, 7) for the columns of a (K, n) `dq_rad_s`.
    """
    dq = np.asarray(dq_rad_s, dtype=float)
    fv1, fv2, fv3, fs, fs1, fc, fc1 = np.moveaxis(np.asarray(coefficients, dtype=float), -1, 0)
    sign = np.sign(dq)
    return (
        fv1 * dq
        + fv2 * sign * dq**2
        + fv3 * dq**3
        + fs * sign * np.exp(-((dq / fs1) ** 2))
        + fc * sign * (1.0 - np.exp(-((dq / fc1) ** 2)))
    )


def stribeck_model_torque(coefficients: np.ndarray | None, dq_rad_s: np.ndarray) -> np.ndarray:
    """Stribeck friction of the joints that have a fit (zero for the others)."""
    if coefficients is None:
        return np.zeros_like(dq_rad_s)
    fitted = ~np.isnan(coefficients).any(axis=1)
    tau = np.zeros_like(dq_rad_s)
    tau[:, fitted] = stribeck_torque(dq_rad_s[:, fitted], coefficients[fitted])
    return tau
