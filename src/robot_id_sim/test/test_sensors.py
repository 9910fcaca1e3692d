"""Sensor models against their definitions: torque offset and white noise, encoder quantisation, the first-order
torque filter, dropped messages, and the option checks."""

import math

import numpy as np
import pytest

from robot_id_sim.sensors import SensorOptions, Sensors

N = 20_000
"""Samples per statistical check: the std of a sample std is σ/√(2N) = 0.5 % of σ, so a 3 % tolerance is 6
standard errors (no flaky failures), and a drop rate's std is √(0.2·0.8/N) = 0.28 %, so ±1.5 % is 5 of them."""
OFFSET = np.array([0.5, -1.0, 0.2, 0.0, 0.3])
DT = 0.001


def run(options: SensorOptions, tau: np.ndarray, q: np.ndarray | None = None, samples: int = N) -> list:
    sensors = Sensors(options, OFFSET, DT)
    q = np.zeros(len(OFFSET)) if q is None else q
    return [measure(sensors, k * DT, q, np.zeros_like(q), tau) for k in range(samples)]


def measure(sensors: Sensors, t_s: float, q: np.ndarray, dq: np.ndarray, tau: np.ndarray):
    """One filter step of tau, then the published sample."""
    sensors.sense_torque(tau)
    return sensors.measure(t_s, q, dq)


def test_without_options_the_effort_is_torque_plus_offset():
    tau = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    q, dq = np.linspace(0, 1, 5), np.linspace(-1, 0, 5)
    m = measure(Sensors(SensorOptions(), OFFSET, DT), 0.25, q, dq, tau)
    assert m.t_s == 0.25
    np.testing.assert_array_equal(m.effort_nm, tau + OFFSET)
    np.testing.assert_array_equal(m.q_rad, q)
    np.testing.assert_array_equal(m.dq_rad_s, dq)


def test_torque_noise_has_the_configured_sigma_per_joint():
    """std(effort − τ − offset) within 3 % of σ per joint; mean within 4σ/√N (4 standard errors) of zero."""
    sigma = (0.1, 0.5, 0.0, 2.0, 0.05)
    tau = np.array([3.0, -2.0, 1.0, 0.0, 7.0])
    efforts = np.array([m.effort_nm for m in run(SensorOptions(torque_noise_nm=sigma, seed=4), tau)])
    noise = efforts - tau - OFFSET
    for j, s in enumerate(sigma):
        if s == 0.0:
            assert np.abs(noise[:, j]).max() < 1e-15     # (τ + offset) − τ − offset: rounding only
            continue
        assert noise[:, j].std() == pytest.approx(s, rel=0.03)
        assert abs(noise[:, j].mean()) < 4 * s / math.sqrt(N)
    # joints are independent
    assert abs(np.corrcoef(noise[:, 0], noise[:, 1])[0, 1]) < 4 / math.sqrt(N)


def test_one_noise_value_applies_to_every_joint():
    efforts = np.array([m.effort_nm for m in run(SensorOptions(torque_noise_nm=0.2, seed=1), np.zeros(5))])
    np.testing.assert_allclose((efforts - OFFSET).std(axis=0), 0.2, rtol=0.03)


def test_same_seed_same_measurements():
    options = SensorOptions(torque_noise_nm=0.1, encoder_noise_rad=1e-4, drop_probability=0.3, seed=9)
    a, b = run(options, np.ones(5), samples=200), run(options, np.ones(5), samples=200)
    assert [m is None for m in a] == [m is None for m in b]
    for x, y in zip(a, b, strict=True):
        if x is not None:
            np.testing.assert_array_equal(x.effort_nm, y.effort_nm)
            np.testing.assert_array_equal(x.q_rad, y.q_rad)


def test_encoder_resolution_quantises_positions():
    step = 1e-3
    rng = np.random.default_rng(0)
    sensors = Sensors(SensorOptions(encoder_resolution_rad=step), OFFSET, DT)
    for _ in range(200):
        q = rng.uniform(-3, 3, 5)
        measured = measure(sensors, 0.0, q, np.zeros(5), np.zeros(5)).q_rad
        np.testing.assert_allclose(measured / step, np.round(measured / step), atol=1e-9)
        assert np.all(np.abs(measured - q) <= step / 2 + 1e-12)


def test_encoder_noise_has_the_configured_sigma():
    q = np.linspace(-1.0, 1.0, 5)
    positions = np.array([m.q_rad for m in run(SensorOptions(encoder_noise_rad=2e-4, seed=2), np.zeros(5), q)])
    np.testing.assert_allclose((positions - q).std(axis=0), 2e-4, rtol=0.03)


def test_torque_filter_step_response_reaches_1_minus_1_over_e_after_one_time_constant():
    """α = 1 − exp(−dt/T): after T/dt samples of a unit step the output is 1 − (1 − α)^(T/dt) = 1 − e^{−1} exactly
    (T a multiple of dt); the first sample initialises the filter, so there is no start-up transient."""
    time_constant = 0.02                            # 20 samples of 1 ms
    sensors = Sensors(SensorOptions(torque_filter_time_constant_s=time_constant), np.zeros(5), DT)
    q = np.zeros(5)
    first = measure(sensors, 0.0, q, q, np.full(5, 2.0))
    np.testing.assert_array_equal(first.effort_nm, 2.0)
    for k in range(5):                              # steady: stays at the input
        np.testing.assert_allclose(measure(sensors, k * DT, q, q, np.full(5, 2.0)).effort_nm, 2.0, atol=1e-15)
    out = [measure(sensors, k * DT, q, q, np.full(5, 3.0)).effort_nm[0] for k in range(1, 61)]
    response = (np.array(out) - 2.0) / 1.0
    assert response[19] == pytest.approx(1.0 - math.exp(-1.0), abs=1e-12)
    assert response[59] == pytest.approx(1.0 - math.exp(-3.0), abs=1e-12)
    assert np.all(np.diff(response) > 0.0)


def test_the_filter_runs_on_dropped_samples_too():
    """Dropped or not, every sample passes through the filter: the output after a step depends only on time."""
    tau_step = [np.zeros(5)] * 3 + [np.ones(5)] * 40
    options = dict(torque_filter_time_constant_s=0.01, seed=5)
    kept = Sensors(SensorOptions(**options), np.zeros(5), DT)
    dropping = Sensors(SensorOptions(drop_probability=0.5, **options), np.zeros(5), DT)
    for k, tau in enumerate(tau_step):
        a = measure(kept, k * DT, np.zeros(5), np.zeros(5), tau)
        b = measure(dropping, k * DT, np.zeros(5), np.zeros(5), tau)
        if b is not None:
            np.testing.assert_allclose(b.effort_nm, a.effort_nm, atol=1e-15)


def test_a_published_sample_holds_the_filter_run_on_every_step_between_samples():
    """The robot filters on its fast cycle and publishes every tenth step: a torque step between two published
    samples has passed through ten filter steps by the next one, 1 − (1 − α)^10 of the step, not α."""
    time_constant, steps = 0.02, 10
    sensors = Sensors(SensorOptions(torque_filter_time_constant_s=time_constant), np.zeros(5), DT)
    q = np.zeros(5)
    sensors.sense_torque(np.zeros(5))
    for _ in range(steps):
        sensors.sense_torque(np.ones(5))
    published = sensors.measure(steps * DT, q, q).effort_nm
    np.testing.assert_allclose(published, 1.0 - math.exp(-steps * DT / time_constant), atol=1e-12)


def test_drop_probability():
    measurements = run(SensorOptions(drop_probability=0.2, seed=3), np.zeros(5))
    dropped = sum(m is None for m in measurements) / N
    assert dropped == pytest.approx(0.2, abs=0.015)


@pytest.mark.parametrize(("options", "problem"), [
    (SensorOptions(torque_noise_nm=(0.1, 0.2)), "torque_noise_nm must be one value or 5 values, all >= 0"),
    (SensorOptions(torque_noise_nm=-0.1), "torque_noise_nm must be one value or 5 values, all >= 0"),
    (SensorOptions(encoder_noise_rad=-1e-6), "encoder_noise_rad must be >= 0"),
    (SensorOptions(encoder_resolution_rad=float("nan")), "encoder_resolution_rad must be >= 0"),
    (SensorOptions(torque_filter_time_constant_s=-0.001), "torque_filter_time_constant_s must be >= 0"),
    (SensorOptions(drop_probability=1.0), "drop_probability must be in [0, 1)"),
    (SensorOptions(drop_probability=-0.1), "drop_probability must be in [0, 1)"),
])
def test_bad_options_give_their_problem(options, problem):
    assert options.problems(5) == [problem]
    with pytest.raises(ValueError, match=problem.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        Sensors(options, OFFSET, DT)


def test_every_problem_on_its_own_line():
    options = SensorOptions(torque_noise_nm=-1.0, encoder_noise_rad=-1.0, drop_probability=2.0)
    assert len(options.problems(5)) == 3
    assert SensorOptions(torque_noise_nm=(0.1,) * 5).problems(5) == []


def test_nan_torque_noise_is_a_problem():
    assert SensorOptions(torque_noise_nm=float("nan")).problems(5) != []
