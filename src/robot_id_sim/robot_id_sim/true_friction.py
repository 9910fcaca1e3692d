"""The simulated robot's joint friction, per joint one of FRICTION_LAWS, so that the estimator meets laws outside
its own family.

- "stribeck": Luo et al. 2024, eq. (7): τf = fv1·dq + fv2·sgn(dq)·dq² + fv3·dq³ + fs·sgn(dq)·exp(−(dq/fs1)²)
  + fc·sgn(dq)·(1 − exp(−(dq/fc1)²)); a static level fs above the Coulomb level fc at rest (fs = fc: the sign law);
- "sigmoid": Gaz et al. 2019's Panda law, smooth through rest and not centred on it:
  φ1/(1 + e^(−φ2(dq + φ3))) − φ1/(1 + e^(−φ2·φ3)) with φ1 = 2·fc, φ2 = 2/fc1, φ3 = shift, which is
  fc·(tanh((dq + φ3)/fc1) − tanh(φ3/fc1)); plus fv1·dq;
- "tanh": fc·tanh(dq/fc1) + fv1·dq, the estimator's smooth law;
- "presliding": fc·z + fv1·dq with z Dahl's state (Dahl 1968; the presliding part of the LuGre model, Canudas de
  Wit et al. 1995), dz/dx = (sgn(dx) − z)/x_c along the joint's travel x: a state of the path, not a function of
  the speed (x_c = presliding_rad).

A simulator splits each into what it integrates implicitly (viscous damping, MuJoCo's friction loss for the static
level of eq. 7) and the rest, continuous (continuous_torque_nm), which for presliding joints reads the state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FRICTION_LAWS = ("stribeck", "sigmoid", "tanh", "presliding")


@dataclass(frozen=True)
class JointFriction:
    """Per joint (arrays of n) the coefficients of its law (module docstring); `law` names each joint's law."""

    fv1: np.ndarray
    fv2: np.ndarray
    fv3: np.ndarray
    fs: np.ndarray
    fs1: np.ndarray
    fc: np.ndarray
    fc1: np.ndarray
    law: tuple[str, ...] = ()
    """Each joint's law from FRICTION_LAWS; none given: every joint "stribeck"."""
    shift_rad_s: np.ndarray | None = None
    """φ3 of the "sigmoid" joints [rad/s] (0 for the others)."""
    presliding_rad: np.ndarray | None = None
    """x_c of the "presliding" joints [rad] (0 for the others)."""

    def laws(self) -> np.ndarray:
        return np.array(self.law or ("stribeck",) * len(self.fv1))

    @property
    def static_nm(self) -> np.ndarray:
        """The level a joint sticks at (MuJoCo's friction loss): fs of eq. (7), none for the smooth laws."""
        return np.where(self.laws() == "stribeck", self.fs, 0.0)

    def torque_nm(self, dq_rad_s: np.ndarray, state: np.ndarray | None = None) -> np.ndarray:
        """The friction torque at joint velocities dq (…, n), presliding joints at their Dahl `state` (…, n) (none
        given: sliding, z = sgn(dq))."""
        return self.continuous_torque_nm(dq_rad_s, state) + self.fv1 * dq_rad_s + self.static_nm * np.sign(dq_rad_s)

    def continuous_torque_nm(self, dq_rad_s: np.ndarray, state: np.ndarray | None = None) -> np.ndarray:
        """The friction without fv1·dq and without the static level: continuous, so that a simulator can apply it
        explicitly (linearised about dq with smooth_slope) and leave the rest to its implicit damping and friction
        loss; presliding joints at their Dahl `state` (none given: z = sgn(dq))."""
        sgn = np.sign(dq_rad_s)
        torque = (self.fs * sgn * (np.exp(-((dq_rad_s / self.fs1) ** 2)) - 1.0)
                  + self.fc * sgn * (1.0 - np.exp(-((dq_rad_s / self.fc1) ** 2)))
                  + self.fv2 * sgn * dq_rad_s**2 + self.fv3 * dq_rad_s**3)
        if not self.law:
            return torque
        laws = self.laws()
        smooth = self.fc * (np.tanh((dq_rad_s + self.shift()) / self.fc1) - np.tanh(self.shift() / self.fc1))
        dahl = self.fc * (np.sign(dq_rad_s) if state is None else state)
        return np.where(laws == "stribeck", torque, np.where(laws == "presliding", dahl, smooth))

    def presliding_step(self, state: np.ndarray, delta_q_rad: np.ndarray) -> np.ndarray:
        """Dahl's state after a travel Δq (exact for a travel in one direction): z → s + (z − s)·e^(−|Δq|/x_c),
        s = sgn(Δq); 0 at the joints of other laws."""
        if self.presliding_rad is None:
            return np.zeros_like(self.fc)
        presliding = self.laws() == "presliding"
        x_c = np.where(presliding, self.presliding_rad, 1.0)
        s = np.sign(delta_q_rad)
        return np.where(presliding, s + (state - s) * np.exp(-np.abs(delta_q_rad) / x_c), 0.0)

    def presliding_along(self, q_rad: np.ndarray) -> np.ndarray:
        """Dahl's state (K, n) along a path of positions (K, n) that starts at rest with z = 0."""
        state, out = np.zeros_like(self.fc), np.empty_like(q_rad)
        for k, step in enumerate(np.diff(q_rad, axis=0, prepend=q_rad[:1])):
            state = self.presliding_step(state, step)
            out[k] = state
        return out

    def shift(self) -> np.ndarray:
        """φ3 per joint (0 but for sigmoid joints; a tanh joint is a sigmoid without shift)."""
        return np.zeros_like(self.fc) if self.shift_rad_s is None else self.shift_rad_s

    def smooth_slope(self, dq_rad_s: np.ndarray) -> np.ndarray:
        """d(continuous_torque_nm)/d(dq) of the smooth laws at dq, fc/fc1·(1 − tanh²), where it is steep (at rest:
        fc/fc1); 0 at the joints of eq. (7), whose continuous part is flat at rest and falls with a Stribeck
        rise, so that explicit is stable there, and at presliding joints (a state, applied explicitly: a spring of
        fc/x_c, stable at the physics step)."""
        if not self.law:
            return np.zeros_like(self.fc)
        slope = self.fc / self.fc1 * (1.0 - np.tanh((dq_rad_s + self.shift()) / self.fc1) ** 2)
        return np.where(np.isin(self.laws(), ("stribeck", "presliding")), 0.0, slope)
