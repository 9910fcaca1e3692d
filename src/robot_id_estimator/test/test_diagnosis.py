"""When the model explains the data less well than it should, the mistake a lab makes is named with its evidence."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest
from estimator_synthetic import IIWA14, SIGN_LAW, iiwa14_setup, random_recording, write_without_physical

from robot_id_estimator.__main__ import main
from robot_id_estimator.pipeline import identify
from robot_id_estimator.recordings.recording import save_csv
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_lab.synthetic import urdf_with_friction
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
    result = identify([rec], setup, SIGN_LAW, allow_outside_limits=True, allow_implausible_torque=True)
    return [w for w in result.warnings if w.startswith("diagnosis:")]


def test_clean_data_get_no_diagnosis():
    assert _diagnoses(_recording()) == []


@pytest.mark.parametrize(("mistake", "expected", "then"), [
    ("a flipped torque sign on the lightly loaded A5", "diagnosis: lbr_A5's torque has the wrong sign?",
     "'s torque has the wrong sign? The model leaves lbr_A5 "),
    ("an A3 encoder counting the other way", "diagnosis: lbr_A3's encoder counts the other way", "? The model leaves "),
    ("A2 off by 0.3 rad", "diagnosis: lbr_A2's position is off by a constant +0.3",
     " rad (its zero)? The model leaves "),
])
def test_a_mistake_in_the_data_is_named(mistake, expected, then):
    rec = _recording()
    rec = {"a flipped torque sign on the lightly loaded A5": lambda: _with(rec, "tau_nm", 4, np.negative),
           "an A3 encoder counting the other way": lambda: _with(rec, "q_rad", 2, np.negative),
           "A2 off by 0.3 rad": lambda: _with(rec, "q_rad", 1, lambda q: q + 0.3)}[mistake]()
    result = identify([rec], SETUP, SIGN_LAW, allow_outside_limits=True, allow_implausible_torque=True)
    found = [w for w in result.warnings if w.startswith("diagnosis:")]
    assert len(found) == 1 and found[0].startswith(expected), found
    assert then in found[0] and " of the torque RMS unexplained; with that corrected, " in found[0]
    assert result.mistake == found[0]


@pytest.mark.parametrize(("robot_ms", "configured_ms"), [(16, 0), (0, 16)])
def test_a_torque_filter_time_constant_that_does_not_match_the_robot_is_found_and_used(robot_ms, configured_ms):
    """Not a mistake to name: the data's filter is found (processing.torque_filter), identified with and said."""
    setup = dataclasses.replace(SETUP, torque_filter_time_constant_s=configured_ms / 1000.0)
    result = identify([_recording(robot_ms / 1000.0)], setup, SIGN_LAW)
    assert result.setup.torque_filter_time_constant_s == pytest.approx(robot_ms / 1000.0, abs=0.001)
    assert result.mistake is None and not [w for w in result.warnings if w.startswith("diagnosis:")]
    assert [w for w in result.warnings if w.startswith(
        f"the robot filters its torque with a time constant of about {robot_ms} ms, not the configured "
        f"{configured_ms} ms: identified with {robot_ms} ms")]


def test_five_seconds_of_an_excitation_are_a_data_mistake_with_the_seconds_to_record():
    rec = random_recording(ROBOT, urdf_with_friction(ROBOT), 1, seed=3, period_s=10.0, rate_hz=200.0,
                           torque_filter_time_constant_s=SETUP.torque_filter_time_constant_s, tau_noise_nm=0.05,
                           q_noise_rad=1e-5, noise_seed=1, source="sim")
    first = rec.t_s < 5.0
    short = dataclasses.replace(rec, t_s=rec.t_s[first], q_rad=rec.q_rad[first], tau_nm=rec.tau_nm[first])
    result = identify([short], SETUP, SIGN_LAW, allow_outside_limits=True, allow_implausible_torque=True)
    (found,) = [w for w in result.warnings if w.startswith("diagnosis:")]
    assert result.mistake == found  # the model written would not hold: exit 4
    # the RSDs of 5 s sit near the 40 % that tells too little excitation from a model that misses something (its
    # essential parameters' worst came out 39.8 % and 49.6 %): either way it says what to record
    assert found.startswith(("diagnosis: too little excitation? The base set predicts held-out data far worse",
                             "diagnosis: too little data, or the model misses something the data hold? The base set "
                             "predicts held-out data far worse"))
    assert "base parameters have an RSD above 40 %" in found
    assert float(re.search(r"record at least (\S+) s", found).group(1)) > 5.0


def test_the_config_of_another_arm_on_good_data_is_named_as_a_model_that_misses_something():
    iiwa7 = RobotSetup.from_config(load_robot_config("iiwa7"))
    result = identify([_recording()], iiwa7, SIGN_LAW, allow_outside_limits=True,
                      allow_implausible_torque=True)  # iiwa14 data: the fit looks good, the generalisation does not
    (found,) = [w for w in result.warnings if w.startswith("diagnosis:")]
    assert result.mistake is None  # A1 2.8× its training error, 2.5 % of its torque: warned, exit 0
    assert found.startswith("diagnosis: too little data, or the model misses something the data hold? The base set "
                            "predicts held-out data far worse than the data it was fitted to")
    assert "the essential parameters are determined (RSD at most" in found and "another arm's kinematics" in found
    assert "base parameters have an RSD above" in found
    assert "record at least 60 s, twice the 30 s recorded" in found


def test_the_command_line_ends_with_exit_4_naming_the_mistake_and_removes_an_earlier_model(tmp_path, capsys):
    rec = _with(_recording(), "q_rad", 2, np.negative)
    csv = save_csv(rec, tmp_path / "encoder.csv")
    out = tmp_path / "out"
    out.mkdir()
    for earlier in ("identified.urdf", "identified.xml"):
        (out / earlier).write_text("<robot/>")
    code = main(["identify", "--robot", str(IIWA14), "--data", str(csv), "--out", str(out),
                 "--config", str(write_without_physical(tmp_path, coulomb_law="sign"))])
    err = capsys.readouterr().err
    assert code == 4
    assert "warning: diagnosis: lbr_A3's encoder counts the other way" in err
    assert "error: a mistake in the data, the model rejected: lbr_A3's encoder counts the other way" in err
    assert not (out / "identified.urdf").exists() and not (out / "identified.xml").exists()
    assert json.loads((out / "identification.json").read_text())["mistake"].startswith(
        "diagnosis: lbr_A3's encoder counts the other way")
    assert "Exit 4: a mistake in the data: the model is rejected" in (out / "identification.html").read_text()
    assert "names a mistake in the data: lbr_A3&#39;s encoder counts the other way" in (
        out / "identification.html").read_text()
