"""The Coulomb column's law per joint: the shape of a joint's friction in speed (for presliding, along its path),
times its Coulomb parameter FC.

- "sign": sign(dq), the classical law (Xu et al. 2020);
- "tanh": tanh(dq/v_s), smooth through rest, as real friction is (presliding);
- "sigmoid": tanh((dq + δ)/v_s) − tanh(δ/v_s), the off-centre sigmoid Gaz et al. 2019 fit to the Panda's joints
  (their φ1/(1+e^(−φ2(dq+φ3))) − φ1/(1+e^(−φ2·φ3)) with FC = φ1/2, v_s = 2/φ2, δ = φ3): zero at rest, levels
  1 − tanh(δ/v_s) forwards and −1 − tanh(δ/v_s) backwards;
- "presliding": the Dahl model's friction state (Dahl 1968; the presliding part of the LuGre model, Canudas de Wit
  et al. 1995), dz/dx = (sgn(dq) − z)/x_c along the joint's travel x: after a reversal the friction builds up over a
  travel of a few x_c (a spring, then sliding). A state of the path, not of the sample: it is integrated along the
  samples in their order (dahl_state), exactly over each stretch between reversals, from z = sgn(dq) at the first;
- "stribeck": sign(dq)·(1 + r·exp(−(dq/v_s)²)), a level (1 + r)·FC at rest reaching FC within about v_s: Luo et
  al. 2024, eq. (7), with fs1 = fc1 = v_s and fs = (1 + r)·fc: r > 0 a Stribeck rise, r < 0 less friction at rest
  than at speed, r = −1 continuous through rest (eq. 7's Coulomb term alone).

For a fixed shape (v_s, r, δ, x_c) the torque stays linear in FC, so the regression stays linear
(coulomb_law_choice in the estimator finds the shape).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FAMILIES = ("sign", "tanh", "sigmoid", "presliding", "stribeck")


@dataclass(frozen=True)
class CoulombLaw:
    """One joint's Coulomb law: its family and shape parameters (module docstring)."""

    family: str = "sign"
    velocity_rad_s: float = 0.0
    """v_s of tanh and stribeck [rad/s]"""
    ratio: float = 0.0
    """r of stribeck: the level at rest over the Coulomb level, less 1 (≥ −1)"""
    shift_rad_s: float = 0.0
    """δ of sigmoid: the speed −δ is where it crosses the middle of its two levels [rad/s]"""
    travel_rad: float = 0.0
    """x_c of presliding: the travel over which friction builds up after a reversal [rad]"""

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"Coulomb law family '{self.family}' is not one of {FAMILIES}")
        if self.family == "presliding":
            if not self.travel_rad > 0.0:
                raise ValueError(f"a presliding Coulomb law needs a travel > 0, got {self.travel_rad}")
        elif self.family != "sign" and not self.velocity_rad_s > 0.0:
            raise ValueError(f"a {self.family} Coulomb law needs a velocity > 0, got {self.velocity_rad_s}")
        if not self.ratio >= -1.0:
            raise ValueError(f"a Coulomb law's ratio is at least −1 (no friction at rest), got {self.ratio}")

    def signal(self, dq_rad_s: np.ndarray, q_rad: np.ndarray | None = None) -> np.ndarray:
        """The Coulomb column's signal at velocities dq; presliding along the positions q of the same samples, in
        their order (axis 0)."""
        dq = np.asarray(dq_rad_s, dtype=float)
        if self.family == "presliding":
            if q_rad is None:
                raise ValueError("a presliding Coulomb law needs the positions along the path")
            return dahl_state(np.asarray(q_rad, dtype=float), dq, self.travel_rad)
        if self.family == "tanh":
            return np.tanh(dq / self.velocity_rad_s)
        if self.family == "sigmoid":
            v, shift = self.velocity_rad_s, self.shift_rad_s
            return np.tanh((dq + shift) / v) - np.tanh(shift / v)
        if self.family == "stribeck":
            return np.sign(dq) * (1.0 + self.ratio * np.exp(-((dq / self.velocity_rad_s) ** 2)))
        return np.sign(dq)

    def formula(self) -> str:
        """The law as a formula, e.g. tanh(dq/0.05)."""
        if self.family == "tanh":
            return f"tanh(dq/{self.velocity_rad_s:.3g})"
        if self.family == "sigmoid":
            sign = "+" if self.shift_rad_s >= 0.0 else "−"
            at_rest = np.tanh(self.shift_rad_s / self.velocity_rad_s)
            return (f"(tanh((dq {sign} {abs(self.shift_rad_s):.3g})/{self.velocity_rad_s:.3g}) "
                    f"{'−' if at_rest >= 0 else '+'} {abs(at_rest):.3g})")
        if self.family == "stribeck":
            sign = "+" if self.ratio >= 0.0 else "−"
            return f"sign(dq)·(1 {sign} {abs(self.ratio):.3g}·exp(−(dq/{self.velocity_rad_s:.3g})²))"
        if self.family == "presliding":
            return f"dahl(x_c={self.travel_rad:.3g} rad)"
        return "sign(dq)"

    def to_dict(self) -> dict:
        return {"family": self.family, "velocity_rad_s": self.velocity_rad_s, "ratio": self.ratio,
                "shift_rad_s": self.shift_rad_s, "travel_rad": self.travel_rad}

    @classmethod
    def from_dict(cls, raw: dict) -> CoulombLaw:
        return cls(raw["family"], float(raw.get("velocity_rad_s", 0.0)), float(raw.get("ratio", 0.0)),
                   float(raw.get("shift_rad_s", 0.0)), float(raw.get("travel_rad", 0.0)))


SIGN = CoulombLaw()


def coulomb_signals(q_rad: np.ndarray, dq_rad_s: np.ndarray, laws: tuple[CoulombLaw, ...]) -> np.ndarray:
    """(K, n) each joint's Coulomb signal along samples (K, n) in their order; no laws: sign(dq) everywhere."""
    q, dq = np.asarray(q_rad, dtype=float), np.asarray(dq_rad_s, dtype=float)
    if not laws:
        return np.sign(dq)
    return np.stack([law.signal(dq[..., j], q[..., j]) for j, law in enumerate(laws)], axis=-1)


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
