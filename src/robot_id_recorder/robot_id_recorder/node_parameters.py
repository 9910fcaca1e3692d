"""The recorder node's parameters, with descriptions and ranges (`ros2 param describe`); read once at start-up."""

from __future__ import annotations

import datetime
import pathlib

from rclpy.parameter import Parameter

from robot_id_contract.parameters import ParameterTable, descriptor
from robot_id_recorder.bag_writer import STORAGES

BAG_DIRECTORY = "robot_id_bags"


def default_bag_path(robot: str) -> pathlib.Path:
    """robot_id_bags/<robot>_<UTC date and time> in the working directory."""
    now = datetime.datetime.now(datetime.UTC).strftime("%Y%m%d_%H%M%S")
    return pathlib.Path(BAG_DIRECTORY) / f"{robot}_{now}"



def parameters() -> ParameterTable:
    """Name: (default, descriptor); a Parameter.Type default declares a list parameter that is empty unless set."""
    return {
        "robot": ("iiwa14", descriptor("robot config: a path or an installed name (joint states topic and rate)")),
        "bag_path": ("", descriptor(f"bag directory to create (empty: {BAG_DIRECTORY}/<robot>_<UTC time>)")),
        "storage": ("mcap", descriptor("bag storage", constraints="one of " + ", ".join(STORAGES))),
        "extra_topics": (Parameter.Type.STRING_ARRAY, descriptor(
            "more topics as topic:pkg/msg/Type, e.g. /lbr/state:lbr_fri_idl/msg/LBRState (recorded when the type "
            "is installed)")),
        "rate_hz": (0.0, descriptor("joint states per second expected (0: the robot config's); the period index "
                                     "uses the rate measured from their first second, warning when it differs by "
                                     "more than 10 %", floats=(0.0, 100_000.0))),
        "flush_period_s": (1.0, descriptor("longest time data stay in memory before they are on disk (s)",
                                            floats=(0.01, 60.0))),
        "ack_name": ("recorder", descriptor("name under which joint states are acknowledged to a lockstep "
                                             "simulation on robot_id/sim_ack (empty: none)")),
        "exit_when_done": (False, descriptor("end the node once the bag is closed (default: stay up, idle)")),
        "realtime_priority": (0, descriptor(
            "SCHED_FIFO priority of the node's threads (0: normal scheduling), so that load on the machine does not "
            "make it miss joint states; refused by the system, it warns and runs without", ints=(0, 99))),
    }

