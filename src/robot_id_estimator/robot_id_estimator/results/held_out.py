"""Each parameter set's prediction of data it was not fitted to, as a result (validation.held_out makes it)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class HeldOut:
    """Per parameter set, the squared torque error of each held-out block per joint; NaN for a block where the
    set could not be fitted."""

    source: str
    """How the blocks were held out, e.g. '5-fold cross-validation over time blocks'."""
    block_sq_nm2: dict[str, np.ndarray]
    """(F, n) per set."""
    block_rows: np.ndarray
    """(F, n) equations of each joint in each block."""
    notes: tuple[str, ...] = ()

    def rms_nm(self, name: str, blocks: np.ndarray | None = None) -> np.ndarray:
        """(n,) RMS of the set's held-out error over `blocks` (default: every block it was fitted for)."""
        sq = self.block_sq_nm2[name]
        blocks = np.isfinite(sq).all(axis=1) if blocks is None else blocks
        return np.sqrt(sq[blocks].sum(axis=0) / np.maximum(self.block_rows[blocks].sum(axis=0), 1))

    def total_rms_nm(self, name: str) -> float:
        """The sum over joints of the set's held-out RMS (NaN when no block has it)."""
        rms = self.rms_nm(name)
        return float(rms.sum()) if np.isfinite(self.block_sq_nm2[name]).all(axis=1).any() else float("nan")

    @property
    def rms_by_set_nm(self) -> dict[str, np.ndarray]:
        """Each set's held-out RMS per joint (rms_nm of every set)."""
        return {name: self.rms_nm(name) for name in self.block_sq_nm2}

    JSON_DERIVED = ("rms_by_set_nm",)
