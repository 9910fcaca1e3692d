"""Transient end periods are dropped and periods that disagree are not averaged (period_check, process())."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.signal
from estimator_synthetic import make_recording, relative_error

from robot_id_estimator.processing.period_check import check_periods
from robot_id_estimator.processing.samples import average_periods, edge_s, period_noise_variance, process
from robot_id_estimator.settings import ProcessingConfig

PERIOD_S, FS_HZ = 4.0, 250.0
PER_PERIOD = round(PERIOD_S * FS_HZ)
SIGMA_Q_RAD, SIGMA_TAU_NM = 1e-4, 0.3
OFFSET_RAD = np.array([0.3, -0.5, 1.0])


def _oscillation(t_s: np.ndarray) -> np.ndarray:
    """(K, 3) zero-mean positions about OFFSET_RAD: harmonics 1–3 of 1/PERIOD_S with fixed amplitudes."""
    rng = np.random.default_rng(10)
    amplitude_rad, phase = rng.uniform(0.2, 0.5, (3, 3)), rng.uniform(0.0, 2.0 * np.pi, (3, 3))  # (joint, harmonic)
    w = 2.0 * np.pi * np.arange(1, 4) / PERIOD_S
    return (amplitude_rad * np.sin(t_s[:, None, None] * w + phase)).sum(axis=2)


def _torque(q_rad: np.ndarray) -> np.ndarray:
    return 9.0 * np.sin(q_rad) + 3.0 * q_rad


def _run(n_periods: int, envelope=None, noise: bool = True):
    """Time, true positions, measured positions and measured torque of `n_periods` periods; the oscillation
    is scaled by `envelope(t)` (a ramp-in or ramp-out) when given."""
    t = np.arange(n_periods * PER_PERIOD) / FS_HZ
    scale = 1.0 if envelope is None else envelope(t)[:, None]
    q = OFFSET_RAD + scale * _oscillation(t)
    rng = np.random.default_rng(0)
    sigma_q, sigma_tau = (SIGMA_Q_RAD, SIGMA_TAU_NM) if noise else (0.0, 0.0)
    return t, q, q + rng.normal(0.0, sigma_q, q.shape), _torque(q) + rng.normal(0.0, sigma_tau, q.shape)


def _ramp_in(t_s: np.ndarray) -> np.ndarray:
    return np.clip(t_s / PERIOD_S, 0.0, 1.0)


def _periods(x: np.ndarray) -> np.ndarray:
    return x.reshape(-1, PER_PERIOD, x.shape[1])


# ------------------------------------------------------------------------------------------------ periods that agree


def test_consistent_periods_are_all_kept_and_averaged_as_before():
    t, _, q, tau = _run(6)
    out = process(make_recording(t, q, tau, period_s=PERIOD_S, harmonics=3))
    assert out.n_periods == 6 and out.t_s[0] == 0.0 and out.warnings == ()
    np.testing.assert_array_equal(out.q_rad, average_periods(q, PER_PERIOD)[0])
    np.testing.assert_array_equal(out.noise_var_nm2, period_noise_variance(tau, PER_PERIOD))
    assert any(n.startswith("the 6 periods of 4 s agree within noise") for n in out.notes)
    check = check_periods(_periods(q), _periods(tau), PERIOD_S)
    assert (check.first, check.stop, check.consistent, check.dropped) == (0, 6, True, ())
    assert check.q_distance_rad.shape == check.tau_distance_nm.shape == (6, 3)
    # the distances are the noise: about σ per sample for positions and torque
    np.testing.assert_allclose(check.q_distance_rad, SIGMA_Q_RAD, rtol=0.3)
    np.testing.assert_allclose(check.tau_distance_nm, SIGMA_TAU_NM, rtol=0.3)


@pytest.mark.parametrize("n_periods", [2, 3, 7])
def test_noise_free_data_are_never_flagged_and_still_joints_decide_nothing(n_periods):
    t, q, _, tau = _run(n_periods, noise=False)
    # a fourth joint held still with a servo jitter that differs from period to period, without torque
    jitter = np.random.default_rng(3).normal(0.0, 1e-3, len(t)) * np.repeat(np.arange(n_periods) % 2, PER_PERIOD)
    q, tau = np.column_stack([q, 0.2 + jitter]), np.column_stack([tau, np.zeros(len(t))])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no division by the still joint's zero motion or torque
        check = check_periods(_periods(q), _periods(tau), PERIOD_S)
    assert (check.first, check.stop, check.consistent) == (0, n_periods, True)
    out = process(make_recording(t, q, tau, period_s=PERIOD_S))
    assert out.n_periods == n_periods and out.warnings == ()


def test_resampled_noise_free_data_are_not_flagged():
    period_s, fs_hz = 2.0037, 500.0  # not a whole number of samples: process() resamples before the check
    t = np.arange(round(6.5 * period_s * fs_hz)) / fs_hz
    q = OFFSET_RAD + _oscillation(t * PERIOD_S / period_s)
    out = process(make_recording(t, q, _torque(q), period_s=period_s))
    assert out.n_periods == 6 and out.warnings == ()
    assert relative_error(out.q_rad, OFFSET_RAD + _oscillation(out.t_s * PERIOD_S / period_s)) < 1e-8


# ------------------------------------------------------------------------------------------------ transient ends


def test_a_ramp_in_first_period_is_dropped_and_the_rest_averaged():
    t, q_true, q, tau = _run(6, envelope=_ramp_in)
    out = process(make_recording(t, q, tau, period_s=PERIOD_S, harmonics=3))
    assert out.n_periods == 5 and out.t_s[0] == PERIOD_S
    assert len(out.warnings) == 1
    assert out.warnings[0].startswith("dropped period 1 of 6 (t = 0–4 s): its positions differ from the median "
                                      "period by ")
    assert out.warnings[0] in out.notes
    assert "periods 2–6 of 6 (4 s) agree within noise" in " ".join(out.notes)
    np.testing.assert_array_equal(out.q_rad, average_periods(q[PER_PERIOD:], PER_PERIOD)[0])
    np.testing.assert_allclose(out.noise_var_nm2, SIGMA_TAU_NM**2, rtol=0.1)
    assert relative_error(out.q_rad, q_true[PER_PERIOD:2 * PER_PERIOD]) < 1e-3
    blind = average_periods(q, PER_PERIOD)[0]
    assert np.max(np.abs(blind - q_true[PER_PERIOD:2 * PER_PERIOD])) > 0.05, "averaging all would be wrong"
    # the validation's measured reference, data.t_s + m·period_s for m < n_periods, covers the kept periods
    reference = np.mean([np.interp(out.t_s + m * PERIOD_S, t, q[:, 0]) for m in range(out.n_periods)], axis=0)
    np.testing.assert_allclose(reference, out.q_rad[:, 0], atol=1e-12)


def test_a_ramp_in_is_dropped_when_the_period_is_detected():
    t, _, q, tau = _run(6, envelope=_ramp_in)
    out = process(make_recording(t, q, tau))
    detected = next(n for n in out.notes if n.startswith("detected a period of"))
    period_s = float(detected.split()[4])
    assert period_s == pytest.approx(PERIOD_S, rel=0.01)
    assert out.warnings[0].startswith("dropped period 1 of 6 (t = 0–4 s): its positions differ")
    assert out.n_periods == 5 and out.t_s[0] == pytest.approx(period_s, rel=1e-5)


def test_a_ramp_out_last_period_is_dropped():
    n = 6
    t, q_true, q, tau = _run(n, envelope=lambda t_s: np.clip((n * PERIOD_S - t_s) / PERIOD_S, 0.0, 1.0))
    out = process(make_recording(t, q, tau, period_s=PERIOD_S, harmonics=3))
    assert out.n_periods == 5 and out.t_s[0] == 0.0
    assert len(out.warnings) == 1 and out.warnings[0].startswith("dropped period 6 of 6 (t = 20–24 s): its positions")
    np.testing.assert_array_equal(out.q_rad, average_periods(q[:5 * PER_PERIOD], PER_PERIOD)[0])
    assert relative_error(out.q_rad, q_true[:PER_PERIOD]) < 1e-3


def test_a_ramp_in_and_a_ramp_out_are_both_dropped():
    n = 7
    *_, q, tau = _run(n, envelope=lambda t_s: np.clip(np.minimum(t_s, n * PERIOD_S - t_s) / PERIOD_S, 0.0, 1.0))
    check = check_periods(_periods(q), _periods(tau), PERIOD_S, t0_s=10.0, joint_names=("a", "b", "c"))
    assert (check.first, check.stop, check.consistent) == (1, 6, True)
    assert [m.split(":")[0] for m in check.dropped] == ["dropped period 1 of 7 (t = 10–14 s)",
                                                        "dropped period 7 of 7 (t = 34–38 s)"]
    assert check.reason.startswith("periods 2–6 of 7 (4 s) agree within noise")
    # the ramps are far from the median period, the kept periods are at the noise
    assert check.q_distance_rad[[0, 6]].max(axis=1).min() > 0.05
    assert check.q_distance_rad[1:6].max() < 3 * SIGMA_Q_RAD


def _disturbed(n_periods: int, joint_of_period: dict[int, int]):
    """_run(n_periods) with a 0.2 rad excursion of joint joint_of_period[m] in the middle of period m (0-based)."""
    t, _, q, _ = _run(n_periods)
    for m, j in joint_of_period.items():
        q[:, j] += 0.2 * np.exp(-(((t - (m + 0.5) * PERIOD_S) / 0.4) ** 2))
    return t, q, _torque(q) + np.random.default_rng(1).normal(0.0, SIGMA_TAU_NM, q.shape)


def test_a_single_kept_period_is_used_without_averaging():
    t, q, tau = _disturbed(3, {0: 0, 2: 1})  # periods 1 and 3 are transients, each on another joint
    check = check_periods(_periods(q), _periods(tau), PERIOD_S)
    assert (check.first, check.stop, check.consistent) == (1, 2, True)
    assert check.reason.startswith("only period 2 of 3 (4 s) kept")
    out = process(make_recording(t, q, tau, period_s=PERIOD_S, harmonics=3))
    assert out.n_periods == 1 and out.noise_var_nm2 is None and out.t_s[0] == PERIOD_S
    assert [w.split(":")[0] for w in out.warnings] == ["dropped period 1 of 3 (t = 0–4 s)",
                                                       "dropped period 3 of 3 (t = 8–12 s)"]
    assert "only one kept period of 4 s: used without averaging, no noise estimate" in out.notes
    np.testing.assert_array_equal(out.q_rad, q[PER_PERIOD:2 * PER_PERIOD])


def test_no_period_is_kept_when_every_one_is_an_outlier():
    _, q, tau = _disturbed(3, {0: 0, 1: 1, 2: 2})
    check = check_periods(_periods(q), _periods(tau), PERIOD_S)
    assert (check.first, check.stop, check.consistent, check.dropped) == (3, 3, False, ())
    assert check.reason.startswith("the 3 periods of 4 s disagree: every period differs from the median period, "
                                   "e.g. period 1 of 3 (t = 0–4 s): its positions differ")


# ------------------------------------------------------------------------------------------------ periods that disagree


@pytest.mark.parametrize("given", [True, False])
def test_an_outlier_period_in_the_middle_means_non_periodic_processing(given):
    t, _, q, tau = _run(6)
    bump = 0.2 * np.exp(-(((t - 10.0) / 0.4) ** 2))  # an excursion of joint 1 in period 3 (8–12 s)
    q[:, 0] += bump
    tau[:, 0] += _torque(q[:, 0]) - _torque(q[:, 0] - bump)
    out = process(make_recording(t, q, tau, period_s=PERIOD_S if given else None, harmonics=3))
    edge = round(edge_s(ProcessingConfig()) / (t[1] - t[0]))  # the filters' edges trimmed at both ends
    assert out.n_periods == 0 and out.noise_var_nm2 is None and len(out.t_s) == len(t) - 2 * edge
    (warning,) = out.warnings
    assert warning.startswith("the 6 periods of 4 s disagree: period 3 of 6 (t = 8–12 s): its positions differ "
                              "from the median period by ")
    assert "on j1" in warning and warning.endswith(": processed as non-periodic data, not averaged")
    assert warning in out.notes and not any("averaged 6 periods" in n for n in out.notes)
    assert any(n.startswith("non-periodic: zero-phase Butterworth") for n in out.notes)


def test_a_torque_outlier_period_means_non_periodic_processing():
    t, _, q, tau = _run(6)
    tau[(t >= 12.0) & (t < 16.0), 1] += 3.0  # period 4, joint 2: 10 σ
    out = process(make_recording(t, q, tau, period_s=PERIOD_S))
    assert out.n_periods == 0
    (warning,) = out.warnings
    assert "period 4 of 6 (t = 12–16 s): its torque differs from the median period by " in warning
    distance_nm = float(warning.split("median period by ")[1].split()[0])
    typical_nm = float(warning.split("(typical ")[1].split()[0])
    assert distance_nm == pytest.approx(3.0, rel=0.1) and typical_nm == pytest.approx(SIGMA_TAU_NM, rel=0.1)
    assert " Nm RMS on j2 (typical " in warning


def test_a_period_given_for_non_periodic_data_means_non_periodic_processing():
    rng = np.random.default_rng(5)
    t = np.arange(round(12.0 * FS_HZ)) / FS_HZ
    smooth = scipy.signal.sosfiltfilt(scipy.signal.butter(4, 0.5, fs=FS_HZ, output="sos"),
                                      rng.normal(size=(len(t), 3)), axis=0)
    q = OFFSET_RAD + 0.5 * smooth / smooth.std(axis=0)
    out = process(make_recording(t, q, _torque(q) + rng.normal(0.0, SIGMA_TAU_NM, q.shape), period_s=3.0))
    edge = round(edge_s(ProcessingConfig()) / (t[1] - t[0]))  # the filters' edges trimmed at both ends
    assert out.n_periods == 0 and len(out.t_s) == len(t) - 2 * edge
    (warning,) = out.warnings
    assert warning.startswith("the 4 periods of 3 s disagree: their positions differ by ")
    assert warning.endswith(": processed as non-periodic data, not averaged")
    percent = float(warning.split("differ by ")[1].split(" %")[0])
    assert percent > 30.0


def test_two_periods_that_differ_are_not_averaged():
    t, _, q, tau = _run(2, envelope=_ramp_in)  # the median of two cannot tell which one is wrong
    out = process(make_recording(t, q, tau, period_s=PERIOD_S))
    assert out.n_periods == 0
    assert out.warnings[0].startswith("the 2 periods of 4 s disagree: their positions differ by ")


# ------------------------------------------------------------------------------------------------ forced


def test_non_periodic_setting_forces_non_periodic_processing():
    t, _, q, tau = _run(6)
    given = process(make_recording(t, q, tau, period_s=PERIOD_S), ProcessingConfig(non_periodic=True))
    edge = round(edge_s(ProcessingConfig()) / (t[1] - t[0]))  # the filters' edges trimmed at both ends
    assert given.n_periods == 0 and len(given.t_s) == len(t) - 2 * edge and given.warnings == ()
    assert "non_periodic set: processed as non-periodic data (period of 4 s ignored)" in given.notes
    detected = process(make_recording(t, q, tau), ProcessingConfig(non_periodic=True))
    assert detected.n_periods == 0
    assert not any(n.startswith("detected a period") for n in detected.notes)
    assert "non_periodic set: processed as non-periodic data" in detected.notes
    with pytest.raises(ValueError, match="non_periodic = 'yes' must be true or false"):
        ProcessingConfig(non_periodic="yes")
