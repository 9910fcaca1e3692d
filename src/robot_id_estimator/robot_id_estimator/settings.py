"""Estimator settings: one typed config with every stage's settings (ProcessingConfig, PhysicalConfig), read from YAML
(`config/estimator.yaml` shows every key). On the ground floor: the stages read it, it reads none of them."""

from __future__ import annotations

import dataclasses
import pathlib
from dataclasses import dataclass, field

import yaml

from robot_id_model.config_values import as_number
from robot_id_model.coulomb_laws import FAMILIES
from robot_id_model.robot_model import DEFAULT_FRICTION, FRICTION_TERMS

METHODS = ("wls", "ols")
PHYSICAL_METHODS = ("lmi", "multistart", "none")


def coulomb_law_settings() -> tuple[str, ...]:
    """The values of coulomb_law: "auto" and every Coulomb-law family (robot_id_model.coulomb_laws.FAMILIES)."""
    return ("auto", *FAMILIES)


DEFAULT_REGULARIZER_WEIGHTS = {"euclidean": 1.0, "entropic": 1e-3}
DEFAULT_MARGIN = 0.001
"""Relative margin from the consistency boundary (robot_id_model.physical.relative_margin); the shipped URDF links
have 0.03–0.3 (Franka's link 4: −0.045, it breaks the triangle inequality). On the Gaz et al. Panda log 0.01 costs
0.05 % of held-out RMS on joint 4 (physical/base 1.0206 against 1.0201 with 0.001 or none)."""
DEFAULT_SPREAD_FRACTION = 0.1
"""At least this fraction of a link's URDF mass fills its collision hull uniformly (physical.size_bounds): it keeps
the Gaz et al. Panda log's link 6 from coming out a point mass at no cost in its held-out error. (It once cost
short simulated runs accuracy; the cause was the regulariser's weight, which then grew with the data's SNR.)"""


@dataclass(frozen=True)
class ProcessingConfig:
    """Signal-processing settings; the defaults are Xu et al.'s (2020) (torque) and Hayat et al.'s (2015) (motion)."""

    torque_cutoff_hz: float = 6.0
    """Zero-phase Butterworth on the (averaged) torque, Xu et al. 2020."""
    filter_order: int = 4
    motion_cutoff_hz: float = 10.0
    """Non-periodic: zero-phase Butterworth on q (or logged dq) before and after each central difference
    (Hayat et al. 2015); periodic without known harmonics: highest frequency kept by the frequency-domain
    derivatives."""
    decimation: int = 1
    """Keep every Nth sample after filtering (Hayat et al. 2015)."""
    max_harmonic_hz: float | None = None
    """Periodic: keep the multiples of 1/T up to this frequency when differentiating (default: the
    description's harmonics when known, else motion_cutoff_hz)."""
    trim_s: float | None = None
    """Non-periodic: drop this much at both ends after filtering, where the zero-phase filters and the central
    differences have no neighbours (their edge effects); None: EDGE_CUTOFF_PERIODS periods of the lowest cutoff."""
    non_periodic: bool = False
    """Process as non-periodic data even when a period is known or detected."""

    def __post_init__(self) -> None:
        positive = {"torque_cutoff_hz": self.torque_cutoff_hz, "motion_cutoff_hz": self.motion_cutoff_hz}
        if self.max_harmonic_hz is not None:
            positive["max_harmonic_hz"] = self.max_harmonic_hz
        wrong = [f"{name} = {value}" for name, value in positive.items() if not value > 0.0]
        if self.filter_order < 1 or self.decimation < 1:
            wrong.append(f"filter_order = {self.filter_order} and decimation = {self.decimation} must be >= 1")
        if self.trim_s is not None and not self.trim_s >= 0.0:
            wrong.append(f"trim_s = {self.trim_s} must not be negative")
        if not isinstance(self.non_periodic, bool):
            wrong.append(f"non_periodic = {self.non_periodic!r} must be true or false")
        if wrong:
            raise ValueError(f"invalid processing settings: {', '.join(wrong)}")


@dataclass(frozen=True)
class PhysicalConfig:
    """Retrieval of physically consistent link parameters (Xu et al. 2020, section III) and its bounds."""

    method: str = "lmi"
    """"lmi": convex program on the pseudo-inertias (Wensing et al.), seconds; "multistart": Xu et al.'s (2020)
    multi-start of a constrained local solver (eqs. 15–18); "none": skip. Both impose every constraint below; a set
    that violates one is never the answer: the other method is tried, then the stage fails."""
    target: str = "base"
    """Parameters whose regressor columns form the objective of eq. (15): "base" or "essential". On the Gaz et al.
    Panda log and on simulated different motions the base target predicts at least as well (benchmarks/physical.py,
    docs/physical_parameters.md), and it needs no elimination to be right."""
    regularizer: str = "euclidean"
    """lmi: pull towards the URDF model, "euclidean" (relative squared distance per link) or "entropic"
    (log-det divergence of the pseudo-inertias). multistart always pulls with the Euclidean one."""
    regularizer_weight: float | None = None
    """Weight of the pull in units of the unconstrained fit's squared residual, so that it weighs the same against
    noisy and clean data; None: 1 (euclidean) or 1e-3 (entropic). Weaker pulls leave what the data barely see to
    their noise (a joint that moves 2 % of its range, the essential target); the weight the pull had before it was
    scaled by the residual, 1e-4 of the torque's square, cost 24 % of residual and three times the base set's
    held-out error on the Panda hardware-mode run, whose residual is a thousandth of its torque
    (docs/physical_parameters.md)."""
    starts: int = 8
    """multistart: κ, the number of starts (the convex solution, the URDF model, random points)."""
    seed: int = 0
    mass_factor: tuple[float, float] = (0.5, 2.0)
    """Bounds of each link mass as factors of its URDF mass (eq. 16)."""
    com_margin_m: float = 0.1
    """Bounds of each CoM coordinate: URDF value ± this (eq. 16)."""
    inertia_factor: float = 5.0
    """Bound of each inertia diagonal: factor × the URDF link's largest principal moment (eq. 16)."""
    total_mass_factor: tuple[float, float] = (0.8, 1.2)
    """Range of the total arm mass as factors of the URDF total (eq. 17)."""
    tool_mass_kg: float | None = None
    """A tool the URDF does not hold may hang on the last link, up to this mass (its mass bound, the total's and its
    CoM and inertia bounds widen for it, physical.problem.default_bounds); None: the robot config's rated payload,
    else TOOL_FRACTION of the arm's URDF mass; 0: no tool."""
    max_inertia_ratio: float | None = None
    """Largest over smallest inertia diagonal (eq. 18); None: 100 or twice the URDF model's, if larger."""
    max_off_diagonal_ratio: float | None = None
    """Off-diagonal over smallest diagonal (eq. 18); None: 0.1 or twice the URDF model's, if larger."""
    orderings: tuple[str, ...] = ()
    """Robot-specific orderings such as "Izz3 <= Ixx3" (names m, cx, cy, cz, Ixx ... Izz, FV ... + joint)."""
    margin: float = DEFAULT_MARGIN
    """Relative margin from the consistency boundary: every link body's λ_min(Σ_C) ≥ margin·tr(Σ_C), so that its
    principal moments meet the triangle inequality by margin·tr(I_C) (a body simulators integrate well)."""

    spread_fraction: float = DEFAULT_SPREAD_FRACTION
    """At least this fraction of every link's URDF mass fills its collision hull uniformly, so that its second
    moments are at least those (physical.size_bounds); 0: no such bound."""

    def weight(self, regularizer: str) -> float:
        """The pull weight of `regularizer`: the configured one if it is the chosen regularizer, else its default."""
        if regularizer == self.regularizer and self.regularizer_weight is not None:
            return self.regularizer_weight
        return DEFAULT_REGULARIZER_WEIGHTS[regularizer]

    def __post_init__(self) -> None:
        wrong = []
        if self.method not in PHYSICAL_METHODS:
            wrong.append(f"physical method '{self.method}' is not one of {PHYSICAL_METHODS}")
        if self.target not in ("essential", "base"):
            wrong.append(f"physical target must be 'essential' or 'base', not '{self.target}'")
        if self.regularizer not in ("entropic", "euclidean"):
            wrong.append(f"regularizer must be 'entropic' or 'euclidean', not '{self.regularizer}'")
        if not 0.0 <= self.margin < 1.0 / 3.0:
            wrong.append(f"margin must be in [0, 1/3), got {self.margin}")
        if self.tool_mass_kg is not None and not self.tool_mass_kg >= 0.0:
            wrong.append(f"tool_mass_kg must be 0 or more, got {self.tool_mass_kg}")
        if not 0.0 <= self.spread_fraction <= 1.0:
            wrong.append(f"spread_fraction must be in [0, 1], got {self.spread_fraction}")
        if self.starts < 1:
            wrong.append(f"starts must be at least 1, got {self.starts}")
        for name in ("mass_factor", "total_mass_factor"):
            low, high = getattr(self, name)
            if not 0.0 < low <= high:
                wrong.append(f"{name} must be 0 < low <= high, got {getattr(self, name)}")
        if wrong:
            raise ConfigError("; ".join(wrong))


class ConfigError(ValueError):
    """An estimator config that cannot be used, with the reason."""


@dataclass(frozen=True)
class EstimatorConfig:
    """Processing, estimation and validation settings with the defaults of the papers they follow."""

    processing: ProcessingConfig = field(default_factory=ProcessingConfig)
    friction: tuple[str, ...] = DEFAULT_FRICTION
    """Friction terms of the linear model, from FV (viscous), FC (Coulomb), FO (offset), IA (rotor inertia)."""
    coulomb_law: str = "auto"
    """Each joint's Coulomb law: "auto" chosen by held-out data among the families of robot_id_model.coulomb_laws
    (coulomb_law_choice), or a family's name (the best law of that family) for every joint."""
    method: str = "wls"
    """"wls": weighted by per-joint torque noise (the MLE of Jia et al. 2019 and Wu et al. 2012); "ols": Xu et
    al. 2020, eq. (6)."""
    essential_value_threshold: float = 0.01
    essential_rsd_threshold_percent: float = 40.0
    min_speed_rad_s: float = 0.02
    """A joint's equations are left out where it moves slower than this: sticking in static friction (at every
    reversal), its friction torque is anything up to the breakaway torque, which no model of q, dq and ddq
    predicts, and the classical friction model fails at low speed (Luo et al. 2024, section 1); 0 keeps all."""
    observer_gain_1_s: float = 50.0
    """K_O of the momentum observer: its residual is the model error low-passed at this rate [1/s]."""
    collision_safety_factor: float = 1.2
    """Collision threshold = this × the largest collision-free observer residual (Xu et al. 2020, IV-F)."""
    physical: PhysicalConfig = field(default_factory=PhysicalConfig)

    @property
    def chooses_coulomb_law(self) -> bool:
        """Whether coulomb_law leaves a law to choose: "auto", or a family with a shape to find (not sign(dq), which
        has none)."""
        return self.coulomb_law not in FAMILIES or bool(FAMILIES[self.coulomb_law].shape)

    def to_dict(self) -> dict:
        """In the layout of config/estimator.yaml (config_to_dict), also inside identification.json."""
        return config_to_dict(self)

    @classmethod
    def from_dict(cls, raw: dict) -> EstimatorConfig:
        return config_from_dict(raw)

    def __post_init__(self) -> None:
        wrong = []
        if self.coulomb_law not in coulomb_law_settings():
            wrong.append(f"coulomb_law '{self.coulomb_law}' is not one of {coulomb_law_settings()}")
        if self.method not in METHODS:
            wrong.append(f"method '{self.method}' is not one of {METHODS}")
        unknown = [t for t in self.friction if t not in FRICTION_TERMS]
        if unknown or len(set(self.friction)) != len(self.friction):
            wrong.append(f"friction terms must be distinct, from {FRICTION_TERMS}; got {list(self.friction)}")
        for name in ("essential_value_threshold", "essential_rsd_threshold_percent", "observer_gain_1_s"):
            if not getattr(self, name) > 0.0:
                wrong.append(f"{name} must be positive, got {getattr(self, name)}")
        if not self.min_speed_rad_s >= 0.0:
            wrong.append(f"min_speed_rad_s must be 0 or more, got {self.min_speed_rad_s}")
        if not self.collision_safety_factor >= 1.0:
            wrong.append(f"collision_safety_factor must be at least 1, got {self.collision_safety_factor}")
        if wrong:
            raise ConfigError("; ".join(wrong))


_SECTIONS = {
    "processing": [f.name for f in dataclasses.fields(ProcessingConfig)],
    "estimation": ["friction", "coulomb_law", "method", "essential_value_threshold", "essential_rsd_threshold_percent",
                   "min_speed_rad_s"],
    "validation": ["observer_gain_1_s", "collision_safety_factor"],
    "physical": [f.name for f in dataclasses.fields(PhysicalConfig)],
}


def config_to_dict(config: EstimatorConfig) -> dict:
    """The YAML/JSON layout of a config: sections processing, estimation, validation."""
    out = {"processing": dataclasses.asdict(config.processing)}
    for section in ("estimation", "validation"):
        out[section] = {key: getattr(config, key) for key in _SECTIONS[section]}
    out["estimation"]["friction"] = list(config.friction)
    out["physical"] = {
        key: list(value) if isinstance(value, tuple) else value
        for key, value in dataclasses.asdict(config.physical).items()
    }
    return out


def config_from_dict(raw: dict, label: str = "estimator config") -> EstimatorConfig:
    """Inverse of config_to_dict; missing keys take their defaults, unknown keys are refused."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{label}: expected a mapping with sections {list(_SECTIONS)}")
    unknown = [key for key in raw if key not in _SECTIONS]
    for section, keys in _SECTIONS.items():
        values = raw.get(section) or {}
        if not isinstance(values, dict):
            raise ConfigError(f"{label}: section '{section}' must be a mapping")
        unknown += [f"{section}.{key}" for key in values if key not in keys]
    if unknown:
        raise ConfigError(f"{label}: unknown keys {unknown}; known: {_SECTIONS}")
    processing = _typed(ProcessingConfig, raw.get("processing") or {}, "processing", label)
    physical = _typed(PhysicalConfig, raw.get("physical") or {}, "physical", label)
    flat = {**_typed(EstimatorConfig, raw.get("estimation") or {}, "estimation", label),
            **_typed(EstimatorConfig, raw.get("validation") or {}, "validation", label)}
    try:
        return EstimatorConfig(processing=ProcessingConfig(**processing), physical=PhysicalConfig(**physical), **flat)
    except ValueError as err:
        raise ConfigError(f"{label}: {err}") from None


_EXPECTED = {
    "float": "a number", "float | None": "a number or null", "int": "a whole number", "bool": "true or false",
    "str": "a name (text)", "tuple[float, float]": "two numbers (low, high)", "tuple[str, ...]": "a list of strings",
}
"""What a value of each field type of the settings must be, in the words of the error."""


def _typed(cls: type, values: dict, section: str, label: str) -> dict:
    """`values` of `section` as the types of `cls`'s fields (numbers as floats: YAML 1.1 reads 1e-6, without a
    decimal point, as text; lists as tuples); ConfigError naming the file, the key and what it expects when one is
    not of its type."""
    types = {f.name: str(f.type) for f in dataclasses.fields(cls)}
    out = {}
    for key, value in values.items():
        kind = types[key]
        typed = _as_type(kind, value)
        if typed is _WRONG:
            raise ConfigError(f"{label}: {section}.{key} must be {_EXPECTED[kind]}, got {value!r}")
        out[key] = typed
    return out


_WRONG = object()


def _as_type(kind: str, value: object) -> object:
    """`value` as a field of type `kind` (a key of _EXPECTED), or _WRONG."""
    if kind == "float | None" and value is None:
        return None
    if kind in ("float", "float | None"):
        number = as_number(value)
        return _WRONG if number is None else number
    if kind == "int":
        return value if isinstance(value, int) and not isinstance(value, bool) else _WRONG
    if kind == "bool":
        return value if isinstance(value, bool) else _WRONG
    if kind == "str":
        return value if isinstance(value, str) else _WRONG
    if kind == "tuple[float, float]":
        numbers = [as_number(v) for v in value] if isinstance(value, list) and len(value) == 2 else [None]
        return _WRONG if None in numbers else tuple(numbers)
    if kind == "tuple[str, ...]":
        return tuple(value) if isinstance(value, list) and all(isinstance(v, str) for v in value) else _WRONG
    raise TypeError(f"no reading of settings of type {kind}")


def load_estimator_config(path: str | pathlib.Path) -> EstimatorConfig:
    """Read an estimator config YAML."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise ConfigError(f"estimator config not found: {path}")
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: not valid YAML ({err})") from None
    return config_from_dict(raw, str(path))


def replace_config(config: EstimatorConfig, **overrides: object) -> EstimatorConfig:
    """`config` with the overrides that are not None (command-line options)."""
    given = {key: value for key, value in overrides.items() if value is not None}
    try:
        return dataclasses.replace(config, **given)
    except ValueError as err:
        raise ConfigError(str(err)) from None
