"""The controller set-up the excitation node requires (controller_setup.py), judged on the parameter values a
joint_trajectory_controller reports through ~/get_parameters (None: not declared, as open_loop_control from
Kilted on)."""

import threading

import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from robot_id_excitation.controller_setup import controller_node, read_parameters, setup_refusal

NAMES = ("lbr_A1", "lbr_A2")
CONTROLLER = "/lbr/joint_trajectory_controller"


def test_the_controller_is_found_from_its_topic():
    assert controller_node("/lbr/joint_trajectory_controller/joint_trajectory") == CONTROLLER
    assert controller_node("/joint_trajectory_controller/joint_trajectory") == "/joint_trajectory_controller"


@pytest.mark.parametrize("values", [
    {"joints": list(NAMES), "interpolate_from_desired_state": True, "open_loop_control": None,     # Kilted
     "interpolation_method": "splines"},
    {"joints": [*NAMES, "extra"], "interpolate_from_desired_state": False, "open_loop_control": True,
     "interpolation_method": "splines"},                                                      # Jazzy, deprecated
])
def test_a_controller_that_starts_new_commands_from_its_desired_state_is_taken(values):
    assert setup_refusal(CONTROLLER, values, NAMES) is None


@pytest.mark.parametrize(("changes", "refusal"), [
    ({"interpolate_from_desired_state": False},
     f"{CONTROLLER} has interpolate_from_desired_state false: each new command would start from the measured position "
     "and the command jump by the tracking error; set interpolate_from_desired_state: true in its parameter file "
     "(read-only: restart the controller)"),
    ({"interpolation_method": "none"},
     f"{CONTROLLER} has interpolation_method 'none': every point would be a step; set interpolation_method: splines "
     "in its parameter file and restart it"),
    ({"joints": ["lbr_A1"]},
     f"{CONTROLLER} does not command ['lbr_A2'] (joints: ['lbr_A1']): set its parameter joints to "
     "['lbr_A1', 'lbr_A2']"),
])
def test_an_incompatible_controller_is_refused_in_one_line_naming_the_parameter(changes, refusal):
    values = {"joints": list(NAMES), "interpolate_from_desired_state": True, "open_loop_control": None,
              "interpolation_method": "splines"} | changes
    assert setup_refusal(CONTROLLER, values, NAMES) == refusal


def test_the_parameters_are_read_through_the_controllers_service():
    """A node standing in for the LBR stack's controller (its parameter file: joints only, Kilted: no
    open_loop_control) answers get_parameters; the reading gives what setup_refusal needs; an absent controller
    gives None within the timeout."""
    context = rclpy.Context()
    rclpy.init(context=context)
    controller = Node("joint_trajectory_controller", namespace="lbr", context=context)
    controller.declare_parameter("joints", list(NAMES))
    controller.declare_parameter("interpolate_from_desired_state", False)
    controller.declare_parameter("interpolation_method", "splines")
    asking = Node("excitation", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(controller)
    spinning = threading.Thread(target=executor.spin, daemon=True)
    spinning.start()
    try:
        values = read_parameters(asking, CONTROLLER, timeout_s=5.0)
        assert values == {"joints": list(NAMES), "interpolate_from_desired_state": False, "open_loop_control": None,
                          "interpolation_method": "splines"}
        assert "set interpolate_from_desired_state: true" in setup_refusal(CONTROLLER, values, NAMES)
        assert read_parameters(asking, "/no/such_controller", timeout_s=0.2) is None
    finally:
        executor.shutdown()
        spinning.join(timeout=2.0)
        controller.destroy_node()
        asking.destroy_node()
        rclpy.shutdown(context=context)
