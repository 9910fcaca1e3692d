"""The excitation node's parameters: names, defaults, descriptions and ranges (`ros2 param describe` shows them);
all but `confirm` are read once at start-up and therefore read-only."""

from __future__ import annotations

import math

from robot_id_contract.parameters import ParameterTable, descriptor
from robot_id_excitation.controller_setup import ASSUMED
from robot_id_excitation.criteria import CRITERIA
from robot_id_excitation.fourier import KINDS
from robot_id_model.robot_model import DEFAULT_FRICTION, FRICTION_TERMS

MODES = ("sim", "hardware")


def parameters() -> ParameterTable:
    """Name: (default, descriptor) of every parameter; new descriptors on each call (rclpy fills them in)."""
    return {**_run_parameters(), **_design_parameters()}


def _design_parameters() -> ParameterTable:
    """The design.* parameters: how a trajectory is designed on start-up when no trajectory_file is given."""
    return {
        "design.kind": ("modified_fourier", descriptor("trajectory kind of a design",
                                                        constraints="one of " + ", ".join(KINDS))),
        "design.harmonics": (5, descriptor("harmonics of a design", ints=(1, 50))),
        "design.base_frequency_hz": (0.05, descriptor("base frequency of a design (Hz)", floats=(0.001, 10.0))),
        "design.criterion": ("cond", descriptor("criterion of a design", constraints="one of " + ", ".join(CRITERIA))),
        "design.starts": (4, descriptor("multi-start count of a design", ints=(1, 1000))),
        "design.seed": (0, descriptor("random seed of a design", ints=(0, 2**31 - 1))),
        "design.time_limit_s": (300.0, descriptor("time limit of a design (s)", floats=(1.0, 86_400.0))),
        "design.position_margin_rad": (0.1, descriptor("margin inside the position limits of a design (rad)",
                                                        floats=(0.0, 1.0))),
        "design.velocity_scale": (1.0, descriptor("fraction of the velocity limits a design may use",
                                                   floats=(0.01, 1.0))),
        "design.friction": (list(DEFAULT_FRICTION), descriptor(
            "friction terms of the robot model (torque checks, design)",
            constraints="from " + ", ".join(FRICTION_TERMS))),
    }


def _run_parameters() -> ParameterTable:
    """What the node runs and how it commands and watches the arm."""
    return {
        "robot": ("", descriptor("robot config: a path or an installed name such as iiwa14 (required)")),
        "trajectory_file": ("", descriptor("trajectory file, or a shipped name such as iiwa14; empty: design one "
                                            "on start-up with the design.* parameters")),
        "num_periods": (5, descriptor("periods to stream", ints=(1, 10_000))),
        "mode": ("sim", descriptor("sim, or hardware (nothing moves until confirm is true)",
                                    constraints="one of " + ", ".join(MODES))),
        "confirm": (False, descriptor("hardware mode: set to true to let the arm move", read_only=False)),
        "state_timeout_s": (0.2, descriptor("joint states older than this are stale (s)", floats=(0.001, 10.0))),
        "max_start_error_rad": (0.02, descriptor("largest distance from the start pose before the excitation (rad)",
                                                  floats=(0.0, math.pi))),
        "max_tracking_error_rad": (0.3, descriptor("hold when a joint is further from the commanded position "
                                                    "(rad; 0: off)", floats=(0.0, math.pi))),
        "start_delay_s": (1.0, descriptor("wait after the first joint state before moving (s)", floats=(0.0, 60.0))),
        "approach_speed_rad_s": (0.2, descriptor("peak joint speed of the approach to the start pose (rad/s)",
                                                  floats=(0.001, 10.0))),
        "approach_acceleration_rad_s2": (0.5, descriptor("peak joint acceleration of the approach (rad/s²)",
                                                          floats=(0.001, 100.0))),
        "settle_s": (0.5, descriptor("wait after the approach and after the last period (s)", floats=(0.0, 60.0))),
        "rate_hz": (100.0, descriptor("points per second of a command", floats=(1.0, 1000.0))),
        "lead_s": (0.1, descriptor("send a command this long before its first point is due (s)", floats=(0.0, 5.0))),
        "overlap_s": (0.5, descriptor("each command starts this long before the previous one ends (s)",
                                       floats=(0.0, 10.0))),
        "max_chunk_s": (30.0, descriptor("longest command; longer periods are sent in pieces (s)",
                                          floats=(0.1, 3600.0))),
        "max_clock_offset_s": (0.05, descriptor(
            "hardware mode: refuse to start when the robot's joint state stamps are further than this from the "
            "node's clock (s): the commands carry absolute stamps, so the two computers' clocks must agree",
            floats=(0.001, 10.0))),
        "controller_timeout_s": (1.0, descriptor(
            "hardware mode: how long to wait for the joint trajectory controller's get_parameters service at start "
            "(s); unreachable: warn and assume " + ASSUMED, floats=(0.0, 60.0))),
        "max_step_gap_s": (0.5, descriptor("hold when two steps are further apart on the node's clock: a leap of the "
                                            "clock or a stall (s; 0: off, only in sim mode)", floats=(0.0, 60.0))),
        "ack_name": ("", descriptor("sim: acknowledge each step on robot_id/sim_ack under this name, so that a "
                                     "lockstep simulation waits for this node (empty: no acknowledgements)")),
        "realtime_priority": (0, descriptor(
            "SCHED_FIFO priority of the node's threads but the planning one (0: normal scheduling), so that load on "
            "the machine does not starve the steps that watch the arm, nor the middleware's receipt of the joint "
            "states; refused by the system, it warns and runs without",
            ints=(0, 99))),
        "monitor_commands": (True, descriptor("check every command message independently before it is sent "
                                               "(command_check.py); hold instead of sending one that fails")),
    }
