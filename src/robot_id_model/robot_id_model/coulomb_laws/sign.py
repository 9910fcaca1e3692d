"""sign(dq): the classical Coulomb law (Xu et al. 2020), the law of a joint without another, the one every other
must beat on held-out data."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_id_model.coulomb_laws.law import CoulombLaw, register


@register
@dataclass(frozen=True)
class SignLaw(CoulombLaw):
    """FC·sign(dq): no shape."""

    family = "sign"
    general = "sign(dq)"

    def signal(self, dq_rad_s: np.ndarray, q_rad: np.ndarray | None = None) -> np.ndarray:
        return np.sign(np.asarray(dq_rad_s, dtype=float))

    def formula(self) -> str:
        return "sign(dq)"

    @classmethod
    def candidates(cls) -> tuple[CoulombLaw, ...]:
        return (SIGN,)


SIGN = SignLaw()
