"""Criteria on the base regressor: values against their definitions, gradients against finite differences."""

import numpy as np
import pytest

from robot_id_excitation import criteria as crit


@pytest.fixture
def yb():
    rng = np.random.default_rng(0)
    return rng.normal(size=(40, 3, 6)) * np.array([1.0, 5.0, 0.2, 2.0, 1.0, 0.5])


def test_values_match_their_definitions(yb):
    w = yb.reshape(-1, 6)
    assert crit.condition_number(yb) == pytest.approx(np.linalg.cond(w), rel=1e-12)
    assert np.exp(crit.log_condition_number_and_gradient(yb)[0]) == pytest.approx(np.linalg.cond(w), rel=1e-9)
    sigma = np.array([0.5, 2.0, 1.0])
    weighted = (yb / sigma[None, :, None]).reshape(-1, 6)
    expected = -np.linalg.slogdet(weighted.T @ weighted / 40)[1]
    assert crit.d_optimality(yb, sigma) == pytest.approx(expected, rel=1e-10)
    norms = np.linalg.norm(weighted, axis=0) / np.sqrt(40)
    assert crit.hadamard(yb, sigma) == pytest.approx(-np.sum(np.log(norms)), rel=1e-12)


def test_d_optimality_is_per_sample_and_hadamard_bounds_it(yb):
    twice = np.concatenate([yb, yb])
    assert crit.d_optimality(twice) == pytest.approx(crit.d_optimality(yb), rel=1e-12)
    assert crit.condition_number(twice) == pytest.approx(crit.condition_number(yb), rel=1e-12)
    # Hadamard's inequality det(WᵀW) ≤ ∏‖w_g‖²
    assert crit.d_optimality(yb) >= 2 * crit.hadamard(yb)
    # scaling every noise level by c scales the information by 1/c²
    assert crit.d_optimality(yb, np.full(3, 2.0)) == pytest.approx(crit.d_optimality(yb) + 6 * 2 * np.log(2.0))


@pytest.mark.parametrize("name", ["cond", "d_optimality", "hadamard"])
def test_gradients_match_finite_differences(yb, name):
    sigma = np.array([0.5, 2.0, 1.0])
    funcs = {
        "cond": lambda y: crit.log_condition_number_and_gradient(y),
        "d_optimality": lambda y: crit.d_optimality_and_gradient(y, sigma),
        "hadamard": lambda y: crit.hadamard_and_gradient(y, sigma),
    }
    exact = {"cond": lambda y: np.log(np.linalg.cond(y.reshape(-1, 6))),
             "d_optimality": lambda y: crit.d_optimality(y, sigma), "hadamard": lambda y: crit.hadamard(y, sigma)}
    direction = np.random.default_rng(1).normal(size=yb.shape)
    h = 1e-6
    numeric = (exact[name](yb + h * direction) - exact[name](yb - h * direction)) / (2 * h)
    analytic = np.sum(funcs[name](yb)[1] * direction)
    assert analytic == pytest.approx(numeric, rel=1e-6)


def test_evaluate_criteria_reports_log_det_as_minus_d(yb):
    values = crit.evaluate_criteria(yb)
    assert values.log_det == -values.d_optimality and values.n_samples == 40 and values.n_base == 6
    assert values.as_dict()["condition_number"] == values.condition_number
