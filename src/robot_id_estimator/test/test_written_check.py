"""The written model files checked as they will be loaded (output.written_check), and a link the URDF gives no mass
of its own that carries a gripper (Kinova's Gen3 lite shape): the fingers, which move, keep their inertials, and the
identified body is written once. References built apart from the tool: pinocchio's RNEA of identified.urdf with the
friction of identified.yaml evaluated here, against the true model's torque on a motion the identification never
saw."""

import pathlib
import re

import numpy as np
import pytest
import yaml
from estimator_synthetic import simulated_recording

from robot_id_estimator.identify_and_write import identify_and_write
from robot_id_estimator.output.written_check import check_payload_files, check_written_model
from robot_id_estimator.payload.exports import load_alone, with_load
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_estimator.settings import EstimatorConfig
from robot_id_lab.synthetic import heavier_links_with_tool, random_motion
from robot_id_lab.written_model import written_torque_nm
from robot_id_model.physical import LinkInertial, link_standard_parameters
from robot_id_model.regressor import regressor
from robot_id_model.robot_config import load_robot_config
from robot_id_model.urdf_inertials import read_link_inertial

JOINTS = tuple(f"fer_joint{j}" for j in range(1, 8))
FINGERS = ("fer_leftfinger", "fer_rightfinger")


def _massless_link7(text: str) -> str:
    """panda_hand.urdf with fer_link7's own inertial at zero mass and the fingers on prismatic joints, as
    franka_description ships them: link 7's body is then the hand fixed to it and the fingers beyond joints outside
    the arm, as Kinova's Gen3 lite ships its last link."""
    start = text.index('<link name="fer_link7">')
    inertial = re.compile(r"<inertial>.*?</inertial>", re.DOTALL).search(text, start)
    massless = '<inertial><mass value="0"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial>'
    text = text[:inertial.start()] + massless + text[inertial.end():]
    for side, axis in (("left", "0 1 0"), ("right", "0 -1 0")):
        text = text.replace(f'<joint name="fer_{side}finger_joint" type="fixed">',
                            f'<joint name="fer_{side}finger_joint" type="prismatic"><axis xyz="{axis}"/>'
                            '<limit effort="100" lower="0.0" upper="0.04" velocity="0.2"/>')
    return text


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Synthetic data of the massless-link-7 Panda with its hand (links 10 % heavier, a 0.5 kg tool, drive friction)
    identified and written; with the true model."""
    folder = tmp_path_factory.mktemp("written")
    urdf = folder / "panda_hand_massless_link7.urdf"
    urdf.write_text(_massless_link7(load_robot_config("panda_hand").urdf_path.read_text()))
    setup = RobotSetup("panda_hand", str(urdf), JOINTS)
    robot = setup.model(("FV", "FC", "FO"))
    truth = heavier_links_with_tool(robot)
    recording = simulated_recording(robot, setup, truth, 2, tau_noise_nm=0.02)
    (folder / "out").mkdir()
    sign_law = EstimatorConfig(coulomb_law="sign")  # the law simulated: no choice (test_coulomb_law's)
    return identify_and_write([recording], setup, sign_law, folder / "out"), robot, truth, urdf


def test_a_massless_link_carrying_fingers_is_written_once_and_predicts_an_unseen_motion(written):
    result, robot, truth, urdf = written
    out = result.report.parent
    assert result.files_hold and result.file_check.difference_percent["identified.urdf"] < 1e-6
    assert result.model_files.mjcf is not None  # MuJoCo loads it: every moving finger keeps a mass
    text = (out / "identified.urdf").read_text()
    for finger in FINGERS:  # they move: their inertials stay the vendor's, and leave the identified body
        assert read_link_inertial(text, finger).mass_kg == read_link_inertial(urdf.read_text(), finger).mass_kg
    assert read_link_inertial(text, "fer_hand").mass_kg == 0.0  # fixed to link 7: its mass is in link 7's body
    t_s = np.arange(0.0, 10.0, 0.01)
    q, dq, ddq = random_motion(robot, 10.0, 5, t_s, 23)
    true_nm = regressor(robot, q, dq, ddq) @ truth
    error = np.sqrt(np.mean((written_torque_nm(out, JOINTS, q, dq, ddq) - true_nm) ** 2, axis=0))
    assert np.all(error < 0.01 * np.sqrt(np.mean(true_nm**2, axis=0))), error


def test_a_urdf_that_counts_a_finger_twice_fails_naming_the_body(written, tmp_path):
    result, *_ = written
    files = result.model_files
    text = files.urdf.read_text()
    start = text.index('<link name="fer_leftfinger">')
    mass = re.compile(r'<mass value="([^"]+)"/>').search(text, start)
    files.urdf.write_text(text[:mass.start(1)] + repr(2 * float(mass.group(1))) + text[mass.end(1):])
    try:
        check = check_written_model(result.result, files)
    finally:
        files.urdf.write_text(text)
    assert not check.passed
    (failure,) = check.failures
    assert failure.startswith("identified.urdf does not reproduce the identified model's torque")
    assert "fer_link7 (mass" in failure and "fer_link6" not in failure


def test_a_yaml_law_that_differs_fails_naming_the_joint(written):
    result, *_ = written
    files = result.model_files
    text = files.yaml.read_text()
    model = yaml.safe_load(text)
    model["friction"]["fer_joint3"]["coulomb_law"] = {"family": "tanh", "velocity_rad_s": 0.05}
    files.yaml.write_text(yaml.safe_dump(model, sort_keys=False))
    try:
        check = check_written_model(result.result, files)
    finally:
        files.yaml.write_text(text)
    (failure,) = check.failures
    assert failure.startswith("identified.yaml does not reproduce") and "fer_joint3" in failure
    assert "fer_joint2" not in failure


def test_payload_files_that_lose_the_load_fail_naming_the_file(tmp_path):
    """The arm with a 1.5 kg load on the iiwa14's flange as written (with_load, load_alone) passes; the same with the
    load's mass changed in arm_with_payload.urdf, or payload.urdf's CoM moved, fails naming that file."""
    config = load_robot_config("iiwa14")
    arm = pathlib.Path(config.urdf_path).read_text()
    load = LinkInertial(1.5, np.array([0.03, -0.02, 0.07]), np.diag([4e-3, 5e-3, 3e-3]))
    frame = config.flange_frame
    attached, alone = tmp_path / "arm_with_payload.urdf", tmp_path / "payload.urdf"

    def check():
        return check_payload_files(arm, attached, alone, None, link_standard_parameters(load), frame,
                                   config.joint_names, config.gravity_m_s2)

    attached.write_text(with_load(arm, load, frame))
    alone.write_text(load_alone(load, frame))
    assert check().passed
    attached.write_text(with_load(arm, LinkInertial(1.6, load.com_m, load.inertia_com_kg_m2), frame))
    (failure,) = check().failures
    assert failure.startswith("arm_with_payload.urdf does not reproduce the identified model's torque")
    attached.write_text(with_load(arm, load, frame))
    alone.write_text(load_alone(LinkInertial(1.5, load.com_m + 0.01, load.inertia_com_kg_m2), frame))
    (failure,) = check().failures
    assert failure.startswith("payload.urdf does not hold the identified load")
