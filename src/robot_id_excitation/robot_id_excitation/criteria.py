"""Excitation criteria on the base regressor Yb of one period, each with its gradient with respect to Yb.

Yb has shape (K, n, b): K samples, n joints, b base parameters; stacked it is the (K·n, b) observation
matrix of Xu et al. 2020, eq. (5). Every `*_and_gradient` function returns (value, G) with G shaped like Yb and
d value = Σ G ⊙ d Yb, so that one chain rule through the regressor serves every criterion.

- cond(Yb): σ_max/σ_min of the stacked, unscaled Yb (Xu et al. 2020, eq. 9, Wu et al. 2012, Gaz et al.).
- D-optimality: −log det((1/K)·Σ_k Yb_kᵀ Σ⁻¹ Yb_k) (Jia et al. 2019, F2, Swevers et al.), Σ the diagonal torque-noise
  covariance. Divided by K so that the value does not depend on the grid density.
- Hadamard: log of 1/∏_g ‖w_g‖ over the columns w_g/√K of the Σ-weighted Yb (Luo et al. 2024 criterion C3, Jia
et al. 2019
  Table 1 no. 6). By Hadamard's inequality det(WᵀW) ≤ ∏ ‖w_g‖², so it bounds the D-criterion from below
  (−log det ≥ 2·hadamard) and is the fast start of Luo et al. 2024.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

CRITERIA = ("cond", "d_optimality", "hadamard", "embedded")
"""Design objectives: the three single criteria, and cond subject to a D-optimality bound (Jia et al. 2019, Luo
et al. 2024)."""


def _weighted(yb: np.ndarray, noise_std_nm: np.ndarray | None) -> np.ndarray:
    if noise_std_nm is None:
        return yb
    return yb / np.asarray(noise_std_nm, dtype=float)[None, :, None]


def _gram_eigen(w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stacked W (K·n, b), and the eigenvalues (ascending) and eigenvectors of WᵀW = V·diag(σ²)·Vᵀ.

    The b×b Gram matrix is far cheaper than an SVD of the tall W; for cond(W) up to 1e4 its smallest
    eigenvalue keeps 8 significant digits, ample for a design gradient.
    """
    stacked = w.reshape(-1, w.shape[-1])
    eigenvalues, eigenvectors = np.linalg.eigh(stacked.T @ stacked)
    return stacked, eigenvalues, eigenvectors


def condition_number(yb: np.ndarray) -> float:
    """cond of the stacked base regressor (Xu et al. 2020, eq. 9), from its singular values."""
    s = np.linalg.svd(yb.reshape(-1, yb.shape[-1]), compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else float("inf")


def log_condition_number_and_gradient(yb: np.ndarray) -> tuple[float, np.ndarray]:
    """log cond(Yb) and its gradient: d log σ = uᵀ dW v/σ with u = W v/σ, for σ_max and σ_min."""
    w, lam, vec = _gram_eigen(yb)
    if lam[0] <= 0:
        return float("inf"), np.zeros_like(yb)
    top, bottom = vec[:, -1], vec[:, 0]
    grad = np.outer(w @ top, top) / lam[-1] - np.outer(w @ bottom, bottom) / lam[0]
    return 0.5 * float(np.log(lam[-1] / lam[0])), grad.reshape(yb.shape)


def d_optimality(yb: np.ndarray, noise_std_nm: np.ndarray | None = None) -> float:
    """−log det((1/K) Σ_k Yb_kᵀ Σ⁻¹ Yb_k) (Jia et al. 2019, F2); lower is better."""
    return d_optimality_and_gradient(yb, noise_std_nm)[0]


def d_optimality_and_gradient(yb: np.ndarray, noise_std_nm: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """D-criterion and its gradient: with W = Σ^{-1/2}Yb/√K, d(−log det WᵀW) = −2 tr((WᵀW)⁻¹ Wᵀ dW)."""
    k = yb.shape[0]
    w, lam, vec = _gram_eigen(_weighted(yb, noise_std_nm) / np.sqrt(k))
    if lam[0] <= 0:
        return float("inf"), np.zeros_like(yb)
    value = -float(np.sum(np.log(lam)))
    grad = (-2.0 * (w @ vec / lam) @ vec.T).reshape(yb.shape) / np.sqrt(k)
    return value, _weighted(grad, noise_std_nm)


def hadamard(yb: np.ndarray, noise_std_nm: np.ndarray | None = None) -> float:
    """log(1/∏_g ‖w_g‖), w = Σ^{-1/2}Yb/√K (Luo et al. 2024 C3); lower is better."""
    return hadamard_and_gradient(yb, noise_std_nm)[0]


def hadamard_and_gradient(yb: np.ndarray, noise_std_nm: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """Hadamard criterion and its gradient −w_g/‖w_g‖² per column (scaled back to Yb)."""
    k = yb.shape[0]
    w = _weighted(yb, noise_std_nm) / np.sqrt(k)
    norms_sq = np.einsum("kib,kib->b", w, w)
    value = -0.5 * float(np.sum(np.log(norms_sq)))
    grad = -w / norms_sq / np.sqrt(k)
    return value, _weighted(grad, noise_std_nm)


@dataclass(frozen=True)
class CriteriaValues:
    """The criteria of one trajectory, evaluated on the same grid."""

    condition_number: float
    d_optimality: float
    hadamard: float
    log_det: float
    """log det((1/K) Σ Yb_kᵀ Σ⁻¹ Yb_k) = −d_optimality, the form the seeds report."""
    n_samples: int
    n_base: int

    def as_dict(self) -> dict:
        return {
            "condition_number": self.condition_number,
            "log_det": self.log_det,
            "d_optimality": self.d_optimality,
            "hadamard": self.hadamard,
            "n_samples": self.n_samples,
            "n_base": self.n_base,
        }


def evaluate_criteria(yb: np.ndarray, noise_std_nm: np.ndarray | None = None) -> CriteriaValues:
    """All criteria of a base regressor (K, n, b)."""
    d_opt = d_optimality(yb, noise_std_nm)
    return CriteriaValues(
        condition_number=condition_number(yb),
        d_optimality=d_opt,
        hadamard=hadamard(yb, noise_std_nm),
        log_det=-d_opt,
        n_samples=yb.shape[0],
        n_base=yb.shape[-1],
    )
