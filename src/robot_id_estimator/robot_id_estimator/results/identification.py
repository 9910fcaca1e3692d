"""Results that travel: the identified model (identification.json; its validation is results/validation.py).

identification.json is an Identification's fields as they are (results.json_values derives it from the dataclasses
below): `setup` (what is needed to rebuild the regressor, the URDF text included), `base`, `essential`, `friction`,
`metrics`, `config`, `physical` (with each standard parameter's determination), `held_out` (each parameter set
predicting data it was not fitted to), `checks` (each set's verdict), `best_set`, `warnings` and `mistake` (the data
mistake the diagnosis named, null when none); values not estimated are null.
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from robot_id_estimator.results.files import write_text
from robot_id_estimator.results.held_out import HeldOut
from robot_id_estimator.results.json_values import NOT_WRITTEN, dataclass_from_json, dataclass_to_json
from robot_id_estimator.results.law_choice import CoulombLawChoice
from robot_id_estimator.results.plausibility import Plausibility
from robot_id_estimator.results.set_checks import RULE, SetCheck, best_set
from robot_id_estimator.robot_setup import RobotSetup, held_urdf
from robot_id_estimator.settings import ConfigError, EstimatorConfig
from robot_id_model.coulomb_laws import SIGN, CoulombLaw
from robot_id_model.physical import LinkInertial
from robot_id_model.robot_model import RobotModel

FORMAT = "robot_id identification 3"


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
    ddq_rad_s2: np.ndarray | None = None
    """Joint accelerations there (identification traces: the written model is checked at these samples)."""


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

    JSON_DERIVED = ("residual_increase_percent",)

    @property
    def residual_increase_percent(self) -> float:
        return 100.0 * (self.residual_norm_nm / self.unconstrained_residual_norm_nm - 1.0)


@dataclass(frozen=True)
class Identification:
    JSON_DERIVED = ("best_set",)
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
    traces: Traces | None = field(default=None, metadata=NOT_WRITTEN)
    """For the report only."""
    physical: Physical | None = None
    held_out: HeldOut | None = None
    """Each parameter set's prediction of data it was not fitted to (validation/held_out.py)."""
    checks: dict[str, SetCheck] = field(default_factory=dict)
    """Each parameter set checked on held-out data (results/set_checks.py)."""
    warnings: tuple[str, ...] = ()
    """What the user must see: data the processing dropped or could not average, failed checks."""
    mistake: str | None = None
    """The data mistake the diagnosis names (validation.diagnosis: a torque sign, an encoder, a zero, the torque
    filter, too little data), one of the warnings; None when it names none. With one the model is not to be trusted:
    written only as identified.rejected.urdf, and `identify` exits 4."""

    def robot_model(self) -> RobotModel:
        """The arm's model as identified: its friction terms and each joint's Coulomb law."""
        return self.setup.model(self.friction_terms, self.friction.coulomb_laws)

    def passed(self, parameter_set: str) -> bool:
        """Whether `parameter_set` passed its check on held-out data."""
        return self.checks[parameter_set].passed

    @property
    def model_holds(self) -> bool:
        """Whether the physical model is the identified model: it passed its check and no data mistake was named."""
        return self.physical is not None and self.passed("physical") and self.mistake is None

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


def identification_to_dict(result: Identification) -> dict:
    """identification.json: the Identification's fields (results.json_values), with the format and the check rule."""
    return {"format": FORMAT, "check_rule": RULE, **dataclass_to_json(result)}


def identification_from_dict(raw: dict, label: str = "identification") -> Identification:
    """Inverse of identification_to_dict; raises ConfigError naming what is missing or inconsistent."""
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        found = raw.get("format") if isinstance(raw, dict) else type(raw).__name__
        raise ConfigError(f"{label}: not a robot_id identification (format {found!r}, expected {FORMAT!r})")
    try:
        held_urdf(raw["setup"])
        result = dataclass_from_json(Identification, raw)
        _check_lengths(result, label)
        return result
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        if isinstance(err, ConfigError):
            raise ConfigError(f"{label}: {err}") from None
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
