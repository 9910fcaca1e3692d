"""Numbers and arrays to JSON and back: NaN and inf become null, null becomes NaN."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np


def json_list(x: np.ndarray | Sequence[float]) -> list[float | None]:
    """JSON list with null for NaN/inf."""
    return [float(v) if math.isfinite(v) else None for v in np.asarray(x, dtype=float).ravel()]


def json_number(x: float) -> float | None:
    """JSON number, null for NaN/inf (a condition number of a rank-deficient regressor, say)."""
    return float(x) if math.isfinite(x) else None


def json_float(x: float | None) -> float:
    """The float of a JSON number, NaN for null."""
    return math.nan if x is None else float(x)


def json_array(x: list | None) -> np.ndarray:
    """The array of a JSON list, NaN for null."""
    return np.array([math.nan if v is None else v for v in x], dtype=float)


def to_json(value: object) -> object:
    """A dataclass field's value as JSON: floats with null for NaN/inf, arrays and tuples as lists, dicts by value."""
    if isinstance(value, dict):
        return {key: to_json(v) for key, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [to_json(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return json_number(float(value))
    return int(value) if isinstance(value, np.integer) else value


def dataclass_to_json(instance: object) -> dict:
    """Every field of a dataclass instance, to_json."""
    return {f.name: to_json(getattr(instance, f.name)) for f in dataclasses.fields(instance)}


def dataclass_from_json(cls: type, raw: dict) -> object:
    """Inverse of dataclass_to_json for fields of JSON types, tuples and floats (null → NaN), by their
    annotations."""
    def value(annotation: str, v: object) -> object:
        if annotation == "float":
            return json_float(v)
        if annotation.startswith("dict[str, float]"):
            return {key: json_float(x) for key, x in v.items()}
        return tuple(v) if annotation.startswith("tuple") else v

    return cls(**{f.name: value(str(f.type), raw[f.name]) for f in dataclasses.fields(cls)})
