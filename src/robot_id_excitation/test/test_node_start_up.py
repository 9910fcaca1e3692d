"""The excitation node's start-up: a stop that interrupts its constructor leaves a node rclpy can destroy."""

import pytest
import rclpy
from rclpy.parameter import Parameter

from robot_id_excitation.node import ExcitationNode


def test_a_node_a_stop_interrupts_while_it_is_built_is_destroyed_without_an_error(monkeypatch):
    """Ctrl-C while the node loads its trajectory: rclpy's shutdown destroys the half-built node (its planning thread
    may still hold it), and destroy_node finds everything it reads (seen in the runner's Ctrl-C test)."""
    half_built = []

    def interrupted(self, _values):
        half_built.append(self)
        raise KeyboardInterrupt

    monkeypatch.setattr(ExcitationNode, "_load_or_design", interrupted)
    rclpy.init()
    try:
        with pytest.raises(KeyboardInterrupt):
            ExcitationNode(parameter_overrides=[Parameter("robot", value="iiwa14")])
    finally:
        rclpy.try_shutdown()  # destroys the half-built node: no AttributeError
    assert len(half_built) == 1
