"""The load's exports against the formats' documented fields and units: KUKA's load data (mass kg, CoM mm, A, B, C
deg of the principal axes as Rz·Ry·Rx, JX, JY, JZ kg m²), Franka's setLoad (kg, m, 9 values column-major) and the
franka_ros2 service call, and a URDF with the load that pinocchio reads."""

import numpy as np
import pytest
import yaml
from estimator_synthetic import iiwa14_setup
from scipy.spatial.transform import Rotation

from robot_id_estimator.payload.exports import (
    franka_service_call,
    franka_set_load,
    kuka_load_data,
    urdf_fragment,
    with_load,
)
from robot_id_model.parameters import nominal_parameters
from robot_id_model.payload import payload_regressor
from robot_id_model.physical import LinkInertial, link_standard_parameters
from robot_id_model.regressor import regressor
from robot_id_model.robot_model import load_robot_model

TURNED = np.array([[0.8, -0.6, 0.0], [0.6, 0.8, 0.0], [0.0, 0.0, 1.0]]) @ np.array(
    [[1.0, 0.0, 0.0], [0.0, np.cos(0.5), -np.sin(0.5)], [0.0, np.sin(0.5), np.cos(0.5)]])
LOAD = LinkInertial(1.5, np.array([0.1, -0.012, 0.08]), TURNED @ np.diag([3e-3, 5e-3, 6e-3]) @ TURNED.T)


def test_kuka_load_data_rebuild_the_inertia_from_the_principal_axes():
    data = kuka_load_data(LOAD)
    assert data.mass_kg == 1.5 and data.com_mm == pytest.approx((100.0, -12.0, 80.0))
    assert sorted(data.principal_moments_kg_m2) == pytest.approx([3e-3, 5e-3, 6e-3])
    rotation = Rotation.from_euler("ZYX", data.abc_deg, degrees=True).as_matrix()  # Rz(A)·Ry(B)·Rx(C)
    np.testing.assert_allclose(rotation @ np.diag(data.principal_moments_kg_m2) @ rotation.T,
                               LOAD.inertia_com_kg_m2, atol=1e-15)
    assert all(-180.0 <= angle <= 180.0 for angle in data.abc_deg) and abs(data.abc_deg[1]) <= 90.0


def test_franka_set_load_is_kg_metres_and_column_major():
    values = franka_set_load(LOAD)
    assert values["load_mass"] == 1.5 and values["F_x_Cload"] == pytest.approx([0.1, -0.012, 0.08])
    assert len(values["load_inertia"]) == 9
    np.testing.assert_array_equal(np.reshape(values["load_inertia"], (3, 3), order="F"), LOAD.inertia_com_kg_m2)
    call = franka_service_call(LOAD)
    assert call.startswith("ros2 service call /service_server/set_load franka_msgs/srv/SetLoad ")
    request = yaml.safe_load(call.split("SetLoad ", 1)[1].strip('"'))
    assert request == {"mass": 1.5, "center_of_mass": values["F_x_Cload"], "load_inertia": values["load_inertia"]}


def test_the_urdf_with_the_load_is_the_arm_plus_the_load_for_pinocchio():
    setup = iiwa14_setup()
    bare = setup.model(())
    loaded = load_robot_model(with_load(setup.urdf_text, LOAD, "lbr_link_ee"), setup.joint_names, friction=())
    rng = np.random.default_rng(0)
    q, dq, ddq = rng.uniform(-1, 1, (5, 7)), rng.uniform(-1, 1, (5, 7)), rng.uniform(-2, 2, (5, 7))
    expected = regressor(bare, q, dq, ddq) @ nominal_parameters(bare) + payload_regressor(
        bare, "lbr_link_ee", q, dq, ddq) @ link_standard_parameters(LOAD)
    np.testing.assert_allclose(regressor(loaded, q, dq, ddq) @ nominal_parameters(loaded), expected, atol=1e-9)
    assert urdf_fragment(LOAD, "lbr_link_ee").startswith('<joint name="payload_joint" type="fixed">')
    with pytest.raises(ValueError, match="no link 'flange'"):
        with_load(setup.urdf_text, LOAD, "flange")
