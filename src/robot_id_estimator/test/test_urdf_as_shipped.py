"""The identified model from URDFs as their packages ship them. identified.urdf: the identified inertials and
friction go into the <link> and <joint> elements of the <robot> tree, and nothing else changes, whatever else names
those links and joints (a <ros2_control> block before the links as ros2_kortex ships it, a <transmission>, a comment
holding an old link) and whatever else a <dynamics> carries (franka_description's D, K, mu_coulomb, mu_viscous).
identified.xml: meshes named by package:// found where ROS finds them, or left out with a note. A gripper's finger
joints: the arm is identified, the fingers locked and lumped."""

import json
import pathlib
import re
import shutil
import warnings
import xml.etree.ElementTree as ET

import mujoco
import numpy as np
import pytest
from estimator_synthetic import simulated_recording, write_without_physical

from robot_id_estimator.__main__ import main
from robot_id_estimator.output.mjcf_export import write_mjcf
from robot_id_estimator.output.urdf_edit import UrdfEditError, UrdfEditor, tree_elements
from robot_id_estimator.output.urdf_export import identified_urdf
from robot_id_estimator.recordings.recording import save_csv
from robot_id_estimator.results import read_identification
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_estimator.settings import PhysicalConfig
from robot_id_lab.synthetic import urdf_with_friction
from robot_id_model import ModelError, load_robot_model, nominal_parameters
from robot_id_model.parameters import inertial_columns
from robot_id_model.robot_config import description_directory
from robot_id_model.robot_model import STANDARD_GRAVITY_M_S2

DESCRIPTION = description_directory()  # looked up now: some tests run without a sourced ROS 2
JOINTS = [f"lbr_A{j}" for j in range(1, 8)]
OLD_LINK = '<!-- before the CAD update: <link name="lbr_link_3"><inertial><mass value="99"/></inertial></link> -->'
ROS2_CONTROL = "".join(
    ['\n  <ros2_control name="lbr" type="system">\n    <hardware><plugin>lbr_ros2_control/SystemInterface</plugin>'
     "</hardware>"]
    + [f'\n    <joint name="{j}"><command_interface name="position"/><state_interface name="effort"/></joint>'
       for j in JOINTS]
    + ["\n  </ros2_control>"])
TRANSMISSION = ('\n  <transmission name="lbr_A2_transmission"><type>transmission_interface/SimpleTransmission</type>'
                '<joint name="lbr_A2"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>'
                '<actuator name="lbr_A2_motor"><mechanicalReduction>1</mechanicalReduction></actuator></transmission>')
FRANKA_DYNAMICS = '<dynamics D="1" K="7000" damping="0.003" friction="0.2" mu_coulomb="0" mu_viscous="16"/>'


def shipped_like(dynamics: str = '<dynamics damping="10.0" friction="0.1"/>') -> str:
    """Our iiwa14 URDF with what shipped URDFs carry before its links: the comment, <ros2_control> and a
    <transmission> naming the arm's joints; every joint with `dynamics` (lbr_description's placeholders)."""
    text = (DESCRIPTION / "robots" / "iiwa14" / "iiwa14.urdf").read_text()
    text = text.replace("</joint>", f"  {dynamics}\n  </joint>")
    return text.replace('<robot name="iiwa14">', f'<robot name="iiwa14">\n  {OLD_LINK}{ROS2_CONTROL}{TRANSMISSION}', 1)


def identified(text: str) -> tuple[str, np.ndarray, list[tuple[float, float]]]:  # (URDF, π (FV, FC), friction)
    """identified_urdf with every link's mass and first moments 1.3 × the URDF's and friction (0.5 j, 0.1 j)."""
    robot = load_robot_model(text, JOINTS, friction=("FV", "FC"))
    pi = nominal_parameters(robot)
    for cols in inertial_columns(robot):
        pi[cols] *= 1.3
    friction = [(0.5 * j, 0.1 * j) for j in range(1, 8)]
    return identified_urdf(text, robot, pi, friction_damping=friction), pi, friction


def outside_the_tree(text: str) -> str:
    """The text with the <robot> tree's links and joints cut out: what the export must leave alone."""
    data = text.encode()
    for element in sorted(tree_elements(text).values(), key=lambda e: e.start, reverse=True):
        data = data[:element.start] + data[element.end:]
    return data.decode()


def test_inertials_and_friction_go_into_the_robot_tree_and_nothing_else_changes():
    text = shipped_like()
    out, pi, friction = identified(text)
    reloaded = load_robot_model(out, JOINTS, friction=("FV", "FC"))
    cols = inertial_columns(reloaded)
    np.testing.assert_allclose(nominal_parameters(reloaded)[cols], pi[cols], rtol=1e-12)
    joints = {joint.get("name"): joint for joint in ET.fromstring(out).findall("joint")}
    for name, (viscous, coulomb) in zip(JOINTS, friction, strict=True):
        dynamics = joints[name].find("dynamics")
        assert (float(dynamics.get("damping")), float(dynamics.get("friction"))) == (viscous, coulomb)
    assert outside_the_tree(out) == outside_the_tree(text)
    for block in (OLD_LINK, ROS2_CONTROL, TRANSMISSION):
        assert block in out


def test_a_dynamics_keeps_the_attributes_the_tool_does_not_own():
    text = shipped_like(FRANKA_DYNAMICS)
    out, _, friction = identified(text)
    written = [tag for tag in re.findall(r"<dynamics [^>]*/>", out) if tag != FRANKA_DYNAMICS]  # a fixed joint's
    assert len(written) == 7 and out.count(FRANKA_DYNAMICS) == text.count(FRANKA_DYNAMICS) - 7  # stays as it was
    for tag, (viscous, coulomb) in zip(written, friction, strict=True):
        assert tag == (f'<dynamics D="1" K="7000" damping="{viscous!r}" friction="{coulomb!r}" mu_coulomb="0" '
                       'mu_viscous="16"/>')


def test_a_link_written_empty_or_self_closing_gets_its_inertial():
    text = ('<?xml version="1.0"?>\n<robot name="r">\n  <link name="a"/>\n  <link name="b"></link>\n'
            '  <joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint>\n</robot>\n')
    editor = UrdfEditor(text)
    editor.set_child("link", "a", '<inertial>\n  <mass value="2"/>\n</inertial>')
    editor.set_child("link", "b", '<inertial>\n  <mass value="3"/>\n</inertial>')
    root = ET.fromstring(editor.text())
    assert [link.find("inertial/mass").get("value") for link in root.findall("link")] == ["2", "3"]


@pytest.mark.parametrize(("text", "message"), [
    ('<robot name="r"><link name="a"/><link name="a"/></robot>', "two <link> elements named 'a'"),
    ('<robot name="r"><link name="a"></robot>', "not well-formed XML"),
])
def test_a_urdf_the_editor_cannot_place_edits_in_is_refused_with_the_reason(text, message):
    with pytest.raises(UrdfEditError, match=message):
        UrdfEditor(text)


def test_a_link_only_a_comment_or_ros2_control_names_is_not_in_the_tree():
    editor = UrdfEditor(f'<robot name="r">{OLD_LINK}{ROS2_CONTROL}<link name="base"/></robot>')
    with pytest.raises(UrdfEditError, match="no <link> named 'lbr_link_3'"):
        editor.set_child("link", "lbr_link_3", "<inertial/>")
    with pytest.raises(UrdfEditError, match="no <joint> named 'lbr_A1'"):
        editor.set_attributes("joint", "lbr_A1", "dynamics", {"damping": "1"})


def meshes_as_lbr_ships_them(scheme: str = "package://lbr_description/meshes/iiwa14") -> str:
    """Our iiwa14 URDF with lbr_description's geometry: a Collada visual and an STL collision mesh per link, named
    through `scheme` (package:// as lbr_description ships them; a file:// path of another machine as ros2_kortex)."""
    text = (DESCRIPTION / "robots" / "iiwa14" / "iiwa14.urdf").read_text()
    for k in range(8):
        geometry = (f'<visual><geometry><mesh filename="{scheme}/visual/link_{k}.dae"/></geometry></visual>'
                    f'<collision><geometry><mesh filename="{scheme}/collision/link_{k}.stl"/></geometry></collision>')
        text = re.sub(rf'(<link name="lbr_link_{k}">.*?)<collision>.*?</collision>', rf"\g<1>{geometry}", text,
                      count=1, flags=re.DOTALL)
    return text


def lbr_description_in(folder: pathlib.Path) -> pathlib.Path:
    """A copy of lbr_description's iiwa14 collision meshes laid out as the package installs them."""
    target = folder / "lbr_description" / "meshes" / "iiwa14" / "collision"
    target.mkdir(parents=True)
    for mesh in (DESCRIPTION / "meshes" / "lbr_description" / "meshes" / "iiwa14" / "collision").glob("link_*.stl"):
        shutil.copy(mesh, target / mesh.name)
    return folder


@pytest.fixture
def no_ros(monkeypatch):
    """No ROS 2 sourced and no ROS_PACKAGE_PATH: the mesh lookup has only the URDF's folders."""
    for name in ("AMENT_PREFIX_PATH", "ROS_PACKAGE_PATH"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_package_meshes_are_found_through_ros_package_path(no_ros, tmp_path):
    no_ros.setenv("ROS_PACKAGE_PATH", str(lbr_description_in(tmp_path / "share")))
    path, notes = write_mjcf(meshes_as_lbr_ships_them(), tmp_path, tmp_path / "identified.xml", STANDARD_GRAVITY_M_S2)
    assert notes == ()
    model = mujoco.MjModel.from_xml_path(str(path))
    assert model.nmesh == 8 and model.ngeom == 8  # the collision meshes; no visual (Collada MuJoCo cannot read)


def test_package_meshes_are_found_beside_the_urdf_in_its_package(no_ros, tmp_path):
    package = lbr_description_in(tmp_path) / "lbr_description"
    (package / "urdf").mkdir()
    _, notes = write_mjcf(meshes_as_lbr_ships_them(), package / "urdf", tmp_path / "identified.xml",
                          STANDARD_GRAVITY_M_S2)
    assert notes == ()


@pytest.mark.parametrize("scheme", ["package://lbr_description/meshes/iiwa14",
                                    "file:///home/someone/ws/src/ros2_kortex/kortex_description/meshes"])
def test_meshes_found_nowhere_give_an_mjcf_with_every_inertial_and_a_note(no_ros, tmp_path, scheme):
    text = meshes_as_lbr_ships_them(scheme)
    path, notes = write_mjcf(text, tmp_path, tmp_path / "identified.xml", STANDARD_GRAVITY_M_S2)
    assert len(notes) == 1 and "has no collision mesh on lbr_link_0, lbr_link_1" in notes[0], notes
    assert "inertials and joints are complete" in notes[0]
    model = mujoco.MjModel.from_xml_path(str(path))
    assert model.nmesh == 0 and model.njnt == 7
    for k in range(1, 8):
        inertial = ET.fromstring(text).find(f"link[@name='lbr_link_{k}']/inertial/mass")
        assert model.body(f"lbr_link_{k}").mass[0] == pytest.approx(float(inertial.get("value")), rel=1e-5)  # 6 digits


def _sign_law(directory: pathlib.Path) -> pathlib.Path:
    """The default config with the Coulomb law the simulations use (sign) held: its choice is test_coulomb_law's."""
    return write_without_physical(directory, coulomb_law="sign", physical=PhysicalConfig())


def hand_as_franka_ships_it() -> str:
    """Our FER + hand URDF with the fingers as franka_description ships them: two prismatic joints on the hand."""
    text = (DESCRIPTION / "robots" / "panda_hand" / "panda_hand.urdf").read_text()
    for side, axis in (("left", "0 1 0"), ("right", "0 -1 0")):
        text = text.replace(f'<joint name="fer_{side}finger_joint" type="fixed">',
                            f'<joint name="fer_{side}finger_joint" type="prismatic"><axis xyz="{axis}"/>'
                            '<limit lower="0" upper="0.04" effort="100" velocity="0.2"/>')
    return text


def test_a_urdf_with_a_gripper_gives_its_arm_and_locks_the_fingers(tmp_path):
    urdf = tmp_path / "fer_hand.urdf"
    urdf.write_text(hand_as_franka_ships_it())
    robot = load_robot_model(urdf)
    assert robot.joint_names == tuple(f"fer_joint{j}" for j in range(1, 8))
    assert robot.locked == ("fer_leftfinger_joint", "fer_rightfinger_joint")
    setup = RobotSetup("fer_hand", str(urdf), robot.joint_names)
    pi = urdf_with_friction(setup.model(("FV", "FC", "FO")))
    csv = save_csv(simulated_recording(setup.model(("FV", "FC", "FO")), setup, pi, 2), tmp_path / "arm.csv")
    assert main(["identify", "--urdf", str(urdf), "--data", str(csv), "--out", str(tmp_path / "out"), "--config",
                 str(_sign_law(tmp_path))]) == 0
    notes = json.loads((tmp_path / "out" / "identification.json").read_text())["metrics"]["notes"]
    assert any(n.startswith("the URDF's joints fer_leftfinger_joint, fer_rightfinger_joint are not the arm's")
               for n in notes)


def test_joints_that_are_no_chain_name_the_urdfs_arm(tmp_path):
    with pytest.raises(ModelError, match=r"not a serial chain \(the URDF's arm from its base: fer_joint1, .*"
                                         r"fer_joint7\)"):
        load_robot_model(hand_as_franka_ships_it(), [*(f"fer_joint{j}" for j in range(1, 8)),
                                                     "fer_leftfinger_joint", "fer_rightfinger_joint"])


def without_inertial(link: str, gripper: bool) -> str:
    """Our iiwa14 URDF with `link` stripped of its inertial; with `gripper`, that inertial moved to a link fixed to
    it 5 cm further (Kinova's Gen3 lite: the last arm link massless, the gripper's links carry the mass)."""
    text = (DESCRIPTION / "robots" / "iiwa14" / "iiwa14.urdf").read_text()
    match = re.search(rf'(<link name="{link}">.*?)(<inertial>.*?</inertial>)', text, flags=re.DOTALL)
    text = text.replace(match.group(0), match.group(1))
    if gripper:
        text = text.replace("</robot>", f'<joint name="gripper_mount" type="fixed"><parent link="{link}"/>'
                            '<child link="gripper"/><origin xyz="0 0 0.05"/></joint>'
                            f'<link name="gripper">{match.group(2)}</link>\n</robot>')
    return text


def _identify_csv(urdf_text: str, tmp_path: pathlib.Path) -> tuple[int, pathlib.Path]:
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(urdf_text)
    setup = RobotSetup("arm", str(urdf), tuple(JOINTS))
    truth_urdf = DESCRIPTION / "robots" / "iiwa14" / "iiwa14.urdf"
    robot = load_robot_model(truth_urdf, JOINTS, friction=("FV", "FC", "FO"))  # the truth
    csv = save_csv(simulated_recording(robot, setup, urdf_with_friction(robot), 2), tmp_path / "arm.csv")
    return main(["identify", "--urdf", str(urdf), "--data", str(csv), "--out", str(tmp_path / "out"), "--config",
                 str(_sign_law(tmp_path))]), urdf


def test_an_arm_link_without_an_inertial_of_its_own_is_identified_with_what_is_fixed_to_it(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # on main: NaN from the massless link into cvxpy
        code, urdf = _identify_csv(without_inertial("lbr_link_7", gripper=True), tmp_path)
    assert code == 0 and (tmp_path / "out" / "identified.xml").is_file()  # MuJoCo loads it: every body physical
    identification = read_identification(tmp_path / "out" / "identification.json")
    reloaded = load_robot_model(tmp_path / "out" / "identified.urdf", JOINTS, friction=())
    body = nominal_parameters(reloaded)[inertial_columns(reloaded)[6]]  # link 7 and the gripper, lumped
    np.testing.assert_allclose(body, identification.physical.standard_values[inertial_columns(
        load_robot_model(urdf, JOINTS))[6]], rtol=1e-9)


def test_an_arm_link_with_no_mass_at_all_is_refused_in_one_line(tmp_path, capsys):
    code, _ = _identify_csv(without_inertial("lbr_link_3", gripper=False), tmp_path)
    assert code == 2
    error = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and "the arm link(s) lbr_link_3 have no mass in the URDF" in error[0]
