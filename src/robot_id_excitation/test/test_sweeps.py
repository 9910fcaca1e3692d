"""Friction sweeps (Luo et al. 2024): constant speeds forward and backward over the same positions, safely."""

import numpy as np
import pytest

from robot_id_excitation.check import check_trajectory
from robot_id_excitation.constraints import design_limits
from robot_id_excitation.quintic import evaluate_quintic, quintic_coefficients, rest_to_rest_duration
from robot_id_excitation.sweeps import FrictionSweep
from robot_id_excitation.trajectory_file import load_trajectory, save_trajectory

HOLD = np.array([0.0, 0.3, 0.0, -0.9, 0.0, 0.8, 0.0])
SPEEDS = (0.02, 0.1, 0.4)


@pytest.fixture
def sweep(iiwa14_config):
    return FrictionSweep("iiwa14", iiwa14_config.joint_names, HOLD, ("lbr_A2", "lbr_A6"), SPEEDS, dwell_s=0.2,
                         blend_acceleration_rad_s2=2.0)


def test_quintic_meets_its_boundary_states_and_limits():
    start = (np.array([0.1, -1.0]), np.array([0.5, 0.0]), np.array([-1.0, 0.0]))
    end = (np.array([0.7, 2.0]), np.array([0.0, 0.3]), np.array([0.0, 0.2]))
    c = quintic_coefficients(1.5, start, end)
    values = evaluate_quintic(c, np.array([0.0, 1.5]))
    for k in range(3):
        assert np.allclose(values[k][0], start[k]) and np.allclose(values[k][1], end[k])
    distance = np.array([0.5, -2.0])
    duration = rest_to_rest_duration(distance, np.array([1.0, 1.0]), np.array([0.5, 5.0]))
    zeros = np.zeros(2)
    _, v, a = evaluate_quintic(quintic_coefficients(duration, (zeros, zeros, zeros), (distance, zeros, zeros)),
                               np.linspace(0, duration, 2001))
    assert duration == pytest.approx(1.875 * 2.0 / 1.0)  # joint 2's speed binds
    assert np.abs(v[:, 1]).max() == pytest.approx(1.0, abs=1e-6)
    assert np.all(np.abs(v).max(axis=0) <= 1.0 + 1e-9) and np.all(np.abs(a).max(axis=0) <= [0.5 + 1e-9, 5.0 + 1e-9])


def test_each_speed_runs_forward_and_backward_over_the_same_positions(sweep):
    windows = sweep.constant_velocity_windows()
    assert len(windows) == 2 * len(SPEEDS) * 2
    for forward, backward in zip(windows[::2], windows[1::2], strict=True):
        assert forward.joint == backward.joint and forward.velocity_rad_s == -backward.velocity_rad_s > 0
        assert forward.position_from_rad == pytest.approx(backward.position_to_rad, abs=1e-12)
        assert forward.position_to_rad == pytest.approx(backward.position_from_rad, abs=1e-12)
        j = sweep.joint_names.index(forward.joint)
        for w in (forward, backward):
            t = np.linspace(w.start_s, w.end_s, 50)[1:-1]
            q, dq, ddq = sweep.evaluate(t)
            assert np.allclose(dq[:, j], w.velocity_rad_s, atol=1e-9) and np.allclose(ddq[:, j], 0.0, atol=1e-9)
            others = np.delete(np.arange(7), j)
            assert np.array_equal(q[:, others], np.tile(HOLD[others], (len(t), 1)))
    slow = next(w for w in windows if abs(w.velocity_rad_s) == 0.02)
    assert abs(slow.position_to_rad - slow.position_from_rad) == pytest.approx(0.02 * 8.0)


def test_sweep_is_continuous_and_starts_and_ends_at_rest_at_the_hold_pose(sweep):
    q, dq, ddq = sweep.evaluate(np.array([0.0, sweep.period_s]))
    assert np.allclose(q, HOLD, atol=1e-12) and np.allclose(dq, 0, atol=1e-12) and np.allclose(ddq, 0, atol=1e-12)
    for seg in sweep.segments[1:]:
        before = sweep.evaluate(np.array([seg.start_s - 1e-9]))
        after = sweep.evaluate(np.array([seg.start_s + 1e-9]))
        for b, a in zip(before, after, strict=True):
            assert np.abs(b - a).max() < 1e-6


def test_sweep_passes_the_safety_check_and_a_too_fast_one_does_not(sweep, iiwa14, iiwa14_config):
    limits = design_limits(iiwa14_config, position_margin_rad=0.1)
    assert check_trajectory(iiwa14, limits, sweep).feasible
    fast = FrictionSweep("iiwa14", iiwa14_config.joint_names, HOLD, ("lbr_A2",), (2.0,), blend_acceleration_rad_s2=5.0)
    report = check_trajectory(iiwa14, limits, fast)
    assert not report.feasible
    assert ("velocity", "lbr_A2") in {(v.constraint, v.where) for v in report.violations}


def test_sweep_file_round_trip_and_errors(tmp_path, sweep, iiwa14_config):
    back = load_trajectory(save_trajectory(sweep, tmp_path / "sweep.yaml"))
    assert isinstance(back, FrictionSweep) and back.period_s == pytest.approx(sweep.period_s)
    t = np.linspace(0, sweep.period_s, 500)
    assert np.allclose(back.evaluate(t)[0], sweep.evaluate(t)[0])
    with pytest.raises(ValueError, match="swept joints"):
        FrictionSweep("iiwa14", iiwa14_config.joint_names, HOLD, ("A9",), (0.1,))
    with pytest.raises(ValueError, match="positive speeds"):
        FrictionSweep("iiwa14", iiwa14_config.joint_names, HOLD, ("lbr_A1",), (0.1, -0.2))
