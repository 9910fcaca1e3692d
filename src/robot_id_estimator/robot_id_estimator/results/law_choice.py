"""How each joint's Coulomb law was chosen, as a result (friction.coulomb_law_choice makes it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robot_id_model.coulomb_laws import CoulombLaw


@dataclass(frozen=True)
class CoulombLawChoice:
    """Per joint, the held-out torque error of every candidate law and the one chosen."""

    candidates: tuple[CoulombLaw, ...]
    held_out_rms_nm: np.ndarray
    """(n, m) RMS of the torque each fold's fit predicts on the held-out fold; NaN where not tried."""
    chosen: tuple[CoulombLaw, ...]
    """Each joint's law."""
    interval_rad_s: np.ndarray
    """(n, 2) the range of the chosen law's scale (CoulombLaw.scale: v_s [rad/s], x_c [rad] of presliding) within
    INTERVAL_TOLERANCE of the best held-out error (NaN for a law without shape: sign)."""
    determined: tuple[bool, ...] = ()
    """Per joint, whether the data determine its law (coulomb_law_choice.DETERMINED_T); () in files written before
    it was recorded."""
    validation: str = ""
    """The validation recording(s) the laws were judged on; '' when judged by cross-validation over the recordings'
    own time blocks."""

    def describe(self, joint_names: Sequence[str]) -> list[str]:
        """One line per joint: the law chosen, its held-out error, and the best of each family."""
        lines = []
        for j, name in enumerate(joint_names):
            errors = self.held_out_rms_nm[j]
            if np.isnan(errors[1:]).all():
                continue
            best = {}
            for k, law in enumerate(self.candidates):
                if np.isfinite(errors[k]) and (law.family not in best or errors[k] < errors[best[law.family]]):
                    best[law.family] = k
            chosen = self.chosen[j]
            others = ", ".join(f"{self.candidates[k].formula()} {errors[k]:.4g} Nm"
                               for family, k in best.items() if family != chosen.family)
            low, high = self.interval_rad_s[j]
            scale = chosen.shape[0] if chosen.shape else None
            shape = f" ({scale.symbol} {low:.3g}–{high:.3g} {scale.unit})" if scale is not None else ""
            undetermined = ("; the law near rest is not determined by these data (the laws predict the held-out "
                            "blocks alike within their scatter): a validation motion with slow reversals "
                            "(--validation-data) or a friction sweep (--friction-sweep) determines it"
                            if self.determined and not self.determined[j] else "")
            lines.append(f"{name}: {chosen.formula()}{shape}, held-out error "
                         f"{errors[self.candidates.index(chosen)]:.4g} Nm; best of the others: {others}{undetermined}")
        return lines
