"""Equations of a joint that moves slower than min_speed_rad_s are left out: sticking at a reversal, its friction is
anything up to the breakaway torque, which biased every parameter when those samples were fitted."""

import dataclasses

import numpy as np
import pytest
from estimator_synthetic import iiwa14_setup, periodic_recording

from robot_id_estimator.pipeline import identify
from robot_id_estimator.settings import EstimatorConfig, PhysicalConfig
from robot_id_lab.synthetic import random_motion, urdf_with_friction
from robot_id_model.regressor import regressor

PERIOD_S, RATE_HZ, PERIODS = 10.0, 200.0, 4
STICK_NM, STICK_RAD_S = 1.0, 0.05
"""Static friction adds up to STICK_NM against the coming motion while a joint is slower than STICK_RAD_S, fading
to nothing at that speed (a torque the robot's filters pass, as the simulated iiwa's sticking is)."""


@pytest.fixture(scope="module")
def runs():
    """The same periodic excitation with and without sticking (same noise), and a motion to compare them on."""
    setup = iiwa14_setup()
    robot = setup.model(("FV", "FC", "FO"))
    pi = urdf_with_friction(robot)
    t = np.arange(round(PERIOD_S * RATE_HZ)) / RATE_HZ
    q, dq, ddq = random_motion(robot, PERIOD_S, 5, t, seed=0)
    clean = periodic_recording(robot, pi, q, dq, ddq, PERIOD_S, PERIODS, 0.0, 0.05, 1e-6, 1, 5)
    fade = np.clip(1.0 - np.abs(dq) / STICK_RAD_S, 0.0, 1.0) ** 2
    stick = np.tile(-STICK_NM * fade * np.sign(ddq), (PERIODS, 1))
    assert 0.01 < np.mean(stick != 0.0) < 0.1  # a few per cent of the samples, around the reversals
    sticking = dataclasses.replace(clean, tau_nm=clean.tau_nm + stick)
    y = regressor(robot, *random_motion(robot, PERIOD_S, 5, t, seed=7))
    return setup, clean, sticking, y, y @ pi


def _bias_percent(runs, min_speed_rad_s: float) -> tuple[np.ndarray, tuple[str, ...]]:
    """Per joint, how far the sticking moved the base parameters' torque on the other motion [% of its RMS]; the
    identification's notes."""
    setup, clean, sticking, y, tau = runs
    config = EstimatorConfig(min_speed_rad_s=min_speed_rad_s, physical=PhysicalConfig(method="none"))
    with_stick, without = (identify([r], setup, config) for r in (sticking, clean))
    difference = (y[..., with_stick.columns] @ with_stick.parameter_values("base")
                  - y[..., without.columns] @ without.parameter_values("base"))
    return 100.0 * np.sqrt(np.mean(difference**2, axis=0) / np.mean(tau**2, axis=0)), with_stick.metrics.notes


def test_leaving_out_the_sticking_samples_removes_their_bias(runs):
    kept, _ = _bias_percent(runs, 0.0)
    left_out, notes = _bias_percent(runs, STICK_RAD_S)
    assert kept.max() > 2.5, kept  # fitted, the static friction moved the model by up to 4 %
    assert np.all(left_out < 1.0) and left_out.max() < kept.max() / 3.0, (kept, left_out)
    note = next(n for n in notes if "equations left out" in n)
    assert f"slower than {STICK_RAD_S:g} rad/s (static friction)" in note


def test_by_default_equations_slower_than_2_centiradians_per_second_are_left_out():
    assert EstimatorConfig().min_speed_rad_s == 0.02
    with pytest.raises(ValueError, match=r"min_speed_rad_s must be 0 or more, got -0\.1"):
        EstimatorConfig(min_speed_rad_s=-0.1)
