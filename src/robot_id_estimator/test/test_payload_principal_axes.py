"""The principal axes' determination against draws built differently: the load's inertia turned by known angles about
one of its axes, with two moments that change places from draw to draw, so that each axis's angle, KUKA's A and the
moments' gap are known whatever order and sign the eigenvectors come in."""

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from robot_id_estimator.payload.principal_axes import principal_axes

MOMENTS_KG_M2 = np.array([5e-3, 5.1e-3, 9e-3])
TURN_DEG = 30.0
"""The load's principal axes are its frame's turned about z: KUKA's A = 30 deg, B = C = 0."""


def _about_z(angle_rad: np.ndarray | float) -> np.ndarray:
    return Rotation.from_rotvec(np.multiply.outer(angle_rad, [0.0, 0.0, 1.0])).as_matrix()


@pytest.fixture(scope="module")
def draws():
    """2000 draws: the two smaller moments each ± 0.1 g m² (they change places in a quarter of the draws), the axes
    turned by 5 deg (one standard deviation) about z."""
    rng = np.random.default_rng(0)
    angle = np.deg2rad(TURN_DEG + rng.normal(0.0, 5.0, 2000))
    moments = MOMENTS_KG_M2 + np.column_stack([rng.normal(0.0, 1e-4, (2000, 2)), np.zeros(2000)])
    turned = _about_z(angle)
    return angle, moments, np.einsum("nij,nj,nkj->nik", turned, moments, turned)


def test_each_axis_spreads_by_the_angle_it_was_turned_whatever_order_the_moments_come_in(draws):
    angle, moments, drawn = draws
    assert np.mean(moments[:, 0] > moments[:, 1]) > 0.2  # the eigenvectors come swapped in these
    axes = principal_axes(_about_z(np.deg2rad(TURN_DEG)) @ np.diag(MOMENTS_KG_M2) @ _about_z(np.deg2rad(TURN_DEG)).T,
                          drawn)
    turn_deg = np.rad2deg(angle) - TURN_DEG
    rms_deg = float(np.sqrt(np.mean(turn_deg**2)))
    np.testing.assert_allclose(axes.spread_deg, [rms_deg, rms_deg, 0.0], atol=1e-5)
    assert axes.rotation_spread_deg == pytest.approx(rms_deg, abs=1e-5)
    np.testing.assert_allclose(axes.abc_spread_deg, [rms_deg, 0.0, 0.0], atol=1e-5)
    # along the load's axes the drawn gap between moments 1 and 2 is (m2 - m1)·cos 2φ, φ the turn
    gap_sigma = np.std((moments[:, 1] - moments[:, 0]) * np.cos(2.0 * np.deg2rad(turn_deg)))
    assert axes.gap_sigmas[0] == pytest.approx(1e-4 / gap_sigma, rel=1e-6)
    assert axes.unresolved == (True, False) and axes.determined == (False, False, True)


def test_the_arm_models_error_or_no_rigid_body_leaves_the_axes_open():
    """Moments 0.1, 5 and 10 g m², drawn within 0.01 g m²: the axes determined, unless the arm model's error could
    move moments 2 and 3 by 3 and 2 g m² (more than their gap), or the load is no rigid body; no draws: none."""
    noise = np.random.default_rng(1).normal(0.0, 1e-5, (500, 3, 3))
    inertia = np.diag([1e-4, 5e-3, 1e-2])
    drawn = inertia + (noise + noise.transpose(0, 2, 1)) / 2.0
    assert principal_axes(inertia, drawn).all_determined
    assert principal_axes(inertia, drawn, np.array([0.0, 3e-3, 2e-3])).unresolved == (False, True)
    assert principal_axes(inertia, drawn, rigid_body=False).determined == (False, False, False)
    nothing = principal_axes(inertia, np.zeros((0, 3, 3)))
    assert nothing.determined == (False, False, False) and np.all(np.isinf(nothing.spread_deg))
