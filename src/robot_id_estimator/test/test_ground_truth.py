"""Ground truth: simulated iiwa14 runs from known parameters, identified through the whole pipeline up to
the physical stage (its ground truth: test_physical_pipeline.py)."""

import dataclasses

import numpy as np
import pytest
from estimator_synthetic import SIGN_LAW, iiwa14_setup, simulated_recording

from robot_id_estimator.pipeline import identify
from robot_id_estimator.validate import validate
from robot_id_lab.synthetic import random_motion, urdf_with_friction
from robot_id_model import base_parameters, regressor

TAU_NOISE_NM = 0.1
"""Torque noise of every joint [Nm]; positions carry 1e-5 rad."""


@pytest.fixture(scope="module")
def arm():
    setup = iiwa14_setup()
    robot = setup.model(("FV", "FC", "FO"))
    return setup, robot, urdf_with_friction(robot)


@pytest.fixture(scope="module")
def identified(arm):
    """Identifications from 2 and from 10 periods of the same excitation (different noise)."""
    setup, robot, pi = arm
    return {m: identify([simulated_recording(robot, setup, pi, m, tau_noise_nm=TAU_NOISE_NM)], setup, SIGN_LAW)
            for m in (2, 10)}


def test_prediction_on_a_different_noise_free_trajectory_is_within_1_percent(arm, identified):
    _setup, robot, pi = arm
    result = identified[10]
    assert result.metrics.n_periods == (10,)
    assert not result.unidentified
    assert result.metrics.condition_number < 500.0  # a well-exciting trajectory (Xu et al. 2020 reaches 156)
    t = np.arange(0.0, 10.0, 0.005)
    y = regressor(robot, *random_motion(robot, 10.0, 5, t, seed=7))
    tau = y @ pi
    torque_rms = np.sqrt(np.mean(tau**2, axis=0))
    for parameter_set in ("base", "essential"):
        error_rms = np.sqrt(np.mean((y[..., result.columns] @ result.parameter_values(parameter_set) - tau) ** 2,
                                    axis=0))
        assert np.all(error_rms < 0.01 * torque_rms), (parameter_set, error_rms / torque_rms)


def test_base_parameters_match_the_true_ones_within_their_uncertainty(arm, identified):
    _setup, robot, pi = arm
    result = identified[10]
    beta = base_parameters(robot).values(pi)
    # eq. (7) sees the 6 Hz-filtered residual of 200 Hz data as white: σ is about 4x larger than it says
    factor = result.metrics.rsd_filter_factor
    assert 3.5 < factor < 4.5
    std = factor * result.base.rsd_percent / 100.0 * np.abs(result.base.values)
    z = (result.base.values - beta) / std
    assert np.sqrt(np.mean(z**2)) < 2.0
    assert np.all(np.abs(z) < 5.0)


def test_friction_and_noise_are_recovered(arm, identified):
    _setup, _robot, _pi = arm
    result = identified[10]
    f = result.friction
    scale = np.linspace(1.0, 0.4, 7)
    np.testing.assert_allclose(f.viscous_nm_s_rad, 0.4 * scale, rtol=0.03)
    np.testing.assert_allclose(f.coulomb_nm, 0.6 * scale, rtol=0.03)
    np.testing.assert_allclose(f.offset_nm, -0.15 * scale, rtol=0.05)
    noise = np.asarray(result.metrics.noise_var_nm2[0])
    np.testing.assert_allclose(noise, TAU_NOISE_NM**2, rtol=0.1)


def test_rsd_shrinks_as_periods_are_added(arm, identified):
    _setup, robot, pi = arm
    rsd2, rsd10 = identified[2].base.rsd_percent, identified[10].base.rsd_percent
    assert np.median(rsd10) < 0.6 * np.median(rsd2)  # averaging M periods: σ/√M, here √5 ≈ 2.2
    # parameters whose true value is not near zero (there the RSD is the ratio of two noises)
    clear = np.abs(base_parameters(robot).values(pi)) > 0.01
    assert np.all(rsd10[clear] < rsd2[clear])


def test_essential_parameters_drop_only_small_poorly_identified_ones(identified):
    result = identified[10]
    assert 0 < len(result.eliminated) < len(result.base.names) // 2
    index = {name: i for i, name in enumerate(result.base.names)}
    for name in result.eliminated:
        assert abs(result.base.values[index[name]]) < 0.01
    kept = result.essential
    assert not np.any((np.abs(kept.values) < 0.01) & (kept.rsd_percent > 40.0))
    assert set(kept.names) | set(result.eliminated) == set(result.base.names)


def test_validate_on_a_noise_free_recording(arm, identified):
    setup, robot, pi = arm
    recording = simulated_recording(robot, setup, pi, 2, seed=11, tau_noise_nm=0.0, q_noise_rad=0.0)
    validation = validate(identified[10], [recording])
    assert validation.joint_names == robot.joint_names
    for parameter_set in ("base", "essential"):
        assert np.all(validation.rms_nm[parameter_set] < 0.01 * validation.torque_rms_nm)
        assert np.all(validation.correlation[parameter_set] > 0.999)
        r_max = validation.observer_max_nm[parameter_set]
        # the observer residual is the model error low-passed at K_O: a few times the RMS error at most
        assert np.all(r_max < 10.0 * validation.rms_nm[parameter_set] + 1e-3)
        np.testing.assert_allclose(validation.collision_threshold_nm[parameter_set], 1.2 * r_max)


def test_a_joint_that_does_not_move_is_named_and_its_parameters_excluded(arm):
    setup, robot, pi = arm
    recording = simulated_recording(robot, setup, pi, 4, tau_noise_nm=TAU_NOISE_NM, still=(6,))
    result = identify([recording], setup, SIGN_LAW)
    assert result.unidentified
    for name, reason in result.unidentified.items():
        assert name.endswith(("7", "7R")), name
        assert "joint 7 does not move" in reason and "not identifiable" in reason
        assert np.isnan(result.base.values[result.base.names.index(name)])
        assert name not in result.essential.names
    assert "FV7" in result.unidentified and "FC7" in result.unidentified
    identified = np.isfinite(result.base.values)
    assert identified.sum() == len(result.base.names) - len(result.unidentified)
    assert np.all(np.isfinite(result.base.rsd_percent[identified]))
    # what remains still predicts motions of the other joints
    t = np.arange(0.0, 10.0, 0.005)
    y = regressor(robot, *random_motion(robot, 10.0, 5, t, seed=7, still=(6,)))
    tau = y @ pi
    error = np.sqrt(np.mean((y[..., result.columns] @ result.parameter_values("base") - tau) ** 2, axis=0))
    assert np.all(error[:6] < 0.01 * np.sqrt(np.mean(tau[:, :6] ** 2, axis=0)))


def test_several_recordings_periodic_and_not_are_identified_together(arm):
    setup, robot, pi = arm
    periodic = simulated_recording(robot, setup, pi, 6, tau_noise_nm=TAU_NOISE_NM)
    # 1.5 periods of another excitation and no period given: processed as non-periodic data
    other = simulated_recording(robot, setup, pi, 2, seed=3, tau_noise_nm=0.3, noise_seed=5)
    k = round(1.5 * len(other.t_s) / 2)
    other = dataclasses.replace(other, t_s=other.t_s[:k], q_rad=other.q_rad[:k], tau_nm=other.tau_nm[:k],
                                period_s=None, harmonics=None)
    result = identify([periodic, other], setup, SIGN_LAW)
    assert result.metrics.n_periods == (6, 0)
    assert result.metrics.noise_var_nm2[1] is None
    weights = np.array(result.metrics.joint_weights)
    assert np.all(weights[0] > 5.0 * weights[1])  # 6 averaged periods of 0.1 Nm noise against 0.3 Nm raw
    t = np.arange(0.0, 10.0, 0.005)
    y = regressor(robot, *random_motion(robot, 10.0, 5, t, seed=7))
    tau = y @ pi
    error = np.sqrt(np.mean((y[..., result.columns] @ result.parameter_values("base") - tau) ** 2, axis=0))
    assert np.all(error < 0.01 * np.sqrt(np.mean(tau**2, axis=0)))
