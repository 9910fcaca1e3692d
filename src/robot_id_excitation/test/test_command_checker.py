"""The independent command checker (command_check) reports every corruption of an excitation command and passes the
commands of a clean run."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st
from safety_harness import SAFETY, Fault, Scenario, pool, scaled, setup, simulate

from robot_id_excitation.command_check import CommandPoints, check_points
from robot_id_excitation.excitation_settings import ExcitationSettings
from robot_id_excitation.excitation_state import Phase


@st.composite
def corrupted_commands(draw) -> tuple[str, CommandPoints]:
    """A valid excitation command of iiwa14 and one corruption of it (what it breaks, the corrupted command)."""
    s = setup("iiwa14")
    trajectory, marginal = draw(st.sampled_from(pool("iiwa14")))
    trajectory = scaled(trajectory, marginal * draw(st.floats(0.1, 0.9)))
    t_rel = np.linspace(0.0, trajectory.period_s, draw(st.integers(3, 40)))
    q, dq, ddq = (x.copy() for x in trajectory.evaluate(t_rel))
    k, j = draw(st.integers(0, len(t_rel) - 1)), draw(st.integers(0, 6))
    lim = s.limits
    kind = draw(st.sampled_from(["nan", "names", "position", "velocity", "acceleration", "jump", "time"]))
    names = s.config.joint_names
    if kind == "nan":
        draw(st.sampled_from([q, dq, ddq]))[k, j] = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    elif kind == "names":
        names = (*names[:-1], "other")
    elif kind == "position":
        q[k, j] = draw(st.sampled_from([lim.position_upper_rad[j], lim.position_lower_rad[j]])) * 1.01
    elif kind == "velocity":
        dq[k, j] = lim.velocity_rad_s[j] * draw(st.floats(1.001, 10.0)) * draw(st.sampled_from([1, -1]))
    elif kind == "acceleration":
        ddq[k, j] = lim.acceleration_rad_s2[j] * draw(st.floats(1.001, 10.0)) * draw(st.sampled_from([1, -1]))
    elif kind == "jump":  # positions that move faster than any point's velocity says
        step_rad = lim.velocity_rad_s[j] * np.diff(t_rel).min() * draw(st.floats(1.2, 5.0))
        q[k:, j] += step_rad if k > 0 else -step_rad
        q[:, j] = np.clip(q[:, j], lim.position_lower_rad[j] + 1e-3, lim.position_upper_rad[j] - 1e-3)
        if np.abs(np.diff(q[:, j]) / np.diff(t_rel)).max() <= lim.velocity_rad_s[j] * 1.02:
            kind = "unknown"  # the clipping undid the jump
    else:
        t_rel[k] = t_rel[k - 1] if k > 0 else -0.1
    return kind, CommandPoints(names, 0.0, t_rel, q, dq, ddq)


@SAFETY
@given(corrupted_commands())
def test_the_checker_reports_every_corrupted_command(case):
    kind, points = case
    assume(kind != "unknown")
    s = setup("iiwa14")
    assert check_points(points, s.robot, s.limits), kind


def test_the_checker_passes_the_commands_of_a_clean_run():
    trajectory, marginal = pool("iiwa14")[0]
    sc = Scenario("iiwa14", scaled(trajectory, 0.5 * marginal), ExcitationSettings(
        num_periods=1, start_delay_s=0.1, settle_s=0.1, approach_speed_rad_s=1.0, approach_acceleration_rad_s2=3.0,
        rate_hz=50.0, max_chunk_s=0.7), trajectory.offsets_rad + 0.2, Fault("none", math.inf, 0.0))
    rec = simulate(sc)
    assert rec.machine.phase is Phase.DONE and len(rec.sent) >= 3
    s = setup("iiwa14")
    assert all(check_points(sent.points, s.robot, s.limits) == [] and sent.transition == [] for sent in rec.sent)
    assert rec.holds == []
