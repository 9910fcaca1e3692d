"""The demo's check against the simulator's truth (truth_check): on the motion the simulated robot follows, a motion
that does not stop at its end is sent ending at rest (the joint trajectory controller's rule), and what is recorded
is the motion itself, the braking tail past it (the demo failed there with a traceback when the rule came in); the
model files are judged as a user loads them, so files that hold the truth check out and the bare URDF does not."""

import dataclasses
import shutil

import numpy as np
import yaml

from robot_id_lab.synthetic import random_motion
from robot_id_lab.truth_check import errors_against_truth, followed
from robot_id_model.robot_config import load_robot_config
from robot_id_sim.true_dynamics import TRUTH_FRICTION, urdf_dynamics
from robot_id_sim.true_friction import JointFriction

IIWA14 = load_robot_config("iiwa14")


def test_a_motion_that_moves_at_its_end_is_followed_and_recorded_without_its_tail():
    truth = urdf_dynamics(IIWA14.load_model(TRUTH_FRICTION))
    period_s = 2.0
    t_s = np.arange(0.0, 2 * period_s + 0.005, 0.01)
    motion = random_motion(IIWA14.load_model(), period_s, 3, t_s % period_s, 7)
    assert np.abs(motion[1][-1]).max() > 0.05                     # it moves at its last point
    run = followed("iiwa14", truth, t_s, motion, period_s, 3, 1, "test")
    assert len(run.t_s) == round(period_s * IIWA14.state_rate_hz)
    expected = random_motion(IIWA14.load_model(), period_s, 3, (run.t_s + period_s) % period_s, 7)[0]
    assert np.abs(run.q_rad - expected).max() < 0.01              # the motion, tracked, not a stop


def test_files_that_hold_the_truth_check_out_and_the_bare_urdf_does_not(tmp_path):
    """The truth: the shipped URDF's links with drive friction (viscous, Coulomb with no Stribeck rise) and sensor
    offsets. Written as identified.urdf (the URDF itself) and identified.yaml (those terms, the sign law), the files
    predict the true sensors' torque to rounding; the bare URDF misses the friction by more than a percent."""
    n = len(IIWA14.joint_names)
    viscous, coulomb, offset = np.linspace(0.8, 0.2, n), np.linspace(1.5, 0.5, n), np.linspace(-0.3, 0.3, n)
    plain = urdf_dynamics(IIWA14.load_model(TRUTH_FRICTION))
    zeros, ones = np.zeros(n), np.ones(n)
    truth = dataclasses.replace(plain, torque_offset_nm=offset,
                                friction=JointFriction(viscous, zeros, zeros, coulomb, ones, coulomb, ones))
    shutil.copy(IIWA14.urdf_path, tmp_path / "identified.urdf")
    friction = {name: {"viscous_nm_s_rad": float(v), "coulomb_nm": float(c), "offset_nm": float(o),
                       "coulomb_law": {"family": "sign"}}
                for name, v, c, o in zip(IIWA14.joint_names, viscous, coulomb, offset, strict=True)}
    (tmp_path / "identified.yaml").write_text(yaml.safe_dump({"friction": friction}))
    errors = errors_against_truth("iiwa14", tmp_path, truth, simulated=False)["true model"]
    assert errors.joint_names == IIWA14.joint_names
    assert np.all(errors.rms_percent_of_torque["identified"] < 1e-6), errors.rms_percent_of_torque["identified"]
    assert np.all(errors.rms_percent_of_torque["urdf"] > 1.0), errors.rms_percent_of_torque["urdf"]
