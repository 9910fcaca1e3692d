"""Periodic excitation trajectories: finite Fourier series (Xu et al. 2020, eq. 8) and the modified series of
Wu et al. 2012.

Per joint i, with ω = 2π·f_f and L harmonics (Xu et al. 2020, eq. 8, Jia et al. 2019, eq. 10):

    q_i(t) = q0_i + Σ_l a_il/(ω l)·sin(ω l t) − b_il/(ω l)·cos(ω l t)

Both kinds are linear in the coefficients: q(t) = q0 + B_q(t)·c with c = [a_1..a_L, b_1..b_L] per joint and a
basis B_q shared by all joints (likewise B_dq, B_ddq). The finite series starts at rest at q0 only when its
coefficients satisfy Xu et al. 2020, eq. (10); `rest_null_space` spans those coefficients. The modified series
(Wu et al. 2012) adds to the Fourier part F the quintic P(s), s = t/T, with P(0) = P(1) = −F(0), P' and P'' likewise,
so that q − q0, dq and ddq vanish at t = 0 and t = T whatever the coefficients:

    P(s) = u + v·(s − 10s³ + 15s⁴ − 6s⁵) + w·s²(1 − s)²/2,   u = −F(0), v = −T·F'(0), w = −T²·F''(0).

Repeated period after period it is twice continuously differentiable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

KINDS = ("fourier", "modified_fourier")


@dataclass(frozen=True)
class Basis:
    """q = q0 + q_rad·c, dq = dq_rad_s·c, ddq = ddq_rad_s2·c for coefficients c (2L,) or (2L, n)."""

    q_rad: np.ndarray
    dq_rad_s: np.ndarray
    ddq_rad_s2: np.ndarray


def _fourier_basis(tau_s: np.ndarray, omega_rad_s: float, harmonics: int) -> tuple[np.ndarray, ...]:
    """Columns [a_1..a_L, b_1..b_L] of the finite series and its first two derivatives (Xu et al. 2020, eq. 8)."""
    w = omega_rad_s * np.arange(1, harmonics + 1)
    phase = np.outer(tau_s, w)
    sin, cos = np.sin(phase), np.cos(phase)
    q = np.hstack([sin / w, -cos / w])
    dq = np.hstack([cos, sin])
    ddq = np.hstack([-sin * w, cos * w])
    return q, dq, ddq


def _boundary_polynomials(s: np.ndarray) -> tuple[np.ndarray, ...]:
    """h_v, h_w of the modified series and their derivatives with respect to s (see the module docstring)."""
    hv = s - 10 * s**3 + 15 * s**4 - 6 * s**5
    dhv = 1 - 30 * s**2 + 60 * s**3 - 30 * s**4
    ddhv = -60 * s + 180 * s**2 - 120 * s**3
    hw = 0.5 * s**2 * (1 - s) ** 2
    dhw = s * (1 - s) * (1 - 2 * s)
    ddhw = 1 - 6 * s + 6 * s**2
    return hv, dhv, ddhv, hw, dhw, ddhw


def basis(t_s: np.ndarray, base_frequency_hz: float, harmonics: int, kind: str) -> Basis:
    """Trajectory basis on any time grid; times beyond one period wrap around (the trajectory is periodic)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got '{kind}'")
    if base_frequency_hz <= 0 or harmonics < 1:
        raise ValueError(f"need base_frequency_hz > 0 and harmonics >= 1, got {base_frequency_hz}, {harmonics}")
    period = 1.0 / base_frequency_hz
    tau = np.mod(np.atleast_1d(np.asarray(t_s, dtype=float)), period)
    omega = 2 * np.pi * base_frequency_hz
    q, dq, ddq = _fourier_basis(tau, omega, harmonics)
    if kind == "modified_fourier":
        q0, dq0, ddq0 = _fourier_basis(np.zeros(1), omega, harmonics)
        hv, dhv, ddhv, hw, dhw, ddhw = (h[:, None] for h in _boundary_polynomials(tau / period))
        q = q - q0 - period * dq0 * hv - period**2 * ddq0 * hw
        dq = dq - dq0 * dhv - period * ddq0 * dhw
        ddq = ddq - dq0 * ddhv / period - ddq0 * ddhw
    return Basis(q, dq, ddq)


def rest_null_space(harmonics: int) -> np.ndarray:
    """(2L, 2L−3) orthonormal basis of the coefficients [a; b] that satisfy Xu et al. 2020, eq. (10).

    The finite series is at rest at q0 at t = 0 (and every period start) iff Σ b_l/l = 0 (q = q0),
    Σ a_l = 0 (dq = 0) and Σ l·b_l = 0 (ddq = 0).
    """
    if harmonics < 2:
        raise ValueError("a finite Fourier series at rest at its ends needs at least 2 harmonics")
    ell = np.arange(1, harmonics + 1, dtype=float)
    zeros = np.zeros(harmonics)
    constraints = np.array(
        [np.concatenate([zeros, 1.0 / ell]), np.concatenate([np.ones(harmonics), zeros]), np.concatenate([zeros, ell])]
    )
    _, _, vt = np.linalg.svd(constraints)
    return vt[3:].T


@dataclass(frozen=True)
class FourierTrajectory:
    """One period of a (modified) Fourier excitation trajectory, repeated period after period."""

    kind: str
    robot: str
    joint_names: tuple[str, ...]
    base_frequency_hz: float
    coefficients_a: np.ndarray
    """(n, L) rad/s"""
    coefficients_b: np.ndarray
    """(n, L) rad/s"""
    offsets_rad: np.ndarray
    """(n,) q0"""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got '{self.kind}'")
        n = len(self.joint_names)
        a, b = np.asarray(self.coefficients_a, float), np.asarray(self.coefficients_b, float)
        q0 = np.asarray(self.offsets_rad, float)
        if a.ndim != 2 or a.shape[0] != n or b.shape != a.shape or q0.shape != (n,):
            raise ValueError(
                f"coefficients must be ({n}, L) and offsets ({n},); got {a.shape}, {b.shape}, {q0.shape}"
            )
        if not self.base_frequency_hz > 0:
            raise ValueError(f"base_frequency_hz must be positive, got {self.base_frequency_hz}")
        object.__setattr__(self, "coefficients_a", a)
        object.__setattr__(self, "coefficients_b", b)
        object.__setattr__(self, "offsets_rad", q0)
        object.__setattr__(self, "joint_names", tuple(self.joint_names))

    @property
    def n_joints(self) -> int:
        return len(self.joint_names)

    @property
    def harmonics(self) -> int:
        return self.coefficients_a.shape[1]

    @property
    def period_s(self) -> float:
        return 1.0 / self.base_frequency_hz

    @property
    def rest_pose_rad(self) -> np.ndarray:
        """Where every period starts and ends at rest (if the coefficients allow it): q0."""
        return self.offsets_rad

    @property
    def coefficients(self) -> np.ndarray:
        """(2L, n) stacked [a; b], the c of q = q0 + B_q·c."""
        return np.vstack([self.coefficients_a.T, self.coefficients_b.T])

    def evaluate(self, t_s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q_rad, dq_rad_s, ddq_rad_s2, each (K, n), at times t_s (s, any grid)."""
        b = basis(t_s, self.base_frequency_hz, self.harmonics, self.kind)
        c = self.coefficients
        return self.offsets_rad + b.q_rad @ c, b.dq_rad_s @ c, b.ddq_rad_s2 @ c

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "robot": self.robot,
            "joint_names": list(self.joint_names),
            "base_frequency_hz": float(self.base_frequency_hz),
            "period_s": float(self.period_s),
            "harmonics": int(self.harmonics),
            "coefficients_a": self.coefficients_a.tolist(),
            "coefficients_b": self.coefficients_b.tolist(),
            "offsets_rad": self.offsets_rad.tolist(),
        }

    @classmethod
    def from_dict(cls, data: dict) -> FourierTrajectory:
        try:
            traj = cls(
                kind=data["kind"],
                robot=str(data.get("robot", "")),
                joint_names=tuple(data["joint_names"]),
                base_frequency_hz=float(data["base_frequency_hz"]),
                coefficients_a=np.asarray(data["coefficients_a"], dtype=float),
                coefficients_b=np.asarray(data["coefficients_b"], dtype=float),
                offsets_rad=np.asarray(data["offsets_rad"], dtype=float),
            )
        except KeyError as err:
            raise ValueError(f"trajectory is missing the entry {err}") from None
        if "harmonics" in data and int(data["harmonics"]) != traj.harmonics:
            raise ValueError(f"harmonics is {data['harmonics']} but the coefficients have {traj.harmonics} columns")
        return traj

    @classmethod
    def from_coefficients(
        cls,
        kind: str,
        robot: str,
        joint_names: Sequence[str],
        base_frequency_hz: float,
        coefficients: np.ndarray,
        offsets_rad: np.ndarray,
    ) -> FourierTrajectory:
        """From the (2L, n) stacked coefficients [a; b] of `coefficients`."""
        c = np.asarray(coefficients, dtype=float)
        harmonics = c.shape[0] // 2
        return cls(kind, robot, tuple(joint_names), base_frequency_hz, c[:harmonics].T, c[harmonics:].T, offsets_rad)

