"""The identified URDF: only inertials change, and pinocchio reads back exactly what was identified."""

import re

import numpy as np
import pinocchio as pin
import pytest

from robot_id_estimator.physical_lmi import retrieve_lmi
from robot_id_estimator.physical_problem import default_bounds
from robot_id_estimator.urdf_export import identified_urdf
from robot_id_model import base_parameters, load_robot_model, nominal_parameters, regressor, stack
from robot_id_model.base_parameters import random_states
from robot_id_model.parameters import inertial_columns
from robot_id_model.robot_config import description_directory
from robot_id_model.urdf_inertials import lumped_known_parts, read_link_inertial

URDFS = description_directory() / "urdf"


def _without_inertials(text: str) -> str:
    return re.sub(r"<inertial>.*?</inertial>", "<inertial/>", text, flags=re.DOTALL)


@pytest.fixture(scope="module")
def retrieved():
    """Physical parameters retrieved from simulated panda_hand data whose link masses are 5 % off."""
    text = (URDFS / "panda_hand.urdf").read_text()
    robot = load_robot_model(text, [f"fer_joint{j}" for j in range(1, 8)], friction=("FV", "FC"))
    pi_true = nominal_parameters(robot)
    for cols in inertial_columns(robot)[::2]:
        pi_true[cols] *= 1.05
    base = base_parameters(robot)
    y = regressor(robot, *random_states(robot, 300, seed=5))
    lumped = lumped_known_parts(robot, text)
    bounds = default_bounds(robot, fixed_inertials=lumped)
    result = retrieve_lmi(robot, stack(base.regressor(y)), stack(y) @ pi_true, base.beta_from_pi, bounds)
    return text, robot, result, lumped


def test_only_the_inertials_change(retrieved):
    text, robot, result, lumped = retrieved
    out = identified_urdf(text, robot, result.pi, lumped)
    assert out != text
    assert _without_inertials(out) == _without_inertials(text)


def test_the_hand_keeps_its_own_inertial(retrieved):
    text, robot, result, lumped = retrieved
    assert lumped[6] is not None and lumped[6][0] == pytest.approx(0.6544 + 2 * 0.0291)
    out = identified_urdf(text, robot, result.pi, lumped)
    hand_before, hand_after = read_link_inertial(text, "fer_hand"), read_link_inertial(out, "fer_hand")
    assert hand_after.mass_kg == hand_before.mass_kg
    np.testing.assert_array_equal(hand_after.inertia_com_kg_m2, hand_before.inertia_com_kg_m2)


def test_reloaded_urdf_reproduces_the_identified_torques(retrieved):
    text, robot, result, lumped = retrieved
    out = identified_urdf(text, robot, result.pi, lumped)
    reloaded = load_robot_model(out, robot.joint_names, friction=())
    q, dq, ddq = random_states(reloaded, 200, seed=8)
    data = reloaded.model.createData()
    tau_urdf = np.array([pin.rnea(reloaded.model, data, q[k], dq[k], ddq[k]) for k in range(200)])
    inertial_only = result.pi[inertial_columns(robot).ravel()]
    y = regressor(reloaded, q, dq, ddq)
    np.testing.assert_allclose(tau_urdf, y @ inertial_only, rtol=0, atol=1e-9)


def test_mass_matrix_is_positive_definite_on_10000_configurations(retrieved):
    text, robot, result, lumped = retrieved
    reloaded = load_robot_model(identified_urdf(text, robot, result.pi, lumped), robot.joint_names)
    data = reloaded.model.createData()
    q = random_states(reloaded, 10_000, seed=9)[0]
    smallest = min(np.linalg.eigvalsh(pin.crba(reloaded.model, data, qk))[0] for qk in q)
    assert smallest > 0


def test_missing_inertial_is_inserted_and_dynamics_written():
    text = (
        '<robot name="r"><link name="base"/>\n'
        '  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>\n'
        '  <link name="l1"/>\n</robot>'
    )
    with_mass = text.replace(
        '<link name="l1"/>',
        '<link name="l1"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/>'
        "</inertial></link>",
    )
    robot = load_robot_model(with_mass, friction=("FV", "FC"))
    pi = nominal_parameters(robot)
    pi[0] = 2.0
    out = identified_urdf(text, robot, pi, friction_damping=[(0.5, 0.25)])
    assert read_link_inertial(out, "l1").mass_kg == 2.0
    assert '<dynamics damping="0.5" friction="0.25"/>' in out
