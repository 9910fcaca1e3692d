"""Guarantee 1 (docs/safety.md): no commanded point, ever, lies outside the position, velocity, acceleration and
flange-speed limits or below the floor, whatever the trajectory, the settings or the joint states; but for a hold
of an arm that something dragged outside already, which is not pulled back (docs/safety.md).

Every command of a generated run goes through the independent checker (command_check.py) as the message the
node would publish: feasible, marginal, infeasible and corrupted trajectories, settings across the node's
parameter ranges, joint-state streams with one injected fault at a random time.
"""

from __future__ import annotations

import pytest
from hypothesis import event, given
from safety_harness import KINDS, SAFETY, outside, scenarios, setup, simulate

from robot_id_excitation.command_check import check_points


@pytest.mark.filterwarnings("ignore:invalid value encountered in matmul:RuntimeWarning")  # NaN/inf coefficients
@SAFETY
@given(scenarios(kinds=KINDS))
def test_no_commanded_point_leaves_the_limits(sc):
    rec = simulate(sc)
    s = setup(sc.name)
    for sent in rec.sent:
        problems = check_points(sent.points, s.robot, s.limits)
        if problems and sent.stop and outside(s, sent.state[0]):  # dragged there by a tracking fault
            event("a hold of an arm dragged outside")
            continue
        assert problems == [], (sent.t_s, rec.machine.reason)
