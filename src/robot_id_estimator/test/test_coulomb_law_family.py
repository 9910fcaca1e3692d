"""A Coulomb-law family added from this test module alone: ExponentialLaw, FC·sign(dq)·(1 − exp(−|dq|/v)),
registered in robot_id_model.coulomb_laws.FAMILIES for these tests only. On data whose Coulomb friction is that law
(written here apart from the class), the estimator's choice finds it, identified.yaml states it and reads back,
identification.json keeps it, the report, the command line's help and the result message name it: no file of the
workspace knows the family."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
import yaml
from estimator_synthetic import iiwa14_setup, random_recording

from robot_id_estimator.__main__ import main
from robot_id_estimator.identify_and_write import identify_and_write
from robot_id_estimator.messages import result_message
from robot_id_estimator.output.model_files import read_friction_laws
from robot_id_estimator.results import identification_from_dict, identification_to_dict
from robot_id_estimator.settings import EstimatorConfig
from robot_id_lab.synthetic import scaled_links
from robot_id_model.coulomb_laws import FAMILIES, CoulombLaw, ShapeParameter
from robot_id_model.parameters import friction_columns

TRUE_VELOCITY_RAD_S = 0.05
"""v of the truth: a point of the family's grid."""
OLD_KEYS = ("velocity_rad_s", "ratio", "shift_rad_s", "travel_rad")
"""The shape keys every law had in files written before each family had its own."""


def _true_law(dq_rad_s: np.ndarray) -> np.ndarray:
    return np.sign(dq_rad_s) * (1.0 - np.exp(-np.abs(dq_rad_s) / TRUE_VELOCITY_RAD_S))


@dataclass(frozen=True)
class ExponentialLaw(CoulombLaw):
    """FC·sign(dq)·(1 − exp(−|dq|/v)): continuous through rest, its level reached within a few v."""

    velocity_rad_s: float

    family = "exponential"
    shape = (ShapeParameter("velocity_rad_s", "v", "rad/s", "the speed of its rise", minimum=0.0),)
    general = "sign(dq)·(1 − exp(−|dq|/v))"

    def signal(self, dq_rad_s: np.ndarray, q_rad: np.ndarray | None = None) -> np.ndarray:
        dq = np.asarray(dq_rad_s, dtype=float)
        return np.sign(dq) * -np.expm1(-np.abs(dq) / self.velocity_rad_s)

    def formula(self) -> str:
        return f"sign(dq)·(1 − exp(−|dq|/{self.velocity_rad_s:.3g}))"

    @classmethod
    def candidates(cls) -> tuple[CoulombLaw, ...]:
        return tuple(cls(float(v)) for v in np.geomspace(0.005, 0.5, 11))  # a factor 1.58 apart, 0.05 among them


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The iiwa14 with FC·_true_law at every joint, identified and written; the family registered until the module's
    tests end."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(FAMILIES, ExponentialLaw.family, ExponentialLaw)
        setup = iiwa14_setup()
        robot = setup.model(("FV", "FC", "FO"))
        pi = scaled_links(robot, seed=3)
        fc_column = friction_columns(robot)[:, robot.friction.index("FC")]
        rigid = pi.copy()
        rigid[fc_column] = 0.0
        recordings = [random_recording(robot, rigid, 2, seed=seed, period_s=10.0, rate_hz=200.0,
                                       torque_filter_time_constant_s=setup.torque_filter_time_constant_s,
                                       tau_noise_nm=0.05, q_noise_rad=1e-5, noise_seed=seed + 1, source=f"exp {seed}",
                                       joint_friction=lambda dq: pi[fc_column] * _true_law(dq))
                      for seed in (0, 7)]
        out = tmp_path_factory.mktemp("exponential")
        yield identify_and_write(recordings, setup, EstimatorConfig(), out), setup


def test_the_new_family_is_chosen_on_its_data_and_its_files_hold(written):
    run, _ = written
    result = run.result
    laws = result.friction.laws()
    found = [j for j, law in enumerate(laws) if type(law) is ExponentialLaw]
    assert len(found) >= 5, result.friction.law_choice.describe(result.friction.joint_names)
    for j in found:  # v within one step of its grid
        assert abs(np.log(laws[j].velocity_rad_s / TRUE_VELOCITY_RAD_S)) < np.log(1.6), laws[j]
        low, high = result.friction.law_choice.interval_rad_s[j]
        assert low <= laws[j].velocity_rad_s <= high
    assert run.exit_code == 0 and run.files_hold  # identified.urdf and .yaml reproduce the identified torque


def test_identified_yaml_states_the_new_law_and_reads_back(written):
    run, setup = written
    result = run.result
    friction = yaml.safe_load(run.model_files.yaml.read_text())["friction"]
    laws = result.friction.laws()
    read = read_friction_laws(run.model_files.yaml, setup.joint_names)
    dq = np.linspace(-0.3, 0.3, 61)
    for j, name in enumerate(setup.joint_names):
        stated = friction[name]["coulomb_law"]
        assert stated["form"] == f"coulomb_nm·{laws[j].formula()}"
        assert read[j].coulomb_law == laws[j]
        if type(laws[j]) is ExponentialLaw:
            assert set(stated) == {"form", "family", "velocity_rad_s", "velocity_range_rad_s"}
            assert stated["family"] == "exponential"
            # the file's numbers evaluated here, against the law as read back
            v, fc, fv, fo = (stated["velocity_rad_s"], friction[name]["coulomb_nm"],
                             friction[name]["viscous_nm_s_rad"], friction[name]["offset_nm"])
            by_hand = fv * dq + fc * np.sign(dq) * (1.0 - np.exp(-np.abs(dq) / v)) + fo
            np.testing.assert_allclose(read[j].torque_nm(np.zeros_like(dq), dq, np.zeros_like(dq)), by_hand,
                                       atol=1e-12)
    raw = identification_to_dict(result)
    again = identification_from_dict(raw)
    assert again.friction.laws() == laws
    # the shipped families' candidates as identification.json held them before each family had its own keys
    raw["friction"]["law_choice"]["candidates"] = [
        law if law["family"] == "exponential" else {"family": law["family"], **dict.fromkeys(OLD_KEYS, 0.0), **law}
        for law in raw["friction"]["law_choice"]["candidates"]]
    assert identification_from_dict(raw).friction.law_choice.candidates == result.friction.law_choice.candidates


def test_the_report_help_and_message_name_the_new_law(written, capsys):
    run, _ = written
    result = run.result
    law = next(law for law in result.friction.laws() if type(law) is ExponentialLaw)
    friction_section = run.report.read_text().split('id="friction"')[1].split("</section>")[0]
    assert law.formula() in friction_section
    assert '<img src="data:image/png;base64,' in friction_section
    message = result_message(result, "out")
    for joint, chosen in zip(message.friction, result.friction.laws(), strict=True):
        assert joint.coulomb_law == chosen.family
        assert list(joint.coulomb_shape_names) == [p.name for p in chosen.shape]
        np.testing.assert_array_equal(joint.coulomb_shape_values, chosen.shape_values())
    assert EstimatorConfig(coulomb_law="exponential").coulomb_law == "exponential"  # a setting of its own
    with pytest.raises(SystemExit):
        main(["identify", "--help"])
    assert "exponential: sign(dq)·(1 − exp(−|dq|/v)), v [rad/s]" in " ".join(capsys.readouterr().out.split())
