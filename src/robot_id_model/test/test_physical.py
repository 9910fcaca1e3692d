import numpy as np
import pytest
from conftest import random_arm_urdf

from robot_id_model import (
    LinkInertial,
    consistency_violations,
    load_robot_model,
    nominal_parameters,
    physical_from_vector,
    standard_vector,
)
from robot_id_model.physical import (
    com_inertia_jacobian,
    inertia_matrix,
    link_from_standard,
    link_standard_parameters,
    pseudo_inertia,
    relative_margin,
)


def _random_link(rng) -> LinkInertial:
    a, b = rng.uniform(0.01, 0.1, 2)
    c = rng.uniform(abs(a - b) + 1e-3, a + b - 1e-3)
    rot = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    return LinkInertial(rng.uniform(0.1, 10), rng.uniform(-0.2, 0.2, 3), rot @ np.diag([a, b, c]) @ rot.T)


def test_physical_standard_physical_round_trip():
    rng = np.random.default_rng(1)
    for _ in range(50):
        link = _random_link(rng)
        back = link_from_standard(link_standard_parameters(link))
        assert back.mass_kg == link.mass_kg
        np.testing.assert_allclose(back.com_m, link.com_m, rtol=0, atol=1e-15)
        np.testing.assert_allclose(back.inertia_com_kg_m2, link.inertia_com_kg_m2, rtol=0, atol=1e-15)


def test_parallel_axis_theorem_of_a_point_mass():
    pi = link_standard_parameters(LinkInertial(2.0, np.array([0.0, 0.0, 0.5]), np.zeros((3, 3))))
    np.testing.assert_allclose(pi, [2.0, 0.0, 0.0, 1.0, 0.5, 0.0, 0.0, 0.5, 0.0, 0.0])


def test_vector_round_trip_keeps_friction_and_matches_urdf():
    robot = load_robot_model(random_arm_urdf(5, seed=2), friction=("FV", "FC", "FO"))
    pi = nominal_parameters(robot)
    links, friction = physical_from_vector(robot, pi)
    assert friction.shape == (5, 3)
    np.testing.assert_allclose(standard_vector(robot, links, friction), pi, rtol=0, atol=1e-14)
    assert links[0].mass_kg == pytest.approx(robot.model.inertias[1].mass)
    np.testing.assert_allclose(links[2].com_m, robot.model.inertias[3].lever, atol=1e-15)


def test_consistent_links_pass_every_check():
    rng = np.random.default_rng(3)
    for _ in range(20):
        link = _random_link(rng)
        assert consistency_violations(link) == []
        assert np.linalg.eigvalsh(pseudo_inertia(link_standard_parameters(link)))[0] > 0


@pytest.mark.parametrize(
    ("link", "reason"),
    [
        (LinkInertial(-1.0, np.zeros(3), np.eye(3) * 0.01), "mass -1 kg is not positive"),
        (LinkInertial(1.0, np.zeros(3), np.diag([0.01, 0.01, -0.001])), "not positive definite"),
        (LinkInertial(1.0, np.zeros(3), np.diag([0.1, 0.01, 0.01])), "triangle inequality violated"),
        (LinkInertial(1.0, np.zeros(3), np.array([[0.01, 0.002, 0], [0, 0.01, 0], [0, 0, 0.01]])), "not symmetric"),
    ],
)
def test_broken_links_are_reported_with_the_reason(link, reason):
    violations = consistency_violations(link)
    assert any(reason in v for v in violations), violations


def test_pseudo_inertia_is_indefinite_for_a_triangle_violation():
    link = LinkInertial(1.0, np.zeros(3), np.diag([0.1, 0.01, 0.01]))
    assert np.linalg.eigvalsh(pseudo_inertia(link_standard_parameters(link)))[0] < 0


def test_relative_margin_is_a_third_for_a_ball_and_zero_for_a_rod():
    assert relative_margin(0.4 * 2.0 * 0.1**2 * np.eye(3)) == pytest.approx(1.0 / 3.0)
    assert relative_margin(np.diag([0.02, 0.02, 0.0])) == pytest.approx(0.0, abs=1e-15)
    # a box 0.1 × 0.2 × 0.4 m: Σ_C holds the second moments m·l²/12 along each axis
    m, sides = 2.0, np.array([0.1, 0.2, 0.4])
    second = m * sides**2 / 12.0
    inertia = np.diag([second[1] + second[2], second[0] + second[2], second[0] + second[1]])
    assert relative_margin(inertia) == pytest.approx(second.min() / second.sum())


def test_com_inertia_jacobian_is_the_inverse_parallel_axis_theorem_and_its_derivative():
    rng = np.random.default_rng(4)
    link = _random_link(rng)
    pi_link = link_standard_parameters(link)
    six, jac = com_inertia_jacobian(pi_link)
    np.testing.assert_allclose(inertia_matrix(six), link.inertia_com_kg_m2, atol=1e-14)
    numeric = np.empty((6, 10))
    for k in range(10):
        step = np.zeros(10)
        step[k] = 1e-6
        numeric[:, k] = (com_inertia_jacobian(pi_link + step)[0] - com_inertia_jacobian(pi_link - step)[0]) / 2e-6
    np.testing.assert_allclose(jac, numeric, atol=1e-7)
