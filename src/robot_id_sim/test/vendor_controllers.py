"""The joint trajectory controller as each robot stack ships it, for the simulator's tests: franka_ros2 with
robot_id's controller file, and lbr_fri_ros2_stack's configuration (every rule at the controller's default)."""

import pathlib

from robot_id_sim.joint_trajectory_controller import ControllerParameters

FRANKA_FILE = (pathlib.Path(__file__).resolve().parents[2] / "robot_id_bringup" / "config"
               / "franka_joint_trajectory_controller.yaml")
LBR_STACK = {"command_interfaces": ["position"], "state_interfaces": ["position", "velocity"],
             "state_publish_rate": 50.0, "action_monitor_rate": 20.0}
"""lbr_fri_ros2_stack's lbr_ros2_control/config/lbr_controllers.yaml (rolling, 218d723): the joints and these;
every rule at the controller's default."""


def vendor_controller(joint_names: tuple[str, ...]) -> ControllerParameters:
    """The controller as the robot's stack ships it: franka_ros2 with robot_id's file, else the LBR stack's."""
    franka = ControllerParameters.from_yaml(FRANKA_FILE)
    if set(franka.joints) == set(joint_names):
        return franka
    return ControllerParameters.from_ros_parameters({"joints": list(joint_names)} | LBR_STACK)
