"""Every parameter set is checked on data it was not fitted to before anything is written, and the best is named:
the rule, its verdicts and how they are reached (a result's check_rule and checks).

In: each set's held-out errors (held_out.HeldOut), each joint's torque RMS, the physical set's violated constraints.
Out: per set a SetCheck, and the set that predicts held-out data best.

On the data it was fitted to, the base set is the least-squares optimum, so a rule on training residuals punishes
every set that trades training fit for generalisation, which is what physical consistency does. On held-out data
the base set has no such advantage; a set (essential, physical) fails on a joint only when it predicts the held-out
blocks clearly worse than the base set: worse by a margin that matters, and by more than the blocks' scatter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from robot_id_estimator.results.held_out import HeldOut

WORSE_FACTOR = 1.5
"""A set fails on a joint when its held-out RMS exceeds WORSE_FACTOR × the base set's (clearly worse: a set that
trades one joint's error for the others', as a physically consistent one does on data with effects outside the
model, is not failed for being a third worse on that joint while better on the rest) ..."""
TORQUE_FRACTION = 0.01
"""... plus TORQUE_FRACTION × the RMS of that joint's torque (so a joint that both sets predict far better than
anything that matters is not failed) ..."""
STANDARD_ERRORS = 2.0
"""... and the mean difference of the two sets' squared errors over the held-out blocks exceeds STANDARD_ERRORS ×
its standard error, estimated from the blocks' scatter (a paired comparison: what noise and the motion make of
the difference, so a set worse on one block and better on the others is not failed for it)."""

RULE = (f"a set fails on a joint when, on data it was not fitted to, its torque error RMS exceeds {WORSE_FACTOR:g} × "
        f"the base set's plus {100 * TORQUE_FRACTION:g} % of the joint's torque RMS and the mean difference of their "
        f"squared errors over the held-out blocks is more than {STANDARD_ERRORS:g} standard errors (the blocks' "
        "scatter); the physical set also fails when a constraint is violated")


@dataclass(frozen=True)
class SetCheck:
    """Outcome of one parameter set's check."""

    passed: bool
    failures: tuple[str, ...]
    """Why it failed, one line each; empty when it passed."""


def check_sets(held_out: HeldOut, torque_rms_nm: np.ndarray, joint_names: Sequence[str],
               violations: Mapping[str, Sequence[str]] | None = None) -> dict[str, SetCheck]:
    """SetCheck of every set in `held_out` against its "base" entry (which passes by definition).

    `violations` maps a set to its violated constraints (the physical set's), each a failure.
    """
    checks = {}
    for name in held_out.block_sq_nm2:
        failures = [] if name == "base" else _worse_joints(held_out, name, np.asarray(torque_rms_nm), joint_names)
        failures += [f"{name} constraint violated: {v}" for v in (violations or {}).get(name, ())]
        checks[name] = SetCheck(not failures, tuple(failures))
    return checks


def _worse_joints(held_out: HeldOut, name: str, torque_rms_nm: np.ndarray, joint_names: Sequence[str]) -> list[str]:
    """One failure per joint where `name` predicts the held-out blocks clearly worse than the base set (RULE)."""
    sq, base_sq = held_out.block_sq_nm2[name], held_out.block_sq_nm2["base"]
    blocks = np.isfinite(sq).all(axis=1) & np.isfinite(base_sq).all(axis=1)
    if not blocks.any():
        return [f"{name} parameters could not be fitted on any held-out split: {'; '.join(held_out.notes)}"]
    rms, base = held_out.rms_nm(name, blocks), held_out.rms_nm("base", blocks)
    limit = WORSE_FACTOR * base + TORQUE_FRACTION * torque_rms_nm
    rows = np.maximum(held_out.block_rows[blocks], 1)
    difference = (sq[blocks] - base_sq[blocks]) / rows
    mean = difference.mean(axis=0)
    standard_error = difference.std(axis=0, ddof=1) / np.sqrt(len(difference)) if len(difference) > 1 else 0.0
    worse = (rms > limit) & (mean > STANDARD_ERRORS * standard_error)
    return [f"{name} parameters predict {joint} on held-out data with {rms[j]:.4g} Nm RMS, the base parameters with "
            f"{base[j]:.4g} Nm (limit {limit[j]:.4g} Nm; worse on {int(np.sum(difference[:, j] > 0))} of "
            f"{len(difference)} blocks)"
            for j, joint in enumerate(joint_names) if worse[j]]


def best_set(held_out: HeldOut, checks: Mapping[str, SetCheck]) -> str:
    """The set that passed its check with the smallest held-out error summed over joints (base when none other)."""
    passed = [name for name in held_out.block_sq_nm2 if checks[name].passed
              and np.isfinite(held_out.total_rms_nm(name))]
    return min(passed, key=held_out.total_rms_nm, default="base")
