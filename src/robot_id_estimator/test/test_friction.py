"""Stribeck friction (Luo et al. 2024, eq. 7) from forward/backward sweeps (eq. 15), alone and in the pipeline."""

import dataclasses

import numpy as np
import pytest
from estimator_synthetic import (
    STRIBECK_TRUE,
    iiwa14_setup,
    rigid_body_torque,
    simulated_recording,
    sweep_motion,
    sweep_recording,
)

from robot_id_estimator.friction import fit_stribeck, mirrored_friction, stribeck_torque
from robot_id_estimator.friction_sweeps import friction_sweeps
from robot_id_estimator.pipeline import identify
from robot_id_estimator.processing import ProcessingConfig, first_order_lowpass
from robot_id_estimator.synthetic import random_motion, urdf_with_friction
from robot_id_estimator.validation_run import validate
from robot_id_model import regressor

SPEEDS = np.array([0.005, 0.01, 0.02, 0.04, 0.08, 0.15, 0.3, 0.6, 1.0, 1.5])
"""Sweep speeds [rad/s], as Luo et al. 2024 from very slow to beyond the excitation's fastest joint speed."""


@pytest.fixture(scope="module")
def arm():
    setup = iiwa14_setup()
    robot = setup.model(("FV", "FC", "FO"))
    return setup, robot, urdf_with_friction(robot)


def test_stribeck_torque_is_eq_7():
    fv1, fv2, fv3, fs, fs1, fc, fc1 = STRIBECK_TRUE
    v = 0.03
    expected = fv1 * v + fv2 * v**2 + fv3 * v**3 + fs * np.exp(-((v / fs1) ** 2)) + fc * (1 - np.exp(-((v / fc1) ** 2)))
    assert stribeck_torque(np.array([v]), STRIBECK_TRUE)[0] == pytest.approx(expected, rel=1e-12)
    assert stribeck_torque(np.array([-v]), STRIBECK_TRUE)[0] == pytest.approx(-expected, rel=1e-12)
    assert stribeck_torque(np.array([0.0]), STRIBECK_TRUE)[0] == 0.0
    per_joint = np.tile(STRIBECK_TRUE, (2, 1))
    per_joint[1, [0, 1, 2, 3, 5]] *= 2.0  # the torque coefficients, not the velocity scales fs1, fc1
    np.testing.assert_allclose(stribeck_torque(np.full((3, 2), v), per_joint), [[expected, 2 * expected]] * 3)


def test_mirrored_passes_cancel_gravity_and_inertia_exactly(arm):
    _setup, robot, pi = arm
    for joint in (1, 3):  # joint 2 carries about 50 Nm of gravity here
        _t, q, dq, ddq = sweep_motion(joint, SPEEDS)
        tau = rigid_body_torque(robot, pi, q, dq, ddq) + stribeck_torque(dq, np.tile(STRIBECK_TRUE, (7, 1)))
        assert np.ptp(tau[:, joint]) > 1.0
        speed, friction = mirrored_friction(q[:, joint], dq[:, joint], tau[:, joint])
        assert len(speed) > 3000 and set(np.round(speed, 6)) == set(SPEEDS)
        np.testing.assert_allclose(friction, stribeck_torque(speed, STRIBECK_TRUE), atol=1e-9)
        fit = fit_stribeck(speed, friction)
        np.testing.assert_allclose(fit.coefficients, STRIBECK_TRUE, rtol=1e-6)


def test_levenberg_marquardt_recovers_the_friction_curve_from_noisy_filtered_sweeps(arm):
    _setup, robot, pi = arm
    coefficients, rms, notes, ranges = friction_sweeps(
        [sweep_recording(robot, pi, joint, SPEEDS, tau_noise_nm=0.02, seed=joint) for joint in (1, 6)],
        robot.joint_names, ProcessingConfig(),
    )
    speeds = np.geomspace(SPEEDS[0], SPEEDS[-1], 200)
    curve = stribeck_torque(speeds, STRIBECK_TRUE)
    for joint in (1, 6):
        _fv1, _fv2, _fv3, fs, fs1, fc, fc1 = coefficients[joint]
        assert fs == pytest.approx(STRIBECK_TRUE[3], rel=0.02)
        assert fs1 == pytest.approx(STRIBECK_TRUE[4], rel=0.05)
        assert fc == pytest.approx(STRIBECK_TRUE[5], rel=0.1)
        assert fc1 == pytest.approx(STRIBECK_TRUE[6], rel=0.05)
        assert np.max(np.abs(stribeck_torque(speeds, coefficients[joint]) - curve)) < 0.015 * curve.max()
        assert rms[joint] < 0.01
        assert ranges[joint, 0] < 0.006 and ranges[joint, 1] > 1.4
    assert np.isnan(coefficients[[0, 2, 3, 4, 5]]).all()
    assert any("lbr_A1 has 0 mirrored points" in note for note in notes)


def test_fit_refuses_too_few_or_single_speed_points():
    with pytest.raises(ValueError, match="at least 12"):
        fit_stribeck(np.full(5, 0.1), np.full(5, 0.5))
    with pytest.raises(ValueError, match="sweep several speeds"):
        fit_stribeck(np.full(50, 0.1), np.full(50, 0.5))


def test_stribeck_model_from_sweeps_improves_predictions(arm):
    """Excitation data whose friction is Stribeck: with the sweeps the model predicts the torque of another
    trajectory several times better than with linear viscous + Coulomb friction."""
    setup, robot, pi = arm
    setup = dataclasses.replace(setup, torque_filter_time_constant_s=0.0)
    friction = np.tile(STRIBECK_TRUE, (7, 1))

    def recording(seed: int, n_periods: int, noise: float):
        plain = simulated_recording(robot, setup, pi, n_periods, seed=seed, tau_noise_nm=0.0, q_noise_rad=0.0)
        t = plain.t_s[: round(10.0 * 200.0)]
        q, dq, ddq = random_motion(robot, 10.0, 5, t, seed)
        tau = np.tile(rigid_body_torque(robot, pi, q, dq, ddq) + stribeck_torque(dq, friction), (n_periods, 1))
        tau += noise * np.random.default_rng(seed).normal(size=tau.shape)
        return dataclasses.replace(plain, tau_nm=first_order_lowpass(tau, 0.005, 0.0))

    sweeps = [sweep_recording(robot, pi, joint, SPEEDS, seed=joint) for joint in range(7)]
    ident = recording(0, 6, 0.05)
    linear = identify([ident], setup)
    stribeck = identify([ident], setup, sweeps=sweeps)
    assert stribeck.friction.stribeck is not None and not np.isnan(stribeck.friction.stribeck).any()
    assert {"FV1", "FC7"} & set(stribeck.base.names)
    assert np.isnan(stribeck.base.values[stribeck.base.names.index("FV1")])
    assert any("replaced by the Stribeck friction" in note for note in stribeck.metrics.notes)
    check = recording(7, 2, 0.0)
    rms_linear = validate(linear, [check]).rms_nm["base"]
    rms_stribeck = validate(stribeck, [check]).rms_nm["base"]
    assert np.all(rms_stribeck < 0.5 * rms_linear), (rms_stribeck, rms_linear)
    y = regressor(robot, *random_motion(robot, 10.0, 5, np.arange(0, 10, 0.005), 7))
    assert np.all(rms_stribeck < 0.03 * np.sqrt(np.mean((y @ pi) ** 2, axis=0)))
