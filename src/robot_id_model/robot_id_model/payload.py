"""A rigid load fixed to a frame of the arm (a tool on the flange): its ten inertial parameters in that frame and the
joint torques they cause.

The parameters are the standard ones of one body, [M, MX, MY, MZ, XX, XY, XZ, YY, YZ, ZZ] (Xu et al. 2020, eq. 14),
expressed in the load frame F: mass, first moments m·c and the inertia about F's origin in F's axes. The regressor is
the arm's own for the body of F's parent joint (pinocchio.computeJointTorqueRegressor), mapped from F to that joint's
frame by the parallel-axis theorem and a rotation, a linear map of the ten parameters.
"""

from __future__ import annotations

import numpy as np

from robot_id_model.parameters import PIN_INDEX
from robot_id_model.physical import inertia_matrix, inertia_six
from robot_id_model.regressor import joint_torque_regressor
from robot_id_model.robot_model import ModelError, RobotModel


def frame_placement(robot: RobotModel, frame: str) -> tuple[int, np.ndarray, np.ndarray]:
    """(index of the arm joint that carries `frame`, R, p): F's axes and origin in that joint's frame."""
    model = robot.model
    if not model.existFrame(frame):
        raise ModelError(f"no frame named '{frame}' in the URDF")
    placement = model.frames[model.getFrameId(frame)]
    joint = placement.parentJoint if hasattr(placement, "parentJoint") else placement.parent
    if joint == 0:
        raise ModelError(f"frame '{frame}' is not carried by an arm joint")
    return joint - 1, np.array(placement.placement.rotation), np.array(placement.placement.translation)


def _skew(v: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def to_joint_frame(rotation: np.ndarray, origin_m: np.ndarray) -> np.ndarray:
    """(10, 10) A with π_J = A·π_F: a body's standard parameters in frame F to those in a frame J where F has axes
    `rotation` and origin `origin_m`. With h = m·c and I about the origin: h_J = R·h_F + m·p and
    I_J = R·I_F·Rᵀ − m·[p]×² − [p]×[R·h_F]× − [R·h_F]×[p]× (the parallel-axis theorem for every mass element at
    r_J = p + R·r_F)."""
    a = np.empty((10, 10))
    for k, e in enumerate(np.eye(10)):
        m, h_j = e[0], rotation @ e[1:4] + e[0] * origin_m
        rh, sp = _skew(rotation @ e[1:4]), _skew(origin_m)
        inertia = rotation @ inertia_matrix(e[4:10]) @ rotation.T - m * sp @ sp - sp @ rh - rh @ sp
        a[:, k] = [m, *h_j, *inertia_six(inertia)]
    return a


def placement_in(robot: RobotModel, frame: str, reference: str) -> tuple[np.ndarray, np.ndarray]:
    """(R, p): `frame`'s axes and origin in `reference`, two frames of the URDF on the same arm body (the TCP of a
    tool in the flange frame); ModelError when a joint moves between them."""
    joint, rotation, origin_m = frame_placement(robot, frame)
    joint_ref, rotation_ref, origin_ref_m = frame_placement(robot, reference)
    if joint != joint_ref:
        raise ModelError(f"'{frame}' and '{reference}' are on different arm bodies ({robot.joint_names[joint]} "
                         f"moves '{frame}', {robot.joint_names[joint_ref]} '{reference}')")
    return rotation_ref.T @ rotation, rotation_ref.T @ (origin_m - origin_ref_m)


def parameters_in(robot: RobotModel, parameters: np.ndarray, frame: str, reference: str) -> np.ndarray:
    """(10,) a load's standard parameters in `frame` expressed in `reference` (placement_in, to_joint_frame)."""
    return to_joint_frame(*placement_in(robot, frame, reference)) @ parameters


def payload_regressor(robot: RobotModel, frame: str, q_rad: np.ndarray, dq_rad_s: np.ndarray,
                      ddq_rad_s2: np.ndarray) -> np.ndarray:
    """(K, n, 10): τ_k = Y[k] @ π_F, the joint torques of a load with standard parameters π_F in `frame`."""
    joint, rotation, origin_m = frame_placement(robot, frame)
    y_pin = joint_torque_regressor(robot, q_rad, dq_rad_s, ddq_rad_s2)
    y_joint = y_pin[:, :, 10 * joint + PIN_INDEX]  # that joint's body, in our parameter order
    return y_joint @ to_joint_frame(rotation, origin_m)
