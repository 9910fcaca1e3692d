"""How a node's process runs: the one shape of every node's main() (as ros2/examples): init, make the node, spin,
stop, destroy, shut down. A configuration the node's constructor refuses is one line on stderr and exit code 2;
Ctrl-C, SIGTERM and an external shutdown are a stop (exit code 0), and so is an error that comes out of rclpy after
a stop shut it down (while starting: under the constructor)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

import rclpy
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

SPIN_ONCE_S = 0.1
"""How often a node that finishes by itself (NodeProcess.done) is asked whether it has, and how often a node that
handles its signals itself returns to Python (a Python signal handler runs only then: in a wait with nothing due, a
SIGTERM would wait until the runner's kill)."""


def _never(_err: BaseException) -> bool:
    return False


@dataclass(frozen=True)
class NodeProcess:
    """What one node's process adds to the shape."""

    name: str
    refused: tuple[type[BaseException], ...] = (ValueError,)
    """errors of the constructor that mean a configuration the node refuses"""
    executor: Callable[[], Executor] = SingleThreadedExecutor
    done: Callable[[Node], bool] | None = None
    """spin until this holds (default: until stopped)"""
    on_stop: Callable[[Node], None] | None = None
    """run at a stop, while rclpy is still up (the excitation node's hold)"""
    close: Callable[[Node], None] | None = None
    """run at every end, before the node is destroyed (the recorder's bag)"""
    rclpy_signals: bool = True
    """False: the node handles SIGINT and SIGTERM itself (raising KeyboardInterrupt)"""
    is_stop: Callable[[BaseException], bool] = _never
    """other errors that mean a stop (a signal raised inside a call into rclpy's C++ comes out as its error)"""
    failure: Callable[[Node], BaseException | None] | None = None
    """an error the node's own threads stopped on (they shut the context down): raised once the node is gone"""


def run_node(make_node: Callable[[], Node], process: NodeProcess, args: list[str] | None = None) -> int:
    """Run one node's process; its exit code."""
    options = SignalHandlerOptions.ALL if process.rclpy_signals else SignalHandlerOptions.NO
    try:
        rclpy.init(args=args, signal_handler_options=options)
    except Exception as err:  # rcl's own error for arguments it cannot parse (e.g. `-p name:=`)
        print(f"{process.name}: error: {str(err).splitlines()[0]}", file=sys.stderr)
        return 2
    # the executor before the node, while the context is valid: one half-built by a stop while the node starts
    # fails again when it is collected ("Exception ignored in Executor.__del__" with a traceback)
    executor = process.executor()
    node = None
    try:
        node = make_node()
        executor.add_node(node)
        _spin(executor, node, process.done, process.rclpy_signals)
    except (KeyboardInterrupt, ExternalShutdownException):
        _stop(node, process)
    except process.refused as err:
        if node is not None:
            raise
        print(f"{process.name}: error: {err}", file=sys.stderr)
        return 2
    except Exception as err:
        if process.is_stop(err):
            _stop(node, process)
        elif rclpy.ok():
            raise
    finally:
        _end(node, process)
    failure = process.failure(node) if node is not None and process.failure is not None else None
    if failure is not None:
        raise failure
    return 0


def _spin(executor: Executor, node: Node, done: Callable[[Node], bool] | None, rclpy_signals: bool) -> None:
    if done is None and rclpy_signals:
        executor.spin()
        return
    while rclpy.ok() and not (done is not None and done(node)):
        executor.spin_once(timeout_sec=SPIN_ONCE_S)


def _stop(node: Node | None, process: NodeProcess) -> None:
    if node is not None and process.on_stop is not None and rclpy.ok():
        process.on_stop(node)


def _end(node: Node | None, process: NodeProcess) -> None:
    if node is not None:
        if process.close is not None:
            process.close(node)
        node.destroy_node()
    rclpy.try_shutdown()
