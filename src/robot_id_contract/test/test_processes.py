"""Stopping a child: its signal first, SIGKILL only when it does not end in time."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from robot_id_contract.processes import stop_process

IGNORES_SIGTERM = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); " \
                  "time.sleep(60)"
ENDS_ON_SIGINT = "import signal, sys, time\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n" \
                 "try:\n    print('ready', flush=True)\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    sys.exit(7)"
"""Python as a terminal starts it: a shell's background job (CI) ignores SIGINT, and its children inherit that."""


def _started(code: str) -> subprocess.Popen:
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "ready"
    return child


def test_a_child_that_ends_on_its_signal_gives_its_own_exit_code():
    assert stop_process(_started(ENDS_ON_SIGINT), signal.SIGINT, timeout_s=10.0) == 7


def test_a_child_that_ignores_the_signal_is_killed_after_the_timeout():
    child = _started(IGNORES_SIGTERM)
    began = time.monotonic()
    assert stop_process(child, timeout_s=0.5) == -signal.SIGKILL
    assert 0.5 <= time.monotonic() - began < 5.0


def test_a_child_that_already_ended_keeps_its_exit_code():
    child = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    child.wait()
    assert stop_process(child) == 3
