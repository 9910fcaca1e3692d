"""Every parameter set predicts data it was not fitted to: the evidence of the self-check (set_checks).

In: the regression's time folds (regression_stream: each fold's reduced [Yb τ] per joint, with the chosen Coulomb
laws), the base estimate (its columns and per-recording joint weights), the essential columns, and the physical
retrieval as a function of a reduced system. Out: per parameter set, each held-out block's squared torque error per
joint (HeldOut).

K-fold cross-validation over contiguous time blocks (Hastie et al. 2009, section 7.10): for each fold every set is
fitted on the other folds exactly as on the whole data (the same columns, weights and retrieval) and predicts the
fold. Periodic data are one averaged period, so their blocks are parts of it; a long log's blocks are parts of the
log. The essential set keeps the columns the whole data chose.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from robot_id_estimator.estimation import least_squares as estimation
from robot_id_estimator.physical.problem import RetrievalError
from robot_id_estimator.processing.reduction import JointBlocks, merge, weighted_rows
from robot_id_estimator.results.held_out import HeldOut

PhysicalOf = Callable[[estimation.ReducedSystem], np.ndarray]
"""The physical set's base values retrieved from a reduced system (RetrievalError when it cannot be)."""


def cross_validate(folds: Sequence[Sequence[JointBlocks]], joint_weights: Sequence[np.ndarray],
                   base_columns: np.ndarray, essential_columns: np.ndarray,
                   physical_of: PhysicalOf | None) -> HeldOut:
    """HeldOut of the base, essential and (with `physical_of`) physical sets: folds[i][f] is recording i's fold f,
    weighted by joint_weights[i] as in the estimate."""
    n_folds = len(folds[0])
    n_joints = folds[0][0].r_aug.shape[0]
    names = ("base", "essential") + (("physical",) if physical_of is not None else ())
    sq = {name: np.full((n_folds, n_joints), np.nan) for name in names}
    rows = np.zeros((n_folds, n_joints))
    notes = []
    for f in range(n_folds):
        training = [merge([fold for g, fold in enumerate(recording) if g != f]) for recording in folds]
        values, failure = _fitted(estimation.reduce_system(*weighted_rows(training, joint_weights)), base_columns,
                                  essential_columns, physical_of)
        if failure:
            notes.append(f"held-out block {f + 1}: {failure}")
        held = [recording[f] for recording in folds]
        rows[f] = sum(b.n_rows for b in held)
        for name, v in values.items():
            sq[name][f] = sum(b.residual_sq_nm2(v) for b in held) if np.isfinite(v).all() else np.nan
    return HeldOut(f"{n_folds}-fold cross-validation over time blocks", sq, rows, tuple(notes))


def predicted_blocks(folds: Sequence[Sequence[JointBlocks]], values: Mapping[str, np.ndarray], source: str) -> HeldOut:
    """HeldOut of sets fitted on other data (`values` per set) predicting recordings they were not fitted to, block by
    block: folds[i][f] is recording i's block f."""
    n_folds = len(folds[0])
    rows = np.array([sum(recording[f].n_rows for recording in folds) for f in range(n_folds)], dtype=float)
    sq = {name: np.array([sum(recording[f].residual_sq_nm2(v) for recording in folds) for f in range(n_folds)])
          for name, v in values.items()}
    return HeldOut(source, sq, rows)


def _fitted(system: estimation.ReducedSystem, base_columns: np.ndarray, essential_columns: np.ndarray,
            physical_of: PhysicalOf | None) -> tuple[dict[str, np.ndarray], str | None]:
    """Each set's base-parameter values fitted on `system` (zero where not estimated), and why the physical set
    could not be (None when it was or was not asked for)."""
    values = {}
    for name, columns in (("base", base_columns), ("essential", essential_columns)):
        values[name] = np.zeros(len(system.scale))
        try:
            values[name][columns] = estimation.fit_columns(system, columns).values
        except np.linalg.LinAlgError:  # the other blocks do not determine these columns
            values[name][:] = np.nan
    if physical_of is None:
        return values, None
    try:
        values["physical"] = physical_of(system)
    except RetrievalError as err:
        return values, f"physical parameters not retrieved from the other blocks ({err})"
    return values, None
