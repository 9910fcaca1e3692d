"""The excitation node's state machine, without ROS: start checks, approach, excitation in chunks, hold.

Times are floats in seconds on the caller's clock; joint states are numpy arrays in the order of the limits'
joint names. Every call returns a `Step`: the trajectory commands to send, the stop command of a hold, the period
markers, the start time of the excitation (for its description) and the lines to log. The node moves these
between ROS and this class. The guarantees it keeps are stated in docs/safety.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import StrEnum

import numpy as np

from robot_id_excitation.constraints import DesignLimits, check_samples
from robot_id_excitation.excitation_guard import (  # noqa: F401 (STOP_ACCELERATION_FRACTION, stop_point: re-exported)
    MAX_STEP_GAP_S,
    MIN_LEAD_S,
    STOP_ACCELERATION_FRACTION,
    JointStateStream,
    controller_samples,
    hold_point,
    hold_state,
    start_refusal,
    start_tolerance_rad,
    stop_point,
)
from robot_id_excitation.quintic import evaluate_quintic, quintic_coefficients, rest_to_rest_duration
from robot_id_excitation.trajectory_file import Trajectory
from robot_id_model.robot_model import RobotModel


class Phase(StrEnum):
    """Where the run is; the values are the node's state names."""

    WAITING = "waiting_for_joint_states"
    APPROACHING = "approaching"
    EXCITING = "exciting"
    HOLDING = "holding"
    DONE = "done"
    REFUSED = "refused"
    ABORTED = "aborted"


MOVING = (Phase.APPROACHING, Phase.EXCITING)


class Severity(StrEnum):
    """Log level of a LogLine."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True)
class LogLine:
    """A line for the caller's log."""

    severity: Severity
    text: str


@dataclass(frozen=True)
class ExcitationSettings:
    """The node's parameters that steer the state machine (same names, same defaults)."""

    num_periods: int = 5
    require_confirm: bool = False
    """hardware mode: nothing moves until the caller passes confirmed=True"""
    state_timeout_s: float = 0.2
    max_start_error_rad: float = 0.02
    """also at most a·lead_s²/5.77 per joint: the gap the controller closes within lead_s at the acceleration limit"""
    max_start_speed_rad_s: float = 0.05
    """the arm must be at rest (measured joint speeds below this) to start"""
    max_tracking_error_rad: float = 0.3
    """0: off"""
    start_delay_s: float = 1.0
    approach_speed_rad_s: float = 0.2
    approach_acceleration_rad_s2: float = 0.5
    settle_s: float = 0.5
    rate_hz: float = 100.0
    """points per second of a command"""
    lead_s: float = 0.1
    """a command is sent this long before its first point is due (at least MIN_LEAD_S: the node steps every 20 ms)"""
    overlap_s: float = 0.5
    """each excitation chunk starts this long before the end of the previous one"""
    max_chunk_s: float = 30.0
    max_step_gap_s: float = MAX_STEP_GAP_S
    """steps further apart on the node's clock hold the run (0: off, for a simulator's clock in lockstep)"""


@dataclass(frozen=True, eq=False)
class Command:
    """Points for a joint trajectory controller, due at stamp_s + t_rel_s (stamp_s None: on arrival)."""

    stamp_s: float | None
    t_rel_s: np.ndarray
    """(K,)"""
    q_rad: np.ndarray
    """(K, n), as dq_rad_s and ddq_rad_s2"""
    dq_rad_s: np.ndarray
    ddq_rad_s2: np.ndarray


@dataclass(frozen=True)
class PeriodStart:
    """Period `index` starts at t_s (a period marker)."""

    index: int
    t_s: float


@dataclass(frozen=True)
class Step:
    """What one call decided, in the order to publish: commands, then the stop of a hold."""

    commands: tuple[Command, ...] = ()
    stop: Command | None = None
    hold_reason: str | None = None
    """set when this call held (stop is None if no joint state was known)"""
    markers: tuple[PeriodStart, ...] = ()
    excitation_start_s: float | None = None
    """set when the excitation was planned: t0 of period 0"""
    log: tuple[LogLine, ...] = ()


@dataclass
class _Outbox:
    """What the current call has decided so far."""

    commands: list[Command] = field(default_factory=list)
    stop: Command | None = None
    hold_reason: str | None = None
    markers: list[PeriodStart] = field(default_factory=list)
    excitation_start_s: float | None = None
    log: list[LogLine] = field(default_factory=list)

    def step(self) -> Step:
        return Step(tuple(self.commands), self.stop, self.hold_reason, tuple(self.markers), self.excitation_start_s,
                    tuple(self.log))


@dataclass(frozen=True)
class _Approach:
    start_s: float
    duration_s: float
    coefficients: np.ndarray


@dataclass(frozen=True)
class _Chunk:
    """One excitation command: `length_s` from `start_s` after t0 (before the overlap)."""

    start_s: float
    length_s: float


@dataclass
class _Excitation:
    t0_s: float
    chunks: tuple[_Chunk, ...]
    next_chunk: int = 0
    next_marker: int = 0


def _plan_chunks(period_s: float, num_periods: int, max_chunk_s: float) -> tuple[_Chunk, ...]:
    """Every period in equal pieces of at most max_chunk_s."""
    pieces = max(1, math.ceil(period_s / max_chunk_s))
    return tuple(_Chunk(k * period_s + j * period_s / pieces, period_s / pieces)
                 for k in range(num_periods) for j in range(pieces))


class ExcitationStateMachine:
    """Waits for joint states, approaches the start pose, streams N periods, and holds on any fault.

    The caller refuses a trajectory first (excitation_guard.trajectory_refusal); here every command is checked
    again before it is sent. A fault of the joint states (JointStateStream) holds the run at the next step(), or
    refuses it before motion. Nothing moves again after a hold.
    """

    def __init__(self, trajectory: Trajectory, robot: RobotModel, limits: DesignLimits,
                 settings: ExcitationSettings) -> None:
        settings = replace(settings, lead_s=max(settings.lead_s, MIN_LEAD_S))
        self.trajectory, self.robot, self.limits, self.settings = trajectory, robot, limits, settings
        self.start_pose_rad = trajectory.evaluate(np.zeros(1))[0][0]
        self.phase = Phase.WAITING
        self.reason = ""
        self.states = JointStateStream(len(limits.joint_names))
        self._approach: _Approach | None = None
        self._excitation: _Excitation | None = None
        self._confirm_asked = False
        self._out = _Outbox()
        self._start_tolerance_rad = start_tolerance_rad(limits, settings.max_start_error_rad, settings.lead_s)
        self.violation = ""  # the first limit the last refused command broke

    @property
    def moving(self) -> bool:
        return self.phase in MOVING

    @property
    def first_state_s(self) -> float | None:
        return self.states.first_s

    # -- inputs --------------------------------------------------------------------------------------------
    def on_joint_state(self, t_s: float, q_rad: np.ndarray, dq_rad_s: np.ndarray | None = None,
                       stamp_s: float | None = None) -> None:
        """A measurement received at t_s, stamped stamp_s by its source (None: unstamped); a faulty one is not
        used, its fault holds the run at the next step() (see JointStateStream)."""
        self.states.receive(t_s, q_rad, dq_rad_s, stamp_s)

    def step(self, t_s: float, confirmed: bool = False) -> Step:
        """Advance to t_s; `confirmed` (asked for only with require_confirm) lets the arm start moving."""
        self._out = _Outbox()
        elapsed_s = self.states.tick(t_s)
        if self.moving and self._held_on_fault(t_s, elapsed_s):
            return self._out.step()
        if self.phase is Phase.WAITING:
            self._tick_waiting(t_s, confirmed)
        elif self.phase is Phase.APPROACHING:
            self._tick_approaching(t_s)
        elif self.phase is Phase.EXCITING:
            self._tick_exciting(t_s)
        return self._out.step()

    def abort(self, t_s: float) -> tuple[Step, str]:
        """Hold if moving, otherwise never start; the step and a one-line reply for the caller."""
        self._out = _Outbox()
        moving = self.moving
        if moving:
            self._hold(t_s, "abort requested")
        elif self.phase not in (Phase.HOLDING, Phase.DONE):
            self.phase, self.reason = Phase.ABORTED, "abort requested before motion"
        return self._out.step(), f"state {self.phase}: {self.reason}" if moving else f"not moving (state {self.phase})"

    def hold(self, t_s: float, reason: str) -> Step:
        """Stop where the arm can: a single point ahead of the measured (or, if stale, commanded) state."""
        self._out = _Outbox()
        self._hold(t_s, reason)
        return self._out.step()

    # -- helpers -------------------------------------------------------------------------------------------
    def _log(self, severity: Severity, text: str) -> None:
        self._out.log.append(LogLine(severity, text))

    def _states_fresh(self, t_s: float) -> bool:
        return self.states.fresh(t_s, self.settings.state_timeout_s)

    def _refuse(self, reason: str) -> None:
        self.phase, self.reason = Phase.REFUSED, reason
        self._log(Severity.ERROR, f"refusing to move: {reason}")

    def _checked(self, stamp_s: float, t_rel_s: np.ndarray, q_rad: np.ndarray, dq_rad_s: np.ndarray,
                 ddq_rad_s2: np.ndarray) -> Command | None:
        """The command, or None (after logging why) if a point is not finite, or one of them or of the controller's
        interpolation between them breaks a hard limit."""
        if not all(np.isfinite(x).all() for x in (t_rel_s, q_rad, dq_rad_s, ddq_rad_s2)) or not np.isfinite(stamp_s):
            self._log(Severity.ERROR, "not sending a trajectory with values that are not finite")
            return None
        report = check_samples(self.robot, self.limits, *controller_samples(t_rel_s, q_rad, dq_rad_s, ddq_rad_s2))
        if not report.feasible:
            self.violation = report.violations[0].describe()
            self._log(Severity.ERROR, f"not sending a trajectory that breaks a limit: {self.violation}")
            return None
        return Command(stamp_s, t_rel_s, q_rad, dq_rad_s, ddq_rad_s2)

    def _commanded(self, t_s: float) -> tuple[np.ndarray, np.ndarray] | None:
        """Commanded position and velocity at t_s, if a motion is under way."""
        if self.phase is Phase.APPROACHING:
            a = self._approach
            q, dq, _ = evaluate_quintic(a.coefficients, np.clip(np.array([t_s - a.start_s]), 0.0, a.duration_s))
            return q[0], dq[0]
        if self.phase is Phase.EXCITING:  # at rest at the start pose before t0 and after the last period
            end_s = self.settings.num_periods * self.trajectory.period_s
            q, dq, _ = self.trajectory.evaluate(np.array([min(max(0.0, t_s - self._excitation.t0_s), end_s)]))
            return q[0], dq[0]
        return None

    def _hold(self, t_s: float, reason: str, leap_from_s: float | None = None) -> None:
        state = hold_state(t_s, self.states, self._commanded, self.settings.state_timeout_s, leap_from_s)
        self.phase, self.reason = Phase.HOLDING, reason
        self._out.hold_reason = reason
        if state is None:
            self._log(Severity.ERROR, f"hold ({reason}): no joint state known, nothing sent")
            return
        target, duration_s = hold_point(self.robot, self.limits, *state)
        zeros = np.zeros((1, len(target)))
        self._out.stop = Command(None, np.array([duration_s]), target[None, :], zeros, zeros)
        self._log(Severity.WARNING, f"holding: {reason}")

    def _held_on_fault(self, t_s: float, elapsed_s: float) -> bool:
        """Hold on a latched fault, a leap of the clock, stale joint states or a tracking error beyond its bound."""
        if self.states.fault:
            self._hold(t_s, self.states.fault)
            return True
        if self.settings.max_step_gap_s and elapsed_s > self.settings.max_step_gap_s:
            self._hold(t_s, f"time jumped ahead by {elapsed_s:.3f} s (or no step for that long)", t_s - elapsed_s)
            return True
        if not self._states_fresh(t_s):
            self._hold(t_s, f"joint states stopped arriving or fell behind (the latest is "
                            f"{self.states.age_s(t_s):.2f} s old)")
            return True
        error_rad = np.abs(self._commanded(t_s)[0] - self.states.q_rad).max()
        limit_rad = self.settings.max_tracking_error_rad
        if limit_rad > 0 and error_rad > limit_rad:
            self._hold(t_s, f"tracking error {error_rad:.3f} rad exceeds {limit_rad} rad")
            return True
        return False

    # -- phases --------------------------------------------------------------------------------------------
    def _tick_waiting(self, t_s: float, confirmed: bool) -> None:
        s, m = self.settings, self.states
        if m.fault:
            self._refuse(m.fault)
            return
        if m.first_s is None or t_s - self.first_state_s < s.start_delay_s:
            return
        if s.require_confirm and not confirmed:
            if not self._confirm_asked:
                self._confirm_asked = True
                self._log(Severity.WARNING, "hardware mode: set the parameter confirm:=true to start moving")
            return
        if not self._states_fresh(t_s):
            self._refuse(f"joint states are stale (the latest is {m.age_s(t_s):.2f} s old, "
                         f"timeout {s.state_timeout_s} s)")
            return
        refusal = start_refusal(self.limits, m.q_rad, m.dq_rad_s, s.max_start_speed_rad_s, self.start_pose_rad)
        if refusal:
            self._refuse(refusal)
            return
        self._start_approach(t_s)

    def _start_approach(self, t_s: float) -> None:
        s = self.settings
        q_rad = self.states.q_rad
        distance_rad = self.start_pose_rad - q_rad
        if np.all(np.abs(distance_rad) <= self._start_tolerance_rad):
            self._start_excitation(t_s)
            return
        duration_s = rest_to_rest_duration(distance_rad, s.approach_speed_rad_s, s.approach_acceleration_rad_s2)
        zeros = np.zeros_like(q_rad)
        coefficients = quintic_coefficients(duration_s, (q_rad, zeros, zeros),
                                            (self.start_pose_rad, zeros, zeros))
        t_rel_s = np.linspace(0.0, duration_s, max(2, int(np.ceil(duration_s * s.rate_hz)) + 1))
        start_s = t_s + s.lead_s
        command = self._checked(start_s, t_rel_s, *evaluate_quintic(coefficients, t_rel_s))
        if command is None:
            return self._refuse(f"the approach to the start pose breaks a limit: {' '.join(self.violation.split())}")
        self._approach = _Approach(start_s, duration_s, coefficients)
        self.phase = Phase.APPROACHING
        self._out.commands.append(command)
        self._log(Severity.INFO, f"moving to the start pose in {duration_s:.1f} s "
                                 f"(largest distance {np.abs(distance_rad).max():.3f} rad)")

    def _tick_approaching(self, t_s: float) -> None:
        a, s = self._approach, self.settings
        if t_s < a.start_s + a.duration_s + s.settle_s:
            return
        error_rad = np.abs(self.states.q_rad - self.start_pose_rad)
        if np.any(error_rad > self._start_tolerance_rad):
            j = int(np.argmax(error_rad - self._start_tolerance_rad))
            self._hold(t_s, "did not reach the start pose")
            self._refuse(f"robot is {error_rad[j]:.3f} rad from the start pose on {self.limits.joint_names[j]} "
                         f"(allowed {self._start_tolerance_rad[j]:.3g} rad)")
            return
        self._start_excitation(t_s)

    def _start_excitation(self, t_s: float) -> None:
        s, period_s = self.settings, self.trajectory.period_s
        t0_s = t_s + s.lead_s  # the first chunk goes now, lead_s ahead (a later step may come too late for it)
        self._excitation = _Excitation(t0_s, _plan_chunks(period_s, s.num_periods, s.max_chunk_s))
        self.phase = Phase.EXCITING
        self._out.excitation_start_s = t0_s
        self._log(Severity.INFO, f"excitation: {s.num_periods} period(s) of {period_s:.3g} s from t = {t0_s:.3f}")
        self._tick_exciting(t_s)

    def _tick_exciting(self, t_s: float) -> None:
        e, s, period_s = self._excitation, self.settings, self.trajectory.period_s
        while e.next_chunk < len(e.chunks):
            chunk = e.chunks[e.next_chunk]
            overlap_s = min(s.overlap_s, chunk.start_s)
            if t_s < e.t0_s + chunk.start_s - overlap_s - s.lead_s:
                break
            span_s = chunk.length_s + overlap_s
            t_rel_s = np.linspace(0.0, span_s, max(2, int(np.ceil(span_s * s.rate_hz)) + 1))
            states = self.trajectory.evaluate(chunk.start_s - overlap_s + t_rel_s)
            command = self._checked(e.t0_s + chunk.start_s - overlap_s, t_rel_s, *states)
            if command is None:
                self._hold(t_s, "a commanded point breaks a limit")
                return
            self._out.commands.append(command)
            e.next_chunk += 1
        while e.next_marker < s.num_periods and t_s >= e.t0_s + e.next_marker * period_s:
            self._out.markers.append(PeriodStart(e.next_marker, e.t0_s + e.next_marker * period_s))
            e.next_marker += 1
        if t_s >= e.t0_s + s.num_periods * period_s + s.settle_s:
            self.phase, self.reason = Phase.DONE, f"{s.num_periods} period(s) commanded"
            self._log(Severity.INFO, "excitation finished")
