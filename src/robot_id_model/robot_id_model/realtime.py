"""Real-time scheduling for the loops that watch, drive or record an arm: the simulated robot's (as the real drivers
run theirs), the excitation node's steps and the recorder's receipt of the joint states."""

from __future__ import annotations

import os
from collections.abc import Callable


def set_realtime_priority(priority: int) -> str:
    """Schedule the calling thread, and the threads it starts from now on, SCHED_FIFO at `priority` (0: leave it
    as it is), as the real drivers run their control loops; why the system refused, or ''."""
    if priority == 0:
        return ""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except OSError as err:
        return (f"SCHED_FIFO priority {priority} refused ({err.strerror}; it needs CAP_SYS_NICE or `ulimit -r`): "
                "normal scheduling")
    return ""


def set_threads_realtime_priority(priority: int, except_ids: set[int]) -> str:
    """Schedule every thread of this process SCHED_FIFO at `priority` but those with the native ids given (the
    middleware's receive threads too, which stamp when a message arrived); threads already SCHED_FIFO are left as
    they are, so that calling it again takes in threads started since. Why the system refused, or ''."""
    if priority == 0:
        return ""
    try:
        for task in map(int, os.listdir("/proc/self/task")):
            if task not in except_ids and os.sched_getscheduler(task) != os.SCHED_FIFO:
                os.sched_setscheduler(task, os.SCHED_FIFO, os.sched_param(priority))
    except OSError as err:
        return (f"SCHED_FIFO priority {priority} refused ({err.strerror}; it needs CAP_SYS_NICE or `ulimit -r`): "
                "normal scheduling")
    return ""


def keep_threads_realtime(priority: int, except_ids: set[int], every_second: Callable[[Callable[[], object]], object],
                          warn: Callable[[str], object]) -> None:
    """set_threads_realtime_priority now and, through `every_second` (a node's timer), again every second for the
    threads the middleware starts as peers appear; a refusal goes to `warn` once."""
    refused = set_threads_realtime_priority(priority, except_ids)
    if refused:
        warn(refused)
    elif priority > 0:
        every_second(lambda: set_threads_realtime_priority(priority, except_ids))
