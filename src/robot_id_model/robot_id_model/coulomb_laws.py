"""The Coulomb column's law per joint: the shape of a joint's friction in speed, times its Coulomb parameter FC.

- "sign": sign(dq), the classical law (Xu et al. 2020);
- "tanh": tanh(dq/v_s), smooth through rest, as real friction is (presliding; Gaz et al. 2019's Panda sigmoid is
  tanh up to an offset);
- "stribeck": sign(dq)·(1 + r·exp(−(dq/v_s)²)), a level (1 + r)·FC at rest reaching FC within about v_s: Luo et
  al. 2024, eq. (7), with fs1 = fc1 = v_s and fs = (1 + r)·fc: r > 0 a Stribeck rise, r < 0 less friction at rest
  than at speed, r = −1 continuous through rest (eq. 7's Coulomb term alone).

For a fixed shape (v_s, r) the torque stays linear in FC, so the regression stays linear (coulomb_law_choice in the
estimator finds the shape).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FAMILIES = ("sign", "tanh", "stribeck")


@dataclass(frozen=True)
class CoulombLaw:
    """One joint's Coulomb law: its family and shape parameters (module docstring)."""

    family: str = "sign"
    velocity_rad_s: float = 0.0
    """v_s of tanh and stribeck [rad/s]"""
    ratio: float = 0.0
    """r of stribeck: the level at rest over the Coulomb level, less 1 (≥ −1)"""

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"Coulomb law family '{self.family}' is not one of {FAMILIES}")
        if self.family != "sign" and not self.velocity_rad_s > 0.0:
            raise ValueError(f"a {self.family} Coulomb law needs a velocity > 0, got {self.velocity_rad_s}")
        if not self.ratio >= -1.0:
            raise ValueError(f"a Coulomb law's ratio is at least −1 (no friction at rest), got {self.ratio}")

    def signal(self, dq_rad_s: np.ndarray) -> np.ndarray:
        """The Coulomb column's signal at velocities dq."""
        dq = np.asarray(dq_rad_s, dtype=float)
        if self.family == "tanh":
            return np.tanh(dq / self.velocity_rad_s)
        if self.family == "stribeck":
            return np.sign(dq) * (1.0 + self.ratio * np.exp(-((dq / self.velocity_rad_s) ** 2)))
        return np.sign(dq)

    def formula(self) -> str:
        """The law as a formula, e.g. tanh(dq/0.05)."""
        if self.family == "tanh":
            return f"tanh(dq/{self.velocity_rad_s:.3g})"
        if self.family == "stribeck":
            sign = "+" if self.ratio >= 0.0 else "−"
            return f"sign(dq)·(1 {sign} {abs(self.ratio):.3g}·exp(−(dq/{self.velocity_rad_s:.3g})²))"
        return "sign(dq)"

    def to_dict(self) -> dict:
        return {"family": self.family, "velocity_rad_s": self.velocity_rad_s, "ratio": self.ratio}

    @classmethod
    def from_dict(cls, raw: dict) -> CoulombLaw:
        return cls(raw["family"], float(raw.get("velocity_rad_s", 0.0)), float(raw.get("ratio", 0.0)))


SIGN = CoulombLaw()


def coulomb_signals(dq_rad_s: np.ndarray, laws: tuple[CoulombLaw, ...]) -> np.ndarray:
    """(K, n) each joint's Coulomb signal at velocities (K, n); no laws: sign(dq) everywhere."""
    dq = np.asarray(dq_rad_s, dtype=float)
    if not laws:
        return np.sign(dq)
    return np.stack([law.signal(dq[..., j]) for j, law in enumerate(laws)], axis=-1)
