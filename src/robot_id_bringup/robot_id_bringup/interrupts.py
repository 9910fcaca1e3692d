"""The runner's interrupts (Ctrl-C, SIGTERM), remembered for the whole process: a library that swallows the
KeyboardInterrupt while the runner imports or checks its inputs cannot make it start the graph anyway."""

from __future__ import annotations

RECEIVED: list[int] = []
"""The signals received since the runner started, in order."""


def remember(signum: int, _frame: object) -> None:
    """Handler while the graph runs: the runner's loop sees RECEIVED and stops every node."""
    RECEIVED.append(signum)


def remember_and_raise(signum: int, frame: object) -> None:
    """Handler while the runner starts: interrupt what it is doing, and remember it in case that is swallowed."""
    remember(signum, frame)
    raise KeyboardInterrupt
