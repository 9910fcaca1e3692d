"""identification.json holds the URDF it was identified with (text and SHA-256): a validation after the file was
edited or moved uses the held one, says so, and gives the same figures; a held URDF edited by hand is refused."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from estimator_synthetic import SIGN_LAW, iiwa14_setup, simulated_recording

from robot_id_estimator.pipeline import identify
from robot_id_estimator.results import read_identification, write_identification
from robot_id_estimator.validate import validate
from robot_id_lab.synthetic import urdf_with_friction


@pytest.fixture(scope="module")
def identified(tmp_path_factory):
    """An identification of the shipped iiwa14 from a copy of its URDF, written to identification.json, and a motion
    it was not identified on."""
    tmp = tmp_path_factory.mktemp("stand_alone")
    shipped = iiwa14_setup()
    urdf = tmp / "iiwa14.urdf"
    shutil.copy(shipped.urdf_path, urdf)
    setup = shipped.with_urdf(urdf)
    robot = setup.model(SIGN_LAW.friction)
    pi = urdf_with_friction(robot)
    result = identify([simulated_recording(robot, setup, pi, 2)], setup, SIGN_LAW)
    path = write_identification(result, tmp / "identification.json")
    return path, urdf, simulated_recording(robot, setup, pi, 1, seed=7)


def test_a_validation_after_the_urdf_changed_uses_the_held_one_and_says_so(identified):
    path, urdf, other_motion = identified
    before = validate(read_identification(path), [other_motion])
    assert not [w for w in before.warnings if "identification.json is used" in w]
    original = urdf.read_text()
    urdf.write_text(original.replace('<mass value="', '<mass value="1', 1))  # a link 10 kg heavier, or more
    after = validate(read_identification(path), [other_motion])
    assert any(w == f"{urdf} has changed since the identification: the URDF held in identification.json is used"
               for w in after.warnings), after.warnings
    urdf.unlink()
    gone = validate(read_identification(path), [other_motion])
    assert any("is not there any more" in w for w in gone.warnings)
    for validation in (after, gone):
        for name in before.rms_nm:
            np.testing.assert_array_equal(validation.rms_nm[name], before.rms_nm[name])
    urdf.write_text(original)


def test_a_held_urdf_edited_by_hand_is_refused_and_an_older_file_reads_its_path(identified, tmp_path):
    path = identified[0]
    data = json.loads(path.read_text())
    assert data["setup"]["urdf_text"] == identified[1].read_text()
    edited = dict(data, setup=dict(data["setup"], urdf_text=data["setup"]["urdf_text"].replace("iiwa", "IIWA")))
    (tmp_path / "edited.json").write_text(json.dumps(edited))
    with pytest.raises(ValueError, match="does not match its SHA-256"):
        read_identification(tmp_path / "edited.json")
    older = dict(data, setup={k: v for k, v in data["setup"].items() if k not in ("urdf_text", "urdf_sha256")})
    (tmp_path / "older.json").write_text(json.dumps(older))
    assert read_identification(tmp_path / "older.json").setup.urdf_text == identified[1].read_text()
