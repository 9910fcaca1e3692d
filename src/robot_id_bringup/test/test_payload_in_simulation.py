"""Payload identification against the simulator (issue 29): the MuJoCo Panda, perturbed from its URDF, follows the
shipped payload excitation for 4 periods with a 1.5 kg load 10 cm off the flange axis and without it. The three loads
and the three arm models are benchmarks/payload.py's; here the one the issue names first, by the baseline method."""

import numpy as np
import pytest

from robot_id_bringup.payload_check import LOADS, load_errors, load_runs, prediction_errors
from robot_id_estimator.payload.estimate import PayloadBounds, estimate_payload
from robot_id_estimator.payload.identify_payload import baseline_arm, check_failures
from robot_id_estimator.payload.samples import ArmModel, payload_samples, urdf_arm
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_estimator.settings import EstimatorConfig
from robot_id_excitation.trajectory_file import load_trajectory
from robot_id_model.robot_config import load_robot_config
from robot_id_sim.true_dynamics import TRUTH_FRICTION


@pytest.fixture(scope="module")
def runs():
    config = load_robot_config("panda")
    return RobotSetup.from_config(config), load_runs("panda", load_trajectory("panda_payload"), LOADS["1.5 kg"])


def _estimate(setup, model, runs):
    samples = payload_samples(model, setup.flange_frame, [runs.loaded], EstimatorConfig().processing,
                              setup.torque_filter_time_constant_s)
    return estimate_payload(samples, PayloadBounds((0.0, setup.rated_payload_kg), 0.3))


@pytest.fixture(scope="module")
def by_baseline(runs):
    """The load identified by the baseline method."""
    setup, load_run = runs
    return _estimate(setup, baseline_arm([load_run.bare], setup, EstimatorConfig()), load_run)


def test_the_baseline_method_finds_the_simulated_load(by_baseline):
    estimate = by_baseline
    errors = load_errors(estimate, LOADS["1.5 kg"])
    # measured (benchmarks/payload.py): mass +0.01 %, CoM 0.1 mm, moments -0.8, -8.9, +2.5 %, all named
    # undetermined by four periods (RSDs 12, 7.0, 6.7 %: over MOMENT_RSD_PERCENT)
    assert abs(errors.mass_percent) < 2.0 and errors.com_mm < 5.0, errors
    assert all(abs(e) < 20.0 or k in errors.undetermined for k, e in enumerate(errors.moments_percent)), errors
    assert all(abs(e) < 10.0 for e in errors.moments_percent), errors  # named or not, none far off
    assert check_failures(estimate, None, None, load_robot_config("panda").joint_names) == ()
    # the box's moments 3.05, 4.06, 4.61 g m² lie within 1.6 and 2.5 standard deviations of each other here: its
    # principal axes, two of them found 18 deg off the box's, are named not determined
    truth = np.linalg.eigh(LOADS["1.5 kg"].inertia_com_kg_m2)[1]
    cos = np.abs(np.sum(truth * estimate.axes.rotation, axis=0))  # each axis as a line
    assert np.rad2deg(np.arccos(min(cos.min(), 1.0))) > 10.0 and estimate.axes.determined == (False, False, False)


def test_the_arm_with_the_identified_load_predicts_an_unseen_motion_as_well_as_the_arm_alone(runs, by_baseline):
    """The load found by the baseline method, put on the true arm's rigid bodies (its Stribeck friction, outside the
    model, the arm model's error): on truth_check's random motion, which neither identification saw, the arm with the
    load predicts the loaded arm as well as the arm alone predicts the arm without it (within 5 %)."""
    _, load_run = runs
    robot = load_robot_config("panda").load_model(TRUTH_FRICTION)
    true_arm = ArmModel(robot, np.arange(robot.n_params), load_run.arm.standard_parameters(robot), "the true arm")
    errors = prediction_errors("panda", true_arm, by_baseline.values, load_run.arm, LOADS["1.5 kg"])
    # measured: sums of the joints' RMS 0.144 against 0.141 Nm
    assert errors.arm_and_load_nm.sum() < 1.05 * errors.arm_only_nm.sum(), errors


def test_against_the_urdfs_arm_the_arm_model_error_goes_into_the_load(runs):
    setup, load_run = runs
    errors = load_errors(_estimate(setup, urdf_arm(setup), load_run), LOADS["1.5 kg"])
    assert errors.com_mm > 10.0, errors  # measured: 29 mm, mass +3.2 %: the perturbed arm's error
