"""Results that travel: the identified model (identification.json; its validation is validation/results.py).

identification.json holds `robot` (what is needed to rebuild the regressor), `base`, `essential`, `friction`,
`metrics`, `config`, `physical` (with each standard parameter's determination), `checks` (each parameter set on
data it was not fitted to, with the held-out errors and the best set) and `warnings`. Values not estimated are null.
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from robot_id_estimator.friction.coulomb_law_choice import CoulombLawChoice
from robot_id_estimator.friction.stribeck_fit import STRIBECK_NAMES
from robot_id_estimator.output.files import write_text
from robot_id_estimator.output.json_values import (
    dataclass_from_json,
    dataclass_to_json,
    json_array,
    json_list,
)
from robot_id_estimator.physical.plausibility import Plausibility, plausibility_from_dict, plausibility_to_dict
from robot_id_estimator.robot_setup import RobotSetup, held_urdf
from robot_id_estimator.settings import ConfigError, EstimatorConfig, config_from_dict, config_to_dict
from robot_id_estimator.validation.held_out import HeldOut
from robot_id_estimator.validation.set_checks import RULE, SetCheck, best_set
from robot_id_model.coulomb_laws import SIGN, CoulombLaw
from robot_id_model.physical import LinkInertial
from robot_id_model.robot_model import RobotModel

FORMAT = "robot_id identification 2"


@dataclass(frozen=True)
class ParameterSet:
    """Named parameter values with their relative standard deviation (Xu et al. 2020, eq. 7); NaN = not estimated."""

    names: tuple[str, ...]
    values: np.ndarray
    rsd_percent: np.ndarray


@dataclass(frozen=True)
class Friction:
    """Per-joint friction: the linear terms estimated with the rigid body, and Stribeck fits (Luo et al. 2024,
    eq. 7)."""

    joint_names: tuple[str, ...]
    viscous_nm_s_rad: np.ndarray
    coulomb_nm: np.ndarray
    offset_nm: np.ndarray
    stribeck: np.ndarray | None = None
    """(n, 7) coefficients in STRIBECK_NAMES order, a NaN row for a joint without a sweep; None = no sweeps."""
    stribeck_rms_nm: np.ndarray | None = None
    coulomb_laws: tuple[CoulombLaw, ...] = ()
    """Each joint's Coulomb law, FC times its signal (robot_id_model.coulomb_laws); none: sign(dq) everywhere."""
    law_choice: CoulombLawChoice | None = None
    """How each joint's Coulomb law was chosen (coulomb_law_choice); None when it was not."""

    def laws(self) -> tuple[CoulombLaw, ...]:
        """Each joint's Coulomb law (sign(dq) where none was chosen)."""
        return self.coulomb_laws or (SIGN,) * len(self.joint_names)


@dataclass(frozen=True)
class Traces:
    """Measured and predicted torque over time, for the report (not written to JSON)."""

    t_s: np.ndarray
    measured_nm: np.ndarray
    predicted_nm: dict[str, np.ndarray]
    observer_nm: dict[str, np.ndarray] = field(default_factory=dict)
    dq_rad_s: np.ndarray | None = None
    """Joint velocities at the traces' samples (identification traces)."""
    q_rad: np.ndarray | None = None
    """Joint positions there (a presliding law is a state along them)."""
    friction_nm: np.ndarray | None = None
    """The measured torque less the base set's rigid-body part: the friction the data show (identification)."""


def concatenated_times(times: Sequence[np.ndarray]) -> np.ndarray:
    """One time axis for several recordings, each continuing where the previous one ended."""
    out, offset = [], 0.0
    for t in times:
        shifted = t - t[0] + offset
        out.append(shifted)
        offset = shifted[-1] + (t[1] - t[0] if len(t) > 1 else 0.0)
    return np.concatenate(out)


@dataclass(frozen=True)
class Metrics:
    condition_number: float
    """cond(Yb) of the identifiable columns, as the field reports it (Xu et al. 2020, eq. 9)."""
    condition_number_scaled: float
    """cond of the column-normalised Yb, independent of units."""
    n_samples: int
    n_periods: tuple[int, ...]
    noise_var_nm2: tuple[list[float] | None, ...]
    joint_weights: tuple[list[float], ...]
    residual_rms_nm: dict[str, list[float]]
    residual_variance: dict[str, float]
    rsd_filter_factor: float
    """Eq. (7) treats the low-pass filtered residual as white and so understates standard deviations by about
    this factor (estimation.rsd_filter_factor); multiply an RSD by it for one that includes the filter."""
    sources: tuple[str, ...]
    motion: dict[str, list[float]]
    """Per joint position range and RMS speed of the processed data (motion_summary.py)."""
    notes: tuple[str, ...]
    timings_s: dict[str, float]


@dataclass(frozen=True)
class Physical:
    """Physically consistent link parameters retrieved from the identified ones (Xu et al. 2020, section III)."""

    method: str
    link_names: tuple[str, ...]
    links: tuple[LinkInertial, ...]
    """Bodies as pinocchio identifies them: an arm link with the fixed links it carries (a gripper)."""
    standard_names: tuple[str, ...]
    standard_values: np.ndarray
    """π(µ̂) in robot_id_model's order, friction terms included."""
    status: tuple[str, ...]
    """Per standard parameter: determined by the data, combined (only with others), or held
    (determination.py)."""
    held_values: np.ndarray
    """The value each held parameter is held at (NaN for the others)."""
    base_values: np.ndarray
    """The base parameters of π(µ̂), over the base names."""
    residual_norm_nm: float
    """‖τ − W·E·π(µ̂)‖ of eq. (15) on the identification data."""
    unconstrained_residual_norm_nm: float
    """The same residual of the unconstrained least-squares fit of W."""
    target: str
    violations: tuple[str, ...]
    wall_time_s: float
    notes: tuple[str, ...]
    plausibility: Plausibility | None = None

    @property
    def residual_increase_percent(self) -> float:
        return 100.0 * (self.residual_norm_nm / self.unconstrained_residual_norm_nm - 1.0)


@dataclass(frozen=True)
class Identification:
    setup: RobotSetup
    friction_terms: tuple[str, ...]
    columns: np.ndarray
    """Indices in π of the base parameters' regressor columns (robot_id_model.BaseParameters.independent)."""
    base: ParameterSet
    base_expressions: tuple[str, ...]
    unidentified: dict[str, str]
    """Base parameters the data do not identify, with the reason."""
    essential: ParameterSet
    eliminated: tuple[str, ...]
    friction: Friction
    metrics: Metrics
    config: EstimatorConfig
    traces: Traces | None = None
    physical: Physical | None = None
    held_out: HeldOut | None = None
    """Each parameter set's prediction of data it was not fitted to (validation/held_out.py)."""
    checks: dict[str, SetCheck] = field(default_factory=dict)
    """Each parameter set checked on held-out data (validation/set_checks.py)."""
    warnings: tuple[str, ...] = ()
    """What the user must see: data the processing dropped or could not average, failed checks."""

    def robot_model(self) -> RobotModel:
        """The arm's model as identified: its friction terms and each joint's Coulomb law."""
        return self.setup.model(self.friction_terms, self.friction.coulomb_laws)

    def passed(self, parameter_set: str) -> bool:
        """Whether `parameter_set` passed its check on held-out data."""
        return self.checks[parameter_set].passed

    def failed_sets(self) -> list[str]:
        """The parameter sets that failed their check on held-out data."""
        return [name for name, check in self.checks.items() if not check.passed]

    @property
    def best_set(self) -> str:
        """The set that passed its check with the smallest held-out error."""
        return best_set(self.held_out, self.checks) if self.held_out is not None else "base"

    @property
    def parameter_sets(self) -> tuple[str, ...]:
        """The parameter sets this result can predict with: base, essential and, if retrieved, physical."""
        return ("base", "essential") + (("physical",) if self.physical is not None else ())

    def parameter_values(self, parameter_set: str) -> np.ndarray:
        """Values over the base parameters of one of parameter_sets (eliminated and unestimated = 0)."""
        if parameter_set == "base":
            return np.nan_to_num(self.base.values, nan=0.0)
        if parameter_set == "essential":
            values = np.zeros(len(self.base.names))
            index = {name: i for i, name in enumerate(self.base.names)}
            values[[index[name] for name in self.essential.names]] = self.essential.values
            return values
        if parameter_set == "physical" and self.physical is not None:
            return self.physical.base_values
        raise ValueError(f"unknown parameter set '{parameter_set}'; known: {list(self.parameter_sets)}")


def _parameter_set(p: ParameterSet) -> dict:
    return {"names": list(p.names), "values": json_list(p.values), "rsd_percent": json_list(p.rsd_percent)}


def _friction_to_dict(f: Friction) -> dict:
    friction = {
        "parameter_set": "base (the estimates; the physical model's friction is in physical.standard)",
        "joint_names": list(f.joint_names),
        "viscous_nm_s_rad": json_list(f.viscous_nm_s_rad),
        "coulomb_nm": json_list(f.coulomb_nm),
        "offset_nm": json_list(f.offset_nm),
        "coulomb_laws": [law.to_dict() for law in f.laws()],
        "coulomb_law_choice": None if f.law_choice is None else f.law_choice.to_dict(),
        "stribeck": None,
    }
    if f.stribeck is not None:
        friction["stribeck"] = {
            "coefficient_names": list(STRIBECK_NAMES),
            "coefficients": [None if np.isnan(row).all() else json_list(row) for row in f.stribeck],
            "rms_nm": json_list(f.stribeck_rms_nm),
        }
    return friction


def identification_to_dict(result: Identification) -> dict:
    s, m = result.setup, result.metrics
    return {
        "format": FORMAT,
        "robot": {
            "name": s.name,
            "urdf": s.urdf_path,
            "urdf_sha256": s.urdf_sha256,
            "urdf_text": s.urdf_text,
            "joint_names": list(s.joint_names),
            "gravity_m_s2": list(s.gravity_m_s2),
            "torque_filter_time_constant_s": s.torque_filter_time_constant_s,
            "datasheet_mass_kg": s.datasheet_mass_kg,
            "friction_terms": list(result.friction_terms),
        },
        "base": {
            **_parameter_set(result.base),
            "expressions": list(result.base_expressions),
            "columns": [int(c) for c in result.columns],
            "unidentified": dict(result.unidentified),
        },
        "essential": {**_parameter_set(result.essential), "eliminated": list(result.eliminated)},
        "friction": _friction_to_dict(result.friction),
        "metrics": dataclass_to_json(m),
        "config": config_to_dict(result.config),
        "physical": None if result.physical is None else _physical_to_dict(result.physical),
        "checks": {"rule": RULE, "sets": {name: {"passed": c.passed, "failures": list(c.failures)}
                                          for name, c in result.checks.items()},
                   "held_out": None if result.held_out is None else result.held_out.to_dict(),
                   "best_set": result.best_set},
        "warnings": list(result.warnings),
    }


def _physical_to_dict(p: Physical) -> dict:
    return {
        "method": p.method,
        "target": p.target,
        "links": [{"link_name": name, "mass_kg": link.mass_kg, "com_m": json_list(link.com_m),
                   "inertia_com_kg_m2": [json_list(row) for row in link.inertia_com_kg_m2]}
                  for name, link in zip(p.link_names, p.links, strict=True)],
        "standard": {"names": list(p.standard_names), "values": json_list(p.standard_values), "status": list(p.status),
                     "held_at": json_list(p.held_values)},
        "base_values": json_list(p.base_values),
        "residual_norm_nm": p.residual_norm_nm,
        "unconstrained_residual_norm_nm": p.unconstrained_residual_norm_nm,
        "residual_increase_percent": p.residual_increase_percent,
        "violations": list(p.violations),
        "wall_time_s": p.wall_time_s,
        "notes": list(p.notes),
        "plausibility": plausibility_to_dict(p.plausibility),
    }


def _physical_from_dict(raw: dict) -> Physical:
    return Physical(
        method=raw["method"],
        link_names=tuple(link["link_name"] for link in raw["links"]),
        links=tuple(
            LinkInertial(float(link["mass_kg"]), json_array(link["com_m"]), np.array(link["inertia_com_kg_m2"], float))
            for link in raw["links"]
        ),
        standard_names=tuple(raw["standard"]["names"]),
        standard_values=json_array(raw["standard"]["values"]),
        status=tuple(raw["standard"]["status"]),
        held_values=json_array(raw["standard"]["held_at"]),
        base_values=json_array(raw["base_values"]),
        residual_norm_nm=float(raw["residual_norm_nm"]),
        unconstrained_residual_norm_nm=float(raw["unconstrained_residual_norm_nm"]),
        target=raw["target"],
        violations=tuple(raw["violations"]),
        wall_time_s=float(raw["wall_time_s"]),
        notes=tuple(raw["notes"]),
        plausibility=plausibility_from_dict(raw.get("plausibility")),
    )


def identification_from_dict(raw: dict, label: str = "identification") -> Identification:
    """Inverse of identification_to_dict; raises ConfigError naming what is missing or inconsistent."""
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        found = raw.get("format") if isinstance(raw, dict) else type(raw).__name__
        raise ConfigError(f"{label}: not a robot_id identification (format {found!r}, expected {FORMAT!r})")
    try:
        r, b, e, f, m = (raw[key] for key in ("robot", "base", "essential", "friction", "metrics"))
        stribeck = f.get("stribeck")
        n = len(r["joint_names"])
        friction = Friction(
            tuple(f["joint_names"]), json_array(f["viscous_nm_s_rad"]), json_array(f["coulomb_nm"]),
            json_array(f["offset_nm"]),
            None if stribeck is None else np.array(
                [json_array(c) if c is not None else np.full(len(STRIBECK_NAMES), np.nan)
                 for c in stribeck["coefficients"]]
            ).reshape(n, len(STRIBECK_NAMES)),
            None if stribeck is None else json_array(stribeck["rms_nm"]),
            tuple(CoulombLaw.from_dict(law) for law in f.get("coulomb_laws", [])),
            CoulombLawChoice.from_dict(f.get("coulomb_law_choice")),
        )
        result = Identification(
            setup=RobotSetup(r["name"], r["urdf"], tuple(r["joint_names"]), tuple(r["gravity_m_s2"]),
                             float(r["torque_filter_time_constant_s"]), r.get("datasheet_mass_kg"),
                             held_urdf(r)),
            friction_terms=tuple(r["friction_terms"]),
            columns=np.array(b["columns"], dtype=int),
            base=ParameterSet(tuple(b["names"]), json_array(b["values"]), json_array(b["rsd_percent"])),
            base_expressions=tuple(b["expressions"]),
            unidentified=dict(b["unidentified"]),
            essential=ParameterSet(tuple(e["names"]), json_array(e["values"]), json_array(e["rsd_percent"])),
            eliminated=tuple(e["eliminated"]),
            friction=friction,
            metrics=dataclass_from_json(Metrics, m),
            config=config_from_dict(raw.get("config") or {}, f"{label}: config"),
            physical=None if raw.get("physical") is None else _physical_from_dict(raw["physical"]),
            held_out=HeldOut.from_dict(raw["checks"].get("held_out")),
            checks={name: SetCheck(bool(c["passed"]), tuple(c["failures"]))
                    for name, c in raw["checks"]["sets"].items()},
            warnings=tuple(raw["warnings"]),
        )
        _check_lengths(result, label)
        return result
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        if isinstance(err, ConfigError):
            raise
        raise ConfigError(f"{label}: missing or malformed entry {err}") from None


def _check_lengths(result: Identification, label: str) -> None:
    """ConfigError when the parameter lists do not belong together (an edited or truncated file)."""
    b, e = result.base, result.essential
    sizes = {"base names": len(b.names), "base values": len(b.values), "base RSDs": len(b.rsd_percent),
             "base expressions": len(result.base_expressions), "base columns": len(result.columns)}
    if len(set(sizes.values())) > 1 or not len(e.names) == len(e.values) == len(e.rsd_percent):
        raise ConfigError(f"{label}: parameter lists of different lengths {sizes}, essential {len(e.names)} names "
                          f"and {len(e.values)} values; identify again")
    if result.physical is not None and len(result.physical.base_values) != len(b.names):
        raise ConfigError(f"{label}: {len(result.physical.base_values)} physical base values for {len(b.names)} base "
                          "parameters; identify again")


def write_json(data: dict, path: str | pathlib.Path) -> pathlib.Path:
    return write_text(path, json.dumps(data, indent=1, allow_nan=False) + "\n")


def write_identification(result: Identification, path: str | pathlib.Path) -> pathlib.Path:
    return write_json(identification_to_dict(result), path)


def read_identification(path: str | pathlib.Path) -> Identification:
    path = pathlib.Path(path)
    if not path.is_file():
        hint = f" (give {path / 'identification.json'})" if (path / "identification.json").is_file() else ""
        raise ConfigError(f"identification result not found: {path} is not a file{hint}")
    try:
        raw = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ConfigError(f"{path}: not valid JSON ({err})") from None
    return identification_from_dict(raw, str(path))
