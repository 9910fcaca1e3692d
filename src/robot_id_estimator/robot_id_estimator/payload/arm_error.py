"""How far the arm model's own error can move the identified load.

The load is fitted to τ − τ_arm, so an error δτ in the arm's model moves the least-squares values by
δθ = (WY)⁺ W δτ (W the joints' weights). The arm's error is not noise: it is systematic, the same in every period,
and no standard deviation of the load's fit (eq. 7) sees it. What is known of it is its size: the arm's identification
predicted motions it was not fitted to with an RMS error e_j per joint (its held-out check). If its error on the
payload's motion is no larger, a quantity f(θ) moves by at most Σ_j e_j·√K_j·‖∂f/∂θ · (WY)⁺_j‖ (Cauchy–Schwarz over
joint j's K_j equations): the error aligned with what f is read from in every sample. A worst case, not a standard
deviation.

In: the load's weighted regressor, the arm's held-out error per joint, the least-squares values. Out: ArmErrorBounds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_id_model.physical import link_from_standard

STEP = 1e-7
"""Relative step of the principal moments' central differences."""


@dataclass(frozen=True)
class ArmErrorBounds:
    """The largest change the arm model's error could make, in units a user reads."""

    mass_percent: float
    com_mm: float
    """Of the CoM's position (the three coordinates' bounds, as one distance)."""
    moments_percent: np.ndarray
    """(3,) of each principal moment about the CoM, ascending order."""


def arm_error_bounds(y: np.ndarray, weights: np.ndarray, theta: np.ndarray,
                     arm_error_rms_nm: np.ndarray) -> ArmErrorBounds:
    """Bounds (module docstring) for the load `theta` fitted to samples with regressor `y` (K, n, 10) and joint
    `weights` (n,), given the arm's RMS error per joint on motions it was not fitted to."""
    mass = float(theta[0])
    if not mass > 0.0:
        return ArmErrorBounds(np.inf, np.inf, np.full(3, np.inf))
    k, n, _ = y.shape
    sensitivity = np.linalg.pinv((y * weights[None, :, None]).reshape(-1, 10)).reshape(10, k, n) * weights
    rows = np.count_nonzero(np.any(y != 0.0, axis=2), axis=0)  # equations per joint (rows left out are zero)
    scale = arm_error_rms_nm * np.sqrt(rows)

    def bound(gradient: np.ndarray) -> float:
        per_joint = np.linalg.norm(np.tensordot(gradient, sensitivity, axes=1), axis=0)
        return float(per_joint @ scale)

    com_gradients = np.zeros((3, 10))
    com_gradients[:, 1:4] = np.eye(3) / mass
    com_gradients[:, 0] = -theta[1:4] / mass**2
    moments = _principal_moments(theta)
    return ArmErrorBounds(100.0 * bound(np.eye(10)[0]) / abs(mass),
                          1000.0 * float(np.linalg.norm([bound(g) for g in com_gradients])),
                          100.0 * np.array([bound(g) for g in _moment_gradients(theta)]) / np.abs(moments))


def _principal_moments(theta: np.ndarray) -> np.ndarray:
    return np.linalg.eigvalsh(link_from_standard(theta).inertia_com_kg_m2)


def _moment_gradients(theta: np.ndarray) -> np.ndarray:
    """(3, 10) ∂λ_k/∂θ by central differences."""
    steps = STEP * np.maximum(np.abs(theta), STEP)
    return np.array([(_principal_moments(theta + h) - _principal_moments(theta - h)) / (2.0 * h[i])
                     for i, h in enumerate(np.diag(steps))]).T
