"""ros2 launch robot_id_bringup identify.launch.py robot:=iiwa14 mode:=sim [periods:=5] [trajectory:=FILE]
[output_dir:=DIR] [bag:=BAG (mode replay)] [friction_sweep:=BAG[,BAG]] [confirm:=true (mode hardware)]
[payload:=true [arm:=JSON | baseline:=BAG[,BAG]]] [record_only:=true] [sim_load:=SEED (mode sim)]

In hardware mode the excitation node logs its plan and waits, and nothing moves, until its parameter confirm is
true: set it then (ros2 param set /excitation confirm true), or give confirm:=true to skip the wait.

A friction-sweep trajectory (trajectory:=iiwa14_friction_sweep) only records; give its bag to the next run as
friction_sweep:=DIR/bag.

payload:=true runs the payload excitation shipped for the robot and identifies the load on the flange; its baseline
(the same excitation without the load) is a run with payload:=true record_only:=true, given as baseline:=DIR/bag.

The nodes and parameters come from robot_id_bringup.graph, the same description the runner
(`robot_id identify`) starts; in replay mode ask the estimator for the bag:
ros2 service call /robot_id/identify_bag robot_id_msgs/srv/IdentifyBag "{bag_path: BAG}".
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from robot_id_bringup.graph import DEFAULT_PERIODS, SWEEP_PERIODS, Run, identify_graph
from robot_id_cli.command_line import robot_option_help

ARGUMENTS = {
    "robot": ("iiwa14", robot_option_help()),
    "mode": ("sim", "sim, hardware or replay"),
    "periods": ("0", f"trajectory periods (0: {DEFAULT_PERIODS} of an excitation, {SWEEP_PERIODS} of a sweep)"),
    "trajectory": ("", "trajectory file (default: the one shipped for the robot)"),
    "output_dir": ("results/run", "results directory (bag, identification)"),
    "bag": ("", "replay: the bag to identify"),
    "friction_sweep": ("", "comma-separated bags of friction sweeps for the Stribeck friction (Luo et al. 2024)"),
    "confirm": ("false", "hardware: true lets the excitation node move without waiting for its parameter confirm"),
    "namespace": ("", "the graph's namespace (one arm's graph each: several in one ROS domain)"),
    "payload": ("false", "true: run the payload excitation and identify the load on the flange, not the arm"),
    "arm": ("", "payload: identification.json of the arm without the load (default: the URDF's arm)"),
    "baseline": ("", "payload: comma-separated bags of the payload excitation without the load"),
    "record_only": ("false", "true: record the trajectory and identify nothing (e.g. a payload baseline)"),
    "sim_load": ("-1", "sim: the simulated arm carries the load of this seed on its flange (-1: none)"),
}


def _nodes(context):
    value = {name: LaunchConfiguration(name).perform(context) for name in ARGUMENTS}
    flags = {name: _flag(name, value[name]) for name in ("confirm", "payload", "record_only")}
    run = Run(value["robot"], value["mode"], value["output_dir"], int(value["periods"]), value["trajectory"],
              value["bag"], _bags(value["friction_sweep"]), confirm=flags["confirm"], namespace=value["namespace"],
              payload=flags["payload"], payload_arm=value["arm"], payload_baselines=_bags(value["baseline"]),
              record_only=flags["record_only"], sim_load_seed=int(value["sim_load"]))
    return [Node(package=spec.package, executable=spec.executable, name=spec.name, namespace=spec.namespace,
                 parameters=[spec.parameters], remappings=list(spec.remappings), output="screen")
            for spec in identify_graph(run)]


def _flag(name: str, text: str) -> bool:
    if text.lower() not in ("true", "false"):
        raise ValueError(f"{name} must be true or false, not '{text}'")
    return text.lower() == "true"


def _bags(text: str) -> tuple[str, ...]:
    return tuple(b for b in text.split(",") if b)


def generate_launch_description() -> LaunchDescription:
    arguments = [DeclareLaunchArgument(name, default_value=default, description=description)
                 for name, (default, description) in ARGUMENTS.items()]
    return LaunchDescription([*arguments, OpaqueFunction(function=_nodes)])
