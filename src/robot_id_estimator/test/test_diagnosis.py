"""When the model explains the data less well than it should, the mistake a lab makes is named with its evidence."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from estimator_synthetic import CONFIG_DIR, IIWA14, WITHOUT_PHYSICAL, iiwa14_setup, write_without_physical

from robot_id_estimator.__main__ import main
from robot_id_estimator.pipeline import identify
from robot_id_estimator.recordings.recording import save_csv
from robot_id_estimator.recordings.synthetic import random_recording, urdf_with_friction
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_model.robot_config import load_robot_config

SETUP = iiwa14_setup()
ROBOT = SETUP.model(("FV", "FC", "FO"))


def _recording(time_constant_s: float = SETUP.torque_filter_time_constant_s):
    """Three 10 s periods of the iiwa14 at 200 Hz with 0.05 Nm torque noise."""
    return random_recording(ROBOT, urdf_with_friction(ROBOT), 3, seed=3, period_s=10.0, rate_hz=200.0,
                            torque_filter_time_constant_s=time_constant_s, tau_noise_nm=0.05, q_noise_rad=1e-5,
                            noise_seed=1, source="sim")


def _with(rec, field: str, joint: int, change):
    x = getattr(rec, field).copy()
    x[:, joint] = change(x[:, joint])
    return dataclasses.replace(rec, **{field: x})


def _diagnoses(rec, setup=SETUP) -> list[str]:
    result = identify([rec], setup, WITHOUT_PHYSICAL, allow_outside_limits=True, allow_implausible_torque=True)
    return [w for w in result.warnings if w.startswith("diagnosis:")]


def test_clean_data_get_no_diagnosis():
    assert _diagnoses(_recording()) == []


@pytest.mark.parametrize(("mistake", "expected"), [
    ("a flipped torque sign on the lightly loaded A5", "diagnosis: lbr_A5's torque has the wrong sign?"),
    ("an A3 encoder counting the other way", "diagnosis: lbr_A3's encoder counts the other way"),
    ("A2 off by 0.3 rad", "diagnosis: lbr_A2's position is off by a constant +0.3"),
])
def test_a_mistake_in_the_data_is_named(mistake, expected):
    rec = _recording()
    rec = {"a flipped torque sign on the lightly loaded A5": lambda: _with(rec, "tau_nm", 4, np.negative),
           "an A3 encoder counting the other way": lambda: _with(rec, "q_rad", 2, np.negative),
           "A2 off by 0.3 rad": lambda: _with(rec, "q_rad", 1, lambda q: q + 0.3)}[mistake]()
    found = _diagnoses(rec)
    assert len(found) == 1 and found[0].startswith(expected), found
    assert "with that corrected" in found[0]


@pytest.mark.parametrize(("robot_ms", "configured_ms"), [(16, 0), (0, 16)])
def test_a_torque_filter_time_constant_that_does_not_match_the_robot_is_named(robot_ms, configured_ms):
    rec = _recording(robot_ms / 1000.0)
    setup = dataclasses.replace(SETUP, torque_filter_time_constant_s=configured_ms / 1000.0)
    (found,) = _diagnoses(rec, setup)
    assert found.startswith(f"diagnosis: the robot filters its torque with a time constant of about {robot_ms} ms, "
                            f"not the configured {configured_ms} ms?")


def test_five_seconds_of_an_excitation_are_named_too_little_with_the_seconds_needed():
    rec = random_recording(ROBOT, urdf_with_friction(ROBOT), 1, seed=3, period_s=10.0, rate_hz=200.0,
                           torque_filter_time_constant_s=SETUP.torque_filter_time_constant_s, tau_noise_nm=0.05,
                           q_noise_rad=1e-5, noise_seed=1, source="sim")
    first = rec.t_s < 5.0
    short = dataclasses.replace(rec, t_s=rec.t_s[first], q_rad=rec.q_rad[first], tau_nm=rec.tau_nm[first])
    (found,) = _diagnoses(short)
    assert found.startswith("diagnosis: too little excitation? The base set predicts held-out data far worse")
    assert "base parameters have an RSD above 40 %" in found and "s of data like these would bring" in found


def test_the_config_of_another_arm_on_good_data_is_named_as_a_model_that_misses_something():
    iiwa7 = RobotSetup.from_config(load_robot_config(CONFIG_DIR / "iiwa7.yaml"))
    (found,) = _diagnoses(_recording(), iiwa7)  # iiwa14 data: the fit looks good, the generalisation does not
    assert found.startswith("diagnosis: the model misses something the data hold? The base set predicts held-out "
                            "data far worse than the data it was fitted to")
    assert "though the data determine every essential parameter" in found and "another arm's kinematics" in found


def test_the_command_line_prints_the_diagnosis_as_a_warning(tmp_path, capsys):
    rec = _with(_recording(), "q_rad", 2, np.negative)
    csv = save_csv(rec, tmp_path / "encoder.csv")
    main(["identify", "--robot", str(IIWA14), "--data", str(csv), "--out", str(tmp_path / "out"),
          "--config", str(write_without_physical(tmp_path))])
    assert "warning: diagnosis: lbr_A3's encoder counts the other way" in capsys.readouterr().err
    assert "lbr_A3's encoder counts the other way" in (tmp_path / "out" / "report.md").read_text()
