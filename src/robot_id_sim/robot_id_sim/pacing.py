"""How far simulated time may run: a real-time factor against the wall clock, and a lockstep mode in which the
simulation runs at most a window ahead of the slowest declared subscriber's acknowledged stamp; once the run is over
(finish), nowhere further."""

from __future__ import annotations

import math
from collections.abc import Sequence

MAX_LAG_S = 0.2
"""The simulation never runs more than this (sim time) ahead of where it is: when it falls further behind its
real-time factor (the machine is slower than asked), the wall-clock reference is moved so that it goes on as fast
as it can without a burst of messages, and the lag is counted."""


class Pacer:
    """Sim time allowed at a given wall time; acknowledgements come in as (subscriber, stamp) pairs."""

    def __init__(self, real_time_factor: float, lockstep_subscribers: Sequence[str] = (),
                 window_s: float = 0.05) -> None:
        if not real_time_factor >= 0.0 or (real_time_factor == 0.0 and not lockstep_subscribers):
            raise ValueError("real_time_factor must be positive, or 0 (no wall-clock pace) with lockstep subscribers")
        if not window_s > 0.0:
            raise ValueError("the lockstep window must be positive")
        self.real_time_factor = real_time_factor
        self.window_s = window_s
        self.acknowledged_s = dict.fromkeys(lockstep_subscribers, -math.inf)
        self.wall0_s = self.sim0_s = self.begin_s = 0.0
        self.lags = 0
        self.finished = False

    def start(self, wall_s: float, sim_s: float) -> None:
        """Begin pacing: sim_s now corresponds to wall_s."""
        self.wall0_s, self.sim0_s, self.begin_s = wall_s, sim_s, sim_s

    def finish(self) -> None:
        """The run is over (its recording is finished): simulated time stays where it is and waits for nobody."""
        self.finished = True

    def acknowledge(self, subscriber: str, stamp_s: float) -> None:
        """A declared subscriber has received everything up to stamp_s (others are ignored)."""
        if subscriber in self.acknowledged_s:
            self.acknowledged_s[subscriber] = max(self.acknowledged_s[subscriber], stamp_s)

    def allowed_s(self, wall_s: float, sim_s: float) -> float:
        """The sim time the simulation may reach at wall_s, being at sim_s now."""
        if self.finished:
            return sim_s
        allowed = math.inf
        if self.real_time_factor > 0.0:
            allowed = self.sim0_s + self.real_time_factor * (wall_s - self.wall0_s)
            if allowed - sim_s > MAX_LAG_S:
                self.lags += 1
                self.wall0_s, self.sim0_s = wall_s, sim_s + MAX_LAG_S
                allowed = self.sim0_s
        if self.acknowledged_s:
            slowest = max(min(self.acknowledged_s.values()), self.begin_s)
            allowed = min(allowed, slowest + self.window_s)
        return allowed

    def waiting_for(self, sim_s: float) -> list[str]:
        """Lockstep subscribers whose acknowledgements hold the simulation back at sim_s (none once finished)."""
        if self.finished:
            return []
        return sorted(name for name, stamp in self.acknowledged_s.items()
                      if max(stamp, self.begin_s) + self.window_s <= sim_s)
