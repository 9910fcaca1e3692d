"""Ending a node's process: the one way the runner and the test bed stop what they started."""

from __future__ import annotations

import signal
import subprocess

STOP_TIMEOUT_S = 10.0
"""How long a node may take to shut down on its signal before it is killed."""


def stop_process(popen: subprocess.Popen, sig: int = signal.SIGTERM, timeout_s: float = STOP_TIMEOUT_S) -> int:
    """Send `sig` to a running child, SIGKILL it after `timeout_s`; its exit code. SIGTERM (the default): a Python
    process still importing ends on it without a traceback, and rclpy nodes shut down on it; SIGINT is Ctrl-C."""
    if popen.poll() is None:
        popen.send_signal(sig)
        try:
            popen.wait(timeout_s)
        except subprocess.TimeoutExpired:
            popen.kill()
            popen.wait()
    return popen.returncode
