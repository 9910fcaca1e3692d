"""Period averaging, noise variance, frequency-domain derivatives, filters, period detection and process()."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal
from estimator_synthetic import make_recording, relative_error

from robot_id_estimator.processing.samples import (
    average_periods,
    detect_period,
    fourier_derivatives,
    min_filter_samples,
    period_noise_variance,
    process,
    zero_phase_lowpass,
    zero_phase_lowpass_periodic,
)
from robot_id_estimator.recordings.recording import DataError
from robot_id_estimator.settings import ProcessingConfig


def _fourier(t: np.ndarray, period_s: float, harmonics, seed: int = 0, n: int = 3):
    """Positions, velocities and accelerations of a random finite Fourier series (Xu et al. 2020, eq. 8)."""
    rng = np.random.default_rng(seed)
    harmonics = np.asarray(harmonics)
    a, b = rng.normal(0.0, 0.3, (2, n, len(harmonics)))
    w = 2.0 * np.pi * harmonics / period_s
    s, c = np.sin(np.outer(t, w)), np.cos(np.outer(t, w))
    q = (s / w) @ a.T - (c / w) @ b.T + rng.uniform(-1, 1, n)
    dq = c @ a.T + s @ b.T
    ddq = (-s * w) @ a.T + (c * w) @ b.T
    return q, dq, ddq


def _torque(q, dq, ddq):
    return 2.0 * ddq + 0.5 * dq + 9.0 * np.sin(q)


# ------------------------------------------------------------------------------------------------ periods


def test_averaging_reduces_noise_variance_by_the_number_of_periods():
    rng = np.random.default_rng(0)
    m, per_period = 16, 5000
    signal = np.sin(np.linspace(0, 2 * np.pi, per_period, endpoint=False))[:, None] * [1.0, 3.0]
    noise = rng.normal(0.0, 1.0, (m * per_period, 2))
    mean, variance = average_periods(np.tile(signal, (m, 1)) + noise, per_period)
    residual_var = np.var(mean - signal, axis=0)
    # the variance of per_period samples of N(0, 1/m) has a relative standard deviation sqrt(2/per_period) = 2 %
    np.testing.assert_allclose(residual_var, 1.0 / m, rtol=5 * np.sqrt(2 / per_period))
    assert mean.shape == variance.shape == (per_period, 2)
    np.testing.assert_allclose(variance.mean(axis=0), 1.0, rtol=0.05)


def test_noise_variance_from_period_scatter_matches_the_true_variance():
    rng = np.random.default_rng(1)
    sigma = np.array([0.05, 0.5, 2.0])
    m, per_period = 10, 2000
    t = np.arange(m * per_period) / 500.0
    q, dq, ddq = _fourier(t, per_period / 500.0, [1, 2, 3])
    measured = _torque(q, dq, ddq) + rng.normal(0.0, sigma, (len(t), 3))
    estimate = period_noise_variance(measured, per_period)
    np.testing.assert_allclose(estimate, sigma**2, rtol=0.2)
    np.testing.assert_allclose(estimate, sigma**2, rtol=5 * np.sqrt(2 / (per_period * (m - 1))))


def test_averaging_refuses_partial_and_single_periods():
    with pytest.raises(ValueError, match="not a whole number of periods of 100 samples"):
        average_periods(np.zeros((250, 2)), 100)
    with pytest.raises(ValueError, match="at least 2 periods, got 1"):
        period_noise_variance(np.zeros((100, 2)), 100)


# ------------------------------------------------------------------------------------------------ derivatives


@pytest.mark.parametrize("harmonics", [[1, 2, 3, 4, 5], [2, 7, 11]])
def test_fourier_derivatives_are_exact_for_a_band_limited_series(harmonics):
    period_s, per_period = 3.0, 600
    t = np.arange(per_period) * period_s / per_period
    q, dq, ddq = _fourier(t, period_s, harmonics, seed=4, n=4)
    got_dq, got_ddq = fourier_derivatives(q, period_s / per_period, np.array(harmonics))
    assert relative_error(got_dq, dq) < 1e-9
    assert relative_error(got_ddq, ddq) < 1e-9
    stacked, _ = fourier_derivatives(np.stack([q, 2 * q], axis=-1), period_s / per_period, np.array(harmonics))
    np.testing.assert_allclose(stacked[..., 1], 2 * got_dq, atol=1e-12)


def test_fourier_derivatives_refuse_bins_at_or_above_nyquist():
    with pytest.raises(ValueError, match="below K/2 = 50"):
        fourier_derivatives(np.zeros((100, 1)), 0.01, np.array([1, 50]))
    with pytest.raises(ValueError, match="whole numbers"):
        fourier_derivatives(np.zeros((100, 1)), 0.01, np.array([1.5]))


# ------------------------------------------------------------------------------------------------ filters


def test_zero_phase_butterworth_passes_a_slow_sine_without_lag():
    fs, f = 500.0, 1.0
    t = np.arange(5000) / fs
    x = np.column_stack([np.sin(2 * np.pi * f * t), np.sin(2 * np.pi * 30.0 * t)])
    y = zero_phase_lowpass(x, fs, 6.0, order=4)
    middle = slice(1000, 4000)  # whole cycles away from the ends
    basis = np.column_stack([np.sin(2 * np.pi * f * t), np.cos(2 * np.pi * f * t)])[middle]
    (in_phase, quadrature), *_ = np.linalg.lstsq(basis, y[middle, 0], rcond=None)
    assert abs(np.hypot(in_phase, quadrature) - 1.0) < 0.01
    assert abs(np.arctan2(quadrature, in_phase)) < 1e-4
    causal = scipy.signal.sosfilt(scipy.signal.butter(4, 6.0, fs=fs, output="sos"), x[:, 0])
    lag, *_ = np.linalg.lstsq(basis, causal[middle], rcond=None)
    assert abs(np.arctan2(lag[1], lag[0])) > 0.2, "the one-way filter lags, the two-way one does not"
    assert np.max(np.abs(y[middle, 1])) < 1e-3, "30 Hz is removed"


def test_zero_phase_butterworth_refuses_bad_cutoffs_and_short_signals():
    with pytest.raises(ValueError, match="between 0 and the Nyquist frequency 5 Hz"):
        zero_phase_lowpass(np.zeros(100), 10.0, 6.0)
    needed = min_filter_samples(4)
    zero_phase_lowpass(np.zeros(needed), 100.0, 6.0)
    with pytest.raises(ValueError, match=f"{needed - 1} samples are too few"):
        zero_phase_lowpass(np.zeros(needed - 1), 100.0, 6.0)
    for order in (1, 2, 3, 5):  # scipy's own padding rule agrees with min_filter_samples
        zero_phase_lowpass(np.zeros(min_filter_samples(order)), 100.0, 6.0, order)
        with pytest.raises(ValueError):
            scipy.signal.sosfiltfilt(scipy.signal.butter(order, 6.0, fs=100.0, output="sos"),
                                     np.zeros(min_filter_samples(order) - 1))


def test_periodic_zero_phase_filter_is_the_steady_state_of_filtfilt():
    rng = np.random.default_rng(2)
    fs, per_period = 200.0, 400
    period = rng.normal(size=(per_period, 2))
    tiled = zero_phase_lowpass(np.tile(period, (7, 1)), fs, 6.0)
    np.testing.assert_allclose(zero_phase_lowpass_periodic(period, fs, 6.0), tiled[3 * per_period:4 * per_period],
                               atol=1e-10)


# ------------------------------------------------------------------------------------------------ period detection


@pytest.mark.parametrize("period_s", [7.3, 2.0])
def test_detect_period_finds_the_period_of_a_periodic_signal(period_s):
    rng = np.random.default_rng(3)
    t = np.arange(int(4.5 * period_s * 200)) / 200.0
    q, _, _ = _fourier(t, period_s, [1, 2, 3, 4], seed=5)
    found = detect_period(t, q + rng.normal(0.0, 1e-3, q.shape))
    assert found == pytest.approx(period_s, rel=0.01)
    assert found == pytest.approx(period_s, rel=1e-4)


def test_detect_period_is_not_fooled_by_a_strong_second_harmonic():
    t = np.arange(3000) / 100.0
    w = 2 * np.pi / 6.0
    q = np.column_stack([np.sin(2 * w * t) + 0.1 * np.sin(w * t), np.cos(2 * w * t)])
    assert detect_period(t, q) == pytest.approx(6.0, rel=1e-3)


def test_detect_period_returns_none_when_not_clearly_periodic():
    rng = np.random.default_rng(4)
    t = np.arange(4000) / 100.0
    walk = np.cumsum(rng.normal(size=(4000, 2)), axis=0)
    assert detect_period(t, walk) is None
    chirp = np.sin(2 * np.pi * (0.1 + 0.02 * t) * t)[:, None]
    assert detect_period(t, chirp) is None
    q, _, _ = _fourier(t, 25.0, [1, 2])  # 40 s of a 25 s period: less than two repeats
    assert detect_period(t, q) is None
    assert detect_period(t, np.ones((4000, 2))) is None


# ------------------------------------------------------------------------------------------------ process


def _periodic_run(period_s, fs, n_periods, harmonics, sigma_tau=0.3, sigma_q=1e-4, seed=6):
    rng = np.random.default_rng(seed)
    t = np.arange(round(n_periods * period_s * fs)) / fs
    q, dq, ddq = _fourier(t, period_s, harmonics, seed=seed)
    tau = _torque(q, dq, ddq)
    noisy_q = q + rng.normal(0.0, sigma_q, q.shape)
    noisy_tau = tau + rng.normal(0.0, sigma_tau, tau.shape)
    return t, noisy_q, noisy_tau


def test_process_periodic_data_averages_differentiates_and_filters():
    period_s, fs, m, sigma = 4.0, 250.0, 10, 0.3
    t, q, tau = _periodic_run(period_s, fs, m, [1, 2, 3, 4, 5], sigma_tau=sigma)
    out = process(make_recording(t, q, tau, period_s=period_s, harmonics=5, repairs=("dropped 2 duplicate rows",)))
    assert out.n_periods == m and len(out.t_s) == 1000
    assert out.notes[0] == "dropped 2 duplicate rows"
    assert "averaged 10 periods of 4 s (1000 samples each)" in out.notes[1]
    q_true, dq_true, ddq_true = _fourier(out.t_s, period_s, [1, 2, 3, 4, 5], seed=6)
    assert relative_error(out.q_rad, q_true) < 1e-4
    assert relative_error(out.dq_rad_s, dq_true) < 1e-4
    assert relative_error(out.ddq_rad_s2, ddq_true) < 1e-3
    # torque: noise averaged (σ/√M) and filtered, with the 6 Hz filter passing the ≤ 1.25 Hz motion
    residual = out.tau_nm - _torque(q_true, dq_true, ddq_true)
    assert np.sqrt(np.mean(residual**2)) < 0.3 * sigma / np.sqrt(m)
    np.testing.assert_allclose(out.noise_var_nm2, sigma**2, rtol=0.1)


def test_process_resamples_when_a_period_is_not_a_whole_number_of_samples():
    period_s, fs = 2.0037, 500.0
    t, q, tau = _periodic_run(period_s, fs, 6.5, [1, 2, 3], sigma_tau=0.0, sigma_q=0.0)
    out = process(make_recording(t, q, tau, period_s=period_s, harmonics=3))
    assert "resampled at 500.075 Hz so that a period of 2.0037 s holds a whole 1002 samples" in out.notes
    assert "dropped the last 1.002 s after 6 whole periods" in out.notes
    assert out.n_periods == 6 and len(out.t_s) == 1002
    np.testing.assert_allclose(np.diff(out.t_s), period_s / 1002, rtol=1e-12)
    q_true, dq_true, ddq_true = _fourier(out.t_s, period_s, [1, 2, 3], seed=6)
    assert relative_error(out.q_rad, q_true) < 1e-9
    assert relative_error(out.dq_rad_s, dq_true) < 1e-8
    assert relative_error(out.ddq_rad_s2, ddq_true) < 1e-8


def test_process_uses_a_single_period_without_averaging_and_says_so():
    t, q, tau = _periodic_run(4.0, 250.0, 1.3, [1, 2, 3])
    out = process(make_recording(t, q, tau, period_s=4.0, harmonics=3))
    assert out.n_periods == 1 and out.noise_var_nm2 is None and len(out.t_s) == 1000
    assert any("only one whole period of 4 s: used without averaging, no noise estimate" in n for n in out.notes)


def test_process_shorter_than_one_period_falls_back_to_non_periodic():
    t, q, tau = _periodic_run(4.0, 250.0, 0.8, [1, 2, 3])
    out = process(make_recording(t, q, tau, period_s=4.0))
    assert out.n_periods == 0 and out.noise_var_nm2 is None
    assert any("shorter than one period (4 s): processed as non-periodic" in n for n in out.notes)


def test_process_detects_an_undeclared_period():
    t, q, tau = _periodic_run(3.0, 200.0, 5, [1, 2, 3])
    out = process(make_recording(t, q, tau))
    assert out.n_periods == 5
    assert any(n.startswith("detected a period of 3") for n in out.notes)
    assert any("harmonics 1–30 of 0.3333 Hz (up to 10 Hz)" in n for n in out.notes)


def test_process_non_periodic_data_filters_and_differentiates():
    rng = np.random.default_rng(7)
    fs = 1000.0
    t = np.arange(8000) / fs
    w = np.array([0.9, 1.7, 2.9])
    q_true = np.sin(w * t[:, None] + 0.3)
    dq_true, ddq_true = w * np.cos(w * t[:, None] + 0.3), -(w**2) * np.sin(w * t[:, None] + 0.3)
    tau_true = _torque(q_true, dq_true, ddq_true)
    rec = make_recording(t, q_true + rng.normal(0, 1e-5, q_true.shape), tau_true + rng.normal(0, 0.2, (8000, 3)))
    out = process(rec, ProcessingConfig(trim_s=0.5, decimation=4))
    assert out.n_periods == 0 and out.noise_var_nm2 is None
    assert len(out.t_s) == 7000 // 4 and out.t_s[0] == 0.5
    q_ref, dq_ref, ddq_ref, tau_ref = (x[500:7500:4] for x in (q_true, dq_true, ddq_true, tau_true))
    assert relative_error(out.q_rad, q_ref) < 1e-4
    assert relative_error(out.dq_rad_s, dq_ref) < 1e-3
    assert relative_error(out.ddq_rad_s2, ddq_ref) < 0.02
    assert np.sqrt(np.mean((out.tau_nm - tau_ref) ** 2)) < 0.05
    assert out.notes[-2:] == ("trimmed 0.5 s (500 samples) at both ends", "decimated by 4 to 1750 samples")

    logged = process(make_recording(t, rec.q_rad, rec.tau_nm, dq_rad_s=dq_true + rng.normal(0, 1e-3, (8000, 3))),
                     ProcessingConfig(trim_s=0.5))
    assert "logged velocities" in logged.notes[-2]
    assert relative_error(logged.dq_rad_s, dq_true[500:7500]) < 1e-3
    assert relative_error(logged.ddq_rad_s2, ddq_true[500:7500]) < 0.02


def test_process_refuses_data_it_cannot_filter():
    t = np.arange(10) / 100.0
    with pytest.raises(DataError, match="10 samples are too few for the zero-phase order-4 Butterworth"):
        process(make_recording(t, np.zeros((10, 2)), np.zeros((10, 2))))
    t = np.arange(1000) / 10.0
    with pytest.raises(DataError, match="cutoff 6 Hz must lie between 0 and the Nyquist frequency 5 Hz"):
        process(make_recording(t, np.cumsum(np.ones((1000, 2)), axis=0), np.zeros((1000, 2))),
                ProcessingConfig(motion_cutoff_hz=1.0))
    t = np.arange(2000) / 100.0
    with pytest.raises(DataError, match=r"decimation by 10 leaves 10 Hz, not above twice the 10 Hz"):
        process(make_recording(t, np.sin(t)[:, None] * t[:, None], np.zeros((2000, 1))),
                ProcessingConfig(decimation=10))


def test_process_refuses_periodic_data_it_cannot_filter():
    t = np.arange(200) / 10.0
    q = np.sin(2 * np.pi * t / 4.0)[:, None]
    with pytest.raises(DataError, match="cutoff 6 Hz must lie between 0 and the Nyquist frequency 5 Hz"):
        process(make_recording(t, q, q, period_s=4.0, harmonics=1))
    with pytest.raises(DataError, match=r"a period of 0\.2 s holds only 2 samples at 10 Hz"):
        process(make_recording(t, q, q, period_s=0.2))


def test_processing_config_is_validated():
    with pytest.raises(ValueError, match="torque_cutoff_hz = -1"):
        ProcessingConfig(torque_cutoff_hz=-1.0)
    with pytest.raises(ValueError, match="decimation = 0 must be >= 1"):
        ProcessingConfig(decimation=0)
