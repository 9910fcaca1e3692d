"""Physically consistent link parameters from identified (essential or base) parameters.

Objective of Xu et al. 2020, eq. (15): f(µ) = ‖τ − W·E·π(µ)‖, with W the stacked essential (or base) regressor of
the averaged data, E the map from standard parameters π to those parameters, and π(µ) of eq. (14).

- `retrieve_multistart`: Xu et al.'s (2020) method — κ starts (the convex solution, the URDF model, random points in
  the bounds of eq. 16) of a gradient-based constrained local solver (SLSQP, exact gradients) with the
  total-mass range (eq. 17) and the inertia constraints of eq. (18), plus full physical consistency: the
  smallest eigenvalue of Σ = ½tr(I_C)E − I_C is non-negative, which for a positive mass is a positive
  (semi-)definite pseudo-inertia. Starts run in parallel processes.
- `retrieve_lmi`: a convex program (cvxpy) over π with every link's pseudo-inertia positive definite
  (Wensing et al. 2017), and a regulariser towards the nominal model, Euclidean or entropic (log-det
  Bregman divergence, Lee, Wensing and Park 2019).

µ per joint: [m, cx, cy, cz, Ixx, Ixy, Ixz, Iyy, Iyz, Izz, <friction terms>] (Xu et al. 2020, eq. 12), CoM in the
link frame, inertia about the CoM in link axes; friction terms as in the RobotModel.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np
import scipy.optimize

from robot_id_model.parameters import friction_columns, inertial_columns, nominal_parameters
from robot_id_model.physical import (
    LinkInertial,
    consistency_violations,
    inertia_six,
    link_from_standard,
    pseudo_inertia,
    sigma_basis,
    sigma_matrix,
)
from robot_id_model.physical_vector import MU_NAMES, link_pi, mu_from_pi, pi_from_mu, pi_jacobian
from robot_id_model.robot_model import RobotModel

_DIAG = (4, 7, 9)  # Ixx, Iyy, Izz within a link's µ block
_OFF_DIAG = (5, 6, 8)  # Ixy, Ixz, Iyz


class RetrievalError(RuntimeError):
    """The retrieval's solver failed; the message says how."""


@dataclass(frozen=True)
class PhysicalBounds:
    """Bounds and constraints of the retrieval (Xu et al. 2020, eqs. 16–18), all configurable per robot."""

    mass_lower_kg: np.ndarray
    mass_upper_kg: np.ndarray
    com_lower_m: np.ndarray  # (n, 3)
    com_upper_m: np.ndarray  # (n, 3)
    inertia_diag_upper_kg_m2: np.ndarray  # (n,) bound of Ixx, Iyy, Izz about the CoM
    total_mass_kg: tuple[float, float]
    friction_lower: np.ndarray  # (n, n_friction)
    friction_upper: np.ndarray
    max_inertia_ratio: float  # max diagonal ≤ ratio · min diagonal (eq. 18; Xu et al. 2020: 100)
    max_off_diagonal_ratio: float  # |off-diagonal| ≤ ratio · min diagonal (eq. 18; Xu et al. 2020: 0.1)
    orderings: tuple[str, ...] = ()  # robot-specific linear orderings such as "Izz3 <= Ixx3"
    fixed_inertials: tuple[np.ndarray | None, ...] = ()
    """Per joint, the standard parameters (10,) of links lumped onto it that are known (a gripper); the
    link's own part π_i − π_fixed must then be consistent too. Empty: nothing lumped."""


def default_bounds(
    robot: RobotModel,
    mass_factor: tuple[float, float] = (0.5, 2.0),
    com_margin_m: float = 0.1,
    inertia_factor: float = 5.0,
    total_mass_factor: tuple[float, float] = (0.8, 1.2),
    friction_upper: Sequence[float] | None = None,
    fixed_inertials: Sequence[np.ndarray | None] = (),
    max_inertia_ratio: float | None = None,
    max_off_diagonal_ratio: float | None = None,
    orderings: Sequence[str] = (),
) -> PhysicalBounds:
    """Bounds around the nominal (URDF) model: masses and total mass scaled, CoM within a margin,
    inertia diagonal up to `inertia_factor` × the nominal link's largest principal moment (at least 0.01 kg m²).

    The eq. (18) ratios, unless given, are Xu et al.'s (2020) (100 and 0.1) or twice the nominal model's worst ratio,
    whichever is larger, so that the nominal model is always feasible (the iiwa CAD inertias have off-diagonal terms up
    to 0.4 of the smallest diagonal one). Friction: viscous and Coulomb in [0, 50], offset in ±50, rotor
    inertia in [0, 5].
    """
    pi0 = nominal_parameters(robot)
    links = [link_from_standard(pi0[cols]) for cols in inertial_columns(robot)]
    mass = np.array([link.mass_kg for link in links])
    com = np.array([link.com_m for link in links])
    moments = np.array([np.linalg.eigvalsh(link.inertia_com_kg_m2)[-1] for link in links])
    diagonals = np.array([np.diag(link.inertia_com_kg_m2) for link in links])
    off_diagonals = np.array([np.abs(link.inertia_com_kg_m2[np.triu_indices(3, 1)]) for link in links])
    inertia_ratio = float(np.max(diagonals.max(axis=1) / diagonals.min(axis=1)))
    off_diagonal_ratio = float(np.max(off_diagonals.max(axis=1) / diagonals.min(axis=1)))
    limits = {"FV": (0.0, 50.0), "FC": (0.0, 50.0), "FO": (-50.0, 50.0), "IA": (0.0, 5.0)}
    lower = np.array([[limits[t][0] for t in robot.friction]] * robot.n_joints).reshape(robot.n_joints, -1)
    upper = np.array([[limits[t][1] for t in robot.friction]] * robot.n_joints).reshape(robot.n_joints, -1)
    if friction_upper is not None:
        upper = np.broadcast_to(np.asarray(friction_upper, dtype=float), upper.shape).copy()
    return PhysicalBounds(
        mass_lower_kg=mass * mass_factor[0],
        mass_upper_kg=mass * mass_factor[1],
        com_lower_m=com - com_margin_m,
        com_upper_m=com + com_margin_m,
        inertia_diag_upper_kg_m2=np.maximum(inertia_factor * moments, 0.01),
        total_mass_kg=(mass.sum() * total_mass_factor[0], mass.sum() * total_mass_factor[1]),
        friction_lower=lower,
        friction_upper=upper,
        max_inertia_ratio=max_inertia_ratio or max(100.0, 2.0 * inertia_ratio),
        max_off_diagonal_ratio=max_off_diagonal_ratio or max(0.1, 2.0 * off_diagonal_ratio),
        orderings=tuple(orderings),
        fixed_inertials=tuple(fixed_inertials),
    )


@dataclass(frozen=True)
class RetrievalResult:
    """Retrieved parameters with the figures that say how good they are."""

    method: str
    pi: np.ndarray  # standard parameters π(µ̂)
    links: tuple[LinkInertial, ...]
    friction: np.ndarray  # (n, n_friction)
    residual_norm_nm: float  # ‖τ − W·E·π‖ (eq. 15)
    unconstrained_residual_norm_nm: float  # least-squares residual of the same W, τ without constraints
    violations: tuple[str, ...]  # configured constraints not met (empty on success)
    wall_time_s: float
    starts: int = 1
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def residual_increase(self) -> float:
        """Relative increase of the residual over the unconstrained solution (goal: ≤ 0.02)."""
        return self.residual_norm_nm / self.unconstrained_residual_norm_nm - 1.0


@dataclass(frozen=True)
class _Problem:
    """‖τ − Aπ‖² = πᵀQπ − 2bᵀπ + c with A = W·E, reduced once so that K never enters the iterations."""

    q: np.ndarray
    b: np.ndarray
    c: float
    r: np.ndarray  # upper-triangular factor of A (A = Q_A R), for the convex program
    z: np.ndarray  # Q_Aᵀ τ
    unconstrained_residual: float


def _reduce(w_target: np.ndarray, tau_nm: np.ndarray, target_from_pi: np.ndarray) -> _Problem:
    a = w_target @ target_from_pi
    q_a, r = np.linalg.qr(a)
    z = q_a.T @ tau_nm
    c = float(tau_nm @ tau_nm)
    theta = np.linalg.lstsq(w_target, tau_nm, rcond=None)[0]
    unconstrained = float(np.linalg.norm(tau_nm - w_target @ theta))
    return _Problem(a.T @ a, a.T @ tau_nm, c, r, z, unconstrained)


def _residual_norm(problem: _Problem, pi: np.ndarray) -> float:
    return float(np.sqrt(max(pi @ problem.q @ pi - 2.0 * problem.b @ pi + problem.c, 0.0)))


# --- constraints --------------------------------------------------------------------------------------


def _mu_index(robot: RobotModel) -> dict[str, int]:
    """Index in µ of every name: m1, cx1, ..., Izz1, FV1, ..."""
    names = MU_NAMES + robot.friction
    return {
        f"{name}{j + 1}": j * robot.params_per_joint + k for j in range(robot.n_joints) for k, name in enumerate(names)
    }


def _linear_constraints(robot: RobotModel, bounds: PhysicalBounds) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """G µ ≤ h for eqs. (17), (18) and the configured orderings, with a label per row."""
    p = robot.n_params
    rows, rhs, labels = [], [], []
    names = list(_mu_index(robot))

    def row(entries: dict[int, float], limit: float, label: str) -> None:
        g = np.zeros(p)
        for index, value in entries.items():
            g[index] += value
        rows.append(g)
        rhs.append(limit)
        labels.append(label)

    masses = inertial_columns(robot)[:, 0]
    low, high = bounds.total_mass_kg
    row(dict.fromkeys(masses, 1.0), high, f"total mass ≤ {high:.4g} kg (eq. 17)")
    row(dict.fromkeys(masses, -1.0), -low, f"total mass ≥ {low:.4g} kg (eq. 17)")
    ratio, off_ratio = bounds.max_inertia_ratio, bounds.max_off_diagonal_ratio
    for cols in inertial_columns(robot):
        diag, off = cols[list(_DIAG)], cols[list(_OFF_DIAG)]
        for a in range(3):
            others = [d for d in range(3) if d != a]
            d_a, d_b, d_c = (names[diag[k]] for k in (a, *others))
            row({diag[a]: 1.0, diag[others[0]]: -1.0, diag[others[1]]: -1.0}, 0.0, f"{d_a} ≤ {d_b} + {d_c} (eq. 18)")
            for b in others:
                row({diag[a]: 1.0, diag[b]: -ratio}, 0.0, f"{d_a} ≤ {ratio:.3g}·{names[diag[b]]} (eq. 18)")
            for o in off:
                label = f"|{names[o]}| ≤ {off_ratio:.3g}·{d_a} (eq. 18)"
                row({o: 1.0, diag[a]: -off_ratio}, 0.0, label)
                row({o: -1.0, diag[a]: -off_ratio}, 0.0, label)
    index = _mu_index(robot)
    for ordering in bounds.orderings:
        lhs, _, rhs_name = ordering.partition("<=")
        lhs, rhs_name = lhs.strip(), rhs_name.strip()
        if lhs not in index or rhs_name not in index:
            raise ValueError(f"ordering '{ordering}': use 'A <= B' with names such as {names[:10]}")
        row({index[lhs]: 1.0, index[rhs_name]: -1.0}, 0.0, f"{lhs} ≤ {rhs_name} (ordering)")
    return np.array(rows), np.array(rhs), labels


def _box(robot: RobotModel, bounds: PhysicalBounds) -> tuple[np.ndarray, np.ndarray]:
    lower, upper = np.empty(robot.n_params), np.empty(robot.n_params)
    for j, cols in enumerate(inertial_columns(robot)):
        lower[cols] = [bounds.mass_lower_kg[j], *bounds.com_lower_m[j], 0.0, -np.inf, -np.inf, 0.0, -np.inf, 0.0]
        d = bounds.inertia_diag_upper_kg_m2[j]
        upper[cols] = [bounds.mass_upper_kg[j], *bounds.com_upper_m[j], d, d, d, d, d, d]
        lower[cols[[5, 6, 8]]] = -d
    lower[friction_columns(robot)] = bounds.friction_lower
    upper[friction_columns(robot)] = bounds.friction_upper
    return lower, upper


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
        [_smallest_eigen(_ownsigma_matrix(bounds, mu, j, cols))[0] / scale[j]
         for j, cols in enumerate(inertial_columns(robot))]
    )


def _ownsigma_matrix(bounds: PhysicalBounds, mu: np.ndarray, j: int, cols: np.ndarray) -> np.ndarray:
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
            diff = (_smallest_eigen(_ownsigma_matrix(bounds, up, j, cols))[0]
                    - _smallest_eigen(_ownsigma_matrix(bounds, down, j, cols))[0])
            jac[j, col] = diff / (2 * step) / scale[j]
    return jac


def constraint_violations(robot: RobotModel, bounds: PhysicalBounds, pi: np.ndarray, tol: float = 1e-7) -> list[str]:
    """Every configured constraint that π does not meet, in words; empty when all hold."""
    mu = mu_from_pi(robot, pi)
    names = list(_mu_index(robot))
    lower, upper = _box(robot, bounds)
    scale = np.maximum(np.abs(upper), np.abs(lower))
    scale = np.where(np.isfinite(scale), np.maximum(scale, 1e-3), 1.0)
    out = [
        f"{names[i]} = {mu[i]:.6g} outside [{lower[i]:.6g}, {upper[i]:.6g}]"
        for i in range(len(mu))
        if mu[i] < lower[i] - tol * scale[i] or mu[i] > upper[i] + tol * scale[i]
    ]
    g, h, labels = _linear_constraints(robot, bounds)
    slack = g @ mu - h
    for k in np.flatnonzero(slack > tol * np.maximum(1.0, np.abs(g) @ np.abs(mu))):
        out.append(f"{labels[k]} violated by {slack[k]:.3g}")
    for j, cols in enumerate(inertial_columns(robot)):
        reasons = consistency_violations(link_from_standard(pi[cols]))
        fixed = bounds.fixed_inertials[j] if j < len(bounds.fixed_inertials) else None
        if fixed is not None and not reasons:
            reasons = [f"own part: {r}" for r in consistency_violations(link_from_standard(pi[cols] - fixed))]
        out += [f"link {robot.link_names[j]}: {r}" for r in reasons]
    return out


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
    lower, upper = _box(robot, bounds)
    free = upper > lower
    span = np.where(free, upper - lower, 1.0)  # a fixed (held) parameter stays at x = 0
    g, h, _ = _linear_constraints(robot, bounds)
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
    lower, upper = _box(robot, bounds)
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
) -> RetrievalResult:
    """Xu et al.'s (2020) retrieval: κ = `starts` starts of SLSQP in parallel processes, with a Euclidean pull of
    `weight` towards the URDF model. The starts are the convex solution (retrieve_lmi, Euclidean), the URDF
    model, and random points in the bounds."""
    t0 = time.perf_counter()
    _linear_constraints(robot, bounds)  # refuses malformed orderings before any work starts
    problem = _reduce(w_target, tau_nm, target_from_pi)
    rng = np.random.default_rng(seed)
    convex = retrieve_lmi(robot, w_target, tau_nm, target_from_pi, bounds, "euclidean", weight)
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
        candidates.append((len(violations) > 0, _residual_norm(problem, pi), pi, violations))
    _, residual, pi, violations = min(candidates, key=lambda c: (c[0], c[1]))
    feasible = sum(not c[0] for c in candidates)
    notes = (f"{feasible}/{len(jobs)} starts feasible",)
    return _result(robot, "multistart", pi, residual, problem, violations, t0, len(jobs), notes)


# --- method 2: convex program on the pseudo-inertias --------------------------------------------------


def retrieve_lmi(
    robot: RobotModel,
    w_target: np.ndarray,
    tau_nm: np.ndarray,
    target_from_pi: np.ndarray,
    bounds: PhysicalBounds,
    regularizer: str = "euclidean",
    weight: float = 1e-4,
    epsilon: float = 1e-6,
) -> RetrievalResult:
    """min ‖τ − W·E·π‖² + weight·‖τ‖²·D(π, π_nominal) s.t. J_i(π) ⪰ ε·I, mass, CoM and friction bounds.

    D is `euclidean` (relative squared distance) or `entropic` (the log-det Bregman divergence of the
    pseudo-inertias, which is invariant to the choice of link frame). Solved with Clarabel.
    """
    if regularizer not in ("euclidean", "entropic"):
        raise ValueError(f"regularizer must be 'euclidean' or 'entropic', not {regularizer!r}")
    t0 = time.perf_counter()
    problem = _reduce(w_target, tau_nm, target_from_pi)
    pi0 = nominal_parameters(robot)
    pi = cp.Variable(robot.n_params)
    fit = cp.sum_squares(problem.r @ pi - problem.z) / max(problem.c, 1e-12)
    constraints = []
    divergence = 0
    for j, cols in enumerate(inertial_columns(robot)):
        j_link = _pseudo_inertia_expr(pi, cols)
        fixed = bounds.fixed_inertials[j] if j < len(bounds.fixed_inertials) else None
        own = j_link - pseudo_inertia(fixed) if fixed is not None else j_link
        constraints.append(own >> epsilon * np.eye(4))
        m, h = pi[cols[0]], pi[cols[1:4]]
        constraints += [
            m >= bounds.mass_lower_kg[j],
            m <= bounds.mass_upper_kg[j],
            h >= m * bounds.com_lower_m[j],
            h <= m * bounds.com_upper_m[j],
            # eq. (16) on the inertia about the CoM, through I_C,ii ≤ I_O,ii (sufficient, linear in π)
            pi[cols[[4, 7, 9]]] <= bounds.inertia_diag_upper_kg_m2[j],
        ]
        if regularizer == "entropic":
            j0_inv = np.linalg.inv(_positive_definite(pseudo_inertia(pi0[cols])))
            divergence += -cp.log_det(j_link) + cp.trace(j0_inv @ j_link)  # Bregman divergence up to a constant
        else:
            divergence += cp.sum_squares(pi[cols] - pi0[cols]) / max(float(np.sum(pi0[cols] ** 2)), 1e-12)
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
    lmi_bounds = PhysicalBounds(
        **{**bounds.__dict__, "max_inertia_ratio": np.inf, "max_off_diagonal_ratio": np.inf, "orderings": ()}
    )
    violations = constraint_violations(robot, lmi_bounds, value)
    notes = [f"{regularizer} regulariser, weight {weight:g}; eq. (18) ratio/off-diagonal limits not imposed"]
    if program.status != cp.OPTIMAL:
        notes.append(f"the solver reports status {program.status}: the solution may be inaccurate")
    return _result(
        robot, f"lmi-{regularizer}", value, _residual_norm(problem, value), problem, violations, t0, 1, tuple(notes)
    )


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


def _result(robot, method, pi, residual, problem, violations, t0, starts, notes) -> RetrievalResult:
    links = tuple(link_from_standard(pi[cols]) for cols in inertial_columns(robot))
    return RetrievalResult(
        method=method,
        pi=pi,
        links=links,
        friction=pi[friction_columns(robot)],
        residual_norm_nm=residual,
        unconstrained_residual_norm_nm=problem.unconstrained_residual,
        violations=tuple(violations),
        wall_time_s=time.perf_counter() - t0,
        starts=starts,
        notes=tuple(notes),
    )


def _progress(text: str) -> None:
    if sys.stderr.isatty():
        sys.stderr.write(f"\r{text:<40}")
        sys.stderr.flush()
    elif text:
        sys.stderr.write(text + "\n")
