import numpy as np
import pytest
from conftest import random_arm_urdf

from robot_id_model import base_parameters, load_robot_model, regressor, stack
from robot_id_model.base_parameters import random_states

PLANAR_2R = """<robot name="planar">
  <link name="base"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="10" velocity="2"/></joint>
  <link name="l1"><inertial><origin xyz="0.2 0 0"/><mass value="2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.03"/></inertial></link>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0.5 0 0"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="10" velocity="2"/></joint>
  <link name="l2"><inertial><origin xyz="0.1 0.05 0"/><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
</robot>"""


def test_planar_2r_arm_has_the_textbook_regrouping():
    robot = load_robot_model(PLANAR_2R, gravity_m_s2=(0.0, -9.81, 0.0), friction=())
    base = base_parameters(robot)
    got = dict(zip(base.names, base.expressions, strict=True))
    # Vertical-plane 2R arm: 6 inertial base parameters; link 2's mass regroups onto link 1 (a2 = 0.5 m)
    assert base.n_base == 6
    assert got["MX1R"] == "MX1 + 0.5 M2"
    assert got["ZZ1R"] == "ZZ1 + 0.25 M2"
    assert {"MY1", "MX2", "MY2", "ZZ2"} <= set(got)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_base_regressor_has_full_rank_and_reproduces_the_torque(seed):
    robot = load_robot_model(random_arm_urdf(6, seed=seed, prismatic=4 if seed == 1 else None))
    base = base_parameters(robot)
    y = regressor(robot, *random_states(robot, 300, seed=99))
    yb = stack(base.regressor(y))
    assert np.linalg.matrix_rank(yb) == base.n_base
    pi = np.random.default_rng(seed).normal(size=robot.n_params)
    np.testing.assert_allclose(yb @ base.values(pi), stack(y) @ pi, rtol=0, atol=1e-9)


def test_base_parameters_are_deterministic():
    robot = load_robot_model(random_arm_urdf(6, seed=0))
    first, second = base_parameters(robot), base_parameters(robot)
    assert first.names == second.names and first.expressions == second.expressions
    np.testing.assert_array_equal(first.beta_from_pi, second.beta_from_pi)


def test_friction_terms_are_always_base_parameters():
    robot = load_robot_model(random_arm_urdf(5, seed=0), friction=("FV", "FC"))
    base = base_parameters(robot)
    assert [n for n in base.names if n.startswith(("FV", "FC"))] == [
        f"{t}{j}" for j in range(1, 6) for t in ("FV", "FC")
    ]
