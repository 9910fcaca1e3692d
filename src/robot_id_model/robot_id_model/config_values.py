"""The values of a config file, each checked as it is read: a wrong one is one ModelError naming the file, the key
and what it expects, e.g. "iiwa14.yaml: state_rate_hz must be a positive number [Hz], got '500 Hz'" (never
float()'s "could not convert string to float"). Used for robot configs and collision geometry files; the estimator's
config checks its keys the same way (robot_id_estimator.settings)."""

from __future__ import annotations

import math
import pathlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import yaml

from robot_id_model.robot_model import ModelError

ABOVE_ZERO, AT_LEAST_ZERO = "positive", "non-negative"
"""The ranges a number may be held to (None: any finite number)."""


def as_number(value: object) -> float | None:
    """A YAML value as a finite float, None if it is none: booleans and text are not numbers, except text in
    a number's notation (YAML 1.1 reads 1e-3, without a decimal point, as text)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def read_yaml_mapping(path: pathlib.Path, what: str) -> dict:
    """The top-level mapping of a YAML file; ModelError (one line) when the file cannot be read, is no YAML or holds
    no mapping."""
    try:
        raw = yaml.safe_load(path.read_text())
    except OSError as err:
        raise ModelError(f"{what} {path}: cannot be read ({err.strerror})") from None
    except yaml.YAMLError as err:
        raise ModelError(f"{path}: not valid YAML ({' '.join(str(err).split())})") from None
    if not isinstance(raw, dict):
        raise ModelError(f"{path}: a {what} is a mapping of keys to values, got {type(raw).__name__}")
    return raw


@dataclass(frozen=True)
class ConfigSection:
    """One mapping of a config file: `file` for messages, `prefix` the keys' path in it (e.g. "limits.")."""

    values: Mapping
    file: str
    prefix: str = ""

    def _wrong(self, key: str, expects: str, value: object) -> ModelError:
        return ModelError(f"{self.file}: {self.prefix}{key} must be {expects}, got {value!r}")

    def has(self, key: str) -> bool:
        return self.values.get(key) is not None

    def value(self, key: str) -> object:
        """The value of `key`; ModelError when it is missing."""
        if key not in self.values:
            raise ModelError(f"{self.file}: {self.prefix}{key} is missing")
        return self.values[key]

    def section(self, key: str) -> ConfigSection:
        """The mapping under `key`."""
        value = self.value(key)
        if not isinstance(value, Mapping):
            raise self._wrong(key, "a mapping of keys to values", value)
        return ConfigSection(value, self.file, f"{self.prefix}{key}.")

    def sections(self, key: str) -> list[ConfigSection]:
        """The mappings of the list under `key`."""
        value = self.value(key)
        if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
            raise self._wrong(key, "a list of mappings", value)
        return [ConfigSection(v, self.file, f"{self.prefix}{key}[{i}].") for i, v in enumerate(value)]

    def text(self, key: str) -> str:
        value = self.value(key)
        if not isinstance(value, str) or not value:
            raise self._wrong(key, "a name (text)", value)
        return value

    def texts(self, key: str) -> tuple[str, ...]:
        value = self.value(key)
        if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
            raise self._wrong(key, "a list of names", value)
        return tuple(value)

    def number(self, key: str, unit: str, limit: str | None = None) -> float:
        """A finite number in `unit`, held to `limit` (ABOVE_ZERO, AT_LEAST_ZERO or None)."""
        value = self.value(key)
        number = as_number(value)
        if number is None or (limit == ABOVE_ZERO and number <= 0) or (limit == AT_LEAST_ZERO and number < 0):
            raise self._wrong(key, f"{f'a {limit}' if limit else 'a'} number [{unit}]", value)
        return number

    def optional_number(self, key: str, unit: str, limit: str | None = None) -> float | None:
        """`number`, or None when the key is missing or null."""
        return self.number(key, unit, limit) if self.has(key) else None

    def numbers(self, key: str, count: int, unit: str, limit: str | None = None, each: str = "") -> np.ndarray:
        """`count` finite numbers in `unit` (`each`: what one is, e.g. "one per joint"), each held to `limit`."""
        value = self.value(key)
        numbers = [as_number(v) for v in value] if isinstance(value, list) else []
        if (len(numbers) != count or None in numbers
                or (limit == ABOVE_ZERO and min(numbers) <= 0) or (limit == AT_LEAST_ZERO and min(numbers) < 0)):
            kind = f"{limit} numbers" if limit else "numbers"
            raise self._wrong(key, f"a list of {count} {kind} [{unit}]{f' ({each})' if each else ''}", value)
        return np.array(numbers, dtype=float)
