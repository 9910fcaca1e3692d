import numpy as np
import pytest

from robot_id_model.coulomb_laws import CoulombLaw

GAZ_PHI2_S_RAD, GAZ_PHI3_RAD_S = 10.136, -0.04607
"""Gaz et al. 2019's sigmoid of the Panda's joint 3"""


def test_the_sigmoid_is_gaz_et_al_s_law_with_fc_half_their_phi1():
    """φ1/(1+e^(−φ2(q̇+φ3))) − φ1/(1+e^(−φ2·φ3)) written from their paper, against the family's tanh form."""
    dq = np.linspace(-1.0, 1.0, 401)
    phi1 = 0.64068
    gaz = phi1 / (1.0 + np.exp(-GAZ_PHI2_S_RAD * (dq + GAZ_PHI3_RAD_S))) - phi1 / (
        1.0 + np.exp(-GAZ_PHI2_S_RAD * GAZ_PHI3_RAD_S))
    law = CoulombLaw("sigmoid", 2.0 / GAZ_PHI2_S_RAD, shift_rad_s=GAZ_PHI3_RAD_S)
    np.testing.assert_allclose(0.5 * phi1 * law.signal(dq), gaz, atol=1e-12)
    assert law.signal(np.array(0.0)) == 0.0
    assert CoulombLaw.from_dict(law.to_dict()) == law


def test_a_sigmoid_without_shift_is_tanh_and_its_formula_reads_back():
    dq = np.linspace(-0.5, 0.5, 101)
    np.testing.assert_allclose(CoulombLaw("sigmoid", 0.05).signal(dq), CoulombLaw("tanh", 0.05).signal(dq))
    law = CoulombLaw("sigmoid", 0.2, shift_rad_s=-0.04)
    assert law.formula() == "(tanh((dq − 0.04)/0.2) + 0.197)"


def test_a_sigmoid_needs_a_velocity():
    with pytest.raises(ValueError, match="velocity"):
        CoulombLaw("sigmoid", 0.0, shift_rad_s=0.01)


def _dahl_along(dq_rad_s: np.ndarray, dt_s: float, travel_rad: float) -> np.ndarray:
    """Dahl's state integrated along a motion, exactly over each sample at its speed, from rest at z = 0."""
    z, out = 0.0, np.empty_like(dq_rad_s)
    for k, v in enumerate(dq_rad_s):
        z = np.sign(v) + (z - np.sign(v)) * np.exp(-abs(v) * dt_s / travel_rad)
        out[k] = z
    return out


def test_presliding_follows_the_dahl_state_through_smooth_reversals():
    """Against Dahl's state integrated sample by sample at each sample's speed: a sine of 0.5 rad at 0.5 Hz,
    x_c = 2 mrad, seen along its positions; sign(dq) is the law without presliding."""
    dt_s = 1e-4
    t_s = np.arange(0.0, 4.0, dt_s)
    w = np.pi
    q, dq = 0.5 * np.sin(w * t_s), 0.5 * w * np.cos(w * t_s)
    truth = _dahl_along(dq, dt_s, 0.002)[len(t_s) // 2:]  # the second half: after the first reversal
    law = CoulombLaw("presliding", travel_rad=0.002)
    approx = law.signal(dq, q)[len(t_s) // 2:]
    assert np.sqrt(np.mean((approx - truth) ** 2)) < 0.001
    assert np.sqrt(np.mean((np.sign(dq[len(t_s) // 2:]) - truth) ** 2)) > 0.1
    assert CoulombLaw.from_dict(law.to_dict()) == law
    with pytest.raises(ValueError, match="positions"):
        law.signal(dq)
