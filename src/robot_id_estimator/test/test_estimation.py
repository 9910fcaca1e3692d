"""Least squares, RSD, essential elimination and identifiability on regressors of random iiwa14 states."""

import numpy as np
import pytest
from estimator_synthetic import IIWA14

from robot_id_estimator.estimation import least_squares as estimation
from robot_id_estimator.processing.reduction import reduce_joints, weighted_rows
from robot_id_lab.synthetic import urdf_with_friction
from robot_id_model import base_parameters, load_robot_config, regressor
from robot_id_model.base_parameters import random_states


def _system(yb: np.ndarray, tau: np.ndarray, weights: np.ndarray) -> estimation.ReducedSystem:
    """The reduced system of a (K, n, b) regressor, as the pipeline builds it (one chunk)."""
    return estimation.reduce_system(*weighted_rows([reduce_joints(yb, tau)], [weights]))


@pytest.fixture(scope="module")
def problem():
    """Base regressor of 400 random states, the true base parameters, and the noise-free torque."""
    robot = load_robot_config(IIWA14).load_model(("FV", "FC", "FO"))
    base = base_parameters(robot)
    beta = base.values(urdf_with_friction(robot))
    states = random_states(robot, 400, seed=5)
    yb = regressor(robot, *states)[..., base.independent]
    return robot, base, beta, yb, states


def test_ols_solution_and_rsd_follow_xu2020_eq_6_and_7(problem):
    _robot, base, beta, yb, _ = problem
    rng = np.random.default_rng(0)
    tau = yb @ beta + 0.05 * rng.normal(size=yb.shape[:2])
    system = _system(yb, tau, np.ones(7))
    columns = np.arange(base.n_base)
    fit = estimation.fit_columns(system, columns)
    # eq. (6) and (7) written out directly
    w = yb.reshape(-1, base.n_base)
    y = tau.ravel()
    values = np.linalg.solve(w.T @ w, w.T @ y)
    sigma2 = np.sum((y - w @ values) ** 2) / (len(y) - base.n_base)
    std = np.sqrt(sigma2 * np.diag(np.linalg.inv(w.T @ w)))
    np.testing.assert_allclose(fit.values, values, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(fit.residual_variance, sigma2, rtol=1e-9)
    np.testing.assert_allclose(fit.std, std, rtol=1e-6)
    np.testing.assert_allclose(fit.rsd_percent, 100.0 * std / np.abs(values), rtol=1e-6)
    assert fit.residual_variance == pytest.approx(0.05**2, rel=0.05)


def test_wls_uses_the_weighted_covariance_and_beats_ols_with_unequal_noise(problem):
    robot, base, beta, yb, _states = problem
    sigma = np.array([3.0, 3.0, 3.0, 0.01, 0.01, 0.01, 0.01])
    rng = np.random.default_rng(1)
    tau = yb @ beta + sigma * rng.normal(size=yb.shape[:2])
    columns = np.arange(base.n_base)
    weights = 1.0 / sigma**2  # the MLE's per-joint weights (Jia et al. 2019 and Wu et al. 2012)
    wls = estimation.fit_columns(_system(yb, tau, weights), columns)
    ols = estimation.fit_columns(_system(yb, tau, np.ones(7)), columns)
    # weighted covariance σ²_w (YᵀWY)⁻¹ with σ²_w from the weighted residual
    w = (yb * np.sqrt(weights)[None, :, None]).reshape(-1, base.n_base)
    y = (tau * np.sqrt(weights)).ravel()
    sigma2 = np.sum((y - w @ wls.values) ** 2) / (len(y) - base.n_base)
    np.testing.assert_allclose(wls.std, np.sqrt(sigma2 * np.diag(np.linalg.inv(w.T @ w))), rtol=1e-6)
    # prediction on other states: the quiet joints are predicted far better by WLS
    y_new = regressor(robot, *random_states(robot, 200, seed=9))[..., base.independent]
    truth = y_new @ beta
    error_wls = np.sqrt(np.mean((y_new @ wls.values - truth) ** 2, axis=0))
    error_ols = np.sqrt(np.mean((y_new @ ols.values - truth) ** 2, axis=0))
    assert np.all(error_wls[3:] < 0.2 * error_ols[3:])
    assert np.sum(error_wls**2) < np.sum(error_ols**2)


def test_essential_elimination_drops_the_largest_rsd_among_small_parameters_in_order(problem):
    _robot, base, beta, yb, _ = problem
    rng = np.random.default_rng(2)
    tau = yb @ beta + 0.2 * rng.normal(size=yb.shape[:2])
    system = _system(yb, tau, np.ones(7))
    columns = np.arange(base.n_base)
    essential = estimation.essential_parameters(system, columns, 0.01, 40.0)
    assert essential.eliminated
    kept = list(columns)
    for dropped in essential.eliminated:  # replay: each step drops the worst candidate of that step
        fit = estimation.fit_columns(system, np.array(kept))
        candidates = (np.abs(fit.values) < 0.01) & (fit.rsd_percent > 40.0)
        assert candidates[kept.index(dropped)]
        assert fit.rsd_percent[kept.index(dropped)] == np.max(fit.rsd_percent[candidates])
        kept.remove(dropped)
    np.testing.assert_array_equal(essential.fit.columns, kept)
    final = essential.fit
    assert not np.any((np.abs(final.values) < 0.01) & (final.rsd_percent > 40.0))
    # thresholds are configurable: nothing is eliminated when no RSD can exceed the bound
    assert estimation.essential_parameters(system, columns, 0.01, 1e12).eliminated == ()


def test_condition_number_of_the_stacked_base_regressor(problem):
    _, base, _, yb, _ = problem
    w = yb.reshape(-1, base.n_base)
    rows = weighted_rows([reduce_joints(yb, np.zeros(yb.shape[:2]))], [np.ones(7)])[0][:, :-1]
    assert estimation.condition_number(rows) == pytest.approx(np.linalg.cond(w), rel=1e-6)
    scaled = w / np.linalg.norm(w, axis=0)
    assert estimation.condition_number(rows, scaled=True) == pytest.approx(np.linalg.cond(scaled), rel=1e-6)


def test_a_still_joint_and_a_joint_that_never_reverses_are_named_with_the_reason(problem):
    robot, base, beta, _, states = problem
    q, dq, ddq = (x.copy() for x in states)
    q[:, 6], dq[:, 6], ddq[:, 6] = 0.3, 0.0, 0.0  # joint 7 still
    dq[:, 2] = np.abs(dq[:, 2]) + 0.1  # joint 3 always turns the same way
    yb = regressor(robot, q, dq, ddq)[..., base.independent]
    tau = yb @ beta
    system = _system(yb, tau, np.ones(7))
    reasons = estimation.unexcited_reasons(system, base.names, q, dq, ddq)
    named = {base.names[j]: text for j, text in reasons.items()}
    assert "FV7" in named and "joint 7 does not move" in named["FV7"]
    assert "its regressor column is zero" in named["FV7"]
    assert {"FC3", "FO3"} & set(named)
    sign_reason = named.get("FC3") or named["FO3"]
    assert "joint 3 never reverses" in sign_reason or "equals" in sign_reason
    assert all(name.endswith(("3", "7", "7R")) for name in named)
    identifiable = estimation.identifiable_columns(system)
    assert len(identifiable) + len(reasons) == base.n_base
    fit = estimation.fit_columns(system, identifiable)
    np.testing.assert_allclose(yb[..., identifiable] @ fit.values, tau, atol=1e-8)


def test_rsd_filter_factor_is_the_noise_bandwidth_of_the_filter():
    # zero-phase order 4: noise power gain |H|⁴ = 1/(1 + (f/fc)^8)², bandwidth ∫|H|⁴ df ≈ 0.9·fc
    f = np.linspace(0.0, 100.0, 200_001)
    bandwidth = np.trapezoid(1.0 / (1.0 + (f / 6.0) ** 8) ** 2, f)
    assert estimation.rsd_filter_factor(200.0, 6.0, 4) == pytest.approx(np.sqrt(100.0 / bandwidth), rel=0.01)
    assert estimation.rsd_filter_factor(20.0, 12.0, 4) == 1.0  # no filter possible: no correction
