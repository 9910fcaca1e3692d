"""Joint-torque regressor Y(q, dq, ddq) with τ = Y·π (Xu et al. 2020, eq. 2), friction columns included."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from robot_id_model.parameters import PIN_INDEX, friction_columns, inertial_columns
from robot_id_model.robot_model import RobotModel


def _as_batch(x: np.ndarray, n: int, label: str) -> np.ndarray:
    x = np.atleast_2d(np.asarray(x, dtype=float))
    if x.ndim != 2 or x.shape[1] != n:
        raise ValueError(f"{label} must have shape (K, {n}), got {np.shape(x)}")
    return x


def regressor(robot: RobotModel, q_rad: np.ndarray, dq_rad_s: np.ndarray, ddq_rad_s2: np.ndarray) -> np.ndarray:
    """Regressor of K samples, shape (K, n, p): τ_k = Y[k] @ π for every sample k.

    Inertial columns come from pinocchio.computeJointTorqueRegressor (reordered to Xu et al. 2020, eq. 3);
    friction columns are dq (FV), sign(dq) (FC), 1 (FO) and ddq (IA) on the joint's own row.
    """
    n = robot.n_joints
    q = _as_batch(q_rad, n, "q_rad")
    dq = _as_batch(dq_rad_s, n, "dq_rad_s")
    ddq = _as_batch(ddq_rad_s2, n, "ddq_rad_s2")
    if not len(q) == len(dq) == len(ddq):
        raise ValueError(f"q, dq, ddq must have the same number of samples ({len(q)}, {len(dq)}, {len(ddq)})")
    model, data = robot.model, robot.model.createData()
    q_pin = robot.configuration(q)
    y_pin = np.empty((len(q), n, 10 * n))
    for k in range(len(q)):
        y_pin[k] = pin.computeJointTorqueRegressor(model, data, q_pin[k], dq[k], ddq[k])

    y = np.zeros((len(q), n, robot.n_params))
    pin_cols = (np.arange(n)[:, None] * 10 + PIN_INDEX[None, :]).ravel()
    y[:, :, inertial_columns(robot).ravel()] = y_pin[:, :, pin_cols]
    signals = {"FV": dq, "FC": np.sign(dq), "FO": np.ones_like(dq), "IA": ddq}
    rows = np.arange(n)
    for t, term in enumerate(robot.friction):
        y[:, rows, friction_columns(robot)[:, t]] = signals[term]
    return y


def stack(y: np.ndarray) -> np.ndarray:
    """Stack a (K, n, p) regressor into the (K·n, p) observation matrix of Xu et al. 2020, eq. (5)."""
    return y.reshape(-1, y.shape[-1])
