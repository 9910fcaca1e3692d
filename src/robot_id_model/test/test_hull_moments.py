import numpy as np
import pytest
from scipy.spatial import Delaunay

from robot_id_model.hull_moments import uniform_hull_moments


def _rotation(rng: np.random.Generator) -> np.ndarray:
    q = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    return q * np.sign(np.linalg.det(q))


def test_a_rotated_box_has_the_textbook_moments_in_its_own_axes():
    rng = np.random.default_rng(3)
    size_m = np.array([0.1, 0.2, 0.35])
    corners = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)]) * size_m
    rotation, centre_m = _rotation(rng), np.array([0.3, -0.1, 0.7])
    moments = uniform_hull_moments(corners @ rotation.T + centre_m)
    assert moments.volume_m3 == pytest.approx(np.prod(size_m), rel=1e-12)
    np.testing.assert_allclose(moments.centroid_m, centre_m, atol=1e-12)
    np.testing.assert_allclose(rotation.T @ moments.second_moment_per_kg_m2 @ rotation, np.diag(size_m**2 / 12.0),
                               atol=1e-12)


def test_an_irregular_hull_matches_sampling_its_inside():
    """Against a reference built differently: uniform samples kept where they fall inside the hull."""
    rng = np.random.default_rng(7)
    points = rng.normal(size=(40, 3)) * [0.05, 0.03, 0.12] + [0.0, 0.02, 0.1]
    moments = uniform_hull_moments(points)
    low, high = points.min(axis=0), points.max(axis=0)
    samples = rng.uniform(low, high, (400_000, 3))
    inside = samples[Delaunay(points).find_simplex(samples) >= 0]
    assert moments.volume_m3 == pytest.approx(np.prod(high - low) * len(inside) / len(samples), rel=0.01)
    np.testing.assert_allclose(moments.centroid_m, inside.mean(axis=0), atol=3e-4)
    np.testing.assert_allclose(moments.second_moment_per_kg_m2, np.cov(inside.T, bias=True), atol=2e-5, rtol=0.01)


def test_a_flat_set_of_points_is_refused():
    flat = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    with pytest.raises(ValueError, match="no volume"):
        uniform_hull_moments(flat)
