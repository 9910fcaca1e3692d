"""Physical parameters through the whole pipeline: noise-free ground truth, both methods. Each identification
predicts one other period (validation_recordings) instead of refitting every set on five time blocks, and holds the
Coulomb law at the one simulated (sign): the held-out refits are test_held_out_check's, the law's choice
test_coulomb_law's."""

import dataclasses

import numpy as np
import pytest
from estimator_synthetic import iiwa14_setup, simulated_recording

from robot_id_estimator.physical.problem import default_bounds
from robot_id_estimator.pipeline import identify
from robot_id_estimator.settings import EstimatorConfig, PhysicalConfig
from robot_id_estimator.validate import validate
from robot_id_lab.synthetic import random_motion, urdf_with_friction
from robot_id_model import regressor
from robot_id_model.parameters import inertial_columns
from robot_id_model.physical import consistency_violations, pseudo_inertia


@pytest.fixture(scope="module")
def arm():
    setup = iiwa14_setup()
    robot = setup.model(("FV", "FC", "FO"))
    pi = urdf_with_friction(robot)
    data = simulated_recording(robot, setup, pi, 4, tau_noise_nm=0.0, q_noise_rad=0.0)
    return setup, robot, pi, data


@pytest.fixture(scope="module")
def check(arm):
    """One period of another motion, for the check on data not fitted."""
    setup, robot, pi, _data = arm
    return [simulated_recording(robot, setup, pi, 1, seed=9, tau_noise_nm=0.0, q_noise_rad=0.0)]


def _identify(arm, check, physical: PhysicalConfig | None = None):
    """The arm's data identified with the sign law (and `physical`, else the default), checked on `check`."""
    setup, _robot, _pi, data = arm
    config = EstimatorConfig(coulomb_law="sign", physical=physical or PhysicalConfig())
    return identify([data], setup, config, validation_recordings=check)


def _validation_error(robot, pi_true, result) -> np.ndarray:
    """Per-joint torque RMS error of the physical parameters on a different trajectory, over its torque RMS."""
    t = np.arange(0.0, 10.0, 0.005)
    y = regressor(robot, *random_motion(robot, 10.0, 5, t, seed=7))
    tau = y @ pi_true
    error = y @ result.physical.standard_values - tau
    return np.sqrt(np.mean(error**2, axis=0)) / np.sqrt(np.mean(tau**2, axis=0))


@pytest.mark.parametrize("method", ["lmi", "multistart"])
def test_noise_free_data_give_the_true_torques_from_consistent_links(arm, check, method):
    _setup, robot, pi, data = arm
    result = _identify(arm, check, PhysicalConfig(method=method, starts=2))
    physical = result.physical
    assert physical.violations == ()
    for name, link in zip(physical.link_names, physical.links, strict=True):
        assert consistency_violations(link) == [], name
    assert all(np.linalg.eigvalsh(pseudo_inertia(physical.standard_values[c]))[0] > 0
               for c in inertial_columns(robot))
    # noise-free: the unconstrained residual is ~0, so bound the residual by the torque it explains instead
    tau_norm_one_period = np.linalg.norm(data.tau_nm) / np.sqrt(4)
    assert physical.residual_norm_nm < 0.01 * tau_norm_one_period
    assert np.all(_validation_error(robot, pi, result) < 0.01)


def test_validate_reports_the_physical_set(arm, check):
    setup, robot, pi, _data = arm
    result = _identify(arm, check)
    other = simulated_recording(robot, setup, pi, 2, seed=5, tau_noise_nm=0.0, q_noise_rad=0.0)
    validation = validate(result, [other])
    assert set(validation.rms_nm) == {"base", "essential", "physical", "urdf"}
    assert np.all(validation.rms_nm["physical"] < 0.01 * validation.torque_rms_nm)
    # the true model differs from the URDF model by its friction only: the URDF model is far worse
    assert np.all(validation.rms_nm["urdf"] > 10 * validation.rms_nm["physical"])
    assert np.allclose(validation.rms_percent_of_torque["urdf"],
                       100 * validation.rms_nm["urdf"] / validation.torque_rms_nm)


def test_bounds_from_the_config_bind(arm, check):
    _setup, robot, pi, _data = arm
    total = float(pi[inertial_columns(robot)[:, 0]].sum())
    nominal_total = sum(default_bounds(robot).mass_upper_kg) / 2.0  # mass_factor (0.5, 2.0) around the URDF
    assert total == pytest.approx(nominal_total, rel=1e-9)
    result = _identify(arm, check, PhysicalConfig(total_mass_factor=(0.5, 0.9), tool_mass_kg=0.0))  # no tool
    physical = result.physical
    masses = physical.standard_values[inertial_columns(robot)[:, 0]]
    assert masses.sum() == pytest.approx(0.9 * total, rel=1e-6)
    assert physical.residual_increase_percent > 2.0
    assert physical.violations == ()
    # the data push against the total mass bound: the plausibility report lists it and the user is warned
    assert any(a.startswith("total mass ≤") for a in physical.plausibility.active)
    assert any(w.startswith("physical parameters on a bound (the data pushed against it): total mass ≤")
               for w in result.warnings)


def test_the_physical_section_can_be_switched_off(arm, check):
    result = _identify(arm, check, PhysicalConfig(method="none"))
    assert result.physical is None and result.parameter_sets == ("base", "essential")


def test_a_method_whose_set_violates_a_constraint_is_replaced_by_the_other(arm, check, monkeypatch):
    import robot_id_estimator.physical.retrieval as retrieval

    real = retrieval.retrieve_lmi

    def violating(*args, **kwargs):
        return dataclasses.replace(real(*args, **kwargs), violations=("Izz3 ≤ Ixx3 + Iyy3 (eq. 18) violated by 0.1",))

    monkeypatch.setattr(retrieval, "retrieve_lmi", violating)
    result = _identify(arm, check, PhysicalConfig(starts=2))
    assert result.physical.method == "multistart" and result.physical.violations == ()
    assert result.physical.notes[0] == ("lmi did not meet every constraint (Izz3 ≤ Ixx3 + Iyy3 (eq. 18) violated by "
                                        "0.1); multistart did")
    assert result.passed("physical")


def test_constraints_no_method_can_meet_fail_the_stage_loudly_with_the_amounts(arm, check):
    result = _identify(arm, check, PhysicalConfig(mass_factor=(0.9, 2.0), total_mass_factor=(0.5, 0.6), starts=2,
                                                  tool_mass_kg=0.0))
    assert result.physical is None and not result.passed("physical")
    failure = result.checks["physical"].failures[0]
    assert failure.startswith("physical parameters not retrieved: no method met every constraint: lmi: total mass ≤")
    assert "; multistart: " in failure and " violated by " in failure
    assert failure in result.warnings
