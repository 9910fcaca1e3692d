import pathlib

import numpy as np
import pinocchio as pin
import pytest
from conftest import random_arm_urdf

from robot_id_model import ModelError, load_robot_model


def test_loads_all_movable_joints_by_default(arm_urdf):
    robot = load_robot_model(arm_urdf)
    assert robot.joint_names == ("j1", "j2", "j3", "j4", "j5", "j6")
    assert robot.link_names == ("link1", "link2", "link3", "link4", "link5", "link6")
    assert robot.n_params == 6 * 13


def test_gripper_is_locked_and_lumped_onto_the_last_link():
    urdf = random_arm_urdf(5, seed=4, gripper=True)
    full = pin.buildModelFromXML(urdf)
    robot = load_robot_model(urdf, [f"j{j}" for j in range(1, 6)])
    assert robot.n_joints == 5
    total_full = sum(full.inertias[j].mass for j in range(1, full.njoints))
    total_arm = sum(robot.model.inertias[j].mass for j in range(1, robot.model.njoints))
    assert total_arm == pytest.approx(total_full, rel=1e-12)


def test_malformed_xml_is_reported():
    with pytest.raises(ModelError, match="not well-formed XML"):
        load_robot_model('<robot name="x"><link name="a"></robot>')


def test_a_urdf_without_a_movable_joint_says_so():
    with pytest.raises(ModelError, match="no movable joint"):
        load_robot_model('<robot name="x"><link name="a"/><link name="b"/><joint name="j" type="fixed"><parent '
                         'link="a"/><child link="b"/></joint></robot>')


def test_non_urdf_root_is_reported():
    with pytest.raises(ModelError, match="a URDF starts with <robot>"):
        load_robot_model('<sdf version="1.7"><model name="x"/></sdf>')


def test_missing_file_is_reported(tmp_path: pathlib.Path):
    with pytest.raises(ModelError, match="URDF file not found"):
        load_robot_model(tmp_path / "nope.urdf")


def test_unknown_joint_lists_the_movable_joints(arm_urdf):
    with pytest.raises(ModelError, match=r"no movable joint named \['j9'\]; movable joints are \['j1'"):
        load_robot_model(arm_urdf, ["j1", "j9"])


def test_floating_base_is_refused(arm_urdf):
    floating = arm_urdf.replace(
        "<link name=\"link0\">",
        '<link name="world"/><joint name="base" type="floating"><parent link="world"/>'
        '<child link="link0"/></joint><link name="link0">',
        1,
    )
    with pytest.raises(ModelError, match="joint 'base' is floating; robot_id identifies fixed-base serial arms"):
        load_robot_model(floating)


def test_joints_out_of_order_are_refused(arm_urdf):
    with pytest.raises(ModelError, match="from base to tip"):
        load_robot_model(arm_urdf, ["j2", "j1", "j3", "j4", "j5", "j6"])


def test_joints_that_skip_a_link_are_not_a_serial_chain():
    urdf = random_arm_urdf(5, seed=4, gripper=True)
    with pytest.raises(ModelError, match="not a serial chain"):
        load_robot_model(urdf, ["j1", "j2", "j3", "j4", "j5", "finger_left", "finger_right"])


def test_unknown_friction_term_is_refused(arm_urdf):
    with pytest.raises(ModelError, match="friction terms must be distinct"):
        load_robot_model(arm_urdf, friction=("FV", "XX"))


def test_continuous_joint_configuration_uses_cos_sin():
    robot = load_robot_model(random_arm_urdf(4, seed=1, continuous=2))
    q = np.array([0.1, 0.7, -0.3, 0.2])
    q_pin = robot.configuration(q)
    assert q_pin.shape == (5,)
    np.testing.assert_allclose(q_pin[1:3], [np.cos(0.7), np.sin(0.7)])
    lower, upper = robot.position_limits_rad
    assert np.isinf(lower[1]) and np.isinf(upper[1]) and lower[0] == -2.5
