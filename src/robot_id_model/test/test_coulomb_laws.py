import numpy as np
import pytest

from robot_id_model.coulomb_laws import FAMILIES, SIGN, CoulombLaw
from robot_id_model.coulomb_laws.presliding import PreslidingLaw
from robot_id_model.coulomb_laws.sigmoid import SigmoidLaw
from robot_id_model.coulomb_laws.stribeck import StribeckLaw
from robot_id_model.coulomb_laws.tanh import TanhLaw

GAZ_PHI2_S_RAD, GAZ_PHI3_RAD_S = 10.136, -0.04607
"""Gaz et al. 2019's sigmoid of the Panda's joint 3"""


def test_the_sigmoid_is_gaz_et_al_s_law_with_fc_half_their_phi1():
    """φ1/(1+e^(−φ2(q̇+φ3))) − φ1/(1+e^(−φ2·φ3)) written from their paper, against the family's tanh form."""
    dq = np.linspace(-1.0, 1.0, 401)
    phi1 = 0.64068
    gaz = phi1 / (1.0 + np.exp(-GAZ_PHI2_S_RAD * (dq + GAZ_PHI3_RAD_S))) - phi1 / (
        1.0 + np.exp(-GAZ_PHI2_S_RAD * GAZ_PHI3_RAD_S))
    law = SigmoidLaw(2.0 / GAZ_PHI2_S_RAD, shift_rad_s=GAZ_PHI3_RAD_S)
    np.testing.assert_allclose(0.5 * phi1 * law.signal(dq), gaz, atol=1e-12)
    assert law.signal(np.array(0.0)) == 0.0
    assert CoulombLaw.from_dict(law.to_dict()) == law


def test_a_sigmoid_without_shift_is_tanh_and_its_formula_reads_back():
    dq = np.linspace(-0.5, 0.5, 101)
    np.testing.assert_allclose(SigmoidLaw(0.05, 0.0).signal(dq), TanhLaw(0.05).signal(dq))
    assert FAMILIES[SigmoidLaw.extends] is TanhLaw
    law = SigmoidLaw(0.2, shift_rad_s=-0.04)
    assert law.formula() == "(tanh((dq − 0.04)/0.2) + 0.197)"


def test_a_sigmoid_needs_a_velocity():
    with pytest.raises(ValueError, match="velocity"):
        SigmoidLaw(0.0, shift_rad_s=0.01)


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
    law = PreslidingLaw(travel_rad=0.002)
    approx = law.signal(dq, q)[len(t_s) // 2:]
    assert np.sqrt(np.mean((approx - truth) ** 2)) < 0.001
    assert np.sqrt(np.mean((np.sign(dq[len(t_s) // 2:]) - truth) ** 2)) > 0.1
    assert CoulombLaw.from_dict(law.to_dict()) == law
    with pytest.raises(ValueError, match="positions"):
        law.signal(dq)


OLD_FORM = {
    "sign": {"family": "sign", "velocity_rad_s": 0.0, "ratio": 0.0, "shift_rad_s": 0.0, "travel_rad": 0.0},
    "tanh": {"family": "tanh", "velocity_rad_s": 0.05, "ratio": 0.0, "shift_rad_s": 0.0, "travel_rad": 0.0},
    "sigmoid": {"family": "sigmoid", "velocity_rad_s": 0.05, "ratio": 0.0, "shift_rad_s": -0.01, "travel_rad": 0.0},
    "presliding": {"family": "presliding", "velocity_rad_s": 0.0, "ratio": 0.0, "shift_rad_s": 0.0,
                   "travel_rad": 0.002},
    "stribeck": {"family": "stribeck", "velocity_rad_s": 0.04, "ratio": -0.5, "shift_rad_s": 0.0, "travel_rad": 0.0},
}
"""Each family's law as identified.yaml and identification.json held it before each family had its own keys: every
family's shape parameters, those of the others 0."""


def test_laws_written_in_the_old_form_read_back_and_are_written_with_their_own_keys():
    dq = np.array([-0.2, -0.03, 0.0, 0.01, 0.1])
    expected = {"sign": np.sign(dq), "tanh": np.tanh(dq / 0.05),
                "sigmoid": np.tanh((dq - 0.01) / 0.05) - np.tanh(-0.01 / 0.05),
                "stribeck": np.sign(dq) * (1.0 - 0.5 * np.exp(-((dq / 0.04) ** 2)))}
    for family, raw in OLD_FORM.items():
        law = CoulombLaw.from_dict(raw)
        assert type(law) is FAMILIES[family]
        assert law.to_dict() == {"family": family, **{p.name: raw[p.name] for p in law.shape}}
        if family in expected:
            np.testing.assert_allclose(law.signal(dq), expected[family], atol=1e-15)
    assert CoulombLaw.from_dict(OLD_FORM["sign"]) == SIGN
    assert CoulombLaw.from_dict(OLD_FORM["stribeck"]) == StribeckLaw(0.04, -0.5)


def test_a_law_of_no_family_or_out_of_its_bounds_is_refused_by_name():
    with pytest.raises(ValueError, match="'cubic' is not one of sign, tanh, sigmoid, presliding, stribeck"):
        CoulombLaw.from_dict({"family": "cubic"})
    with pytest.raises(ValueError, match="needs travel_rad"):
        CoulombLaw.from_dict({"family": "presliding"})
    with pytest.raises(ValueError, match=r"r \(ratio, .*\) is at least -1, got -1.5"):
        StribeckLaw(0.05, -1.5)
    assert StribeckLaw(0.05, -1.0).signal(np.array(0.0)) == 0.0


def test_every_family_s_candidates_are_of_its_own_and_distinct():
    for name, family in FAMILIES.items():
        candidates = family.candidates()
        assert candidates and all(type(law) is family for law in candidates), name
        assert len(set(candidates)) == len(candidates), name
        assert all(CoulombLaw.from_dict(law.to_dict()) == law for law in candidates), name
