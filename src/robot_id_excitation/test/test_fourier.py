"""Finite and modified Fourier series: analytic derivatives, rest at the period ends, files."""

import json

import numpy as np
import pytest

from robot_id_excitation.fourier import FourierTrajectory, basis, rest_null_space
from robot_id_excitation.trajectory_file import load_trajectory, save_trajectory

JOINTS = ("j1", "j2", "j3")


def random_coefficients(n: int, harmonics: int, scale: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return scale * rng.normal(size=(n, harmonics)), scale * rng.normal(size=(n, harmonics))


def _trajectory(kind: str, scale: float = 0.5, seed: int = 0, harmonics: int = 5) -> FourierTrajectory:
    a, b = random_coefficients(3, harmonics, scale, seed)
    return FourierTrajectory(kind, "arm", JOINTS, 0.05, a, b, np.array([0.1, -0.4, 1.2]))


@pytest.mark.parametrize("kind", ["fourier", "modified_fourier"])
def test_velocity_and_acceleration_are_the_derivatives_of_position(kind):
    traj = _trajectory(kind)
    t = np.linspace(0.3, 19.7, 50)
    h = 1e-5
    q_plus, dq_plus, _ = traj.evaluate(t + h)
    q_minus, dq_minus, _ = traj.evaluate(t - h)
    _, dq, ddq = traj.evaluate(t)
    assert np.abs((q_plus - q_minus) / (2 * h) - dq).max() < 1e-6
    assert np.abs((dq_plus - dq_minus) / (2 * h) - ddq).max() < 1e-6


def test_finite_series_matches_xu2020_eq_8():
    traj = _trajectory("fourier")
    t = np.array([0.0, 3.3, 11.0])
    w = 2 * np.pi * 0.05
    ell = np.arange(1, 6)
    expected = traj.offsets_rad + np.array([
        [np.sum(traj.coefficients_a[i] / (w * ell) * np.sin(w * ell * tk)
                - traj.coefficients_b[i] / (w * ell) * np.cos(w * ell * tk)) for i in range(3)]
        for tk in t
    ])
    assert np.allclose(traj.evaluate(t)[0], expected, atol=1e-12)


def test_modified_series_is_at_rest_at_q0_at_both_ends_to_1e_12():
    for seed in range(5):
        traj = _trajectory("modified_fourier", scale=3.0, seed=seed)
        for t in (0.0, traj.period_s, 2 * traj.period_s):
            q, dq, ddq = traj.evaluate(np.array([t]))
            assert np.abs(q[0] - traj.offsets_rad).max() <= 1e-12
            assert np.abs(dq).max() <= 1e-12 and np.abs(ddq).max() <= 1e-12
        # approaching the end from inside the period (the quintic branch at s -> 1): continuous to rest
        eps = 1e-6
        q, dq, ddq = traj.evaluate(np.array([traj.period_s - eps]))
        assert np.abs(q[0] - traj.offsets_rad).max() < 1e-12 and np.abs(dq).max() < 1e-10
        assert np.abs(ddq).max() < 100 * eps


def test_modified_series_keeps_the_fourier_part_between_the_ends():
    """The correction is a quintic in t: the sixth derivative of q equals the Fourier part's."""
    mfs, ffs = _trajectory("modified_fourier"), _trajectory("fourier")
    t = np.linspace(2.0, 18.0, 9)
    diff = mfs.evaluate(t)[2] - ffs.evaluate(t)[2]
    # acceleration of the correction is a cubic: its fourth finite difference on a uniform grid vanishes
    assert np.abs(np.diff(diff, n=4, axis=0)).max() < 1e-9
    assert np.abs(diff).max() > 1e-3


def test_finite_series_with_xu2020_eq_10_coefficients_starts_at_rest():
    null = rest_null_space(5)
    assert null.shape == (10, 7)
    rng = np.random.default_rng(3)
    c = null @ rng.normal(size=(7, 3))
    traj = FourierTrajectory.from_coefficients("fourier", "arm", JOINTS, 0.05, c, np.array([0.1, 0.2, 0.3]))
    q, dq, ddq = traj.evaluate(np.array([0.0, 20.0]))
    assert np.abs(q - traj.offsets_rad).max() < 1e-12 and np.abs(dq).max() < 1e-12 and np.abs(ddq).max() < 1e-12
    free = _trajectory("fourier")
    assert np.abs(free.evaluate(np.array([0.0]))[1]).max() > 1e-3


def test_basis_is_periodic_and_linear_in_the_coefficients():
    b = basis(np.array([1.0, 21.0]), 0.05, 3, "modified_fourier")
    assert np.allclose(b.q_rad[0], b.q_rad[1]) and np.allclose(b.ddq_rad_s2[0], b.ddq_rad_s2[1])
    with pytest.raises(ValueError, match="kind"):
        basis(np.zeros(1), 0.05, 3, "spline")


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_file_round_trip(tmp_path, suffix):
    traj = _trajectory("modified_fourier")
    path = save_trajectory(traj, tmp_path / f"traj{suffix}", {"criteria": {"condition_number": 50.0}})
    back = load_trajectory(path)
    assert back.kind == traj.kind and back.joint_names == JOINTS and back.robot == "arm"
    assert back.base_frequency_hz == traj.base_frequency_hz and back.harmonics == 5
    t = np.linspace(0, 40, 77)
    assert all(np.array_equal(x, y) for x, y in zip(back.evaluate(t), traj.evaluate(t), strict=True))
    if suffix == ".json":
        assert json.loads(path.read_text())["period_s"] == 20.0


def test_bad_files_give_clear_errors(tmp_path):
    data = _trajectory("fourier").to_dict()
    (tmp_path / "missing.json").write_text(json.dumps({k: v for k, v in data.items() if k != "offsets_rad"}))
    with pytest.raises(ValueError, match="offsets_rad"):
        load_trajectory(tmp_path / "missing.json")
    (tmp_path / "kind.json").write_text(json.dumps(data | {"kind": "spline"}))
    with pytest.raises(ValueError, match="unknown trajectory kind 'spline'"):
        load_trajectory(tmp_path / "kind.json")
    (tmp_path / "shape.json").write_text(json.dumps(data | {"offsets_rad": [0.0]}))
    with pytest.raises(ValueError, match=r"offsets \(3,\)"):
        load_trajectory(tmp_path / "shape.json")
    with pytest.raises(FileNotFoundError):
        load_trajectory(tmp_path / "nothing.yaml")
