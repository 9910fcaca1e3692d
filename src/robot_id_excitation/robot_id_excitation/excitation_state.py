"""The excitation node's state machine, without ROS: start checks, approach, excitation in chunks, hold.

Times are floats in seconds on the caller's clock; joint states are numpy arrays in the order of the limits'
joint names. Every call returns a `Step`: the trajectory commands to send, the stop command of a hold, the period
markers, the start time of the excitation (for its description) and the lines to log. The node moves these
between ROS and this class. The guarantees it keeps are stated in docs/safety.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import partial

import numpy as np

from robot_id_excitation.constraints import DesignLimits, check_samples
from robot_id_excitation.excitation_guard import (  # noqa: F401 (STOP_ACCELERATION_FRACTION, stop_point: re-exported)
    MAX_STEP_GAP_S,
    MIN_LEAD_S,
    STOP_ACCELERATION_FRACTION,
    JointStateStream,
    clock_refusal,
    controller_samples,
    hold_point,
    hold_state,
    start_refusal,
    start_tolerance_rad,
    stop_point,
)
from robot_id_excitation.excitation_plan import (
    Approach,
    Chunk,
    Command,
    Points,
    approach,
    distinct_points,
    excitation_chunks,
    run_now,
)
from robot_id_excitation.excitation_settings import ExcitationSettings
from robot_id_excitation.excitation_step import LogLine, Outbox, PeriodStart, Severity, Step
from robot_id_excitation.quintic import evaluate_quintic
from robot_id_excitation.trajectory_file import Trajectory
from robot_id_model.robot_model import RobotModel


class Phase(StrEnum):
    """Where the run is; the values are the node's state names."""

    WAITING = "waiting_for_joint_states"
    CONFIRMING = "waiting_for_confirmation"
    APPROACHING = "approaching"
    EXCITING = "exciting"
    HOLDING = "holding"
    DONE = "done"
    REFUSED = "refused"
    ABORTED = "aborted"


MOVING = (Phase.APPROACHING, Phase.EXCITING)


@dataclass
class _Excitation:
    t0_s: float
    next_chunk: int = 0
    next_marker: int = 0


@dataclass(frozen=True)
class _Start:
    """The start as planned from a measured pose: the approach (None: already at the start pose)."""

    q_from_rad: np.ndarray
    approach: Approach | None


class ExcitationStateMachine:
    """Waits for joint states, plans and checks the whole run, approaches the start pose, streams N periods, and
    holds on any fault.

    The caller refuses a trajectory first (excitation_guard.trajectory_refusal); here every command is checked
    again, by the limits and by `monitor` (an independent check of its message; its problems refuse it), before
    the arm moves: the excitation's chunks once (prepare(), or with the approach), the approach when it is planned
    from the measured pose. Planning takes long: `submit` may run it in the background (it returns a Future; by
    default the work is done at once), while the steps go on watching the joint states. Sending only picks what is
    planned. A fault of the joint states
    (JointStateStream) holds the run at the next step(), or refuses it before motion. Nothing moves again after a
    hold.
    """

    def __init__(self, trajectory: Trajectory, robot: RobotModel, limits: DesignLimits,
                 settings: ExcitationSettings, monitor: Callable[[Points], list[str]] | None = None,
                 submit: Callable[[Callable[[], object]], Future] = run_now) -> None:
        settings = replace(settings, lead_s=max(settings.lead_s, MIN_LEAD_S))
        self.trajectory, self.robot, self.limits, self.settings = trajectory, robot, limits, settings
        self.monitor, self._submit = monitor, submit
        self._planning: Future | None = None
        self.start_pose_rad = trajectory.evaluate(np.zeros(1))[0][0]
        self.phase = Phase.WAITING
        self.reason = ""
        self.states = JointStateStream(len(limits.joint_names))
        self._approach_start_s = 0.0
        self._start: _Start | None = None
        self._chunks: tuple[Chunk, ...] | None = None
        self._chunk_refusal = ""
        self._closest_m = math.inf
        self._excitation: _Excitation | None = None
        self._out = Outbox()
        self._start_tolerance_rad = start_tolerance_rad(limits, settings.max_start_error_rad, settings.lead_s)
        self.violation = ""  # the first limit the last refused command broke

    @property
    def moving(self) -> bool:
        return self.phase in MOVING

    def commanded_to_rest(self, t_s: float) -> bool:
        """Whether at t_s every period has been commanded and has ended: the last period ends at rest at the start
        pose (what follows in its command is at rest there too), which the controller holds; only the settling time
        is left before DONE."""
        e = self._excitation
        return (self.phase is Phase.EXCITING and e.next_chunk == len(self._chunks)
                and t_s >= e.t0_s + self.settings.num_periods * self.trajectory.period_s)

    @property
    def approach(self) -> Approach | None:
        """The planned approach to the start pose (None: not planned yet, or the arm is there)."""
        return self._start.approach if self._start is not None else None

    @property
    def first_state_s(self) -> float | None:
        return self.states.first_s

    # -- inputs --------------------------------------------------------------------------------------------
    def prepare(self) -> str:
        """Build and check every chunk of the excitation (once; also done when the approach is planned); why
        they must not be sent ('' if they may)."""
        if self._chunks is None:
            s = self.settings
            self._chunks = excitation_chunks(self.trajectory, s.num_periods, s.rate_hz, s.overlap_s, s.max_chunk_s,
                                             STOP_ACCELERATION_FRACTION * self.limits.acceleration_rad_s2)
            failed = next((p for p in distinct_points(self._chunks) if not self._checked(p)), None)
            self._chunk_refusal = "" if failed is None else f"the excitation breaks a limit: {self.violation}"
        return self._chunk_refusal

    def on_joint_state(self, t_s: float, q_rad: np.ndarray, dq_rad_s: np.ndarray | None = None,
                       stamp_s: float | None = None) -> None:
        """A measurement received at t_s, stamped stamp_s by its source (None: unstamped); a faulty one is not
        used, its fault holds the run at the next step() (see JointStateStream)."""
        self.states.receive(t_s, q_rad, dq_rad_s, stamp_s)

    def step(self, t_s: float, confirmed: bool = False) -> Step:
        """Advance to t_s; `confirmed` (asked for only with require_confirm) lets the arm start moving."""
        self._out = Outbox()
        elapsed_s = self.states.tick(t_s)
        if self.moving and self._held_on_fault(t_s, elapsed_s):
            return self._out.step()
        if self.phase in (Phase.WAITING, Phase.CONFIRMING):
            self._tick_waiting(t_s, confirmed)
        elif self.phase is Phase.APPROACHING:
            self._tick_approaching(t_s)
        elif self.phase is Phase.EXCITING:
            self._tick_exciting(t_s)
        return self._out.step()

    def abort(self, t_s: float) -> tuple[Step, str]:
        """Hold if moving, otherwise never start; the step and a one-line reply for the caller."""
        self._out = Outbox()
        moving = self.moving
        if moving:
            self._hold(t_s, "abort requested")
        elif self.phase not in (Phase.HOLDING, Phase.DONE):
            self.phase, self.reason = Phase.ABORTED, "abort requested before motion"
        return self._out.step(), f"state {self.phase}: {self.reason}" if moving else f"not moving (state {self.phase})"

    def hold(self, t_s: float, reason: str) -> Step:
        """Stop where the arm can: a single point ahead of the measured (or, if stale, commanded) state."""
        self._out = Outbox()
        self._hold(t_s, reason)
        return self._out.step()

    # -- helpers -------------------------------------------------------------------------------------------
    def _log(self, severity: Severity, text: str) -> None:
        self._out.log.append(LogLine(severity, text))

    def states_fresh(self, t_s: float) -> bool:
        """Whether the newest joint state is within the state timeout at t_s."""
        return self.states.fresh(t_s, self.settings.state_timeout_s)

    def _refuse(self, reason: str) -> None:
        self.phase, self.reason = Phase.REFUSED, reason
        self._log(Severity.ERROR, f"refusing to move: {reason}")

    def _checked(self, points: Points) -> bool:
        """Whether the points are finite, they and the controller's interpolation between them keep the hard
        limits, and the monitor finds nothing; if not, `violation` says why."""
        if not all(np.isfinite(x).all() for x in (points.t_rel_s, points.q_rad, points.dq_rad_s, points.ddq_rad_s2)):
            self.violation = "values that are not finite"
            return False
        report = check_samples(self.robot, self.limits, *controller_samples(
            points.t_rel_s, points.q_rad, points.dq_rad_s, points.ddq_rad_s2))
        if not report.feasible:
            self.violation = " ".join(report.violations[0].describe().split())
            return False
        problems = self.monitor(points) if self.monitor is not None else []
        if problems:
            self.violation = "the command monitor found " + "; ".join(problems)
            return False
        closest = report.least("collision")
        self._closest_m = min(self._closest_m, closest.value) if closest is not None else self._closest_m
        return True

    def _commanded(self, t_s: float) -> tuple[np.ndarray, np.ndarray] | None:
        """Commanded position and velocity at t_s, if a motion is under way."""
        if self.phase is Phase.APPROACHING:
            a = self._start.approach
            q, dq, _ = evaluate_quintic(a.coefficients, np.clip(np.array([t_s - self._approach_start_s]), 0.0,
                                                                a.duration_s))
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
        self._out.stop = Command(None, Points(np.array([duration_s]), target[None, :], zeros, zeros))
        self._log(Severity.WARNING, f"holding: {reason}")

    def _held_on_fault(self, t_s: float, elapsed_s: float) -> bool:
        """Hold on a latched fault, a leap of the clock, stale joint states or a tracking error beyond its bound."""
        if self.states.fault:
            self._hold(t_s, self.states.fault)
            return True
        if self.settings.max_step_gap_s and elapsed_s > self.settings.max_step_gap_s:
            self._hold(t_s, f"time jumped ahead by {elapsed_s:.3f} s (or no step for that long)", t_s - elapsed_s)
            return True
        if not self.states_fresh(t_s):
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
        """Plan the start once the joint states allow it; start at a later step (stamped then), after the
        confirmation if one is required, from where the plan was made."""
        s, m = self.settings, self.states
        if m.fault:
            self._refuse(m.fault)
            return
        if m.first_s is None or t_s - self.first_state_s < s.start_delay_s:
            return
        if self._start is not None and s.require_confirm and not confirmed:
            return
        if not self.states_fresh(t_s):
            self._refuse(f"joint states are stale (the latest is {m.age_s(t_s):.2f} s old, "
                         f"timeout {s.state_timeout_s} s)")
            return
        refusal = start_refusal(self.limits, m.q_rad, m.dq_rad_s, s.max_start_speed_rad_s, self.start_pose_rad)
        refusal = refusal or clock_refusal(m.clock_offset_s, s.max_clock_offset_s)
        if refusal:
            self._refuse(refusal)
        elif self._start is None:
            self._plan_start(m.q_rad)
        elif np.any(np.abs(m.q_rad - self._start.q_from_rad) > self._start_tolerance_rad):
            moved_rad = np.abs(m.q_rad - self._start.q_from_rad).max()
            self._refuse(f"the arm moved by {moved_rad:.3f} rad since its start was planned")
        elif self._start.approach is None:
            self._start_excitation(t_s)
        else:
            self._approach_start_s = t_s + s.lead_s
            self.phase = Phase.APPROACHING
            self._out.commands.append(Command(self._approach_start_s, self._start.approach.points))
            self._log(Severity.INFO, f"moving to the start pose in {self._start.approach.duration_s:.1f} s")

    def _plan_start(self, q_rad: np.ndarray) -> None:
        """Plan the start from q_rad (in the background, if the caller gave a way): at this step or a later one,
        refuse or keep the plan (and ask to confirm it)."""
        if self._planning is None:
            self._planning = self._submit(partial(self._planned, q_rad.copy()))
        if not self._planning.done():
            return
        planned = self._planning.result()
        if isinstance(planned, str):
            self._refuse(planned)
            return
        self._start = planned
        if self.settings.require_confirm:
            self.phase, self.reason = Phase.CONFIRMING, self._plan_summary()
            self._log(Severity.WARNING, "hardware mode: set the parameter confirm to true to start moving: "
                                        + self.reason)

    def _planned(self, q_rad: np.ndarray) -> _Start | str:
        """The start from q_rad with its checked approach, or why there is none (the excitation's chunks are
        checked too, if they were not yet)."""
        s = self.settings
        refusal = self.prepare()
        if refusal:
            return refusal
        if np.all(np.abs(self.start_pose_rad - q_rad) <= self._start_tolerance_rad):
            return _Start(q_rad, None)
        planned = approach(q_rad, self.start_pose_rad, s.approach_speed_rad_s, s.approach_acceleration_rad_s2,
                           s.rate_hz)
        if not self._checked(planned.points):
            return f"the approach to the start pose breaks a limit: {self.violation}"
        return _Start(q_rad, planned)

    def _plan_summary(self) -> str:
        """Where the arm will go, in one line of parts separated by '; '."""
        s, start = self.settings, self._start
        distance_rad = np.abs(self.start_pose_rad - start.q_from_rad)
        j = int(np.argmax(distance_rad))
        pose = ", ".join(f"{x:.2f}" for x in self.start_pose_rad)
        moves = (f"approach {start.approach.duration_s:.1f} s at up to {s.approach_speed_rad_s:g} rad/s"
                 if start.approach is not None else "no approach: the arm is at the start pose")
        speed = max(float(np.max(np.abs(p.dq_rad_s) / self.limits.velocity_rad_s))
                    for p in distinct_points(self._chunks))
        period_s = self.trajectory.period_s
        parts = [f"start pose [{pose}] rad", f"largest distance {distance_rad[j]:.3f} rad on "
                 f"{self.limits.joint_names[j]}", moves,
                 f"then {s.num_periods} period(s) of {period_s:.3g} s ({s.num_periods * period_s:.0f} s), up to "
                 f"{100 * speed:.0f} % of the velocity limits"]
        if math.isfinite(self._closest_m):
            parts.append(f"closest approach {1000 * self._closest_m:.0f} mm")
        return "; ".join(parts)

    def _tick_approaching(self, t_s: float) -> None:
        s = self.settings
        if t_s < self._approach_start_s + self._start.approach.duration_s + s.settle_s:
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
        self._excitation = _Excitation(t0_s)
        self.phase, self.reason = Phase.EXCITING, ""
        self._out.excitation_start_s = t0_s
        self._log(Severity.INFO, f"excitation: {s.num_periods} period(s) of {period_s:.3g} s from t = {t0_s:.3f}")
        self._tick_exciting(t_s)

    def _tick_exciting(self, t_s: float) -> None:
        e, s, period_s = self._excitation, self.settings, self.trajectory.period_s
        while e.next_chunk < len(self._chunks) and t_s >= e.t0_s + self._chunks[e.next_chunk].offset_s - s.lead_s:
            chunk = self._chunks[e.next_chunk]
            self._out.commands.append(Command(e.t0_s + chunk.offset_s, chunk.points))
            e.next_chunk += 1
        while e.next_marker < s.num_periods and t_s >= e.t0_s + e.next_marker * period_s:
            self._out.markers.append(PeriodStart(e.next_marker, e.t0_s + e.next_marker * period_s))
            e.next_marker += 1
        if t_s >= e.t0_s + s.num_periods * period_s + s.settle_s:
            self.phase, self.reason = Phase.DONE, f"{s.num_periods} period(s) commanded"
            self._log(Severity.INFO, "excitation finished")
