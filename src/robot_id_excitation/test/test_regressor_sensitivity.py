"""The fast base regressor equals robot_id_model's; its state sensitivity matches finite differences."""

import numpy as np
import pytest

from robot_id_excitation.regressor_sensitivity import (
    base_columns,
    base_regressor,
    coulomb_signal,
    payload_columns,
    state_sensitivity,
)
from robot_id_model import base_parameters, regressor
from robot_id_model.base_parameters import random_states
from robot_id_model.payload import payload_regressor


@pytest.mark.parametrize("robot_name", ["iiwa14", "panda"])
def test_base_regressor_equals_the_model_package(robot_name, request):
    robot = request.getfixturevalue(robot_name)
    base = base_parameters(robot)
    q, dq, ddq = random_states(robot, 30, seed=5)
    fast = base_regressor(robot, base_columns(robot, base), q, dq, ddq)
    assert np.abs(fast - base.regressor(regressor(robot, q, dq, ddq))).max() < 1e-12


def test_payload_columns_are_the_model_packages_payload_regressor(panda):
    q, dq, ddq = random_states(panda, 10, seed=3)
    fast = base_regressor(panda, payload_columns(panda, "fer_link8"), q, dq, ddq)
    assert np.abs(fast - payload_regressor(panda, "fer_link8", q, dq, ddq)).max() < 1e-12


def test_coulomb_signal_is_sign_outside_the_cell_band():
    dq = np.array([-1.0, -0.01, 0.0, 0.004, 0.5])
    ddq = np.array([2.0, 2.0, 0.0, -2.0, 1.0])
    smooth = coulomb_signal(dq, ddq, cell_s=0.01)
    assert np.array_equal(coulomb_signal(dq, ddq), [-1.0, -1.0, 0.0, 1.0, 1.0])
    assert np.allclose(smooth, [-1.0, -1.0, 0.0, 0.4, 1.0])


@pytest.mark.parametrize(("cell_s", "payload"), [(None, False), (0.1, False), (None, True)])
def test_state_sensitivity_matches_finite_differences(panda, cell_s, payload):
    robot = panda
    columns = payload_columns(robot, "fer_link8") if payload else base_columns(robot, base_parameters(robot))
    q, dq, ddq = random_states(robot, 12, seed=7)
    rng = np.random.default_rng(8)
    weight = rng.normal(size=(12, robot.n_joints, columns.n_columns))
    s_q, s_dq, s_ddq = state_sensitivity(robot, columns, q, dq, ddq, weight, coulomb_cell_s=cell_s)

    def value(q_, dq_, ddq_):
        return np.einsum("kib,kib->k", weight, base_regressor(robot, columns, q_, dq_, ddq_, coulomb_cell_s=cell_s))

    h = 1e-6
    for i in range(robot.n_joints):
        e = np.zeros(robot.n_joints)
        e[i] = h
        for analytic, args in ((s_q, lambda s: (q + s, dq, ddq)), (s_dq, lambda s: (q, dq + s, ddq)),
                               (s_ddq, lambda s: (q, dq, ddq + s))):
            numeric = (value(*args(e)) - value(*args(-e))) / (2 * h)
            assert np.abs(analytic[:, i] - numeric).max() < 1e-5 * (1 + np.abs(numeric).max())
