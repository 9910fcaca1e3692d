"""The command line: identify and validate from CSV files, the result files, and one-line errors with exit 2."""

import json
import pathlib

import numpy as np
import pytest
import yaml
from estimator_synthetic import IIWA14, iiwa14_setup, simulated_recording, write_without_physical
from recording_files import write_bag
from rosbags.rosbag2 import StoragePlugin

from robot_id_estimator.__main__ import main
from robot_id_estimator.recordings.loading import load_recording
from robot_id_estimator.recordings.recording import save_csv
from robot_id_estimator.results import read_identification, write_identification
from robot_id_lab.synthetic import urdf_with_friction
from robot_id_model import load_robot_model
from robot_id_recorder.bag_tools import repair


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Identification data (6 periods of 10 s, noise) with messy rows, validation data, and their CLI run."""
    tmp = tmp_path_factory.mktemp("cli")
    setup = iiwa14_setup()
    robot = setup.model(("FV", "FC", "FO"))
    pi = urdf_with_friction(robot)
    ident = simulated_recording(robot, setup, pi, 6, tau_noise_nm=0.1)
    rows = np.column_stack([ident.t_s, ident.q_rad, ident.tau_nm])
    rows = np.insert(rows, [500, 501, 7000], rows[[499, 500, 6999]], axis=0)  # three duplicate rows
    header = ["t"] + [f"q_{j}" for j in robot.joint_names] + [f"tau_{j}" for j in robot.joint_names]
    np.savetxt(tmp / "ident.csv", rows, delimiter=",", header=",".join(header), comments="", fmt="%.10g")
    save_csv(simulated_recording(robot, setup, pi, 2, seed=7, tau_noise_nm=0.0, q_noise_rad=0.0), tmp / "val.csv")
    out, out2 = tmp / "id", tmp / "val"
    code_identify = main(["identify", "--robot", str(IIWA14), "--data", str(tmp / "ident.csv"), "--period", "10",
                          "--out", str(out)])
    code_validate = main(["validate", "--result", str(out / "identification.json"), "--data", str(tmp / "val.csv"),
                          "--period", "10", "--out", str(out2)])
    return tmp, out, out2, code_identify, code_validate, robot


def test_identify_writes_identification_json_and_a_report(files):
    _tmp, out, _, code, _, robot = files
    assert code == 0
    data = json.loads((out / "identification.json").read_text())
    for key in ("base", "essential", "friction", "metrics"):
        assert key in data
    base, expressions = data["base"], data["base_expressions"]
    assert len(base["names"]) == len(base["values"]) == len(base["rsd_percent"]) == len(expressions) == 64
    assert base["names"][0] == "ZZ1R" and expressions[0].startswith("ZZ1 + ")
    assert set(data["essential"]["names"]) <= set(base["names"])
    assert len(data["essential"]["values"]) == len(data["essential"]["rsd_percent"]) == len(data["essential"]["names"])
    assert data["friction"]["joint_names"] == list(robot.joint_names)
    assert data["friction"]["coulomb_nm"][0] == pytest.approx(0.6, rel=0.05)
    metrics = data["metrics"]
    assert metrics["n_periods"] == [6]
    assert 0 < metrics["condition_number"] < 500
    assert any("dropped 3 duplicate rows" in note for note in metrics["notes"])
    report = (out / "identification.html").read_text()
    for name in ["parameters_base.csv", "parameters_essential.csv", "identification.json"]:
        assert (out / name).is_file() and name in report
    figures = report.count('<img src="data:image/png;base64,')  # a torque plot per joint, the RSD, the friction
    assert figures == len(robot.joint_names) + 2 and not list(out.glob("*.png"))


def test_validate_writes_rms_per_joint_and_correlation(files):
    _tmp, _, out2, _, code, robot = files
    assert code == 0
    data = json.loads((out2 / "validation.json").read_text())
    assert data["joint_names"] == list(robot.joint_names)
    torque_rms = np.array(data["torque_rms_nm"])
    for parameter_set in ("base", "essential", "physical"):
        assert len(data["rms_nm"][parameter_set]) == 7
        assert np.all(np.array(data["rms_nm"][parameter_set]) < 0.01 * torque_rms)
        assert np.all(np.array(data["correlation"][parameter_set]) > 0.999)
        assert len(data["collision_threshold_nm"][parameter_set]) == 7
    report = (out2 / "validation.html").read_text()
    assert 'alt="momentum-observer residual per joint"' in report and not list(out2.glob("*.png"))


def test_identify_writes_the_identified_urdf_and_its_parameters(files):
    _tmp, out, _, _, _, robot = files
    data = json.loads((out / "identification.json").read_text())
    physical = data["physical"]
    assert physical["method"] == "lmi-euclidean" and physical["violations"] == []
    assert physical["residual_increase_percent"] < 2.0
    reloaded = load_robot_model(out / "identified.urdf", robot.joint_names, friction=())
    masses = [reloaded.model.inertias[j].mass for j in range(1, 8)]
    assert masses == pytest.approx([link["mass_kg"] for link in physical["links"]], rel=1e-15)
    model = yaml.safe_load((out / "identified.yaml").read_text())
    assert model["urdf"] == "identified.urdf" and model["joint_names"] == list(robot.joint_names)
    assert model["friction"]["lbr_A1"]["coulomb_nm"] == pytest.approx(0.6, rel=0.05)
    assert {"name", "value", "rsd_percent", "essential", "definition"} <= set(model["base_parameters"][0])
    assert f"{out / 'identified.urdf'} holds the physical parameters" in (out / "identification.html").read_text()


def test_identification_json_round_trip(files):
    tmp, out, *_ = files
    result = read_identification(out / "identification.json")
    again = read_identification(write_identification(result, tmp / "again" / "identification.json"))
    assert again.base.names == result.base.names
    np.testing.assert_array_equal(again.base.values, result.base.values)
    np.testing.assert_array_equal(again.essential.rsd_percent, result.essential.rsd_percent)
    np.testing.assert_array_equal(again.columns, result.columns)
    assert again.config == result.config
    assert again.setup == result.setup
    np.testing.assert_array_equal(again.physical.standard_values, result.physical.standard_values)
    np.testing.assert_array_equal(again.parameter_values("physical"), result.parameter_values("physical"))
    assert (tmp / "again" / "identification.json").read_text() == (out / "identification.json").read_text()


def test_unestimated_values_are_null_in_json_and_nan_when_read(files, tmp_path):
    _, out, *_ = files
    data = json.loads((out / "identification.json").read_text())
    data["base"]["values"][1] = None
    (tmp_path / "r.json").write_text(json.dumps(data))
    result = read_identification(tmp_path / "r.json")
    assert np.isnan(result.base.values[1])
    assert result.parameter_values("base")[1] == 0.0


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert "Traceback" not in "\n".join(err)
    return err[-1]


def test_a_long_run_of_nans_is_refused_with_column_and_samples(files, tmp_path, capsys):
    tmp, *_ = files
    lines = (tmp / "val.csv").read_text().splitlines()
    header = lines[0].split(",")
    column = header.index("q_lbr_A3")
    for i in range(101, 161):  # 60 samples = 0.3 s at 200 Hz
        fields = lines[i].split(",")
        fields[column] = "nan"
        lines[i] = ",".join(fields)
    (tmp_path / "nan.csv").write_text("\n".join(lines) + "\n")
    code = main(["identify", "--robot", str(IIWA14), "--data", str(tmp_path / "nan.csv"), "--out", str(tmp_path / "o")])
    assert code == 2
    message = _error(capsys)
    assert message.startswith("error: ") and "q_lbr_A3" in message and "not finite for 60 samples" in message
    assert not (tmp_path / "o" / "identification.json").exists()


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["identify", "--robot", "IIWA14", "--data", "missing.csv", "--out", "o"], "no such file"),
        (["identify", "--robot", "nowhere/robot.yaml", "--data", "VAL", "--out", "o"],
         "--robot: no robot config file 'nowhere/robot.yaml'"),
        (["identify", "--robot", "IIWA14", "--joints", "A1", "--data", "VAL", "--out", "o"], "--joints goes with"),
        (["identify", "--robot", "IIWA14", "--data", "VAL", "--out", "o", "--config", "CONFIG"], "unknown keys"),
        (["validate", "--result", "missing.json", "--data", "VAL", "--out", "o"], "missing.json: no such file"),
        (["payload", "--robot", "IIWA14", "--data", "VAL", "--baseline", "EMPTY", "--out", "o"],
         "not a rosbag2 bag: EMPTY holds no metadata.yaml (give the bag's directory as ros2 bag record writes it)"),
    ],
)
def test_bad_input_exits_2_with_one_line(files, tmp_path, capsys, argv, expected):
    tmp, *_ = files
    (tmp_path / "config.yaml").write_text("estimation:\n  methd: ols\n")
    (tmp_path / "empty").mkdir()
    replace = {"IIWA14": str(IIWA14), "VAL": str(tmp / "val.csv"), "CONFIG": str(tmp_path / "config.yaml"),
               "EMPTY": str(tmp_path / "empty")}
    argv = [replace.get(a, a) for a in argv]
    expected = expected.replace("EMPTY", str(tmp_path / "empty"))
    argv = [str(tmp_path / a) if a in ("missing.csv", "o", "missing.json") else a for a in argv]
    assert main(argv) == 2
    message = _error(capsys)
    assert message.startswith("error: ") and expected in message, message


@pytest.mark.parametrize("damage", ["no metadata.yaml", "an MCAP without its summary"])
def test_an_unclosed_bag_is_refused_naming_the_command_that_repairs_it(tmp_path, capsys, damage):
    """A recorder killed before it closed its bag leaves no metadata.yaml (ros2 bag record and the recorder write it
    on closing), or an MCAP file that ends before its summary: the estimator names the repair, which then makes the
    bag read whole."""
    bag = tmp_path / "bag"
    truth = write_bag(bag, storage=StoragePlugin.MCAP)
    if damage == "no metadata.yaml":
        (bag / "metadata.yaml").unlink()
    else:
        mcap = bag / "bag.mcap"
        mcap.write_bytes(mcap.read_bytes()[:-2000])  # the summary, the footer and the closing magic
    assert main(["identify", "--robot", str(IIWA14), "--data", str(bag), "--out", str(tmp_path / "o")]) == 2
    message = _error(capsys)
    if damage == "no metadata.yaml":
        assert message == (f"error: {bag}: the bag is not closed (no metadata.yaml in {bag}): its recording is still "
                           "going on, or its recorder was killed; then make it readable with "
                           f"`python -m robot_id_recorder repair {bag}`")
    else:
        assert message.startswith(f"error: {bag}: not a readable rosbag2 bag (") and message.endswith(
            f"); if its recording was killed, make it readable with `python -m robot_id_recorder repair {bag}`")
    repair(bag)
    recording = load_recording(bag, ["j1", "j2", "j3"])
    kept = slice(50, 650)  # 3 periods of 2 s at 100 Hz from the first marker at 0.5 s
    np.testing.assert_allclose(recording.t_s, truth["t"][kept], atol=1e-9)
    np.testing.assert_array_equal(recording.q_rad, truth["q"][kept])


def test_an_excitation_given_as_a_friction_sweep_or_a_time_column_in_ms_exits_2_naming_it(files, tmp_path, capsys):
    tmp, *_ = files
    excitation = tmp / "val.csv"
    code = main(["identify", "--robot", str(IIWA14), "--data", str(tmp / "ident.csv"), "--friction-sweep",
                 str(excitation), "--out", str(tmp_path / "sweep")])
    assert code == 2
    message = _error(capsys)
    assert message.startswith(f"error: {excitation}: no joint moves forward and backward at 5 or more constant speeds")
    assert message.endswith("as the Stribeck fit needs: not a friction sweep (an excitation recording given as a "
                            "friction sweep?), or one of too few speeds")
    rows = np.loadtxt(excitation, delimiter=",", skiprows=1)
    rows[:, 0] *= 1000.0
    header = excitation.read_text().splitlines()[0]
    np.savetxt(tmp_path / "ms.csv", rows, delimiter=",", header=header, comments="", fmt="%.10g")
    assert main(["identify", "--robot", str(IIWA14), "--data", str(tmp_path / "ms.csv"), "--out",
                 str(tmp_path / "ms")]) == 2
    assert _error(capsys).endswith("is the time column in seconds (milliseconds are 1000 × too large)?")


def test_joints_missing_from_the_data_or_the_urdf_are_named(files, tmp_path, capsys):
    tmp, *_ = files
    text = (tmp / "val.csv").read_text()
    (tmp_path / "renamed.csv").write_text(text.replace("q_lbr_A7", "q_A7", 1).replace("tau_lbr_A7", "tau_A7", 1))
    assert main(["identify", "--robot", str(IIWA14), "--data", str(tmp_path / "renamed.csv"),
                 "--out", str(tmp_path / "o")]) == 2
    message = _error(capsys)
    assert "no joint named ['lbr_A7']" in message and "'A7'" in message
    urdf = iiwa14_setup().urdf_path
    assert main(["identify", "--urdf", urdf, "--joints", "lbr_A1,nope", "--data", str(tmp / "val.csv"),
                 "--out", str(tmp_path / "o")]) == 2
    assert "no movable joint named ['nope']" in _error(capsys)


def test_the_shipped_estimator_config_holds_the_defaults():
    from robot_id_estimator.settings import EstimatorConfig, load_estimator_config

    shipped = pathlib.Path(__file__).resolve().parents[1] / "config" / "estimator.yaml"
    assert load_estimator_config(shipped) == EstimatorConfig()


def test_numbers_yaml_reads_as_strings_are_numbers_and_words_are_refused(tmp_path):
    from robot_id_estimator.settings import ConfigError, load_estimator_config

    config = tmp_path / "c.yaml"  # YAML 1.1 reads 1e-6 (no decimal point) as the string "1e-6"
    config.write_text("physical:\n  regularizer_weight: 1e-6\n  mass_factor: [5e-1, 2]\n")
    loaded = load_estimator_config(config).physical
    assert loaded.regularizer_weight == 1e-6 and loaded.mass_factor == (0.5, 2)
    config.write_text("processing:\n  torque_cutoff_hz: six\n")
    with pytest.raises(ConfigError, match="torque_cutoff_hz must be a number, got 'six'"):
        load_estimator_config(config)


@pytest.mark.parametrize(("text", "message"), [
    ("processing:\n  torque_cutoff_hz: 6 Hz\n", "processing.torque_cutoff_hz must be a number, got '6 Hz'"),
    ("processing:\n  filter_order: four\n", "processing.filter_order must be a whole number, got 'four'"),
    ("physical:\n  starts: 2.5\n", "physical.starts must be a whole number, got 2.5"),
    ("physical:\n  mass_factor: 0.5\n", "physical.mass_factor must be two numbers (low, high), got 0.5"),
    ("estimation:\n  friction: FV\n", "estimation.friction must be a list of strings, got 'FV'"),
    ("validation:\n  observer_gain_1_s: yes\n", "validation.observer_gain_1_s must be a number, got True"),
])
def test_a_wrong_value_in_the_estimator_config_names_the_file_the_key_and_what_it_expects(tmp_path, capsys, text,
                                                                                          message):
    """Before, a word where a whole number belongs gave "'<' not supported between instances of 'str' and 'int'",
    a single number for a pair "cannot unpack non-iterable float object", and "FV" became the terms F and V."""
    config, data = tmp_path / "estimator.yaml", tmp_path / "run.csv"
    config.write_text(text)
    data.write_text("t\n")  # read only after the config
    assert main(["identify", "--robot", str(IIWA14), "--data", str(data), "--out",
                 str(tmp_path / "o"), "--config", str(config)]) == 2
    assert _error(capsys) == f"error: {config}: {message}"


def test_the_period_is_detected_when_not_given(files, tmp_path):
    tmp, *_ = files
    config = write_without_physical(tmp_path, coulomb_law="sign")  # the period is found before the law and physics
    assert main(["identify", "--robot", str(IIWA14), "--data", str(tmp / "val.csv"), "--out", str(tmp_path / "id"),
                 "--config", str(config)]) == 0
    metrics = json.loads((tmp_path / "id" / "identification.json").read_text())["metrics"]
    assert metrics["n_periods"] == [2]
    assert any("detected a period of 10 s" in note for note in metrics["notes"])
