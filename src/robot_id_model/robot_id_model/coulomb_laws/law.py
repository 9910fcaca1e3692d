"""What every Coulomb law is (CoulombLaw: its shape parameters, its signal, its formula, the candidates the
estimator's choice tries, its dictionary in files) and the registry of the families by name (FAMILIES)."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, TypeVar

import numpy as np


@dataclass(frozen=True)
class ShapeParameter:
    """One shape parameter of a family: its name in identified.yaml, identification.json and JointFriction.msg
    (with its unit, as in velocity_rad_s), its symbol in formulas, its unit and its lower bound."""

    name: str
    symbol: str
    unit: str
    """As printed, e.g. rad/s; empty for a ratio."""
    meaning: str
    minimum: float = -math.inf
    strict: bool = True
    """Whether the value must be above `minimum` (else at least `minimum`)."""

    def check(self, family: str, value: float) -> None:
        """ValueError unless `value` is within the bound (NaN never is)."""
        if not (value > self.minimum if self.strict else value >= self.minimum):
            bound = f"{'above' if self.strict else 'at least'} {self.minimum:g}"
            raise ValueError(f"a {family} Coulomb law's {self.symbol} ({self.name}, {self.meaning}) is {bound}, "
                             f"got {value}")

    @property
    def range_name(self) -> str:
        """The name of its range in identified.yaml: `_range` after its quantity, e.g. velocity_range_rad_s."""
        quantity, _, unit = self.name.partition("_")
        return f"{quantity}_range_{unit}" if unit else f"{quantity}_range"


FAMILIES: dict[str, type[CoulombLaw]] = {}
"""Every family by its name, in the order registered: what the estimator's choice, the settings, the command
line's help, the exports and the messages read."""

Family = TypeVar("Family", bound=type["CoulombLaw"])


def register(family: Family) -> Family:
    """Class decorator: `family` in FAMILIES under its name."""
    if family.family in FAMILIES:
        raise ValueError(f"a Coulomb law family '{family.family}' is registered already")
    FAMILIES[family.family] = family
    return family


class CoulombLaw(ABC):
    """One joint's Coulomb law: its column's signal, by which the regression multiplies the Coulomb parameter FC.
    Each family is a frozen dataclass whose fields are its shape parameters, in `shape`'s order. For a fixed shape
    the torque is linear in FC, so the regression stays linear; the estimator's choice finds the shape among
    `candidates`."""

    family: ClassVar[str]
    """The family's name in the settings, identified.yaml, identification.json and JointFriction.msg."""
    shape: ClassVar[tuple[ShapeParameter, ...]] = ()
    """The shape parameters; the first is the law's scale (a speed or a travel), in which the choice states the
    range the held-out data support."""
    general: ClassVar[str]
    """The law in its symbols, e.g. tanh(dq/v_s), for the command line's help."""
    path_dependent: ClassVar[bool] = False
    """A state of the path rather than a function of the speed: needs the positions, along samples in time order."""
    extends: ClassVar[str | None] = None
    """The family this one equals at one value of a shape parameter (a sigmoid without shift is tanh): the choice
    takes it over that family's best only when the held-out data show the difference."""

    def __post_init__(self) -> None:
        for parameter, value in zip(self.shape, self.shape_values(), strict=True):
            parameter.check(self.family, value)

    @abstractmethod
    def signal(self, dq_rad_s: np.ndarray, q_rad: np.ndarray | None = None) -> np.ndarray:
        """The Coulomb column's signal at velocities dq (a path-dependent law along the positions q of the same
        samples, in their order along axis 0)."""

    @abstractmethod
    def formula(self) -> str:
        """The law with its values, e.g. tanh(dq/0.05), for the report and the exports."""

    @classmethod
    @abstractmethod
    def candidates(cls) -> tuple[CoulombLaw, ...]:
        """The shapes the estimator's choice tries, a grid covering what real joints show."""

    def shape_values(self) -> tuple[float, ...]:
        return tuple(float(getattr(self, parameter.name)) for parameter in self.shape)

    def scale(self) -> float:
        """The first shape parameter's value (shape)."""
        return self.shape_values()[0]

    def form(self) -> tuple[float, ...]:
        """The shape but its scale: candidates of one form differ in their scale only (a family whose other
        parameters grow with the scale states them relative to it)."""
        return self.shape_values()[1:]

    def to_dict(self) -> dict[str, str | float]:
        """The law in identified.yaml and identification.json: its family and its shape parameters by name."""
        return {"family": self.family, **{p.name: v for p, v in zip(self.shape, self.shape_values(), strict=True)}}

    @staticmethod
    def from_dict(raw: Mapping) -> CoulombLaw:
        """The law to_dict wrote; keys its family does not have are ignored (files written before every family had
        its own keys hold every family's, the unused ones 0)."""
        family = FAMILIES.get(raw.get("family"))
        if family is None:
            raise ValueError(f"Coulomb law family '{raw.get('family')}' is not one of {', '.join(FAMILIES)}")
        missing = [p.name for p in family.shape if p.name not in raw]
        if missing:
            raise ValueError(f"a {family.family} Coulomb law needs {', '.join(missing)}")
        return family(**{p.name: float(raw[p.name]) for p in family.shape})

    @classmethod
    def help_text(cls) -> str:
        """The family in one line: its name, law and shape parameters, e.g. tanh: tanh(dq/v_s), v_s [rad/s]."""
        parameters = [f"{p.symbol} [{p.unit}]" if p.unit else p.symbol for p in cls.shape]
        return ", ".join([f"{cls.family}: {cls.general}", *parameters])


def coulomb_signals(q_rad: np.ndarray, dq_rad_s: np.ndarray, laws: tuple[CoulombLaw, ...]) -> np.ndarray:
    """(K, n) each joint's Coulomb signal along samples (K, n) in their order; no laws: sign(dq) everywhere."""
    q, dq = np.asarray(q_rad, dtype=float), np.asarray(dq_rad_s, dtype=float)
    if not laws:
        return np.sign(dq)
    return np.stack([law.signal(dq[..., j], q[..., j]) for j, law in enumerate(laws)], axis=-1)
