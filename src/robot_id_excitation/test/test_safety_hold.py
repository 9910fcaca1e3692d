"""Guarantee 2 (docs/safety.md): on abort, Ctrl-C/SIGTERM, lost, stale or late joint states, a time jump, NaN or
out-of-order joint states, or a tracking error beyond its bound, the machine commands a hold within the stated
time: a single point at rest, inside the limits and above the floor (unless a tracking fault dragged the arm outside
already: it is not pulled back), reached within stop_bound_s() with a deceleration within the acceleration limits;
and after it, nothing moves again, whatever comes next.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import event, given
from test_safety_harness import FAULTS, SAFETY, Record, outside, scenarios, setup, simulate, stop_bound_s

from robot_id_excitation.command_check import check_points
from robot_id_excitation.excitation_guard import hold_point
from robot_id_excitation.excitation_state import MOVING

TRACKING_MARGIN_RAD = 0.15
"""The machine compares the latest state (up to one state period, 10 ms, old) with the command now, the harness
the true state with the arm the commands would have moved: their difference is at most (velocity limit + drag)
× 10 ms = 3.6 rad/s × 0.01 s, and the controller's own path between the points, well below 0.15 rad."""
KEYWORDS = {"abort": "abort", "sigint": "shutting down", "nan": "not finite", "out_of_order": "out of order",
            "time_back": "jumped back", "time_ahead": "jumped ahead", "tracking": "tracking error",
            "dropout": "stopped arriving", "stale_stamps": "stopped arriving", "late": "fell behind"}


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


@SAFETY
@given(scenarios(fault_kinds=FAULTS[1:]))
def test_every_fault_holds_in_time_and_for_good(sc):
    rec = simulate(sc)
    s = setup(sc.name)
    deadline = hold_deadline_s(rec)
    event(f"{sc.fault.kind}: {'hold due' if deadline is not None else 'no hold due'}")
    if deadline is not None:
        assert rec.holds and rec.holds[0][0] <= deadline + 1e-9, (rec.holds, deadline)
        if rec.holds[0][0] >= deadline - 1e-9:
            assert KEYWORDS[sc.fault.kind] in rec.holds[0][1]
    if not rec.holds:
        return
    t_hold = rec.holds[0][0]
    assert [x.t_s for x in rec.sent if x.t_s >= t_hold] == [x.t_s for x in rec.sent if x.stop][:1], \
        "a hold sends its stop and nothing else, and nothing follows"
    assert all(phase not in MOVING for t, phase in rec.ticks if t >= t_hold), "moved again after a hold"
    stops = [x for x in rec.sent if x.stop]
    if not stops:
        return
    stop = stops[0]
    p = stop.points
    assert p.stamp_s == 0 and len(p.t_rel_s) == 1 and not p.dq_rad_s.any() and not p.ddq_rad_s2.any()
    assert 0.1 - 1e-9 <= p.t_rel_s[0] <= stop_bound_s(s.limits) + 1e-9
    q, dq = stop.state[:2]
    problems = stop.transition
    if outside(s, q):  # dragged beyond a limit or below the floor: stopped there, not pulled back
        problems = [p for p in problems if "position" not in p]
        event("dragged outside: stopped where it is")
    else:
        assert check_points(p, s.robot, s.limits) == []
    target, duration_s = hold_point(s.robot, s.limits, q, dq)
    if not np.allclose(target, q + 0.5 * dq * duration_s):  # dragged towards a limit or the floor: no stop within
        problems = [p for p in problems if "acceleration limit" not in p]  # the acceleration limits keeps clear
        event("dragged: no stop within the acceleration limits stays inside")
    assert problems == [], "the way to the stop point breaks a joint limit"
    event(f"stop in {np.ceil(p.t_rel_s[0] * 10) / 10:.1f} s")
