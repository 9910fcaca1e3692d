"""From a cleaned recording to the (q, dq, ddq, tau) samples that enter the regressor.

Periodic data are averaged over whole periods (Xu et al. 2020, eq. 11), the torque noise variance is taken from the
period-to-period scatter (Wu et al. 2012, section 4.1), velocities and accelerations come from frequency-domain
differentiation of the averaged positions at the excited harmonics (Xu et al. 2020, section II-C) and the averaged
torque passes a zero-phase Butterworth filter (order 4, 6 Hz in Xu et al. 2020, IV-B). Other data are filtered with
a zero-phase Butterworth filter and differentiated by central differences (Hayat et al. 2015, 3.2.1), each derivative
filtered again (as for the reference figures of the Gaz et al. Panda log: 10 Hz on dq and ddq).

Before averaging, the periods are checked (period_check.check_periods): transient periods at either end (a
ramp-in or ramp-out) are dropped, and periods that still disagree are processed as non-periodic data, with a
warning either way; so is a recording with a non_periodic_reason (a bag whose periods the recorder all flagged).

The torque filter is not applied to the motion: to keep τ = Y·π consistent (Coulomb friction sign(dq) has
content above the cutoff), filter the regressor columns with the same function (they accept (K, n, p)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from robot_id_estimator.processing.period_check import check_periods, detect_period, wrap_jump
from robot_id_estimator.recordings.cleaning import resample
from robot_id_estimator.recordings.recording import DataError, Recording
from robot_id_estimator.settings import ProcessingConfig

DRIFT_TOL_SAMPLES = 0.01
"""Largest accumulated misalignment over all periods, in samples, tolerated before resampling so that a
period holds a whole number of samples."""

MIN_PERIOD_SAMPLES = 4
"""Fewest samples per period: the first harmonic must lie below the Nyquist bin."""

MIN_KEPT = 2
"""Samples that must remain after trimming the ends."""
DEFAULT_PROCESSING = ProcessingConfig()
"""The processing settings when none are given."""
EDGE_CUTOFF_PERIODS = 2.0  # non-periodic data's edges trimmed by default, in periods of the lowest cutoff (edge_s)


@dataclass(frozen=True)
class ProcessedData:
    """Samples ready for the regressor, and what was done to get them."""

    joint_names: tuple[str, ...]
    t_s: np.ndarray
    q_rad: np.ndarray
    dq_rad_s: np.ndarray
    ddq_rad_s2: np.ndarray
    tau_nm: np.ndarray
    noise_var_nm2: np.ndarray | None
    """(n,) variance of one torque sample per joint from the period-to-period scatter (Wu et al. 2012); the
    averaged torque has n_periods times less. None when not periodic."""
    n_periods: int
    """Periods averaged; 1 = one period used as it is; 0 = non-periodic processing."""
    notes: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    """What the user must see on the console (transient periods dropped, periods that disagree); also in notes."""


def average_periods(x: np.ndarray, samples_per_period: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean over M whole periods (Xu et al. 2020, eq. 11) and the per-sample variance across periods (ddof 1).

    `x` is (M·samples_per_period, ...) with M >= 2; both results have shape (samples_per_period, ...).
    """
    periods = _split_periods(x, samples_per_period)
    return periods.mean(axis=0), periods.var(axis=0, ddof=1)


def period_noise_variance(x: np.ndarray, samples_per_period: int) -> np.ndarray:
    """Noise variance of one sample of each column of `x` from the scatter of M >= 2 periods (Wu et al. 2012, 4.1):
    σ² = Σ_k Σ_m (x_m(k) − x̄(k))² / (K·(M − 1)). Shape x.shape[1:]."""
    return average_periods(x, samples_per_period)[1].mean(axis=0)


def _split_periods(x: np.ndarray, samples_per_period: int) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    if samples_per_period < 1 or len(x) % samples_per_period:
        raise ValueError(f"{len(x)} samples are not a whole number of periods of {samples_per_period} samples")
    m = len(x) // samples_per_period
    if m < 2:
        raise ValueError(f"averaging over periods needs at least 2 periods, got {m}")
    return x.reshape(m, samples_per_period, *x.shape[1:])


def fourier_derivatives(q_rad: np.ndarray, dt_s: float, harmonics: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Velocity and acceleration of one period of positions (K, ...) by frequency-domain differentiation
    (Xu et al. 2020, II-C): DFT, keep only the bins `harmonics` (integer multiples of 1/(K·dt)), multiply by jω and
    −ω², inverse DFT. Exact for positions made of those harmonics."""
    q_rad = np.asarray(q_rad, dtype=float)
    k = len(q_rad)
    bins = np.asarray(harmonics)
    if bins.size and (np.any(bins != np.round(bins)) or bins.min() < 1 or 2 * bins.max() >= k):
        raise ValueError(f"harmonics must be whole numbers from 1 to below K/2 = {k / 2:g}, got {bins}")
    spectrum = np.fft.rfft(q_rad, axis=0)
    shape = (-1,) + (1,) * (q_rad.ndim - 1)
    window = np.zeros(len(spectrum))
    window[bins.astype(int)] = 1.0
    omega = (2.0 * np.pi / (k * dt_s)) * np.arange(len(spectrum))
    kept = spectrum * window.reshape(shape)
    dq = np.fft.irfft(kept * (1j * omega).reshape(shape), n=k, axis=0)
    ddq = np.fft.irfft(kept * (-(omega**2)).reshape(shape), n=k, axis=0)
    return dq, ddq


def _butterworth(fs_hz: float, cutoff_hz: float, order: int) -> np.ndarray:
    if not 0.0 < cutoff_hz < 0.5 * fs_hz:
        raise ValueError(f"cutoff {cutoff_hz:g} Hz must lie between 0 and the Nyquist frequency {0.5 * fs_hz:g} Hz "
                         f"of {fs_hz:g} Hz data")
    import scipy.signal  # here, not at the top: the command lines start without scipy

    return scipy.signal.butter(order, cutoff_hz, fs=fs_hz, output="sos")


def min_filter_samples(order: int) -> int:
    """Fewest samples zero_phase_lowpass accepts for a Butterworth filter of `order` (scipy's edge padding)."""
    n_sections = math.ceil(order / 2)
    return 3 * (2 * n_sections + 1 - (order % 2)) + 1


def zero_phase_lowpass(x: np.ndarray, fs_hz: float, cutoff_hz: float, order: int = 4) -> np.ndarray:
    """Butterworth low-pass run forwards and backwards along axis 0 (no lag; gain |H|²; Xu et al. 2020, Hayat et
    al. 2015)."""
    import scipy.signal  # here, not at the top: the command lines start without scipy

    x = np.asarray(x, dtype=float)
    if len(x) < min_filter_samples(order):
        raise ValueError(f"{len(x)} samples are too few for a zero-phase order-{order} Butterworth filter "
                         f"(needs {min_filter_samples(order)})")
    return scipy.signal.sosfiltfilt(_butterworth(fs_hz, cutoff_hz, order), x, axis=0)


def zero_phase_lowpass_periodic(x: np.ndarray, fs_hz: float, cutoff_hz: float, order: int = 4) -> np.ndarray:
    """zero_phase_lowpass of one period of a periodic signal, without edge effects: the steady state of the
    forward-backward filter, applied as the gain |H(f)|² on the signal's DFT bins."""
    import scipy.signal  # here, not at the top: the command lines start without scipy

    x = np.asarray(x, dtype=float)
    freqs = np.fft.rfftfreq(len(x), 1.0 / fs_hz)
    _, response = scipy.signal.freqz_sos(_butterworth(fs_hz, cutoff_hz, order), worN=freqs, fs=fs_hz)
    gain = (np.abs(response) ** 2).reshape((-1,) + (1,) * (x.ndim - 1))
    return np.fft.irfft(np.fft.rfft(x, axis=0) * gain, n=len(x), axis=0)


def process(rec: Recording, config: ProcessingConfig = DEFAULT_PROCESSING) -> ProcessedData:
    """Turn a cleaned recording into regressor samples: periodic processing when the period is known (or
    detected) and the data hold at least one whole period, non-periodic processing otherwise."""
    notes = list(rec.repairs)
    k = len(rec.t_s)
    if k < 2:
        raise DataError(f"{rec.source}: {k} sample(s) cannot be processed")
    dt_s = (rec.t_s[-1] - rec.t_s[0]) / (k - 1)
    period_s = rec.period_s
    if config.non_periodic:
        ignored = f" (period of {period_s:g} s ignored)" if period_s is not None else ""
        notes.append(f"non_periodic set: processed as non-periodic data{ignored}")
        return _process_nonperiodic(rec, dt_s, config, notes)
    if rec.non_periodic_reason is not None:
        return _as_nonperiodic(rec, dt_s, config, notes, rec.non_periodic_reason)
    if period_s is None:
        period_s = detect_period(rec.t_s, rec.q_rad)
        if period_s is not None:
            notes.append(f"detected a period of {period_s:.6g} s in the positions")
    if period_s is not None and (k + 0.5) * dt_s >= period_s:
        return _process_periodic(rec, period_s, dt_s, config, notes)
    if period_s is not None:
        return _as_nonperiodic(rec, dt_s, config, notes, f"the recording ({k * dt_s:.4g} s) is shorter than one "
                               f"period ({period_s:g} s): processed as non-periodic data")
    return _process_nonperiodic(rec, dt_s, config, notes)


def _check_decimation(source: str, fs_hz: float, content_hz: float, decimation: int) -> None:
    if decimation > 1 and fs_hz / decimation <= 2.0 * content_hz:
        raise DataError(f"{source}: decimation by {decimation} leaves {fs_hz / decimation:g} Hz, not above twice "
                        f"the {content_hz:g} Hz the processed signals contain")


def _process_periodic(
    rec: Recording, period_s: float, dt_s: float, config: ProcessingConfig, notes: list[str]
) -> ProcessedData:
    k, notes_before = len(rec.t_s), len(notes)
    exact = period_s / dt_s
    per_period = round(exact)
    if per_period < MIN_PERIOD_SAMPLES:
        raise DataError(f"{rec.source}: a period of {period_s:g} s holds only {exact:.3g} samples at "
                        f"{1.0 / dt_s:g} Hz")
    n_periods = math.floor((k + 0.5) / exact)
    rec_dt_s = dt_s
    q, tau, dt_s = _whole_periods(rec, period_s, dt_s, n_periods, per_period, notes)
    fs_hz, first, warnings, agreement = 1.0 / dt_s, 0, (), []
    if n_periods >= 2:  # drop transient end periods; periods that disagree are not averaged
        check = check_periods(_split_periods(q, per_period), _split_periods(tau, per_period), period_s,
                              rec.t_s[0], rec.joint_names)
        if not check.consistent:
            return _as_nonperiodic(rec, rec_dt_s, config, notes[:notes_before],
                                   f"{check.reason}: processed as non-periodic data, not averaged")
        first, n_periods, warnings, agreement = check.first, check.stop - check.first, check.dropped, [check.reason]
        q, tau = (x[first * per_period:check.stop * per_period] for x in (q, tau))
        notes += warnings

    if n_periods >= 2:
        q_mean, _ = average_periods(q, per_period)
        tau_mean, _ = average_periods(tau, per_period)
        noise = period_noise_variance(tau, per_period)
        notes.append(f"averaged {n_periods} periods of {period_s:g} s ({per_period} samples each); torque noise "
                     f"std per joint {np.array2string(np.sqrt(noise), precision=3)} Nm")
    else:
        jump = wrap_jump(q, rec.joint_names)
        if jump is not None:  # a single period cannot be checked against others, only against itself
            return _as_nonperiodic(rec, rec_dt_s, config, notes[:notes_before],
                                   f"{jump}: processed as non-periodic data")
        q_mean, tau_mean, noise = q, tau, None
        notes.append(f"only one {'kept' if agreement else 'whole'} period of {period_s:g} s: used without "
                     "averaging, no noise estimate")
    notes += agreement

    highest, why = _highest_harmonic(rec, period_s, per_period, config)
    dq, ddq = fourier_derivatives(q_mean, dt_s, np.arange(1, highest + 1))
    notes.append(f"velocities and accelerations from harmonics 1–{highest} of {1.0 / period_s:.4g} Hz ({why})")
    if rec.dq_rad_s is not None:
        notes.append("logged velocities not used: frequency-domain derivatives of the averaged positions instead")
    try:
        tau_f = zero_phase_lowpass_periodic(tau_mean, fs_hz, config.torque_cutoff_hz, config.filter_order)
    except ValueError as err:
        raise DataError(f"{rec.source}: {err}") from None
    notes.append(f"torque: zero-phase Butterworth order {config.filter_order} at {config.torque_cutoff_hz:g} Hz "
                 "(periodic)")
    _check_decimation(rec.source, fs_hz, max(config.torque_cutoff_hz, highest / period_s), config.decimation)
    t = rec.t_s[0] + dt_s * (first * per_period + np.arange(per_period))
    return _finish(rec, t, q_mean, dq, ddq, tau_f, noise, n_periods, config.decimation, notes, warnings)


def _as_nonperiodic(rec: Recording, dt_s: float, config: ProcessingConfig, notes: list[str],
                    warning: str) -> ProcessedData:
    """Non-periodic processing of data that were meant to be periodic, with the reason as a warning."""
    return replace(_process_nonperiodic(rec, dt_s, config, [*notes, warning]), warnings=(warning,))


def _whole_periods(rec: Recording, period_s: float, dt_s: float, n_periods: int, per_period: int,
                   notes: list[str]) -> tuple[np.ndarray, np.ndarray, float]:
    """q and tau of the whole periods, resampled when the period is not a whole number of samples (within
    DRIFT_TOL_SAMPLES over all periods), and the sample time they then have."""
    k = len(rec.t_s)
    signals = {"q": rec.q_rad, "tau": rec.tau_nm}
    if abs(period_s / dt_s - per_period) * n_periods > DRIFT_TOL_SAMPLES:
        dt_s = period_s / per_period
        grid = rec.t_s[0] + dt_s * np.arange(n_periods * per_period)
        signals = {key: resample(rec.t_s, x, grid, smooth=key == "q") for key, x in signals.items()}
        notes.append(f"resampled at {1.0 / dt_s:.6g} Hz so that a period of {period_s:.6g} s holds a whole "
                     f"{per_period} samples")
    left_over_s = (rec.t_s[-1] - rec.t_s[0]) + (rec.t_s[-1] - rec.t_s[0]) / (k - 1) - n_periods * period_s
    if left_over_s > 0.5 * dt_s:
        notes.append(f"dropped the last {left_over_s:.4g} s after {n_periods} whole periods")
    used = n_periods * per_period
    return signals["q"][:used], signals["tau"][:used], dt_s


def _highest_harmonic(rec: Recording, period_s: float, per_period: int, config: ProcessingConfig) -> tuple[int, str]:
    """The highest multiple of 1/period_s to differentiate with, and why: the configured frequency, the
    trajectory description's harmonics, or the motion cutoff; below the Nyquist frequency."""
    if config.max_harmonic_hz is not None:
        highest, why = math.floor(config.max_harmonic_hz * period_s + 1e-9), f"up to {config.max_harmonic_hz:g} Hz"
    elif rec.harmonics:
        highest, why = rec.harmonics, "of the trajectory description"
    else:
        highest, why = math.floor(config.motion_cutoff_hz * period_s + 1e-9), f"up to {config.motion_cutoff_hz:g} Hz"
    nyquist_bin = (per_period - 1) // 2
    if highest > nyquist_bin:
        highest, why = nyquist_bin, f"{why}, capped below the Nyquist frequency"
    if highest < 1:
        raise DataError(f"{rec.source}: no harmonic of 1/{period_s:g} s {why} to differentiate")
    return highest, why


def _process_nonperiodic(rec: Recording, dt_s: float, config: ProcessingConfig, notes: list[str]) -> ProcessedData:
    k = len(rec.t_s)
    needed = min_filter_samples(config.filter_order)
    if k < needed:
        raise DataError(f"{rec.source}: {k} samples are too few for the zero-phase order-{config.filter_order} "
                        f"Butterworth filter (needs {needed})")
    fs_hz = 1.0 / dt_s
    order = config.filter_order

    def lowpass(x: np.ndarray, cutoff_hz: float) -> np.ndarray:
        try:
            return zero_phase_lowpass(x, fs_hz, cutoff_hz, order)
        except ValueError as err:
            raise DataError(f"{rec.source}: {err}") from None

    cutoff = config.motion_cutoff_hz
    q = lowpass(rec.q_rad, cutoff)
    if rec.dq_rad_s is not None:
        dq, motion = lowpass(rec.dq_rad_s, cutoff), "logged velocities"
    else:
        dq, motion = lowpass(np.gradient(q, dt_s, axis=0), cutoff), "positions, velocities by central differences"
    if rec.ddq_rad_s2 is not None:
        ddq, motion = lowpass(rec.ddq_rad_s2, cutoff), f"{motion} and logged accelerations"
    else:
        ddq, motion = lowpass(np.gradient(dq, dt_s, axis=0), cutoff), f"{motion}, accelerations by central differences"
    tau = lowpass(rec.tau_nm, config.torque_cutoff_hz)
    notes.append(f"non-periodic: zero-phase Butterworth order {order} at {cutoff:g} Hz on the {motion} (after "
                 f"each differentiation); at {config.torque_cutoff_hz:g} Hz on the torque")
    t = rec.t_s
    trim_s = edge_s(config) if config.trim_s is None else config.trim_s
    trim = round(trim_s * fs_hz) if config.trim_s is not None or k - 2 * round(trim_s * fs_hz) >= MIN_KEPT else 0
    if trim:  # data too short to lose their default edges keep them: the data checks say how much is needed
        if k - 2 * trim < MIN_KEPT:
            raise DataError(f"{rec.source}: trimming {trim_s:g} s at both ends (the filters' edges) leaves too "
                            f"little of {k * dt_s:.4g} s")
        t, q, dq, ddq, tau = (x[trim:k - trim] for x in (t, q, dq, ddq, tau))
        notes.append(f"trimmed {trim_s:.3g} s ({trim} samples) at both ends")
    _check_decimation(rec.source, fs_hz, max(config.torque_cutoff_hz, config.motion_cutoff_hz), config.decimation)
    return _finish(rec, t, q, dq, ddq, tau, None, 0, config.decimation, notes)


def edge_s(config: ProcessingConfig) -> float:
    """Non-periodic data's edges, where zero-phase filters and central differences lack neighbours: 0.33 s at 6 Hz
    (an iiwa14 motion at 500 Hz was predicted 0.5-3 Nm off in its first and last 0.1 s, within the noise from 0.2 s)."""
    return EDGE_CUTOFF_PERIODS / min(config.torque_cutoff_hz, config.motion_cutoff_hz)


def _finish(rec, t, q, dq, ddq, tau, noise, n_periods, decimation, notes, warnings=()) -> ProcessedData:
    if decimation > 1:
        t, q, dq, ddq, tau = (x[::decimation] for x in (t, q, dq, ddq, tau))
        notes.append(f"decimated by {decimation} to {len(t)} samples")
    return ProcessedData(
        joint_names=rec.joint_names,
        t_s=np.asarray(t, dtype=float),
        q_rad=q,
        dq_rad_s=dq,
        ddq_rad_s2=ddq,
        tau_nm=tau,
        noise_var_nm2=noise,
        n_periods=n_periods,
        notes=tuple(notes),
        warnings=tuple(warnings),
    )

