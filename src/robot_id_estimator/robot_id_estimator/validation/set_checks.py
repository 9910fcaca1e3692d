"""Every parameter set is checked against the data it came from before anything is written.

The base parameters are the least-squares optimum of the identification data, so no other set can predict
those data better by more than round-off. A set (essential, physical) that predicts them clearly worse on
some joint is flagged: its retrieval or elimination went wrong, and a model built from it would not
behave like the robot. Physical parameters also fail when a configured constraint is violated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

WORSE_FACTOR = 1.25
"""A set fails on a joint when its residual RMS exceeds WORSE_FACTOR × the base set's ..."""
TORQUE_FRACTION = 0.01
"""... plus TORQUE_FRACTION × the RMS of that joint's torque (so a joint with a near-perfect base fit is not
failed for a residual far below anything that matters)."""

RULE = (f"a set fails on a joint when its residual RMS on the identification data exceeds {WORSE_FACTOR:g} × the "
        f"base set's plus {100 * TORQUE_FRACTION:g} % of the joint's torque RMS, or (physical) when a constraint "
        "is violated")


@dataclass(frozen=True)
class SetCheck:
    """Outcome of one parameter set's check."""

    passed: bool
    failures: tuple[str, ...]
    """Why it failed, one line each; empty when it passed."""


def check_sets(
    residual_rms_nm: Mapping[str, Sequence[float]],
    torque_rms_nm: np.ndarray,
    joint_names: Sequence[str],
    violations: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, SetCheck]:
    """SetCheck of every set in `residual_rms_nm` against its "base" entry (which passes by definition).

    `violations` maps a set to its violated constraints (the physical set's), each a failure.
    """
    base = np.asarray(residual_rms_nm["base"], dtype=float)
    torque = np.asarray(torque_rms_nm, dtype=float)
    limit = WORSE_FACTOR * base + TORQUE_FRACTION * torque
    checks = {}
    for name, rms in residual_rms_nm.items():
        rms = np.asarray(rms, dtype=float)
        failures = [
            f"{name} parameters predict {joint} with {rms[j]:.4g} Nm RMS, the base parameters with {base[j]:.4g} Nm "
            f"(limit {limit[j]:.4g} Nm)"
            for j, joint in enumerate(joint_names)
            if name != "base" and not rms[j] <= limit[j]
        ]
        failures += [f"{name} constraint violated: {v}" for v in (violations or {}).get(name, ())]
        checks[name] = SetCheck(not failures, tuple(failures))
    return checks
