"""Numbers and arrays to JSON and back: NaN and inf become null, null becomes NaN."""

from __future__ import annotations

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
