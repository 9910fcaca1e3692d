"""The robot's torque filter found from the data, not assumed (processing.torque_filter): recordings made through the
0.04 s first-order filter of a newer lbr_fri_ros2_stack's hardware defaults and through 0.1 s, identified with the
shipped iiwa14 config (16 ms), come out with the data's filter, said in a warning, and identified.urdf predicts an
unseen motion within 1 % (pinocchio from the written file, in the test); data through the configured filter keep it.
The Coulomb law is held at the one simulated (sign): its choice is test_coulomb_law's."""

import dataclasses

import numpy as np
import pytest
from estimator_synthetic import iiwa14_setup, simulated_recording

from robot_id_estimator.identify_and_write import identify_and_write
from robot_id_estimator.processing.input_checks import with_stack_torque_filter
from robot_id_estimator.processing.samples import process
from robot_id_estimator.processing.torque_filter import found_time_constant
from robot_id_estimator.recordings.recording import DataError
from robot_id_estimator.settings import EstimatorConfig, ProcessingConfig
from robot_id_lab.synthetic import heavier_links_with_tool, random_motion
from robot_id_lab.written_model import written_torque_nm
from robot_id_model.base_parameters import base_parameters
from robot_id_model.regressor import regressor
from robot_id_model.stack_hardware import StackSensors

SETUP = iiwa14_setup()


@pytest.mark.parametrize("robot_filter_s", [0.04, 0.1])
def test_a_filter_other_than_the_configured_is_found_used_and_said(robot_filter_s, tmp_path):
    robot = SETUP.model(("FV", "FC", "FO"))
    truth = heavier_links_with_tool(robot)
    robot_setup = dataclasses.replace(SETUP, torque_filter_time_constant_s=robot_filter_s)
    recording = simulated_recording(robot, robot_setup, truth, 2, tau_noise_nm=0.05)
    written = identify_and_write([recording], SETUP, EstimatorConfig(coulomb_law="sign"), tmp_path)
    found_s = written.result.setup.torque_filter_time_constant_s
    assert found_s == pytest.approx(robot_filter_s, rel=0.05)
    (said,) = [w for w in written.result.warnings if "filters its torque" in w]
    assert said.startswith(f"the robot filters its torque with a time constant of about {1000 * found_s:.0f} ms, "
                           "not the configured 16 ms: identified with")
    assert written.files_hold and (tmp_path / "identified.urdf").is_file()
    t_s = np.arange(0.0, 10.0, 0.01)
    q, dq, ddq = random_motion(robot, 10.0, 5, t_s, 23)
    true_nm = regressor(robot, q, dq, ddq) @ truth
    error = np.sqrt(np.mean((written_torque_nm(tmp_path, robot.joint_names, q, dq, ddq) - true_nm) ** 2, axis=0))
    assert np.all(error < 0.01 * np.sqrt(np.mean(true_nm**2, axis=0))), error


def test_data_through_the_configured_filter_keep_it():
    robot = SETUP.model(("FV", "FC", "FO"))
    recording = simulated_recording(robot, SETUP, heavier_links_with_tool(robot), 2, tau_noise_nm=0.05)
    fit = found_time_constant(robot, base_parameters(robot).independent, ProcessingConfig(),
                              SETUP.torque_filter_time_constant_s, [process(recording)])
    assert not fit.replaces and fit.found_s == pytest.approx(0.016, rel=0.1)


def test_the_filter_the_robots_stack_announces_is_used_and_said(tmp_path):
    """Bags recorded through lbr_fri_ros2_stack hold its robot_description: its measured_torque_tau replaces the
    config's 16 ms before anything is fitted, and the data agree with it (no filter found from the data)."""
    robot = SETUP.model(("FV", "FC", "FO"))
    truth = heavier_links_with_tool(robot)
    recording = simulated_recording(robot, dataclasses.replace(SETUP, torque_filter_time_constant_s=0.04), truth, 2,
                                    tau_noise_nm=0.05)
    announced = dataclasses.replace(recording, stack=StackSensors(0.04, False, "measured_torque_tau: 0.04"))
    written = identify_and_write([announced], SETUP, EstimatorConfig(coulomb_law="sign"), tmp_path)
    assert written.result.setup.torque_filter_time_constant_s == 0.04
    assert written.result.warnings[0] == (
        "the robot's stack filters its torque with a time constant of 40 ms (measured_torque_tau: 0.04 in its "
        "robot_description), not the configured 16 ms: identified with the stack's; set "
        "torque_filter_time_constant_s: 0.04 in the robot config")
    assert not [w for w in written.result.warnings if "filters its torque with a time constant of about" in w]
    assert written.exit_code == 0


def test_positions_a_stack_published_open_loop_are_refused_naming_the_setting():
    recording = simulated_recording(SETUP.model(("FV", "FC", "FO")), SETUP,
                                    heavier_links_with_tool(SETUP.model(("FV", "FC", "FO"))), 1)
    announced = dataclasses.replace(recording, stack=StackSensors(0.04, True, "measured_torque_tau: 0.04"))
    with pytest.raises(DataError) as refused:
        with_stack_torque_filter([announced], SETUP)
    assert ("ran open loop (open_loop: true in its robot_description): its joint positions are the commands, not "
            "measurements; set open_loop: false (lbr_fri_ros2_stack: lbr_system_config.yaml) and record again"
            ) in str(refused.value)
