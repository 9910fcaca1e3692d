"""A payload identification's result: the load found, its check and the files written (identify_payload makes it,
the report and the node's message read it)."""

from __future__ import annotations

import pathlib
from dataclasses import dataclass

from robot_id_estimator.payload.estimate import PayloadEstimate
from robot_id_estimator.payload.load_frame import ExportedLoad
from robot_id_estimator.results.written_check import WrittenCheck


@dataclass(frozen=True)
class PayloadResult:
    frame: str
    method: str
    estimate: PayloadEstimate
    failures: tuple[str, ...]
    """The joints whose load torque the check found unexplained (check_failures); none: passed."""
    paths: tuple[pathlib.Path, ...]
    notes: tuple[str, ...]
    warnings: tuple[str, ...]
    file_check: WrittenCheck
    """The written URDFs and MJCF checked as loaded (output.written_check)."""
    exported: ExportedLoad | None
    """The load in the robot's load frame, as KUKA's load data and Franka's setLoad take it; None: not on its body."""

    @property
    def passed(self) -> bool:
        return not self.failures
