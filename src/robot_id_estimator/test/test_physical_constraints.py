"""Every configured constraint holds in what both physical methods return (Xu et al. 2020, eqs. 16–18, the margin),
the multi-start is reproducible, and a set that violates a constraint is never the answer."""

import dataclasses

import numpy as np
import pytest
from estimator_synthetic import identification_problem

from robot_id_estimator.physical.constraints import ConstraintSet, constraint_violations
from robot_id_estimator.physical.lmi import retrieve_lmi
from robot_id_estimator.physical.multistart import retrieve_multistart
from robot_id_estimator.physical.plausibility import ACTIVE_FRACTION
from robot_id_estimator.physical.problem import default_bounds
from robot_id_estimator.results.plausibility import grouped_active
from robot_id_model.parameters import inertial_columns
from robot_id_model.physical import link_from_standard, relative_margin


def _diagonal_ratio(pi_link: np.ndarray) -> float:
    diagonal = np.diag(link_from_standard(pi_link).inertia_com_kg_m2)
    return float(diagonal.max() / diagonal.min())


def _noisy(tau: np.ndarray, seed: int = 0) -> np.ndarray:
    """1 % torque noise: the data then pull the fit towards the Franka URDF's inconsistent link 4."""
    return tau + 0.01 * np.std(tau) * np.random.default_rng(seed).standard_normal(tau.shape)


@pytest.fixture(scope="module")
def panda_near_the_boundary():
    """Panda data from a truth whose link 4 breaks the triangle inequality (as Franka's URDF does), with noise:
    the data push the solution against the consistency boundary, as real data do."""
    robot, base, pi_true, w, tau = identification_problem("panda", friction=("FV", "FC"))
    assert any(v.startswith("link fer_link4") for v in constraint_violations(robot, default_bounds(robot), pi_true))
    return robot, base, pi_true, w, _noisy(tau)


def test_lmi_imposes_the_inertia_ratio_of_eq_18():
    robot, base, _, w, tau = identification_problem("iiwa14")
    cols = inertial_columns(robot)
    loose = dataclasses.replace(default_bounds(robot), max_inertia_ratio=1e3)
    free = retrieve_lmi(robot, w, tau, base.beta_from_pi, loose)
    ratios = [_diagonal_ratio(free.pi[c]) for c in cols]
    j = int(np.argmax(ratios))
    tight = 0.9 * ratios[j]
    bounds = dataclasses.replace(loose, max_inertia_ratio=tight)
    assert any(f"≤ {tight:.3g}·" in v for v in constraint_violations(robot, bounds, free.pi))
    result = retrieve_lmi(robot, w, tau, base.beta_from_pi, bounds)
    assert result.violations == ()
    assert max(_diagonal_ratio(result.pi[c]) for c in cols) <= tight * (1 + 1e-6)


def test_lmi_imposes_the_off_diagonal_limit_of_eq_18():
    robot, base, pi_true, w, tau = identification_problem("iiwa14")
    bounds = dataclasses.replace(default_bounds(robot), max_off_diagonal_ratio=0.01)
    assert any("(eq. 18) violated" in v and "|I" in v for v in constraint_violations(robot, bounds, pi_true))
    result = retrieve_lmi(robot, w, tau, base.beta_from_pi, bounds)
    assert result.violations == ()
    for cols in inertial_columns(robot):
        inertia = link_from_standard(result.pi[cols]).inertia_com_kg_m2
        off = np.abs(inertia[np.triu_indices(3, 1)])
        assert off.max() <= 0.01 * np.diag(inertia).min() * (1 + 1e-6)
    # the data (a truth with off-diagonal terms up to 0.4 of the smallest diagonal one) push against it
    assert any("| ≤ 0.01·" in a for a in ConstraintSet(robot, bounds).active(result.pi, ACTIVE_FRACTION))
    assert result.residual_increase > 0.0


def test_active_constraints_are_warned_of_in_one_line_per_kind_with_their_names():
    """Many off-diagonal limits of eq. 18 active at once make one line with their count and names, not one each."""
    robot, base, _, w, tau = identification_problem("iiwa14")
    bounds = dataclasses.replace(default_bounds(robot), max_off_diagonal_ratio=0.01)
    active = ConstraintSet(robot, bounds).active(retrieve_lmi(robot, w, tau, base.beta_from_pi, bounds).pi,
                                                 ACTIVE_FRACTION)
    ratio_rows = [a for a in active if "(eq. 18)" in a]
    assert len(ratio_rows) >= 3
    lines = grouped_active(tuple(active))
    assert len(lines) == len(active) - len(ratio_rows) + 1
    line = next(line for line in lines if "(eq. 18)" in line)
    assert line.startswith(f"{len(ratio_rows)} off-diagonal inertias at their ratio to the diagonal (eq. 18): ")
    assert line.split(": ")[1].split(", ") == [a.split("|")[1] for a in ratio_rows]


@pytest.mark.parametrize("robot_name", ["iiwa14", "panda"])
def test_every_kind_of_constraint_label_is_grouped_and_counted(robot_name):
    """Every row label of eq. 17 and 18 (triangle, ratio and off-diagonal rows), as active() writes them, goes into
    exactly one line, whose count adds up to the labels given."""
    robot = identification_problem(robot_name)[0]
    constraints = ConstraintSet(robot, default_bounds(robot))
    active = tuple(f"{label} (slack 0)" for label in dict.fromkeys(constraints.labels))
    lines = grouped_active(active)
    grouped = [line for line in lines if line not in active]
    counted = sum(int(line.split(" ", 1)[0]) for line in grouped)
    assert counted + len(lines) - len(grouped) == len(active)
    assert any(line.startswith("diagonal inertias", len(line.split(" ", 1)[0]) + 1) for line in grouped)


@pytest.mark.parametrize("method", ["lmi", "multistart"])
def test_the_margin_is_respected(panda_near_the_boundary, method):
    robot, base, _, w, tau = panda_near_the_boundary
    bounds = dataclasses.replace(default_bounds(robot), margin=0.05)
    if method == "lmi":
        result = retrieve_lmi(robot, w, tau, base.beta_from_pi, bounds)
    else:
        result = retrieve_multistart(robot, w, tau, base.beta_from_pi, bounds, starts=4, workers=1)
    assert result.violations == ()
    margins = [relative_margin(link_from_standard(result.pi[c]).inertia_com_kg_m2) for c in inertial_columns(robot)]
    assert min(margins) >= 0.05 - 1e-7
    assert margins[3] < 0.05 + ACTIVE_FRACTION  # link 4: the data push it against the margin
    for m in margins:  # principal moments meet the triangle inequality by margin·trace
        assert m > 0.0


def test_multistart_near_the_boundary_returns_a_clean_set_from_feasible_starts(panda_near_the_boundary):
    robot, base, _, w, tau = panda_near_the_boundary
    bounds = default_bounds(robot)
    result = retrieve_multistart(robot, w, tau, base.beta_from_pi, bounds, starts=4, seed=3, workers=1)
    assert result.violations == ()
    assert constraint_violations(robot, bounds, result.pi) == []
    feasible = int(result.notes[0].split("/")[0])
    assert feasible >= 2 and result.notes[0].startswith(f"{feasible}/4 starts feasible")


def test_multistart_gives_the_same_answer_whatever_the_number_of_processes(panda_near_the_boundary):
    robot, base, _, w, tau = panda_near_the_boundary
    bounds = default_bounds(robot)
    runs = [retrieve_multistart(robot, w, tau, base.beta_from_pi, bounds, starts=3, seed=5, workers=k)
            for k in (1, 2, 2)]
    assert np.array_equal(runs[0].pi, runs[1].pi) and np.array_equal(runs[1].pi, runs[2].pi)
    assert runs[0].notes == runs[1].notes == runs[2].notes


def test_infeasible_constraints_are_reported_with_amounts_not_returned_as_an_answer():
    robot, base, _, w, tau = identification_problem("panda", friction=("FV", "FC"))
    bounds = dataclasses.replace(default_bounds(robot, mass_factor=(0.9, 2.0)),
                                 total_mass_kg=(0.1, 0.6 * sum(default_bounds(robot).mass_upper_kg) / 2.0))
    result = retrieve_lmi(robot, w, tau, base.beta_from_pi, bounds)
    assert result.violations
    assert all(" by " in v for v in result.violations)
    assert any(v.startswith("total mass ≤") for v in result.violations)
