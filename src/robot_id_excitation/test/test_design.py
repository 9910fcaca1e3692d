"""Excitation design: feasible on a 10x finer grid, cond far below a random feasible start, clear failures."""

import dataclasses
import sys

import numpy as np
import pytest

import robot_id_excitation.design as design_module
from robot_id_excitation.check import check_trajectory, trajectory_criteria
from robot_id_excitation.constraints import ConstraintGroup, design_limits
from robot_id_excitation.design import (
    DesignError,
    _identifying,
    _random_start,
    design_excitation,
)
from robot_id_excitation.design_problem import DesignOptions, DesignProblem
from robot_id_excitation.design_refusal import always_close_hints
from robot_id_excitation.regressor_sensitivity import base_columns
from robot_id_model import base_parameters

SMALL = DesignOptions(harmonics=3, base_frequency_hz=0.1, samples=60, constraint_samples=120, starts=1, seed=1,
                      max_iterations=60)
"""The Panda's design has converged by 60 iterations: cond(Yb) 54.6 (150 iterations: 54.4; the start's 51 543),
7.7 s CPU instead of 14.1 s."""


@pytest.fixture(scope="module")
def panda_design(panda, panda_config):
    limits = design_limits(panda_config, position_margin_rad=0.1)
    return design_excitation(panda, limits, SMALL, "panda", progress=lambda _: None), limits


def test_design_is_feasible_on_a_grid_ten_times_finer(panda_design, panda):
    result, limits = panda_design
    assert result.feasible
    fine = check_trajectory(panda, limits, result.trajectory, samples=10 * SMALL.constraint_samples)
    assert fine.feasible, fine.lines()
    finer = check_trajectory(panda, limits, result.trajectory, samples=37 * SMALL.constraint_samples)
    assert finer.feasible, finer.lines()


def test_design_lowers_cond_far_below_a_random_feasible_start(panda_design):
    result, _ = panda_design
    start = result.starts[0]
    assert start.feasible
    assert result.criteria.condition_number < 0.1 * start.initial.condition_number
    assert result.criteria.condition_number < 150


def test_modified_series_design_starts_and_ends_at_rest(panda_design, panda):
    traj = panda_design[0].trajectory
    q, dq, ddq = traj.evaluate(np.array([0.0, traj.period_s]))
    assert np.abs(q - traj.offsets_rad).max() <= 1e-12 and np.abs(dq).max() <= 1e-12 and np.abs(ddq).max() <= 1e-12
    plain = trajectory_criteria(panda, traj, samples=10 * SMALL.samples)
    assert plain.condition_number == pytest.approx(panda_design[0].criteria.condition_number, rel=1e-9)


def test_finite_series_design_meets_xu2020_eq_10(iiwa14, iiwa14_config):
    """Eq. (10) (at rest at t = 0) is built into the finite series, and the optimiser's first iterations lower its
    criterion well below the random start's: no converged design needed (10 iterations: d_optimality 122.8 ->
    -10.6, 3 s CPU; 60 iterations: -18.1, 18 s)."""
    limits = design_limits(iiwa14_config, position_margin_rad=0.1, velocity_scale=0.5)
    options = DesignOptions(kind="fourier", harmonics=3, base_frequency_hz=0.1, samples=60, constraint_samples=120,
                            starts=1, seed=2, max_iterations=10, criterion="d_optimality")
    result = design_excitation(iiwa14, limits, options, "iiwa14", progress=lambda _: None)
    assert result.feasible
    traj = result.trajectory
    q, dq, ddq = traj.evaluate(np.zeros(1))
    assert np.abs(q - traj.offsets_rad).max() < 1e-12 and np.abs(dq).max() < 1e-12 and np.abs(ddq).max() < 1e-12
    assert result.criteria.d_optimality < result.starts[0].initial.d_optimality


def test_embedded_design_respects_its_d_bound(panda, panda_config):
    limits = design_limits(panda_config, position_margin_rad=0.1)
    bound = -20.0
    options = DesignOptions(harmonics=3, base_frequency_hz=0.1, samples=60, constraint_samples=120, starts=1, seed=1,
                            max_iterations=60, criterion="embedded", d_bound=bound)
    result = design_excitation(panda, limits, options, "panda", progress=lambda _: None)
    design_grid_d = result.starts[0].final.d_optimality
    assert result.feasible and design_grid_d <= bound + 1e-3


@pytest.mark.parametrize("kind", ["modified_fourier", "fourier"])
def test_design_gradients_match_finite_differences(panda, panda_config, kind):
    limits = design_limits(panda_config, position_margin_rad=0.1)
    options = DesignOptions(kind=kind, harmonics=3, base_frequency_hz=0.1, samples=40, constraint_samples=50,
                            noise_std_nm=(1.0, 2.0, 1.0, 1.0, 0.3, 0.3, 0.3))
    problem = DesignProblem(panda, base_columns(panda, base_parameters(panda)), limits, options, "panda")
    x = _random_start(problem, np.random.default_rng(3))
    direction = np.random.default_rng(4).normal(size=x.shape)
    h = 1e-5
    for name in ("cond", "d_optimality", "hadamard"):
        numeric = (problem.value(name, x + h * direction) - problem.value(name, x - h * direction)) / (2 * h)
        assert problem.gradient(name, x) @ direction == pytest.approx(numeric, rel=1e-3, abs=1e-6), name
    numeric = (problem.aggregated(x + h * direction) - problem.aggregated(x - h * direction)) / (2 * h)
    assert np.abs(problem.aggregated_gradient(x) @ direction - numeric).max() < 1e-4 * (1 + np.abs(numeric).max())


def test_infeasible_design_says_which_constraint_binds(iiwa14, iiwa14_config):
    limits = design_limits(iiwa14_config, floor_z_m=0.5)
    with pytest.raises(DesignError) as err:
        design_excitation(iiwa14, limits, SMALL, "iiwa14", progress=lambda _: None)
    message = str(err.value)
    assert "no feasible excitation trajectory" in message
    assert "floor         lbr_link_1     z 0.1475 m, floor 0.5 m" in message and "below it by 0.3525 m" in message


def test_a_design_whose_data_would_not_identify_the_base_parameters_is_refused(panda_design, monkeypatch):
    """The design's own cond(Yb) decides: the small design passes the default bound and is refused below its cond."""
    result, _ = panda_design
    assert _identifying(result) is result
    monkeypatch.setattr(design_module, "MAX_CONDITION_NUMBER", 0.5 * result.criteria.condition_number)
    with pytest.raises(DesignError, match=r"cond\(Yb\) = .* above .*would not identify the base parameters"):
        _identifying(result)


def test_bad_options_are_rejected(panda, panda_config):
    limits = design_limits(panda_config)
    with pytest.raises(ValueError, match="criterion"):
        design_excitation(panda, limits, DesignOptions(criterion="a_optimal"))
    with pytest.raises(ValueError, match="noise_std_nm"):
        design_excitation(panda, limits, DesignOptions(noise_std_nm=(1.0, 2.0)))


def test_design_shows_a_progress_bar_over_its_starts_on_a_terminal(panda, panda_config, monkeypatch, capsys):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    options = dataclasses.replace(SMALL, starts=2, max_iterations=3)
    design_excitation(panda, design_limits(panda_config, position_margin_rad=0.1), options, "panda",
                      progress=lambda _: None)
    err = capsys.readouterr().err
    assert "design starts:   0%" in err and "0/2 [" in err


def _always_close(where: str, distance_m: float, clearance_m: float = 0.025) -> ConstraintGroup:
    k = np.ones(3)
    return ConstraintGroup("collision", where, "m", distance_m * k, clearance_m * k, (clearance_m - distance_m) * k,
                           (clearance_m - distance_m) * k)


def test_pairs_always_too_close_get_the_fix_that_fits_them():
    """A pair or two built closer than the clearance: the --allow-pair that lets each closer; many pairs or the
    floor: the option that is probably typed wrong (a user's --floor-z 5 and --clearance 20 looped through
    allow-pair advice); a pair already allowed and still too close everywhere: its geometry."""
    (hint,) = always_close_hints([_always_close("fr3_link5–fr3_link7", 0.0227)], 50)
    assert "fr3_link5–fr3_link7 are closer than the clearance (25.0 mm with its margin) in all 50 poses, at most " \
           "22.7 mm apart" in hint and "--allow-pair fr3_link5,fr3_link7" in hint
    many = [_always_close(f"l{i}–l{i + 2}", 0.3, 20.005) for i in range(4)] + [_always_close("l6–floor", -4.3)]
    floor, pairs = always_close_hints(many, 50)
    assert floor == "  l6 within the clearance of the floor in all 50 poses: are --floor-z and --clearance right " \
                    "(metres; the floor in the base frame)?"
    assert pairs == "  4 pairs of links are closer than the clearance (20005.0 mm with its margin) in all 50 poses: " \
                    "is --clearance right (metres)?"
    allowed = frozenset({frozenset(("fr3_link5", "fr3_link7"))})
    (hint,) = always_close_hints([_always_close("fr3_link5–fr3_link7", 0.004, 0.01)], 50, allowed)
    assert "fr3_link5–fr3_link7 are allowed closer than the clearance but come within 10.0 mm" in hint
    assert "--allow-pair" not in hint and "is their collision geometry right?" in hint
