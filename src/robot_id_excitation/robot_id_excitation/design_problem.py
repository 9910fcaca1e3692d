"""One excitation design problem: the options, and the decision variables x = [z (n×m), q0 (n)] with the
criterion, the constraint groups aggregated by the Kreisselmeier–Steinhauser function, and their gradients
(see design.py for the method)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from robot_id_excitation import criteria as crit
from robot_id_excitation.check import check_trajectory, time_grid
from robot_id_excitation.constraints import CheckReport, ConstraintGroup, DesignLimits, constraint_groups
from robot_id_excitation.fourier import KINDS, Basis, FourierTrajectory, basis, rest_null_space
from robot_id_excitation.regressor_sensitivity import BaseColumns, base_regressor, state_sensitivity
from robot_id_model.robot_model import RobotModel

KS_RHO = 200.0
VERIFY_FACTOR = 10
"""The final check uses a grid this many times finer than the design grids."""
SAMPLES_PER_HARMONIC = 10
"""Grid rule: the design and constraint grids need at least this many samples per period of the highest harmonic L.
The regressor and the torques hold products of velocities (harmonic 2L), whose Nyquist rate is 4L samples per
period; 10L leaves a margin of 2.5."""


HIGHEST_HARMONIC_HZ = 6.0
"""The highest harmonic L·f_f a design may have: the estimator's default torque low-pass (estimator.yaml,
processing.torque_cutoff_hz, after Xu et al. 2020) removes what lies above it from the data it fits."""
PERIOD_RANGE_S = (1.0, 120.0)
"""A design's period: at least a second (shorter, the acceleration limit a leaves a harmonic at f Hz at most a/(2πf)²
of amplitude: with 2 rad/s², 51 mrad at 1 Hz and 2 mrad at its fifth harmonic) and at most two minutes (periods are
averaged, a run holds several, and the design's constraint grid grows with the period: 0.001 Hz is a 17-minute
period the optimiser cannot satisfy)."""
MAX_CONDITION_NUMBER = 1e4
"""A design whose cond(Yb) is above this would not identify the base parameters: refused, not written (the designs
shipped here are 45-533; Xu et al. 2020 report about 100-200)."""


def min_grid_samples(harmonics: int) -> int:
    """Fewest samples per period that resolve `harmonics` harmonics (SAMPLES_PER_HARMONIC)."""
    return SAMPLES_PER_HARMONIC * harmonics


@dataclass(frozen=True)
class DesignOptions:
    kind: str = "modified_fourier"
    harmonics: int = 5
    base_frequency_hz: float = 0.05
    criterion: str = "cond"
    samples: int = 200
    """regressor samples per period for the criterion"""
    constraint_samples: int = 400
    starts: int = 4
    seed: int = 0
    max_iterations: int = 600
    noise_std_nm: tuple[float, ...] | None = None
    """per-joint torque noise standard deviations Σ^(1/2) for d_optimality and hadamard"""
    d_bound: float | None = None
    """D-criterion bound of the embedded design; by default the Hadamard stage's value (Luo et al. 2024)"""
    time_limit_s: float | None = None
    """wall time of the whole design: every phase stops at it (see design.py)"""
    tighten_rounds: int = 3
    pose_rad: tuple[float, ...] | None = None
    """every joint's offset held at this pose (a payload excitation from the user's pose); None: designed"""
    still_joints: tuple[int, ...] = ()
    """joints (indices) that keep their offset: no harmonics (a payload excitation moves the wrist)"""

    def validate(self, names: Mapping[str, str] | None = None) -> None:
        """Raise ValueError for the first bad option; `names` maps fields to the caller's spelling (CLI options)."""
        def name(field: str) -> str:
            return (names or {}).get(field, field)

        least = 2 if self.kind == "fourier" else 1
        grid = min_grid_samples(self.harmonics)
        resolve = (f">= {grid} to resolve {name('harmonics')} {self.harmonics} ({SAMPLES_PER_HARMONIC} samples per "
                   "period of the highest harmonic)")
        noise = self.noise_std_nm
        period_s = 1.0 / self.base_frequency_hz if self.base_frequency_hz > 0 else math.inf
        rules = (
            ("kind", self.kind in KINDS, f"one of {KINDS}"),
            ("criterion", self.criterion in crit.CRITERIA, f"one of {crit.CRITERIA}"),
            ("harmonics", self.harmonics >= least,
             f">= {least}" + (" for the finite series" if least == 2 else "")),
            ("base_frequency_hz", math.isfinite(self.base_frequency_hz) and self.base_frequency_hz > 0, "> 0 Hz"),
            ("samples", self.samples >= grid, resolve),
            ("constraint_samples", self.constraint_samples >= grid, resolve),
            ("base_frequency_hz", self.harmonics * self.base_frequency_hz <= HIGHEST_HARMONIC_HZ,
             f"at most {HIGHEST_HARMONIC_HZ / max(self.harmonics, 1):g} Hz with {name('harmonics')} "
             f"{self.harmonics}: the highest harmonic would be {self.harmonics * self.base_frequency_hz:g} Hz, above "
             f"the estimator's {HIGHEST_HARMONIC_HZ:g} Hz torque low-pass, which removes it from the data (a period "
             f"of T seconds is 1/T Hz: 20 s is 0.05)"),
            ("base_frequency_hz", 1.0 / PERIOD_RANGE_S[1] <= self.base_frequency_hz <= 1.0 / PERIOD_RANGE_S[0],
             f"from {1.0 / PERIOD_RANGE_S[1]:.3g} to {1.0 / PERIOD_RANGE_S[0]:g} Hz: a period of "
             f"{period_s:.4g} s is outside {PERIOD_RANGE_S[0]:g}–{PERIOD_RANGE_S[1]:g} s"),
            ("starts", self.starts >= 1, ">= 1"),
            ("seed", self.seed >= 0, ">= 0"),
            ("max_iterations", self.max_iterations >= 1, ">= 1"),
            ("noise_std_nm", noise is None or all(math.isfinite(v) and v > 0 for v in noise), "positive (Nm)"),
            ("time_limit_s", self.time_limit_s is None or self.time_limit_s > 0, "> 0 s"),
            ("tighten_rounds", self.tighten_rounds >= 0, ">= 0"),
            ("pose_rad", self.pose_rad is None or all(math.isfinite(v) for v in self.pose_rad), "finite (rad)"),
            ("still_joints", all(j >= 0 for j in self.still_joints), "joint indices from 0"),
        )
        for field, ok, need in rules:
            if not ok:
                raise ValueError(f"{name(field)} must be {need}, got {getattr(self, field)}")


class DesignProblem:
    """Variables x = [z (n×m, row-major), q0 (n)] of one design, with cached values and gradients."""

    def __init__(
        self,
        robot: RobotModel,
        columns: BaseColumns,
        limits: DesignLimits,
        options: DesignOptions,
        robot_name: str,
    ) -> None:
        """`columns`: the regressor columns the criteria see (the base parameters', or a payload's)."""
        self.robot, self.columns, self.limits, self.options = robot, columns, limits, options
        self.robot_name = robot_name
        self.n = robot.n_joints
        period = 1.0 / options.base_frequency_hz

        def grid_basis(samples: int) -> Basis:
            return basis(time_grid(period, samples), options.base_frequency_hz, options.harmonics, options.kind)

        self.design_basis, self.constraint_basis = grid_basis(options.samples), grid_basis(options.constraint_samples)
        self.cell_s = period / options.samples
        two_l = 2 * options.harmonics
        self.null = rest_null_space(options.harmonics) if options.kind == "fourier" else np.eye(two_l)
        self.m = self.null.shape[1]
        self.noise = None if options.noise_std_nm is None else np.asarray(options.noise_std_nm, dtype=float)
        self.rows = np.ones(self.n)
        self.rows[list(options.still_joints)] = 0.0  # a still joint's equations are left out of identification
        self.tightening: dict[tuple[str, str], float] = {}
        self._cache: dict[tuple[str, bytes], object] = {}

    # -- variables ---------------------------------------------------------------------------------------------
    def split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(2L, n) coefficients and (n,) offsets of x."""
        z = x[: self.n * self.m].reshape(self.n, self.m)
        return self.null @ z.T, x[self.n * self.m :]

    def join(self, coefficients: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        z = np.linalg.lstsq(self.null, coefficients, rcond=None)[0].T
        return np.concatenate([z.ravel(), offsets])

    def trajectory(self, x: np.ndarray) -> FourierTrajectory:
        c, q0 = self.split(x)
        o = self.options
        return FourierTrajectory.from_coefficients(o.kind, self.robot_name, self.robot.joint_names,
                                                   o.base_frequency_hz, c, q0)

    def states(self, x: np.ndarray, b: Basis) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        c, q0 = self.split(x)
        return q0 + b.q_rad @ c, b.dq_rad_s @ c, b.ddq_rad_s2 @ c

    def chain(self, b: Basis, p_q: np.ndarray, p_dq: np.ndarray, p_ddq: np.ndarray) -> np.ndarray:
        """Gradient over x from per-sample partials (..., K, n) with respect to q, dq, ddq."""
        g_c = (np.einsum("kc,...ki->...ci", b.q_rad, p_q) + np.einsum("kc,...ki->...ci", b.dq_rad_s, p_dq)
               + np.einsum("kc,...ki->...ci", b.ddq_rad_s2, p_ddq))
        g_z = np.einsum("cm,...ci->...im", self.null, g_c)
        return np.concatenate([g_z.reshape(*g_z.shape[:-2], -1), p_q.sum(axis=-2)], axis=-1)

    def _cached(self, key: str, x: np.ndarray, compute: Callable[[], object]) -> object:
        k = (key, x.tobytes())
        if k not in self._cache:
            if len(self._cache) > 64:
                self._cache.clear()
            self._cache[k] = compute()
        return self._cache[k]

    # -- criteria ----------------------------------------------------------------------------------------------
    def regressor(self, x: np.ndarray) -> np.ndarray:
        return self._cached("yb", x, lambda: self.rows[:, None] * base_regressor(
            self.robot, self.columns, *self.states(x, self.design_basis), coulomb_cell_s=self.cell_s))

    def criterion(self, name: str, x: np.ndarray) -> tuple[float, np.ndarray]:
        """(value, dvalue/dYb) of the criterion to minimise: log cond, D-optimality or Hadamard."""
        def compute() -> tuple[float, np.ndarray]:
            yb = self.regressor(x)
            if name == "cond":
                return crit.log_condition_number_and_gradient(yb)
            if name == "d_optimality":
                return crit.d_optimality_and_gradient(yb, self.noise)
            return crit.hadamard_and_gradient(yb, self.noise)
        return self._cached("crit-" + name, x, compute)

    def value(self, name: str, x: np.ndarray) -> float:
        return self.criterion(name, x)[0]

    def gradient(self, name: str, x: np.ndarray) -> np.ndarray:
        def compute() -> np.ndarray:
            weight = self.rows[:, None] * self.criterion(name, x)[1]
            s = state_sensitivity(self.robot, self.columns, *self.states(x, self.design_basis), weight,
                                  coulomb_cell_s=self.cell_s)
            return self.chain(self.design_basis, *s)
        return self._cached("grad-" + name, x, compute)

    def criteria_values(self, x: np.ndarray, samples: int) -> crit.CriteriaValues:
        b = basis(time_grid(1.0 / self.options.base_frequency_hz, samples), self.options.base_frequency_hz,
                  self.options.harmonics, self.options.kind)
        yb = self.rows[:, None] * base_regressor(self.robot, self.columns, *self.states(x, b))
        return crit.evaluate_criteria(yb, self.noise)

    # -- constraints -------------------------------------------------------------------------------------------
    def groups(self, x: np.ndarray, partials: bool) -> list[ConstraintGroup]:
        return self._cached(f"groups-{partials}", x, lambda: constraint_groups(
            self.robot, self.limits, *self.states(x, self.constraint_basis), partials=partials))

    def _ks(self, groups: list[ConstraintGroup]) -> tuple[np.ndarray, np.ndarray]:
        """KS value (plus tightening) of every group and the softmax weights of its samples."""
        values = np.empty(len(groups))
        weights = np.empty((len(groups), len(groups[0].value)))
        for j, g in enumerate(groups):
            top = g.value.max()
            e = np.exp(KS_RHO * (g.value - top))
            values[j] = top + np.log(e.sum()) / KS_RHO + self.tightening.get((g.constraint, g.where), 0.0)
            weights[j] = e / e.sum()
        return values, weights

    def aggregated(self, x: np.ndarray) -> np.ndarray:
        """KS value of every constraint group; ≤ 0 is feasible."""
        return self._cached("ks", x, lambda: self._ks(self.groups(x, partials=False))[0])

    def aggregated_gradient(self, x: np.ndarray) -> np.ndarray:
        """(groups, variables) gradient of `aggregated`."""
        def compute() -> np.ndarray:
            groups = self.groups(x, partials=True)
            weights = self._ks(groups)[1]
            parts = [np.stack([getattr(g, key) for g in groups]) * weights[:, :, None]
                     for key in ("d_q", "d_dq", "d_ddq")]
            return self.chain(self.constraint_basis, *parts)
        return self._cached("ks-grad", x, compute)

    def bounds(self) -> list[tuple[float, float]]:
        """A generous box: |z| ≤ 2·dq_max of its joint, q0 inside the position limits; a still joint's z and, with
        a pose, every q0 held (lower = upper)."""
        still = set(self.options.still_joints)
        z = [(0.0, 0.0) if j in still else (-2 * v, 2 * v)
             for j, v in enumerate(self.limits.velocity_rad_s) for _ in range(self.m)]
        if self.options.pose_rad is not None:
            return z + [(q, q) for q in self.options.pose_rad]
        return z + list(zip(self.limits.position_lower_rad, self.limits.position_upper_rad, strict=True))

    def tighten(self, report: CheckReport) -> None:
        """Shrink every constraint that fails on the fine grid by the amount it failed by (plus 1e-3)."""
        for v in report.violations:
            key = (v.constraint, v.where)
            self.tightening[key] = self.tightening.get(key, 0.0) + v.normalised + 1e-3
        self._cache.clear()

    def reset_tightening(self) -> None:
        self.tightening.clear()
        self._cache.clear()

    def max_violation(self, x: np.ndarray) -> float:
        """Largest normalised constraint value on the constraint grid (≤ 0: feasible there)."""
        return max(float(g.value.max()) for g in self.groups(x, partials=False))

    def verify(self, x: np.ndarray) -> CheckReport:
        samples = VERIFY_FACTOR * max(self.options.samples, self.options.constraint_samples)
        return check_trajectory(self.robot, self.limits, self.trajectory(x), samples)
