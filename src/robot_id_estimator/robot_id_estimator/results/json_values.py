"""Results to JSON and back, derived from their dataclasses once: every field by its type annotation, NaN and inf as
null (and null back as NaN), arrays and tuples as lists, nested dataclasses as objects.

A class may shape its own JSON with `to_dict`/`from_dict` (a config kept in its YAML layout); a field with
`metadata={"json": False}` is not written (it is rebuilt or not needed); the names in a class's JSON_DERIVED
(properties) are written beside the fields for readers of the file and ignored when it is read.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing

import numpy as np

NOT_WRITTEN = {"json": False}
"""Field metadata of a field that does not go to JSON."""


def json_number(x: float) -> float | None:
    """JSON number, null for NaN/inf (a condition number of a rank-deficient regressor, say)."""
    return float(x) if math.isfinite(x) else None


def json_float(x: float | None) -> float:
    """The float of a JSON number, NaN for null."""
    return math.nan if x is None else float(x)


def json_array(x: list | None) -> np.ndarray:
    """The array of a (nested) JSON list, NaN for null."""
    def nan_for_null(v: object) -> object:
        return [nan_for_null(w) for w in v] if isinstance(v, list) else (math.nan if v is None else v)

    return np.array(nan_for_null(x))


def to_json(value: object) -> object:
    """Any result value as JSON (see the module docstring)."""
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclass_to_json(value)
    if isinstance(value, dict):
        return {key: to_json(v) for key, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [to_json(v) for v in value]
    if isinstance(value, (float, np.floating)):
        return json_number(float(value))
    if isinstance(value, np.bool_):
        return bool(value)
    return int(value) if isinstance(value, np.integer) else value


def dataclass_to_json(instance: object) -> dict:
    """Every written field of a dataclass instance and its JSON_DERIVED properties, to_json."""
    out = {f.name: to_json(getattr(instance, f.name)) for f in dataclasses.fields(instance)
           if f.metadata.get("json", True)}
    out.update({name: to_json(getattr(instance, name)) for name in getattr(type(instance), "JSON_DERIVED", ())})
    return out


def dataclass_from_json(cls: type, raw: dict) -> object:
    """Inverse of dataclass_to_json by the fields' annotations; a field missing from `raw` takes its default
    (KeyError when it has none)."""
    hints = typing.get_type_hints(cls)
    given = {}
    for f in dataclasses.fields(cls):
        if not f.init or not f.metadata.get("json", True):
            continue
        if f.name in raw:
            given[f.name] = from_json(hints[f.name], raw[f.name])
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise KeyError(f.name)
    return cls(**given)


def from_json(annotation: object, raw: object) -> object:
    """The value of type `annotation` that to_json wrote as `raw`."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        if raw is None and type(None) in args:
            return None
        return from_json(next(a for a in args if a is not type(None)), raw)
    if annotation is float:
        return json_float(raw)
    if annotation in (int, str, bool):
        return annotation(raw)
    if annotation is np.ndarray:
        return json_array(raw)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_json(args[0], v) for v in raw)
        return tuple(from_json(a, v) for a, v in zip(args, raw, strict=True))
    if origin is list:
        return [from_json(args[0], v) for v in raw]
    if origin is dict:
        return {key: from_json(args[1], v) for key, v in raw.items()}
    if hasattr(annotation, "from_dict"):
        return annotation.from_dict(raw)
    if dataclasses.is_dataclass(annotation):
        return dataclass_from_json(annotation, raw)
    return raw
