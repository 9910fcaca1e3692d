"""The one identification use case, for the command line and the node alike: identify, then write every result in
an order that never loses a finished one (identification.json first, then the model files, or the removal of an
earlier run's when this one has no physical parameters), check the model files as a user loads them
(output.written_check: files that do not reproduce the identified model are kept as identified.rejected.urdf), and
write the report last, whose verdict names the exit code that check decides."""

from __future__ import annotations

import dataclasses
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass

from robot_id_estimator.exit_codes import identification_exit_code
from robot_id_estimator.output.report import write_identification_report
from robot_id_estimator.output.urdf_export import (
    ModelFiles,
    reject_written_files,
    remove_stale_model,
    write_identified_model,
)
from robot_id_estimator.output.written_check import check_written_model
from robot_id_estimator.pipeline import identify
from robot_id_estimator.processing.input_checks import with_stack_torque_filter
from robot_id_estimator.progress import Progress
from robot_id_estimator.recordings.recording import Recording
from robot_id_estimator.results import Identification, write_identification
from robot_id_estimator.results.written_check import WrittenCheck
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_estimator.settings import EstimatorConfig


@dataclass(frozen=True)
class Written:
    """An identification and the files written for it; notes and warnings include the model files' own."""

    result: Identification
    report: pathlib.Path
    paths: tuple[pathlib.Path, ...]
    model_files: ModelFiles | None
    notes: tuple[str, ...]
    warnings: tuple[str, ...]
    file_check: WrittenCheck | None = None
    """The model files checked as loaded (output.written_check); None when none were written."""

    @property
    def files_hold(self) -> bool:
        """Whether the written model files reproduce the identified model (or none were written)."""
        return self.file_check is None or self.file_check.passed

    @property
    def exit_code(self) -> int:
        """The command line's exit code for this identification (exit_codes.identification_exit_code)."""
        return identification_exit_code(self.result, self.file_check)


def identify_and_write(recordings: Sequence[Recording], setup: RobotSetup, config: EstimatorConfig,
                       out_dir: pathlib.Path, friction_sweeps: Sequence[Recording] = (), progress: Progress = None,
                       allow_outside_limits: bool = False, allow_implausible_torque: bool = False,
                       validation_recordings: Sequence[Recording] = ()) -> Written:
    """Identify the recordings (pipeline.identify, with the same checks and allowances; `validation_recordings`,
    another motion, only predicted: the Coulomb laws and the self-check are judged on it) and write the results to
    out_dir. The torque filter is the one the robot's stack announced in the recordings, where it did
    (processing.input_checks.with_stack_torque_filter)."""
    setup, stack_notes = with_stack_torque_filter([*recordings, *friction_sweeps, *validation_recordings], setup)
    result = identify(list(recordings), setup, config, list(friction_sweeps), progress=progress,
                      allow_outside_limits=allow_outside_limits, allow_implausible_torque=allow_implausible_torque,
                      validation_recordings=list(validation_recordings))
    result = dataclasses.replace(result, warnings=(*stack_notes, *result.warnings))
    json_path = write_identification(result, out_dir / "identification.json")
    files = write_identified_model(result, out_dir) if result.physical is not None else None
    if files is None:
        remove_stale_model(out_dir)
    file_check = check_written_model(result, files) if files is not None else None
    if file_check is not None and not file_check.passed:
        files = reject_written_files(files, file_check.failures)
    report = write_identification_report(result, out_dir, files, file_check, progress=progress)
    return Written(result, report, (json_path, report) + (files.paths if files else ()), files,
                   files.notes if files else (), tuple(result.warnings) + (files.warnings if files else ()),
                   file_check)
