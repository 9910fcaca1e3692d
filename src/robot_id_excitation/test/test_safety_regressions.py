"""The failures the safety properties found (shrunk by Hypothesis) and the ones found reading the code, kept as
plain tests; each names the bug it pins (docs/safety.md, "Bugs the properties found")."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from safety_deadlines import hold_deadline_s
from safety_harness import Fault, Scenario, setup, simulate, stop_bound_s

from robot_id_excitation.command_check import CommandPoints, ControllerModel, check_points, check_transition
from robot_id_excitation.excitation_guard import hold_point, trajectory_refusal
from robot_id_excitation.excitation_settings import ExcitationSettings
from robot_id_excitation.excitation_state import Phase
from robot_id_excitation.fourier import FourierTrajectory

A = np.array([[0.15618224, 0.15491512], [0.27316511, -0.05788185], [0.08177272, -0.0550316],
              [-0.21410993, -0.10576789], [0.02046092, -0.13752198], [-0.02877207, 0.16833836],
              [0.08572095, 0.08600525]])
B = np.array([[0.05186105, -0.02633844], [-0.28066303, 0.14898504], [-0.22640363, 0.03247079],
              [-0.01628787, 0.02062773], [0.03791828, -0.05016604], [0.13538949, -0.19311032],
              [0.11899836, -0.25424642]])
OFFSETS = np.array([0.92800905, 1.08357328, -1.87264156, 1.7028778, 1.96110794, 1.44653314, 2.54469487])
SHRUNK = ExcitationSettings(num_periods=1, state_timeout_s=0.5, max_start_error_rad=0.0, max_tracking_error_rad=0.0,
                            start_delay_s=0.0, approach_speed_rad_s=1.0, approach_acceleration_rad_s2=1.0,
                            settle_s=0.0, rate_hz=5.0, lead_s=0.0, overlap_s=0.0, max_chunk_s=1.0)
"""the settings most shrunk failures came down to"""


def _trajectory(scale: float = 1.0) -> FourierTrajectory:
    return FourierTrajectory("modified_fourier", "iiwa14", setup("iiwa14").config.joint_names, 0.9307441454901856,
                             scale * A, scale * B, OFFSETS)


def _away(joint: int, rad: float) -> np.ndarray:
    return OFFSETS + rad * (np.arange(7) == joint)


def _assert_all_commands_and_the_stop_within_limits(rec) -> None:
    s = setup(rec.scenario.name)
    for sent in rec.sent:
        assert check_points(sent.points, s.robot, s.limits) == []
        assert not sent.stop or (sent.transition == [] and sent.points.t_rel_s[0] <= stop_bound_s(s.limits))


def test_a_low_command_rate_is_checked_between_the_points_too():
    """rate_hz 5: every point within the limits, the controller's quintic between two of them was not (A7 at
    10.18 rad/s²); now the machine checks the interpolation as well and refuses the excitation before it moves."""
    one_piece = replace(SHRUNK, max_chunk_s=2.0)  # the period (1.07 s) in one command: no braking tail to check
    rec = simulate(Scenario("iiwa14", _trajectory(2.0625), one_piece, OFFSETS, Fault("none", math.inf, 0.0)))
    _assert_all_commands_and_the_stop_within_limits(rec)
    assert rec.machine.phase is Phase.REFUSED and rec.sent == []
    assert rec.machine.reason.startswith("the excitation breaks a limit: acceleration")


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_a_trajectory_with_nan_is_refused_not_a_crash():
    """A NaN coefficient made the start pose NaN: step() raised ValueError (quintic of duration NaN), and NaN
    points passed check_samples (NaN is not > tolerance)."""
    a = A.copy()
    a[0, 0] = np.nan
    trajectory = replace(_trajectory(), coefficients_a=a)
    rec = simulate(Scenario("iiwa14", trajectory, SHRUNK, OFFSETS, Fault("none", math.inf, 0.0)))
    assert rec.machine.phase is Phase.REFUSED and "not finite" in rec.machine.reason and rec.sent == []
    s = setup("iiwa14")
    assert "not finite" in trajectory_refusal(trajectory, s.robot, s.limits, "iiwa14")


def test_after_the_last_period_the_command_is_at_rest():
    """During the settle time after the last period the machine took the periodic continuation as the command:
    a hold then (here: joint state stamps frozen) stopped from a motion the arm was not making."""
    settings = replace(SHRUNK, num_periods=2, state_timeout_s=0.25, approach_acceleration_rad_s2=6.0,
                       settle_s=0.5, rate_hz=20.0, lead_s=0.0625)
    sc = Scenario("iiwa14", _trajectory(1.75), settings, _away(6, 0.28), Fault("stale_stamps", 3.2, 0.0),
                  tick_s=0.02, velocities=False, stamped=True)
    rec = simulate(sc)
    stop = next(x for x in rec.sent if x.stop)
    assert np.allclose(stop.points.q_rad[0], OFFSETS, atol=1e-9) and stop.points.t_rel_s[0] == pytest.approx(0.1)
    _assert_all_commands_and_the_stop_within_limits(rec)


@pytest.mark.parametrize(("fault", "settings"), [
    (Fault("dropout", 0.5, 1.0), replace(SHRUNK, approach_acceleration_rad_s2=2.0)),
    (Fault("time_back", 0.25, 1.0), replace(SHRUNK, approach_acceleration_rad_s2=5.0, lead_s=0.125)),
    (Fault("time_back", 1.0, 1.0), replace(SHRUNK, overlap_s=0.5)),
], ids=["old_state_extrapolated", "clock_back_in_approach", "clock_back_in_excitation"])
def test_a_hold_stops_from_where_the_arm_is(fault, settings):
    """Shrunk failures of the hold: a state 0.36 s old extrapolated with the velocity of its time overshot; after
    the clock jumped back the hold took the command of the wrong time. Now: the measured state moved on by what
    the command did since, on the command's own clock."""
    rec = simulate(Scenario("iiwa14", _trajectory(), settings, _away(6, 0.25), fault, tick_s=0.02, velocities=False,
                            stamped=False))
    assert rec.holds
    _assert_all_commands_and_the_stop_within_limits(rec)


def test_a_hold_after_the_clock_leapt_ahead_stops_from_the_last_state():
    """The clock leapt 1 s ahead in the excitation: the hold took the command at the last step before the leap,
    20 ms behind the arm, and stopped it in 0.1 s beyond the acceleration limit (A3 by 0.75 rad/s²); now it stops
    from the state received since that step."""
    names = setup("iiwa14").config.joint_names
    trajectory = FourierTrajectory(
        "modified_fourier", "iiwa14", names, 1.3811800078064096,
        np.array([[0.77412766, 0.23897426, 1.95068586, -1.33070472, -0.22171041, -0.56430507, -0.09168734]]).T,
        np.array([[0.98091466, -0.67276461, -2.16654661, 0.07222766, -1.15907276, 0.67344455, 0.24454042]]).T,
        np.array([-0.69965235, -1.50956361, -1.70866843, 0.84729743, -2.15146031, 1.3647795, -0.68011059]))
    settings = replace(SHRUNK, max_start_error_rad=0.0625, start_delay_s=0.25, approach_speed_rad_s=0.328125,
                       settle_s=0.0625)
    start = trajectory.offsets_rad + 0.28125 * (np.arange(7) == 6)
    rec = simulate(Scenario("iiwa14", trajectory, settings, start, Fault("time_ahead", 2.5, 1.0), velocities=False,
                            stamped=False))
    assert rec.holds and "jumped ahead" in rec.holds[0][1]
    _assert_all_commands_and_the_stop_within_limits(rec)


def test_a_hold_without_measured_velocities_estimates_them():
    """Without velocities in the joint states a hold took the arm as at rest: one point at the measured position
    in 0.1 s, from up to the velocity limits (found reading the code); now the finite difference of the positions."""
    rec = simulate(Scenario("iiwa14", _trajectory(1.75), replace(SHRUNK, rate_hz=50.0), OFFSETS,
                            Fault("abort", 0.8, 0.0), velocities=False))
    assert rec.holds == [(0.8, "abort requested")] and rec.sent[-1].state[1].any()
    _assert_all_commands_and_the_stop_within_limits(rec)


@pytest.mark.parametrize("kind", ["nan", "out_of_order", "time_back", "time_ahead"])
def test_faulty_joint_states_and_clock_jumps_hold_at_the_next_step(kind):
    """NaN joint states gave a NaN tracking error (never > the bound) and NaN stop points; out-of-order states and
    a clock going back were not noticed at all (found reading the code, confirmed by the property)."""
    sc = Scenario("iiwa14", _trajectory(1.75), replace(SHRUNK, rate_hz=50.0, max_tracking_error_rad=0.3), OFFSETS,
                  Fault(kind, 0.8, 1.0), stamped=True)
    rec = simulate(sc)
    deadline = hold_deadline_s(rec)
    assert deadline is not None and rec.holds and rec.holds[0][0] <= deadline
    _assert_all_commands_and_the_stop_within_limits(rec)


def test_an_arm_that_moves_does_not_start():
    """The start checks looked at the position only (found reading the code)."""
    s = setup("iiwa14")
    from robot_id_excitation.excitation_state import ExcitationStateMachine
    machine = ExcitationStateMachine(_trajectory(), s.robot, s.limits, replace(SHRUNK, start_delay_s=0.0))
    machine.on_joint_state(0.0, OFFSETS, np.full(7, 0.2))
    step = machine.step(0.01)
    assert machine.phase is Phase.REFUSED and "the arm is moving" in machine.reason and step.commands == ()


def test_the_start_gap_is_one_the_controller_closes_within_the_limits():
    """max_start_error_rad 0.02 and lead_s 0.1 let the excitation start 0.02 rad away, which the controller closes
    in 0.1 s at 5.77·0.02/0.1² = 11.5 rad/s² > 10 (iiwa14); now such a gap is approached first."""
    settings = replace(SHRUNK, max_start_error_rad=0.02, lead_s=0.1, rate_hz=50.0, approach_acceleration_rad_s2=2.0)
    rec = simulate(Scenario("iiwa14", _trajectory(), settings, _away(3, 0.019), Fault("none", math.inf, 0.0)),
                   until=lambda r: len(r.sent) >= 2)
    assert rec.machine.approach is not None and all(x.transition == [] for x in rec.sent)


def test_a_lead_shorter_than_a_step_is_raised():
    """lead_s 0.0078 with the node stepping every 20 ms: the first chunk arrived after its first point was due;
    the controller had to catch up with the curve (A6 beyond its acceleration limit by 2.9 rad/s²)."""
    settings = replace(SHRUNK, lead_s=0.0078125, overlap_s=0.15625, rate_hz=17.0, max_start_error_rad=0.0625)
    rec = simulate(Scenario("iiwa14", _trajectory(2.0), settings, _away(6, 0.25), Fault("none", math.inf, 0.0)),
                   until=lambda r: len(r.sent) >= 2)
    assert rec.machine.settings.lead_s == 0.04 and all(x.transition == [] for x in rec.sent)


def test_a_trajectory_for_another_robot_with_the_same_joints_is_refused():
    """iiwa7 and iiwa14 share their joint names: the node checked the names and the limits, not the robot."""
    s = setup("iiwa14")
    assert "made for robot 'iiwa7'" in trajectory_refusal(replace(_trajectory(), robot="iiwa7"), s.robot, s.limits,
                                                          "iiwa14")


def test_a_hold_near_a_limit_stops_inside_it():
    """A hold moving fast towards a position limit: the half-acceleration stop would end beyond it (and was
    clamped, so that the controller's path overshot); now a shorter stop, within the full limits, ends inside."""
    s = setup("iiwa14")
    lim = s.limits
    q, dq = OFFSETS.copy(), np.zeros(7)
    q[0], dq[0] = lim.position_upper_rad[0] - 0.15, 1.2  # a half-acceleration stop travels 0.216 rad
    target, duration_s = hold_point(s.robot, lim, q, dq)
    assert target[0] <= lim.position_upper_rad[0] and target[0] == pytest.approx(q[0] + 0.5 * dq[0] * duration_s)
    assert 1.5 * dq[0] / duration_s <= lim.acceleration_rad_s2[0] * (1 + 1e-9)


def test_the_first_chunk_leaves_lead_s_before_it_is_due_even_with_slow_steps():
    """From the lower corner of the iiwa14's range, steps 40 ms apart (= the raised lead_s) and overlap_s 1e-9: the
    first chunk was due lead_s + overlap_s after the approach ended, so it waited for the next step and reached the
    controller 1 ns before its first point (the way there: A2 at 6e4 rad/s² beyond its limit). Found by the start
    property when run from the package directory, as colcon runs it. (The corner's A2, A4 and A6 were at -120°, which
    folds link 7 into link 5 since the collision check: now -110°, -90° and -60°.)"""
    settings = replace(SHRUNK, max_start_error_rad=0.0625, max_tracking_error_rad=0.15,
                       approach_acceleration_rad_s2=2.0, overlap_s=1e-9)
    corner = np.deg2rad([-170.0, -110.0, 0.0, -90.0, -170.0, -60.0, -175.0])
    sc = Scenario("iiwa14", _trajectory(), settings, corner, Fault("none", 1.0, 0.0), tick_s=0.04, end_s=60.0)
    rec = simulate(sc, until=lambda r: sum(not x.stop for x in r.sent) >= 2)
    first_chunk = [x for x in rec.sent if not x.stop][1]
    assert first_chunk.points.due_s(first_chunk.t_s)[0] - first_chunk.t_s == pytest.approx(0.04)
    assert all(x.transition == [] for x in rec.sent)


def test_joint_states_that_fall_behind_hold_from_the_command():
    """A stream that keeps arriving, stamped, but falls behind (a queue growing by 0.5 s per s) passed as fresh:
    receipt times kept coming. The tracking error between the command and the old states then held the arm from
    where it had been (going back beyond the acceleration limits). Now a state's age counts its delay, the run holds
    on "fell behind" within the timeout, and stops from the command, where the arm is."""
    settings = replace(SHRUNK, num_periods=4, state_timeout_s=0.2, max_tracking_error_rad=0.3, rate_hz=50.0)
    sc = Scenario("iiwa14", _trajectory(), settings, OFFSETS, Fault("late", 1.5, 0.5), tick_s=0.02, velocities=True,
                  stamped=True)
    rec = simulate(sc)
    deadline = hold_deadline_s(rec)
    assert deadline is not None and rec.holds and rec.holds[0][0] <= deadline + 1e-9
    assert rec.holds[0][0] - sc.fault.t_s <= settings.state_timeout_s / sc.fault.size + 0.05
    assert "fell behind" in rec.holds[0][1]
    _assert_all_commands_and_the_stop_within_limits(rec)


def test_a_hold_of_an_arm_dragged_beyond_a_limit_does_not_pull_it_back():
    """A2 dragged 0.16 rad below its limit at 0.5 rad/s (the hold property at 5000 cases, once the harness let a
    tracking fault drag the joint whatever the controller did): the hold clamped the stop point to the limit, and
    the controller went back to it in 0.1 s at 3.1 rad/s and 98 rad/s² (limits 1.48 and 10); now an arm already
    outside stops where a stop within the full acceleration limits takes it."""
    s = setup("iiwa14")
    lim = s.limits
    q, dq = OFFSETS.copy(), np.zeros(7)
    q[1], dq[1] = lim.position_lower_rad[1] - 0.16, -0.5
    target, duration_s = hold_point(s.robot, lim, q, dq)
    assert target[1] == pytest.approx(q[1] + 0.5 * dq[1] * duration_s) and target[1] < lim.position_lower_rad[1]
    zeros = np.zeros((1, 7))
    stop = CommandPoints(s.config.joint_names, 0.0, np.array([duration_s]), target[None], zeros, zeros)
    problems = check_transition(ControllerModel(q), 0.0, stop, lim, (q, dq))
    assert problems and all("position below limit on lbr_A2" in p for p in problems)
