"""What a robot stack's ros2_control hardware says about its sensors, read from the URDF it publishes on
robot_description: the `<param>`s of its `<ros2_control><hardware>` element.

lbr_fri_ros2_stack writes there (lbr_description/ros2_control/lbr_system_interface.xacro, from its
lbr_system_config.yaml) how it low-passes the FRI measured torque before publishing it, and whether it publishes the
commanded positions as the measured ones:
- `measured_torque_tau` [s]: newer versions, a first-order filter y += (1 - exp(-T/tau))·(x - y) each sample T;
- `measured_torque_cutoff_frequency` [Hz]: older versions (10 Hz in its 2024 config), an exponential filter whose
  time constant is 1/(2π f) to within 2 % at the FRI's 1–5 ms sample times;
- `open_loop` (true by default): the joint positions published are the commands, not the encoders.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass


@dataclass(frozen=True)
class StackSensors:
    """The torque filter and loop mode a robot's hardware interface announces; None where it says nothing."""

    torque_filter_time_constant_s: float | None
    open_loop: bool | None
    said_by: str
    """The parameter the time constant comes from ('' when none), as the user finds it in the stack's config."""

    @property
    def says_anything(self) -> bool:
        return self.torque_filter_time_constant_s is not None or self.open_loop is not None


def hardware_parameters(urdf_xml: str) -> dict[str, str]:
    """The `<param name="...">value</param>` of every `<ros2_control><hardware>` in the URDF (later ones win);
    empty when there is none or the text is no XML."""
    try:
        root = ET.fromstring(urdf_xml)
    except ET.ParseError:
        return {}
    return {p.get("name", ""): (p.text or "").strip()
            for control in root.iter("ros2_control") for hardware in control.iter("hardware")
            for p in hardware.iter("param") if p.get("name")}


def stack_sensors(urdf_xml: str) -> StackSensors:
    """What the hardware interface in `urdf_xml` says about the measured torque's filter and the loop mode (module
    docstring); a value that is no number or boolean counts as not said."""
    params = hardware_parameters(urdf_xml)
    time_constant_s, said_by = None, ""
    tau = _number(params.get("measured_torque_tau"))
    cutoff_hz = _number(params.get("measured_torque_cutoff_frequency"))
    if tau is not None and tau >= 0.0:
        time_constant_s, said_by = tau, f"measured_torque_tau: {params['measured_torque_tau']}"
    elif cutoff_hz is not None and cutoff_hz > 0.0:
        time_constant_s = 1.0 / (2.0 * math.pi * cutoff_hz)
        said_by = f"measured_torque_cutoff_frequency: {params['measured_torque_cutoff_frequency']}"
    loop = params.get("open_loop", "").lower()
    return StackSensors(time_constant_s, {"true": True, "false": False}.get(loop), said_by)


def _number(text: str | None) -> float | None:
    try:
        value = float(text) if text is not None else math.nan
    except ValueError:
        return None
    return value if math.isfinite(value) else None
