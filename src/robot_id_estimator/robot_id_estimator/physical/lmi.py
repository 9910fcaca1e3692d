"""Physical parameters by a convex program on the pseudo-inertias (Wensing et al. 2017), with a regulariser
towards the nominal model, Euclidean or entropic (log-det Bregman divergence, Lee, Wensing and Park 2019), under
every constraint of physical.constraints and the size bounds of physical.size_bounds (LMIs in π): eq. (18) and the
margin are not convex in the standard parameters, so the program is solved by the penalty convex-concave procedure
(Lipp and Boyd 2016; physical.lmi_rows), a few convex programs of the same structure (compiled once) whose
solutions meet every constraint once the penalised slacks vanish. The data enter the program as cvxpy parameters
(DPP), so that retrievals under the same robot and bounds (the held-out check's folds) share one compiled program
(LmiPrograms)."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import cvxpy as cp
import numpy as np
import scipy.linalg
import scipy.sparse

from robot_id_estimator.physical.constraints import (
    body_pi,
    box_bounds,
    constraint_violations,
    link_size,
    lumped_part,
)
from robot_id_estimator.physical.lmi_rows import ConvexRows, convex_rows
from robot_id_estimator.physical.problem import (
    PhysicalBounds,
    RetrievalError,
    RetrievalResult,
    fit_scale,
    pull_scales,
    reduce_problem,
    residual_norm,
    retrieval_result,
)
from robot_id_estimator.physical.size_bounds import SIZE_MARGIN
from robot_id_model.parameters import inertial_columns, nominal_parameters
from robot_id_model.physical import pseudo_inertia
from robot_id_model.robot_model import RobotModel

MAX_ITERATIONS = 30
PENALTY = (1.0, 1e7)
"""Slack penalty of the first iteration and its cap (×10 per iteration while a slack is left; Lipp and Boyd 2016,
algorithm 3.1)."""
SLACK_TOL = 1e-9
"""Slacks (relative to each row's scale) below this count as zero."""
CONVERGED = 1e-6
SOLVER_GAP = 1e-9
"""The procedure stops when no slack is left and the objective changes by less than CONVERGED of itself plus
SOLVER_GAP (the objective is scaled so that the unconstrained fit's is about one). Clarabel runs on one thread:
its results are then the same from run to run."""


@dataclass(frozen=True)
class _Program:
    """The convex subproblem compiled for one robot, bounds and settings, its variable π and its parameters."""

    problem: cp.Problem
    pi: cp.Variable
    params: dict
    rows: ConvexRows


class LmiPrograms:
    """retrieve_lmi's convex programs, each compiled at its first use and then reused. Give one to every retrieval of
    the same robot under the same bounds (the held-out check's folds, which differ in their data only): each further
    retrieval is spared cvxpy's compilation."""

    def __init__(self) -> None:
        self._programs: dict[tuple, _Program] = {}

    def get(self, key: tuple, build: Callable[[], _Program]) -> _Program:
        if key not in self._programs:
            self._programs[key] = build()
        return self._programs[key]


def retrieve_lmi(
    robot: RobotModel,
    w_target: np.ndarray,
    tau_nm: np.ndarray,
    target_from_pi: np.ndarray,
    bounds: PhysicalBounds,
    regularizer: str = "euclidean",
    weight: float = 1.0,
    epsilon: float = 1e-6,
    outside_sq_nm2: float = 0.0,
    programs: LmiPrograms | None = None,
) -> RetrievalResult:
    """min ‖τ − W·E·π‖² + weight·r₀²·D(π, π_nominal) under every constraint of physical.constraints, and
    J_i(π) ⪰ ε·I for each link body's pseudo-inertia.

    r₀² is the unconstrained fit's squared residual (problem.fit_scale), so that the pull weighs the same against
    clean and noisy data: a divergence of 1/`weight` costs as much as that residual. W, τ may be a reduced system,
    with `outside_sq_nm2` the torque's part it cannot explain (physical.problem.reduce_problem). D is `euclidean`
    (relative squared distance) or `entropic` (the log-det Bregman divergence of the pseudo-inertias, which is
    invariant to the choice of link frame). Solved with Clarabel.
    The result lists every constraint it does not meet (physical.constraints.constraint_violations). `programs`
    may hold the program compiled before for the same robot and bounds (LmiPrograms).
    """
    if regularizer not in ("euclidean", "entropic"):
        raise ValueError(f"regularizer must be 'euclidean' or 'entropic', not {regularizer!r}")
    t0 = time.perf_counter()
    problem = reduce_problem(w_target, tau_nm, target_from_pi, outside_sq_nm2)
    pi0 = nominal_parameters(robot)
    program, pi, params, rows = _fitted_program(robot, bounds, problem, regularizer, weight, epsilon, programs)
    point, value, slack, penalty, iterations, status = pi0, np.inf, np.inf, PENALTY[0], 0, None
    for iterations in range(1, MAX_ITERATIONS + 1):
        _linearise(robot, bounds, rows, params, point, penalty)
        try:
            _solve(program)
        except RetrievalError:
            if iterations == 1:
                raise
            status = f"the solver failed on convex program {iterations}; the result is that of the one before"
            break
        if pi.value is None:
            if iterations == 1:
                raise RetrievalError(f"the convex program has no solution: solver status {program.status}")
            status = (f"convex program {iterations} has solver status {program.status}; the result is that of the "
                      "one before")
            break
        point, previous = np.asarray(pi.value), value
        value, slack = float(program.value), max(float(params["slack"][0].value.max(initial=0.0)),
                                                 float(params["slack"][1].value.max(initial=0.0)))
        if slack <= SLACK_TOL and abs(previous - value) <= CONVERGED * abs(value) + SOLVER_GAP:
            break
        if slack > SLACK_TOL:
            penalty = min(10.0 * penalty, PENALTY[1])
    lower, upper = box_bounds(robot, bounds)
    point = np.where(lower == upper, lower, point)  # held parameters exactly at their value, not to solver precision
    violations = constraint_violations(robot, bounds, point)
    notes = _notes(f"{regularizer} regulariser, weight {weight:g}; convex-concave procedure: {iterations} convex "
                   "programs", status, program.status, slack)
    return retrieval_result(robot, f"lmi-{regularizer}", point, residual_norm(problem, point), problem, violations,
                            t0, 1, notes)


def _fitted_program(robot, bounds, problem, regularizer, weight, epsilon,
                    programs: LmiPrograms | None) -> tuple[cp.Problem, cp.Variable, dict, ConvexRows]:
    """The convex program of these settings (from `programs` when compiled before), its variable, parameters and
    rows, with `problem`'s data set: its r and z over the fit's scale, so that the unconstrained fit's objective is
    about 1 (Clarabel misreads tiny objectives as unbounded)."""
    def build() -> _Program:
        pi0 = nominal_parameters(robot)
        rows = convex_rows(robot, bounds, np.maximum(np.abs(pi0), 1e-3))
        return _Program(*_program(robot, bounds, problem.r.shape[0], pi0, rows, regularizer, weight, epsilon), rows)

    compiled = (programs or LmiPrograms()).get((regularizer, weight, epsilon, problem.r.shape), build)
    scale = np.sqrt(fit_scale(problem))
    compiled.params["fit"][0].value, compiled.params["fit"][1].value = problem.r / scale, problem.z / scale
    return compiled.problem, compiled.pi, compiled.params, compiled.rows


def _notes(procedure: str, failure: str | None, solver_status: str, slack: float) -> tuple[str, ...]:
    """What a user should know about how the convex-concave procedure ended."""
    notes = [procedure]
    if failure is not None:
        notes.append(failure)
    elif solver_status != cp.OPTIMAL:
        notes.append(f"the solver reports status {solver_status}: the solution may be inaccurate")
    if slack > SLACK_TOL:
        notes.append(f"the penalised slack did not vanish ({slack:.3g} of a constraint's scale)")
    return tuple(notes)


def _solve(program: cp.Problem) -> None:
    try:
        with warnings.catch_warnings():  # an inaccurate solution is reported in the notes and checked
            warnings.simplefilter("ignore", UserWarning)
            # the C++ canonicalisation: cvxpy 1.9's default one fails on the fit's parameter matrix
            program.solve(solver=cp.CLARABEL, max_threads=1, canon_backend=cp.CPP_CANON_BACKEND)
    except cp.error.SolverError as err:
        raise RetrievalError(f"the convex program's solver failed ({err})") from None


def _program(robot, bounds, n_rows, pi0, rows, regularizer, weight, epsilon) -> tuple[cp.Problem, cp.Variable, dict]:
    """The convex subproblem with the data's `n_rows` reduced rows (problem.Problem's r and z over the fit's scale),
    the tangents, the margin's linear part and the penalty as parameters."""
    n_links = robot.n_joints
    pi = cp.Variable(robot.n_params)
    r_scaled, z_scaled = cp.Parameter((n_rows, robot.n_params)), cp.Parameter(n_rows)
    row_slack, link_slack = cp.Variable(len(rows.rhs), nonneg=True), cp.Variable(n_links, nonneg=True)
    tangent_rows, tangent_cols = rows.tangent_entries(robot)
    tangent = cp.Parameter(len(tangent_rows))
    scatter = scipy.sparse.csr_matrix((np.ones(len(tangent_rows)), (tangent_rows, np.arange(len(tangent_rows)))),
                                      shape=(len(rows.rhs), len(tangent_rows)))
    margin_a, margin_b = cp.Parameter((n_links, 3)), cp.Parameter(n_links)
    penalty = cp.Parameter(nonneg=True)
    lhs = scipy.sparse.csr_matrix(rows.linear) @ pi - scatter @ cp.multiply(tangent, pi[tangent_cols])
    constraints = []
    if len(rows.convex_mass):
        t = cp.Variable(len(rows.convex_mass))
        m = scipy.sparse.csr_matrix(rows.convex_mass) @ pi
        u = cp.reshape(scipy.sparse.csr_matrix(rows.convex_u) @ pi, (3, len(rows.convex_mass)), order="F")
        diff = cp.reshape(t - m, (1, len(rows.convex_mass)), order="F")
        constraints.append(cp.SOC(t + m, cp.vstack([2.0 * u, diff]), axis=0))
        lhs = lhs + scipy.sparse.csr_matrix(rows.convex_rows) @ t
    constraints.append(lhs <= rows.rhs + row_slack)
    eps = bounds.margin
    for j, cols in enumerate(inertial_columns(robot)):
        fixed = lumped_part(bounds, j)
        j_body = _pseudo_inertia_expr(pi, cols) - (pseudo_inertia(fixed) if fixed is not None else 0.0)
        sigma, h, m = j_body[:3, :3], j_body[:3, 3], j_body[3, 3]  # Σ_O, h, m of the body
        # Σ_C − ε·tr(Σ_C)E ⪰ 0 with Σ_C = Σ_O − h·hᵀ/m: Schur complement of
        # [[Σ_O − ε·tr(Σ_O)E + ε·(hᵀh/m)E, h], [hᵀ, m]], the convex hᵀh/m replaced by its tangent
        scale = bounds.inertia_diag_upper_kg_m2[j]
        shift = eps * (margin_a[j] @ h - margin_b[j] * m) - eps * cp.trace(sigma) + scale * link_slack[j]
        block = j_body + shift * np.diag([1.0, 1.0, 1.0, 0.0])
        constraints.append(block >> epsilon * np.eye(4))
        size = link_size(bounds, j)
        if size is not None:  # Σ_C ⪰ f·m_0·D ⟺ J − blkdiag(f·m_0·D, 0) ⪰ 0 (Schur complement), linear in π;
            # SIZE_MARGIN above it, so that the solver's tolerance does not leave a solution on it below it
            constraints.append(j_body - scipy.linalg.block_diag((1.0 + SIZE_MARGIN) * size.bound_kg_m2, 0.0) >> 0)
    fit = cp.sum_squares(r_scaled @ pi - z_scaled)
    scales = pull_scales(robot, bounds)
    divergence = sum(_divergence(pi, cols, pi0[cols], regularizer, scales[cols]) for cols in inertial_columns(robot))
    # the slacks are relative to each row's scale; their penalty against an objective of about 1
    objective = fit + weight * divergence + penalty * (cp.sum(row_slack) + cp.sum(link_slack))
    params = {"fit": (r_scaled, z_scaled), "tangent": tangent, "margin": (margin_a, margin_b), "penalty": penalty,
              "slack": (row_slack, link_slack)}
    return cp.Problem(cp.Minimize(objective), constraints), pi, params


def _linearise(robot: RobotModel, bounds: PhysicalBounds, rows, params: dict, point: np.ndarray,
               penalty: float) -> None:
    """Set the subproblem's tangents at `point`."""
    params["tangent"].value = rows.tangent(robot, point)
    a, b = np.zeros((robot.n_joints, 3)), np.zeros(robot.n_joints)
    for j, cols in enumerate(inertial_columns(robot)):
        body = body_pi(bounds, j, point[cols])
        m, h = body[0], body[1:4]
        a[j], b[j] = 2.0 * h / m, float(h @ h) / m**2
    params["margin"][0].value, params["margin"][1].value = a, b
    params["penalty"].value = penalty


def _divergence(pi: cp.Variable, cols: np.ndarray, pi0_link: np.ndarray, regularizer: str,
                scales: np.ndarray) -> cp.Expression:
    """One link's distance to its nominal parameters: the log-det Bregman divergence of the pseudo-inertias (up
    to a constant; entropic) or the squared distances over their `scales` (euclidean; problem.pull_scales)."""
    if regularizer == "entropic":
        j0_inv = np.linalg.inv(_positive_definite(pseudo_inertia(pi0_link)))
        j_link = _pseudo_inertia_expr(pi, cols)
        return -cp.log_det(j_link) + cp.trace(j0_inv @ j_link)
    return cp.sum_squares(cp.multiply(1.0 / np.sqrt(scales), pi[cols] - pi0_link))


def _positive_definite(j: np.ndarray, floor: float = 1e-3) -> np.ndarray:
    """`j` with its eigenvalues raised to at least `floor` × the largest: a proper prior even when the URDF
    link is not physically consistent (Franka's FER link 4)."""
    values, vectors = np.linalg.eigh(j)
    return (vectors * np.maximum(values, floor * values.max())) @ vectors.T


_PSEUDO_INERTIA_ROWS = np.array([  # J row-major (Wensing et al. 2017, eq. 9) from m, mx, my, mz, xx, xy, xz, yy, yz, zz
    [0, 0, 0, 0, -0.5, 0, 0, 0.5, 0, 0.5], [0, 0, 0, 0, 0, -1, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, -1, 0, 0, 0],
    [0, 1, 0, 0, 0, 0, 0, 0, 0, 0],
    [0, 0, 0, 0, 0, -1, 0, 0, 0, 0], [0, 0, 0, 0, 0.5, 0, 0, -0.5, 0, 0.5], [0, 0, 0, 0, 0, 0, 0, 0, -1, 0],
    [0, 0, 1, 0, 0, 0, 0, 0, 0, 0],
    [0, 0, 0, 0, 0, 0, -1, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0, 0, -1, 0], [0, 0, 0, 0, 0.5, 0, 0, 0.5, 0, -0.5],
    [0, 0, 0, 1, 0, 0, 0, 0, 0, 0],
    [0, 1, 0, 0, 0, 0, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 1, 0, 0, 0, 0, 0, 0],
    [1, 0, 0, 0, 0, 0, 0, 0, 0, 0],
])


def _pseudo_inertia_expr(pi: cp.Variable, cols: np.ndarray) -> cp.Expression:
    """Pseudo-inertia of one link as a cvxpy expression, linear in π (Wensing et al. 2017): one sparse map, so
    that the program compiles in one affine atom per link instead of sixteen."""
    select = scipy.sparse.csr_matrix((np.ones(len(cols)), (np.arange(len(cols)), cols)), shape=(len(cols), pi.size))
    return cp.reshape(scipy.sparse.csr_matrix(_PSEUDO_INERTIA_ROWS) @ select @ pi, (4, 4), order="C")
