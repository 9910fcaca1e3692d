"""The identified model as files: identified.urdf (the input URDF with the identified inertials and friction, every
other byte as it was), identified.yaml and identified.xml (MJCF)."""

from __future__ import annotations

import pathlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import yaml

from robot_id_estimator.output.mjcf_export import MJCF_NAME, MujocoExportError, write_mjcf
from robot_id_estimator.output.urdf_edit import UrdfEditor
from robot_id_estimator.results import Friction, Identification
from robot_id_estimator.results.files import write_text
from robot_id_estimator.stribeck_law import STRIBECK_NAMES
from robot_id_model.coulomb_laws import SIGN
from robot_id_model.parameters import inertial_columns
from robot_id_model.physical import LinkInertial, inertia_six, link_from_standard
from robot_id_model.robot_model import RobotModel
from robot_id_model.urdf_inertials import fixed_descendants, fixed_parts, has_own_mass, lumped_known_parts


def _num(x: float) -> str:
    """Shortest text that reads back as exactly the same float."""
    return repr(float(x))


def inertial_xml(link: LinkInertial) -> str:
    c = [_num(v) for v in link.com_m]
    xx, xy, xz, yy, yz, zz = (_num(v) for v in inertia_six(link.inertia_com_kg_m2))
    return (
        f"<inertial>\n  <origin xyz=\"{c[0]} {c[1]} {c[2]}\" rpy=\"0 0 0\"/>\n"
        f"  <mass value=\"{_num(link.mass_kg)}\"/>\n"
        f"  <inertia ixx=\"{xx}\" ixy=\"{xy}\" ixz=\"{xz}\" iyy=\"{yy}\" iyz=\"{yz}\" izz=\"{zz}\"/>\n</inertial>"
    )


MASSLESS_INERTIAL = ('<inertial>\n  <mass value="0"/>\n  <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/>\n'
                     "</inertial>")
"""What a fixed link identified as part of its arm link's body keeps (its mass is in that body)."""


def identified_urdf(
    urdf_text: str,
    robot: RobotModel,
    pi: np.ndarray,
    lumped: Sequence[np.ndarray | None] = (),
    friction_damping: Sequence[tuple[float, float]] | None = None,
) -> str:
    """The input URDF with each arm link's <inertial> replaced by the identified one, in the <link> elements of
    its <robot> (urdf_edit: nothing else changes, whatever else names the link or joint).

    `pi` holds the lumped bodies pinocchio identifies; `lumped` (from lumped_known_parts) is subtracted so
    that fixed children keep their own inertials and nothing is counted twice. A link the URDF gives no inertial of
    its own was identified as one body with the links it carries (urdf_inertials.fixed_parts): it takes that body
    less the links beyond joints outside the arm (a gripper's fingers keep their inertials: they move), and the
    links fixed to it a massless inertial. With `friction_damping`
    ((viscous, Coulomb) per joint) the damping and friction of the joints' <dynamics> are written too, their other
    attributes kept.
    """
    editor = UrdfEditor(urdf_text)
    fixed = fixed_parts(robot, urdf_text, lumped) if lumped else ()
    for j, (name, cols) in enumerate(zip(robot.link_names, inertial_columns(robot), strict=True)):
        if j < len(lumped) and lumped[j] is not None and not has_own_mass(urdf_text, name):  # one body with them
            for part in fixed_descendants(urdf_text, name):
                editor.set_child("link", part, MASSLESS_INERTIAL)
        own = pi[cols] - fixed[j] if j < len(fixed) and fixed[j] is not None else pi[cols]
        editor.set_child("link", name, inertial_xml(link_from_standard(own)))
    if friction_damping is not None:
        for joint, (viscous, coulomb) in zip(robot.joint_names, friction_damping, strict=True):
            editor.set_attributes("joint", joint, "dynamics", {"damping": _num(viscous), "friction": _num(coulomb)})
    return editor.text()


STRIBECK_LINEAR = {"FV": ("fv1", STRIBECK_NAMES.index("fv1")), "FC": ("fc", STRIBECK_NAMES.index("fc"))}
"""The linear terms a joint with a Stribeck fit takes from it: eq. (7) far above its Stribeck velocities."""


def model_friction(result: Identification) -> dict[str, dict[str, tuple[float, str]]]:
    """Per joint, each linear friction term of the physical model as (value, determination): the one source of
    the friction in identified.urdf, identified.yaml and the report. A joint with a Stribeck fit (friction sweep)
    has no viscous and Coulomb columns in the regression: it takes them from the fit (fv1 and fc, Luo et al.
    2024, eq. 7, beyond the Stribeck velocities), so that the URDF's <dynamics> carry its friction."""
    p = result.physical
    values = dict(zip(p.standard_names, zip(p.standard_values, p.status, strict=True), strict=True))
    stribeck = result.friction.stribeck
    out = {}
    for j, joint in enumerate(result.setup.joint_names, 1):
        terms = {term: values[f"{term}{j}"] for term in result.friction_terms if f"{term}{j}" in values}
        if stribeck is not None and not np.isnan(stribeck[j - 1]).all():
            for term, (name, k) in STRIBECK_LINEAR.items():
                if term in terms:
                    terms[term] = (float(stribeck[j - 1][k]), f"{name} of the Stribeck fit")
        out[joint] = terms
    return out


FRICTION_KEYS = {"FV": "viscous_nm_s_rad", "FC": "coulomb_nm", "FO": "offset_nm", "IA": "rotor_inertia_kg_m2"}
URDF_NAME = "identified.urdf"
REJECTED_URDF_NAME = "identified.rejected.urdf"
YAML_NAME = "identified.yaml"


@dataclass(frozen=True)
class ModelFiles:
    """What write_identified_model wrote: the URDF (or the rejected one), the YAML, the MJCF unless it could not
    be written, and what to tell the user about the MJCF (notes: what it lacks; warnings: why it is missing)."""

    urdf: pathlib.Path
    yaml: pathlib.Path
    mjcf: pathlib.Path | None
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def paths(self) -> tuple[pathlib.Path, ...]:
        return (self.urdf, self.yaml) + ((self.mjcf,) if self.mjcf is not None else ())


def identified_urdf_text(result: Identification) -> str:
    """The input URDF with the physical set's inertials and the joints' identified friction (<dynamics>). Needs
    result.physical."""
    robot, urdf_text = result.robot_model(), result.setup.urdf_text
    damping = None
    if _has_dynamics(result):
        damping = [(terms["FV"][0], terms["FC"][0]) for terms in model_friction(result).values()]
    text = identified_urdf(urdf_text, robot, result.physical.standard_values, lumped_known_parts(robot, urdf_text),
                           damping)
    shaped = _shaped_laws(result)
    if shaped and damping is not None:
        text = _after_declaration(text, f"<!-- robot_id: Coulomb friction not sign-like ({'; '.join(shaped)}); "
                                        f"<dynamics friction> holds its level, the law is in {YAML_NAME} -->\n")
    return text


def _has_dynamics(result: Identification) -> bool:
    """Whether the joints' friction fills URDF <dynamics> (damping = viscous, friction = Coulomb)."""
    return {"FV", "FC"} <= set(result.friction_terms)


def _shaped_laws(result: Identification) -> list[str]:
    """The joints whose Coulomb law is not sign-like, with it."""
    return [f"{name}: friction·{law.formula()}" for name, law in zip(result.setup.joint_names, result.friction.laws(),
                                                                    strict=True) if law != SIGN]


def write_identified_model(result: Identification, out_dir: str | pathlib.Path) -> ModelFiles:
    """identified.urdf (input URDF with the retrieved inertials and joint friction), identified.yaml beside
    it (friction model, base parameters with their uncertainty, retrieval figures), then identified.xml (the URDF
    as MJCF, mjcf_export): a model MuJoCo does not load is a warning naming the file, and the URDF and YAML stay
    written. Needs result.physical.

    When the physical set failed its check on held-out data or the diagnosis named a data mistake
    (Identification.mistake), the URDF is written as identified.rejected.urdf, headed by a comment with the failures
    and the mistake, no MJCF is written, and the model files of an earlier run there are removed.
    """
    if result.physical is None:
        raise ValueError("the identification has no physical parameters to export")
    out = pathlib.Path(out_dir)
    friction = model_friction(result)
    text = identified_urdf_text(result)
    passed = result.model_holds
    (out / MJCF_NAME).unlink(missing_ok=True)
    if passed:
        urdf_path = write_text(out / URDF_NAME, _after_declaration(text, f"<!-- {_which_set(result)} -->\n"))
        (out / REJECTED_URDF_NAME).unlink(missing_ok=True)
    else:
        urdf_path = write_text(out / REJECTED_URDF_NAME, _after_declaration(text, _rejection_comment(result)))
        (out / URDF_NAME).unlink(missing_ok=True)
    model = _model_yaml(result, urdf_path.name, friction, passed)
    yaml_path = write_text(out / YAML_NAME, yaml.safe_dump(model, sort_keys=False, allow_unicode=True))
    if not passed:
        return ModelFiles(urdf_path, yaml_path, None)
    try:
        mjcf_path, notes = write_mjcf(text, pathlib.Path(result.setup.urdf_path).parent, out / MJCF_NAME,  # its meshes
                                      result.setup.gravity_m_s2)
    except (MujocoExportError, OSError) as err:
        return ModelFiles(urdf_path, yaml_path, None, warnings=(f"{MJCF_NAME} not written: {err}",))
    shaped = _shaped_laws(result)
    if shaped and _has_dynamics(result):
        notes = (*notes, f"{MJCF_NAME}: MuJoCo's frictionloss holds the Coulomb level of every joint; its dry-friction "
                         "constraint is smoothed near rest by the solver (solreffriction), has no Stribeck rise and is "
                         "the same both ways (an off-centre sigmoid's two levels differ), so a simulation with it does "
                         f"not reproduce the laws of {YAML_NAME} ({'; '.join(shaped)})")
    return ModelFiles(urdf_path, yaml_path, mjcf_path, notes)


def reject_written_files(files: ModelFiles, failures: Sequence[str]) -> ModelFiles:
    """Model files that failed their check after writing (output.written_check): the URDF moved to
    identified.rejected.urdf headed by the failures, the MJCF removed; the YAML stays (it names the URDF)."""
    listed = "\n".join(f"  - {f}" for f in failures).replace("--", "- -")
    comment = f"<!-- REJECTED by robot_id: the written model failed its check as loaded:\n{listed}\n-->\n"
    rejected = write_text(files.urdf.with_name(REJECTED_URDF_NAME), _after_declaration(files.urdf.read_text(), comment))
    if files.urdf != rejected:
        files.urdf.unlink()
    if files.mjcf is not None:
        files.mjcf.unlink(missing_ok=True)
    return ModelFiles(rejected, files.yaml, None, files.notes, files.warnings)


def _rejection_comment(result: Identification) -> str:
    """The comment heading identified.rejected.urdf: the data mistake the diagnosis named, and the physical set's
    failures on held-out data (an XML comment holds no '--')."""
    reasons = [f"the data hold a mistake: {result.mistake}"] if result.mistake else []
    failures = result.checks["physical"].failures
    reasons += ["these physical parameters failed their check on held-out data:", *failures] if failures else []
    lines = "\n".join(f"  - {r}" for r in reasons).replace("--", "- -")
    return f"<!-- REJECTED by robot_id:\n{lines}\n-->\n"


def _which_set(result: Identification) -> str:
    """What identified.urdf holds and why: the physical set, its held-out error beside the other sets'."""
    held_out = result.held_out
    errors = ", ".join(f"{s} {held_out.total_rms_nm(s):.4g}" for s in result.parameter_sets)
    best = result.best_set
    why = ("the best set on held-out data" if best == "physical" else
           f"passed its check; the {best} parameters predict held-out data better but are not a physical model")
    return (f"robot_id: the physical parameters ({result.physical.method}): {why}. Held-out torque error summed over "
            f"joints [Nm] ({held_out.source}): {errors}")


def _model_yaml(result: Identification, urdf_name: str, friction: dict, passed: bool) -> dict:
    """identified.yaml: the friction model (one source with the URDF), base parameters with RSD and
    definitions, and the retrieval's figures and check."""
    setup, physical = result.setup, result.physical
    f = result.friction
    essential = set(result.essential.names)
    return {
        "robot": setup.name,
        "urdf": urdf_name,
        "source_urdf": setup.urdf_path,
        "joint_names": list(setup.joint_names),
        "friction": {
            name: {
                **{FRICTION_KEYS[term]: _plain(value) for term, (value, _) in friction[name].items()},
                "determination": {FRICTION_KEYS[term]: status for term, (_, status) in friction[name].items()},
                "coulomb_law": _coulomb_law(f, j),
                "stribeck": None if f.stribeck is None or np.isnan(f.stribeck[j]).all() else dict(
                    zip(STRIBECK_NAMES, map(_plain, f.stribeck[j]), strict=True)
                ),
            }
            for j, name in enumerate(f.joint_names)
        },
        "base_parameters": [
            {"name": name, "value": _plain(value), "rsd_percent": _plain(rsd), "essential": name in essential,
             "definition": expression}
            for name, value, rsd, expression in zip(
                result.base.names, result.base.values, result.base.rsd_percent, result.base_expressions, strict=True
            )
        ],
        "uncertainty_note": (
            "RSD of Xu et al. 2020, eq. (7); it treats the low-pass filtered residual as white, multiply by "
            f"rsd_filter_factor = {result.metrics.rsd_filter_factor:.3g} for a figure that includes the filter"
        ),
        "condition_number": _plain(result.metrics.condition_number),
        "physical_retrieval": {
            "method": physical.method,
            "target": physical.target,
            "residual_norm_nm": physical.residual_norm_nm,
            "residual_increase_percent": physical.residual_increase_percent,
            "violations": list(physical.violations),
            "check": {"passed": passed, "failures": list(result.checks["physical"].failures),
                      "data_mistake": result.mistake,
                      "held_out": result.held_out.source, "best_set": result.best_set,
                      "held_out_rms_nm": {s: [_plain(x) for x in result.held_out.rms_nm(s)]
                                          for s in result.parameter_sets}},
        },
    }


def _coulomb_law(f: Friction, joint: int) -> dict:
    """A joint's Coulomb law for identified.yaml: its formula, family and shape parameters (CoulombLaw.to_dict), with
    the range of its scale the held-out data support (e.g. velocity_range_rad_s: ShapeParameter.range_name)."""
    law = f.laws()[joint]
    out = {"form": f"coulomb_nm·{law.formula()}", **law.to_dict()}
    if law.shape and f.law_choice is not None:
        out[law.shape[0].range_name] = [_plain(v) for v in f.law_choice.interval_rad_s[joint]]
    return out


def remove_stale_model(out_dir: str | pathlib.Path) -> None:
    """Remove the model files of an earlier run from `out_dir` when this run retrieved no physical parameters."""
    for name in (URDF_NAME, REJECTED_URDF_NAME, YAML_NAME, MJCF_NAME):
        (pathlib.Path(out_dir) / name).unlink(missing_ok=True)


def _after_declaration(urdf_text: str, comment: str) -> str:
    """`comment` inserted after the XML declaration (which must stay first), or at the start."""
    match = re.match(r"\s*<\?xml[^>]*\?>\s*", urdf_text)
    at = match.end() if match else 0
    return urdf_text[:at] + comment + urdf_text[at:]


def _plain(x: float) -> float | None:
    """A YAML number, None for NaN (not identified)."""
    return float(x) if np.isfinite(x) else None
