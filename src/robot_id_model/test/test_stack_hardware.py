"""What a robot stack's robot_description says about its sensors (stack_hardware), read from URDFs written as
lbr_fri_ros2_stack's lbr_system_interface.xacro renders its ros2_control element, in its newer (measured_torque_tau)
and older (measured_torque_cutoff_frequency) versions."""

import math

import numpy as np
import pytest

from robot_id_model.stack_hardware import StackSensors, hardware_parameters, stack_sensors


def _lbr_urdf(**params: str) -> str:
    lines = "\n".join(f'      <param name="{name}">{value}</param>' for name, value in params.items())
    return f"""<?xml version="1.0"?>
<robot name="iiwa14">
  <link name="lbr_link_0"/>
  <ros2_control name="lbr" type="system">
    <hardware>
      <plugin>lbr_ros2_control::SystemInterface</plugin>
      <param name="fri_client_sdk_major_version">1</param>
{lines}
    </hardware>
    <joint name="lbr_A1"><command_interface name="position"/><state_interface name="effort"/></joint>
  </ros2_control>
</robot>"""


def test_the_newer_stack_says_its_time_constant_and_loop_mode():
    urdf = _lbr_urdf(measured_torque_tau="0.04", external_torque_tau="0.04", open_loop="True")
    assert hardware_parameters(urdf)["measured_torque_tau"] == "0.04"
    assert stack_sensors(urdf) == StackSensors(0.04, True, "measured_torque_tau: 0.04")


def test_the_older_stacks_cutoff_is_the_time_constant_of_its_exponential_filter():
    urdf = _lbr_urdf(measured_torque_cutoff_frequency="10", open_loop="false")
    sensors = stack_sensors(urdf)
    assert sensors.open_loop is False and sensors.said_by == "measured_torque_cutoff_frequency: 10"
    # the older stack's exponential filter at the FRI's sample times: alpha from the 3 dB frequency, and the time
    # constant of the first-order filter with the same step response, -T / ln(1 - alpha)
    for sample_time_s in (0.001, 0.002, 0.005):
        omega = 2.0 * math.pi * sample_time_s * 10.0
        alpha = math.cos(omega) - 1.0 + math.sqrt(math.cos(omega) ** 2 - 4.0 * math.cos(omega) + 3.0)
        assert sensors.torque_filter_time_constant_s == pytest.approx(-sample_time_s / np.log1p(-alpha), rel=0.02)


@pytest.mark.parametrize("urdf", ["<robot name='a'><link name='l'/></robot>", "not xml at all",
                                  _lbr_urdf(measured_torque_tau="fast", open_loop="maybe")])
def test_a_description_that_says_nothing_usable_says_nothing(urdf):
    assert not stack_sensors(urdf).says_anything
