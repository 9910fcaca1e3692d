"""The report pages in a real headless Chromium (headless_browser): identification.html of a short simulated
identification, validation.html of its validation and payload.html of a simulated load each load without console
errors, request nothing but the file itself and its inline figures, say the verdict first, and show the table of the
unseen or held-out motion. The numbers they show are checked against references computed here: the friction and the
load the simulation put in, the validation error from the traces. A run whose written files fail their check says
exit 5 before anything else."""

import dataclasses
import struct

import numpy as np
import pytest
from estimator_synthetic import iiwa14_setup, simulated_recording
from headless_browser import chromium, open_page

from robot_id_estimator.identify_and_write import identify_and_write
from robot_id_estimator.output.report import write_identification_report, write_validation_report
from robot_id_estimator.payload.identify_payload import identify_payload_and_write
from robot_id_estimator.results.written_check import WrittenCheck
from robot_id_estimator.settings import EstimatorConfig
from robot_id_estimator.validate import validate
from robot_id_lab.synthetic import urdf_with_friction
from robot_id_model.parameters import inertial_columns, nominal_parameters, parameter_names
from robot_id_model.physical import LinkInertial, link_standard_parameters

pytestmark = pytest.mark.skipif(chromium() is None, reason="no chromium: scripts/setup_workspace.sh installs it "
                                                           "(apt-get install chromium, as root)")
LOAD = LinkInertial(1.5, np.array([0.02, -0.01, 0.08]), np.diag([4e-3, 6e-3, 5e-3]))
"""The simulated payload, on lbr_link_7."""


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """Two 10 s periods of the iiwa14 with the URDF's friction identified and written, one period of another motion
    validated, and a payload identified on link 7 (the arm as its URDF states it)."""
    tmp = tmp_path_factory.mktemp("pages")
    setup = iiwa14_setup()
    robot = setup.model(("FV", "FC", "FO"))
    pi = urdf_with_friction(robot)
    written = identify_and_write([simulated_recording(robot, setup, pi, 2, tau_noise_nm=0.05)], setup,
                                 EstimatorConfig(coulomb_law="sign"), tmp / "id")  # the law simulated: no choice
    validation = validate(written.result, [simulated_recording(robot, setup, pi, 1, seed=7, tau_noise_nm=0.05)])
    arm = setup.model(())
    loaded = nominal_parameters(arm)
    loaded[inertial_columns(arm)[-1]] += link_standard_parameters(LOAD)
    payload = identify_payload_and_write([simulated_recording(arm, setup, loaded, 2, tau_noise_nm=0.05)], setup,
                                         tmp / "payload", EstimatorConfig(), frame="lbr_link_7")
    return {"tmp": tmp, "robot": robot, "pi": pi, "written": written, "validation": validation,
            "validation_page": write_validation_report(validation, tmp / "val"), "payload": payload}


def _opened(page, tmp, name):
    """The page opened in Chromium, its screenshot checked to be a PNG of the window's width."""
    screenshot = tmp / f"{name}.png"
    load = open_page(page, screenshot, tmp / f"browser_{name}")
    header = screenshot.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">I", header[16:20])[0] == 1280
    assert load.errors == ()
    assert load.requests[0] == page.resolve().as_uri()
    assert all(url.startswith("data:image/png;base64,") for url in load.requests[1:]), "a fetch beyond the file"
    assert load.images and all(width > 0 and height > 0 for width, height in load.images)
    return load


def test_identification_page_shows_the_verdict_first_then_the_held_out_table(pages):
    written, robot, pi = pages["written"], pages["robot"], pages["pi"]
    joints = written.result.setup.joint_names
    load = _opened(written.report, pages["tmp"], "identification")
    assert written.report.name == "identification.html" and written.exit_code == 0
    assert load.text.index("Exit 0: done, the written model holds") < load.text.index("Torque error on held-out data")
    assert f"{written.model_files.urdf} holds the physical parameters" in load.text
    assert len(load.images) == len(joints) + 2  # a torque plot per joint, the RSD bars, the friction curves
    (held_out,) = load.tables["held-out"]
    assert [row[0] for row in held_out[2:]] == [*joints, "sum", "check"]
    assert held_out[0][1:] == ["base", "essential (best)", "physical"] == [
        s + (" (best)" if s == written.result.best_set else "") for s in ("base", "essential", "physical")]
    assert held_out[-1][1:] == ["passed"] * 3
    coulomb = {row[0]: float(row[2].split()[0]) for row in load.tables["friction"][0][1:]}  # FC estimated (RSD)
    truth = dict(zip(parameter_names(robot), pi, strict=True))
    assert [coulomb[name] for name in joints] == pytest.approx([truth[f"FC{j + 1}"] for j in range(7)], rel=0.1)
    assert any("mass [kg] (URDF; bounds)" in table[0] for table in load.tables["physical"])  # plausibility
    assert "Active bounds" in load.text


def test_validation_page_shows_each_sets_error_as_computed_from_the_traces(pages):
    v = pages["validation"]
    load = _opened(pages["validation_page"], pages["tmp"], "validation")
    assert load.text.index("Exit 0: validation done") < load.text.index("Torque error on the unseen motion")
    table = load.tables["unseen"][0]
    assert [row[0] for row in table[1:]] == [*v.joint_names, "total"]
    for k, s in enumerate(v.rms_nm):
        rms = np.sqrt(np.mean((v.traces.measured_nm - v.traces.predicted_nm[s]) ** 2, axis=0))
        shown = [float(row[2 + k].split()[0]) for row in table[1:-1]]
        assert shown == pytest.approx(rms, rel=1e-3), s
    assert len(load.images) == len(v.joint_names) + 2  # a torque plot per joint, the error bars, the observer


def test_payload_page_shows_the_load_the_simulation_carried(pages):
    payload = pages["payload"]
    page = next(path for path in payload.paths if path.name == "payload.html")
    load = _opened(page, pages["tmp"], "payload")
    assert load.text.index("Exit 0: done, the load's model holds") < load.text.index("Torque on held-out time blocks")
    held_out = load.tables["held-out"][0]
    assert held_out[0] == ["joint", "load torque", "training error", "held-out error"] and len(held_out) == 8
    rows = dict(load.tables["load"][0])
    assert float(rows["mass [kg]"]) == pytest.approx(LOAD.mass_kg, rel=0.01)
    assert [float(x) for x in rows["CoM [m]"].split()] == pytest.approx(LOAD.com_m, abs=2e-3)


def test_a_run_whose_written_files_fail_says_exit_5_first(pages, tmp_path):
    written = pages["written"]
    check = WrittenCheck({"identified.urdf": 12.0}, ("identified.urdf: lbr_A2 differs by 12 % of its torque RMS",))
    result = dataclasses.replace(written.result, traces=None)  # no figures: the verdict is what is checked
    text = write_identification_report(result, tmp_path, written.model_files, check).read_text()
    verdict = text.index("Exit 5: the written model files do not reproduce the identified model")
    assert verdict < text.index("lbr_A2 differs by 12 %") < text.index('id="held-out"')
