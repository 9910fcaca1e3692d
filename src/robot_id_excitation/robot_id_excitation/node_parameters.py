"""The excitation node's parameters: names, defaults, descriptions and ranges (`ros2 param describe` shows them);
all but `confirm` are read once at start-up and therefore read-only."""

from __future__ import annotations

import math

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor

from robot_id_excitation.criteria import CRITERIA
from robot_id_excitation.fourier import KINDS
from robot_id_model.robot_model import DEFAULT_FRICTION, FRICTION_TERMS

MODES = ("sim", "hardware")


def _descriptor(description: str, *, floats: tuple[float, float] | None = None, ints: tuple[int, int] | None = None,
                read_only: bool = True, constraints: str = "") -> ParameterDescriptor:
    """A parameter descriptor with an inclusive range of floats or integers (step 1)."""
    descriptor = ParameterDescriptor(description=description, read_only=read_only,
                                     additional_constraints=constraints)
    if floats is not None:
        descriptor.floating_point_range = [FloatingPointRange(from_value=floats[0], to_value=floats[1])]
    if ints is not None:
        descriptor.integer_range = [IntegerRange(from_value=ints[0], to_value=ints[1], step=1)]
    return descriptor


def parameters() -> dict[str, tuple[object, ParameterDescriptor]]:
    """Name: (default, descriptor) of every parameter; new descriptors on each call (rclpy fills them in)."""
    return {
        "robot": ("", _descriptor("robot config: a path or an installed name such as iiwa14 (required)")),
        "trajectory_file": ("", _descriptor("trajectory file, or a shipped name such as iiwa14; empty: design one "
                                            "on start-up with the design.* parameters")),
        "num_periods": (5, _descriptor("periods to stream", ints=(1, 10_000))),
        "mode": ("sim", _descriptor("sim, or hardware (nothing moves until confirm is true)",
                                    constraints="one of " + ", ".join(MODES))),
        "confirm": (False, _descriptor("hardware mode: set to true to let the arm move", read_only=False)),
        "state_timeout_s": (0.2, _descriptor("joint states older than this are stale (s)", floats=(0.001, 10.0))),
        "max_start_error_rad": (0.02, _descriptor("largest distance from the start pose before the excitation (rad)",
                                                  floats=(0.0, math.pi))),
        "max_tracking_error_rad": (0.3, _descriptor("hold when a joint is further from the commanded position "
                                                    "(rad; 0: off)", floats=(0.0, math.pi))),
        "start_delay_s": (1.0, _descriptor("wait after the first joint state before moving (s)", floats=(0.0, 60.0))),
        "approach_speed_rad_s": (0.2, _descriptor("peak joint speed of the approach to the start pose (rad/s)",
                                                  floats=(0.001, 10.0))),
        "approach_acceleration_rad_s2": (0.5, _descriptor("peak joint acceleration of the approach (rad/s²)",
                                                          floats=(0.001, 100.0))),
        "settle_s": (0.5, _descriptor("wait after the approach and after the last period (s)", floats=(0.0, 60.0))),
        "rate_hz": (100.0, _descriptor("points per second of a command", floats=(1.0, 1000.0))),
        "lead_s": (0.1, _descriptor("send a command this long before its first point is due (s)", floats=(0.0, 5.0))),
        "overlap_s": (0.5, _descriptor("each command starts this long before the previous one ends (s)",
                                       floats=(0.0, 10.0))),
        "max_chunk_s": (30.0, _descriptor("longest command; longer periods are sent in pieces (s)",
                                          floats=(0.1, 3600.0))),
        "max_step_gap_s": (0.5, _descriptor("hold when two steps are further apart on the node's clock: a leap of the "
                                            "clock or a stall (s; 0: off, only in sim mode)", floats=(0.0, 60.0))),
        "ack_name": ("", _descriptor("sim: acknowledge each step on robot_id/sim_ack under this name, so that a "
                                     "lockstep simulation waits for this node (empty: no acknowledgements)")),
        "realtime_priority": (0, _descriptor(
            "SCHED_FIFO priority of the node's threads but the planning one (0: normal scheduling), so that load on "
            "the machine does not starve the steps that watch the arm, nor the middleware's receipt of the joint "
            "states; refused by the system, it warns and runs without",
            ints=(0, 99))),
        "monitor_commands": (True, _descriptor("check every command message independently before it is sent "
                                               "(command_check.py); hold instead of sending one that fails")),
        "design.kind": ("modified_fourier", _descriptor("trajectory kind of a design",
                                                        constraints="one of " + ", ".join(KINDS))),
        "design.harmonics": (5, _descriptor("harmonics of a design", ints=(1, 50))),
        "design.base_frequency_hz": (0.05, _descriptor("base frequency of a design (Hz)", floats=(0.001, 10.0))),
        "design.criterion": ("cond", _descriptor("criterion of a design", constraints="one of " + ", ".join(CRITERIA))),
        "design.starts": (4, _descriptor("multi-start count of a design", ints=(1, 1000))),
        "design.seed": (0, _descriptor("random seed of a design", ints=(0, 2**31 - 1))),
        "design.time_limit_s": (300.0, _descriptor("time limit of a design (s)", floats=(1.0, 86_400.0))),
        "design.position_margin_rad": (0.1, _descriptor("margin inside the position limits of a design (rad)",
                                                        floats=(0.0, 1.0))),
        "design.velocity_scale": (1.0, _descriptor("fraction of the velocity limits a design may use",
                                                   floats=(0.01, 1.0))),
        "design.friction": (list(DEFAULT_FRICTION), _descriptor(
            "friction terms of the robot model (torque checks, design)",
            constraints="from " + ", ".join(FRICTION_TERMS))),
    }
