"""The least-squares problem of a recording reduced as it streams: per joint, the triangular factor of the
regressor rows with the torque beside them (a tall-skinny QR, Demmel et al. 2012), so that nothing later
depends on the number of samples.

For joint j with rows [Yb_j τ_j] (K × (b+1)), R_j is the triangular factor of their QR; then for any π
‖τ_j − Yb_j·π‖² = ‖R_j·[−π; 1]‖², exactly, because [Yb_j τ_j] and R_j have the same Gram matrix. Stacking the
factors of chunks and factoring again gives the factor of the whole recording, without ever squaring the
condition number (as normal equations would): the reduction is exact up to the round-off of an orthogonal
factorisation (≈ 1e-15 relative).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class JointBlocks:
    """Per joint, the triangular factor of [Yb_j τ_j] of some samples."""

    r_aug: np.ndarray
    """(n, b+1, b+1): the last column holds the torque's part (Q_jᵀτ_j and the norm outside span(Yb_j))."""
    n_rows: np.ndarray
    """(n,) equations of each joint: the samples it was used at"""

    def residual_sq_nm2(self, values: np.ndarray) -> np.ndarray:
        """(n,) ‖τ_j − Yb_j·πb‖² per joint; parameters not estimated (NaN) contribute nothing."""
        x = np.append(-np.nan_to_num(np.asarray(values, dtype=float), nan=0.0), 1.0)
        return np.sum((self.r_aug @ x) ** 2, axis=1)


def triangular_factor(rows: np.ndarray) -> np.ndarray:
    """(c, c) upper-triangular R of the QR of `rows` (m, c), zero rows appended when m < c."""
    r = np.linalg.qr(rows, mode="r")
    out = np.zeros((rows.shape[1], rows.shape[1]))
    out[:len(r)] = r
    return out


def reduce_joints(yb: np.ndarray, tau_nm: np.ndarray, used: np.ndarray | None = None) -> JointBlocks:
    """The JointBlocks of a (K, n, b) regressor and the (K, n) torque it explains; with `used` (K, n), only the
    samples of each joint where it is True."""
    rows = np.concatenate([yb, tau_nm[:, :, None]], axis=2)
    used = np.ones(tau_nm.shape, dtype=bool) if used is None else used
    return JointBlocks(np.stack([triangular_factor(rows[used[:, j], j]) for j in range(yb.shape[1])]),
                       used.sum(axis=0))


def merge(parts: Sequence[JointBlocks]) -> JointBlocks:
    """The JointBlocks of the samples of all `parts` (the factor of their stacked factors)."""
    stacked = np.concatenate([p.r_aug for p in parts], axis=1)
    return JointBlocks(np.stack([triangular_factor(s) for s in stacked]), sum(p.n_rows for p in parts))


def weighted_rows(parts: Sequence[JointBlocks], weights: Sequence[np.ndarray]) -> tuple[np.ndarray, int]:
    """Rows [A y] with the Gram matrix of the stacked system W^½·[Yb τ] of all `parts`, each joint j of part i
    weighted by weights[i][j]; and the number of equations K·n they stand for."""
    rows = np.concatenate([(np.sqrt(np.asarray(w, dtype=float))[:, None, None] * p.r_aug).reshape(-1, p.r_aug.shape[-1])
                           for p, w in zip(parts, weights, strict=True)])
    return rows, int(sum(p.n_rows.sum() for p in parts))
