"""Optimal excitation design: multi-start SLSQP over Fourier coefficients, with safety constraints.

Decision variables per joint: the offset q0 and the coefficients c = [a; b] (Xu et al. 2020, eq. 8); for the finite
series c = N·z with N spanning Xu et al. 2020, eq. (10), so every candidate starts and ends at rest; the modified
series (Wu et al. 2012) meets its boundary conditions for any c. The criterion is evaluated on the base regressor of
`samples` points of one period, its Coulomb column averaged over each sample's cell so that the criterion is
continuous in c (regressor_sensitivity); the reported criteria use the plain sign(dq) on a 10× finer grid.
Gradients are analytic in the trajectory (the series are linear in c) and in the criterion (eigenvectors of
YbᵀYb), with the regressor's derivatives with respect to q, dq, ddq from regressor_sensitivity.

Constraints (constraints.py) are evaluated on a grid of `constraint_samples` points and aggregated per joint
and kind by the Kreisselmeier–Steinhauser function KS(g) = max g + log Σ exp(ρ(g − max g))/ρ ≥ max g, so
KS ≤ 0 implies every sample holds. The result is then checked on a grid ten times finer; a constraint that
fails there is tightened by the amount it failed by and the start re-optimised.

Criteria (criteria.py): cond, d_optimality, hadamard, and "embedded" (Jia et al. 2019, Luo et al. 2024): a
Hadamard stage gives
a fast feasible start and its D-criterion value Δ, then cond is minimised subject to D ≤ Δ.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.optimize

from robot_id_excitation import criteria as crit
from robot_id_excitation.check import check_trajectory, time_grid
from robot_id_excitation.constraints import CheckReport, ConstraintGroup, DesignLimits, check_samples, constraint_groups
from robot_id_excitation.fourier import Basis, FourierTrajectory, basis, rest_null_space
from robot_id_excitation.regressor_sensitivity import base_regressor, state_sensitivity
from robot_id_model.base_parameters import BaseParameters, base_parameters
from robot_id_model.robot_model import RobotModel

KS_RHO = 200.0
VERIFY_FACTOR = 10
"""The final check uses a grid this many times finer than the design grids."""
START_MARGIN = 0.05
"""A random start uses this normalised margin to every constraint."""


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
    """no new start (and no further iteration) after this much wall time"""
    tighten_rounds: int = 3


@dataclass(frozen=True)
class StartSummary:
    index: int
    initial: crit.CriteriaValues
    final: crit.CriteriaValues
    feasible: bool
    iterations: int
    wall_time_s: float


@dataclass(frozen=True)
class DesignResult:
    trajectory: FourierTrajectory
    criteria: crit.CriteriaValues
    """on the verification grid"""
    report: CheckReport
    """constraints on the verification grid (10× finer than the design grids)"""
    options: DesignOptions
    limits: DesignLimits
    friction: tuple[str, ...]
    wall_time_s: float
    starts: tuple[StartSummary, ...] = field(default_factory=tuple)

    @property
    def feasible(self) -> bool:
        return self.report.feasible


class DesignError(RuntimeError):
    """No feasible trajectory could be built; the message says which constraint binds and by how much."""


class _Problem:
    """Variables x = [z (n×m, row-major), q0 (n)] of one design, with cached values and gradients."""

    def __init__(
        self,
        robot: RobotModel,
        base: BaseParameters,
        limits: DesignLimits,
        options: DesignOptions,
        robot_name: str,
    ) -> None:
        self.robot, self.base, self.limits, self.options, self.robot_name = robot, base, limits, options, robot_name
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
        return self._cached("yb", x, lambda: base_regressor(self.robot, self.base, *self.states(x, self.design_basis),
                                                              coulomb_cell_s=self.cell_s))

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
            weight = self.criterion(name, x)[1]
            s = state_sensitivity(self.robot, self.base, *self.states(x, self.design_basis), weight,
                                  coulomb_cell_s=self.cell_s)
            return self.chain(self.design_basis, *s)
        return self._cached("grad-" + name, x, compute)

    def criteria_values(self, x: np.ndarray, samples: int) -> crit.CriteriaValues:
        b = basis(time_grid(1.0 / self.options.base_frequency_hz, samples), self.options.base_frequency_hz,
                  self.options.harmonics, self.options.kind)
        return crit.evaluate_criteria(base_regressor(self.robot, self.base, *self.states(x, b)), self.noise)

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
        """A generous box: |z| ≤ 2·dq_max of its joint, q0 inside the position limits."""
        z = [(-2 * v, 2 * v) for v in self.limits.velocity_rad_s for _ in range(self.m)]
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


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _random_start(problem: _Problem, rng: np.random.Generator, tries: int = 50) -> np.ndarray | None:
    """A random feasible point: q0 in the middle half of the range, random coefficients scaled to fit."""
    lim = problem.limits
    mid = 0.5 * (lim.position_upper_rad + lim.position_lower_rad)
    half = 0.5 * (lim.position_upper_rad - lim.position_lower_rad)
    for _ in range(tries):
        q0 = mid + rng.uniform(-0.5, 0.5, problem.n) * half
        z = rng.normal(size=(problem.n, problem.m))
        x_dir = np.concatenate([z.ravel(), np.zeros(problem.n)])
        x_rest = np.concatenate([np.zeros(problem.n * problem.m), q0])
        if problem.max_violation(x_rest) > -START_MARGIN:
            continue
        lo, hi = 0.0, 1.0
        while problem.max_violation(x_rest + hi * x_dir) <= -START_MARGIN and hi < 1e3:
            lo, hi = hi, 2 * hi
        for _ in range(30):
            mid_a = 0.5 * (lo + hi)
            lo, hi = (mid_a, hi) if problem.max_violation(x_rest + mid_a * x_dir) <= -START_MARGIN else (lo, mid_a)
        if lo > 0:
            return x_rest + lo * x_dir
    return None


def _static_report(problem: _Problem, rng: np.random.Generator, tries: int = 50) -> CheckReport:
    """Constraints at rest at the least violating of random poses, to explain an infeasible design."""
    lim = problem.limits
    mid = 0.5 * (lim.position_upper_rad + lim.position_lower_rad)
    half = 0.5 * (lim.position_upper_rad - lim.position_lower_rad)
    poses = mid + rng.uniform(-0.5, 0.5, (tries, problem.n)) * half
    zeros = np.zeros_like(poses)
    groups = constraint_groups(problem.robot, lim, poses, zeros, zeros)
    best = int(np.argmin(np.max([g.value for g in groups], axis=0)))
    return check_samples(problem.robot, lim, np.zeros(1), poses[best : best + 1], zeros[:1], zeros[:1])


class _DeadlineError(Exception):
    """Raised from the SLSQP callback when the design's time limit has passed."""


def _minimise(
    problem: _Problem, x0: np.ndarray, objective: str, label: str, deadline: float | None,
    progress: Callable[[str], None], d_bound: float | None = None,
) -> tuple[np.ndarray, int]:
    """SLSQP from x0; returns the last iterate and the iteration count."""
    constraints = [{
        "type": "ineq", "fun": lambda x: -problem.aggregated(x), "jac": lambda x: -problem.aggregated_gradient(x),
    }]
    if d_bound is not None:
        constraints.append({
            "type": "ineq",
            "fun": lambda x: np.array([d_bound - problem.value("d_optimality", x)]),
            "jac": lambda x: -problem.gradient("d_optimality", x)[None, :],
        })
    # SLSQP's first step is the negative gradient: scale the objective so that it moves x by about 0.1.
    scale = 0.1 / max(float(np.abs(problem.gradient(objective, x0)).max()), 1e-12)
    state = {"x": x0, "iterations": 0, "printed": time.monotonic()}

    def callback(xk: np.ndarray) -> None:
        state["x"], state["iterations"] = xk.copy(), state["iterations"] + 1
        now = time.monotonic()
        if now - state["printed"] > 2.0:
            state["printed"] = now
            shown = f"cond {np.exp(problem.value('cond', xk)):.2f}"
            if objective != "cond":
                shown += f", {objective} {problem.value(objective, xk):.4g}"
            progress(f"  {label} iteration {state['iterations']}: {shown}, "
                     f"worst constraint {problem.max_violation(xk):+.3g} (<= 0 holds)")
        if deadline is not None and now > deadline:
            raise _DeadlineError

    try:
        res = scipy.optimize.minimize(
            lambda x: scale * problem.value(objective, x), x0, jac=lambda x: scale * problem.gradient(objective, x),
            method="SLSQP", constraints=constraints, bounds=problem.bounds(), callback=callback,
            options={"maxiter": problem.options.max_iterations, "ftol": 1e-9},
        )
        return res.x, int(res.nit)
    except _DeadlineError:
        return state["x"], state["iterations"]


def _scale_to_fit(problem: _Problem, x: np.ndarray) -> np.ndarray:
    """Shrink the motion about q0 until the verification grid holds (last resort after tightening)."""
    c, q0 = problem.split(x)
    lo, hi = 0.0, 1.0
    for _ in range(25):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if problem.verify(problem.join(mid * c, q0)).feasible else (lo, mid)
    return problem.join(lo * c, q0)


def _one_start(
    problem: _Problem, x0: np.ndarray, label: str, deadline: float | None, progress: Callable[[str], None]
) -> tuple[np.ndarray, int]:
    """Optimise one start; tighten constraints that fail on the fine grid; shrink the motion as a last resort."""
    o = problem.options
    objective, bound, iterations = o.criterion, None, 0
    if o.criterion == "embedded":
        x0, iterations = _minimise(problem, x0, "hadamard", label + " hadamard", deadline, progress)
        objective = "cond"
        bound = o.d_bound if o.d_bound is not None else problem.value("d_optimality", x0)
        source = "given" if o.d_bound is not None else "the Hadamard stage's value"
        progress(f"  {label}: minimising cond subject to D-criterion <= {bound:.4g} ({source})")
    x, it = _minimise(problem, x0, objective, label, deadline, progress, bound)
    iterations += it
    for _ in range(o.tighten_rounds):
        report = problem.verify(x)
        if report.feasible:
            break
        problem.tighten(report)
        progress(f"  {label}: tightening {len(report.violations)} constraint(s) that fail on the fine grid")
        x, it = _minimise(problem, x, objective, label + " tightened", deadline, progress, bound)
        iterations += it
    c, q0 = problem.split(x)
    if not problem.verify(x).feasible and problem.verify(problem.join(np.zeros_like(c), q0)).feasible:
        progress(f"  {label}: shrinking the motion about q0 to fit the limits")
        x = _scale_to_fit(problem, x)
    return x, iterations


def _score(problem: _Problem, x: np.ndarray) -> float:
    name = "cond" if problem.options.criterion == "embedded" else problem.options.criterion
    return problem.value(name, x)


def design_excitation(
    robot: RobotModel,
    limits: DesignLimits,
    options: DesignOptions = DesignOptions(),
    robot_name: str = "",
    base: BaseParameters | None = None,
    progress: Callable[[str], None] = _progress,
) -> DesignResult:
    """Design an excitation trajectory; raises DesignError (with the binding constraints) if none is feasible."""
    if options.criterion not in crit.CRITERIA:
        raise ValueError(f"criterion must be one of {crit.CRITERIA}, got '{options.criterion}'")
    if options.noise_std_nm is not None and len(options.noise_std_nm) != robot.n_joints:
        raise ValueError(f"noise_std_nm needs one value per joint ({robot.n_joints})")
    started = time.monotonic()
    deadline = None if options.time_limit_s is None else started + options.time_limit_s
    base = base if base is not None else base_parameters(robot)
    problem = _Problem(robot, base, limits, options, robot_name)
    rng = np.random.default_rng(options.seed)
    progress(f"design: {robot_name or robot.model.name}, {options.kind}, L = {options.harmonics}, "
             f"f_f = {options.base_frequency_hz} Hz, criterion {options.criterion}, {base.n_base} base parameters "
             f"(friction {list(robot.friction)}), {options.starts} start(s)")
    best, best_score, summaries = None, np.inf, []
    fallback, fallback_violation = None, np.inf
    for s in range(options.starts):
        if deadline is not None and time.monotonic() > deadline and best is not None:
            progress(f"design: time limit reached after {s} start(s)")
            break
        t0 = time.monotonic()
        x0 = _random_start(problem, rng)
        if x0 is None:
            progress(f"design: start {s + 1}: no feasible random start found")
            continue
        problem.reset_tightening()
        initial = problem.criteria_values(x0, options.samples)
        progress(f"design: start {s + 1}/{options.starts}: random feasible start cond {initial.condition_number:.1f}")
        x, iterations = _one_start(problem, x0, f"start {s + 1}", deadline, progress)
        report = problem.verify(x)
        final = problem.criteria_values(x, options.samples)
        summaries.append(StartSummary(s, initial, final, report.feasible, iterations, time.monotonic() - t0))
        progress(f"design: start {s + 1} done in {time.monotonic() - t0:.1f} s: cond {final.condition_number:.2f}, "
                 f"log det {final.log_det:.2f}, {'feasible' if report.feasible else 'INFEASIBLE'}")
        if report.feasible and _score(problem, x) < best_score:
            best, best_score = x, _score(problem, x)
        worst = max((v.normalised for v in report.violations), default=0.0)
        if not report.feasible and worst < fallback_violation:
            fallback, fallback_violation = report, worst
    if best is None:
        if fallback is not None:
            head = "no feasible excitation trajectory found; the least violating design:"
            report = fallback
        else:
            head = "no feasible excitation trajectory found: even at rest, the best of 50 random poses breaks a limit:"
            report = _static_report(problem, rng)
        raise DesignError("\n".join([head, *report.lines()]))
    traj = problem.trajectory(best)
    result_criteria = problem.criteria_values(best, VERIFY_FACTOR * options.samples)
    return DesignResult(traj, result_criteria, problem.verify(best), options, limits, robot.friction,
                        time.monotonic() - started, tuple(summaries))
