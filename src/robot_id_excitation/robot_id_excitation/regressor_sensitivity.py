"""The base regressor of a batch of joint states, and its sensitivity to those states for gradient-based design.

`base_regressor` equals robot_id_model's `base.regressor(regressor(...))` (checked by the tests), built from the
same pinocchio regressor and friction signals but filling only the base columns, since the design evaluates it
thousands of times; its Coulomb column may be smoothed (below). With `payload_columns` it is a load's regressor
(robot_id_model.payload), for a payload excitation.

`state_sensitivity` returns, for a weight G shaped like Yb, S_x[k, i] = Σ G[k] ⊙ ∂Yb[k]/∂x_i for x = q, dq,
ddq. The inertial columns are linear in ddq and quadratic in dq, so central differences with unit steps are
exact there; q uses central differences with a 1e-6 rad step. Friction columns are differentiated
analytically.

The Coulomb column sign(dq) jumps where a sample's velocity changes sign, which makes any criterion of a
sampled trajectory discontinuous in the coefficients. For design, `coulomb_cell_s` replaces it at each sample
by its average over the sample's cell [t − Δt/2, t + Δt/2] with the velocity taken linear there:
clip(dq/(|ddq|·Δt/2), −1, 1). That is continuous, converges to the same integrals as the grid is refined, and
equals sign(dq) wherever the velocity keeps its sign over the cell.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from robot_id_model.base_parameters import BaseParameters
from robot_id_model.parameters import PIN_INDEX
from robot_id_model.payload import frame_placement, to_joint_frame
from robot_id_model.regressor import friction_signals, joint_torque_regressor
from robot_id_model.robot_model import RobotModel

Q_STEP_RAD = 1e-6
REST_SPEED_RAD_S = 1e-9
"""Below this speed a joint is at rest: its Coulomb column is 0, as sign(0), whatever the rounding."""


@dataclass(frozen=True)
class BaseColumns:
    """Where each design column comes from: a linear map of pinocchio's regressor, or a friction signal on a joint
    row. The base parameters' inertial columns are single pinocchio columns; a payload's are its frame's map."""

    inertial: np.ndarray
    """design-column indices that are inertial"""
    pinocchio_map: np.ndarray
    """(10n, len(inertial)): those columns are pinocchio's (n, 10n) joint-torque regressor times this"""
    friction: tuple[tuple[int, int, str], ...]
    """(design column, joint, term) of the friction columns"""
    n_columns: int


def base_columns(robot: RobotModel, base: BaseParameters) -> BaseColumns:
    """The base parameters' columns."""
    inertial, pin_cols, friction = [], [], []
    for col, p in enumerate(base.independent):
        joint, k = divmod(int(p), robot.params_per_joint)
        if k < 10:
            inertial.append(col)
            pin_cols.append(joint * 10 + PIN_INDEX[k])
        else:
            friction.append((col, joint, robot.friction[k - 10]))
    selection = np.zeros((10 * robot.n_joints, len(inertial)))
    selection[pin_cols, np.arange(len(inertial))] = 1.0
    return BaseColumns(np.array(inertial, dtype=int), selection, tuple(friction), base.n_base)


def payload_columns(robot: RobotModel, frame: str) -> BaseColumns:
    """The ten columns of a load on `frame` (robot_id_model.payload), for a payload excitation."""
    joint, rotation, origin_m = frame_placement(robot, frame)
    mapping = np.zeros((10 * robot.n_joints, 10))
    mapping[10 * joint + PIN_INDEX] = to_joint_frame(rotation, origin_m)
    return BaseColumns(np.arange(10), mapping, (), 10)


def _coulomb_sign(dq_rad_s: np.ndarray) -> np.ndarray:
    return np.where(np.abs(dq_rad_s) > REST_SPEED_RAD_S, np.sign(dq_rad_s), 0.0)


def _coulomb_band(ddq_rad_s2: np.ndarray, cell_s: float) -> np.ndarray:
    """Half the velocity change over a sample cell, |ddq|·Δt/2 (zero: no smoothing)."""
    band = np.abs(ddq_rad_s2) * (0.5 * cell_s)
    return np.where(band > REST_SPEED_RAD_S, band, 0.0)


def coulomb_signal(dq_rad_s: np.ndarray, ddq_rad_s2: np.ndarray, cell_s: float | None = None) -> np.ndarray:
    """sign(dq), or with `cell_s` its average over each sample's cell (see the module docstring)."""
    if cell_s is None:
        return _coulomb_sign(dq_rad_s)
    band = _coulomb_band(ddq_rad_s2, cell_s)
    smooth = np.clip(dq_rad_s / np.where(band > 0, band, 1.0), -1.0, 1.0)
    return np.where(band > 0, smooth, _coulomb_sign(dq_rad_s))


def _check_revolute_or_prismatic(robot: RobotModel) -> None:
    if robot.model.nq != robot.n_joints:
        raise ValueError("excitation design needs 1-DOF joints with one coordinate each (no continuous joints)")


def base_regressor(
    robot: RobotModel,
    cols: BaseColumns,
    q_rad: np.ndarray,
    dq_rad_s: np.ndarray,
    ddq_rad_s2: np.ndarray,
    coulomb_cell_s: float | None = None,
) -> np.ndarray:
    """Yb (K, n, b) of K joint states in the columns `cols`; the Coulomb column is sign(dq) unless `coulomb_cell_s`
    is given."""
    _check_revolute_or_prismatic(robot)
    y_pin = joint_torque_regressor(robot, q_rad, dq_rad_s, ddq_rad_s2)
    yb = np.zeros((len(q_rad), robot.n_joints, cols.n_columns))
    yb[:, :, cols.inertial] = y_pin @ cols.pinocchio_map
    signals = friction_signals(dq_rad_s, ddq_rad_s2, coulomb_signal(dq_rad_s, ddq_rad_s2, coulomb_cell_s))
    for col, joint, term in cols.friction:
        yb[:, joint, col] = signals[term][:, joint]
    return yb


def state_sensitivity(
    robot: RobotModel,
    cols: BaseColumns,
    q_rad: np.ndarray,
    dq_rad_s: np.ndarray,
    ddq_rad_s2: np.ndarray,
    weight: np.ndarray,
    coulomb_cell_s: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """S_q, S_dq, S_ddq (each (K, n)): the derivative of Σ weight ⊙ Yb with respect to each joint state."""
    _check_revolute_or_prismatic(robot)
    n = robot.n_joints
    g_pin = weight[:, :, cols.inertial] @ cols.pinocchio_map.T

    def contracted(q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        return np.einsum("kij,kij->k", g_pin, joint_torque_regressor(robot, q, dq, ddq))

    s_q, s_dq, s_ddq = (np.zeros((len(q_rad), n)) for _ in range(3))
    base_value = contracted(q_rad, dq_rad_s, ddq_rad_s2)
    for i in range(n):
        step = np.zeros(n)
        step[i] = Q_STEP_RAD
        plus, minus = contracted(q_rad + step, dq_rad_s, ddq_rad_s2), contracted(q_rad - step, dq_rad_s, ddq_rad_s2)
        s_q[:, i] = (plus - minus) / (2 * Q_STEP_RAD)
        step[i] = 1.0
        s_dq[:, i] = 0.5 * (
            contracted(q_rad, dq_rad_s + step, ddq_rad_s2) - contracted(q_rad, dq_rad_s - step, ddq_rad_s2)
        )
        s_ddq[:, i] = contracted(q_rad, dq_rad_s, ddq_rad_s2 + step) - base_value
    for col, joint, term in cols.friction:
        if term == "FV":
            s_dq[:, joint] += weight[:, joint, col]
        elif term == "IA":
            s_ddq[:, joint] += weight[:, joint, col]
        elif term == "FC" and coulomb_cell_s is not None:
            band = _coulomb_band(ddq_rad_s2[:, joint], coulomb_cell_s)
            inside = (band > 0) & (np.abs(dq_rad_s[:, joint]) < band)
            safe = np.where(inside, band, 1.0)
            w = np.where(inside, weight[:, joint, col], 0.0)
            s_dq[:, joint] += w / safe
            s_ddq[:, joint] -= w * dq_rad_s[:, joint] * np.sign(ddq_rad_s2[:, joint]) / safe**2 * (0.5 * coulomb_cell_s)
    return s_q, s_dq, s_ddq
