"""The report pages: identification.html and validation.html (payload.html: payload.report, on the same base), each
one self-contained file (figures inline as PNG, no fetch) rendered from the Jinja2 templates beside this module
(templates/: one base page, one page per use), with the verdict first. Every number on a page comes from the result
objects; the templates lay them out. Beside identification.html: the parameter tables as CSV.
"""

from __future__ import annotations

import csv
import dataclasses
import pathlib
from collections.abc import Callable, Sequence
from functools import cache

import jinja2
import numpy as np

from robot_id_estimator.exit_codes import identification_exit_code
from robot_id_estimator.friction.coulomb_law_choice import SMOOTH_GAIN
from robot_id_estimator.output.figures import inline_png
from robot_id_estimator.output.friction_figure import friction_png
from robot_id_estimator.output.report_figures import (
    observer_figure,
    rms_figure,
    rsd_figure,
    torque_figure,
)
from robot_id_estimator.output.urdf_export import REJECTED_URDF_NAME, ModelFiles, model_friction
from robot_id_estimator.physical.determination import HELD
from robot_id_estimator.processing.regression_data import N_FOLDS
from robot_id_estimator.results import Identification, Traces
from robot_id_estimator.results.files import atomic_path, write_text
from robot_id_estimator.results.plausibility import grouped_active
from robot_id_estimator.results.set_checks import RULE
from robot_id_estimator.results.validation import Validation
from robot_id_estimator.results.written_check import WrittenCheck
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_model.exit_codes import IDENTIFY_VERDICTS
from robot_id_model.physical import inertia_six

TEMPLATES = pathlib.Path(__file__).resolve().parent / "templates"
Progress = Callable[[str], None] | None


@dataclasses.dataclass(frozen=True)
class Verdict:
    """What a page says first: the exit code, its meaning, and one paragraph on what was written and why."""

    exit_code: int
    headline: str
    paragraph: str

    @property
    def passed(self) -> bool:
        return self.exit_code == 0


def number(x: float | None, digits: int = 4) -> str:
    """A value to `digits` significant digits; '–' for one that is missing or not finite."""
    return "–" if x is None or not np.isfinite(x) else f"{x:.{digits}g}"


@cache
def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                                     undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    environment.filters["num"] = number
    environment.filters["nums"] = lambda xs, digits=3: " ".join(number(x, digits) for x in xs)
    return environment


def render_page(template: str, path: pathlib.Path, **context: object) -> pathlib.Path:
    """Render one page template to `path` (atomically)."""
    return write_text(path, _environment().get_template(template).render(**context))


def torque_pngs(traces: Traces | None, joint_names: Sequence[str], title: str) -> dict[str, str]:
    """{joint: its torque figure (report_figures.torque_figure) as a PNG data URI}; none without traces."""
    if traces is None:
        return {}
    return {name: inline_png(torque_figure(traces, j, f"{title}: {name}")) for j, name in enumerate(joint_names)}


def robot_inputs(setup: RobotSetup) -> list[tuple[str, str]]:
    """The robot a page's results are for, as (what, value) rows."""
    return [("robot", setup.name), ("URDF", setup.urdf_path), ("joints", ", ".join(setup.joint_names)),
            ("gravity [m/s²]", " ".join(f"{g:g}" for g in setup.gravity_m_s2)),
            ("torque filter time constant [s]", f"{setup.torque_filter_time_constant_s:g}")]


def settings_rows(settings: dict, prefix: str = "") -> list[tuple[str, str]]:
    """A nested settings dict (EstimatorConfig.to_dict) as (dotted key, value) rows."""
    rows = []
    for key, value in settings.items():
        if isinstance(value, dict):
            rows += settings_rows(value, f"{prefix}{key}.")
        else:
            shown = ", ".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
            rows.append((f"{prefix}{key}", shown))
    return rows


def write_parameter_csv(result: Identification, out_dir: pathlib.Path) -> list[str]:
    """parameters_base.csv (name, value, RSD, essential, expression) and parameters_essential.csv."""
    essential = dict(zip(result.essential.names, result.essential.values, strict=True))
    with atomic_path(out_dir / "parameters_base.csv") as temporary, temporary.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["name", "value", "rsd_percent", "essential", "expression"])
        for name, value, rsd, expr in zip(result.base.names, result.base.values, result.base.rsd_percent,
                                          result.base_expressions, strict=True):
            writer.writerow([name, number(value, 8), number(rsd, 6), name in essential, expr])
    with atomic_path(out_dir / "parameters_essential.csv") as temporary, temporary.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["name", "value", "rsd_percent"])
        for name, value, rsd in zip(result.essential.names, result.essential.values, result.essential.rsd_percent,
                                    strict=True):
            writer.writerow([name, number(value, 8), number(rsd, 6)])
    return ["parameters_base.csv", "parameters_essential.csv"]


def identification_verdict(result: Identification, files: ModelFiles | None,
                           file_check: WrittenCheck | None) -> Verdict:
    """Which set was written and where, the exit code, what failed and why (exit_codes decides the code)."""
    code = identification_exit_code(result, file_check)
    if files is None:
        physical = result.checks.get("physical")
        why = f": {'; '.join(physical.failures)}" if physical is not None and physical.failures else ""
        written = (f"No model file was written: no physical parameters were retrieved{why}. The base and essential "
                   "parameters are in identification.json.")
    elif files.urdf.name == REJECTED_URDF_NAME:
        written = (f"The physical parameters were written only as {files.urdf} (rejected, for inspection: do not use "
                   f"it as the robot's model); friction and uncertainties in {files.yaml.name}.")
    else:
        written = (f"{files.urdf} holds the physical parameters (friction and uncertainties: {files.yaml.name}"
                   + (f"; MuJoCo: {files.mjcf.name}" if files.mjcf is not None else "") + ").")
    failed = result.failed_sets()
    why = {
        0: "Every parameter set passed its check on held-out data.",
        3: f"The {' and '.join(failed)} parameters failed their check on held-out data: "
           + "; ".join(f for s in failed for f in result.checks[s].failures) + ".",
        4: f"The diagnosis names a mistake in the data: {(result.mistake or '').removeprefix('diagnosis: ')}. "
           "Correct the data and identify again.",
        5: "The written model files, loaded, do not reproduce the identified model (a bug in robot_id: please report "
           f"it with identification.json): {'; '.join(file_check.failures) if file_check else ''}.",
    }[code]
    held_out = result.held_out
    best = (f" Best on held-out data ({held_out.source}): the {result.best_set} parameters, "
            f"{number(held_out.total_rms_nm(result.best_set), 3)} Nm RMS summed over the joints."
            if held_out is not None else "")
    return Verdict(code, IDENTIFY_VERDICTS[code], f"{written} {why}{best}{warned(result.warnings, 'the diagnosis')}")


def warned(warnings: Sequence[str], where: str) -> str:
    """The verdict's last sentence: how many warnings the page lists, and where."""
    return f" {len(warnings)} warning{'s' if len(warnings) > 1 else ''} in {where}." if warnings else ""


def write_identification_report(result: Identification, out_dir: str | pathlib.Path,
                                model_files: ModelFiles | None = None, file_check: WrittenCheck | None = None,
                                progress: Progress = None) -> pathlib.Path:
    """identification.html (the verdict from the model files written and their check) and the parameter CSVs in
    `out_dir`; identification.json is written separately."""
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if progress:
        progress(f"report: {out / 'identification.html'}")
    csv_files = write_parameter_csv(result, out)
    joints, held_out = result.setup.joint_names, result.held_out
    sets = result.parameter_sets
    errors = {s: {"training": result.metrics.residual_rms_nm[s],
                  "held_out": held_out.rms_nm(s) if held_out is not None else [np.nan] * len(joints)}
              for s in sets}
    physical = result.physical
    return render_page(
        "identification.html.j2", out / "identification.html",
        title=f"Identification of {result.setup.name}", verdict=identification_verdict(result, model_files, file_check),
        r=result, m=result.metrics, joints=joints, sets=sets, errors=errors, rule=RULE, csv_files=csv_files,
        friction=_friction_rows(result),
        law_choice=(result.friction.law_choice.describe(joints) if result.friction.law_choice is not None else []),
        n_folds=N_FOLDS, smooth_gain_percent=100 * SMOOTH_GAIN,
        links=([(name, link, inertia_six(link.inertia_com_kg_m2)) for name, link in
                zip(physical.link_names, physical.links, strict=True)] if physical is not None else []),
        active=(grouped_active(physical.plausibility.active)
                if physical is not None and physical.plausibility is not None else []),
        determination=(list(zip(physical.standard_names, physical.standard_values, physical.status,
                                physical.held_values, strict=True)) if physical is not None else []),
        held=HELD, essential=set(result.essential.names), n_estimated=int(np.isfinite(result.base.values).sum()),
        base=list(zip(result.base.names, result.base.values, result.base.rsd_percent, result.base_expressions,
                      strict=True)),
        torque_pngs=torque_pngs(result.traces, joints, "identification data"),
        rsd_png=inline_png(rsd_figure(result)), friction_png=friction_png(result.traces, result.friction),
        robot=robot_inputs(result.setup), settings=settings_rows(result.config.to_dict()))


def _friction_rows(result: Identification) -> dict:
    """Per joint the estimated friction terms with their RSD, the physical model's (urdf_export.model_friction, what
    identified.urdf holds) and the Coulomb law."""
    f, rsd = result.friction, dict(zip(result.base.names, result.base.rsd_percent, strict=True))
    model = model_friction(result) if result.physical is not None else None
    terms = [t for t in ("FV", "FC", "FO") if t in result.friction_terms]
    estimates = {"FV": f.viscous_nm_s_rad, "FC": f.coulomb_nm, "FO": f.offset_nm}
    rows = [{"joint": name, "estimated": [(estimates[t][j], rsd.get(f"{t}{j + 1}", np.nan)) for t in terms],
             "model": [model[name][t] for t in terms] if model is not None else [],
             "law": f.laws()[j].formula()} for j, name in enumerate(f.joint_names)]
    return {"terms": terms, "rows": rows, "stribeck": f.stribeck, "stribeck_rms_nm": f.stribeck_rms_nm}


def validation_verdict(validation: Validation) -> Verdict:
    """The best set on the validation data and how far it is off, in one paragraph."""
    totals = validation.total_rms_nm
    best = min((s for s in totals if s != "urdf"), key=lambda s: totals[s])
    others = ", ".join(f"{s} {number(totals[s], 3)} Nm" for s in totals if s != best)
    return Verdict(0, "validation done", f"Predicted best by the {best} parameters: {number(totals[best], 3)} Nm RMS "
                   f"summed over the joints (the others: {others}). Motion: {validation.motion_comparison}."
                   + warned(validation.warnings, "the table's section"))


def write_validation_report(validation: Validation, out_dir: str | pathlib.Path,
                            progress: Progress = None) -> pathlib.Path:
    """validation.html in `out_dir` (validation.json is written separately)."""
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if progress:
        progress(f"report: {out / 'validation.html'}")
    v = validation
    return render_page(
        "validation.html.j2", out / "validation.html", title="Validation", verdict=validation_verdict(v), v=v,
        joints=v.joint_names, sets=list(v.rms_nm), rms_png=inline_png(rms_figure(v)),
        observer_png=inline_png(observer_figure(v.traces, v)) if v.traces is not None else None,
        torque_pngs=torque_pngs(v.traces, v.joint_names, "validation data"))


