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
Hadamard stage gives a fast feasible start and its D-criterion value Δ, then cond is minimised subject to D ≤ Δ.
The problem itself (variables, criterion, KS-aggregated constraints, gradients) is design_problem.py.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import scipy.optimize

from robot_id_excitation import criteria as crit
from robot_id_excitation.constraints import CheckReport, DesignLimits, check_samples, constraint_groups
from robot_id_excitation.design_problem import VERIFY_FACTOR, DesignOptions, DesignProblem
from robot_id_excitation.fourier import FourierTrajectory
from robot_id_model.base_parameters import BaseParameters, base_parameters
from robot_id_model.robot_model import RobotModel

START_MARGIN = 0.05
"""A random start uses this normalised margin to every constraint."""


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


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _random_start(problem: DesignProblem, rng: np.random.Generator, tries: int = 50) -> np.ndarray | None:
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


def _static_report(problem: DesignProblem, rng: np.random.Generator, tries: int = 50) -> CheckReport:
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
    problem: DesignProblem, x0: np.ndarray, objective: str, label: str, deadline: float | None,
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


def _scale_to_fit(problem: DesignProblem, x: np.ndarray) -> np.ndarray:
    """Shrink the motion about q0 until the verification grid holds (last resort after tightening)."""
    c, q0 = problem.split(x)
    lo, hi = 0.0, 1.0
    for _ in range(25):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if problem.verify(problem.join(mid * c, q0)).feasible else (lo, mid)
    return problem.join(lo * c, q0)


def _one_start(
    problem: DesignProblem, x0: np.ndarray, label: str, deadline: float | None, progress: Callable[[str], None]
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


def _score(problem: DesignProblem, x: np.ndarray) -> float:
    name = "cond" if problem.options.criterion == "embedded" else problem.options.criterion
    return problem.value(name, x)


def design_excitation(
    robot: RobotModel,
    limits: DesignLimits,
    options: DesignOptions | None = None,
    robot_name: str = "",
    base: BaseParameters | None = None,
    progress: Callable[[str], None] = _progress,
) -> DesignResult:
    """Design an excitation trajectory; raises DesignError (with the binding constraints) if none is feasible."""
    options = options or DesignOptions()
    if options.criterion not in crit.CRITERIA:
        raise ValueError(f"criterion must be one of {crit.CRITERIA}, got '{options.criterion}'")
    if options.noise_std_nm is not None and len(options.noise_std_nm) != robot.n_joints:
        raise ValueError(f"noise_std_nm needs one value per joint ({robot.n_joints})")
    started = time.monotonic()
    deadline = None if options.time_limit_s is None else started + options.time_limit_s
    base = base if base is not None else base_parameters(robot)
    problem = DesignProblem(robot, base, limits, options, robot_name)
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
