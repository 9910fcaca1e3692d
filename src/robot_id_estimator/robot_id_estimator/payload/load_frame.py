"""The identified load in the frame the robot's controller takes a load in (the robot config's load_frame, else its
flange_frame): the load is identified in whatever frame suits the motion (the Franka Hand's TCP, fer_hand_tcp), and
KUKA's load data and Franka's setLoad want it in the flange frame (KUKA: the flange, lbr_link_ee of lbr_description;
Franka: the flange F, fer_link8 / fr3_link8 of franka_description). The ten parameters are carried over by the
parallel-axis theorem and the rotation between the two frames of the URDF (robot_id_model.payload.parameters_in).

In: the estimate in its frame, the two frame names and the arm's model. Out: ExportedLoad, or why there is none.
"""

from __future__ import annotations

from dataclasses import dataclass

from robot_id_estimator.payload.estimate import PayloadEstimate
from robot_id_estimator.payload.principal_axes import PrincipalAxes
from robot_id_model.payload import frame_placement, parameters_in, placement_in
from robot_id_model.physical import LinkInertial, link_from_standard
from robot_id_model.robot_model import RobotModel

SET_LOAD_WHEN = ("libfranka's Robot::setLoad and franka_ros2's /service_server/set_load work only while the robot is "
                 "idle: no motion generator or controller running (franka_ros2: an active controller claiming a "
                 "command interface puts the robot in move mode, where the call fails); stop or deactivate the "
                 "controller, call it, start the controller again. F_x_Cload is in the flange frame F (the centre of "
                 "the flange surface, z along joint 7's axis: fer_link8, fr3_link8), not in the end effector frame "
                 "NE/EE. The load is what the end effector carries: with the Franka Hand, the hand's own mass, CoM "
                 "and inertia are the end effector's, set in Desk, and setLoad is for what the hand holds")
"""When and for what Franka's setLoad is used (payload.yaml, docs/real_robots.md)."""


@dataclass(frozen=True)
class ExportedLoad:
    frame: str
    """The load frame: KUKA's flange, Franka's flange F."""
    inertial: LinkInertial
    """Mass, CoM and inertia about the CoM in the load frame's axes."""
    axes: PrincipalAxes
    """The principal axes in the load frame (KUKA's A B C and their spread there)."""


def exported_load(robot: RobotModel, estimate: PayloadEstimate, frame: str, load_frame: str
                  ) -> tuple[ExportedLoad | None, str]:
    """The load identified in `frame` as the controller takes it in `load_frame`, or None and why not (the two
    frames on different arm bodies: a load on link 6 is not one on the flange). ModelError when the URDF has no
    such frame."""
    joint, load_joint = frame_placement(robot, frame)[0], frame_placement(robot, load_frame)[0]
    if joint != load_joint:
        return None, (f"no KUKA load data or Franka setLoad values: the load was identified on '{frame}', which "
                      f"{robot.joint_names[joint]} moves, and the robot takes a load on '{load_frame}', which "
                      f"{robot.joint_names[load_joint]} moves (the config's load_frame, else its flange_frame)")
    rotation, _ = placement_in(robot, frame, load_frame)
    values = parameters_in(robot, estimate.values, frame, load_frame)
    return ExportedLoad(load_frame, link_from_standard(values), estimate.axes_in(rotation)), ""
