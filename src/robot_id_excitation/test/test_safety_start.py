"""Guarantee 4 (docs/safety.md): from anywhere within its limits, at rest, the arm is taken to the start pose by
an approach that starts and ends at rest and stays within the limits (or nothing moves and the refusal says
why), and the first period starts at rest at the start pose, reached within the acceleration limits.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import event, given
from hypothesis import strategies as st
from safety_harness import SAFETY, scenarios, setup, simulate

from robot_id_excitation.command_check import check_points
from robot_id_excitation.excitation_state import Phase


def _first_chunk_sent(rec) -> bool:
    return sum(not x.stop for x in rec.sent) >= (2 if rec.machine.approach is not None else 1)


@SAFETY
@given(scenarios(near_start=False, fault_kinds=("none",), approach_speed_rad_s=st.floats(0.8, 2.0),
                 approach_acceleration_rad_s2=st.floats(2.0, 12.0), rate_hz=st.floats(5.0, 20.0)))
def test_the_approach_and_the_first_period_start_at_rest_within_limits(sc):
    sc = replace(sc, end_s=60.0, tick_s=0.04)
    rec = simulate(sc, until=_first_chunk_sent)
    s = setup(sc.name)
    m = rec.machine
    if not rec.sent:
        assert m.phase is Phase.REFUSED and m.reason, "neither moved nor said why"
        event(f"refused: {m.reason.split('(')[0][:40]}")
        return
    commands = [x for x in rec.sent if not x.stop]
    for x in commands:
        assert check_points(x.points, s.robot, s.limits) == []
        assert x.transition == [], "the way to the first point breaks a joint limit"
    if m.approach is not None:
        approach = commands[0].points
        assert np.allclose(approach.q_rad[0], sc.start_rad, atol=1e-9)
        assert np.allclose(approach.q_rad[-1], m.start_pose_rad, atol=1e-9)
        assert np.abs(approach.dq_rad_s[[0, -1]]).max() < 1e-9 and np.abs(approach.ddq_rad_s2[[0, -1]]).max() < 1e-9
    chunks = commands[1:] if m.approach is not None else commands
    if chunks:
        first = chunks[0].points
        assert np.allclose(first.q_rad[0], m.start_pose_rad, atol=1e-9)
        assert np.abs(first.dq_rad_s[0]).max() < 1e-9 and np.abs(first.ddq_rad_s2[0]).max() < 1e-9
        event("first period sent")
    else:
        event(f"stopped: {m.reason.split('(')[0][:40]}")
