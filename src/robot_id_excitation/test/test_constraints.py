"""Constraint groups: values against direct computations, partials against finite differences, reports."""

import numpy as np
import pinocchio as pin
import pytest

from robot_id_excitation.check import check_trajectory
from robot_id_excitation.constraints import check_samples, constraint_groups, design_limits
from robot_id_excitation.fourier import FourierTrajectory
from robot_id_model.base_parameters import random_states


def test_values_match_direct_computations(iiwa14, iiwa14_config, urdf_torque_nm):
    limits = design_limits(iiwa14_config, position_margin_rad=0.1)
    q, dq, ddq = random_states(iiwa14, 20, seed=2)
    groups = {(g.constraint, g.where): g for g in constraint_groups(iiwa14, limits, q, dq, ddq)}
    kinds = [kind for kind, _ in groups]
    assert len(kinds) - kinds.count("collision") == 7 * 4 + 1 + 8
    assert kinds.count("collision") == 21 + 6  # 8 links, 7 of them neighbours; links 2-7 against the floor
    tau = urdf_torque_nm(iiwa14, q, dq, ddq)
    data = iiwa14.model.createData()
    pin.rnea(iiwa14.model, data, q[3], dq[3], ddq[3])
    assert np.allclose(tau[3], data.tau)
    assert np.allclose(groups["torque", "lbr_A2"].quantity, np.abs(tau[:, 1]))
    assert np.allclose(groups["velocity", "lbr_A3"].value, np.abs(dq[:, 2]) / limits.velocity_rad_s[2] - 1)
    upper = limits.position_upper_rad[0]
    top = groups["position", "lbr_A1"]
    assert np.allclose(top.excess[q[:, 0] > 0], q[q[:, 0] > 0, 0] - upper)
    fid = iiwa14.model.getFrameId("lbr_link_ee")
    pin.forwardKinematics(iiwa14.model, data, q[4], dq[4])
    pin.updateFramePlacements(iiwa14.model, data)
    speed = np.linalg.norm(pin.getFrameVelocity(iiwa14.model, data, fid, pin.LOCAL_WORLD_ALIGNED).linear)
    assert groups["flange_speed", "lbr_link_ee"].quantity[4] == pytest.approx(speed)
    assert groups["floor", "lbr_link_ee"].quantity[4] == pytest.approx(data.oMf[fid].translation[2])


def test_partials_match_finite_differences(panda, panda_config):
    limits = design_limits(panda_config)
    q, dq, ddq = random_states(panda, 6, seed=4)
    groups = constraint_groups(panda, limits, q, dq, ddq, partials=True)
    h = 1e-6
    for slot, name in enumerate(("d_q", "d_dq", "d_ddq")):
        for i in range(panda.n_joints):
            step = np.zeros(panda.n_joints)
            step[i] = h
            args_plus, args_minus = [q, dq, ddq], [q, dq, ddq]
            args_plus[slot], args_minus[slot] = args_plus[slot] + step, args_minus[slot] - step
            plus = constraint_groups(panda, limits, *args_plus)
            minus = constraint_groups(panda, limits, *args_minus)
            for g, gp, gm in zip(groups, plus, minus, strict=True):
                numeric = (gp.value - gm.value) / (2 * h)
                assert np.abs(getattr(g, name)[:, i] - numeric).max() < 1e-6 * (1 + np.abs(numeric).max()), (
                    g.constraint, g.where, name, i)


def test_report_names_the_binding_constraint_and_by_how_much(iiwa14, iiwa14_config):
    limits = design_limits(iiwa14_config)
    n = iiwa14.n_joints
    upright = np.zeros((1, n))
    assert check_samples(iiwa14, limits, np.zeros(1), upright, upright, upright).feasible
    folded = np.array([[0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0]])
    report = check_samples(iiwa14, limits, np.zeros(1), folded, np.zeros((1, n)), np.zeros((1, n)))
    assert not report.feasible
    floor = [c for c in report.violations if c.constraint == "floor"]
    assert floor and floor[0].excess == pytest.approx(limits.floor_z_m - floor[0].value)
    fast = np.zeros((3, n))
    fast[1, 3] = 1.5
    report = check_samples(iiwa14, limits, np.array([0.0, 0.5, 1.0]), upright.repeat(3, 0), fast, np.zeros((3, n)))
    worst = report.violations[0]
    assert (worst.constraint, worst.where, worst.time_s) == ("velocity", "lbr_A4", 0.5)
    assert worst.excess == pytest.approx(1.5 - limits.velocity_rad_s[3])
    assert "lbr_A4" in report.lines()[1] and "exceeds by 0.191" in report.lines()[1]


def test_a_sample_that_is_not_finite_is_a_violation(iiwa14, iiwa14_config):
    """NaN > tolerance is false: a NaN state passed the check (docs/safety.md)."""
    n = iiwa14.n_joints
    q = np.zeros((2, n))
    q[1, 2] = np.nan
    report = check_samples(iiwa14, design_limits(iiwa14_config), np.array([0.0, 0.1]), q, np.zeros((2, n)),
                           np.zeros((2, n)))
    assert not report.feasible
    assert ("position", "lbr_A3") in {(c.constraint, c.where) for c in report.violations}


def test_margin_and_scales(iiwa14_config):
    limits = design_limits(iiwa14_config, position_margin_rad=0.1, velocity_scale=0.5, torque_scale=0.8)
    assert np.allclose(limits.position_upper_rad, iiwa14_config.limits.position_upper_rad - 0.1)
    assert np.allclose(limits.velocity_rad_s, 0.5 * iiwa14_config.limits.velocity_rad_s)
    assert np.allclose(limits.torque_nm, 0.8 * iiwa14_config.limits.torque_nm)
    with pytest.raises(ValueError, match="leaves no range"):
        design_limits(iiwa14_config, position_margin_rad=2.5)


def test_check_trajectory_requires_rest_at_the_period_start(iiwa14, iiwa14_config):
    a = np.full((7, 2), 0.02)
    pose = np.array([0.0, 0.3, 0.0, -1.0, 0.0, 0.5, 0.0])
    limits = design_limits(iiwa14_config)
    free = FourierTrajectory("fourier", "iiwa14", iiwa14_config.joint_names, 0.1, a, a, pose)
    report = check_trajectory(iiwa14, limits, free)
    assert {v.where for v in report.violations} == {"period start position error", "period start velocity",
                                                     "period start acceleration"}
    modified = FourierTrajectory("modified_fourier", "iiwa14", iiwa14_config.joint_names, 0.1, a, a, pose)
    assert check_trajectory(iiwa14, limits, modified).feasible
