"""Real-time scheduling of the loops that watch or drive an arm: set, or its refusal said."""

from __future__ import annotations

import multiprocessing
import os
import threading

from robot_id_model.realtime import keep_threads_realtime, set_realtime_priority, set_threads_realtime_priority


def test_realtime_priority_is_set_or_its_refusal_said():
    """In a thread of its own, so that the test's thread keeps its scheduling."""
    outcome: list[tuple[str, int]] = []
    thread = threading.Thread(target=lambda: outcome.append((set_realtime_priority(1), os.sched_getscheduler(0))))
    thread.start()
    thread.join()
    [(refused, policy)] = outcome
    assert (refused == "" and policy == os.SCHED_FIFO) or (
        refused.startswith("SCHED_FIFO priority 1 refused") and policy == os.SCHED_OTHER)
    assert set_realtime_priority(0) == "" and os.sched_getscheduler(0) == os.SCHED_OTHER


def _policies_after_setting_all_but_one(queue) -> None:
    """In a process of its own: every thread FIFO but the one excepted (or the refusal, with nothing changed)."""
    spared_id, stop = [], threading.Event()
    spared = threading.Thread(target=lambda: spared_id.append(threading.get_native_id()) or stop.wait())
    spared.start()
    while not spared_id:
        pass
    refused = set_threads_realtime_priority(1, set(spared_id))
    queue.put((refused, os.sched_getscheduler(0), os.sched_getscheduler(spared_id[0])))
    stop.set()
    spared.join()


def test_every_thread_but_the_excepted_ones_gets_the_priority():
    queue = multiprocessing.get_context("fork").Queue()
    process = multiprocessing.get_context("fork").Process(target=_policies_after_setting_all_but_one, args=(queue,))
    process.start()
    refused, main_policy, spared_policy = queue.get(timeout=30)
    process.join(timeout=30)
    assert spared_policy == os.SCHED_OTHER
    assert (refused == "" and main_policy == os.SCHED_FIFO) or (
        refused.startswith("SCHED_FIFO priority 1 refused") and main_policy == os.SCHED_OTHER)
    assert set_threads_realtime_priority(0, set()) == ""


def _kept_realtime(queue) -> None:
    """In a process of its own: a thread started at normal scheduling after the first call is FIFO once the timer's
    callback ran."""
    timers, warnings, stop = [], [], threading.Event()
    keep_threads_realtime(1, set(), timers.append, warnings.append)
    later_id = []

    def middleware_thread() -> None:  # as one the middleware starts from a thread of its own, at normal scheduling
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        later_id.append(threading.get_native_id())
        stop.wait()

    later = threading.Thread(target=middleware_thread)
    later.start()
    while not later_id:
        pass
    before = os.sched_getscheduler(later_id[0])
    for apply in timers:
        apply()
    queue.put((len(timers), warnings, before, os.sched_getscheduler(later_id[0])))
    stop.set()
    later.join()


def test_threads_started_later_get_the_priority_at_the_next_second_or_the_refusal_is_said_once():
    queue = multiprocessing.get_context("fork").Queue()
    process = multiprocessing.get_context("fork").Process(target=_kept_realtime, args=(queue,))
    process.start()
    timers, warnings, before, after = queue.get(timeout=30)
    process.join(timeout=30)
    if warnings:  # no CAP_SYS_NICE: said once, nothing repeated
        assert timers == 0 and len(warnings) == 1 and warnings[0].startswith("SCHED_FIFO priority 1 refused")
    else:
        assert timers == 1 and before == os.SCHED_OTHER and after == os.SCHED_FIFO
    calls = []
    keep_threads_realtime(0, set(), calls.append, calls.append)
    assert not calls
