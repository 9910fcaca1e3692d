"""The harness of the safety properties (docs/safety.md): robots, trajectory pools, Hypothesis strategies, a
simulated run of the state machine against an arm that follows its commands like a joint trajectory controller
(command_check.ControllerModel), with faults injected into the joint states. Its checker is tested in
test_command_checker.py; the deadline a fault must be held by is safety_deadlines.py.

Every property runs SAFETY_EXAMPLES examples (200 in CI; set ROBOT_ID_SAFETY_EXAMPLES for a longer benchmark run),
derandomized so that CI is reproducible.
"""

from __future__ import annotations

import bisect
import math
import os
from dataclasses import dataclass, field, replace
from functools import lru_cache

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import Phase as Stage
from hypothesis import strategies as st

from robot_id_excitation.check import check_trajectory
from robot_id_excitation.command_check import (
    CommandPoints,
    ControllerModel,
    check_points,
    check_transition,
    command_points,
)
from robot_id_excitation.command_messages import trajectory_msg
from robot_id_excitation.constraints import DesignLimits, design_limits
from robot_id_excitation.excitation_settings import ExcitationSettings
from robot_id_excitation.excitation_state import ExcitationStateMachine, Phase
from robot_id_excitation.fourier import FourierTrajectory
from robot_id_model.robot_config import RobotConfig, load_robot_config
from robot_id_model.robot_model import RobotModel

SAFETY_EXAMPLES = int(os.environ.get("ROBOT_ID_SAFETY_EXAMPLES", "200"))
SAFETY = settings(max_examples=SAFETY_EXAMPLES, deadline=None, derandomize=True, database=None,
                  phases=[Stage.explicit, Stage.reuse, Stage.generate, Stage.shrink],
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
ROBOTS = ("iiwa14", "panda")
POOL_SIZE = 6
MARGIN_RAD = 0.3
"""Offsets of the pool's trajectories keep this far from the position limits."""
STATE_RATES_HZ = (100.0, 500.0, 1000.0)
"""1 kHz: the Panda's joint_state_broadcaster; 500 Hz: the iiwa's FRI"""


@dataclass(frozen=True)
class Setup:
    config: RobotConfig
    robot: RobotModel
    limits: DesignLimits


@lru_cache
def setup(name: str) -> Setup:
    config = load_robot_config(name)
    return Setup(config, config.load_model(("FV", "FC")), design_limits(config))


def scaled(trajectory: FourierTrajectory, scale: float) -> FourierTrajectory:
    return replace(trajectory, coefficients_a=scale * trajectory.coefficients_a,
                   coefficients_b=scale * trajectory.coefficients_b)


@lru_cache
def pool(name: str) -> tuple[tuple[FourierTrajectory, float], ...]:
    """POOL_SIZE random modified Fourier trajectories of the robot, each with the scale that makes it marginal
    (its binding constraint at its limit on the check grid, by bisection)."""
    s = setup(name)
    rng = np.random.default_rng(16)
    out = []
    while len(out) < POOL_SIZE:
        harmonics = int(rng.integers(1, 4))
        lower, upper = s.limits.position_lower_rad + MARGIN_RAD, s.limits.position_upper_rad - MARGIN_RAD
        trajectory = FourierTrajectory("modified_fourier", name, s.config.joint_names, rng.uniform(0.5, 1.5),
                                       rng.normal(size=(7, harmonics)), rng.normal(size=(7, harmonics)),
                                       rng.uniform(lower, upper))
        if not check_trajectory(s.robot, s.limits, scaled(trajectory, 0.0)).feasible:
            continue  # the offsets alone are below the floor
        low, high = 0.0, 1.0
        while check_trajectory(s.robot, s.limits, scaled(trajectory, high)).feasible:
            high *= 2
        for _ in range(12):
            mid = 0.5 * (low + high)
            low, high = (mid, high) if check_trajectory(s.robot, s.limits, scaled(trajectory, mid)).feasible \
                else (low, mid)
        out.append((trajectory, low))
    return tuple(out)


# -- strategies ---------------------------------------------------------------------------------------------
KINDS = ("feasible", "marginal", "infeasible", "nan", "other_joints", "other_robot")


@st.composite
def trajectories(draw, name: str, kinds: tuple[str, ...] = KINDS) -> tuple[str, FourierTrajectory]:
    """(kind, trajectory) of the robot: within its limits, at them, beyond them, or corrupted."""
    kind = draw(st.sampled_from(kinds))
    base, marginal = draw(st.sampled_from(pool(name)))
    factor = {"feasible": draw(st.floats(0.05, 0.95)), "marginal": 1.0,
              "infeasible": draw(st.floats(1.02, 4.0))}.get(kind, draw(st.floats(0.05, 1.0)))
    trajectory = scaled(base, marginal * factor)
    if kind == "nan":
        a = trajectory.coefficients_a.copy()
        a[draw(st.integers(0, 6)), draw(st.integers(0, a.shape[1] - 1))] = draw(st.sampled_from([np.nan, np.inf]))
        trajectory = replace(trajectory, coefficients_a=a)
    elif kind == "other_joints":
        names = list(trajectory.joint_names)
        i, j = draw(st.lists(st.integers(0, 6), min_size=2, max_size=2, unique=True))
        names[i], names[j] = (names[j], names[i]) if draw(st.booleans()) else (names[i] + "_x", names[j])
        trajectory = replace(trajectory, joint_names=tuple(names))
    elif kind == "other_robot":
        trajectory = replace(trajectory, robot=draw(st.sampled_from([r for r in (*ROBOTS, "iiwa7", "") if r != name])))
    return kind, trajectory


def excitation_settings(**fixed) -> st.SearchStrategy[ExcitationSettings]:
    """Settings within the node's parameter ranges, kept to short runs (few, small steps are cheap); `fixed`:
    values or strategies of some."""
    ranges = dict(
        num_periods=st.integers(1, 2), state_timeout_s=st.floats(0.03, 0.5),
        max_start_error_rad=st.floats(0.001, 0.1), max_tracking_error_rad=st.sampled_from([0.15, 0.3, 0.5, 0.0]),
        start_delay_s=st.floats(0.0, 0.3), approach_speed_rad_s=st.floats(0.3, 1.4),
        approach_acceleration_rad_s2=st.floats(0.5, 8.0), settle_s=st.floats(0.0, 0.3),
        rate_hz=st.floats(5.0, 60.0), lead_s=st.floats(0.0, 0.3), overlap_s=st.floats(0.0, 0.6),
        max_chunk_s=st.floats(0.3, 3.0),
    )
    fixed = {k: v if isinstance(v, st.SearchStrategy) else st.just(v) for k, v in fixed.items()}
    return st.builds(ExcitationSettings, **(ranges | fixed))


JOINT_STATE_FAULTS = ("dropout", "stale_stamps", "late", "time_back", "time_ahead", "nan", "out_of_order", "tracking")
FAULTS = ("none", "dropout", "stale_stamps", "late", "time_back", "time_ahead", "nan", "out_of_order", "tracking",
          "abort", "sigint")
STAMPED_FAULTS = ("out_of_order", "stale_stamps", "late")
"""faults that only stamped joint states can show"""


@dataclass(frozen=True)
class Fault:
    kind: str
    t_s: float
    size: float
    """seconds of a dropout or time jump; nan: 1 in the velocity, 0 in the position; tracking: the velocity [rad/s]
    at which something stronger than its drive drags the joint from where it is at the onset, whatever is commanded;
    late: how fast the states fall behind (s per s: a growing queue)"""
    joint: int = 0


@dataclass(frozen=True)
class Scenario:
    name: str
    trajectory: FourierTrajectory
    settings: ExcitationSettings
    start_rad: np.ndarray
    fault: Fault
    tick_s: float = 0.02
    """the node steps every 20 ms"""
    state_hz: float = 100.0
    velocities: bool = True
    stamped: bool = True
    end_s: float = 4.5


@st.composite
def faults(draw, kinds: tuple[str, ...] = FAULTS, end_s: float = 3.0) -> Fault:
    kind = draw(st.sampled_from(kinds))
    size = {"dropout": st.floats(0.0, 1.0), "time_back": st.floats(0.06, 5.0), "time_ahead": st.floats(0.6, 5.0),
            "nan": st.sampled_from([0.0, 1.0]), "tracking": st.one_of(st.floats(0.3, 1.0), st.floats(-1.0, -0.3)),
            "late": st.floats(0.2, 0.9)}.get(kind, st.just(0.0))
    return Fault(kind, draw(st.floats(0.2, end_s)), draw(size), draw(st.integers(0, 6)))


@st.composite
def scenarios(draw, name: str | None = None, kinds: tuple[str, ...] = ("feasible", "marginal"),
              fault_kinds: tuple[str, ...] = FAULTS, near_start: bool = True, **fixed) -> Scenario:
    """A run: robot, trajectory, settings, where the arm starts (at rest) and one fault."""
    name = name or draw(st.sampled_from(ROBOTS))
    _, trajectory = draw(trajectories(name, kinds))
    lim = setup(name).limits
    start = trajectory.offsets_rad  # the start pose of a modified Fourier series (finite if the coefficients are not)
    if near_start:
        start = start + np.array(draw(st.lists(st.floats(-0.3, 0.3), min_size=7, max_size=7)))
    else:
        start = lim.position_lower_rad + np.array(draw(st.lists(st.floats(0.0, 1.0), min_size=7, max_size=7))) * (
            lim.position_upper_rad - lim.position_lower_rad)
    start = np.clip(start, lim.position_lower_rad, lim.position_upper_rad)
    fault = draw(faults(fault_kinds))
    # late states without stamps look like timely ones to anyone: the stacks stamp theirs (docs/safety.md)
    stamped = fault.kind == "late" or draw(st.booleans())
    return Scenario(name, trajectory, draw(excitation_settings(**fixed)), start, fault,
                    tick_s=draw(st.sampled_from([0.02, 0.04])), state_hz=draw(st.sampled_from(STATE_RATES_HZ)),
                    velocities=draw(st.booleans()), stamped=stamped)


# -- a run ----------------------------------------------------------------------------------------------------
@dataclass
class Sent:
    t_s: float
    """true time it was sent (and arrived)"""
    points: CommandPoints
    stop: bool
    state: tuple[np.ndarray, np.ndarray, np.ndarray]
    """the arm's state when it arrived"""
    transition: list[str]
    """what of the motion to its first point lies beyond the joint limits"""


@dataclass
class Record:
    scenario: Scenario
    machine: ExcitationStateMachine
    sent: list[Sent] = field(default_factory=list)
    ticks: list[tuple[float, Phase]] = field(default_factory=list)
    """(true time, phase after the step)"""
    states: list[float] = field(default_factory=list)
    """true times of the joint states the machine received with a new stamp (or unstamped)"""
    holds: list[tuple[float, str]] = field(default_factory=list)
    fault_s: float | None = None
    """true time the fault took effect (None: it never did)"""
    moving_at_fault: bool = False
    unfaulted: ControllerModel | None = None
    """the arm as the commands before a hold would move it without the fault"""
    dragged_from_rad: float = 0.0
    """where a tracking fault's joint was at the onset"""
    tracking_rad: dict[float, float] = field(default_factory=dict)
    """per tick from a tracking fault on: how far its joint is from where the commands would have moved it"""
    history: list[tuple[float, np.ndarray, np.ndarray]] = field(default_factory=list)
    """(true time, q, dq) of every joint state measured, kept for a late fault"""


def node_time(fault: Fault, t_s: float) -> float:
    """The machine's clock: true time, but for a time jump from the fault on."""
    if t_s >= fault.t_s and fault.kind in ("time_back", "time_ahead"):
        return t_s + (fault.size if fault.kind == "time_ahead" else -fault.size)
    return t_s


def simulate(sc: Scenario, confirm_at_s: float | None = 0.0, extra_s: float = 0.3,
             until=lambda rec: False) -> Record:
    """Run the machine against the simulated arm until sc.end_s, until(record), or extra_s after it stopped
    moving for good."""
    s = setup(sc.name)
    machine = ExcitationStateMachine(sc.trajectory, s.robot, s.limits, sc.settings)
    rec = Record(sc, machine, unfaulted=ControllerModel(sc.start_rad))
    arm = ControllerModel(sc.start_rad)
    f = sc.fault
    state_dt = 1.0 / sc.state_hz
    n_ticks = round(sc.end_s / sc.tick_s)
    stamp, stopped_at = 0.0, None
    for k in range(1, n_ticks + 1):
        for t in _state_times(k, sc, f.t_s):
            active = t >= f.t_s
            first = active and rec.fault_s is None and f.kind in JOINT_STATE_FAULTS and (
                sc.stamped or f.kind not in STAMPED_FAULTS)
            if first:
                _note_fault(rec, arm, t)
            q, dq, _ = true_state(rec, arm, t)
            measured_s = t
            if f.kind == "late":
                rec.history.append((t, q, dq))
                if active:  # the state measured this long ago arrives now
                    measured_s = f.t_s + (1.0 - f.size) * (t - f.t_s)
                    q, dq = _measured(rec.history, measured_s)
            if f.kind == "dropout" and active and t < f.t_s + f.size:
                continue
            new_stamp = not (f.kind == "stale_stamps" and active) and not (f.kind == "out_of_order" and first)
            stamp = measured_s if new_stamp else stamp
            stamp_s = (stamp - 0.5 * state_dt - 1e-4 if f.kind == "out_of_order" and first else stamp) \
                if sc.stamped else None
            if f.kind == "nan" and first:
                (dq if f.size and sc.velocities else q)[f.joint] = np.nan
            machine.on_joint_state(node_time(f, t), q, dq if sc.velocities else None, stamp_s)
            if new_stamp or not sc.stamped:
                rec.states.append(t)
        t = round(k * sc.tick_s, 9)
        if f.kind in ("abort", "sigint") and rec.fault_s is None and t >= f.t_s:
            _note_fault(rec, arm, t)
            if f.kind == "abort":
                step, _ = machine.abort(node_time(f, t))
            else:
                step = machine.hold(node_time(f, t), "shutting down") if machine.moving else None
            _deliver(rec, arm, t, step)
        if f.kind == "tracking" and rec.fault_s is not None:
            rec.tracking_rad[t] = abs(true_state(rec, arm, t)[0][f.joint] - rec.unfaulted.state(t)[0][f.joint])
        confirmed = confirm_at_s is not None and t >= confirm_at_s
        _deliver(rec, arm, t, machine.step(node_time(f, t), confirmed))
        rec.ticks.append((t, machine.phase))
        if until(rec):
            break
        if not machine.moving and machine.phase is not Phase.WAITING:
            stopped_at = t if stopped_at is None else stopped_at
            if t - stopped_at >= extra_s:
                break
    return rec


def _state_times(k: int, sc: Scenario, fault_s: float) -> list[float]:
    """Joint states (every 1/state_hz) the machine gets before tick k: only the latest two matter to it (the
    latest, and the one before for a finite-difference velocity), and the ones just before and after the fault."""
    dt, t0, t1 = 1.0 / sc.state_hz, (k - 1) * sc.tick_s, k * sc.tick_s
    latest = math.floor(t1 / dt + 1e-9) * dt
    times = {latest, latest - dt}
    if t0 < fault_s <= t1:
        times |= {math.ceil(fault_s / dt - 1e-9) * dt, math.ceil(fault_s / dt - 1e-9) * dt - dt}
    return sorted(round(t, 9) for t in times if t0 < t <= t1 + 1e-12)


def _measured(history: list[tuple[float, np.ndarray, np.ndarray]], t_s: float) -> tuple[np.ndarray, np.ndarray]:
    """The arm's state at t_s, interpolated between the measured ones around it."""
    k = max(bisect.bisect_right([h[0] for h in history], t_s), 1)
    (t0, q0, dq0), (t1, q1, dq1) = history[k - 1], history[min(k, len(history) - 1)]
    w = 0.0 if t1 <= t0 else (t_s - t0) / (t1 - t0)
    return q0 + w * (q1 - q0), dq0 + w * (dq1 - dq0)


def _note_fault(rec: Record, arm: ControllerModel, t_s: float) -> None:
    rec.fault_s = t_s
    rec.moving_at_fault = rec.machine.moving
    rec.dragged_from_rad = arm.state(t_s)[0][rec.scenario.fault.joint]


def true_state(rec: Record, arm: ControllerModel, t_s: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where the arm is: where the controller takes it, but for a joint that a tracking fault drags."""
    q, dq, ddq = arm.state(t_s)
    f = rec.scenario.fault
    if f.kind == "tracking" and rec.fault_s is not None:
        q[f.joint] = rec.dragged_from_rad + f.size * (t_s - rec.fault_s)
        dq[f.joint], ddq[f.joint] = f.size, 0.0
    return q, dq, ddq


def _deliver(rec: Record, arm: ControllerModel, t_s: float, step) -> None:
    if step is None:
        return
    s = setup(rec.scenario.name)
    if step.hold_reason is not None:
        rec.holds.append((t_s, step.hold_reason))
    for command, stop in ((c, False) for c in step.commands):
        _send(rec, arm, t_s, command, stop, s)
    if step.stop is not None:
        _send(rec, arm, t_s, step.stop, True, s)


def _send(rec: Record, arm: ControllerModel, t_s: float, command, stop: bool, s: Setup) -> None:
    points = command_points(trajectory_msg(s.config.joint_names, command))
    if points.stamp_s > 0:  # stamped in the machine's time: back to true time for the arm
        points = replace(points, stamp_s=points.stamp_s - (node_time(rec.scenario.fault, t_s) - t_s))
    state = true_state(rec, arm, t_s)
    if not stop:  # where the motion would have gone: a hold's stop is planned from the faulty state
        rec.unfaulted.receive(t_s, points)
    rec.sent.append(Sent(t_s, points, stop, state, check_transition(arm, t_s, points, s.limits, state)))


def outside(s: Setup, q_rad: np.ndarray) -> bool:
    """The pose is beyond a position limit, below the floor or within the clearance, by the checker (an arm a
    tracking fault dragged)."""
    zeros = np.zeros((1, len(q_rad)))
    return check_points(CommandPoints(s.config.joint_names, 0.0, np.array([0.1]), q_rad[None], zeros, zeros),
                        s.robot, s.limits) != []


def stop_bound_s(limits: DesignLimits) -> float:
    """The longest stop a hold commands: 0.1 s, or 1.5·v/(a/2) at the velocity limits."""
    return max(0.1, float(np.max(3.0 * limits.velocity_rad_s / limits.acceleration_rad_s2)))
