"""sign(dq)·(1 + r·exp(−(dq/v_s)²)): a level (1 + r)·FC at rest reaching FC within about v_s, Luo et al. 2024,
eq. (7), with fs1 = fc1 = v_s and fs = (1 + r)·fc: r > 0 a Stribeck rise, r < 0 less friction at rest than at
speed, r = −1 continuous through rest (eq. 7's Coulomb term alone).

The Coulomb column's law, times FC in the linear regression. A friction sweep's fit of the whole of eq. (7) (seven
coefficients, its viscous terms and two velocities among them) is another thing: the estimator's stribeck_law."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_id_model.coulomb_laws.law import CoulombLaw, ShapeParameter, register

VELOCITY = ShapeParameter("velocity_rad_s", "v_s", "rad/s", "the speed within which the level at rest fades",
                          minimum=0.0)
RATIO = ShapeParameter("ratio", "r", "", "the level at rest over the Coulomb level, less 1", minimum=-1.0,
                       strict=False)


@register
@dataclass(frozen=True)
class StribeckLaw(CoulombLaw):
    """FC·sign(dq)·(1 + r·exp(−(dq/v_s)²))."""

    velocity_rad_s: float
    ratio: float

    family = "stribeck"
    shape = (VELOCITY, RATIO)
    general = "sign(dq)·(1 + r·exp(−(dq/v_s)²))"

    def signal(self, dq_rad_s: np.ndarray, q_rad: np.ndarray | None = None) -> np.ndarray:
        dq = np.asarray(dq_rad_s, dtype=float)
        return np.sign(dq) * (1.0 + self.ratio * np.exp(-((dq / self.velocity_rad_s) ** 2)))

    def formula(self) -> str:
        sign = "+" if self.ratio >= 0.0 else "−"
        return f"sign(dq)·(1 {sign} {abs(self.ratio):.3g}·exp(−(dq/{self.velocity_rad_s:.3g})²))"

    @classmethod
    def candidates(cls) -> tuple[CoulombLaw, ...]:
        """v_s from 0.01 to 0.16 rad/s and r from 0.1 to 0.8 (a static level 1.1–1.8 × the Coulomb level) and from
        −0.35 to −1 (a level below the Coulomb one at rest; −1: continuous through rest), each a factor √2 apart."""
        return tuple(cls(float(v), float(r)) for v in np.geomspace(0.01, 0.16, 9)
                     for r in (*-np.geomspace(1.0, 0.35, 4), *np.geomspace(0.1, 0.8, 7)))
