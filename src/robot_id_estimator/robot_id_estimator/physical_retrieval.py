"""Physical parameters by Xu et al. 2020's method (section III): κ starts (the convex solution, the URDF model,
random points in the bounds of eq. 16) of a gradient-based constrained local solver (SLSQP, exact gradients)
with the total-mass range (eq. 17), the inertia constraints of eq. (18), and full physical consistency: the
smallest eigenvalue of Σ = ½tr(I_C)E − I_C is non-negative, which for a positive mass is a positive
(semi-)definite pseudo-inertia. Starts run in parallel processes. The problem, its bounds and the result are
robot_id_estimator.physical_problem; the convex program is robot_id_estimator.physical_lmi.
"""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import numpy as np
import scipy.optimize

from robot_id_estimator.physical_lmi import retrieve_lmi
from robot_id_estimator.physical_constraints import box_bounds, constraint_violations, linear_constraints
from robot_id_estimator.physical_problem import (
    PhysicalBounds,
    RetrievalError,
    RetrievalResult,
    reduce_problem,
    residual_norm,
    retrieval_result,
)
from robot_id_model.parameters import inertial_columns, nominal_parameters
from robot_id_model.physical import inertia_six, link_from_standard, sigma_basis, sigma_matrix
from robot_id_model.physical_vector import link_pi, mu_from_pi, pi_from_mu, pi_jacobian
from robot_id_model.robot_model import RobotModel

_SIGMA_BASIS = sigma_basis()


def _smallest_eigen(sigma: np.ndarray) -> tuple[float, np.ndarray]:
    """λ_min(Σ) and its gradient v·vᵀ with respect to Σ (v its unit eigenvector)."""
    values, vectors = np.linalg.eigh(sigma)
    v = vectors[:, 0]
    return float(values[0]), np.outer(v, v)


def _consistency(robot: RobotModel, bounds: PhysicalBounds, mu: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """λ_min(Σ)/scale per link (own part when something is lumped); ≥ 0 ⟺ positive-semidefinite Σ, i.e.
    a consistent link (Σ ≻ 0 ⟺ the triangle inequalities ⟺ pseudo-inertia ≻ 0 for a positive mass).

    The smallest eigenvalue scales linearly with the inertia, which keeps SLSQP's linearisation good at the
    boundary where real data push the solution (a cubic determinant made its subproblems incompatible).
    """
    return np.array(
        [_smallest_eigen(_own_sigma(bounds, mu, j, cols))[0] / scale[j]
         for j, cols in enumerate(inertial_columns(robot))]
    )


def _own_sigma(bounds: PhysicalBounds, mu: np.ndarray, j: int, cols: np.ndarray) -> np.ndarray:
    fixed = bounds.fixed_inertials[j] if j < len(bounds.fixed_inertials) else None
    if fixed is None:
        return sigma_matrix(mu[cols[4:10]])
    # own part about its CoM from π_i − π_fixed
    own = link_from_standard(link_pi(mu, cols) - fixed)
    i = own.inertia_com_kg_m2
    return sigma_matrix(inertia_six(i))


def _consistency_jacobian(robot: RobotModel, bounds: PhysicalBounds, mu: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Jacobian of _consistency: analytic through Σ; central differences for links with a lumped known part."""
    jac = np.zeros((robot.n_joints, len(mu)))
    for j, cols in enumerate(inertial_columns(robot)):
        fixed = bounds.fixed_inertials[j] if j < len(bounds.fixed_inertials) else None
        if fixed is None:
            _, grad = _smallest_eigen(sigma_matrix(mu[cols[4:10]]))
            jac[j, cols[4:10]] = np.einsum("ab,kab->k", grad, _SIGMA_BASIS) / scale[j]
            continue
        for col in cols:
            step = 1e-7 * max(1.0, abs(mu[col]))
            up, down = mu.copy(), mu.copy()
            up[col] += step
            down[col] -= step
            diff = (_smallest_eigen(_own_sigma(bounds, up, j, cols))[0]
                    - _smallest_eigen(_own_sigma(bounds, down, j, cols))[0])
            jac[j, col] = diff / (2 * step) / scale[j]
    return jac


# --- method 1: multi-start SLSQP (Xu et al. 2020, Table 1) ---------------------------------------------------


def _euclidean_weights(robot: RobotModel, pi0: np.ndarray) -> np.ndarray:
    """Per-entry weights of D(π) = Σ_links ‖π_i − π0_i‖² / ‖π0_i‖² (inertial entries only)."""
    weights = np.zeros(len(pi0))
    for cols in inertial_columns(robot):
        weights[cols] = 1.0 / max(float(np.sum(pi0[cols] ** 2)), 1e-12)
    return weights


def _local_solve(args: tuple) -> tuple[np.ndarray, float, bool]:
    """One SLSQP run in normalised variables x ∈ [0, 1] (µ = lower + span·x): units differ by orders of
    magnitude (kg, m, kg m²) and SLSQP stalls without this scaling.

    Objective: ‖τ − Aπ(µ)‖²/‖τ‖² + weight·D(π, π_nominal) with the Euclidean D of retrieve_lmi, which keeps
    directions the data do not see (eliminated parameters) at the URDF model instead of anywhere in the bounds.
    """
    robot, bounds, problem, mu0, max_iter, weight = args
    lower, upper = box_bounds(robot, bounds)
    free = upper > lower
    span = np.where(free, upper - lower, 1.0)  # a fixed (held) parameter stays at x = 0
    g, h, _ = linear_constraints(robot, bounds)
    scale = np.maximum(bounds.inertia_diag_upper_kg_m2, 1e-6)
    c_norm = problem.c if problem.c > 0 else 1.0
    pi0 = nominal_parameters(robot)
    d_weights = weight * _euclidean_weights(robot, pi0)

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        mu = lower + span * x
        pi = pi_from_mu(robot, mu)
        grad_pi = 2.0 * (problem.q @ pi - problem.b) / c_norm + 2.0 * d_weights * (pi - pi0)
        value = (pi @ problem.q @ pi - 2.0 * problem.b @ pi + problem.c) / c_norm + d_weights @ (pi - pi0) ** 2
        return value, span * (pi_jacobian(robot, mu).T @ grad_pi)

    constraints = [
        {"type": "ineq", "fun": lambda x: h - g @ (lower + span * x), "jac": lambda x: -g * span},
        {
            "type": "ineq",
            "fun": lambda x: _consistency(robot, bounds, lower + span * x, scale) - 1e-6,
            "jac": lambda x: _consistency_jacobian(robot, bounds, lower + span * x, scale) * span,
        },
    ]
    result = scipy.optimize.minimize(
        objective,
        (np.clip(mu0, lower, upper) - lower) / span,
        jac=True,
        method="SLSQP",
        bounds=scipy.optimize.Bounds(0.0, np.where(free, 1.0, 0.0)),
        constraints=constraints,
        options={"maxiter": max_iter, "ftol": 1e-10},
    )
    return lower + span * result.x, float(result.fun), bool(result.success)


def _random_start(robot: RobotModel, bounds: PhysicalBounds, rng: np.random.Generator) -> np.ndarray:
    """A uniform random µ in the bounds with a consistent inertia (random principal moments, rotation)."""
    lower, upper = box_bounds(robot, bounds)
    mu = rng.uniform(np.where(np.isfinite(lower), lower, -1.0), np.where(np.isfinite(upper), upper, 1.0))
    for j, cols in enumerate(inertial_columns(robot)):
        d = bounds.inertia_diag_upper_kg_m2[j]
        a, b = rng.uniform(0.05 * d, 0.5 * d, 2)
        c = rng.uniform(abs(a - b) + 0.01 * d, a + b - 0.01 * d)
        rot = np.linalg.qr(rng.normal(size=(3, 3)))[0] if j % 2 else np.eye(3)
        i = rot @ np.diag([a, b, c]) @ rot.T
        mu[cols[4:10]] = inertia_six(i)
    return mu


def retrieve_multistart(
    robot: RobotModel,
    w_target: np.ndarray,
    tau_nm: np.ndarray,
    target_from_pi: np.ndarray,
    bounds: PhysicalBounds,
    starts: int = 8,
    seed: int = 0,
    workers: int | None = None,
    max_iter: int = 1500,
    weight: float = 1e-4,
    outside_sq_nm2: float = 0.0,
) -> RetrievalResult:
    """Xu et al.'s (2020) retrieval: κ = `starts` starts of SLSQP in parallel processes, with a Euclidean pull of
    `weight` towards the URDF model. The starts are the convex solution (retrieve_lmi, Euclidean), the URDF
    model, and random points in the bounds. W, τ may be a reduced system, with `outside_sq_nm2` the torque's part it
    cannot explain (physical_problem.reduce_problem)."""
    t0 = time.perf_counter()
    linear_constraints(robot, bounds)  # refuses malformed orderings before any work starts
    problem = reduce_problem(w_target, tau_nm, target_from_pi, outside_sq_nm2)
    rng = np.random.default_rng(seed)
    convex = retrieve_lmi(robot, w_target, tau_nm, target_from_pi, bounds, "euclidean", weight,
                          outside_sq_nm2=outside_sq_nm2)
    mu_starts = [mu_from_pi(robot, convex.pi), mu_from_pi(robot, nominal_parameters(robot))]
    mu_starts = (mu_starts + [_random_start(robot, bounds, rng) for _ in range(starts - 2)])[:starts]
    jobs = [(robot, bounds, problem, mu0, max_iter, weight) for mu0 in mu_starts]
    workers = workers or min(len(jobs), os.cpu_count() or 1)
    results = []
    try:
        if workers > 1:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                for k, result in enumerate(pool.map(_local_solve, jobs), 1):
                    results.append(result)
                    _progress(f"multi-start {k}/{len(jobs)}")
        else:
            for k, job in enumerate(jobs, 1):
                results.append(_local_solve(job))
                _progress(f"multi-start {k}/{len(jobs)}")
    except (BrokenProcessPool, np.linalg.LinAlgError) as err:
        raise RetrievalError(f"the multi-start local solver failed ({type(err).__name__}: {err})") from None
    _progress("")
    candidates = []
    for mu, _, _ in results:
        pi = pi_from_mu(robot, mu)
        violations = constraint_violations(robot, bounds, pi)
        candidates.append((len(violations) > 0, residual_norm(problem, pi), pi, violations))
    _, residual, pi, violations = min(candidates, key=lambda c: (c[0], c[1]))
    feasible = sum(not c[0] for c in candidates)
    notes = (f"{feasible}/{len(jobs)} starts feasible",)
    return retrieval_result(robot, "multistart", pi, residual, problem, violations, t0, len(jobs), notes)


def _progress(text: str) -> None:
    if sys.stderr.isatty():
        sys.stderr.write(f"\r{text:<40}")
        sys.stderr.flush()
    elif text:
        sys.stderr.write(text + "\n")
