"""The estimator's route: a recording goes from identify_and_write to identified.urdf through its stages one way,
never back to a stage it left. Traced while it runs (sys.setprofile): every call the use cases (pipeline,
identify_and_write) make into a stage room of robot_id_estimator, in order."""

from __future__ import annotations

import sys

from robot_id_estimator.identify_and_write import identify_and_write
from robot_id_estimator.recordings.recording import Recording
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_estimator.settings import EstimatorConfig
from robot_id_lab.synthetic import random_run, urdf_with_friction
from robot_id_model.robot_config import load_robot_config

STAGES = ("recordings", "processing", "friction", "estimation", "physical", "validation", "output")
"""The stage rooms in the order a recording passes them (robot_id_estimator/__init__.py)."""
USE_CASES = {"pipeline", "identify_and_write"}


def _room(frame) -> str:
    name = frame.f_globals.get("__name__", "")
    return name.split(".")[1] if name.startswith("robot_id_estimator.") else ""


def test_a_recording_passes_every_stage_once_in_order(tmp_path):
    setup = RobotSetup.from_config(load_robot_config("iiwa14"))
    robot = setup.model(EstimatorConfig().friction)
    run = random_run(robot, urdf_with_friction(robot), 2, seed=3, period_s=10.0, rate_hz=200.0,
                     torque_filter_time_constant_s=setup.torque_filter_time_constant_s, tau_noise_nm=0.01)
    calls: list[str] = []

    def trace(frame, event, _arg) -> None:
        if event == "call" and frame.f_back is not None and _room(frame) in STAGES \
                and _room(frame.f_back) in USE_CASES:
            calls.append(_room(frame))

    sys.setprofile(trace)
    try:
        written = identify_and_write([Recording.of_arrays(**vars(run))], setup, EstimatorConfig(), tmp_path)
    finally:
        sys.setprofile(None)
    assert written.exit_code == 0 and (tmp_path / "identified.urdf").is_file()
    route = [room for k, room in enumerate(calls) if k == 0 or calls[k - 1] != room]
    assert route == [s for s in STAGES if s != "recordings"], route  # the recording is given, not read
