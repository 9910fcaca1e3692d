"""Friction sweeps (Luo et al. 2024): constant speeds forward and backward over the same positions, safely."""

import pathlib

import numpy as np
import pytest

from robot_id_excitation.check import check_trajectory
from robot_id_excitation.constraints import design_limits
from robot_id_excitation.quintic import evaluate_quintic, quintic_coefficients, rest_to_rest_duration
from robot_id_excitation.sweeps import FrictionSweep
from robot_id_excitation.trajectory_file import load_trajectory, save_trajectory
from robot_id_model.robot_config import load_robot_config, robot_names

HOLD = np.array([0.0, 0.3, 0.0, -0.9, 0.0, 0.8, 0.0])
SPEEDS = (0.02, 0.1, 0.4)
TOGETHER = ("lbr_A1", "lbr_A2", "lbr_A4", "lbr_A6")
ROBOTS = robot_names()


@pytest.fixture
def sweep(iiwa14_config):
    return FrictionSweep("iiwa14", iiwa14_config.joint_names, HOLD, ("lbr_A2", "lbr_A6"), SPEEDS, dwell_s=0.2,
                         blend_acceleration_rad_s2=2.0)


@pytest.fixture
def together(iiwa14_config):
    return FrictionSweep("iiwa14", iiwa14_config.joint_names, HOLD, TOGETHER, SPEEDS, dwell_s=0.2,
                         blend_acceleration_rad_s2=2.0, simultaneous=True)


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


@pytest.mark.parametrize("name", ["sweep", "together"])
def test_sweep_is_continuous_and_starts_and_ends_at_rest_at_the_hold_pose(name, request):
    sweep = request.getfixturevalue(name)
    q, dq, ddq = sweep.evaluate(np.array([0.0, sweep.period_s]))
    assert np.allclose(q, HOLD, atol=1e-12) and np.allclose(dq, 0, atol=1e-12) and np.allclose(ddq, 0, atol=1e-12)
    for seg in sweep.segments[1:]:
        before = sweep.evaluate(np.array([seg.start_s - 1e-9]))
        after = sweep.evaluate(np.array([seg.start_s + 1e-9]))
        for b, a in zip(before, after, strict=True):
            assert np.abs(b - a).max() < 1e-6


def mirrored_pairs(sweep: FrictionSweep, samples: int = 21):
    """Per speed: times of the forward pass and of the backward pass at the same path point, end to start."""
    passes = sorted({(w.start_s, w.end_s, w.velocity_rad_s) for w in sweep.constant_velocity_windows()})
    for (f0, f1, v_fwd), (b0, b1, v_bwd) in zip(passes[::2], passes[1::2], strict=True):
        u = np.linspace(0.0, 1.0, samples)
        yield v_fwd, v_bwd, f0 + u * (f1 - f0), b1 - u * (b1 - b0)


def test_simultaneous_sweep_moves_every_swept_joint_at_each_speed_at_once(together):
    windows = together.constant_velocity_windows()
    assert len(windows) == 2 * len(SPEEDS) * len(TOGETHER)
    swept = [together.joint_names.index(j) for j in TOGETHER]
    held = [j for j in range(7) if j not in swept]
    n = len(TOGETHER)
    passes = [windows[i:i + n] for i in range(0, len(windows), n)]  # forward, backward, at each speed in turn
    for group, velocity in zip(passes, [s * v for v in SPEEDS for s in (1, -1)], strict=True):
        assert [w.joint for w in group] == list(TOGETHER)
        assert {(w.start_s, w.end_s, w.velocity_rad_s) for w in group} == {(group[0].start_s, group[0].end_s,
                                                                            velocity)}
        t = np.linspace(group[0].start_s, group[0].end_s, 50)[1:-1]
        _, dq, ddq = together.evaluate(t)
        assert np.allclose(dq[:, swept], velocity, atol=1e-9) and np.allclose(ddq[:, swept], 0.0, atol=1e-9)
    q, _, _ = together.evaluate(np.linspace(0.0, together.period_s, 5000))
    assert np.array_equal(q[:, held], np.tile(HOLD[held], (5000, 1)))


def test_simultaneous_passes_retrace_one_path_so_eq_15_cancels_the_rigid_body_torque(together, iiwa14, urdf_torque_nm):
    for v_fwd, v_bwd, t_fwd, t_bwd in mirrored_pairs(together):
        assert v_fwd == -v_bwd > 0
        q_f, dq_f, ddq_f = together.evaluate(t_fwd)
        q_b, dq_b, ddq_b = together.evaluate(t_bwd)
        assert np.allclose(q_f, q_b, atol=1e-12) and np.allclose(dq_f, -dq_b, atol=1e-9)  # every joint, not one
        tau_f, tau_b = urdf_torque_nm(iiwa14, q_f, dq_f, ddq_f), urdf_torque_nm(iiwa14, q_b, dq_b, ddq_b)
        model = iiwa14.model  # all that is left is the URDF's friction τ_f(v) = damping·v + friction·sign(v)
        assert np.allclose(0.5 * (tau_f - tau_b), model.damping * dq_f + model.friction * np.sign(dq_f), atol=1e-9)


def test_sweep_passes_the_safety_check_and_a_too_fast_one_does_not(sweep, iiwa14, iiwa14_config):
    limits = design_limits(iiwa14_config, position_margin_rad=0.1)
    assert check_trajectory(iiwa14, limits, sweep).feasible
    fast = FrictionSweep("iiwa14", iiwa14_config.joint_names, HOLD, ("lbr_A2",), (2.0,), blend_acceleration_rad_s2=5.0)
    report = check_trajectory(iiwa14, limits, fast)
    assert not report.feasible
    assert ("velocity", "lbr_A2") in {(v.constraint, v.where) for v in report.violations}


def test_sweep_file_round_trip_and_errors(tmp_path, sweep, together, iiwa14_config):
    for original in (sweep, together):
        back = load_trajectory(save_trajectory(original, tmp_path / "sweep.yaml"))
        assert isinstance(back, FrictionSweep) and back.period_s == pytest.approx(original.period_s)
        assert back.simultaneous == original.simultaneous
        t = np.linspace(0, original.period_s, 500)
        assert np.allclose(back.evaluate(t)[0], original.evaluate(t)[0])
    data = together.to_dict()
    del data["simultaneous"]
    assert not FrictionSweep.from_dict(data).simultaneous
    with pytest.raises(ValueError, match="simultaneous"):
        FrictionSweep.from_dict(data | {"simultaneous": "yes please"})
    with pytest.raises(ValueError, match="swept joints"):
        FrictionSweep("iiwa14", iiwa14_config.joint_names, HOLD, ("A9",), (0.1,))
    with pytest.raises(ValueError, match="positive speeds"):
        FrictionSweep("iiwa14", iiwa14_config.joint_names, HOLD, ("lbr_A1",), (0.1, -0.2))


DATA = pathlib.Path(__file__).parent / "data"


@pytest.mark.parametrize("robot", ROBOTS)
def test_shipped_friction_sweep_is_simultaneous_fast_and_safe(robot):
    config = load_robot_config(robot)
    sweep = load_trajectory(f"{robot}_friction_sweep")
    assert isinstance(sweep, FrictionSweep) and sweep.simultaneous and sweep.joints == config.joint_names
    mid_range = 0.5 * (config.limits.position_lower_rad + config.limits.position_upper_rad)
    excitation_start = load_trajectory(robot).rest_pose_rad
    earlier_start = load_trajectory(DATA / "panda_before_collision_check.yaml").rest_pose_rad  # see sweeps.py
    assert np.allclose(sweep.hold_rad, mid_range) or np.array_equal(sweep.hold_rad, excitation_start) or (
        robot == "panda" and np.array_equal(sweep.hold_rad, earlier_start))
    speeds = np.array(sweep.velocities_rad_s)
    assert len(speeds) >= 10 and speeds[0] == pytest.approx(0.005) and np.allclose(speeds[1:] / speeds[:-1],
                                                                                     speeds[1] / speeds[0])
    slowest = min(sweep.constant_velocity_windows(), key=lambda w: abs(w.velocity_rad_s))
    assert slowest.end_s - slowest.start_s >= 2.0 and sweep.period_s <= 120.0
    assert sweep.blend_acceleration_rad_s2 <= config.limits.acceleration_rad_s2.min()
    report = check_trajectory(config.load_model(()), design_limits(config, position_margin_rad=0.1), sweep)
    assert report.feasible, report.lines()
