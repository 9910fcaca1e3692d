"""run_node, the one shape of a node's process: a refused configuration is one line and exit code 2, a node that
finishes closes and exits 0, a stop runs the node's hook while ROS is still up, a failure of the node's own thread is
raised once the node is gone, and an error in a callback is an error, not a refused configuration. (conftest: this
machine only, a domain of its own.)"""

import subprocess
import sys
import time

import pytest
import rclpy
from rclpy.node import Node

from robot_id_contract.node_process import NodeProcess, run_node
from robot_id_contract.processes import stop_process


class Ticking(Node):
    """A node whose timer does `on_tick(self)` every 10 ms, counting ticks."""

    def __init__(self, on_tick) -> None:
        super().__init__("ticking")
        self.ticks, self.done, self.closed, self.failure, self.ros_up_at_stop = 0, False, 0, None, None
        self.create_timer(0.01, lambda: self._tick(on_tick))

    def _tick(self, on_tick) -> None:
        self.ticks += 1
        on_tick(self)


def _finish_after_three(node: Ticking) -> None:
    node.done = node.ticks >= 3


def _interrupt(_node: Ticking) -> None:
    raise KeyboardInterrupt


def _fail_in_own_thread(node: Ticking) -> None:
    node.failure = RuntimeError("the wall clock's thread stopped")
    node.context.try_shutdown()


def _bad_value(_node: Ticking) -> None:
    raise ValueError("a bug in a callback")


def test_a_refused_configuration_is_one_line_and_exit_code_2(capsys):
    def refuse() -> Node:
        raise ValueError("robot must name a config, not 'nothing'")

    assert run_node(refuse, NodeProcess("demo_node")) == 2
    assert capsys.readouterr().err == "demo_node: error: robot must name a config, not 'nothing'\n"
    assert not rclpy.ok()


def _run_ticking(on_tick, process: NodeProcess) -> tuple[int, Ticking]:
    """run_node on a Ticking node; its exit code and the node."""
    nodes = []

    def make() -> Ticking:
        nodes.append(Ticking(on_tick))
        return nodes[-1]

    return run_node(make, process), nodes[0]


def test_a_node_that_finishes_is_closed_once_and_exits_0():
    process = NodeProcess("demo_node", done=lambda node: node.done,
                          close=lambda node: setattr(node, "closed", node.closed + 1))
    code, node = _run_ticking(_finish_after_three, process)
    assert code == 0 and node.ticks == 3 and node.closed == 1
    assert not rclpy.ok()


def test_a_stop_runs_the_nodes_hook_while_ros_is_up_and_exits_0():
    process = NodeProcess("demo_node", on_stop=lambda node: setattr(node, "ros_up_at_stop", rclpy.ok()))
    code, node = _run_ticking(_interrupt, process)
    assert code == 0 and node.ros_up_at_stop is True
    assert not rclpy.ok()


def test_a_failure_of_the_nodes_own_thread_is_raised_once_the_node_is_gone():
    process = NodeProcess("demo_node", failure=lambda node: node.failure)
    with pytest.raises(RuntimeError, match="the wall clock's thread stopped"):
        run_node(lambda: Ticking(_fail_in_own_thread), process)
    assert not rclpy.ok()


def test_an_error_in_a_callback_is_raised_not_taken_for_a_refused_configuration():
    with pytest.raises(ValueError, match="a bug in a callback"):
        run_node(lambda: Ticking(_bad_value), NodeProcess("demo_node"))
    assert not rclpy.ok()


IDLE_NODE_OWN_SIGNALS = """
import signal, sys
from rclpy.node import Node
from robot_id_contract.node_process import NodeProcess, run_node

def interrupt(_signum, _frame):
    raise KeyboardInterrupt

class Idle(Node):
    def __init__(self):
        super().__init__("idle")
        print("ready", flush=True)

signal.signal(signal.SIGTERM, interrupt)
sys.exit(run_node(Idle, NodeProcess("idle", rclpy_signals=False)))
"""


def test_an_idle_node_that_handles_its_signals_stops_on_sigterm_at_once():
    """Nothing due (no timer, no message): the wait still returns to Python, whose handler stops the node (the
    excitation node after a run was killed by the runner 10 s after its SIGTERM, every run)."""
    child = subprocess.Popen([sys.executable, "-c", IDLE_NODE_OWN_SIGNALS], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "ready"
    time.sleep(0.3)                                                       # in the executor's wait
    began = time.monotonic()
    assert stop_process(child, timeout_s=5.0) == 0
    assert time.monotonic() - began < 1.0
