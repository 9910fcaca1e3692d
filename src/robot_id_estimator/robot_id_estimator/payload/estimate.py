"""The load's ten parameters from its samples (payload.samples): weighted least squares with their relative
standard deviations (Xu et al. 2020, eq. 7), then one physically consistent body (pseudo-inertia positive
semidefinite, Wensing et al. 2017) within a mass range and a reach, the parameters the data do not determine held
at a point mass at the identified centre of mass. Checked on time blocks it was not fitted to.

In: PayloadSamples and PayloadBounds. Out: PayloadEstimate.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np

from robot_id_estimator.payload.arm_error import ArmErrorBounds, arm_error_bounds
from robot_id_estimator.payload.principal_axes import PrincipalAxes, principal_axes
from robot_id_estimator.payload.samples import PayloadSamples
from robot_id_model.physical import LinkInertial, link_from_standard, link_standard_parameters

NAMES = ("m", "mx", "my", "mz", "Ixx", "Ixy", "Ixz", "Iyy", "Iyz", "Izz")
"""The load's standard parameters in its frame: mass, first moments m·c, inertia about the frame's origin."""
HELD_RSD_PERCENT = 50.0
"""A parameter whose relative standard deviation exceeds this is not determined by the data: it is held."""
MOMENT_RSD_PERCENT = 5.0
"""A principal moment about the CoM whose relative standard deviation exceeds this is not determined: the excitation
moved the load too little to tell it (moments are small differences of the parameters about the frame's origin).
A fifth of the 20 % a determined moment is held to: in simulation the moments came out up to 3.5 RSDs off (what the
RSD does not see: the arm reversing differently with the load; the iiwa14's smallest moment 18.6 % off at RSD 10 %
through the graph, the Panda's 3 kg box's 10.7 % at 3.1 %)."""
MOMENT_BOUND_PERCENT = 20.0
"""A principal moment the arm model's error could move by more than this (arm_error: a worst case, the error aligned
with the moment's equations in every sample) is not determined against that arm model: a moment named determined is
within this even in the worst case (the accuracy a payload needs). On the simulated Panda the identified arm's
moment errors were at most 0.6 of their bounds (benchmarks/payload.py)."""
NOT_A_BODY_SIGMAS = 3.0
"""The least-squares load is no rigid body when its smallest second moment about the CoM (the margin of a principal
moment's triangle inequality, negative for an impossible mass distribution; Wensing et al. 2017) lies more than this
many standard deviations below zero: the torque share is not one load's (a baseline recorded with something on the
flange gave a mass of 1.39 kg and moments of -0.024 kg m², which the consistent fit turned into a plausible body).
Against an identified arm its error can do that too (the simulated iiwa14's 0.5 and 1.5 kg loads, mass and CoM
right): there it is said, and the check stands on the joints (identify_payload)."""
DRAWS = 4000
"""Draws from the least-squares distribution that give the principal moments' standard deviations and the principal
axes' spread."""


@dataclass(frozen=True)
class PayloadBounds:
    mass_kg: tuple[float, float]
    """The load's mass range."""
    reach_m: float
    """Its centre of mass lies within this distance of the frame's origin (the tool's size)."""


@dataclass(frozen=True)
class PayloadEstimate:
    values: np.ndarray
    """(10,) the consistent load, in NAMES order."""
    least_squares: np.ndarray
    """(10,) the unconstrained weighted least-squares values."""
    rsd_percent: np.ndarray
    """(10,) relative standard deviation of each least-squares value (eq. 7; inf for a value of 0)."""
    held: tuple[str, ...]
    """Parameters the data do not determine (RSD above HELD_RSD_PERCENT), held at a point mass at the CoM."""
    residual_rms_nm: np.ndarray
    """(n,) RMS of the load's torque share the consistent load leaves, on the data it was fitted to."""
    held_out_rms_nm: np.ndarray
    """(n,) the same, each time block predicted by a fit on the others (cross-validation)."""
    load_torque_rms_nm: np.ndarray
    """(n,) RMS of the load's torque share itself: the scale of the errors."""
    moments_rsd_percent: np.ndarray
    """(3,) relative standard deviation of the principal moments about the CoM, ascending, from DRAWS draws of the
    least-squares values' distribution (the values' covariance, eq. 7)."""
    arm_error: ArmErrorBounds | None
    """How far the arm model's error could move the load (arm_error); None where it cancels or is not known."""
    body_margin_sigmas: float
    """The least-squares load's smallest second moment about its CoM in standard deviations (NOT_A_BODY_SIGMAS)."""
    axes: PrincipalAxes
    """The consistent load's principal axes, their spread over the draws and which the data determine."""
    drawn_inertia_kg_m2: np.ndarray = field(repr=False, compare=False)
    """(DRAWS, 3, 3) the drawn loads' inertias about their CoM (none when too few draws have a positive mass): the
    axes' spread in another frame (axes_in)."""

    @property
    def not_a_body(self) -> bool:
        """The least-squares load is no rigid body beyond its uncertainty (NOT_A_BODY_SIGMAS)."""
        return self.body_margin_sigmas < -NOT_A_BODY_SIGMAS

    @property
    def undetermined_moments(self) -> tuple[int, ...]:
        """Indices (ascending order) of the principal moments the data do not determine (MOMENT_RSD_PERCENT), or
        that the arm model's error could move by more than MOMENT_BOUND_PERCENT; all of them when the data are no
        rigid body's."""
        if self.not_a_body:
            return (0, 1, 2)
        determined = self.moments_rsd_percent <= MOMENT_RSD_PERCENT
        if self.arm_error is not None:
            determined &= self.arm_error.moments_percent <= MOMENT_BOUND_PERCENT
        return tuple(int(k) for k in np.flatnonzero(~determined))

    @property
    def inertial(self) -> LinkInertial:
        """Mass, CoM and inertia about the CoM, in the load's frame."""
        return link_from_standard(self.values)

    def axes_in(self, rotation: np.ndarray) -> PrincipalAxes:
        """The principal axes seen from a frame in which the load's frame has axes `rotation`: the same axes turned,
        KUKA's A B C and their spread there; which axes are determined does not depend on the frame."""
        inertia = rotation @ self.inertial.inertia_com_kg_m2 @ rotation.T
        turned = principal_axes(inertia, rotation @ self.drawn_inertia_kg_m2 @ rotation.T)
        return dataclasses.replace(turned, unresolved=self.axes.unresolved)


def estimate_payload(samples: PayloadSamples, bounds: PayloadBounds) -> PayloadEstimate:
    """The load from `samples` (module docstring)."""
    weights = _joint_weights(samples)
    theta, covariance = _least_squares(samples.y, samples.tau_nm, weights)
    covariance = covariance * samples.rsd_factor**2
    with np.errstate(divide="ignore", invalid="ignore"):
        rsd = np.where(theta != 0.0, 100.0 * np.sqrt(np.diag(covariance)) / np.abs(theta), np.inf)
    held = tuple(name for name, r in zip(NAMES, rsd, strict=True) if not r <= HELD_RSD_PERCENT)
    values = consistent_load(samples.y, samples.tau_nm, weights, bounds, theta, held)
    held_out = np.zeros_like(samples.tau_nm)
    for b in np.unique(samples.blocks):
        fit, test = samples.blocks != b, samples.blocks == b
        theta_b, _ = _least_squares(samples.y[fit], samples.tau_nm[fit], weights)
        values_b = consistent_load(samples.y[fit], samples.tau_nm[fit], weights, bounds, theta_b, held)
        held_out[test] = samples.tau_nm[test] - samples.y[test] @ values_b
    residual = samples.tau_nm - samples.y @ values
    arm_error = (None if samples.arm_error_rms_nm is None else
                 arm_error_bounds(samples.y, weights, theta, samples.arm_error_rms_nm))
    moments_rsd, body_sigmas, drawn = _drawn_statistics(theta, covariance)
    inertia = link_from_standard(values).inertia_com_kg_m2
    least_squares_moments = np.linalg.eigvalsh(link_from_standard(theta).inertia_com_kg_m2)  # arm_error's percents'
    bound = None if arm_error is None else arm_error.moments_percent / 100.0 * np.abs(least_squares_moments)
    axes = principal_axes(inertia, drawn, bound, rigid_body=body_sigmas >= -NOT_A_BODY_SIGMAS)
    return PayloadEstimate(values, theta, rsd, held, _rms(residual), _rms(held_out), _rms(samples.tau_nm),
                           moments_rsd, arm_error, body_sigmas, axes, drawn)


def _drawn_statistics(theta: np.ndarray, covariance: np.ndarray) -> tuple[np.ndarray, float, np.ndarray]:
    """Over draws of N(θ, covariance) (seeded): (3,) RSD [%] of the principal moments about the CoM, the
    least-squares load's smallest second moment about its CoM in standard deviations of the drawn ones, and the
    drawn inertias about the CoM ((N, 3, 3); none when too few draws have a positive mass)."""
    draws = np.random.default_rng(0).multivariate_normal(theta, covariance, DRAWS, method="eigh")
    draws = draws[draws[:, 0] > 0.0]
    if len(draws) < DRAWS // 2 or theta[0] <= 0.0:
        return np.full(3, np.inf), 0.0, np.zeros((0, 3, 3))
    inertias = np.array([link_from_standard(d).inertia_com_kg_m2 for d in draws])
    moments = np.linalg.eigvalsh(inertias)
    margins = 0.5 * moments.sum(axis=1) - moments[:, 2]  # the largest moment's triangle inequality
    own = np.linalg.eigvalsh(link_from_standard(theta).inertia_com_kg_m2)
    margin = 0.5 * own.sum() - own[2]
    with np.errstate(divide="ignore", invalid="ignore"):
        rsd = 100.0 * moments.std(axis=0) / np.abs(moments.mean(axis=0))
    return rsd, float(margin / max(float(margins.std()), 1e-300)) if margin < 0.0 else 0.0, inertias


def _rms(x: np.ndarray) -> np.ndarray:
    return np.sqrt(np.mean(x**2, axis=0))


def _joint_weights(samples: PayloadSamples) -> np.ndarray:
    """(n,) 1/σ per joint: the noise of the periods where known, else the residual of an unweighted fit."""
    if samples.noise_std_nm is not None and np.all(samples.noise_std_nm > 0.0):
        return 1.0 / samples.noise_std_nm
    theta, *_ = np.linalg.lstsq(samples.y.reshape(-1, 10), samples.tau_nm.ravel(), rcond=None)
    sigma = _rms(samples.tau_nm - samples.y @ theta)
    return 1.0 / np.maximum(sigma, 1e-6 * max(float(sigma.max()), 1e-12))


def _least_squares(y: np.ndarray, tau_nm: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted least squares and the values' covariance σ²(WᵀW)⁻¹ (eq. 7)."""
    w = (y * weights[None, :, None]).reshape(-1, 10)
    z = (tau_nm * weights).ravel()
    theta, *_ = np.linalg.lstsq(w, z, rcond=None)
    dof = max(int(np.count_nonzero(np.any(w != 0.0, axis=1))) - 10, 1)  # rows left out are zero
    variance = float(np.sum((z - w @ theta) ** 2)) / dof
    return theta, variance * np.linalg.pinv(w.T @ w)


def consistent_load(y: np.ndarray, tau_nm: np.ndarray, weights: np.ndarray, bounds: PayloadBounds,
                    theta: np.ndarray, held: tuple[str, ...]) -> np.ndarray:
    """min ‖W(τ − Yπ)‖² over one consistent body: J(π) ⪰ 0, mass in bounds.mass_kg, ‖h‖ ≤ reach·m, and each held
    parameter pulled to a point mass at the least-squares CoM (convex, Clarabel). Solved in units of the load's
    size (π = s·x, s from its mass and the reach), so that masses and inertias weigh alike."""
    w = (y * weights[None, :, None]).reshape(-1, 10)
    z = (tau_nm * weights).ravel()
    mass = max(abs(float(theta[0])), 0.1 * bounds.mass_kg[1], 1e-3)
    s = mass * bounds.reach_m ** np.array([0, 1, 1, 1, 2, 2, 2, 2, 2, 2], dtype=float)
    q_w, r_w = np.linalg.qr(w * s)
    z_r = q_w.T @ z
    scale = max(float(np.sum((z - w @ theta) ** 2)), 1e-9 * float(z @ z), 1e-300)
    x = cp.Variable(10)
    pi = cp.multiply(s, x)
    sigma = cp.bmat([[0.5 * (-pi[4] + pi[7] + pi[9]), -pi[5], -pi[6]],
                     [-pi[5], 0.5 * (pi[4] - pi[7] + pi[9]), -pi[8]],
                     [-pi[6], -pi[8], 0.5 * (pi[4] + pi[7] - pi[9])]])
    h = cp.reshape(pi[1:4], (3, 1), order="F")
    pseudo = cp.bmat([[sigma / bounds.reach_m**2, h / bounds.reach_m],
                      [h.T / bounds.reach_m, cp.reshape(pi[0], (1, 1), order="F")]])
    constraints = [(pseudo + pseudo.T) / 2 >> 0, pi[0] >= bounds.mass_kg[0], pi[0] <= bounds.mass_kg[1],
                   cp.norm(pi[1:4]) <= bounds.reach_m * pi[0]]
    objective = cp.sum_squares(r_w @ x - z_r) / scale
    if held:
        index = [NAMES.index(name) for name in held]
        prior = _point_mass(theta, bounds) / s
        objective = objective + 1e3 * cp.sum_squares(x[index] - prior[index])
    problem = cp.Problem(cp.Minimize(objective), constraints)
    for solver in (cp.CLARABEL, cp.SCS):  # Clarabel now and then declares this always feasible problem infeasible
        try:
            problem.solve(solver=solver)
        except cp.error.SolverError:
            continue
        if problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            break
    if problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or x.value is None:
        raise ValueError("the payload's consistent fit failed in its solver: check the mass range and the reach")
    return s * np.asarray(x.value)


def _point_mass(theta: np.ndarray, bounds: PayloadBounds) -> np.ndarray:
    """A point mass at the least-squares CoM (both clipped into the bounds)."""
    mass = float(np.clip(theta[0], *bounds.mass_kg)) or 1e-3
    com = theta[1:4] / theta[0] if theta[0] > 0.0 else np.zeros(3)
    norm = float(np.linalg.norm(com))
    if norm > bounds.reach_m:
        com = com * bounds.reach_m / norm
    return link_standard_parameters(LinkInertial(mass, com, np.zeros((3, 3))))


