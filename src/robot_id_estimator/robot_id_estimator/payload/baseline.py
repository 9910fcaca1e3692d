"""The two-recording method's baseline: what the arm model misses on recordings of the same excitation without the
load, phase by phase over one period, so that it cancels from the loaded run's torque.

An arm model fitted to the baseline leaves a residual (friction outside its law, effects outside the model: on the
simulated Panda 1.2 Nm RMS on joint 4), and that residual is in the loaded run too; left in, it went into the load
(the CoM 5 mm off through the graph). The loaded run's torque minus the arm model on its own motion minus this
residual at the same phase subtracts the baseline's measured torque sample by sample, with the arm model correcting
only for how differently the arm tracked with the load (the simulated Panda's joint 7 by 28 mrad RMS with 1.7 kg).

In: the baseline recordings (periodic, the loaded run's excitation, pose and rate) and the arm model's torque side.
Out: BaselineResidual, which the loaded run's samples subtract at their phase (payload.samples).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from robot_id_estimator.processing.samples import ProcessedData, process
from robot_id_estimator.recordings.described_excitation import Excitation
from robot_id_estimator.recordings.recording import DataError, Recording
from robot_id_estimator.settings import ProcessingConfig

SAME_MOTION_FRACTION = 0.25
"""A joint of the loaded run may differ from the baseline by at most this fraction of its motion (RMS about its
mean; the simulated Panda's joint 7 tracked 4.5 % differently with a 1.7 kg load) ..."""
STILL_JOINT_RAD = 0.05
"""... where a joint that hardly moves counts as moving this much (RMS): its pose may differ by a quarter of it."""


@dataclass(frozen=True)
class BaselineResidual:
    """The arm model's residual on the baseline recordings, averaged over them: one period of samples."""

    q_rad: np.ndarray
    """(K, n) the baseline's averaged positions, which the loaded run's must follow."""
    tau_nm: np.ndarray
    """(K, n) measured minus model torque, both filtered alike."""
    noise_var_nm2: np.ndarray | None
    """(n,) variance of one sample of tau_nm (the measured torque's, averaged over periods and recordings); None:
    a recording of one period tells none."""
    sources: tuple[str, ...]
    excitation: Excitation | None
    """The excitation the baseline ran, where its bag says."""

    def at_phase_of(self, data: ProcessedData, recording: Recording) -> np.ndarray:
        """The residual at the samples of `data`, the processed `recording` (one averaged period of the same
        excitation); DataError when it is not that (module docstring)."""
        reference = " and ".join(self.sources)
        _require_same_excitation(self.excitation, recording, reference)
        _require_same_motion(self.q_rad, data, recording.source, reference)
        return self.tau_nm


def baseline_residual(recordings: Sequence[Recording], processing: ProcessingConfig,
                      model_torque_nm: Callable[[ProcessedData], np.ndarray]) -> BaselineResidual:
    """The residual `model_torque_nm` (the arm model's torque side of processed data) leaves on each baseline
    recording, averaged; the recordings must be periodic and of one excitation."""
    processed = [process(rec, processing) for rec in recordings]
    first = processed[0]
    for data, rec in zip(processed, recordings, strict=True):
        _require_same_excitation(recordings[0].excitation, rec, recordings[0].source)
        _require_same_motion(first.q_rad, data, rec.source, recordings[0].source)
    residuals = [data.tau_nm - model_torque_nm(data) for data in processed]
    variances = [None if data.noise_var_nm2 is None else data.noise_var_nm2 / data.n_periods for data in processed]
    noise_var = None if any(v is None for v in variances) else np.mean(variances, axis=0) / len(processed)
    return BaselineResidual(np.mean([data.q_rad for data in processed], axis=0), np.mean(residuals, axis=0),
                            noise_var, tuple(rec.source for rec in recordings), recordings[0].excitation)


def _require_same_excitation(excitation: Excitation | None, recording: Recording, reference: str) -> None:
    """DataError when both bags describe their excitation and the descriptions differ."""
    if excitation is None or recording.excitation is None:
        return
    differs = recording.excitation.differs_from(excitation)
    if differs:
        raise DataError(f"{recording.source} is not a run of the excitation of {reference}: it has {differs}; "
                        "record the baseline with the loaded run's excitation")


def _require_same_motion(q_ref_rad: np.ndarray, data: ProcessedData, source: str, reference: str) -> None:
    """DataError unless `data` is one averaged period of `q_ref_rad`'s motion, in phase (SAME_MOTION_FRACTION)."""
    if data.n_periods == 0:
        why = next((note for note in data.notes if "non-periodic" in note), "")
        raise DataError(f"{source}: the two-recording method compares one averaged period of each recording, and this "
                        f"one was processed as non-periodic{f' ({why})' if why else ''}: record 2 or more periods of "
                        "the excitation (the first after a load goes on can be a transient)")
    if len(data.q_rad) != len(q_ref_rad):
        raise DataError(f"{source}: {len(data.q_rad)} samples per period against {len(q_ref_rad)} in {reference}: "
                        "another excitation (its period) or another sampling rate; record the loaded run and its "
                        "baseline with the same excitation at the same rate")
    scale_rad = np.maximum(np.std(q_ref_rad, axis=0), STILL_JOINT_RAD)
    off = np.sqrt(np.mean((data.q_rad - q_ref_rad) ** 2, axis=0)) / scale_rad
    worst = int(np.argmax(off))
    if off[worst] > SAME_MOTION_FRACTION:
        shift = _best_shift(q_ref_rad, data.q_rad)
        phase = (f"; it matches best {abs(shift)} samples {'later' if shift > 0 else 'earlier'}: cut both at the "
                 "same phase of the excitation" if shift else "")
        raise DataError(f"{source} is not the motion of {reference}: {data.joint_names[worst]} differs by "
                        f"{off[worst] * scale_rad[worst]:.3g} rad RMS, {100 * off[worst]:.0f} % of its motion (at most "
                        f"{100 * SAME_MOTION_FRACTION:.0f} %){phase}; record the baseline with the loaded run's "
                        "excitation and pose")


def _best_shift(q_ref_rad: np.ndarray, q_rad: np.ndarray) -> int:
    """The circular shift in samples (positive: `q_rad` later) that best matches `q_rad` to `q_ref_rad`."""
    spectra = [np.fft.rfft(x - x.mean(axis=0), axis=0) for x in (q_rad, q_ref_rad)]
    correlation = np.fft.irfft(np.sum(spectra[0] * np.conj(spectra[1]), axis=1), n=len(q_rad))
    shift = int(np.argmax(correlation))
    return shift if shift <= len(q_rad) // 2 else shift - len(q_rad)
