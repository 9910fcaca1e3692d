"""The runner's last line: where the identified model is and which parameter set it holds, or that none was
written and why. Read from
the estimator's result and the files in its results directory, which the estimator leaves holding this run's model
files only (an earlier run's are removed)."""

from __future__ import annotations

import json
import pathlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # no ROS for the offline demo, which names the set the same way
    from robot_id_msgs.msg import IdentificationResult

MODEL = "identified.urdf"  # robot_id_estimator.output.urdf_export's names (a test holds them equal)
REJECTED_MODEL = "identified.rejected.urdf"
LOAD_MODEL = "payload.yaml"
ARM_WITH_LOAD = "arm_with_payload.urdf"
REJECTED_ARM_WITH_LOAD = "arm_with_payload.rejected.urdf"


def model_line(result: IdentificationResult | None, code: int) -> str:
    """The line that ends a run that identifies: `result` is the estimator's (None: the run ended before one, with
    exit code `code`)."""
    if result is None:
        return f"robot_id: no model written: the run ended (exit code {code}) before an identification"
    if not result.output_dir:
        return f"robot_id: no model written, nothing written: {result.message}"
    out = pathlib.Path(result.output_dir)
    return _load_line(result, out) if result.payload else _arm_line(result, out)


def _arm_line(result: IdentificationResult, out: pathlib.Path) -> str:
    failed = f"; {', '.join(result.failed_sets)} failed the check on held-out data" if result.failed_sets else ""
    if (out / MODEL).is_file():
        return (f"robot_id: the model is {out / MODEL}: the physical parameter set ({best_set_note(out)}){failed}; "
                f"report and identification.json in {out}")
    if (out / REJECTED_MODEL).is_file():
        return (f"robot_id: no model accepted: {out / REJECTED_MODEL} holds the physical set, rejected "
                f"({result.message}), for inspection only; report in {out}")
    return (f"robot_id: no model file written (the identification has no physical parameter set{failed}); the base "
            f"and essential sets are in {out / 'identification.json'}")


def best_set_note(out: pathlib.Path) -> str:
    """Which set predicted held-out data best, from identification.json."""
    try:
        best = json.loads((out / "identification.json").read_text())["best_set"]
    except (OSError, ValueError, KeyError):
        return "identification.json not readable: which set is best unknown"
    return f"best on held-out data: {best}" + ("" if best == "physical" else ", in identification.json")


def _load_line(result: IdentificationResult, out: pathlib.Path) -> str:
    load = result.payload[0]
    what = f"the load on {load.link_name}, {load.mass_kg:.4g} kg"
    if (out / ARM_WITH_LOAD).is_file():
        return (f"robot_id: the load's model is {out / LOAD_MODEL} ({what}), the arm with it "
                f"{out / ARM_WITH_LOAD}; report in {out}")
    if (out / REJECTED_ARM_WITH_LOAD).is_file():
        return (f"robot_id: no load model accepted: {out / REJECTED_ARM_WITH_LOAD} holds {what}, rejected, for "
                f"inspection only; report in {out}")
    return f"robot_id: no load model written ({result.message}); results in {out}"
