"""What steers the excitation node's state machine: ExcitationSettings, the node's parameters of the same names and
defaults (node_parameters describes them)."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from robot_id_excitation.excitation_guard import MAX_STEP_GAP_S


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
    max_clock_offset_s: float = 0.0
    """refuse to start when the joint state stamps are further than this from the caller's clock (0: off)"""
    max_step_gap_s: float = MAX_STEP_GAP_S
    """steps further apart on the node's clock hold the run (0: off, for a simulator's clock in lockstep)"""


def settings_from_parameters(values: dict) -> ExcitationSettings:
    """The state machine's settings from the node's parameters of the same names; hardware mode waits for the
    confirmation and checks the clock offset."""
    names = [f.name for f in fields(ExcitationSettings) if f.name in values]
    hardware = values["mode"] == "hardware"
    return replace(ExcitationSettings(require_confirm=hardware, **{name: values[name] for name in names}),
                   max_clock_offset_s=values["max_clock_offset_s"] if hardware else 0.0)
