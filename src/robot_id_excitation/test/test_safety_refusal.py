"""Guarantee 3 (docs/safety.md): hardware mode moves nothing without confirmation, and a trajectory made for
another robot, for other joints, with values that are not finite or beyond this robot's limits is refused with
the reason (excitation_guard.trajectory_refusal, which the node calls before anything starts).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from safety_harness import KINDS, ROBOTS, SAFETY, scenarios, setup, simulate, trajectories

from robot_id_excitation.check import check_trajectory, time_grid
from robot_id_excitation.excitation_guard import trajectory_refusal

REASONS = {"other_robot": "was made for robot", "other_joints": "differ from the robot's",
           "nan": "not finite", "infeasible": "violates the robot's limits"}


@st.composite
def robot_and_trajectory(draw):
    name = draw(st.sampled_from(ROBOTS))
    return name, *draw(trajectories(name))


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
@SAFETY
@given(robot_and_trajectory())
def test_a_trajectory_for_another_robot_joints_or_limits_is_refused_with_the_reason(case):
    name, kind, trajectory = case
    s = setup(name)
    reason = trajectory_refusal(trajectory, s.robot, s.limits, name)
    t_s = time_grid(trajectory.period_s, 400)
    finite = all(np.isfinite(x).all() for x in trajectory.evaluate(t_s))
    if kind in ("other_robot", "other_joints", "nan"):
        assert REASONS[kind] in reason
    elif not finite or not check_trajectory(s.robot, s.limits, trajectory).feasible:
        assert REASONS["infeasible"] in reason and "INFEASIBLE" in reason
    else:
        assert reason == "", reason
    assert kind != "marginal" or reason == ""
    event(f"{kind}: {'refused' if reason else 'accepted'}")


@SAFETY
@given(scenarios(kinds=KINDS[:3], require_confirm=True), st.one_of(st.none(), st.floats(0.0, 2.0)))
def test_hardware_mode_moves_nothing_before_confirmation(sc, confirm_at_s):
    rec = simulate(sc, confirm_at_s=confirm_at_s, until=lambda r: bool(r.sent) or (
        r.ticks[-1][0] > (confirm_at_s if confirm_at_s is not None else 1.0) + sc.settings.start_delay_s + 0.1))
    first_s = rec.sent[0].t_s if rec.sent else None
    assert first_s is None or (confirm_at_s is not None and first_s >= confirm_at_s)
    event("moved after confirmation" if first_s is not None else "did not move")
