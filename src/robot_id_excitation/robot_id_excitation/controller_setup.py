"""What the excitation node needs from the robot's joint_trajectory_controller (JTC), checked against the
parameters it reads through the controller's ~/get_parameters service (docs/jtc_rules.md).

Every command the node sends ends at rest, so the JTC's default allow_nonzero_velocity_at_trajectory_end: false
takes them. A new command arrives while the previous one still moves the arm; the JTC then starts it from the
measured state unless interpolate_from_desired_state (or Jazzy's deprecated open_loop_control) is true, and the
commanded position would jump by the tracking error at every command: that setting is required.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rcl_interfaces.srv import GetParameters
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import parameter_value_to_python

PARAMETERS = ("joints", "interpolate_from_desired_state", "open_loop_control", "interpolation_method")
"""What the node reads; a parameter the controller does not declare (open_loop_control from Kilted on) reads None."""
ASSUMED = "interpolate_from_desired_state: true, interpolation_method: splines and the robot config's joints"


def controller_node(joint_trajectory_topic: str) -> str:
    """The controller's node name from its ~/joint_trajectory topic (/lbr/joint_trajectory_controller)."""
    return joint_trajectory_topic.rstrip("/").rsplit("/", 1)[0]


def read_parameters(node: Node, controller: str, timeout_s: float) -> dict[str, object | None] | None:
    """PARAMETERS of the controller through its get_parameters service, asked by `node` (None for one it does not
    declare); None when the service does not answer within timeout_s. One request per name: a C++ node answers a
    request that names an undeclared parameter with no values at all."""
    client = node.create_client(GetParameters, f"{controller}/get_parameters")
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    try:
        if not client.wait_for_service(timeout_sec=timeout_s):
            return None
        values: dict[str, object | None] = {}
        for name in PARAMETERS:
            future = client.call_async(GetParameters.Request(names=[name]))
            executor.spin_until_future_complete(future, timeout_sec=timeout_s)
            if not future.done() or future.result() is None:
                return None
            answer = future.result().values
            values[name] = parameter_value_to_python(answer[0]) if answer and answer[0].type else None
        return values
    finally:
        executor.remove_node(node)
        executor.shutdown()
        node.destroy_client(client)


def setup_refusal(controller: str, values: Mapping[str, object | None], joint_names: Sequence[str]) -> str | None:
    """Why the controller, with these parameter values, cannot run the excitation without a jump; None if it can.
    One line naming the parameter and the value to set."""
    joints = values.get("joints")
    if joints is not None and not set(joint_names) <= set(joints):
        missing = [j for j in joint_names if j not in joints]
        return (f"{controller} does not command {missing} (joints: {list(joints)}): set its parameter joints to "
                f"{list(joint_names)}")
    method = values.get("interpolation_method")
    if method is not None and method != "splines":
        return (f"{controller} has interpolation_method '{method}': every point would be a step; set "
                "interpolation_method: splines in its parameter file and restart it")
    if values.get("interpolate_from_desired_state") is not True and values.get("open_loop_control") is not True:
        return (f"{controller} has interpolate_from_desired_state false: each new command would start from the "
                "measured position and the command jump by the tracking error; set interpolate_from_desired_state: "
                "true in its parameter file (read-only: restart the controller)")
    return None


def check_controller(node: Node, joint_trajectory_topic: str, joint_names: Sequence[str], timeout_s: float) -> None:
    """Read the joint trajectory controller's PARAMETERS as `node`: ValueError with setup_refusal's line if they do
    not fit, a warning with what is assumed if the service does not answer within timeout_s."""
    controller = controller_node(joint_trajectory_topic)
    values = read_parameters(node, controller, timeout_s)
    if values is None:
        node.get_logger().warning(f"{controller}/get_parameters did not answer within {timeout_s:g} s: "
                                  f"assuming {ASSUMED} (docs/jtc_rules.md)")
        return
    refusal = setup_refusal(controller, values, joint_names)
    if refusal:
        raise ValueError(refusal)
    node.get_logger().info(f"{controller}: interpolates from its desired state, joints {values['joints']}")
