"""Long logs: the regression built and reduced in chunks equals the whole-log regression (filtered regressor,
least squares, RSD, residual, physical retrieval) on a simulated non-periodic log cut into many chunks."""

import sys

import numpy as np
import pytest
from estimator_synthetic import iiwa14_setup, simulated_recording

from robot_id_estimator.estimation import least_squares as estimation
from robot_id_estimator.physical.lmi import retrieve_lmi
from robot_id_estimator.physical.problem import default_bounds, reduce_problem, residual_norm
from robot_id_estimator.pipeline import identify
from robot_id_estimator.processing import regression_stream
from robot_id_estimator.processing.model_side import torque_side
from robot_id_estimator.processing.reduction import merge, reduce_joints, weighted_rows
from robot_id_estimator.processing.samples import process
from robot_id_estimator.settings import EstimatorConfig, PhysicalConfig, ProcessingConfig
from robot_id_lab.synthetic import urdf_with_friction
from robot_id_model import base_parameters, regressor
from robot_id_model.parameters import nominal_parameters

CHUNK = 150
"""Samples per chunk in these tests: a 2000-sample log becomes 14 chunks, each shorter than its overlap."""

PROCESSING = ProcessingConfig(non_periodic=True)


@pytest.fixture(scope="module")
def log():
    """A 10 s, 200 Hz log processed as non-periodic data, its whole-log filtered base regressor and torque."""
    setup = iiwa14_setup()
    robot = setup.model(("FV", "FC", "FO"))
    base = base_parameters(robot)
    rec = simulated_recording(robot, setup, urdf_with_friction(robot), 1, seed=3, tau_noise_nm=0.2)
    data = process(rec, PROCESSING)
    raw = regressor(robot, data.q_rad, data.dq_rad_s, data.ddq_rad_s2)[..., base.independent]
    yb = torque_side(raw, data, PROCESSING, setup.torque_filter_time_constant_s)
    return setup, robot, base, rec, data, yb


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(regression_stream, "CHUNK_SAMPLES", CHUNK)


@pytest.mark.parametrize("time_constant_s", [0.0, 0.05])
def test_chunk_boundaries_do_not_show_in_the_filtered_regressor(log, small_chunks, time_constant_s):
    _setup, robot, base, _, data, _ = log
    raw = regressor(robot, data.q_rad, data.dq_rad_s, data.ddq_rad_s2)[..., base.independent]
    whole = torque_side(raw, data, PROCESSING, time_constant_s)
    streamed = regression_stream.stream_recording(robot, base.independent, data, data.tau_nm,
                                                  np.zeros(base.n_base), PROCESSING, time_constant_s)
    assert len(data.t_s) > 10 * CHUNK
    np.testing.assert_array_equal(streamed.trace_index, np.arange(len(data.t_s)))  # short: every sample kept
    # the overlap makes every chunk's samples the whole log's to FORGET (1e-13) of the signal
    assert np.max(np.abs(streamed.trace_yb - whole)) <= 1e-11 * np.max(np.abs(whole))
    chunked = merge([reduce_joints(whole[s:s + CHUNK], data.tau_nm[s:s + CHUNK])
                     for s in range(0, len(whole), CHUNK)])
    single = reduce_joints(whole, data.tau_nm)
    values = np.linspace(-1.0, 1.0, base.n_base)
    residual = np.sum((data.tau_nm - whole @ values) ** 2, axis=0)
    np.testing.assert_allclose(chunked.residual_sq_nm2(values), residual, rtol=1e-10)
    np.testing.assert_allclose(single.residual_sq_nm2(values), residual, rtol=1e-10)


def test_streamed_estimate_equals_the_whole_log_least_squares(log, small_chunks):
    """OLS (Xu et al. 2020, eqs. 6, 7) on the whole log's stacked regressor, each joint's equations where it moves
    at least min_speed_rad_s, against identify on 14 chunks: parameters to 1e-8, RSD to 1e-6, residual RMS to 1e-9
    (relative)."""
    setup, _, _base, rec, data, yb = log
    config = EstimatorConfig(method="ols", coulomb_law="sign", processing=PROCESSING,
                             physical=PhysicalConfig(method="none"))
    result = identify([rec], setup, config)
    columns = np.nonzero(~np.isnan(result.base.values))[0]
    moving = np.abs(data.dq_rad_s) >= config.min_speed_rad_s
    assert 0.01 < 1.0 - moving.mean() < 0.2  # the slow samples around reversals
    w = yb[..., columns][moving]
    y = data.tau_nm[moving]
    values = np.linalg.lstsq(w, y, rcond=None)[0]
    residual = y - w @ values
    sigma2 = residual @ residual / (len(y) - len(columns))
    std = np.sqrt(sigma2 * np.diag(np.linalg.inv(w.T @ w)))
    np.testing.assert_allclose(result.base.values[columns], values, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(result.base.rsd_percent[columns], 100.0 * std / np.abs(values), rtol=1e-6)
    per_joint = np.zeros_like(data.tau_nm)
    per_joint[moving] = residual
    rms = np.sqrt(np.sum(per_joint**2, axis=0) / moving.sum(axis=0))
    np.testing.assert_allclose(result.metrics.residual_rms_nm["base"], rms, rtol=1e-9)
    assert result.metrics.condition_number == pytest.approx(np.linalg.cond(w), rel=1e-8)
    assert result.metrics.n_samples == len(data.t_s)


def test_wls_with_one_chunk_and_with_many_agree(log, monkeypatch):
    setup, _, _, rec, _, _ = log
    config = EstimatorConfig(processing=PROCESSING, physical=PhysicalConfig(method="none"))
    whole = identify([rec], setup, config)
    monkeypatch.setattr(regression_stream, "CHUNK_SAMPLES", CHUNK)
    chunked = identify([rec], setup, config)
    np.testing.assert_allclose(chunked.base.values, whole.base.values, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(chunked.base.rsd_percent, whole.base.rsd_percent, rtol=1e-6)
    assert chunked.essential.names == whole.essential.names
    np.testing.assert_allclose(chunked.metrics.joint_weights, whole.metrics.joint_weights, rtol=1e-9)


def test_physical_retrieval_on_the_reduced_problem_equals_the_whole_log_one(log):
    """‖τ − W·E·π‖² of the whole log = the reduced problem's plus the constant outside span(W)."""
    _setup, robot, base, _, data, yb = log
    w = yb.reshape(-1, base.n_base)
    tau = data.tau_nm.ravel()
    system = estimation.reduce_system(*weighted_rows([reduce_joints(yb, data.tau_nm)], [np.ones(7)]))
    w_reduced = system.r_cols * system.scale
    whole = reduce_problem(w, tau, base.beta_from_pi)
    reduced = reduce_problem(w_reduced, system.z, base.beta_from_pi, system.outside_sq)
    pi = nominal_parameters(robot)
    assert residual_norm(reduced, pi) == pytest.approx(residual_norm(whole, pi), rel=1e-10)
    assert reduced.unconstrained_residual == pytest.approx(whole.unconstrained_residual, rel=1e-10)
    bounds = default_bounds(robot)
    full = retrieve_lmi(robot, w, tau, base.beta_from_pi, bounds)
    fast = retrieve_lmi(robot, w_reduced, system.z, base.beta_from_pi, bounds, outside_sq_nm2=system.outside_sq)
    assert fast.residual_norm_nm == pytest.approx(full.residual_norm_nm, rel=1e-6)
    np.testing.assert_allclose(base.values(fast.pi), base.values(full.pi), rtol=1e-3, atol=1e-4)  # solver tolerance


def test_the_chunks_show_a_progress_bar_on_a_terminal(log, small_chunks, monkeypatch, capsys):
    _setup, robot, base, _, data, _ = log
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    regression_stream.stream_recording(robot, base.independent, data, data.tau_nm, np.zeros(base.n_base),
                                       PROCESSING, 0.0)
    chunks = len(regression_stream.chunk_windows(len(data.t_s), CHUNK, 0, 0))
    err = capsys.readouterr().err
    assert chunks > 10 and "regressor chunks:   0%" in err and f"0/{chunks} [" in err
