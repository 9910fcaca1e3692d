"""The payload regressor against pinocchio's own handling of a load: the same arm with the load written into the URDF
as a fixed link (pinocchio's parser moves it into the carrying joint's body) minus the arm without it, by RNEA."""

import re

import numpy as np
import pinocchio as pin
import pytest
from conftest import random_arm_urdf

from robot_id_model.payload import frame_placement, payload_regressor, to_joint_frame
from robot_id_model.physical import LinkInertial, link_from_standard, link_standard_parameters
from robot_id_model.robot_model import ModelError, load_robot_model

LOAD = LinkInertial(1.7, np.array([0.03, -0.02, 0.06]),
                    np.array([[0.012, 0.001, -0.002], [0.001, 0.009, 0.0015], [-0.002, 0.0015, 0.006]]))


def _with_tool(inertial: str) -> str:
    """The random arm with its tool frame turned and offset, the tool link holding `inertial`."""
    urdf = random_arm_urdf(6, seed=3)
    urdf = urdf.replace('<origin xyz="0 0 0.1" rpy="0 0 0.3"/>', '<origin xyz="0.02 -0.01 0.1" rpy="0.4 -0.2 0.3"/>')
    return re.sub(r'<link name="tool">.*?</link>', f'<link name="tool">{inertial}</link>', urdf)


def _inertial(load: LinkInertial) -> str:
    c, i = load.com_m, load.inertia_com_kg_m2
    return (f'<inertial><origin xyz="{c[0]} {c[1]} {c[2]}" rpy="0 0 0"/><mass value="{load.mass_kg}"/>'
            f'<inertia ixx="{i[0, 0]}" ixy="{i[0, 1]}" ixz="{i[0, 2]}" iyy="{i[1, 1]}" iyz="{i[1, 2]}" '
            f'izz="{i[2, 2]}"/></inertial>')


def _rnea(robot, q, dq, ddq) -> np.ndarray:
    data = robot.model.createData()
    return np.array([pin.rnea(robot.model, data, robot.configuration(a), b, c)
                     for a, b, c in zip(q, dq, ddq, strict=True)])


def test_the_payload_regressor_gives_the_torque_of_a_load_pinocchio_lumps_from_the_urdf():
    joints = [f"j{j}" for j in range(1, 7)]
    loaded = load_robot_model(_with_tool(_inertial(LOAD)), joints, friction=())
    bare = load_robot_model(_with_tool(""), joints, friction=())
    rng = np.random.default_rng(0)
    q, dq, ddq = rng.uniform(-2, 2, (20, 6)), rng.uniform(-1, 1, (20, 6)), rng.uniform(-3, 3, (20, 6))
    expected = _rnea(loaded, q, dq, ddq) - _rnea(bare, q, dq, ddq)
    y = payload_regressor(bare, "tool", q, dq, ddq)
    np.testing.assert_allclose(y @ link_standard_parameters(LOAD), expected, rtol=1e-9, atol=1e-9)


def test_the_frame_map_is_invertible_and_keeps_mass_and_consistency():
    rotation = pin.rpy.rpyToMatrix(0.4, -0.2, 0.3)
    a = to_joint_frame(rotation, np.array([0.02, -0.01, 0.1]))
    pi_j = a @ link_standard_parameters(LOAD)
    body = link_from_standard(pi_j)
    assert body.mass_kg == pytest.approx(LOAD.mass_kg)
    np.testing.assert_allclose(body.com_m, rotation @ LOAD.com_m + [0.02, -0.01, 0.1], atol=1e-12)
    np.testing.assert_allclose(body.inertia_com_kg_m2, rotation @ LOAD.inertia_com_kg_m2 @ rotation.T, atol=1e-12)


def test_a_frame_the_arm_does_not_have_is_named():
    robot = load_robot_model(_with_tool(""), [f"j{j}" for j in range(1, 7)], friction=())
    with pytest.raises(ModelError, match="no frame named 'flange'"):
        frame_placement(robot, "flange")
