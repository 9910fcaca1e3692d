"""Physical parameters by Xu et al. 2020's method (section III, Table 1): κ starts of a gradient-based constrained
local solver (SLSQP, exact gradients) under every constraint of physical.constraints: the bounds (eq. 16), the
total-mass range (eq. 17), eq. (18), the orderings, and the margin from the consistency boundary (the smallest
eigenvalue of Σ_C = ½tr(I_C)E − I_C at least ε·tr(Σ_C), own part of a link that carries a known one). The starts
are the convex program's solution and random points made feasible (physical.starts); each local solve answers the
best point it visited that meets every constraint, and the best of those over the starts is the result. Starts run
in parallel processes; the result does not depend on their number.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

import numpy as np
import scipy.optimize

from robot_id_cli.command_line import progress_bar
from robot_id_estimator.physical.constraints import ConstraintSet, body_pi, link_size, lumped_part
from robot_id_estimator.physical.lmi import retrieve_lmi
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
from robot_id_estimator.physical.starts import feasible_starts
from robot_id_model.parameters import inertial_columns, nominal_parameters
from robot_id_model.physical import com_inertia_jacobian, sigma_basis, sigma_matrix
from robot_id_model.physical_vector import link_pi, mu_from_pi, pi_from_mu, pi_jacobian
from robot_id_model.robot_model import RobotModel

_SIGMA_BASIS = sigma_basis()
IMPROVEMENT = 1e-9
"""A visited point replaces the best one when its objective is lower by more than this fraction: the objective is
flat along directions the data do not see, where the iterates may drift towards degenerate bodies."""
_TRACE_BASIS = np.einsum("kaa->k", _SIGMA_BASIS)


def _body_six(bounds: PhysicalBounds, mu: np.ndarray, j: int, cols: np.ndarray) -> np.ndarray:
    """Inertia about the CoM of link j's body (its own part when a known part is lumped onto it)."""
    if lumped_part(bounds, j) is None:
        return mu[cols[4:10]]
    return com_inertia_jacobian(body_pi(bounds, j, link_pi(mu, cols)))[0]


def _margins(robot: RobotModel, bounds: PhysicalBounds, mu: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """λ_min(Σ_C) − ε·tr(Σ_C) of every link body over `scale`, ≥ 0 where the margin holds."""
    out = np.empty(robot.n_joints)
    for j, cols in enumerate(inertial_columns(robot)):
        values = np.linalg.eigvalsh(sigma_matrix(_body_six(bounds, mu, j, cols)))
        out[j] = (values[0] - bounds.margin * values.sum()) / scale[j]
    return out


def _margins_jacobian(robot: RobotModel, bounds: PhysicalBounds, mu: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Jacobian of _margins: d λ_min = vᵀ·dΣ·v (v its unit eigenvector), through the own part's inertia about its
    CoM and eq. (14) for a link that carries a known part."""
    jac = np.zeros((robot.n_joints, len(mu)))
    for j, cols in enumerate(inertial_columns(robot)):
        six = _body_six(bounds, mu, j, cols)
        v = np.linalg.eigh(sigma_matrix(six))[1][:, 0]
        grad_six = (np.einsum("a,kab,b->k", v, _SIGMA_BASIS, v) - bounds.margin * _TRACE_BASIS) / scale[j]
        if lumped_part(bounds, j) is None:
            jac[j, cols[4:10]] = grad_six
            continue
        _, six_from_pi = com_inertia_jacobian(body_pi(bounds, j, link_pi(mu, cols)))
        jac[j, cols] = grad_six @ six_from_pi @ pi_jacobian(robot, mu)[np.ix_(cols, cols)]
    return jac


def _sizes(robot: RobotModel, bounds: PhysicalBounds, mu: np.ndarray) -> np.ndarray:
    """λ_min(D^-½·Σ_C·D^-½) − f·m_0 of every link body with a size bound, over f·m_0, ≥ 0 where the bound holds
    (physical.size_bounds)."""
    out = []
    for j, cols in enumerate(inertial_columns(robot)):
        size = link_size(bounds, j)
        if size is not None:
            out.append(size.spread(sigma_matrix(_body_six(bounds, mu, j, cols))) / size.fraction - 1.0)
    return np.array(out)


def _sizes_jacobian(robot: RobotModel, bounds: PhysicalBounds, mu: np.ndarray) -> np.ndarray:
    """Jacobian of _sizes: d λ_min = (D^-½·v)ᵀ·dΣ·(D^-½·v), v its unit eigenvector."""
    rows = []
    for j, cols in enumerate(inertial_columns(robot)):
        size = link_size(bounds, j)
        if size is None:
            continue
        six, row, w = _body_six(bounds, mu, j, cols), np.zeros(len(mu)), size.whitening
        v = w @ np.linalg.eigh(w @ sigma_matrix(six) @ w)[1][:, 0]
        grad_six = np.einsum("a,kab,b->k", v, _SIGMA_BASIS, v) / (size.fraction * size.urdf_mass_kg)
        if lumped_part(bounds, j) is None:
            row[cols[4:10]] = grad_six
        else:
            _, six_from_pi = com_inertia_jacobian(body_pi(bounds, j, link_pi(mu, cols)))
            row[cols] = grad_six @ six_from_pi @ pi_jacobian(robot, mu)[np.ix_(cols, cols)]
        rows.append(row)
    return np.array(rows).reshape(-1, len(mu))


def _euclidean_weights(robot: RobotModel, bounds: PhysicalBounds) -> np.ndarray:
    """Per-entry weights of D(π) = Σ_links ‖π_i − π0_i‖² / scale_i (inertial entries only; problem.pull_scales)."""
    weights = np.zeros(robot.n_params)
    cols = inertial_columns(robot).ravel()
    weights[cols] = 1.0 / pull_scales(robot, bounds)[cols]
    return weights


def _local_solve(args: tuple) -> tuple[np.ndarray, float, int, bool]:
    """One SLSQP run in normalised variables x ∈ [0, 1] (µ = lower + span·x; units differ by orders of magnitude).
    Answers the best visited point (the start included) that meets every constraint (ConstraintSet), its
    objective, the iterations, and whether it improved on a feasible start; the end point if none does."""
    robot, bounds, problem, mu0, max_iter, weight = args
    checks = ConstraintSet(robot, bounds)
    lower, upper, g, h = checks.lower, checks.upper, checks.g, checks.h
    free = upper > lower
    span = np.where(free, upper - lower, 1.0)  # a fixed (held) parameter stays at x = 0
    scale = np.maximum(bounds.inertia_diag_upper_kg_m2, 1e-6)
    c_norm = fit_scale(problem)
    pi0 = nominal_parameters(robot)
    d_weights = weight * _euclidean_weights(robot, bounds)

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        mu = lower + span * x
        pi = pi_from_mu(robot, mu)
        grad_pi = 2.0 * (problem.q @ pi - problem.b) / c_norm + 2.0 * d_weights * (pi - pi0)
        value = (pi @ problem.q @ pi - 2.0 * problem.b @ pi + problem.c) / c_norm + d_weights @ (pi - pi0) ** 2
        return value, span * (pi_jacobian(robot, mu).T @ grad_pi)

    best: list = [None, np.inf]

    def keep_if_better(x: np.ndarray) -> None:
        """Keep x if it improves on the best point so far by more than round-off and meets every constraint."""
        value = objective(np.clip(x, 0.0, 1.0))[0]
        if best[0] is None or value < best[1] - IMPROVEMENT * abs(best[1]):
            mu = lower + span * np.clip(x, 0.0, 1.0)
            if not checks.violations(pi_from_mu(robot, mu)):
                best[:] = [mu, value]

    x0 = (np.clip(mu0, lower, upper) - lower) / span
    keep_if_better(x0)
    start_value = best[1] if best[0] is not None else None
    constraints = [
        {"type": "ineq", "fun": lambda x: h - g @ (lower + span * x), "jac": lambda x: -g * span},
        {
            "type": "ineq",
            "fun": lambda x: _margins(robot, bounds, lower + span * x, scale),
            "jac": lambda x: _margins_jacobian(robot, bounds, lower + span * x, scale) * span,
        },
    ]
    if any(size is not None for size in bounds.link_sizes):
        constraints.append({"type": "ineq", "fun": lambda x: _sizes(robot, bounds, lower + span * x),
                            "jac": lambda x: _sizes_jacobian(robot, bounds, lower + span * x) * span})
    result = scipy.optimize.minimize(
        objective,
        x0,
        jac=True,
        method="SLSQP",
        bounds=scipy.optimize.Bounds(0.0, np.where(free, 1.0, 0.0)),
        constraints=constraints,
        callback=keep_if_better,
        options={"maxiter": max_iter, "ftol": 1e-10},
    )
    keep_if_better(result.x)
    if best[0] is None:  # nothing feasible visited: the end point, which the caller's check rejects
        return lower + span * np.clip(result.x, 0.0, 1.0), float(result.fun), int(result.nit), False
    return best[0], best[1], int(result.nit), start_value is not None and best[1] < start_value


def retrieve_multistart(
    robot: RobotModel,
    w_target: np.ndarray,
    tau_nm: np.ndarray,
    target_from_pi: np.ndarray,
    bounds: PhysicalBounds,
    starts: int = 8,
    seed: int = 0,
    workers: int | None = None,
    max_iter: int = 100,
    weight: float = 1.0,
    outside_sq_nm2: float = 0.0,
) -> RetrievalResult:
    """Xu et al.'s (2020) retrieval: κ = `starts` starts of SLSQP in parallel processes, with the Euclidean pull of
    `weight` towards the URDF model of retrieve_lmi. The starts are the convex solution (retrieve_lmi, Euclidean)
    when it meets every constraint, and random feasible points (physical.starts, seeded by `seed`). W, τ may be a
    reduced system, with `outside_sq_nm2` the torque's part it cannot explain (physical.problem.reduce_problem).
    The result lists every constraint it does not meet; the notes say how many starts ended feasible."""
    t0 = time.perf_counter()
    checks = ConstraintSet(robot, bounds)  # refuses malformed orderings before any work starts
    problem = reduce_problem(w_target, tau_nm, target_from_pi, outside_sq_nm2)
    try:
        convex = retrieve_lmi(robot, w_target, tau_nm, target_from_pi, bounds, "euclidean", weight,
                              outside_sq_nm2=outside_sq_nm2)
        anchor = mu_from_pi(robot, convex.pi) if not convex.violations else None
    except RetrievalError:
        anchor = None
    mu_starts = ([anchor] if anchor is not None else []) + feasible_starts(
        robot, bounds, starts - (anchor is not None), seed, anchor)
    jobs = [(robot, bounds, problem, mu0, max_iter, weight) for mu0 in mu_starts]
    results = _run(jobs, workers or min(len(jobs), os.cpu_count() or 1))
    candidates = []
    for k, (mu, value, _, _) in enumerate(results):
        pi = pi_from_mu(robot, mu)
        violations = checks.violations(pi)
        candidates.append((len(violations) > 0, value, k, pi, violations))
    feasible = sum(not c[0] for c in candidates)
    _, _, _, pi, violations = min(candidates, key=lambda c: (c[0], c[1], c[2]))
    notes = (f"{feasible}/{len(jobs)} starts feasible" + ("" if anchor is not None else
             " (the convex solution was not feasible and is not among the starts)"),
             f"{sum(r[3] for r in results)} local solves improved on their start; iterations per start: "
             f"{[r[2] for r in results]}")
    return retrieval_result(robot, "multistart", pi, residual_norm(problem, pi), problem, violations, t0, len(jobs),
                            notes)


def _run(jobs: list[tuple], workers: int) -> list[tuple[np.ndarray, float, int, bool]]:
    """The local solves of `jobs` in start order, in `workers` processes, with a progress bar on a terminal."""
    results: list = [None] * len(jobs)
    bar = progress_bar(total=len(jobs), description="multi-start", unit="start")
    try:
        if workers > 1:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                futures = {pool.submit(_local_solve, job): k for k, job in enumerate(jobs)}
                for future in as_completed(futures):
                    results[futures[future]] = future.result()
                    bar.update()
        else:
            for k, job in enumerate(jobs):
                results[k] = _local_solve(job)
                bar.update()
    except (BrokenProcessPool, np.linalg.LinAlgError) as err:
        raise RetrievalError(f"the multi-start local solver failed ({type(err).__name__}: {err})") from None
    finally:
        bar.close()
    return results
