"""A URDF's <dynamics> are reported, never trusted: shipped URDFs carry placeholders there (lbr_description: damping
10, friction 0.1 on every joint; other arms damping 1, friction 10), and the torque check against the URDF refuses
only what is certainly wrong (units, a flipped sign) and warns about the rest. The Coulomb law is held at the one
simulated (sign): its choice is test_coulomb_law's."""


import numpy as np
import pytest
from estimator_synthetic import iiwa14_setup, simulated_recording

from robot_id_estimator.pipeline import identify
from robot_id_estimator.processing.input_checks import check_torque_against_urdf
from robot_id_estimator.recordings.recording import DataError
from robot_id_estimator.settings import EstimatorConfig
from robot_id_estimator.validate import validate
from robot_id_lab.synthetic import urdf_with_friction

JOINTS = [f"lbr_A{j}" for j in range(1, 8)]


@pytest.mark.parametrize(("damping", "friction"), [(10.0, 0.1), (1.0, 10.0)])
def test_placeholder_dynamics_do_not_refuse_correct_data_and_are_named(damping, friction, tmp_path):
    setup = iiwa14_setup()
    robot = setup.model(("FV", "FC", "FO"))
    pi = urdf_with_friction(robot)
    recording, check = (simulated_recording(robot, setup, pi, 2),
                         simulated_recording(robot, setup, pi, 1, seed=7, tau_noise_nm=0.0, q_noise_rad=0.0))
    shipped = tmp_path / "iiwa14.urdf"
    shipped.write_text(open(setup.urdf_path).read().replace(
        "</joint>", f'<dynamics damping="{damping}" friction="{friction}"/></joint>'))
    result = identify([recording], setup.with_urdf(shipped), EstimatorConfig(coulomb_law="sign"))
    note = next(n for n in result.metrics.notes if n.startswith("the URDF's friction values"))
    assert f"damping {damping:g} Nm·s/rad, friction {friction:g} Nm on every joint" in note and "placeholders" in note
    assert not [w for w in result.warnings if "URDF's rigid-body model" in w]
    errors = validate(result, [check]).rms_percent_of_torque
    assert np.all(errors["physical"] < 2.0), errors["physical"]


def _torques(rows: int = 500) -> np.ndarray:
    t = np.linspace(0.0, 10.0, rows)[:, None]
    return np.sin(t * np.arange(1, 8)) * np.array([30.0, 60.0, 20.0, 25.0, 3.0, 2.0, 0.5]) + 1.0


@pytest.mark.parametrize(("factor", "joint"), [(1000.0, 0), (1e-3, 1), (57.3, 2), (1.0 / 57.3, 3), (-1.0, 1)])
def test_units_and_a_flipped_sign_on_a_loaded_joint_are_refused(factor, joint):
    model = _torques()
    measured = model.copy()
    measured[:, joint] *= factor
    with pytest.raises(DataError, match=rf"the torque cannot be this robot's: {JOINTS[joint]} ") as refused:
        check_torque_against_urdf("log.csv", measured, model, JOINTS)
    assert "; check the units (Nm), signs and joint order, and the robot;" in str(refused.value)


@pytest.mark.parametrize(("factor", "warned"), [(0.25, True), (4.0, True), (1.3, False), (0.8, False)])
def test_a_torque_far_from_the_urdf_but_not_a_unit_error_is_a_warning(factor, warned):
    model = _torques()
    measured = model.copy()
    measured[:, 1] *= factor
    warnings = check_torque_against_urdf("log.csv", measured, model, JOINTS)
    assert bool(warnings) == warned
    if warned:
        assert warnings[0].startswith("log.csv: the torque differs from the URDF's rigid-body model: lbr_A2 (")


def test_a_flipped_sign_on_a_joint_the_urdf_barely_loads_is_warned_not_refused():
    """Friction may dominate such a joint, so its correlation with the rigid-body model proves nothing: a warning
    that names the likely mistake (a user's flipped wrist sign otherwise showed only as a failed physical check)."""
    model = _torques()
    measured = model.copy()
    measured[:, 6] *= -1.0  # 0.5 Nm against 60: below LOADED_FRACTION
    (warning,) = check_torque_against_urdf("log.csv", measured, model, JOINTS)
    assert "lbr_A7 (lightly loaded, correlation -1.00: a flipped sign?)" in warning
