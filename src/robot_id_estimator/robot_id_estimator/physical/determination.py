"""Which standard parameters the physical retrieval's objective determines, and what holds the others.

The objective of Xu et al. 2020, eq. (15), sees π only through the target parameters β_t = E_t·π (the
essential or base parameters). A standard parameter whose column of E_t is zero enters no target parameter:
the data say nothing about it, and without a hold any value inside its bounds is optimal (found on the Gaz
et al. Panda log: an eliminated viscous friction came back at 29 Nm·s/rad). Such parameters are held:

- friction terms at zero, the value the target set gives them (an eliminated or unidentified term is zero
  there), fixed by their bounds;
- inertial parameters at the URDF value, by the retrieval's regulariser, the only term of the objective
  that depends on them (pseudo-inertia constraints may move them from it; the value reached is reported).

A parameter whose unit vector lies in the row space of E_t is determined by the data on its own; the others
are determined only in combination with other parameters, and the regulariser picks the split.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from robot_id_estimator.physical.problem import PhysicalBounds
from robot_id_model.parameters import friction_columns
from robot_id_model.robot_model import RobotModel

DETERMINED = "determined"
COMBINED = "combined"
HELD = "held"

STRUCTURAL_TOL = 1e-9
"""Entries of E_t below this fraction of its largest entry are structural zeros (round-off of the QR
regrouping), and a unit vector whose squared distance to the row space of E_t is below this lies in it."""


@dataclass(frozen=True)
class Determination:
    """Per standard parameter: how the data fix it, and the value a held one is held at."""

    status: tuple[str, ...]
    """DETERMINED, COMBINED or HELD, in π order."""
    held_values: np.ndarray
    """Value each HELD parameter is held at (NaN for the others): zero friction, URDF inertials."""

    def held(self) -> np.ndarray:
        return np.array([s == HELD for s in self.status])


def determination(robot: RobotModel, target_from_pi: np.ndarray, pi_nominal: np.ndarray) -> Determination:
    """Classify every standard parameter by the target map E_t (rows: target parameters, columns: π)."""
    e = np.asarray(target_from_pi, dtype=float)
    e = np.where(np.abs(e) > STRUCTURAL_TOL * max(np.abs(e).max(), 1e-300), e, 0.0)
    seen = np.any(e != 0.0, axis=0)
    # squared distance of each unit vector e_k to the row space of E_t: ‖(I − P)e_k‖² = 1 − ‖P e_k‖²
    u, s, _ = np.linalg.svd(e.T, full_matrices=False)
    basis = u[:, s > STRUCTURAL_TOL * max(s.max(initial=0.0), 1e-300)]
    outside_sq = 1.0 - np.sum(basis**2, axis=1)
    status = tuple(
        HELD if not seen[k] else DETERMINED if outside_sq[k] < STRUCTURAL_TOL else COMBINED for k in range(e.shape[1])
    )
    held_values = np.where(seen, np.nan, pi_nominal)
    held_values[friction_columns(robot).ravel()] = np.where(seen[friction_columns(robot).ravel()], np.nan, 0.0)
    return Determination(status, held_values)


def hold_friction(robot: RobotModel, bounds: PhysicalBounds, det: Determination) -> PhysicalBounds:
    """`bounds` with every held friction term fixed at its held value (lower = upper)."""
    columns = friction_columns(robot)
    held = det.held()[columns]
    values = det.held_values[columns]
    return dataclasses.replace(
        bounds,
        friction_lower=np.where(held, values, bounds.friction_lower),
        friction_upper=np.where(held, values, bounds.friction_upper),
    )
