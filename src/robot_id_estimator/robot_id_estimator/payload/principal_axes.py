"""How well the data determine the load's principal axes: each axis's direction and KUKA's A B C over draws of the
least-squares distribution (estimate.DRAWS), and which axes the data leave open. Where two principal moments lie
within their uncertainty of each other (AXIS_SIGMAS, or within what the arm model's error could move them), only the
plane of their two axes is determined; where all three are that close, no axis is. The inertia about the CoM is
determined whatever its axes: Franka's load_inertia, a full matrix, holds it, and KUKA's A B C with JX JY JZ give it
too, but then A B C say nothing of how the load is turned (in an independent trial a 2.3 kg box with two moments
16 % apart came out at A B C 28.8 / -14.9 / 7.3 deg against the true 40.1 / -17.2 / 22.9 deg, its moments within
4.3 %).

Eigenvectors come in any order and sign: each draw's axes are matched to the load's (the permutation and signs that
align them best) before the angles between them are taken.

In: the load's inertia about its CoM, the drawn ones. Out: PrincipalAxes.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from robot_id_estimator.payload.exports import abc_deg, principal_frame

AXIS_SIGMAS = 3.0
"""Two principal moments closer than this many standard deviations of their difference do not determine their axes.
A determined axis is then within about 10 deg (one standard deviation): on test_payload's iiwa14 motion the spread
fell about as 32 deg over the gap in standard deviations (a 1.5 kg load with moments 10, 11.6, 14 g m²: gap 2.9,
axes 12 deg, the axes 14 deg off as a rotation; as 3 kg, gap 4.3, axes 7 deg, 4 deg off)."""
KUKA_AXES = ("X", "Y", "Z")
"""KUKA's principal axes, ascending moments (exports.principal_frame): JX about X, the smallest."""
_PERMUTATIONS = np.array(list(itertools.permutations(range(3))))


@dataclass(frozen=True)
class PrincipalAxes:
    rotation: np.ndarray
    """(3, 3) the load's principal axes as columns, ascending moments, right-handed: KUKA's X Y Z."""
    spread_deg: np.ndarray
    """(3,) RMS angle between each axis and the drawn loads' matched axis: a standard deviation of its direction."""
    rotation_spread_deg: float
    """RMS angle of the rotation from the load's principal axes to the drawn loads' (matched)."""
    abc_spread_deg: np.ndarray
    """(3,) RMS difference of KUKA's A, B, C from the drawn loads' (matched, wrapped to ±180 deg)."""
    gap_sigmas: np.ndarray
    """(2,) the gaps between moments 1-2 and 2-3 in standard deviations of their drawn differences."""
    unresolved: tuple[bool, bool]
    """Whether moments 1-2 and 2-3 lie within their uncertainty of each other (their axes then not determined)."""

    @property
    def determined(self) -> tuple[bool, bool, bool]:
        """Per axis (ascending moments): whether the data determine its direction."""
        low, high = self.unresolved
        return (not low, not (low or high), not high)

    @property
    def all_determined(self) -> bool:
        return not any(self.unresolved)


def principal_axes(inertia_kg_m2: np.ndarray, drawn_kg_m2: np.ndarray, moments_bound_kg_m2: np.ndarray | None = None,
                   rigid_body: bool = True) -> PrincipalAxes:
    """The axes of `inertia_kg_m2` (about the CoM) and their spread over `drawn_kg_m2` ((N, 3, 3), drawn from its
    distribution; none: nothing determined). `moments_bound_kg_m2`: (3,) how far the arm model's error could move each
    moment (arm_error); a load that is no rigid body determines no axis."""
    moments, rotation = principal_frame(inertia_kg_m2)
    if len(drawn_kg_m2) == 0:
        inf = np.full(3, np.inf)
        return PrincipalAxes(rotation, inf, float("inf"), inf, np.zeros(2), (True, True))
    matched, cos = _matched_axes(rotation, np.linalg.eigh(drawn_kg_m2)[1])
    relative = np.einsum("ji,njk->nik", rotation, matched)
    angle_rad = np.arccos(np.clip((np.trace(relative, axis1=1, axis2=2) - 1.0) / 2.0, -1.0, 1.0))
    abc_error_deg = (abc_deg(matched) - abc_deg(rotation) + 180.0) % 360.0 - 180.0
    # the moments about the load's own axes in each draw: their differences are the gaps to first order, in no order
    along = np.einsum("ji,njk,ki->ni", rotation, drawn_kg_m2, rotation)
    gaps = np.diff(moments)
    gap_sigmas = gaps / np.maximum(np.diff(along, axis=1).std(axis=0), 1e-300)
    unresolved = gap_sigmas < AXIS_SIGMAS
    if moments_bound_kg_m2 is not None:
        unresolved |= gaps <= moments_bound_kg_m2[:-1] + moments_bound_kg_m2[1:]
    if not rigid_body:
        unresolved[:] = True
    return PrincipalAxes(rotation, _rms(np.rad2deg(np.arccos(np.clip(cos, 0.0, 1.0)))),
                         float(np.rad2deg(_rms(angle_rad))), _rms(abc_error_deg), gap_sigmas,
                         (bool(unresolved[0]), bool(unresolved[1])))


def _matched_axes(rotation: np.ndarray, drawn_axes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each draw's axes ((N, 3, 3), columns) in the order and with the signs that align them best with `rotation`'s
    columns, a rotation each; and (N, 3) the cosine of each axis's angle to the load's (as lines)."""
    dots = np.einsum("ji,njk->nik", rotation, drawn_axes)  # [n, i, k]: the load's axis i · the draw's axis k
    scores = np.abs(dots)[:, np.arange(3), _PERMUTATIONS].sum(axis=2)  # (N, 6 permutations)
    best = _PERMUTATIONS[scores.argmax(axis=1)]
    matched = np.take_along_axis(drawn_axes, best[:, None, :], axis=2)
    cos = np.einsum("ji,nji->ni", rotation, matched)
    matched = matched * np.where(cos < 0.0, -1.0, 1.0)[:, None, :]
    cos = np.abs(cos)
    left = np.flatnonzero(np.linalg.det(matched) < 0.0)  # a poor match: its least aligned axis turned round
    matched[left, :, cos[left].argmin(axis=1)] *= -1.0
    return matched, cos


def _rms(x: np.ndarray) -> np.ndarray:
    return np.sqrt(np.mean(x**2, axis=0))


def axes_summary(axes: PrincipalAxes) -> str:
    """One line: which principal axes the data determine, how well, and KUKA's A B C with their spread."""
    abc = (" ".join(f"{x:.1f}" for x in abc_deg(axes.rotation)) + " ± "
           + " ".join(f"{x:.2g}" for x in axes.abc_spread_deg) + " deg")
    if axes.all_determined:
        return (f"principal axes determined, within {axes.rotation_spread_deg:.2g} deg as a rotation (each axis "
                + " ".join(f"{x:.2g}" for x in axes.spread_deg) + f" deg; one standard deviation): KUKA's A B C {abc}")
    return f"{_open_axes(axes)}: KUKA's A B C {abc}, not determined"


def axes_warning(axes: PrincipalAxes) -> str:
    """The warning of a run whose principal axes the data leave open, with what to do ('' when all are determined)."""
    if axes.all_determined:
        return ""
    return (f"{_open_axes(axes)}; the inertia about the CoM is determined whatever the axes: Franka's "
            "load_inertia holds it as a full matrix, and KUKA's JX JY JZ with A B C as written give it too, so enter "
            "them as written, but A B C do not tell how the load is turned: do not check them against a CAD model, "
            "and where A B C must match one take the CAD's")


def _open_axes(axes: PrincipalAxes) -> str:
    if all(axes.unresolved):
        return "no principal axis is determined (the three moments lie within their uncertainty of each other)"
    pair, kept = ((1, 2), 3) if axes.unresolved[0] else ((2, 3), 1)
    return (f"principal axes {pair[0]} and {pair[1]} (ascending moments) are not determined (their moments lie within "
            f"their uncertainty of each other: only the plane of the two is; axis {kept} within "
            f"{axes.spread_deg[kept - 1]:.2g} deg)")


def kuka_meaning(axes: PrincipalAxes, undetermined_moments: tuple[int, ...]) -> str:
    """Which of KUKA's JX JY JZ and A B C the data determine, in words."""
    determined = " ".join(f"J{axis}" for k, axis in enumerate(KUKA_AXES) if k not in undetermined_moments)
    left = " ".join(f"J{KUKA_AXES[k]}" for k in undetermined_moments)
    moments = (f"{determined} determined" if not left else f"{left} not determined (undetermined_principal_moments)"
               if not determined else f"{determined} determined, {left} not (undetermined_principal_moments)")
    if axes.all_determined:
        return f"{moments}; A B C determined, each within " + " ".join(f"{x:.2g}" for x in axes.abc_spread_deg) + " deg"
    kept = [KUKA_AXES[k] for k, d in enumerate(axes.determined) if d]
    open_axes = " and ".join(KUKA_AXES[k] for k, d in enumerate(axes.determined) if not d)
    which = (f"the {kept[0]} axis is determined, the {open_axes} axes are not (only their plane)" if kept else
             "no axis is determined")
    return f"{moments}; {which}: A B C not determined, but with JX JY JZ they give the identified inertia about the CoM"
