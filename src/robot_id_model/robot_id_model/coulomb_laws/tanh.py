"""tanh(dq/v_s): smooth through rest, as real friction is (presliding), reaching its level within a few v_s."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_id_model.coulomb_laws.law import CoulombLaw, ShapeParameter, register

VELOCITY = ShapeParameter("velocity_rad_s", "v_s", "rad/s", "the speed of the rise through rest", minimum=0.0)


@register
@dataclass(frozen=True)
class TanhLaw(CoulombLaw):
    """FC·tanh(dq/v_s)."""

    velocity_rad_s: float

    family = "tanh"
    shape = (VELOCITY,)
    general = "tanh(dq/v_s)"

    def signal(self, dq_rad_s: np.ndarray, q_rad: np.ndarray | None = None) -> np.ndarray:
        return np.tanh(np.asarray(dq_rad_s, dtype=float) / self.velocity_rad_s)

    def formula(self) -> str:
        return f"tanh(dq/{self.velocity_rad_s:.3g})"

    @classmethod
    def candidates(cls) -> tuple[CoulombLaw, ...]:
        """v_s a factor 1.26 apart, from a law sign-like at the speeds an excitation reaches to one still rising at
        0.4 rad/s (Gaz et al. 2019's Panda sigmoids: v_s = 2/φ2 = 0.12–0.39 rad/s)."""
        return tuple(cls(float(v)) for v in VELOCITIES_RAD_S)


VELOCITIES_RAD_S = np.geomspace(0.004, 0.4, 21)
"""The v_s of the tanh and sigmoid candidates."""
