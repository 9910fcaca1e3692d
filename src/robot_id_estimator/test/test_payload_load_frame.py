"""The load's exports in the frame each robot takes a load in: identified on the config's flange_frame (the
Franka Hand's TCP, a tool's TCP), written as Franka's setLoad and KUKA's load data in the flange. The reference is
built differently: the true load written into the URDF as a fixed link on the flange (pinocchio's parser lumps it
into link 7's body), the torques by pinocchio's RNEA of that URDF, and the values each format holds rebuilt in the
flange frame in the test (Franka: column-major inertia; KUKA: Rz(A)·Ry(B)·Rx(C) with JX JY JZ)."""

import dataclasses
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest
import yaml
from estimator_synthetic import iiwa14_setup, periodic_recording
from scipy.spatial.transform import Rotation

from robot_id_estimator.payload.estimate import PayloadBounds, estimate_payload
from robot_id_estimator.payload.exports import franka_set_load
from robot_id_estimator.payload.identify_payload import _robot_exports
from robot_id_estimator.payload.load_frame import exported_load
from robot_id_estimator.payload.samples import payload_samples, urdf_arm
from robot_id_estimator.recordings.recording import Recording
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_estimator.settings import ProcessingConfig
from robot_id_lab.synthetic import random_motion
from robot_id_model.physical import LinkInertial
from robot_id_model.robot_config import load_robot_config
from robot_id_model.robot_model import load_robot_model

PERIOD_S, RATE_HZ, PERIODS = 10.0, 200.0, 4
TURNED = Rotation.from_euler("ZYX", [25.0, -10.0, 40.0], degrees=True).as_matrix()
HELD_PART = LinkInertial(0.8, np.array([0.012, -0.008, 0.16]), TURNED @ np.diag([1.5e-3, 2.5e-3, 3.5e-3]) @ TURNED.T)
"""What the Franka Hand holds, in fer_link8's frame: its CoM between the fingertips, 0.16 m beyond the flange."""
TOOL = LinkInertial(2.0, np.array([0.03, -0.02, 0.09]), TURNED.T @ np.diag([6e-3, 9e-3, 1.2e-2]) @ TURNED)
"""A tool on the iiwa14's flange, in lbr_link_ee's frame."""
TCP_XYZ_M, TCP_YAW_RAD = np.array([0.02, 0.0, 0.15]), 0.6
"""The tool's TCP in lbr_link_ee: 15 cm out, 2 cm aside, turned 0.6 rad about z."""


def _with_part(urdf_text: str, load: LinkInertial, parent: str) -> str:
    """The URDF with `load` as a fixed link on `parent`, its inertial at its CoM in the parent's axes."""
    (x, y, z), i = load.com_m, load.inertia_com_kg_m2
    part = (f'<joint name="part_joint" type="fixed"><parent link="{parent}"/><child link="part"/>'
            f'<origin xyz="0 0 0" rpy="0 0 0"/></joint><link name="part"><inertial>'
            f'<origin xyz="{x:.17g} {y:.17g} {z:.17g}" rpy="0 0 0"/><mass value="{load.mass_kg:.17g}"/>'
            f'<inertia ixx="{i[0, 0]:.17g}" ixy="{i[0, 1]:.17g}" ixz="{i[0, 2]:.17g}" iyy="{i[1, 1]:.17g}" '
            f'iyz="{i[1, 2]:.17g}" izz="{i[2, 2]:.17g}"/></inertial></link></robot>')
    return urdf_text.replace("</robot>", part)


def _loaded_recording(setup: RobotSetup, urdf_text: str) -> Recording:
    """PERIODS periods of a random motion with the torque of `urdf_text`'s arm (RNEA), through the robot's torque
    filter, 0.02 Nm noise."""
    robot = load_robot_model(urdf_text, setup.joint_names, friction=())
    t = np.arange(round(PERIOD_S * RATE_HZ)) / RATE_HZ
    q, dq, ddq = random_motion(robot, PERIOD_S, 5, t, seed=3)
    data = robot.model.createData()
    tau = np.array([pin.rnea(robot.model, data, a, b, c) for a, b, c in zip(q, dq, ddq, strict=True)])
    return periodic_recording(robot, np.zeros(robot.n_params), q, dq, ddq, PERIOD_S, PERIODS,
                              setup.torque_filter_time_constant_s, 0.02, seed=1, harmonics=5,
                              joint_friction=lambda _: tau)  # the whole torque, RNEA's, in place of Y·π


def _identified(setup: RobotSetup, truth_urdf: str):
    """The load identified as `payload` does it: on the config's flange_frame, against the URDF's arm."""
    arm = urdf_arm(setup)
    samples = payload_samples(arm, setup.flange_frame, [_loaded_recording(setup, truth_urdf)], ProcessingConfig(),
                              setup.torque_filter_time_constant_s)
    estimate = estimate_payload(samples, PayloadBounds((0.0, setup.rated_payload_kg), 0.3))
    return arm, estimate


@pytest.fixture(scope="module")
def panda_hand():
    setup = RobotSetup.from_config(load_robot_config("panda_hand"))
    return setup, *_identified(setup, _with_part(setup.urdf_text, HELD_PART, "fer_link8"))


def _set_load_in_the_flange(arm, estimate, setup: RobotSetup, tcp: np.ndarray) -> tuple:
    """The load exported to the config's load frame and its setLoad values, checked against the part held there
    (mass, CoM, inertia as well as identified) and against the estimate turned by the TCP's rotation `tcp`."""
    exported, why = exported_load(arm.robot, estimate, setup.flange_frame, setup.load_frame)
    assert why == "" and exported.frame == setup.load_frame
    values = franka_set_load(exported.inertial)
    assert values["load_mass"] == pytest.approx(HELD_PART.mass_kg, rel=0.01)
    np.testing.assert_allclose(values["F_x_Cload"], HELD_PART.com_m, atol=1e-3)
    inertia = np.reshape(values["load_inertia"], (3, 3), order="F")
    np.testing.assert_allclose(inertia, tcp @ estimate.inertial.inertia_com_kg_m2 @ tcp.T, atol=1e-15)
    np.testing.assert_allclose(inertia, HELD_PART.inertia_com_kg_m2, atol=0.05 * 3.5e-3)  # as well as identified
    return exported, values


def test_the_panda_hands_set_load_is_in_the_flange_frame_f(panda_hand):
    setup, arm, estimate = panda_hand
    assert (setup.flange_frame, setup.load_frame) == ("fer_hand_tcp", "fer_link8")
    # identified in the TCP: fer_hand_tcp is 0.1034 m beyond the flange, turned -45 deg about z
    tcp = Rotation.from_euler("z", -45.0, degrees=True).as_matrix()
    np.testing.assert_allclose(estimate.inertial.com_m, tcp.T @ (HELD_PART.com_m - [0.0, 0.0, 0.1034]), atol=1e-3)
    exported, values = _set_load_in_the_flange(arm, estimate, setup, tcp)
    # what was written before: the TCP's values labelled as the flange's, 10 cm and 45 deg off
    assert np.linalg.norm(np.asarray(estimate.inertial.com_m) - HELD_PART.com_m) > 0.09
    written = _robot_exports(exported, "", estimate.undetermined_moments)
    assert written["franka_set_load"]["frame"] == written["kuka_load_data"]["frame"] == "fer_link8"
    assert written["franka_set_load"]["F_x_Cload"] == values["F_x_Cload"]
    assert "only while the robot is idle" in written["franka_set_load"]["when"]
    request = yaml.safe_load(written["franka_ros2"].split("SetLoad ", 1)[1].strip('"'))
    assert request["center_of_mass"] == values["F_x_Cload"]


def test_the_fr3_hands_set_load_is_in_the_flange_frame_f():
    """The FR3 with the Franka Hand, franka_description's URDF as shipped (fingers on prismatic joints, held closed):
    identified on fr3_hand_tcp, setLoad's values in fr3_link8. Where the TCP is, is read here from the URDF's two
    fixed joints (fr3_hand_joint turns the hand about z, fr3_hand_tcp_joint moves out along z)."""
    setup = RobotSetup.from_config(load_robot_config("fr3_hand"))
    assert (setup.flange_frame, setup.load_frame) == ("fr3_hand_tcp", "fr3_link8")
    arm, estimate = _identified(setup, _with_part(setup.urdf_text, HELD_PART, "fr3_link8"))
    origins = {j.get("name"): j.find("origin") for j in ET.fromstring(setup.urdf_text).iter("joint")}
    yaw_rad = float(origins["fr3_hand_joint"].get("rpy").split()[2])
    out_m = np.array(origins["fr3_hand_tcp_joint"].get("xyz").split(), dtype=float)
    assert yaw_rad == pytest.approx(-np.pi / 4) and out_m == pytest.approx([0.0, 0.0, 0.1034])
    tcp = Rotation.from_euler("z", yaw_rad).as_matrix()
    np.testing.assert_allclose(estimate.inertial.com_m, tcp.T @ HELD_PART.com_m - out_m, atol=1e-3)
    exported, values = _set_load_in_the_flange(arm, estimate, setup, tcp)
    written = _robot_exports(exported, "", estimate.undetermined_moments)
    assert written["franka_set_load"]["frame"] == "fr3_link8"
    request = yaml.safe_load(written["franka_ros2"].split("SetLoad ", 1)[1].strip('"'))
    assert request["center_of_mass"] == values["F_x_Cload"] and request["mass"] == values["load_mass"]


def test_kukas_load_data_are_in_the_flange_whatever_frame_the_tool_was_identified_on():
    """A config for an iiwa14 with a tool: flange_frame its TCP (added to the URDF), load_frame lbr_link_ee, the
    flange of lbr_description: the face of the bare flange, 126 mm beyond A6 (KUKA's 360 + 420 + 400 + 126 mm)."""
    shipped = iiwa14_setup()
    x, y, z = TCP_XYZ_M
    tcp = (f'<joint name="tcp_joint" type="fixed"><parent link="lbr_link_ee"/><child link="tcp"/><origin '
           f'xyz="{x:.17g} {y:.17g} {z:.17g}" rpy="0 0 {TCP_YAW_RAD:.17g}"/></joint><link name="tcp"/></robot>')
    with_tcp = shipped.urdf_text.replace("</robot>", tcp)
    setup = dataclasses.replace(shipped, urdf_text=with_tcp, flange_frame="tcp", load_frame="lbr_link_ee")
    arm, estimate = _identified(setup, _with_part(with_tcp, TOOL, "lbr_link_ee"))
    exported, _ = exported_load(arm.robot, estimate, "tcp", "lbr_link_ee")
    kuka = _robot_exports(exported, "", estimate.undetermined_moments)["kuka_load_data"]
    assert kuka["frame"] == "lbr_link_ee"
    assert kuka["mass_kg"] == pytest.approx(TOOL.mass_kg, rel=0.01)
    np.testing.assert_allclose(np.array(kuka["com_mm"]) / 1000.0, TOOL.com_m, atol=1e-3)
    rotation = Rotation.from_euler("ZYX", kuka["abc_deg"], degrees=True).as_matrix()  # Rz(A)·Ry(B)·Rx(C)
    np.testing.assert_allclose(rotation @ np.diag(kuka["principal_moments_kg_m2"]) @ rotation.T,
                               TOOL.inertia_com_kg_m2, atol=0.05 * 1.2e-2)
    assert kuka["abc_determined"]  # the moments 50 % apart: KUKA's A B C hold the tool's turn
    true_axes = np.linalg.eigh(TOOL.inertia_com_kg_m2)[1]
    assert np.all(np.abs(np.sum(rotation * true_axes, axis=0)) > np.cos(np.deg2rad(8.0)))  # 4.3 deg off at most


def test_a_load_identified_on_another_body_gets_no_robot_exports(panda_hand):
    """A load on link 6 is not one on the flange: no KUKA or Franka values, and payload.yaml says why."""
    setup, arm, estimate = panda_hand
    exported, why = exported_load(arm.robot, estimate, "fer_link6", setup.load_frame)
    assert exported is None
    assert "identified on 'fer_link6', which fer_joint6 moves, and the robot takes a load on 'fer_link8'" in why
    assert _robot_exports(None, why, ())["franka_set_load"] is None
