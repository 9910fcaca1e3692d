"""Dahl's presliding: the Dahl model's friction state (Dahl 1968; the presliding part of the LuGre model, Canudas de
Wit et al. 1995), dz/dx = (sgn(dq) − z)/x_c along the joint's travel x: after a reversal the friction builds up over
a travel of a few x_c (a spring, then sliding). A state of the path, not of the sample: it is integrated along the
samples in their order (dahl_state), exactly over each stretch between reversals, from z = sgn(dq) at the first."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_id_model.coulomb_laws.law import CoulombLaw, ShapeParameter, register

TRAVEL = ShapeParameter("travel_rad", "x_c", "rad", "the travel over which friction builds up after a reversal",
                        minimum=0.0)


@register
@dataclass(frozen=True)
class PreslidingLaw(CoulombLaw):
    """FC·z, z Dahl's state over the travel x_c."""

    travel_rad: float

    family = "presliding"
    shape = (TRAVEL,)
    general = "z, dz/dx = (sgn(dq) − z)/x_c along the travel x (Dahl)"
    path_dependent = True

    def signal(self, dq_rad_s: np.ndarray, q_rad: np.ndarray | None = None) -> np.ndarray:
        if q_rad is None:
            raise ValueError("a presliding Coulomb law needs the positions along the path")
        return dahl_state(np.asarray(q_rad, dtype=float), np.asarray(dq_rad_s, dtype=float), self.travel_rad)

    def formula(self) -> str:
        return f"dahl(x_c={self.travel_rad:.3g} rad)"

    @classmethod
    def candidates(cls) -> tuple[CoulombLaw, ...]:
        """x_c from 0.25 to 16 mrad, a factor √2 apart."""
        return tuple(cls(float(x)) for x in np.geomspace(0.00025, 0.016, 13))


def dahl_state(q_rad: np.ndarray, dq_rad_s: np.ndarray, travel_rad: float) -> np.ndarray:
    """Dahl's state z along samples (K,) or (K, n) in their order: between reversals (where sgn(dq) changes; a
    sample at rest keeps the direction before it) z = s + (z_0 − s)·exp(−x/x_c), x the travel since the reversal,
    z_0 the state there; z = sgn(dq) at the first sample. The travel is the speed's integral (_travel): the
    positions' own differences would add their noise to it where the joint creeps."""
    q, dq = np.atleast_1d(q_rad), np.atleast_1d(dq_rad_s)
    if q.ndim > 1:
        return np.stack([dahl_state(q[:, j], dq[:, j], travel_rad) for j in range(q.shape[1])], axis=-1)
    direction = np.sign(dq)
    moving = np.flatnonzero(direction)
    if not len(moving):
        return np.zeros_like(dq)
    direction = direction[moving][np.maximum(np.searchsorted(moving, np.arange(len(dq)), side="right") - 1, 0)]
    travel = _travel(q, dq)
    starts = np.concatenate([[0], np.flatnonzero(np.diff(direction)) + 1])
    out, z = np.empty_like(dq), direction[0]
    for start, stop in zip(starts, [*starts[1:], len(dq)], strict=True):
        s, before = direction[start], travel[max(start - 1, 0)]  # the state z held at the sample before
        out[start:stop] = s + (z - s) * np.exp(-(travel[start:stop] - before) / travel_rad)
        z = out[stop - 1]
    return out


def _travel(q_rad: np.ndarray, dq_rad_s: np.ndarray) -> np.ndarray:
    """Cumulative travel (K,) along uniformly spaced samples: the trapezoidal integral of |dq|, the sample interval
    the median of |Δq|/|dq| where the joint moves fast (the positions' differences where it does not)."""
    step = np.abs(np.diff(q_rad))
    speed = 0.5 * (np.abs(dq_rad_s[1:]) + np.abs(dq_rad_s[:-1]))
    fast = speed > 0.5 * speed.max(initial=0.0)
    if not fast.any():
        return np.concatenate([[0.0], np.cumsum(step)])
    dt_s = float(np.median(step[fast] / speed[fast]))
    return np.concatenate([[0.0], np.cumsum(speed * dt_s)])
