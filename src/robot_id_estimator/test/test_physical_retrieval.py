"""Physical parameter retrieval (Xu et al. 2020, eqs. 12–18) on simulated data with known ground truth."""


import numpy as np
import pytest
from estimator_synthetic import identification_problem, scaled_truth

from robot_id_estimator.physical.constraints import constraint_violations
from robot_id_estimator.physical.lmi import LmiPrograms, retrieve_lmi
from robot_id_estimator.physical.multistart import retrieve_multistart
from robot_id_estimator.physical.problem import PhysicalBounds, default_bounds
from robot_id_lab.synthetic import centred_motion
from robot_id_model import load_robot_config, nominal_parameters, regressor
from robot_id_model.parameters import inertial_columns
from robot_id_model.physical import pseudo_inertia
from robot_id_model.physical_vector import mu_from_pi, pi_from_mu, pi_jacobian


def _fourier_trajectory(robot, seed: int, duration_s: float = 10.0, rate_hz: float = 50.0):
    """A smooth 5-harmonic trajectory of 10 s around the middle of the joint range (for validation)."""
    a, b = np.random.default_rng(seed).normal(0, 0.15, (2, robot.n_joints, 5))
    return centred_motion(robot, 10.0, a, b, np.arange(0.0, duration_s, 1.0 / rate_hz))


def _validation_error(robot, pi_true, pi_hat) -> np.ndarray:
    """Per-joint torque RMS error on a different trajectory, relative to that trajectory's torque RMS."""
    y = regressor(robot, *_fourier_trajectory(robot, seed=11))
    tau_true, tau_hat = y @ pi_true, y @ pi_hat
    return np.sqrt(np.mean((tau_hat - tau_true) ** 2, axis=0)) / np.sqrt(np.mean(tau_true**2, axis=0))


def test_mu_and_pi_round_trip_and_the_jacobian_is_exact():
    robot = load_robot_config("panda").load_model(("FV", "FC"))
    pi = scaled_truth(robot)
    mu = mu_from_pi(robot, pi)
    np.testing.assert_allclose(pi_from_mu(robot, mu), pi, rtol=0, atol=1e-14)
    jac = pi_jacobian(robot, mu)
    numeric = np.empty_like(jac)
    for k in range(len(mu)):
        step = np.zeros_like(mu)
        step[k] = 1e-6
        numeric[:, k] = (pi_from_mu(robot, mu + step) - pi_from_mu(robot, mu - step)) / 2e-6
    np.testing.assert_allclose(jac, numeric, rtol=0, atol=1e-8)


@pytest.mark.parametrize("regularizer", ["entropic", "euclidean"])
def test_convex_retrieval_recovers_the_true_torques(regularizer):
    robot, base, pi_true, w, tau = identification_problem("iiwa14")
    result = retrieve_lmi(robot, w, tau, base.beta_from_pi, default_bounds(robot), regularizer=regularizer)
    assert result.violations == ()
    assert all(np.linalg.eigvalsh(pseudo_inertia(result.pi[c]))[0] > 0 for c in inertial_columns(robot))
    assert np.all(_validation_error(robot, pi_true, result.pi) < 0.01)
    assert result.residual_norm_nm < 0.02 * np.linalg.norm(tau)


def test_a_program_compiled_for_other_data_gives_what_one_compiled_for_these_does():
    """The held-out check's folds share one compiled program (LmiPrograms): fitted to other data after a first fit,
    its answer is that of a program compiled for those data alone (the data are its parameters, none kept)."""
    robot, base, _pi_true, w, tau = identification_problem("iiwa14")
    bounds = default_bounds(robot)
    half = len(tau) // 2
    other_w, other_tau = w[:half], tau[:half] + np.random.default_rng(5).normal(0.0, 0.3, half)
    programs = LmiPrograms()
    retrieve_lmi(robot, w, tau, base.beta_from_pi, bounds, programs=programs)
    reused = retrieve_lmi(robot, other_w, other_tau, base.beta_from_pi, bounds, programs=programs)
    fresh = retrieve_lmi(robot, other_w, other_tau, base.beta_from_pi, bounds)
    assert reused.violations == fresh.violations == () and reused.notes == fresh.notes
    assert reused.residual_norm_nm == pytest.approx(fresh.residual_norm_nm, rel=1e-6)
    np.testing.assert_allclose(reused.pi, fresh.pi, rtol=0, atol=1e-6 * np.abs(fresh.pi).max())


def test_multistart_meets_every_configured_constraint_and_recovers_the_torques():
    robot, base, pi_true, w, tau = identification_problem("panda", friction=("FV", "FC"))
    bounds = default_bounds(robot)
    result = retrieve_multistart(robot, w, tau, base.beta_from_pi, bounds, starts=2, workers=1)
    assert result.violations == ()
    assert constraint_violations(robot, bounds, result.pi) == []
    assert all(np.linalg.eigvalsh(pseudo_inertia(result.pi[c]))[0] > 0 for c in inertial_columns(robot))
    assert np.all(_validation_error(robot, pi_true, result.pi) < 0.01)
    masses = result.pi[inertial_columns(robot)[:, 0]]
    assert bounds.total_mass_kg[0] - 1e-9 <= masses.sum() <= bounds.total_mass_kg[1] + 1e-9


def test_constraints_that_exclude_the_truth_hold_and_cost_residual():
    robot, base, pi_true, w, tau = identification_problem("panda", friction=("FV", "FC"))
    loose = default_bounds(robot)
    true_total = pi_true[inertial_columns(robot)[:, 0]].sum()
    tight = PhysicalBounds(**{**loose.__dict__, "total_mass_kg": (0.5 * true_total, 0.9 * true_total)})
    result = retrieve_lmi(robot, w, tau, base.beta_from_pi, tight, regularizer="euclidean")
    assert result.violations == ()
    assert result.pi[inertial_columns(robot)[:, 0]].sum() == pytest.approx(0.9 * true_total, rel=1e-6)
    assert result.residual_increase > 0.02


def test_violations_are_named():
    robot = load_robot_config("iiwa14").load_model(())
    bounds = default_bounds(robot)
    pi = nominal_parameters(robot)
    pi[inertial_columns(robot)[2, 9]] += 1.0  # ZZ3 far too large: breaks triangle and ratio
    violations = constraint_violations(robot, bounds, pi)
    assert any(v.startswith("Izz3 = ") and "outside" in v for v in violations)
    assert any("Izz3 ≤ Ixx3 + Iyy3 − 0.001·tr (eq. 18) violated by " in v for v in violations)
    assert any(v.startswith("link lbr_link_3: triangle inequality violated") for v in violations)


def test_unknown_ordering_name_is_refused():
    robot, base, _, w, tau = identification_problem("panda", friction=())
    bounds = PhysicalBounds(**{**default_bounds(robot).__dict__, "orderings": ("Izz3 <= Iqq3",)})
    with pytest.raises(ValueError, match="ordering 'Izz3 <= Iqq3': use 'A <= B'"):
        retrieve_multistart(robot, w, tau, base.beta_from_pi, bounds, starts=1, workers=1)
