"""The wall-clock loop without ROS: samples go out when due on the system clock (never before), evenly; after a
stall the schedule does not slip and the lateness is counted; errors and stop() end its thread."""

from __future__ import annotations

import threading
import time

import numpy as np

from robot_id_sim.wall_clock import WallClockLoop

RATE_HZ = 500.0


class Recorder:
    """advance() numbers the samples (optionally stalling at one), publish() notes when each went out."""

    def __init__(self, stall_at: int = 0, stall_s: float = 0.0) -> None:
        self.advanced = 0
        self.published: list[tuple[int, int]] = []   # (sample, system time ns)
        self.errors: list[BaseException] = []
        self.stall_at, self.stall_s = stall_at, stall_s

    def advance(self) -> int:
        self.advanced += 1
        if self.advanced == self.stall_at:
            time.sleep(self.stall_s)
        return self.advanced

    def publish(self, sample: int) -> None:
        self.published.append((sample, time.time_ns()))


def _run(recorder: Recorder, seconds: float) -> WallClockLoop:
    loop = WallClockLoop(1.0 / RATE_HZ, recorder.advance, recorder.publish, recorder.errors.append)
    loop.start()
    time.sleep(seconds)
    loop.stop()
    return loop


def test_samples_go_out_when_due_never_before_and_evenly():
    recorder = Recorder()
    loop = _run(recorder, 1.0)
    samples, sent_ns = np.array(recorder.published).T
    assert np.array_equal(samples, np.arange(1, len(samples) + 1))
    assert abs(len(samples) - RATE_HZ) <= 0.02 * RATE_HZ
    due_ns = np.array([loop.due_ns(k) for k in samples])
    late_s = 1e-9 * (sent_ns - due_ns)
    assert late_s.min() >= 0.0  # stamped with its due time, a sample is never in the future
    spacing_s = np.diff(sent_ns) * 1e-9
    assert abs(np.median(spacing_s) - 1.0 / RATE_HZ) < 0.2 / RATE_HZ
    assert loop.lateness.samples == len(samples) and not recorder.errors


def test_after_a_stall_it_catches_up_without_slipping_and_counts_the_late_samples():
    stall_s = 10.0 / RATE_HZ
    recorder = Recorder(stall_at=100, stall_s=stall_s)
    loop = _run(recorder, 0.6)
    samples, sent_ns = np.array(recorder.published).T
    late_s = 1e-9 * (sent_ns - np.array([loop.due_ns(k) for k in samples]))
    assert late_s[99] >= stall_s - 2.0 / RATE_HZ          # the stalled sample went out late ...
    assert loop.lateness.late >= 8 and loop.lateness.max_s >= late_s[99]
    assert np.median(late_s[150:]) < 1.0 / RATE_HZ     # ... and the schedule did not move: caught up
    assert len(samples) >= 0.55 * RATE_HZ


def test_an_error_ends_the_loop_and_goes_to_its_owner():
    errors: list[BaseException] = []

    def advance() -> int:
        raise RuntimeError("the plant diverged")

    loop = WallClockLoop(1.0 / RATE_HZ, advance, lambda _: None, errors.append)
    loop.start()
    end_s = time.monotonic() + 2.0
    while not errors and time.monotonic() < end_s:
        time.sleep(0.01)
    assert [str(e) for e in errors] == ["the plant diverged"]
    loop.stop()


def test_stop_ends_the_thread_while_it_waits():
    loop = WallClockLoop(10.0, lambda: 0, lambda _: None, lambda _: None)  # the next sample is 10 s away
    loop.start()
    began = time.monotonic()
    loop.stop()
    assert time.monotonic() - began < 1.0
    assert not any(t.name == "wall_clock" and t.is_alive() for t in threading.enumerate())
