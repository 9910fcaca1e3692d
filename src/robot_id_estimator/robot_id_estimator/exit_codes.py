"""The exit codes of `python -m robot_id_estimator` and what decides them, one place for the command line and the
reports' verdicts."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from robot_id_estimator.results import Identification
    from robot_id_estimator.results.written_check import WrittenCheck

EXIT_DONE = 0
EXIT_BAD_INPUT = 2
EXIT_CHECK_FAILED = 3
EXIT_DATA_MISTAKE = 4
EXIT_FILES_DIFFER = 5
EXIT_INTERRUPTED = 130


def identification_exit_code(result: Identification, file_check: WrittenCheck | None) -> int:
    """5 when the written model files fail their check as loaded, else 4 when the diagnosis named a data mistake,
    else 3 when a parameter set failed its check on held-out data, else 0."""
    if file_check is not None and not file_check.passed:
        return EXIT_FILES_DIFFER
    if result.mistake:
        return EXIT_DATA_MISTAKE
    return EXIT_CHECK_FAILED if result.failed_sets() else EXIT_DONE


def payload_exit_code(passed: bool, file_check: WrittenCheck) -> int:
    """5 when the written payload files fail their check as loaded, else 3 when the load failed its check on
    held-out data, else 0."""
    if not file_check.passed:
        return EXIT_FILES_DIFFER
    return EXIT_DONE if passed else EXIT_CHECK_FAILED
