"""The identified URDF: only inertials change, and pinocchio reads back exactly what was identified."""

import re

import mujoco
import numpy as np
import pinocchio as pin
import pytest

from robot_id_estimator.output.mjcf_export import mujoco_ready, write_mjcf
from robot_id_estimator.output.urdf_export import identified_urdf
from robot_id_estimator.physical.lmi import retrieve_lmi
from robot_id_estimator.physical.problem import default_bounds
from robot_id_model import base_parameters, load_robot_model, nominal_parameters, regressor, stack
from robot_id_model.base_parameters import random_states
from robot_id_model.parameters import inertial_columns
from robot_id_model.physical import link_from_standard
from robot_id_model.robot_config import robot_folder
from robot_id_model.robot_model import STANDARD_GRAVITY_M_S2
from robot_id_model.urdf_inertials import lumped_known_parts, read_link_inertial


def _without_inertials(text: str) -> str:
    return re.sub(r"<inertial>.*?</inertial>", "<inertial/>", text, flags=re.DOTALL)


@pytest.fixture(scope="module")
def retrieved():
    """Physical parameters retrieved from simulated panda_hand data whose link masses are 5 % off."""
    text = (robot_folder("panda_hand") / "panda_hand.urdf").read_text()
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


def test_the_identified_model_loads_in_mujoco_as_identified_and_a_2_s_simulation_stays_bounded(retrieved, tmp_path):
    text, robot, result, lumped = retrieved
    urdf = tmp_path / "identified.urdf"
    urdf.write_text(identified_urdf(text, robot, result.pi, lumped))
    assert pin.buildModelFromUrdf(str(urdf)).nv == 7  # pinocchio loads it (the fingers are fixed in this URDF)
    mjcf, notes = write_mjcf(urdf.read_text(), tmp_path, tmp_path / "identified.xml", STANDARD_GRAVITY_M_S2)
    assert notes == ()
    assert "balanceinertia" not in mjcf.read_text()
    for model in (mujoco.MjModel.from_xml_string(mujoco_ready(urdf.read_text(), tmp_path)[0]),
                  mujoco.MjModel.from_xml_path(str(mjcf))):
        for j, (name, cols) in enumerate(zip(robot.link_names, inertial_columns(robot), strict=True)):
            own = link_from_standard(result.pi[cols] - lumped[j] if lumped[j] is not None else result.pi[cols])
            body = model.body(name).id  # MuJoCo simulates the identified body unchanged (nothing balanced) up to
            # the 6 significant digits MuJoCo writes MJCF numbers with
            assert model.body_mass[body] == pytest.approx(own.mass_kg, rel=1e-5)
            np.testing.assert_allclose(np.sort(model.body_inertia[body]), np.linalg.eigvalsh(own.inertia_com_kg_m2),
                                       rtol=1e-5)
        model.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
        model.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
        data = mujoco.MjData(model)
        data.qpos[:7] = [0.0, -0.3, 0.0, -2.0, 0.0, 1.6, 0.8]  # inside the joint limits, falling under gravity
        mujoco.mj_forward(model, data)
        energy_j = data.energy.sum()
        for _ in range(round(2.0 / model.opt.timestep)):
            mujoco.mj_step(model, data)
            assert data.energy.sum() <= energy_j + 1e-6  # unactuated and damped: energy never grows
        assert np.all(np.isfinite(data.qpos)) and data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number == 0
