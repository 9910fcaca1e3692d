"""The friction sweep's law against the excitation's own (friction.sweep_choice): a swept joint keeps its sweep's
Stribeck fit unless the Coulomb law chosen from the excitation predicts held-out data clearly better, as when the
joint's friction during the excitation is a law eq. (7) cannot follow."""

import dataclasses

import numpy as np
import pytest
from estimator_synthetic import STRIBECK_TRUE, iiwa14_setup, rigid_body_torque, simulated_recording, sweep_recording

from robot_id_estimator.pipeline import identify
from robot_id_estimator.settings import EstimatorConfig, PhysicalConfig
from robot_id_estimator.stribeck_law import stribeck_torque
from robot_id_estimator.validate import validate
from robot_id_lab.synthetic import random_motion, urdf_with_friction
from robot_id_model.torque_filter import first_order_lowpass

SPEEDS = np.array([0.005, 0.01, 0.02, 0.04, 0.08, 0.15, 0.3, 0.6, 1.0, 1.5])
SIGMOID_JOINT = 1
"""lbr_A2: during the excitation its friction is Gaz et al.'s off-centre sigmoid, not the sweep's eq. (7)"""
CONFIG = EstimatorConfig(physical=PhysicalConfig(method="none"))


@pytest.fixture(scope="module")
def arm():
    setup = dataclasses.replace(iiwa14_setup(), torque_filter_time_constant_s=0.0)
    robot = setup.model(("FV", "FC", "FO"))
    return setup, robot, urdf_with_friction(robot)


def _friction(dq: np.ndarray) -> np.ndarray:
    out = stribeck_torque(dq, np.tile(STRIBECK_TRUE, (7, 1)))
    v, shift, level = 0.05, 0.012, 0.8
    out[:, SIGMOID_JOINT] = 0.3 * dq[:, SIGMOID_JOINT] + level * (np.tanh((dq[:, SIGMOID_JOINT] + shift) / v)
                                                                  - np.tanh(shift / v))
    return out


def _recording(arm, seed: int, n_periods: int, noise_nm: float):
    setup, robot, pi = arm
    plain = simulated_recording(robot, setup, pi, n_periods, seed=seed, tau_noise_nm=0.0, q_noise_rad=0.0)
    t = plain.t_s[: round(10.0 * 200.0)]
    q, dq, ddq = random_motion(robot, 10.0, 5, t, seed)
    tau = np.tile(rigid_body_torque(robot, pi, q, dq, ddq) + _friction(dq), (n_periods, 1))
    tau += noise_nm * np.random.default_rng(seed).normal(size=tau.shape)
    return dataclasses.replace(plain, tau_nm=first_order_lowpass(tau, 0.005, 0.0))


def test_a_joint_whose_sweep_does_not_describe_its_friction_keeps_the_excitations_law(arm):
    setup, robot, pi = arm
    sweeps = [sweep_recording(robot, pi, joint, SPEEDS, seed=joint) for joint in range(7)]
    data = _recording(arm, 0, 6, 0.05)
    result = identify([data], setup, CONFIG, sweeps=sweeps)
    swept = ~np.isnan(result.friction.stribeck).any(axis=1)
    assert not swept[SIGMOID_JOINT] and swept.sum() == 6, swept
    assert any(note.startswith("lbr_A2: the friction sweep's Stribeck fit is not used") for note in
               result.metrics.notes)
    assert result.friction.laws()[SIGMOID_JOINT].family in ("sigmoid", "tanh")
    forced = identify([data], setup, dataclasses.replace(CONFIG, coulomb_law="sign"), sweeps=sweeps)
    assert not np.isnan(forced.friction.stribeck).any()  # coulomb_law sign: the sweep everywhere, as before
    check = [_recording(arm, 7, 2, 0.0)]
    chosen, everywhere = (validate(r, check).rms_nm["base"] for r in (result, forced))
    assert chosen[SIGMOID_JOINT] < 0.5 * everywhere[SIGMOID_JOINT], (chosen, everywhere)
    others = np.arange(7) != SIGMOID_JOINT
    assert np.all(chosen[others] < 1.1 * everywhere[others] + 1e-3), (chosen, everywhere)
