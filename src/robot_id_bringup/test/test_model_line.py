"""The runner's last line names where the model is and which set it holds, or that none was written (issue 43).
On results directories laid out here as the estimator leaves them (its writer's side: test_data_mistakes, where a
mistake leaves identified.rejected.urdf and no identified.urdf); a graph run that identified, and one that ended
before an identification: test_runner_end_to_end."""

from __future__ import annotations

import importlib.util
import json
import pathlib

from robot_id_bringup.model_line import ARM_WITH_LOAD, MODEL, REJECTED_ARM_WITH_LOAD, REJECTED_MODEL, model_line
from robot_id_msgs.msg import IdentificationResult, LinkInertial


def test_the_file_names_are_the_estimator_s():
    """Read from the writers' source (importing them loads pinocchio and MuJoCo: seconds)."""
    def names(module: str) -> str:
        return pathlib.Path(importlib.util.find_spec(module).origin).read_text()

    urdf_export = names("robot_id_estimator.output.urdf_export")
    assert f'URDF_NAME = "{MODEL}"' in urdf_export and f'REJECTED_URDF_NAME = "{REJECTED_MODEL}"' in urdf_export
    payload = names("robot_id_estimator.payload.identify_payload")
    assert '"arm_with_payload.urdf"' in payload and 'tag = "" if passed else ".rejected"' in payload
    assert (ARM_WITH_LOAD, REJECTED_ARM_WITH_LOAD) == ("arm_with_payload.urdf", "arm_with_payload.rejected.urdf")


def test_a_run_that_identified_names_identified_urdf_the_physical_set_and_the_best_one(tmp_path):
    (tmp_path / MODEL).write_text("<robot/>")
    (tmp_path / "identification.json").write_text(json.dumps({"best_set": "essential"}))
    msg = IdentificationResult(output_dir=str(tmp_path), success=True, message="58 essential of 64 base parameters")
    assert model_line(msg, 0) == (f"robot_id: the model is {tmp_path / MODEL}: the physical parameter set (best on "
                                  "held-out data: essential, in identification.json); report and identification.json "
                                  f"in {tmp_path}")


def test_a_rejected_model_is_named_as_such_with_the_reason(tmp_path):
    (tmp_path / REJECTED_MODEL).write_text("<robot/>")
    message = "a mistake in the data, the model rejected: diagnosis: lbr_A3's torque has the wrong sign"
    msg = IdentificationResult(output_dir=str(tmp_path), success=False, message=message)
    assert model_line(msg, 3) == (f"robot_id: no model accepted: {tmp_path / REJECTED_MODEL} holds the physical set, "
                                  f"rejected ({message}), for inspection only; report in {tmp_path}")


def test_a_set_that_failed_beside_a_written_model_is_named(tmp_path):
    (tmp_path / MODEL).write_text("<robot/>")
    (tmp_path / "identification.json").write_text(json.dumps({"best_set": "physical"}))
    msg = IdentificationResult(output_dir=str(tmp_path), success=False, failed_sets=["essential"],
                               message="essential failed the check on held-out data")
    assert model_line(msg, 3) == (f"robot_id: the model is {tmp_path / MODEL}: the physical parameter set (best on "
                                  "held-out data: physical); essential failed the check on held-out data; report and "
                                  f"identification.json in {tmp_path}")


def test_no_model_file_and_nothing_written_and_no_result_each_say_so(tmp_path):
    msg = IdentificationResult(output_dir=str(tmp_path), success=True, message="no physical stage")
    assert model_line(msg, 0) == ("robot_id: no model file written (the identification has no physical parameter "
                                  f"set); the base and essential sets are in {tmp_path / 'identification.json'}")
    refused = IdentificationResult(output_dir="", success=False, message="bag not readable")
    assert model_line(refused, 3) == "robot_id: no model written, nothing written: bag not readable"
    assert model_line(None, 130) == ("robot_id: no model written: the run ended (exit code 130) before an "
                                     "identification")


def test_a_load_names_payload_yaml_and_the_arm_with_it_or_its_rejection(tmp_path):
    load = LinkInertial(link_name="lbr_link_ee", mass_kg=1.5)
    msg = IdentificationResult(output_dir=str(tmp_path), success=True, payload=[load])
    (tmp_path / ARM_WITH_LOAD).write_text("<robot/>")
    assert model_line(msg, 0) == (f"robot_id: the load's model is {tmp_path / 'payload.yaml'} (the load on "
                                  f"lbr_link_ee, 1.5 kg), the arm with it {tmp_path / ARM_WITH_LOAD}; report in "
                                  f"{tmp_path}")
    (tmp_path / ARM_WITH_LOAD).unlink()
    (tmp_path / REJECTED_ARM_WITH_LOAD).write_text("<robot/>")
    assert model_line(msg, 3).startswith(f"robot_id: no load model accepted: {tmp_path / REJECTED_ARM_WITH_LOAD}")
