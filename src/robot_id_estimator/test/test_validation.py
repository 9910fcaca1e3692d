"""Validation figures and the momentum observer (Xu et al. 2020, IV-F) against pinocchio's own dynamics."""

import numpy as np
import pinocchio as pin
import pytest
from estimator_synthetic import IIWA14

from robot_id_estimator.validate import robot_mismatch, worse_than_no_model
from robot_id_estimator.validation.prediction_errors import (
    collision_thresholds,
    correlation,
    momentum_observer,
    momentum_regressors,
    predict_torque,
    rms_error,
    total_rms_error,
)
from robot_id_lab.synthetic import random_motion, urdf_with_friction
from robot_id_model import base_parameters, load_robot_config, regressor
from robot_id_model.base_parameters import random_states
from robot_id_model.parameters import friction_columns


@pytest.fixture(scope="module")
def arm():
    """iiwa14 with rotor inertia (IA) too, so the momentum includes it."""
    robot = load_robot_config(IIWA14).load_model(("FV", "FC", "FO", "IA"))
    return robot, base_parameters(robot), urdf_with_friction(robot)


def test_momentum_regressors_give_m_dq_and_coriolis_transpose_minus_gravity(arm):
    robot, base, pi = arm
    beta = base.values(pi)
    q, dq, _ = random_states(robot, 30, seed=3)
    yp, yn = momentum_regressors(robot, base.independent, q, dq)
    fv, fc, fo, ia = (pi[friction_columns(robot)[:, t]] for t in range(4))
    model = robot.model.copy()  # the inertials of π are the URDF's; the rotor inertia goes on the diagonal
    model.armature[:] = ia
    data = model.createData()
    for k in range(len(q)):
        mass = pin.crba(model, data, q[k])
        mass = np.triu(mass) + np.triu(mass, 1).T
        coriolis = pin.computeCoriolisMatrix(model, data, q[k], dq[k])
        gravity = pin.computeGeneralizedGravity(model, data, q[k])
        friction = fv * dq[k] + fc * np.sign(dq[k]) + fo
        np.testing.assert_allclose(yp[k] @ beta, mass @ dq[k], atol=1e-10)
        np.testing.assert_allclose(yn[k] @ beta, coriolis.T @ dq[k] - gravity - friction, atol=1e-6)


def test_observer_residual_is_zero_without_and_follows_an_external_torque(arm):
    robot, base, pi = arm
    beta = base.values(pi)
    t = np.arange(0.0, 10.0, 0.002)
    q, dq, ddq = random_motion(robot, 10.0, 5, t, seed=2)
    tau = regressor(robot, q, dq, ddq) @ pi
    yp, yn = momentum_regressors(robot, base.independent, q, dq)
    p, n = yp @ beta, yn @ beta
    gain = 50.0
    r_free = momentum_observer(t, tau, p, n, gain)
    assert np.max(np.abs(r_free)) < 1e-3 * np.max(np.abs(tau))
    # a collision: 5 Nm external torque on joint 4 from t = 4 s; the joint torque balances it
    external = np.zeros_like(tau)
    external[t >= 4.0, 3] = 5.0
    r = momentum_observer(t, tau - external, p, n, gain)
    settled = t >= 4.0 + 5.0 / gain
    np.testing.assert_allclose(r[settled, 3], 5.0, atol=0.05)
    one_tau = np.argmin(np.abs(t - (4.0 + 1.0 / gain)))
    assert r[one_tau, 3] == pytest.approx(5.0 * (1.0 - np.exp(-1.0)), rel=0.03)  # first order at K_O
    assert np.max(np.abs(r[:, [0, 1, 2, 4, 5, 6]])) < 0.05


def test_thresholds_rms_and_correlation():
    residual = np.array([[0.1, -0.3], [-0.4, 0.2]])
    np.testing.assert_allclose(collision_thresholds(residual, 1.25), [0.5, 0.375])
    measured = np.array([[1.0, 2.0], [2.0, 4.0], [3.0, 6.0], [4.0, 8.0]])
    predicted = measured + np.array([[0.1, 0.0], [-0.1, 0.0], [0.1, 0.0], [-0.1, 0.0]])
    np.testing.assert_allclose(rms_error(measured, predicted), [0.1, 0.0])
    assert total_rms_error(measured, predicted) == pytest.approx(np.sqrt(0.005))
    np.testing.assert_allclose(correlation(measured, 2.0 * measured + 1.0), [1.0, 1.0])
    assert np.isnan(correlation(np.ones((3, 1)), np.arange(3.0)[:, None]))[0]
    yb = np.ones((2, 1, 3))
    assert predict_torque(yb, np.array([1.0, np.nan, 2.0]))[0, 0] == 3.0


def test_a_joint_every_set_predicts_worse_than_zero_torque_is_warned_about():
    """A wrist joint's flipped sign passes the input check (lightly loaded) but no model of the robot predicts a
    torque worse than zero would: validate says so, naming the joint."""
    torque_rms = np.array([10.0, 2.0])
    rms = {"base": np.array([0.5, 2.84]), "physical": np.array([0.6, 2.9]), "urdf": np.array([3.0, 1.0])}
    (warning,) = worse_than_no_model(rms, torque_rms, ("A1", "A6"))
    assert warning.startswith("every identified set predicts A6 (142 %) worse than zero torque would")
    assert "flipped" in warning
    rms["physical"] = np.array([0.6, 1.5])  # one set predicts it: no warning
    assert worse_than_no_model(rms, torque_rms, ("A1", "A6")) == []


def test_data_the_urdf_model_predicts_better_on_most_joints_are_asked_about():
    """Data of another robot or payload: the identified base set predicts them worse than the nominal URDF model on
    most joints (4 of 7 here); on 3 of 7 (noise, a joint the data barely excite) nothing is said."""
    names = tuple(f"A{j}" for j in range(1, 8))
    urdf = np.ones(7)
    base = np.array([1.5, 0.5, 1.2, 0.4, 1.1, 0.3, 1.01])  # worse on A1, A3, A5, A7
    (warning,) = robot_mismatch({"base": base, "urdf": urdf}, names)
    assert warning == ("the identified model predicts these data worse than the nominal URDF model on A1, A3, A5, "
                       "A7: are they from the same robot, tool and payload as the identification data?")
    base[6] = 0.99
    assert robot_mismatch({"base": base, "urdf": urdf}, names) == []
