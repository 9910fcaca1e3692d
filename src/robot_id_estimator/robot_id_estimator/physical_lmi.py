"""Physical parameters by a convex program on the pseudo-inertias (Wensing et al. 2017), with a regulariser
towards the nominal model, Euclidean or entropic (log-det Bregman divergence, Lee, Wensing and Park 2019)."""

from __future__ import annotations

import dataclasses
import time
import warnings

import cvxpy as cp
import numpy as np

from robot_id_estimator.physical_problem import (
    PhysicalBounds,
    RetrievalError,
    RetrievalResult,
    constraint_violations,
    reduce_problem,
    residual_norm,
    retrieval_result,
)
from robot_id_model.parameters import friction_columns, inertial_columns, nominal_parameters
from robot_id_model.physical import pseudo_inertia
from robot_id_model.robot_model import RobotModel


def retrieve_lmi(
    robot: RobotModel,
    w_target: np.ndarray,
    tau_nm: np.ndarray,
    target_from_pi: np.ndarray,
    bounds: PhysicalBounds,
    regularizer: str = "euclidean",
    weight: float = 1e-4,
    epsilon: float = 1e-6,
    outside_sq_nm2: float = 0.0,
) -> RetrievalResult:
    """min ‖τ − W·E·π‖² + weight·‖τ‖²·D(π, π_nominal) s.t. J_i(π) ⪰ ε·I, mass, CoM and friction bounds.

    W, τ may be a reduced system, with `outside_sq_nm2` the torque's part it cannot explain
    (physical_problem.reduce_problem).

    D is `euclidean` (relative squared distance) or `entropic` (the log-det Bregman divergence of the
    pseudo-inertias, which is invariant to the choice of link frame). Solved with Clarabel.
    """
    if regularizer not in ("euclidean", "entropic"):
        raise ValueError(f"regularizer must be 'euclidean' or 'entropic', not {regularizer!r}")
    t0 = time.perf_counter()
    problem = reduce_problem(w_target, tau_nm, target_from_pi, outside_sq_nm2)
    pi0 = nominal_parameters(robot)
    pi = cp.Variable(robot.n_params)
    fit = cp.sum_squares(problem.r @ pi - problem.z) / max(problem.c, 1e-12)
    constraints = []
    divergence = 0
    for j, cols in enumerate(inertial_columns(robot)):
        constraints += _link_constraints(pi, cols, j, bounds, epsilon)
        divergence += _divergence(pi, cols, pi0[cols], regularizer)
    masses = pi[inertial_columns(robot)[:, 0]]
    constraints += [cp.sum(masses) >= bounds.total_mass_kg[0], cp.sum(masses) <= bounds.total_mass_kg[1]]
    friction = pi[friction_columns(robot).ravel()]
    constraints += [friction >= bounds.friction_lower.ravel(), friction <= bounds.friction_upper.ravel()]
    program = cp.Problem(cp.Minimize(fit + weight * divergence), constraints)
    try:
        with warnings.catch_warnings():  # an inaccurate solution is reported in the notes and checked below
            warnings.simplefilter("ignore", UserWarning)
            program.solve(solver=cp.CLARABEL)
    except cp.error.SolverError as err:
        raise RetrievalError(f"the convex program's solver failed ({err})") from None
    if pi.value is None:
        raise RetrievalError(f"the convex program has no solution: solver status {program.status}")
    value = np.asarray(pi.value)
    lmi_bounds = dataclasses.replace(bounds, max_inertia_ratio=np.inf, max_off_diagonal_ratio=np.inf, orderings=())
    violations = constraint_violations(robot, lmi_bounds, value)
    notes = [f"{regularizer} regulariser, weight {weight:g}; eq. (18) ratio/off-diagonal limits not imposed"]
    if program.status != cp.OPTIMAL:
        notes.append(f"the solver reports status {program.status}: the solution may be inaccurate")
    return retrieval_result(
        robot, f"lmi-{regularizer}", value, residual_norm(problem, value), problem, violations, t0, 1, tuple(notes)
    )


def _link_constraints(pi: cp.Variable, cols: np.ndarray, j: int, bounds: PhysicalBounds,
                      epsilon: float) -> list[cp.Constraint]:
    """Link j's own pseudo-inertia ⪰ ε·I (what it carries known, e.g. a gripper, taken off), its mass and CoM
    bounds, and eq. (16) on the inertia about the CoM through I_C,ii ≤ I_O,ii (sufficient, linear in π)."""
    j_link = _pseudo_inertia_expr(pi, cols)
    fixed = bounds.fixed_inertials[j] if j < len(bounds.fixed_inertials) else None
    own = j_link - pseudo_inertia(fixed) if fixed is not None else j_link
    m, h = pi[cols[0]], pi[cols[1:4]]
    return [
        own >> epsilon * np.eye(4),
        m >= bounds.mass_lower_kg[j],
        m <= bounds.mass_upper_kg[j],
        h >= m * bounds.com_lower_m[j],
        h <= m * bounds.com_upper_m[j],
        pi[cols[[4, 7, 9]]] <= bounds.inertia_diag_upper_kg_m2[j],
    ]


def _divergence(pi: cp.Variable, cols: np.ndarray, pi0_link: np.ndarray, regularizer: str) -> cp.Expression:
    """One link's distance to its nominal parameters: the log-det Bregman divergence of the pseudo-inertias (up
    to a constant; entropic) or the relative squared distance (euclidean)."""
    if regularizer == "entropic":
        j0_inv = np.linalg.inv(_positive_definite(pseudo_inertia(pi0_link)))
        j_link = _pseudo_inertia_expr(pi, cols)
        return -cp.log_det(j_link) + cp.trace(j0_inv @ j_link)
    return cp.sum_squares(pi[cols] - pi0_link) / max(float(np.sum(pi0_link**2)), 1e-12)


def _positive_definite(j: np.ndarray, floor: float = 1e-3) -> np.ndarray:
    """`j` with its eigenvalues raised to at least `floor` × the largest: a proper prior even when the URDF
    link is not physically consistent (Franka's FER link 4)."""
    values, vectors = np.linalg.eigh(j)
    return (vectors * np.maximum(values, floor * values.max())) @ vectors.T


def _pseudo_inertia_expr(pi: cp.Variable, cols: np.ndarray) -> cp.Expression:
    """Pseudo-inertia of one link as a cvxpy expression, linear in π (Wensing et al. 2017)."""
    m, mx, my, mz, xx, xy, xz, yy, yz, zz = (pi[c] for c in cols)
    trace_half = 0.5 * (xx + yy + zz)
    return cp.bmat(
        [
            [trace_half - xx, -xy, -xz, mx],
            [-xy, trace_half - yy, -yz, my],
            [-xz, -yz, trace_half - zz, mz],
            [mx, my, mz, m],
        ]
    )
