"""Joint-torque regressor Y(q, dq, ddq) with τ = Y·π (Xu et al. 2020, eq. 2), friction columns included."""

from __future__ import annotations

import numpy as np

from robot_id_model.parameters import PIN_INDEX, friction_columns, inertial_columns
from robot_id_model.robot_model import RobotModel


def _as_batch(x: np.ndarray, n: int, label: str) -> np.ndarray:
    x = np.atleast_2d(np.asarray(x, dtype=float))
    if x.ndim != 2 or x.shape[1] != n:
        raise ValueError(f"{label} must have shape (K, {n}), got {np.shape(x)}")
    return x


def joint_torque_regressor(robot: RobotModel, q_rad: np.ndarray, dq_rad_s: np.ndarray,
                           ddq_rad_s2: np.ndarray) -> np.ndarray:
    """pinocchio.computeJointTorqueRegressor of K samples, (K, n, 10n) in pinocchio's parameter order, no
    friction; the one loop over pinocchio that every regressor here is built from."""
    import pinocchio as pin  # here, not at the top: robot_id_model's imports stay light for the command lines

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
    return y_pin


def friction_signals(dq_rad_s: np.ndarray, ddq_rad_s2: np.ndarray,
                     coulomb: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The friction columns' signals per joint: dq (FV), sign(dq) or `coulomb` (FC), 1 (FO), ddq (IA)."""
    return {"FV": dq_rad_s, "FC": np.sign(dq_rad_s) if coulomb is None else coulomb,
            "FO": np.ones_like(dq_rad_s), "IA": ddq_rad_s2}


def regressor(robot: RobotModel, q_rad: np.ndarray, dq_rad_s: np.ndarray, ddq_rad_s2: np.ndarray) -> np.ndarray:
    """Regressor of K samples, shape (K, n, p): τ_k = Y[k] @ π for every sample k.

    The samples are in time order where a Coulomb law is path-dependent (presliding: a state of the path).
    Inertial columns come from pinocchio.computeJointTorqueRegressor (reordered to Xu et al. 2020, eq. 3);
    friction columns are dq (FV), the robot's Coulomb law (FC: sign(dq) or a law of coulomb_laws), 1 (FO) and ddq
    (IA) on the joint's own row.
    """
    n = robot.n_joints
    y_pin = joint_torque_regressor(robot, q_rad, dq_rad_s, ddq_rad_s2)
    dq = _as_batch(dq_rad_s, n, "dq_rad_s")
    y = np.zeros((len(y_pin), n, robot.n_params))
    pin_cols = (np.arange(n)[:, None] * 10 + PIN_INDEX[None, :]).ravel()
    y[:, :, inertial_columns(robot).ravel()] = y_pin[:, :, pin_cols]
    signals = friction_signals(dq, _as_batch(ddq_rad_s2, n, "ddq_rad_s2"),
                               robot.coulomb_signal(_as_batch(q_rad, n, "q_rad"), dq))
    rows = np.arange(n)
    for t, term in enumerate(robot.friction):
        y[:, rows, friction_columns(robot)[:, t]] = signals[term]
    return y


def stack(y: np.ndarray) -> np.ndarray:
    """Stack a (K, n, p) regressor into the (K·n, p) observation matrix of Xu et al. 2020, eq. (5)."""
    return y.reshape(-1, y.shape[-1])
