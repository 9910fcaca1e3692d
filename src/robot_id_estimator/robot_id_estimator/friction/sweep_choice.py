"""The friction sweep's law against the excitation's own, on data neither was fitted to: a swept joint keeps the
Stribeck curve fitted to its sweep (Luo et al. 2024, eq. 7) unless the identification without it, each joint's
Coulomb law chosen from the excitation (coulomb_law_choice), predicts that joint's held-out torque clearly better.
In: the two identifications' held-out base-set errors per joint. Out: the joints whose sweep is not used, and why."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robot_id_estimator.friction.coulomb_law_choice import SMOOTH_GAIN


def sweeps_predicting_worse(coefficients: np.ndarray, with_sweep_rms_nm: np.ndarray,
                            without_rms_nm: np.ndarray) -> np.ndarray:
    """(n,) the swept joints (a fitted row of `coefficients`) whose held-out error without the sweep is at least
    SMOOTH_GAIN lower than with it: the sweep's curve does not describe the joint's friction during the excitation
    (a law eq. 7 cannot follow, such as an off-centre sigmoid, or friction that changed since the sweep)."""
    swept = ~np.isnan(coefficients).any(axis=1)
    return swept & (np.asarray(without_rms_nm) < (1.0 - SMOOTH_GAIN) * np.asarray(with_sweep_rms_nm))


def dropped_notes(joint_names: Sequence[str], dropped: np.ndarray, with_sweep_rms_nm: np.ndarray,
                  without_rms_nm: np.ndarray) -> list[str]:
    """One note per joint whose sweep is not used, with both held-out errors."""
    return [f"{joint_names[j]}: the friction sweep's Stribeck fit is not used: with it the base set predicts "
            f"held-out data with {with_sweep_rms_nm[j]:.4g} Nm RMS, with the Coulomb law chosen from the excitation "
            f"{without_rms_nm[j]:.4g} Nm" for j in np.flatnonzero(dropped)]
