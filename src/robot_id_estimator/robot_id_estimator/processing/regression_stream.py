"""The filtered base regressor of a recording, built and reduced chunk by chunk so that memory does not grow
with the recording (reduction.JointBlocks).

Each chunk of CHUNK_SAMPLES samples is computed on a window that reaches OVERLAP further on both sides, and
filtered there exactly like the whole log (model_side.torque_side): the robot's first-order filter from the
window's start, then the zero-phase Butterworth. Both filters forget where they started within the overlap: it
holds the samples after which their impulse responses have fallen below FORGET of their peak, so a chunk's
samples equal the whole log's to that relative accuracy (Gustafsson 1996 discusses the edge transients of
forward-backward filtering). Windows that touch an end of the log keep it, with the filters' own edge handling.
Periodic data (one averaged period, filtered in the frequency domain) are one window. Chunks are independent,
so long logs run on CHUNK_WORKERS processes.

A stream reduces each of `n_folds` contiguous time folds of the recording on its own (the recording's reduction is
their merge), so that the parameter sets can be fitted on some folds and held out on the others
(validation.held_out). Asked for Coulomb-law candidates (coulomb_law_choice), it also reduces the folds on
choice_samples with each joint's candidate Coulomb columns beside the regressor, filtered alike, so that any
choice of laws can be fitted and held out afterwards.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from functools import cache

import numpy as np
import scipy.signal

from robot_id_cli.command_line import progress_bar
from robot_id_estimator.processing.model_side import torque_side
from robot_id_estimator.processing.reduction import JointBlocks, merge, reduce_joints
from robot_id_estimator.processing.samples import ProcessedData
from robot_id_estimator.settings import ProcessingConfig
from robot_id_model.coulomb_laws import CoulombLaw
from robot_id_model.regressor import regressor
from robot_id_model.robot_model import RobotModel

CHUNK_SAMPLES = 16_384
"""Samples reduced per chunk: at about 25 kB per sample while a chunk is built, a few hundred MB per worker."""

FORGET = 1e-13
"""Relative size of an impulse response after the overlap: the chunks' filtered regressor equals the whole
log's to this accuracy."""

CHOICE_RATE_HZ = 250.0
"""The candidates' columns are built at no higher a rate than this (every step-th sample): after the torque
low-pass (6 Hz) they hold nothing faster, and at 1 kHz filtering and reducing some 260 of them per sample would be
most of an identification's time."""

CHOICE_SECONDS = 16.0
"""...and on at most this much of the middle of every fold (80 s in all; a 10-minute log's every sample would take
minutes). The chosen laws' columns are then built for every sample (regression_data.restreamed)."""

CHUNK_WORKERS = 2
"""Processes that build chunks when a recording has more than one (memory grows with this number)."""

TRACE_POINTS = 20_000
"""Samples per recording kept for the torque traces (report.plot_torques draws about as many)."""


@dataclass(frozen=True)
class StreamedRecording:
    """One recording's reduced regression and what later stages need of its regressor."""

    blocks: JointBlocks
    nominal_nm: np.ndarray
    """(K, n) Yb·πb of the URDF model, for the plausibility check of the torque."""
    trace_index: np.ndarray
    """Samples kept for the traces: every ⌈K / TRACE_POINTS⌉-th."""
    trace_yb: np.ndarray
    """(T, n, b) filtered regressor at `trace_index`."""
    folds: tuple[JointBlocks, ...] = ()
    """Per time fold, the JointBlocks of [Yb_j τ_j]."""
    candidate_folds: tuple[JointBlocks, ...] = ()
    """Per time fold, the JointBlocks of [Yb_j C_j τ_j] on the samples choice_samples picks, C_j the joint's
    candidate Coulomb columns (none asked for: empty)."""


@cache
def _butterworth_length(fs_hz: float, cutoff_hz: float, order: int) -> int:
    sos = scipy.signal.butter(order, cutoff_hz, fs=fs_hz, output="sos")
    impulse = np.zeros(math.ceil(100.0 * fs_hz / cutoff_hz))
    impulse[0] = 1.0
    h = np.abs(scipy.signal.sosfilt(sos, impulse))
    return int(np.nonzero(h > FORGET * h.max())[0][-1]) + 1


def overlap_samples(fs_hz: float, processing: ProcessingConfig, time_constant_s: float) -> tuple[int, int]:
    """Samples a window reaches before and after its chunk: the Butterworth's length on both sides (its backward
    pass starts on the right), plus the robot filter's on the left, where it starts."""
    butter = _butterworth_length(fs_hz, processing.torque_cutoff_hz, processing.filter_order)
    robot = math.ceil(-math.log(FORGET) * time_constant_s * fs_hz)
    return robot + butter, butter


def chunk_windows(k: int, chunk: int, before: int, after: int) -> list[tuple[int, int, int, int]]:
    """(window start, chunk start, chunk stop, window stop) covering k samples."""
    return [(max(0, s - before), s, min(k, s + chunk), min(k, s + chunk + after)) for s in range(0, k, chunk)]


def _window(data: ProcessedData, start: int, stop: int) -> ProcessedData:
    return replace(data, t_s=data.t_s[start:stop], q_rad=data.q_rad[start:stop], dq_rad_s=data.dq_rad_s[start:stop],
                   ddq_rad_s2=data.ddq_rad_s2[start:stop], tau_nm=data.tau_nm[start:stop], notes=(), warnings=())


def _chunk(job: tuple) -> tuple[list[JointBlocks], np.ndarray, np.ndarray, list[JointBlocks] | None]:
    """Reduce one chunk: per fold, its filtered regressor (each joint's samples where it moves at least
    min_speed_rad_s); Yb·π_nominal, the trace rows, and per fold [Yb C τ] on the chunk's choice samples (None
    without candidates or such samples)."""
    (robot, independent, window, first, last, tau_nm, nominal, trace_rows, processing, time_constant_s,
     min_speed_rad_s, candidates, fold_ids, n_folds, choice, step) = job
    raw = regressor(robot, window.q_rad, window.dq_rad_s, window.ddq_rad_s2)[..., independent]
    yb = torque_side(raw, window, processing, time_constant_s)[first:last]
    moving = np.abs(window.dq_rad_s[first:last]) >= min_speed_rad_s
    folds = [reduce_joints(yb, tau_nm, moving & (fold_ids == f)[:, None]) for f in range(n_folds)]
    extended = None
    if candidates and choice.any():
        index = np.arange((first + np.flatnonzero(choice)[0]) % step, len(window.t_s), step)  # the choice's grid
        sub = replace(window, t_s=window.t_s[index], q_rad=window.q_rad[index], dq_rad_s=window.dq_rad_s[index],
                      ddq_rad_s2=window.ddq_rad_s2[index], tau_nm=window.tau_nm[index])
        laws = np.stack([law.signal(sub.dq_rad_s, sub.q_rad) for law in candidates], axis=-1)
        kept = (index >= first) & (index < last)
        kept[kept] = choice[index[kept] - first]
        rows = index[kept] - first
        columns = np.concatenate([yb[rows], torque_side(laws, sub, processing, time_constant_s)[kept]], axis=2)
        extended = [reduce_joints(columns, tau_nm[rows], moving[rows] & (fold_ids[rows] == f)[:, None])
                    for f in range(n_folds)]
    return folds, yb @ nominal, yb[trace_rows], extended


def choice_samples(k: int, n_folds: int, rate_hz: float) -> tuple[np.ndarray, int]:
    """(K,) the samples the Coulomb-law choice is made on, and their step: every step-th sample (no faster than
    CHOICE_RATE_HZ) of the CHOICE_SECONDS in the middle of every fold (all of a short recording). Fixed by the
    recording alone, not by its chunks."""
    step = max(1, int(rate_hz / CHOICE_RATE_HZ))
    half = int(0.5 * CHOICE_SECONDS * rate_hz)
    middles = ((np.arange(n_folds) + 0.5) * k / n_folds).astype(int)
    index = np.arange(k)
    near = np.zeros(k, dtype=bool)
    for middle in middles:
        near |= np.abs(index - middle) < half
    return near & (index % step == 0), step


def stream_recording(
    robot: RobotModel,
    independent: np.ndarray,
    data: ProcessedData,
    tau_nm: np.ndarray,
    nominal: np.ndarray,
    processing: ProcessingConfig,
    time_constant_s: float,
    min_speed_rad_s: float | np.ndarray = 0.0,
    candidates: Sequence[CoulombLaw] = (),
    n_folds: int = 1,
) -> StreamedRecording:
    """The reduced regression of one processed recording: its base regressor (columns `independent`) filtered
    like the torque, reduced with the torque to explain `tau_nm` (K, n), each joint's equations only where it
    moves at least min_speed_rad_s (one for all joints, or (n,) one each); reduced per each of `n_folds`
    contiguous time folds, and again extended by the Coulomb-law `candidates`' columns on the choice_samples."""
    k = len(data.t_s)
    stride = math.ceil(k / TRACE_POINTS)
    if data.n_periods == 0:
        before, after = overlap_samples(1.0 / float(data.t_s[1] - data.t_s[0]), processing, time_constant_s)
        windows = chunk_windows(k, CHUNK_SAMPLES, before, after)
    else:
        windows = [(0, 0, k, k)]
    fold_ids = np.arange(k) * n_folds // k
    choice, step = choice_samples(k, n_folds, 1.0 / float(data.t_s[1] - data.t_s[0]))
    jobs = [(robot, independent, _window(data, w0, w1), c0 - w0, c1 - w0, tau_nm[c0:c1], nominal,
             np.arange(-c0 % stride, c1 - c0, stride), processing, time_constant_s, min_speed_rad_s,
             tuple(candidates), fold_ids[c0:c1], n_folds, choice[c0:c1], step)
            for w0, c0, c1, w1 in windows]
    bar = {"total": len(jobs), "description": "regressor chunks", "unit": "chunk"}
    if len(jobs) > 1 and (os.cpu_count() or 1) > 1:
        with ProcessPoolExecutor(max_workers=min(CHUNK_WORKERS, os.cpu_count() or 1)) as pool:
            results = list(progress_bar(pool.map(_chunk, jobs), **bar))
    else:
        results = [_chunk(job) for job in progress_bar(jobs, **bar)]
    folds = tuple(merge([r[0][f] for r in results]) for f in range(n_folds))
    extended = [r[3] for r in results if r[3] is not None]
    return StreamedRecording(
        blocks=merge(folds),
        nominal_nm=np.concatenate([r[1] for r in results]),
        trace_index=np.arange(0, k, stride),
        trace_yb=np.concatenate([r[2] for r in results]),
        folds=folds,
        candidate_folds=tuple(merge([e[f] for e in extended]) for f in range(n_folds)) if extended else (),
    )
