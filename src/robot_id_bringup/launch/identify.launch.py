"""ros2 launch robot_id_bringup identify.launch.py robot:=iiwa14 mode:=sim [periods:=5] [trajectory:=FILE]
[output_dir:=DIR] [bag:=BAG (mode replay)]

The nodes and parameters come from robot_id_bringup.graph, the same description the runner
(`robot_id identify`) starts; in replay mode ask the estimator for the bag:
ros2 service call /robot_id/identify_bag robot_id_msgs/srv/IdentifyBag "{bag_path: BAG}".
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from robot_id_bringup.graph import DEFAULT_PERIODS, Run, identify_graph

ARGUMENTS = {
    "robot": ("iiwa14", "robot config: iiwa7, iiwa14, panda, panda_hand or a YAML path"),
    "mode": ("sim", "sim, hardware or replay"),
    "periods": (str(DEFAULT_PERIODS), "excitation periods"),
    "trajectory": ("", "trajectory file (default: the one shipped for the robot)"),
    "output_dir": ("results/run", "results directory (bag, identification)"),
    "bag": ("", "replay: the bag to identify"),
}


def _nodes(context):
    value = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    run = Run(value["robot"], value["mode"], value["output_dir"], int(value["periods"]), value["trajectory"],
              value["bag"])
    return [Node(package=spec.package, executable=spec.executable, name=spec.name, namespace=spec.namespace,
                 parameters=[spec.parameters], output="screen") for spec in identify_graph(run)]


def generate_launch_description() -> LaunchDescription:
    arguments = [DeclareLaunchArgument(name, default_value=default, description=description)
                 for name, (default, description) in ARGUMENTS.items()]
    return LaunchDescription([*arguments, OpaqueFunction(function=_nodes)])
