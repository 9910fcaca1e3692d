"""The written model files checked as loaded, as a result (output.written_check makes it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WrittenCheck:
    """Per file checked, the worst joint's torque difference in % of its torque RMS; the failures, each naming the
    file and the joints and bodies that differ."""

    difference_percent: dict[str, float]
    failures: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return not self.failures
