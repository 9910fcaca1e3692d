"""The true robot: perturbed URDF inertials (consistent by construction), friction of Luo et al. 2024, eq. (7),
armature and sensor offset within the configured ranges, and the URDF taken as it is."""

import re

import numpy as np
import pytest

from robot_id_model.parameters import friction_columns, inertial_columns
from robot_id_model.physical import consistency_violations, link_standard_parameters
from robot_id_model.robot_model import load_robot_model
from robot_id_sim.true_dynamics import (
    TRUTH_FRICTION,
    JointFriction,
    Perturbation,
    nominal_links,
    perturbed_dynamics,
    urdf_dynamics,
)


def test_perturbed_links_are_physically_consistent(each_arm):
    """Every link of the default truth passes every consistency check (positive mass, positive-definite inertia,
    triangle inequalities, positive-definite pseudo-inertia); the payload as well."""
    truth = each_arm.truth
    assert len(truth.links) == each_arm.robot.n_joints
    for i, link in enumerate(truth.links):
        assert consistency_violations(link) == [], f"{each_arm.config.robot} link {i + 1}"
    assert consistency_violations(truth.payload) == []


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_panda_link4_is_made_consistent_for_any_seed(arm, seed):
    """Panda's URDF link 4 breaks the triangle inequality; the second-moment floor repairs it whatever the draw."""
    panda = arm("panda")
    nominal = nominal_links(panda.robot)
    assert any("triangle inequality" in reason for reason in consistency_violations(nominal[3]))
    truth = perturbed_dynamics(panda.robot, panda.config.limits.torque_nm, Perturbation(seed=seed))
    assert all(consistency_violations(link) == [] for link in truth.links)


def _flat(truth) -> np.ndarray:
    """Every number a truth holds, in one vector."""
    parts = [link_standard_parameters(link) for link in truth.links]
    f = truth.friction
    parts += [f.fv1, f.fv2, f.fv3, f.fs, f.fs1, f.fc, f.fc1, truth.armature_kg_m2, truth.torque_offset_nm]
    return np.concatenate(parts)


def test_same_seed_same_truth_other_seed_another(arm):
    iiwa = arm("iiwa14")
    limits = iiwa.config.limits.torque_nm
    again = perturbed_dynamics(iiwa.robot, limits, Perturbation(seed=0))
    other = perturbed_dynamics(iiwa.robot, limits, Perturbation(seed=1))
    np.testing.assert_array_equal(_flat(again), _flat(iiwa.truth))
    differs = np.abs(_flat(other) - _flat(iiwa.truth))
    # every link mass and every per-joint friction value is drawn anew: all of them change
    masses = differs[[10 * i for i in range(7)]]
    assert np.all(masses > 0.0) and np.all(np.abs(other.friction.fv1 - iiwa.truth.friction.fv1) > 0.0)


def test_masses_and_centres_of_mass_within_the_configured_scale(each_arm):
    """Links 1..n−1: mass within ±mass_scale of the URDF's, each CoM coordinate within ±com_shift_m; the last link
    carries the payload (1 kg at 6 cm): its mass is the perturbed one plus the payload, its CoM the combined one."""
    truth, p = each_arm.truth, Perturbation()
    nominal = nominal_links(each_arm.robot)
    for link, nom in zip(truth.links[:-1], nominal[:-1], strict=True):
        assert (1 - p.mass_scale) * nom.mass_kg <= link.mass_kg <= (1 + p.mass_scale) * nom.mass_kg
        assert np.all(np.abs(link.com_m - nom.com_m) <= p.com_shift_m + 1e-15)
    last, nom = truth.links[-1], nominal[-1]
    bare = last.mass_kg - p.payload_mass_kg
    assert (1 - p.mass_scale) * nom.mass_kg <= bare <= (1 + p.mass_scale) * nom.mass_kg
    assert truth.payload.mass_kg == p.payload_mass_kg
    np.testing.assert_allclose(truth.payload.com_m, p.payload_com_m)
    # the payload sphere's inertia 2/5·m·r² about its centre
    np.testing.assert_allclose(truth.payload.inertia_com_kg_m2, 0.4 * 1.0 * 0.04**2 * np.eye(3))


def test_no_payload_leaves_the_last_link_perturbed_only(arm):
    iiwa = arm("iiwa14")
    truth = perturbed_dynamics(iiwa.robot, iiwa.config.limits.torque_nm, Perturbation(payload_mass_kg=0.0))
    nominal = nominal_links(iiwa.robot)[-1]
    assert truth.payload is None
    assert 0.9 * nominal.mass_kg <= truth.links[-1].mass_kg <= 1.1 * nominal.mass_kg


def test_friction_armature_offset_per_unit_of_torque_limit(each_arm):
    """Per joint, relative to the torque limit τmax: fv1/τmax and fc/τmax in [0.005, 0.015], Ia/τmax in
    [0.5e-4, 1.5e-4], |offset|/τmax ≤ 0.002; fs = 1.3·fc and the Stribeck velocities 0.05 rad/s."""
    truth, p = each_arm.truth, Perturbation()
    tau_max = each_arm.config.limits.torque_nm
    f = truth.friction
    for values, (low, high) in ((f.fv1, p.viscous_per_torque_s), (f.fc, p.coulomb_per_torque),
                                (truth.armature_kg_m2, p.armature_per_torque_kg_m2)):
        assert np.all((values / tau_max >= low) & (values / tau_max <= high))
    assert np.all(np.abs(truth.torque_offset_nm) <= p.offset_per_torque * tau_max)
    np.testing.assert_allclose(f.fs, 1.3 * f.fc)
    np.testing.assert_array_equal(f.fs1, np.full(7, 0.05))
    np.testing.assert_array_equal(f.fc1, np.full(7, 0.05))
    assert not f.fv2.any() and not f.fv3.any()


def test_friction_model_is_luo_eq7():
    """Eq. (7) evaluated by hand at a few speeds; the continuous part is odd, zero and flat at rest."""
    ones = np.ones(1)
    f = JointFriction(fv1=0.5 * ones, fv2=0.1 * ones, fv3=0.02 * ones, fs=2.0 * ones, fs1=0.05 * ones,
                      fc=1.5 * ones, fc1=0.1 * ones)
    for dq in (-3.0, -0.04, 1e-4, 0.07, 2.0):
        s = np.sign(dq)
        expected = (0.5 * dq + 0.1 * s * dq**2 + 0.02 * dq**3 + 2.0 * s * np.exp(-((dq / 0.05) ** 2))
                    + 1.5 * s * (1 - np.exp(-((dq / 0.1) ** 2))))
        assert f.torque_nm(np.array([dq]))[0] == pytest.approx(expected, rel=1e-12)
        assert f.continuous_torque_nm(np.array([dq]))[0] == pytest.approx(-f.continuous_torque_nm(-np.array([dq]))[0])
    assert f.torque_nm(np.zeros(1))[0] == 0.0 and f.continuous_torque_nm(np.zeros(1))[0] == 0.0
    # flat at rest: the slope at 1e-6 rad/s is the fv2/Stribeck/Coulomb terms' O(dq), i.e. tiny
    assert abs(f.continuous_torque_nm(np.array([1e-6]))[0]) < 1e-6
    # just above rest the static level fs acts, at speed the Coulomb level fc
    assert f.torque_nm(np.array([1e-6]))[0] == pytest.approx(2.0, abs=1e-5)
    assert f.torque_nm(np.array([2.0]))[0] - (0.5 * 2 + 0.1 * 4 + 0.02 * 8) == pytest.approx(1.5, abs=1e-12)


def test_standard_parameters_carry_the_truth(each_arm):
    """π: inertial columns are the links' standard parameters, FV = fv1, FC = fc, FO = offset, IA = armature."""
    robot, truth = each_arm.robot, each_arm.truth
    assert robot.friction == TRUTH_FRICTION
    pi = truth.standard_parameters(robot)
    for cols, link in zip(inertial_columns(robot), truth.links, strict=True):
        np.testing.assert_allclose(pi[cols], link_standard_parameters(link), rtol=0, atol=1e-15)
    fc = friction_columns(robot)
    for t, values in enumerate((truth.friction.fv1, truth.friction.fc, truth.torque_offset_nm,
                                truth.armature_kg_m2)):
        np.testing.assert_array_equal(pi[fc[:, t]], values)


def test_standard_parameters_of_a_model_with_fewer_friction_terms(arm):
    iiwa = arm("iiwa14")
    robot = iiwa.config.load_model(("FV", "FC"))
    pi = iiwa.truth.standard_parameters(robot)
    np.testing.assert_array_equal(pi[friction_columns(robot)[:, 1]], iiwa.truth.friction.fc)


def _with_dynamics_tags(urdf_text: str) -> str:
    """The iiwa14 URDF with <dynamics damping="0.1·j" friction="0.2·j"/> in revolute joint lbr_Aj."""
    def insert(match: re.Match) -> str:
        j = int(match.group(2))
        return match.group(1) + f'<dynamics damping="{0.1 * j:g}" friction="{0.2 * j:g}"/>'
    patched, count = re.subn(r'(<joint name="lbr_A(\d)" type="revolute">)', insert, urdf_text)
    assert count == 7
    return patched


def test_urdf_dynamics_reads_damping_and_friction(arm):
    """<dynamics damping friction> become fv1 and fc (= fs: no Stribeck rise); links are the URDF's own."""
    iiwa = arm("iiwa14")
    cfg = iiwa.config
    robot = load_robot_model(_with_dynamics_tags(iiwa.urdf_text), cfg.joint_names, cfg.gravity_m_s2, TRUTH_FRICTION)
    truth = urdf_dynamics(robot)
    j = np.arange(1, 8)
    np.testing.assert_allclose(truth.friction.fv1, 0.1 * j)
    np.testing.assert_allclose(truth.friction.fc, 0.2 * j)
    np.testing.assert_allclose(truth.friction.fs, 0.2 * j)
    assert not truth.torque_offset_nm.any() and not truth.armature_kg_m2.any() and truth.payload is None
    dq = np.array([0.5, -0.5, 1e-3, -1e-3, 2.0, 0.0, -3.0])
    np.testing.assert_allclose(truth.friction.torque_nm(dq), 0.1 * j * dq + 0.2 * j * np.sign(dq), atol=1e-12)
    for link, nominal in zip(truth.links, nominal_links(iiwa.robot), strict=True):
        np.testing.assert_allclose(link_standard_parameters(link), link_standard_parameters(nominal), atol=1e-12)


def test_urdf_dynamics_of_a_urdf_without_dynamics_tags(arm):
    iiwa = arm("iiwa14")
    truth = urdf_dynamics(iiwa.robot)
    assert not truth.friction.fv1.any() and not truth.friction.fc.any()
    assert not truth.friction.torque_nm(np.full(7, 0.3)).any()
