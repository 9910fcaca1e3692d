"""Node parameters declared from one table per node: name → (default, descriptor)."""

from __future__ import annotations

from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.node import Node

ParameterTable = dict[str, tuple[object, ParameterDescriptor]]
"""Name: (default, descriptor); a Parameter.Type default declares a list parameter that is empty unless set."""


def descriptor(description: str, *, floats: tuple[float, float] | None = None, ints: tuple[int, int] | None = None,
               read_only: bool = True, constraints: str = "") -> ParameterDescriptor:
    """A parameter's descriptor, read-only unless said, with an inclusive range of floats or integers (step 1)."""
    result = ParameterDescriptor(description=description, read_only=read_only, additional_constraints=constraints)
    if floats is not None:
        result.floating_point_range = [FloatingPointRange(from_value=floats[0], to_value=floats[1])]
    if ints is not None:
        result.integer_range = [IntegerRange(from_value=ints[0], to_value=ints[1], step=1)]
    return result


def declare_parameters(node: Node, table: ParameterTable) -> dict[str, object]:
    """Declare every parameter of `table` on `node`; their values (unset list parameters as [])."""
    values = {name: node.declare_parameter(name, default, desc).value for name, (default, desc) in table.items()}
    return {name: [] if value is None else value for name, value in values.items()}
