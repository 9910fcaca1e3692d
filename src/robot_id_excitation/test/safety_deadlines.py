"""When the excitation node must have held the arm after a fault of the safety harness (docs/safety.md, guarantee
2): the latest true time, from the run's record."""

from __future__ import annotations

import math

from safety_harness import Record

from robot_id_excitation.excitation_state import MOVING

TRACKING_MARGIN_RAD = 0.15
"""The machine compares the latest state (up to one state period, 10 ms, old) with the command now, the harness
the true state with the arm the commands would have moved: their difference is at most (velocity limit + drag)
× 10 ms = 3.6 rad/s × 0.01 s, and the controller's own path between the points, well below 0.15 rad."""


def hold_deadline_s(rec: Record) -> float | None:
    """The latest (true) time by which the fault must have held the run (None: it need not)."""
    sc, f = rec.scenario, rec.scenario.fault
    ticks = [t for t, _ in rec.ticks]
    if f.kind in ("dropout", "stale_stamps"):  # the first step that finds no new state for state_timeout_s
        for k, t in enumerate(ticks[1:], start=1):
            last = max((s for s in rec.states if s <= t), default=None)
            if rec.ticks[k - 1][1] in MOVING and last is not None and t - last > sc.settings.state_timeout_s:
                return t
        return None
    if f.kind == "late":  # the first step at which the latest state, received late by its delay, is too old
        if not sc.stamped:
            return None  # unstamped states cannot show that they are late
        for k, t in enumerate(ticks[1:], start=1):
            last = max((s for s in rec.states if s <= t), default=None)
            delay_s = f.size * max(last - f.t_s, 0.0) if last is not None else 0.0
            if rec.ticks[k - 1][1] in MOVING and last is not None and t - last + delay_s > sc.settings.state_timeout_s:
                return t
        return None
    if f.kind == "tracking":  # the first step of a motion (or of one a hold ended) at which the dragged joint is
        bound = sc.settings.max_tracking_error_rad  # clearly beyond the bound
        held_s = rec.holds[0][0] if rec.holds else math.inf
        return next((t for k, t in enumerate(ticks[1:], start=1) if bound and (rec.ticks[k - 1][1] in MOVING or
                     t > held_s) and rec.tracking_rad.get(t, 0.0) > bound + TRACKING_MARGIN_RAD), None)
    if rec.fault_s is None or not rec.moving_at_fault:
        return None
    if f.kind in ("abort", "sigint"):
        return rec.fault_s
    return min((t for t in ticks if t >= rec.fault_s), default=None)
