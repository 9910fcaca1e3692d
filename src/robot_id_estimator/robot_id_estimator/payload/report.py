"""payload.html: the payload use case's report page, on the report pages' base (output.report)."""

from __future__ import annotations

import pathlib
from collections.abc import Sequence

import numpy as np

from robot_id_estimator.exit_codes import payload_exit_code
from robot_id_estimator.output.figures import inline_png
from robot_id_estimator.output.report import Verdict, number, render_page, robot_inputs, warned
from robot_id_estimator.output.report_figures import joint_bars_figure
from robot_id_estimator.payload.estimate import NAMES
from robot_id_estimator.payload.result import PayloadResult
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_model.exit_codes import IDENTIFY_VERDICTS


def payload_verdict(payload: PayloadResult, files: Sequence[pathlib.Path]) -> Verdict:
    """The load found, whether it passed its check, and the files written."""
    code, load = payload_exit_code(payload.passed, payload.file_check), payload.estimate.inertial
    why = {0: "The load's model passed its check on held-out time blocks.",
           3: f"The load's model failed its check on held-out time blocks: {'; '.join(payload.failures)}; is the "
              "arm model or the frame right, and is the load on? The URDFs are written as *.rejected.urdf.",
           5: "The written payload files, loaded, do not reproduce the identified load (a bug in robot_id: please "
              f"report it with payload.yaml): {'; '.join(payload.file_check.failures)}."}[code]
    found = (f"The load on {payload.frame} ({payload.method}): {number(load.mass_kg)} kg, CoM "
             + " ".join(f"{1000 * c:.1f}" for c in load.com_m) + f" mm in {payload.frame}.")
    return Verdict(code, IDENTIFY_VERDICTS[code] if code != 0 else "done, the load's model holds",
                   f"{why} {found} Written: {', '.join(p.name for p in files)}."
                   + warned(payload.warnings, "Warnings"))


def write_payload_report(payload: PayloadResult, setup: RobotSetup, sources: Sequence[str],
                         bounds_rows: list[tuple[str, str]], out_dir: pathlib.Path) -> pathlib.Path:
    """payload.html in out_dir for a payload.result.PayloadResult (its files already written)."""
    e, joints = payload.estimate, setup.joint_names
    figure = joint_bars_figure(joints, {"load torque": e.load_torque_rms_nm, "held-out error": e.held_out_rms_nm,
                                        "training error": e.residual_rms_nm},
                               {"load torque": "black", "held-out error": "tab:red", "training error": "tab:blue"},
                               "RMS [Nm]", "The load's torque per joint and what its model leaves")
    return render_page(
        "payload.html.j2", out_dir / "payload.html", title=f"Payload on {setup.name}",
        verdict=payload_verdict(payload, payload.paths), p=payload, e=e, joints=joints,
        principal_moments=np.linalg.eigvalsh(e.inertial.inertia_com_kg_m2),
        undetermined=[k + 1 for k in e.undetermined_moments],
        parameters=list(zip(NAMES, e.values, e.least_squares, e.rsd_percent, strict=True)),
        check_png=inline_png(figure), robot=robot_inputs(setup), sources=sources, bounds=bounds_rows)
