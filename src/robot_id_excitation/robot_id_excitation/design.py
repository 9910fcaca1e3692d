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

Stopping early: the time limit is checked in every phase (the random start search, every objective and constraint
evaluation and iteration of SLSQP, before each tightening round and each step of the shrinking). At the time limit,
and on Ctrl-C (DesignInterrupted), the design keeps the best design verified feasible on the fine grid so far: of
the finished starts, the current start's best iterate feasible on the constraint grid, or its random start (at
most two more fine-grid checks).

Criteria (criteria.py): cond, d_optimality, hadamard, and "embedded" (Jia et al. 2019, Luo et al. 2024): a
Hadamard stage gives a fast feasible start and its D-criterion value Δ, then cond is minimised subject to D ≤ Δ.
The problem itself (variables, criterion, KS-aggregated constraints, gradients) is design_problem.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from robot_id_cli.command_line import progress_bar, say
from robot_id_excitation import criteria as crit
from robot_id_excitation.constraints import (
    COLLISION_SCALE_M,
    CheckReport,
    DesignLimits,
)
from robot_id_excitation.design_problem import MAX_CONDITION_NUMBER, VERIFY_FACTOR, DesignOptions, DesignProblem
from robot_id_excitation.design_refusal import static_report
from robot_id_excitation.fourier import FourierTrajectory
from robot_id_excitation.regressor_sensitivity import BaseColumns, base_columns
from robot_id_model.base_parameters import base_parameters
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
    stopped: str | None = None
    """why the design stopped before finishing its work ("time limit", "interrupted"); None if it finished"""

    @property
    def feasible(self) -> bool:
        return self.report.feasible


class DesignError(RuntimeError):
    """No feasible trajectory could be built; the message says which constraint binds and by how much."""


class DesignInterrupted(KeyboardInterrupt):
    """Ctrl-C during a design; `result` is the best feasible design found so far (None if there was none)."""

    def __init__(self, result: DesignResult | None) -> None:
        super().__init__()
        self.result = result


def _score(problem: DesignProblem, x: np.ndarray) -> float:
    name = "cond" if problem.options.criterion == "embedded" else problem.options.criterion
    return problem.value(name, x)


class _Search:
    """The state of a multi-start design: the best design verified so far and the current start's candidates."""

    def __init__(self, problem: DesignProblem, deadline: float | None, progress: Callable[[str], None]) -> None:
        self.problem, self.deadline, self.progress = problem, deadline, progress
        self.best: tuple[float, np.ndarray, CheckReport] | None = None
        self.candidates: dict[str, tuple[float, np.ndarray]] = {}
        """unverified fallbacks of the current start: its random start and best iterate feasible on the grid"""
        self.summaries: list[StartSummary] = []
        self.least_violating: tuple[float, CheckReport] | None = None
        self.stopped: str | None = None

    def past_deadline(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline

    def offer(self, x: np.ndarray) -> None:
        """An SLSQP iterate: kept if it holds on the constraint grid and scores best of this start."""
        score = _score(self.problem, x)
        if score < self.candidates.get("iterate", (np.inf,))[0] and self.problem.max_violation(x) <= 0:
            self.candidates["iterate"] = (score, x.copy())

    def consider(self, x: np.ndarray, report: CheckReport) -> None:
        """A verified design: the best so far if feasible and better, else perhaps the least violating."""
        score = _score(self.problem, x)
        if report.feasible and (self.best is None or score < self.best[0]):
            self.best = (score, x, report)
        worst = max((v.normalised for v in report.violations), default=0.0)
        if not report.feasible and (self.least_violating is None or worst < self.least_violating[0]):
            self.least_violating = (worst, report)

    def settle(self) -> None:
        """After an early stop: verify the current start's candidates that beat the best, best first."""
        kept = "the best finished start" if self.best is not None else "nothing feasible"
        bar = np.inf if self.best is None else self.best[0]
        for key, (score, x) in sorted(self.candidates.items(), key=lambda item: item[1][0]):
            if score >= bar:
                break
            report = self.problem.verify(x)
            if report.feasible:
                self.best = (score, x, report)
                kept = "the current start's " + ("best iterate" if key == "iterate" else "random start")
                break
        self.candidates.clear()
        self.progress(f"design: {self.stopped}: keeping {kept}")

    def run(self, rng: np.random.Generator) -> None:
        problem, o, progress = self.problem, self.problem.options, self.progress
        for s in progress_bar(range(o.starts), description="design starts", unit="start"):
            if self.past_deadline():
                self.stopped = "time limit"
                progress(f"design: time limit reached after {s} start(s)")
                return
            t0 = time.monotonic()
            x0 = _random_start(problem, rng, self.past_deadline)
            if x0 is None:
                if not self.past_deadline():
                    progress(f"design: start {s + 1}: no feasible random start found")
                continue
            problem.reset_tightening()
            initial = problem.criteria_values(x0, o.samples)
            self.candidates = {"start": (_score(problem, x0), x0)}
            progress(f"design: start {s + 1}/{o.starts}: random feasible start cond {initial.condition_number:.1f}")
            x, iterations = _one_start(self, x0, f"start {s + 1}")
            report = problem.verify(x)
            final = problem.criteria_values(x, o.samples)
            self.summaries.append(StartSummary(s, initial, final, report.feasible, iterations, time.monotonic() - t0))
            cut = self.past_deadline()
            # the start's state, in words that cannot be read as the design's verdict (the final check's alone)
            state = ("within the limits" if report.feasible
                     else f"{len(report.violations)} limit(s) exceeded on the fine grid, not kept")
            what = "cut by the time limit in {:.1f} s: last iterate" if cut else "done in {:.1f} s: result"
            progress(f"design: start {s + 1} {what.format(time.monotonic() - t0)} cond {final.condition_number:.2f}, "
                     f"log det {final.log_det:.2f}, {state}")
            self.consider(x, report)
            if cut:
                self.stopped = "time limit"
                return
            self.candidates.clear()


def _random_start(
    problem: DesignProblem, rng: np.random.Generator, stop: Callable[[], bool] = lambda: False, tries: int = 50
) -> np.ndarray | None:
    """A random feasible point: q0 in the middle half of the range, random coefficients scaled to fit."""
    lim = problem.limits
    mid = 0.5 * (lim.position_upper_rad + lim.position_lower_rad)
    half = 0.5 * (lim.position_upper_rad - lim.position_lower_rad)
    for _ in range(tries):
        if stop():
            return None
        q0 = mid + rng.uniform(-0.5, 0.5, problem.n) * half
        if problem.options.pose_rad is not None:
            q0 = np.asarray(problem.options.pose_rad, dtype=float)
        z = rng.normal(size=(problem.n, problem.m))
        z[list(problem.options.still_joints)] = 0.0
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


def _identifying(result: DesignResult) -> DesignResult:
    """The design, unless its cond(Yb) says that its data would not identify the base parameters."""
    cond = result.criteria.condition_number
    if not cond <= MAX_CONDITION_NUMBER:
        raise DesignError(f"the best feasible design has cond(Yb) = {cond:.3g}, above {MAX_CONDITION_NUMBER:g}: its "
                          "data would not identify the base parameters (nothing written); give the motion room: a "
                          "longer period (--base-frequency), more harmonics, or wider limits")
    return result


class _DeadlineError(Exception):
    """Raised from SLSQP's callbacks when the design's time limit has passed."""


def _minimise(
    search: _Search, x0: np.ndarray, objective: str, label: str, d_bound: float | None = None
) -> tuple[np.ndarray, int]:
    """SLSQP from x0; returns the last iterate and the iteration count (stops at the time limit)."""
    import scipy.optimize  # here, not at the top: the command line starts without scipy

    problem = search.problem

    def timed(function: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
        def call(x: np.ndarray) -> np.ndarray:
            if search.past_deadline():
                raise _DeadlineError
            return function(x)
        return call

    constraints = [{
        "type": "ineq", "fun": timed(lambda x: -problem.aggregated(x)),
        "jac": timed(lambda x: -problem.aggregated_gradient(x)),
    }]
    if d_bound is not None:
        constraints.append({
            "type": "ineq",
            "fun": timed(lambda x: np.array([d_bound - problem.value("d_optimality", x)])),
            "jac": timed(lambda x: -problem.gradient("d_optimality", x)[None, :]),
        })
    # SLSQP's first step is the negative gradient: scale the objective so that it moves x by about 0.1.
    scale = 0.1 / max(float(np.abs(problem.gradient(objective, x0)).max()), 1e-12)
    state = {"x": x0, "iterations": 0, "printed": time.monotonic()}

    def callback(xk: np.ndarray) -> None:
        state["x"], state["iterations"] = xk.copy(), state["iterations"] + 1
        search.offer(xk)
        now = time.monotonic()
        if now - state["printed"] > 2.0:
            state["printed"] = now
            shown = f"cond {np.exp(problem.value('cond', xk)):.2f}"
            if objective != "cond":
                shown += f", {objective} {problem.value(objective, xk):.4g}"
            search.progress(f"  {label} iteration {state['iterations']}: {shown}, "
                            f"worst constraint {problem.max_violation(xk):+.3g} (<= 0 holds)")
        if search.past_deadline():
            raise _DeadlineError

    try:
        res = scipy.optimize.minimize(
            timed(lambda x: scale * problem.value(objective, x)), x0,
            jac=timed(lambda x: scale * problem.gradient(objective, x)),
            method="SLSQP", constraints=constraints, bounds=problem.bounds(), callback=callback,
            options={"maxiter": problem.options.max_iterations, "ftol": 1e-9},
        )
        return res.x, int(res.nit)
    except _DeadlineError:
        return state["x"], state["iterations"]


def _scale_to_fit(search: _Search, x: np.ndarray) -> np.ndarray:
    """Shrink the motion about q0 until the verification grid holds (last resort after tightening)."""
    problem = search.problem
    c, q0 = problem.split(x)
    lo, hi = 0.0, 1.0
    for _ in range(25):
        if search.past_deadline():
            break
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if problem.verify(problem.join(mid * c, q0)).feasible else (lo, mid)
    return problem.join(lo * c, q0)


def _one_start(search: _Search, x0: np.ndarray, label: str) -> tuple[np.ndarray, int]:
    """Optimise one start; tighten constraints that fail on the fine grid; shrink the motion as a last resort."""
    problem, progress = search.problem, search.progress
    o = problem.options
    objective, bound, iterations = o.criterion, None, 0
    if o.criterion == "embedded":
        x0, iterations = _minimise(search, x0, "hadamard", label + " hadamard")
        if search.past_deadline():
            return x0, iterations
        objective = "cond"
        bound = o.d_bound if o.d_bound is not None else problem.value("d_optimality", x0)
        source = "given" if o.d_bound is not None else "the Hadamard stage's value"
        progress(f"  {label}: minimising cond subject to D-criterion <= {bound:.4g} ({source})")
    x, it = _minimise(search, x0, objective, label, bound)
    iterations += it
    for _ in range(o.tighten_rounds):
        if search.past_deadline():
            return x, iterations
        report = problem.verify(x)
        if report.feasible:
            break
        problem.tighten(report)
        progress(f"  {label}: tightening {len(report.violations)} constraint(s) that fail on the fine grid")
        x, it = _minimise(search, x, objective, label + " tightened", bound)
        iterations += it
    c, q0 = problem.split(x)
    if (not search.past_deadline() and not problem.verify(x).feasible
            and problem.verify(problem.join(np.zeros_like(c), q0)).feasible):
        progress(f"  {label}: shrinking the motion about q0 to fit the limits")
        x = _scale_to_fit(search, x)
    return x, iterations


def _check_per_joint(options: DesignOptions, n: int) -> None:
    """ValueError unless the options are valid and their per-joint values fit the n joints."""
    options.validate()
    if options.noise_std_nm is not None and len(options.noise_std_nm) != n:
        raise ValueError(f"noise_std_nm needs one value per joint ({n})")
    if options.pose_rad is not None and len(options.pose_rad) != n:
        raise ValueError(f"the pose needs one position per joint ({n})")
    if any(j >= n for j in options.still_joints):
        raise ValueError(f"still joints must be joint indices below {n}")


def design_excitation(
    robot: RobotModel,
    limits: DesignLimits,
    options: DesignOptions | None = None,
    robot_name: str = "",
    columns: BaseColumns | None = None,
    progress: Callable[[str], None] = say,
) -> DesignResult:
    """Design an excitation trajectory for the regressor `columns` (default: the base parameters'; payload_columns
    for a load); raises DesignError (with the binding constraints) if none is feasible, DesignInterrupted (with the
    best feasible design so far) on Ctrl-C."""
    options = options or DesignOptions()
    _check_per_joint(options, robot.n_joints)
    started = time.monotonic()
    deadline = None if options.time_limit_s is None else started + options.time_limit_s
    columns = columns if columns is not None else base_columns(robot, base_parameters(robot))
    problem = DesignProblem(robot, columns, limits, options, robot_name)
    rng = np.random.default_rng(options.seed)
    progress(f"design: {robot_name or robot.model.name}, {options.kind}, L = {options.harmonics}, "
             f"f_f = {options.base_frequency_hz} Hz, criterion {options.criterion}, {columns.n_columns} parameters "
             f"(friction {list(robot.friction)}), {options.starts} start(s)")
    search = _Search(problem, deadline, progress)

    def result() -> DesignResult | None:
        if search.best is None:
            return None
        _, x, report = search.best
        values = problem.criteria_values(x, VERIFY_FACTOR * options.samples)
        return DesignResult(problem.trajectory(x), values, report, options, limits, robot.friction,
                            time.monotonic() - started, tuple(search.summaries), search.stopped)

    try:
        search.run(rng)
    except KeyboardInterrupt:
        search.stopped = "interrupted"
        progress("design: interrupted; keeping the best feasible design found so far")
        search.settle()
        raise DesignInterrupted(result()) from None
    if search.stopped:
        search.settle()
    if search.best is not None:
        return _identifying(result())
    hints: list[str] = []
    if search.stopped:
        report = search.least_violating[1] if search.least_violating else None
        head = (f"no feasible excitation trajectory found within the time limit of {options.time_limit_s:g} s"
                + ("; the least violating design:" if report else ""))
    elif search.least_violating is not None:
        head, report = "no feasible excitation trajectory found; the least violating design:", search.least_violating[1]
    else:
        report, hints = static_report(problem, rng)
        margin_mm = START_MARGIN * COLLISION_SCALE_M * 1e3
        head = ("no feasible excitation trajectory found: even at rest, the best of 50 random poses breaks a limit:"
                if not report.feasible else "no feasible excitation trajectory found: no random start pose keeps the "
                f"start margin ({START_MARGIN:g} of each limit's normalisation; {margin_mm:g} mm for a distance) to "
                "every limit; the best of 50 random poses at rest:")
    raise DesignError("\n".join([head, *(report.lines() if report else []), *hints]))
