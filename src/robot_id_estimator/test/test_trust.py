"""No wrong answer that looks right: parameters the data do not determine are held, every parameter
set is checked against the data, bad input is refused in one line, and interrupted runs leave no half files."""

import dataclasses
import json
import pathlib
import re
import shutil

import numpy as np
import pytest
import yaml
from estimator_synthetic import IIWA14, iiwa14_setup, periodic_recording, simulated_recording, write_without_physical

import robot_id_estimator.output.report as report
import robot_id_estimator.physical.retrieval as retrieval
import robot_id_estimator.pipeline as pipeline
from robot_id_estimator.__main__ import main
from robot_id_estimator.output.report import write_identification_report
from robot_id_estimator.output.urdf_export import write_identified_model
from robot_id_estimator.physical.problem import RetrievalError
from robot_id_estimator.pipeline import identify
from robot_id_estimator.recordings.recording import save_csv
from robot_id_estimator.settings import EstimatorConfig, PhysicalConfig
from robot_id_lab.synthetic import random_motion, urdf_with_friction
from robot_id_model.parameters import friction_columns

PERIOD_S, RATE_HZ = 10.0, 200.0


def _last_joint_scaled(robot, setup, pi, amplitude: float, n_periods: int = 4):
    """Joint 7 moves `amplitude` × its usual motion (0: not at all)."""
    t = np.arange(round(PERIOD_S * RATE_HZ)) / RATE_HZ
    q, dq, ddq = random_motion(robot, PERIOD_S, 5, t, seed=0)
    centre = 0.5 * sum(robot.position_limits_rad)[6]
    q[:, 6] = centre + amplitude * (q[:, 6] - centre)
    dq[:, 6] *= amplitude
    ddq[:, 6] *= amplitude
    return periodic_recording(robot, pi, q, dq, ddq, PERIOD_S, n_periods, setup.torque_filter_time_constant_s,
                              0.1, 1e-5, 1, 5, f"joint 7 at {amplitude:g} of its motion")


def _identified(amplitude: float, config: EstimatorConfig):
    setup = iiwa14_setup()
    robot = setup.model(("FV", "FC", "FO"))
    pi = urdf_with_friction(robot)
    pi[friction_columns(robot)[6]] = 0.0  # a joint without friction, as the Panda's joint 1 (FV1 = 0.0013)
    return identify([_last_joint_scaled(robot, setup, pi, amplitude)], setup, config)


@pytest.fixture(scope="module")
def undetermined():
    """Joint 7 barely moves (2 %) and the objective is the essential parameters: FC7 is eliminated. (All equations
    are kept: left out where joint 7 is slower than 0.02 rad/s, as by default, it would have almost none, and FC7
    would be unidentified rather than eliminated. The Coulomb law is held at sign(dq): chosen by the data, the
    barely moving joint gets a law that is 0 below 0.01 rad/s, which removes the sign of its noise from the model.)"""
    return _identified(0.02, EstimatorConfig(min_speed_rad_s=0.0, coulomb_law="sign",
                                             physical=PhysicalConfig(target="essential")))


def _physical(result) -> tuple[dict, dict]:
    p = result.physical
    return dict(zip(p.standard_names, p.status, strict=True)), dict(zip(p.standard_names, p.standard_values,
                                                                          strict=True))


def test_an_undetermined_friction_term_is_held_at_zero_not_left_anywhere_in_its_bounds(undetermined):
    result = undetermined
    assert "FC7" in result.eliminated  # the premise: the objective has no data term for it
    status, values = _physical(result)
    assert status["FC7"] == "held" and values["FC7"] == pytest.approx(0.0, abs=1e-7)
    assert result.physical.held_values[result.physical.standard_names.index("FC7")] == 0.0
    assert status["FV2"] == "determined" and values["FV2"] > 0.0
    assert all(status[f"{term}{j}"] != "held" for term in ("FV", "FC") for j in range(1, 7))
    assert values["FV7"] >= 0.0  # estimated negative (−0.06 ± 89 %): held to its physical sign
    # the physical model predicts joint 7 as well as the base parameters, and passes its check
    rms = result.metrics.residual_rms_nm
    assert rms["physical"][6] < 1.1 * rms["base"][6] + 0.01
    assert result.passed("physical") and result.passed("essential")


def test_with_the_default_target_a_joint_that_does_not_move_has_its_friction_held():
    result = _identified(0.0, EstimatorConfig(coulomb_law="sign"))  # the law simulated: no choice
    assert result.physical.target == "base"
    assert {"FV7", "FC7"} <= set(result.unidentified)
    status, values = _physical(result)
    assert status["FV7"] == status["FC7"] == "held"
    assert status["FO7"] == "determined"  # a constant torque is seen without motion
    assert values["FV7"] == pytest.approx(0.0, abs=1e-7) and values["FC7"] == pytest.approx(0.0, abs=1e-7)
    assert status["FV1"] == "determined"
    assert result.passed("physical")


def test_the_urdf_report_and_yaml_carry_the_same_friction(undetermined, tmp_path):
    result = undetermined
    files = write_identified_model(result, tmp_path)
    urdf_path, yaml_path, mjcf_path = files.urdf, files.yaml, files.mjcf
    assert mjcf_path.name == "identified.xml"
    assert urdf_path.name == "identified.urdf"
    values = {n: float(v) for n, v in zip(result.physical.standard_names, result.physical.standard_values,
                                           strict=True)}
    text = urdf_path.read_text()
    assert f'<dynamics damping="{values["FV7"]!r}" friction="{values["FC7"]!r}"/>' in text
    assert f'<dynamics damping="{values["FV2"]!r}" friction="{values["FC2"]!r}"/>' in text
    friction = yaml.safe_load(yaml_path.read_text())["friction"]
    assert friction["lbr_A7"]["coulomb_nm"] == values["FC7"] == 0.0
    assert friction["lbr_A7"]["determination"]["coulomb_nm"] == "held"
    page = write_identification_report(result, tmp_path).read_text()
    assert f"{values['FV2']:.4g} (determined)" in page
    assert re.search(r'<td>FC7</td><td class="num">0</td><td>held</td>\s*<td class="num">0</td>', page)


@pytest.fixture(scope="module")
def csv_run(tmp_path_factory):
    """Three simulated periods as a CSV, and beside it sign_law.yaml: the default config with the Coulomb law the
    simulation used, sign(dq), held (its choice is test_coulomb_law's)."""
    tmp = tmp_path_factory.mktemp("trust")
    setup = iiwa14_setup()
    robot = setup.model(("FV", "FC", "FO"))
    rec = simulated_recording(robot, setup, urdf_with_friction(robot), 3, tau_noise_nm=0.05)
    write_without_physical(tmp, coulomb_law="sign", physical=PhysicalConfig()).rename(tmp / "sign_law.yaml")
    return tmp, rec, save_csv(rec, tmp / "ident.csv")


def _identify(csv, out, *extra):
    """The command line on a CSV of csv_run's folder, with its sign_law.yaml unless `extra` names a config."""
    config = () if "--config" in extra else ("--config", str(csv.parent / "sign_law.yaml"))
    return main(["identify", "--robot", str(IIWA14), "--data", str(csv), "--out", str(out), *config, *extra])


def test_a_physical_set_that_fails_its_check_exits_3_and_its_urdf_is_marked_rejected(csv_run, monkeypatch, capsys):
    tmp, _, csv = csv_run
    out = tmp / "rejected"
    out.mkdir()
    (out / "identified.urdf").write_text("an earlier run's model")
    real = pipeline.retrieve_physical

    def wrong_friction(*args, **kwargs):  # what the retrieval did on the Panda log: a free FV1 at 29 Nm s/rad
        physical = real(*args, **kwargs)
        pi = physical.standard_values.copy()
        pi[physical.standard_names.index("FV1")] = 29.0
        base = args[1]
        return dataclasses.replace(physical, standard_values=pi, base_values=base.values(pi))

    monkeypatch.setattr(pipeline, "retrieve_physical", wrong_friction)
    monkeypatch.setattr(retrieval, "retrieve_physical", wrong_friction)  # the held-out check retrieves too
    assert _identify(csv, out) == 3
    err = capsys.readouterr().err
    assert "warning: physical parameters predict lbr_A1 on held-out data with" in err
    assert "error: the physical parameters failed their check on held-out data" in err
    assert not (out / "identified.urdf").exists()
    rejected = (out / "identified.rejected.urdf").read_text()
    assert rejected.startswith("<?xml") and "<!-- REJECTED by robot_id" in rejected
    saved = json.loads((out / "identification.json").read_text())
    assert saved["checks"]["physical"]["passed"] is False
    assert saved["checks"]["base"]["passed"] is True
    assert any("lbr_A1" in w for w in saved["warnings"])
    page = (out / "identification.html").read_text()
    assert page.index("Exit 3: results written, but a check on held-out data failed") < page.index("FAILED</span>")


def test_a_solver_failure_is_one_line_exit_3_with_base_and_essential_written(csv_run, monkeypatch, capsys):
    tmp, _, csv = csv_run

    def failing(*args, **kwargs):
        raise RetrievalError("the convex program's solver failed (injected)")

    monkeypatch.setattr(retrieval, "retrieve_lmi", failing)
    out = tmp / "solver"
    assert _identify(csv, out) == 3
    err = capsys.readouterr().err
    assert "physical parameters not retrieved: the convex program's solver failed (injected)" in err
    assert "Traceback" not in err
    saved = json.loads((out / "identification.json").read_text())
    assert saved["physical"] is None and saved["checks"]["physical"]["passed"] is False
    assert not (out / "identified.urdf").exists()


def test_positions_in_degrees_are_refused_with_a_hint(csv_run, capsys):
    tmp, rec, _ = csv_run
    degrees = save_csv(dataclasses.replace(rec, q_rad=np.degrees(rec.q_rad)), tmp / "degrees.csv")
    assert _identify(degrees, tmp / "deg") == 2
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("[")]  # no progress
    assert len(err) == 1 and "positions outside the URDF's joint limits" in err[0]
    assert "The values look like degrees: convert them to radians." in err[0] and "--allow-outside-limits" in err[0]
    assert not (tmp / "deg" / "identification.json").exists()


def test_fifty_rows_are_too_little_data_and_say_how_much_is_needed(csv_run, capsys):
    tmp, rec, _ = csv_run
    short = dataclasses.replace(rec, t_s=rec.t_s[:50], q_rad=rec.q_rad[:50], tau_nm=rec.tau_nm[:50], period_s=None)
    assert _identify(save_csv(short, tmp / "short.csv"), tmp / "short") == 2
    err = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("[")]  # no progress
    assert len(err) == 1 and err[0].startswith("error: too little data")
    assert "record at least" in err[0]


def test_an_unwritable_output_directory_is_refused_before_any_computation(csv_run, capsys):
    tmp, _, csv = csv_run
    blocker = tmp / "a_file"
    blocker.write_text("")
    assert _identify(csv, blocker / "out") == 2
    err = capsys.readouterr().err
    assert "output directory" in err and "not writable" in err and "loading" not in err


def test_an_interrupt_leaves_only_complete_files(csv_run, monkeypatch, capsys):
    tmp, _, csv = csv_run
    out = tmp / "interrupted"
    calls = []
    real = report.inline_png

    def interrupted(fig):
        calls.append(fig)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(fig)

    monkeypatch.setattr(report, "inline_png", interrupted)
    assert _identify(csv, out) == 130
    assert "error: interrupted" in capsys.readouterr().err
    assert not list(out.glob(".*partial*"))
    json.loads((out / "identification.json").read_text())  # whole
    assert not (out / "identification.html").exists()


@pytest.fixture(scope="module")
def identified(csv_run):
    tmp, _, csv = csv_run
    out = tmp / "good"
    assert _identify(csv, out) == 0
    return out / "identification.json"


def _validate(result, csv, out, *extra):
    return main(["validate", "--result", str(result), "--data", str(csv), "--out", str(out), *extra])


def _errors(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]


def test_validate_refuses_what_identify_refuses(csv_run, identified, capsys):
    tmp, rec, _ = csv_run
    degrees = save_csv(dataclasses.replace(rec, q_rad=np.degrees(rec.q_rad)), tmp / "v_degrees.csv")
    assert _validate(identified, degrees, tmp / "v_deg") == 2
    assert "look like degrees" in _errors(capsys)[0]
    milli = save_csv(dataclasses.replace(rec, tau_nm=1000.0 * rec.tau_nm), tmp / "v_milli.csv")
    assert _validate(identified, milli, tmp / "v_milli") == 2
    error = _errors(capsys)[0]
    assert "the torque cannot be this robot's: lbr_A2 (1e+03 ×" in error and "; check the units (Nm), " in error
    assert "--allow-implausible-torque" in error
    assert _validate(identified, milli, tmp / "v_milli", "--allow-implausible-torque") == 0


def test_torque_of_the_wrong_sign_or_units_is_refused_by_identify(csv_run, capsys):
    tmp, rec, _ = csv_run
    flipped = save_csv(dataclasses.replace(rec, tau_nm=-rec.tau_nm), tmp / "flipped.csv")
    assert _identify(flipped, tmp / "flipped") == 2
    assert "correlation -1.00" in _errors(capsys)[0]


@pytest.mark.parametrize("reading", ["zeros", "a constant 0.3 Nm", "noise only"])
def test_a_dead_torque_sensor_on_a_lightly_loaded_joint_is_named(csv_run, capsys, reading):
    tmp, rec, _ = csv_run
    tau = rec.tau_nm.copy()
    tau[:, 4] = {"zeros": 0.0, "a constant 0.3 Nm": 0.3,
                 "noise only": np.random.default_rng(0).normal(0.0, 0.01, len(tau))}[reading]
    path = save_csv(dataclasses.replace(rec, tau_nm=tau), tmp / "dead_a5.csv")
    assert _identify(path, tmp / "dead_a5") == 2
    error = _errors(capsys)[0]
    assert "the torque does not follow the motion: lbr_A5 varies by " in error
    assert " Nm RMS where the URDF model's varies by " in error
    assert error.endswith(": a dead sensor, a column of zeros or the wrong column?")


def test_logged_velocities_in_degrees_per_second_are_refused(csv_run, capsys):
    tmp, rec, _ = csv_run
    dq_deg_s = np.degrees(np.gradient(rec.q_rad, rec.t_s, axis=0))
    path = save_csv(dataclasses.replace(rec, dq_rad_s=dq_deg_s), tmp / "dq_deg.csv")
    assert _identify(path, tmp / "dq_deg") == 2
    error = _errors(capsys)[0]
    assert "the logged velocities are not the derivative of the positions" in error and "(0.0175)" in error


@pytest.mark.parametrize("name", ["itself", "a copy"])
def test_the_same_samples_twice_are_refused_under_any_name(csv_run, capsys, name):
    tmp, _, csv = csv_run
    other = csv if name == "itself" else shutil.copy(csv, tmp / "copy_of_run.csv")
    assert main(["identify", "--robot", str(IIWA14), "--data", str(csv), str(other), "--out", str(tmp / "x")]) == 2
    assert _errors(capsys)[0] == (f"error: --data: {csv} and {other} hold the same samples: they would count twice "
                                  "(every RSD √2 too small); give each recording once")


@pytest.fixture(scope="module")
def without_physical(tmp_path_factory):
    return write_without_physical(tmp_path_factory.mktemp("config"), coulomb_law="sign")


def test_one_declared_period_of_data_that_do_not_repeat_is_not_treated_as_periodic(csv_run, without_physical,
                                                                                 capsys):
    tmp, rec, _ = csv_run
    # 14 s of the 30 s run with a declared period of 12 s: one whole "period" that is not one
    window = rec.t_s < 14.0
    part = dataclasses.replace(rec, t_s=rec.t_s[window], q_rad=rec.q_rad[window], tau_nm=rec.tau_nm[window])
    path = save_csv(part, tmp / "not_periodic.csv")
    main(["identify", "--robot", str(IIWA14), "--data", str(path), "--period", "12", "--out", str(tmp / "np"),
          "--config", str(without_physical)])
    err = capsys.readouterr().err
    assert "warning:" in err and "does not join its own start" in err and "processed as non-periodic data" in err
    saved = json.loads((tmp / "np" / "identification.json").read_text())
    assert saved["metrics"]["n_periods"] == [0]


def test_a_run_without_physical_parameters_removes_an_earlier_model_and_validate_keeps_out(csv_run, identified,
                                                                                         without_physical, capsys):
    tmp, _, csv = csv_run
    out = tmp / "stale"
    shutil.copytree(identified.parent, out)  # an earlier run's whole output, physical model included
    assert (out / "identified.urdf").is_file() and (out / "identified.yaml").is_file()
    assert _identify(csv, out, "--config", str(without_physical)) == 0
    assert not (out / "identified.urdf").exists() and not (out / "identified.yaml").exists()
    assert _validate(out / "identification.json", csv, out) == 2
    assert "holds an identification" in _errors(capsys)[0]


@pytest.mark.parametrize("content, expected", [
    ("[]", "not a robot_id identification (format 'list'"),
    (None, "parameter lists of different lengths"),
])
def test_a_broken_identification_file_is_one_line(csv_run, identified, tmp_path, capsys, content, expected):
    _, _, csv = csv_run
    if content is None:
        raw = json.loads(identified.read_text())
        raw["base"]["values"] = raw["base"]["values"][:-1]
        content = json.dumps(raw)
    path = tmp_path / "identification.json"
    path.write_text(content)
    assert _validate(path, csv, tmp_path / "val") == 2
    errors = _errors(capsys)
    assert len(errors) == 1 and expected in errors[0]


def test_an_mjcf_mujoco_refuses_is_a_warning_and_the_urdf_and_yaml_stay(undetermined, tmp_path):
    """A finished result is never lost to a later step: the MJCF comes last, and its failure is a warning."""
    source = tmp_path / "robot" / "arm.urdf"
    source.parent.mkdir()
    (source.parent / "broken.stl").write_text("not a mesh")
    text = pathlib.Path(undetermined.setup.urdf_path).read_text()
    source.write_text(text.replace("</link>", '<collision><geometry><mesh filename="broken.stl"/></geometry>'
                                              "</collision></link>", 1))
    result = dataclasses.replace(undetermined, setup=undetermined.setup.with_urdf(source))
    files = write_identified_model(result, tmp_path / "out")
    assert files.mjcf is None and not (tmp_path / "out" / "identified.xml").exists()
    assert len(files.warnings) == 1 and files.warnings[0].startswith("identified.xml not written: MuJoCo does not")
    assert files.urdf.is_file() and yaml.safe_load(files.yaml.read_text())["robot"] == result.setup.name
