"""What one call of the excitation state machine decided, for its caller to publish: commands, the stop of a
hold, period markers and the lines to log."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from robot_id_excitation.excitation_plan import Command


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
class Outbox:
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
