"""The excitation state machine without ROS: a simulated arm that reports joint states every 10 ms."""

from __future__ import annotations

import re

import numpy as np
import pytest

from robot_id_excitation.constraints import design_limits
from robot_id_excitation.excitation_plan import Command
from robot_id_excitation.excitation_state import (
    STOP_ACCELERATION_FRACTION,
    ExcitationSettings,
    ExcitationStateMachine,
    Phase,
    stop_point,
)
from robot_id_excitation.excitation_step import Severity, Step
from robot_id_excitation.fourier import FourierTrajectory
from robot_id_excitation.quintic import evaluate_quintic, quintic_coefficients

START_POSE = np.array([0.3, 0.5, -0.2, -1.0, 0.4, 0.8, 0.1])
AWAY = START_POSE + np.array([0.2, -0.1, 0.0, 0.1, 0.0, 0.0, -0.15])
PERIOD_S = 1.5
DT_S = 0.01
SETTINGS = ExcitationSettings(num_periods=2, state_timeout_s=0.2, max_start_error_rad=0.01, start_delay_s=0.3,
                              approach_speed_rad_s=1.0, approach_acceleration_rad_s2=3.0, settle_s=0.2, rate_hz=50.0,
                              lead_s=0.1, overlap_s=0.3, max_chunk_s=0.6)
CHUNK_S = PERIOD_S / 3
"""max_chunk_s 0.6 splits each period into three commands."""


@pytest.fixture(scope="module")
def trajectory(iiwa14_config):
    rng = np.random.default_rng(4)
    a, b = 0.08 * rng.normal(size=(7, 2)), 0.08 * rng.normal(size=(7, 2))
    return FourierTrajectory("modified_fourier", "iiwa14", iiwa14_config.joint_names, 1.0 / PERIOD_S, a, b, START_POSE)


class Bench:
    """Steps the machine every DT_S; the arm follows the last command (linear interpolation) and reports it."""

    def __init__(self, machine: ExcitationStateMachine, q_rad: np.ndarray, follow: bool = True) -> None:
        self.machine, self.follow = machine, follow
        self.q_rad, self.dq_rad_s = np.array(q_rad, dtype=float), np.zeros(len(q_rad))
        self.offset_rad = np.zeros(len(q_rad))
        self.publishing = True
        self.k = 0
        self.sent: list[tuple[float, Command]] = []
        """(time sent, command), stop commands included"""
        self.steps: list[tuple[float, Step]] = []
        self.phases = [machine.phase]
        self.last_state_s: float | None = None
        self._arrival: tuple[float, np.ndarray] | None = None

    @property
    def t_s(self) -> float:
        return self.k * DT_S

    def record(self, step: Step) -> Step:
        self.steps.append((self.t_s, step))
        for command in (*step.commands, *([step.stop] if step.stop else [])):
            self.sent.append((self.t_s, command))
            self._arrival = (self.t_s, self.q_rad.copy())
        if self.machine.phase != self.phases[-1]:
            self.phases.append(self.machine.phase)
        return step

    def _move_arm(self) -> None:
        if not (self.follow and self.sent):
            return
        (arrival_s, q_arrival), command = self._arrival, self.sent[-1][1]
        times = (command.stamp_s or arrival_s) + command.points.t_rel_s
        q, dq = command.points.q_rad, command.points.dq_rad_s
        if times[0] > arrival_s:
            times, q, dq = np.r_[arrival_s, times], np.vstack([q_arrival, q]), np.vstack([np.zeros(len(q[0])), dq])
        self.q_rad = np.array([np.interp(self.t_s, times, q[:, j]) for j in range(q.shape[1])])
        self.dq_rad_s = np.array([np.interp(self.t_s, times, dq[:, j]) for j in range(q.shape[1])])

    def run(self, seconds: float, until=lambda: False, confirmed: bool = False) -> None:
        end = self.k + round(seconds / DT_S)
        while self.k < end and not until():
            self.k += 1
            self._move_arm()
            if self.publishing:
                self.machine.on_joint_state(self.t_s, self.q_rad + self.offset_rad, self.dq_rad_s)
                self.last_state_s = self.t_s
            self.record(self.machine.step(self.t_s, confirmed))

    def markers(self) -> list:
        return [(t, m) for t, step in self.steps for m in step.markers]

    def excitation_start_s(self) -> float:
        return next(step.excitation_start_s for _, step in self.steps if step.excitation_start_s is not None)


def _on_first_tick(t_s: float, due_s: float) -> bool:
    """t_s is the first tick at or after due_s (a due time on a tick may round to the next one)."""
    return due_s - 1e-9 <= t_s <= due_s + DT_S + 1e-9


def _bench(trajectory, robot, limits, q_rad, follow=True, **overrides) -> Bench:
    settings = ExcitationSettings(**(SETTINGS.__dict__ | overrides))
    return Bench(ExcitationStateMachine(trajectory, robot, limits, settings), q_rad, follow)


def _assert_stop_from(stop: Command, q_rad: np.ndarray, dq_rad_s: np.ndarray, limits) -> None:
    """A single point at rest where a quintic from (q, dq, 0) stops within half the acceleration limits."""
    a = STOP_ACCELERATION_FRACTION * limits.acceleration_rad_s2
    duration_s = max(0.1, float(np.max(1.5 * np.abs(dq_rad_s) / a)))
    target = np.clip(q_rad + 0.5 * dq_rad_s * duration_s, limits.position_lower_rad, limits.position_upper_rad)
    assert stop.stamp_s is None and stop.points.t_rel_s.tolist() == pytest.approx([duration_s])
    assert np.allclose(stop.points.q_rad, [target], atol=1e-12)
    assert not stop.points.dq_rad_s.any() and not stop.points.ddq_rad_s2.any()


def test_approach_then_periods_in_chunks_then_done(trajectory, iiwa14, iiwa14_config):
    limits = design_limits(iiwa14_config)
    bench = _bench(trajectory, iiwa14, limits, AWAY)
    bench.run(12.0, until=lambda: bench.machine.phase is Phase.DONE)
    assert bench.phases == [Phase.WAITING, Phase.APPROACHING, Phase.EXCITING, Phase.DONE]
    assert bench.machine.reason == "2 period(s) commanded"
    (sent_a, approach), *chunks = bench.sent
    assert sent_a == pytest.approx(DT_S + SETTINGS.start_delay_s + DT_S)  # first state at DT_S; planned, then sent
    assert approach.stamp_s == pytest.approx(sent_a + SETTINGS.lead_s)
    assert np.allclose(approach.points.q_rad[0], AWAY, atol=1e-12)
    assert np.allclose(approach.points.q_rad[-1], START_POSE, atol=1e-12)
    assert np.allclose(approach.points.dq_rad_s[[0, -1]], 0.0, atol=1e-12)
    assert np.abs(approach.points.dq_rad_s).max() <= SETTINGS.approach_speed_rad_s * (1 + 1e-9)
    assert np.abs(approach.points.ddq_rad_s2).max() <= SETTINGS.approach_acceleration_rad_s2 * (1 + 1e-6)

    t0 = bench.excitation_start_s()
    approach_end_s = approach.stamp_s + approach.points.t_rel_s[-1] + SETTINGS.settle_s
    assert _on_first_tick(t0 - SETTINGS.lead_s, approach_end_s)
    assert chunks[0][0] == pytest.approx(t0 - SETTINGS.lead_s)  # the first chunk leaves at once, lead_s early
    assert len(chunks) == 2 * 3
    for i, (sent_s, chunk) in enumerate(chunks):
        overlap_s = min(SETTINGS.overlap_s, i * CHUNK_S)
        assert chunk.stamp_s == pytest.approx(t0 + i * CHUNK_S - overlap_s)
        along = chunk.stamp_s + chunk.points.t_rel_s <= t0 + (i + 1) * CHUNK_S + 1e-9  # then its braking tail
        assert chunk.stamp_s + chunk.points.t_rel_s[along][-1] == pytest.approx(t0 + (i + 1) * CHUNK_S)
        assert _on_first_tick(sent_s, chunk.stamp_s - SETTINGS.lead_s)
        q, dq, _ = trajectory.evaluate(chunk.stamp_s - t0 + chunk.points.t_rel_s[along])
        assert np.allclose(chunk.points.q_rad[along], q, atol=1e-12)
        assert np.allclose(chunk.points.dq_rad_s[along], dq, atol=1e-12)
        assert not chunk.points.dq_rad_s[-1].any() and not chunk.points.ddq_rad_s2[-1].any()  # ends at rest
    period_1 = chunks[3][1]  # starts at rest at t0 + PERIOD_S, after overlap_s of the end of period 0
    k = int(np.argmin(np.abs(period_1.stamp_s + period_1.points.t_rel_s - (t0 + PERIOD_S))))
    assert np.allclose(period_1.points.q_rad[k], START_POSE, atol=1e-9)
    assert np.allclose(period_1.points.dq_rad_s[k], 0, atol=1e-9)

    markers = bench.markers()
    assert [m.index for _, m in markers] == [0, 1]
    assert [m.t_s for _, m in markers] == pytest.approx([t0, t0 + PERIOD_S])
    assert all(_on_first_tick(t, m.t_s) for t, m in markers)
    assert _on_first_tick(bench.t_s, t0 + 2 * PERIOD_S + SETTINGS.settle_s)
    assert all(step.stop is None and step.hold_reason is None for _, step in bench.steps)


def test_refuses_to_start_on_stale_joint_states(trajectory, iiwa14, iiwa14_config):
    bench = _bench(trajectory, iiwa14, design_limits(iiwa14_config), START_POSE)
    bench.run(0.05)
    bench.publishing = False
    bench.run(2.0, until=lambda: bench.machine.phase is not Phase.WAITING)
    assert bench.phases == [Phase.WAITING, Phase.REFUSED]
    assert bench.t_s == pytest.approx(DT_S + SETTINGS.start_delay_s)
    age_s = bench.t_s - bench.last_state_s
    assert bench.machine.reason == f"joint states are stale (the latest is {age_s:.2f} s old, timeout 0.2 s)"
    assert bench.sent == []


def test_refuses_outside_the_position_limits(trajectory, iiwa14, iiwa14_config):
    limits = design_limits(iiwa14_config)
    q_rad = START_POSE.copy()
    q_rad[0] = limits.position_upper_rad[0] + 0.01
    bench = _bench(trajectory, iiwa14, limits, q_rad)
    bench.run(1.0, until=lambda: bench.machine.phase is not Phase.WAITING)
    assert bench.machine.phase is Phase.REFUSED and bench.sent == []
    assert bench.machine.reason == f"joints ['{limits.joint_names[0]}'] are outside their position limits"


def test_missed_start_pose_stops_and_refuses(trajectory, iiwa14, iiwa14_config):
    limits = design_limits(iiwa14_config)
    away = START_POSE + np.array([0.0, 0.0, 0.0, 0.25, 0.0, 0.0, 0.0])
    bench = _bench(trajectory, iiwa14, limits, away, follow=False, max_tracking_error_rad=0.0)
    bench.run(8.0, until=lambda: bench.machine.phase is Phase.REFUSED)
    assert bench.phases == [Phase.WAITING, Phase.APPROACHING, Phase.REFUSED]
    assert bench.machine.reason == "robot is 0.250 rad from the start pose on lbr_A4 (allowed 0.01 rad)"
    (_, approach), (stop_s, stop) = bench.sent
    assert stop_s >= approach.stamp_s + approach.points.t_rel_s[-1] + SETTINGS.settle_s
    assert bench.steps[-1][1].hold_reason == "did not reach the start pose"
    _assert_stop_from(stop, away, np.zeros(7), limits)
    assert bench.markers() == []


def test_abort_during_the_excitation_holds_and_sends_nothing_more(trajectory, iiwa14, iiwa14_config):
    limits = design_limits(iiwa14_config)
    bench = _bench(trajectory, iiwa14, limits, START_POSE)
    bench.run(8.0, until=lambda: len(bench.markers()) == 1)
    bench.run(0.4)
    assert np.abs(bench.dq_rad_s).max() > 0.05, "the arm should be moving when the abort comes"
    step, reply = bench.machine.abort(bench.t_s)
    bench.record(step)
    assert reply == "state holding: abort requested" and step.hold_reason == "abort requested"
    assert step.commands == () and step.markers == ()
    _assert_stop_from(step.stop, bench.q_rad, bench.dq_rad_s, limits)
    count = len(bench.sent)
    bench.run(2 * PERIOD_S)
    assert len(bench.sent) == count and len(bench.markers()) == 1
    assert bench.phases[-2:] == [Phase.EXCITING, Phase.HOLDING]


def test_stop_point_decelerates_within_half_the_acceleration_limits(iiwa14_config):
    limits = design_limits(iiwa14_config)
    rng = np.random.default_rng(1)
    q_rad, dq_rad_s = rng.uniform(-1.0, 1.0, 7), rng.uniform(-1.0, 1.0, 7)
    target, duration_s = stop_point(q_rad, dq_rad_s, limits.acceleration_rad_s2, limits.position_lower_rad,
                                    limits.position_upper_rad)
    zeros = np.zeros(7)
    coefficients = quintic_coefficients(duration_s, (q_rad, dq_rad_s, zeros), (target, zeros, zeros))
    _, dq, ddq = evaluate_quintic(coefficients, np.linspace(0.0, duration_s, 2001))
    assert np.all(np.abs(ddq).max(axis=0) <= STOP_ACCELERATION_FRACTION * limits.acceleration_rad_s2 * (1 + 1e-6))
    assert np.isclose(np.abs(ddq).max(axis=0) / limits.acceleration_rad_s2, STOP_ACCELERATION_FRACTION).any()
    assert np.allclose(dq[-1], 0.0, atol=1e-12)


def test_abort_before_motion_never_starts(trajectory, iiwa14, iiwa14_config):
    bench = _bench(trajectory, iiwa14, design_limits(iiwa14_config), AWAY)
    bench.run(0.1)
    step, reply = bench.machine.abort(bench.t_s)
    assert reply == "not moving (state aborted)" and step.stop is None and step.hold_reason is None
    assert bench.machine.reason == "abort requested before motion"
    bench.run(3.0)
    assert bench.sent == [] and bench.machine.phase is Phase.ABORTED


def test_holds_on_the_commanded_state_when_joint_states_stop(trajectory, iiwa14, iiwa14_config):
    limits = design_limits(iiwa14_config)
    bench = _bench(trajectory, iiwa14, limits, START_POSE)
    bench.run(8.0, until=lambda: len(bench.markers()) == 1)
    bench.run(0.3)
    bench.publishing = False
    bench.run(1.0, until=lambda: bench.machine.phase is Phase.HOLDING)
    silence_s = bench.t_s - bench.last_state_s
    assert SETTINGS.state_timeout_s < silence_s <= SETTINGS.state_timeout_s + DT_S + 1e-9
    assert bench.machine.reason == f"joint states stopped arriving or fell behind (the latest is {silence_s:.2f} s old)"
    q, dq, _ = trajectory.evaluate(np.array([bench.t_s - bench.excitation_start_s()]))
    _assert_stop_from(bench.sent[-1][1], q[0], dq[0], limits)
    count = len(bench.sent)
    bench.run(2 * PERIOD_S)
    assert len(bench.sent) == count


def test_holds_on_tracking_error_above_the_limit_only(trajectory, iiwa14, iiwa14_config):
    limits = design_limits(iiwa14_config)
    bench = _bench(trajectory, iiwa14, limits, START_POSE)
    bench.run(8.0, until=lambda: len(bench.markers()) == 1)
    bench.offset_rad[2] = 0.25
    bench.run(0.5)
    assert bench.machine.phase is Phase.EXCITING
    bench.offset_rad[2] = 0.4
    bench.run(0.1, until=lambda: bench.machine.phase is Phase.HOLDING)
    assert bench.machine.phase is Phase.HOLDING
    match = re.fullmatch(r"tracking error (\S+) rad exceeds 0.3 rad", bench.machine.reason)
    assert match and float(match[1]) == pytest.approx(0.4, abs=2e-3)
    _assert_stop_from(bench.sent[-1][1], bench.q_rad + bench.offset_rad, bench.dq_rad_s, limits)


def test_hardware_mode_waits_for_confirmation(trajectory, iiwa14, iiwa14_config):
    bench = _bench(trajectory, iiwa14, design_limits(iiwa14_config), START_POSE, require_confirm=True)
    bench.run(1.5)
    assert bench.phases == [Phase.WAITING, Phase.CONFIRMING] and bench.sent == []
    warnings = [line.text for _, step in bench.steps for line in step.log if line.severity is Severity.WARNING]
    assert len(warnings) == 1 and warnings[0].startswith("hardware mode: set the parameter confirm to true to start "
                                                         "moving: start pose [0.30, 0.50, -0.20, -1.00, 0.40, 0.80, "
                                                         "0.10] rad; largest distance 0.000 rad on lbr_A1")
    assert "no approach: the arm is at the start pose; then 2 period(s) of 1.5 s (3 s), up to " in warnings[0]
    bench.run(0.01, confirmed=True)
    assert bench.phases == [Phase.WAITING, Phase.CONFIRMING, Phase.EXCITING]  # at the start pose: no approach
    assert bench.steps[-1][1].excitation_start_s == pytest.approx(bench.t_s + SETTINGS.lead_s)


def test_the_confirmation_shows_the_approach_and_holds_to_the_pose_it_was_planned_from(trajectory, iiwa14,
                                                                                      iiwa14_config):
    bench = _bench(trajectory, iiwa14, design_limits(iiwa14_config), AWAY, require_confirm=True)
    bench.run(1.0)
    assert bench.machine.phase is Phase.CONFIRMING and bench.sent == []
    parts = bench.machine.reason.split("; ")
    assert parts[1] == "largest distance 0.200 rad on lbr_A1" and re.fullmatch(
        r"approach \d+\.\d s at up to 1 rad/s", parts[2]), parts
    assert re.fullmatch(r"closest approach \d+ mm", parts[-1]), parts
    bench.q_rad = AWAY + 0.05  # someone moved the arm while the user read the plan
    bench.run(0.02, confirmed=True)
    assert bench.machine.phase is Phase.REFUSED and bench.sent == []
    assert bench.machine.reason == "the arm moved by 0.050 rad since its start was planned"


def test_an_excitation_that_breaks_a_limit_is_refused_before_the_arm_moves(trajectory, iiwa14, iiwa14_config):
    slow = design_limits(iiwa14_config, velocity_scale=0.01)
    bench = _bench(trajectory, iiwa14, slow, START_POSE)
    bench.run(2.0, until=lambda: bench.machine.phase is not Phase.WAITING)
    assert bench.machine.phase is Phase.REFUSED and bench.sent == []
    assert bench.machine.reason.startswith("the excitation breaks a limit: velocity")


def test_every_chunk_is_checked_once_and_a_repeated_chunk_is_the_same_points(trajectory, iiwa14, iiwa14_config):
    checked = []
    settings = ExcitationSettings(**(SETTINGS.__dict__ | {"num_periods": 4}))
    machine = ExcitationStateMachine(trajectory, iiwa14, design_limits(iiwa14_config), settings,
                                     monitor=lambda points: checked.append(points) or [])
    assert machine.prepare() == "" and machine.prepare() == ""
    chunks = machine._chunks
    assert len(chunks) == 12 and len(checked) == 4  # three per period; the first one has no overlap
    assert len({id(p) for p in checked}) == 4 and all(c.points in checked for c in chunks)
    for k, chunk in enumerate(chunks):  # each repeat is what the trajectory commands at its own time, to its end
        along = chunk.offset_s + chunk.points.t_rel_s <= (k + 1) * CHUNK_S + 1e-9
        q, dq, _ = trajectory.evaluate(chunk.offset_s + chunk.points.t_rel_s[along])
        assert np.allclose(chunk.points.q_rad[along], q, atol=1e-9)
        assert np.allclose(chunk.points.dq_rad_s[along], dq, atol=1e-9)


def test_a_monitor_that_finds_a_problem_refuses_the_run(trajectory, iiwa14, iiwa14_config):
    machine = ExcitationStateMachine(trajectory, iiwa14, design_limits(iiwa14_config), SETTINGS,
                                     monitor=lambda points: ["point 3: lbr_A2 velocity beyond its limit"])
    assert machine.prepare() == ("the excitation breaks a limit: the command monitor found point 3: lbr_A2 velocity "
                                 "beyond its limit")


def test_an_approach_that_breaks_a_limit_is_refused(trajectory, iiwa14, iiwa14_config):
    bench = _bench(trajectory, iiwa14, design_limits(iiwa14_config), AWAY, approach_speed_rad_s=10.0,
                   approach_acceleration_rad_s2=100.0)
    bench.run(1.0, until=lambda: bench.machine.phase is not Phase.WAITING)
    assert bench.machine.phase is Phase.REFUSED and bench.sent == []
    assert bench.machine.reason.startswith("the approach to the start pose breaks a limit: ")


@pytest.mark.parametrize(("offset_s", "refused"), [(0.2, "behind"), (-0.2, "ahead of"), (0.03, None)])
def test_refuses_to_start_when_the_robot_clock_is_off(trajectory, iiwa14, iiwa14_config, offset_s, refused):
    """Joint states stamped offset_s before their receipt on the node's clock (a robot PC's clock behind, or ahead
    when negative); at most max_clock_offset_s is allowed, as the commands carry absolute stamps."""
    settings = ExcitationSettings(**(SETTINGS.__dict__ | {"max_clock_offset_s": 0.05}))
    machine = ExcitationStateMachine(trajectory, iiwa14, design_limits(iiwa14_config), settings)
    t_s = 0.0
    while machine.phase is Phase.WAITING and t_s < 1.0:
        t_s += DT_S
        machine.on_joint_state(t_s, START_POSE, np.zeros(7), t_s - offset_s)
        machine.step(t_s)
    if refused is None:
        assert machine.phase is Phase.EXCITING
    else:
        assert machine.phase is Phase.REFUSED
        assert machine.reason == (f"the robot's joint states are stamped 0.200 s {refused} this node's clock (at most "
                                  "0.05 s): the commands carry absolute stamps; synchronise the two computers' clocks "
                                  "(chrony or PTP) and start again")


def test_after_the_last_period_the_arm_is_commanded_to_rest_and_a_stop_is_not_needed(trajectory, iiwa14,
                                                                                       iiwa14_config):
    """During the last period the arm moves (a stop must hold it); from the end of the last period it is commanded
    to rest at the start pose, every command's last point at rest there (checked here on the commands sent), so a
    shutdown in the settling time sends nothing."""
    bench = _bench(trajectory, iiwa14, design_limits(iiwa14_config), START_POSE)
    bench.run(12.0, until=lambda: bench.machine.phase is Phase.EXCITING)
    end_s = bench.excitation_start_s() + 2 * PERIOD_S
    bench.run(end_s - PERIOD_S / 2 - bench.t_s)
    assert bench.machine.moving and not bench.machine.commanded_to_rest(bench.t_s)
    bench.run(end_s + DT_S - bench.t_s)
    assert bench.machine.phase is Phase.EXCITING and bench.machine.commanded_to_rest(bench.t_s)
    last = bench.sent[-1][1]
    held = last.stamp_s + last.points.t_rel_s >= end_s - 1e-9
    assert np.allclose(last.points.q_rad[held], START_POSE, atol=1e-9) and not last.points.dq_rad_s[held].any()
