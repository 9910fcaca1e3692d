"""Payload identification against the simulator (issue 29): the MuJoCo Panda, perturbed from its URDF, follows the
shipped payload excitation for 4 periods with a 1.5 kg load 10 cm off the flange axis and without it. The three loads
and the three arm models are benchmarks/payload.py's; here the one the issue names first, by the baseline method."""

import pytest

from robot_id_bringup.payload_check import LOADS, load_errors, load_runs
from robot_id_estimator.payload.estimate import PayloadBounds, estimate_payload
from robot_id_estimator.payload.identify_payload import baseline_arm
from robot_id_estimator.payload.samples import payload_samples, urdf_arm
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_estimator.settings import EstimatorConfig
from robot_id_excitation.trajectory_file import load_trajectory
from robot_id_model.robot_config import load_robot_config


@pytest.fixture(scope="module")
def runs():
    config = load_robot_config("panda")
    return RobotSetup.from_config(config), load_runs("panda", load_trajectory("panda_payload"), LOADS["1.5 kg"])


def _estimate(setup, model, runs):
    samples = payload_samples(model, setup.flange_frame, [runs.loaded], EstimatorConfig().processing,
                              setup.torque_filter_time_constant_s)
    return estimate_payload(samples, PayloadBounds((0.0, setup.rated_payload_kg), 0.3))


def test_the_baseline_method_finds_the_simulated_load(runs):
    setup, load_run = runs
    estimate = _estimate(setup, baseline_arm([load_run.bare], setup, EstimatorConfig()), load_run)
    errors = load_errors(estimate, LOADS["1.5 kg"])
    # measured (benchmarks/payload.py): mass +0.02 %, CoM 0.1 mm, moments +14, +5, +3 %
    assert abs(errors.mass_percent) < 2.0 and errors.com_mm < 5.0, errors
    assert all(abs(e) < 20.0 for e in errors.moments_percent), errors
    assert estimate.held_out_rms_nm.sum() < 0.5 * estimate.load_torque_rms_nm.sum()


def test_against_the_urdfs_arm_the_arm_model_error_goes_into_the_load(runs):
    setup, load_run = runs
    errors = load_errors(_estimate(setup, urdf_arm(setup), load_run), LOADS["1.5 kg"])
    assert errors.com_mm > 10.0, errors  # measured: 118 mm, mass -32 %: the perturbed arm's error
