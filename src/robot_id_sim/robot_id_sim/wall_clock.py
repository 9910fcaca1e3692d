"""Free running on the wall clock, as a real robot's driver does: sample k is due at start + k·period on the system
clock (CLOCK_REALTIME: ROS time without use_sim_time). A thread simulates the next sample as soon as the last one is
out, sleeps until it is due and publishes it then, stamped with its due time, so that the simulation's own CPU time
does not delay it; it waits for nobody. When the machine falls behind, the robot keeps its own time (the schedule
never slips, so no sample is ever stamped after it was published) and catches up sample by sample; how late each
one went out is counted."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

Sample = TypeVar("Sample")


@dataclass
class Lateness:
    """How long after its due time each sample was published."""

    period_s: float
    samples: int = 0
    late: int = 0        # published more than one period after it was due
    max_s: float = 0.0

    def add(self, lateness_s: float) -> None:
        self.samples += 1
        self.late += lateness_s > self.period_s
        self.max_s = max(self.max_s, lateness_s)


class WallClockLoop(Generic[Sample]):
    """In a thread of its own, from start() until stop(): advance() simulates the next sample, publish(sample)
    sends it when it is due on the system clock, once per period; an exception in either ends the loop and goes to
    on_error()."""

    def __init__(self, period_s: float, advance: Callable[[], Sample], publish: Callable[[Sample], None],
                 on_error: Callable[[BaseException], None]) -> None:
        if not period_s > 0.0:
            raise ValueError("the wall-clock period must be positive")
        self.period_s = period_s
        self.advance, self.publish, self.on_error = advance, publish, on_error
        self.lateness = Lateness(period_s)
        self.start_ns = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wall_clock", daemon=True)

    def due_ns(self, sample: int) -> int:
        """System time [ns] of sample `sample` (sample 0 is the start)."""
        return self.start_ns + round(sample * self.period_s * 1e9)

    def start(self) -> None:
        """Sample 0 is now; the loop runs from here."""
        self.start_ns = time.time_ns()
        self._thread.start()

    def stop(self) -> None:
        """End the loop and wait for its thread (a step under way finishes first)."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()

    def _run(self) -> None:
        sample = 0
        try:
            while not self._stop.is_set():
                sample += 1
                pending = self.advance()
                due_ns = self.due_ns(sample)
                wait_s = 1e-9 * (due_ns - time.time_ns())
                if wait_s > 0.0 and self._stop.wait(wait_s):
                    return
                self.publish(pending)
                self.lateness.add(1e-9 * (time.time_ns() - due_ns))
        except Exception as err:  # the owner decides whether it was a failure (or the shutdown)
            self.on_error(err)
