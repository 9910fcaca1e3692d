import numpy as np
import pinocchio as pin
import pytest
from conftest import random_arm_urdf

from robot_id_model import load_robot_model, nominal_parameters, parameter_names, regressor, stack
from robot_id_model.base_parameters import random_states
from robot_id_model.parameters import urdf_friction


def _rnea(robot, q, dq, ddq):
    data = robot.model.createData()
    q_pin = robot.configuration(q)
    return np.array([pin.rnea(robot.model, data, q_pin[k], dq[k], ddq[k]) for k in range(len(q))])


@pytest.mark.parametrize(
    "kwargs", [{"seed": 0}, {"seed": 1, "prismatic": 3}, {"seed": 2, "continuous": 1}, {"seed": 5, "gripper": True}]
)
def test_regressor_times_parameters_equals_rnea(kwargs):
    robot = load_robot_model(random_arm_urdf(6, **kwargs), [f"j{j}" for j in range(1, 7)], friction=())
    q, dq, ddq = random_states(robot, 100, seed=11)
    y = regressor(robot, q, dq, ddq)
    assert y.shape == (100, 6, 60)
    np.testing.assert_allclose(y @ nominal_parameters(robot), _rnea(robot, q, dq, ddq), rtol=0, atol=1e-9)


def test_friction_columns_model_viscous_coulomb_offset_and_rotor_inertia():
    robot = load_robot_model(random_arm_urdf(4, seed=7), friction=("FV", "FC", "FO", "IA"))
    q, dq, ddq = random_states(robot, 50, seed=2)
    pi = nominal_parameters(robot)
    names = parameter_names(robot)
    friction = {name: i for i, name in enumerate(names) if name[:2] in ("FV", "FC", "FO", "IA")}
    rng = np.random.default_rng(0)
    for i in friction.values():
        pi[i] = rng.uniform(0.1, 1.0)
    expected = _rnea(robot, q, dq, ddq)
    for j in range(4):
        fv, fc, fo, ia = (pi[friction[f"{t}{j + 1}"]] for t in ("FV", "FC", "FO", "IA"))
        expected[:, j] += fv * dq[:, j] + fc * np.sign(dq[:, j]) + fo + ia * ddq[:, j]
    np.testing.assert_allclose(regressor(robot, q, dq, ddq) @ pi, expected, rtol=0, atol=1e-9)


def test_the_nominal_model_is_rigid_body_and_the_urdf_dynamics_are_read_apart():
    """A URDF's <dynamics> are often placeholders: the nominal π has no friction; urdf_friction reads the tags."""
    robot = load_robot_model(random_arm_urdf(3, seed=7), friction=("FV", "FC"))
    pi = dict(zip(parameter_names(robot), nominal_parameters(robot), strict=True))
    assert pi["FV2"] == pi["FC3"] == 0.0 and pi["M1"] > 0.0
    stated = urdf_friction(robot)
    assert stated[1, 0] == pytest.approx(robot.model.damping[1])
    assert stated[2, 1] == pytest.approx(robot.model.friction[2])
    assert np.all(stated > 0.0)


def test_stack_is_sample_major():
    robot = load_robot_model(random_arm_urdf(3, seed=7))
    y = regressor(robot, *random_states(robot, 4))
    w = stack(y)
    assert w.shape == (12, robot.n_params)
    np.testing.assert_array_equal(w[3:6], y[1])


def test_wrong_shapes_are_refused():
    robot = load_robot_model(random_arm_urdf(3, seed=7))
    with pytest.raises(ValueError, match=r"q_rad must have shape \(K, 3\)"):
        regressor(robot, np.zeros((5, 2)), np.zeros((5, 3)), np.zeros((5, 3)))
    with pytest.raises(ValueError, match="same number of samples"):
        regressor(robot, np.zeros((5, 3)), np.zeros((4, 3)), np.zeros((5, 3)))


def test_ten_thousand_samples_of_a_seven_dof_arm_in_one_call():
    # Its time is a benchmark figure (benchmarks/model.py, regressor_10k_s), not a test.
    robot = load_robot_model(random_arm_urdf(7, seed=9), friction=())
    q, dq, ddq = random_states(robot, 10_000, seed=1)
    y = regressor(robot, q, dq, ddq)
    assert y.shape == (10_000, 7, 70)
    every = slice(None, None, 500)
    np.testing.assert_allclose(y[every] @ nominal_parameters(robot), _rnea(robot, q[every], dq[every], ddq[every]),
                               rtol=0, atol=1e-9)
