"""tanh((dq + δ)/v_s) − tanh(δ/v_s): the off-centre sigmoid Gaz et al. 2019 fit to the Panda's joints (their
φ1/(1+e^(−φ2(dq+φ3))) − φ1/(1+e^(−φ2·φ3)) with FC = φ1/2, v_s = 2/φ2, δ = φ3): zero at rest, levels
1 − tanh(δ/v_s) forwards and −1 − tanh(δ/v_s) backwards; tanh(dq/v_s) where δ = 0."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_id_model.coulomb_laws.law import CoulombLaw, ShapeParameter, register
from robot_id_model.coulomb_laws.tanh import VELOCITIES_RAD_S, VELOCITY

SHIFT = ShapeParameter("shift_rad_s", "δ", "rad/s", "−δ is where it crosses the middle of its two levels")

SHIFTS = (-0.3, -0.2, -0.1, 0.1, 0.2, 0.3)
"""δ/v_s of the candidates (Gaz et al. 2019's Panda joints: φ2·φ3/2 = −0.23 to 0.12)."""


@register
@dataclass(frozen=True)
class SigmoidLaw(CoulombLaw):
    """FC·(tanh((dq + δ)/v_s) − tanh(δ/v_s))."""

    velocity_rad_s: float
    shift_rad_s: float

    family = "sigmoid"
    shape = (VELOCITY, SHIFT)
    general = "tanh((dq + δ)/v_s) − tanh(δ/v_s)"
    extends = "tanh"

    def signal(self, dq_rad_s: np.ndarray, q_rad: np.ndarray | None = None) -> np.ndarray:
        v, shift = self.velocity_rad_s, self.shift_rad_s
        return np.tanh((np.asarray(dq_rad_s, dtype=float) + shift) / v) - np.tanh(shift / v)

    def formula(self) -> str:
        sign = "+" if self.shift_rad_s >= 0.0 else "−"
        at_rest = np.tanh(self.shift_rad_s / self.velocity_rad_s)
        return (f"(tanh((dq {sign} {abs(self.shift_rad_s):.3g})/{self.velocity_rad_s:.3g}) "
                f"{'−' if at_rest >= 0 else '+'} {abs(at_rest):.3g})")

    def form(self) -> tuple[float, ...]:
        """δ/v_s: the candidates share it across their velocities."""
        return (self.shift_rad_s / self.velocity_rad_s,)

    @classmethod
    def candidates(cls) -> tuple[CoulombLaw, ...]:
        """tanh's velocities (tanh.VELOCITIES_RAD_S), each with the shifts SHIFTS."""
        return tuple(cls(float(v), float(u * v)) for v in VELOCITIES_RAD_S for u in SHIFTS)
