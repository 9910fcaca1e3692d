"""The design command line at its edges: every bad option refused in one line before any work, the grid rule,
the time limit in every phase, Ctrl-C keeping the best feasible design, --urdf without a config, one default
friction shared with the estimator."""

import json
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import yaml

from robot_id_excitation import design
from robot_id_excitation.__main__ import main
from robot_id_excitation.check import check_trajectory
from robot_id_excitation.constraints import design_limits
from robot_id_excitation.design import _one_start, _random_start, _Search, design_excitation
from robot_id_excitation.design_problem import DesignOptions, DesignProblem
from robot_id_excitation.regressor_sensitivity import base_columns
from robot_id_excitation.trajectory_file import load_trajectory, recorded_friction
from robot_id_model.base_parameters import base_parameters
from robot_id_model.robot_config import load_robot_config, robot_config_path
from robot_id_model.robot_model import DEFAULT_FRICTION

PANDA = str(robot_config_path("panda"))
PANDA_HAND_URDF = str(load_robot_config("panda_hand").urdf_path)
ARM = [f"fer_joint{i}" for i in range(1, 8)]
URDF_LIMITS = ["--acceleration-limit", "10", "--flange-speed", "1.0", "--floor-z", "0.05"]
TINY = ["--harmonics", "2", "--base-frequency", "0.2", "--samples", "40", "--starts", "1", "--max-iterations", "30"]
"""A design whose command line and files are tested, not its optimum: the Panda-hand URDF design below at 30
iterations ends feasible with cond(Yb) 248 (exit 0; 100 iterations: 142), 3.8 s CPU instead of 9.6 s."""
TIME_LIMIT_S = 3.0
OVERRUN_S = 1.0
"""Bound on the work after the time limit for the small design below: the evaluation under way, at most three
checks on the fine grid (1000 samples), the criteria."""


@pytest.mark.parametrize("args, line", [
    (["--base-frequency", "0"], "--base-frequency must be > 0 Hz, got 0.0"),
    (["--base-frequency", "20"], "--base-frequency must be at most 1.2 Hz with --harmonics 5: the highest harmonic "
                                 "would be 100 Hz, above the estimator's 6 Hz torque low-pass, which removes it from "
                                 "the data (a period of T seconds is 1/T Hz: 20 s is 0.05), got 20.0"),
    (["--base-frequency", "0.001"], "--base-frequency must be from 0.00833 to 1 Hz: a period of 1000 s is outside "
                                    "1–120 s, got 0.001"),
    (["--base-frequency", "1.1"], "--base-frequency must be from 0.00833 to 1 Hz: a period of 0.9091 s is outside "
                                  "1–120 s, got 1.1"),
    (["--velocity-scale", "-0.5"], "--velocity-scale must be in (0, 1], got -0.5"),
    (["--starts", "0"], "--starts must be >= 1, got 0"),
    (["--harmonics", "200"],
     "--samples must be >= 2000 to resolve --harmonics 200 (10 samples per period of the highest harmonic), got 200"),
    (["--harmonics", "0"], "--harmonics must be >= 1, got 0"),
    (["--kind", "fourier", "--harmonics", "1"], "--harmonics must be >= 2 for the finite series, got 1"),
    (["--time-limit", "0"], "--time-limit must be > 0 s, got 0.0"),
    (["--max-iterations", "0"], "--max-iterations must be >= 1, got 0"),
    (["--seed", "-1"], "--seed must be >= 0, got -1"),
    (["--noise-std", "1,-2"], "--noise-std must be positive (Nm), got (1.0, -2.0)"),
    (["--noise-std", "0.1,0.2"], "--noise-std needs one value per joint (7: fer_joint1, fer_joint2, fer_joint3, "
                                 "fer_joint4, fer_joint5, fer_joint6, fer_joint7), got 2"),
    (["--position-margin", "-0.1"], "--position-margin must be >= 0 rad, got -0.1"),
    (["--torque-scale", "1.5"], "--torque-scale must be in (0, 1], got 1.5"),
    (["--flange-speed", "0"], "--flange-speed must be > 0 m/s and finite, got 0.0"),
    (["--joints", "fer_joint1"], "--joints goes with --urdf; a robot config states them"),
])
def test_bad_design_options_are_refused_in_one_line_before_any_work(tmp_path, capsys, args, line):
    out = tmp_path / "never"
    assert main(["design", "--robot", PANDA, *args, "--out", str(out)]) == 2
    assert capsys.readouterr().err == f"error: {line}\n"
    assert not out.exists()


def test_urdf_without_the_limits_it_lacks_is_refused(tmp_path, capsys):
    assert main(["design", "--urdf", PANDA_HAND_URDF, "--floor-z", "0.05", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == ("error: --urdf needs --acceleration-limit (rad/s²), --flange-speed (m/s): "
                                       "a URDF does not state them\n")


def test_grid_rule_is_enforced_by_the_library_too(panda, panda_config):
    options = DesignOptions(harmonics=20, samples=100, constraint_samples=400)
    with pytest.raises(ValueError, match="samples must be >= 200 to resolve harmonics 20"):
        design_excitation(panda, design_limits(panda_config), options)


@pytest.mark.wall_clock
def test_no_phase_runs_past_the_time_limit(iiwa14, iiwa14_config):
    """Deadline already passed: the random start search, SLSQP, tightening and shrinking all stop at once."""
    options = DesignOptions(harmonics=5, base_frequency_hz=0.1, samples=50, constraint_samples=100)
    columns = base_columns(iiwa14, base_parameters(iiwa14))
    problem = DesignProblem(iiwa14, columns, design_limits(iiwa14_config), options, "iiwa14")
    x0 = _random_start(problem, np.random.default_rng(0))
    lines = []
    search = _Search(problem, time.monotonic() - 1.0, lines.append)
    assert _random_start(problem, np.random.default_rng(0), search.past_deadline) is None
    started = time.monotonic()
    x, iterations = _one_start(search, x0, "start 1")
    assert time.monotonic() - started < 0.5 and iterations == 0 and np.array_equal(x, x0) and lines == []


@pytest.mark.wall_clock
def test_time_limit_writes_the_best_feasible_design_and_exits_4(tmp_path, capsys, iiwa14_config):
    """iiwa14 at 50 samples: the fine grid fails, so without the limit in every phase tightening and shrinking
    would run on for seconds after it."""
    out = tmp_path / "limited"
    code = main(["design", "--robot", "iiwa14", "--friction", "FV,FC", "--harmonics", "5", "--base-frequency", "0.1",
                 "--samples", "50", "--starts", "2", "--time-limit", str(TIME_LIMIT_S), "--out", str(out)])
    assert code == 4
    printed = capsys.readouterr()
    assert printed.err.endswith(
        f"time limit of {TIME_LIMIT_S:g} s reached: wrote the best feasible design found so far\n")
    verdicts = [line for line in (printed.out + printed.err).splitlines() if "FEASIBLE" in line]
    assert len(verdicts) == 1 and verdicts[0].startswith("FEASIBLE (checked on"), verdicts
    summary = json.loads((out / "design.json").read_text())
    assert summary["stopped"] == "time limit" and summary["wall_time_s"] <= TIME_LIMIT_S + OVERRUN_S
    _assert_feasible_file(out, iiwa14_config, "time limit")


def test_a_start_cut_by_the_time_limit_gives_no_verdict_of_its_own(monkeypatch, panda, panda_config):
    """The start's last iterate breaks the limits when the time runs out; the design keeps its random start. The
    progress names the start's state in words of its own: the final check's FEASIBLE is the only verdict."""
    def cut(search, x0, label):  # the time runs out while the iterate is outside the limits
        search.deadline = time.monotonic() - 1.0
        return 20.0 * x0, 3

    monkeypatch.setattr(design, "_one_start", cut)
    lines = []
    options = DesignOptions(harmonics=2, base_frequency_hz=0.2, samples=40, constraint_samples=80, starts=2,
                            time_limit_s=600.0)
    result = design_excitation(panda, design_limits(panda_config), options, "panda", progress=lines.append)
    assert result.stopped == "time limit" and result.feasible
    assert not [line for line in lines if "FEASIBLE" in line or line.endswith("feasible")], lines
    start = next(line for line in lines if line.startswith("design: start 1 cut"))
    assert start.startswith("design: start 1 cut by the time limit in ") and start.endswith(
        "limit(s) exceeded on the fine grid, not kept") and ": last iterate cond " in start
    assert lines[-1] == "design: time limit: keeping the current start's random start"


def test_interrupt_writes_the_best_feasible_design_and_exits_130(tmp_path, panda_config):
    out = tmp_path / "interrupted"
    run = subprocess.Popen([sys.executable, "-m", "robot_id_excitation", "design", "--robot", PANDA, "--harmonics", "3",
                            "--base-frequency", "0.1", "--samples", "60", "--starts", "20", "--out", str(out)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # a shell's background job (`.ci/run &`) ignores SIGINT, and Python then keeps ignoring it: the design would never
    # see the Ctrl-C this test sends, so its child gets the default action back
    seen = []
    for line in run.stderr:  # interrupt a second into the first start's optimisation
        seen.append(line)
        if "random feasible start" in line:
            break
    time.sleep(1.0)
    run.send_signal(signal.SIGINT)
    try:
        stdout, stderr = run.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        run.kill()
        stdout, stderr = run.communicate()
        pytest.fail("no exit 60 s after Ctrl-C; stderr:\n" + "".join(seen) + stderr[-3000:])
    assert run.returncode == 130, "".join(seen) + stderr
    assert "Traceback" not in stderr and stderr.endswith("interrupted: wrote the best feasible design found so far\n")
    assert "FEASIBLE" in stdout
    _assert_feasible_file(out, panda_config, "interrupted")


def _assert_feasible_file(out, config, stopped):
    data = yaml.safe_load((out / "excitation.yaml").read_text())
    assert data["design"]["stopped"] == stopped
    trajectory = load_trajectory(out / "excitation.yaml")
    robot = config.load_model(tuple(data["criteria"]["friction"]))
    limits = design_limits(config, position_margin_rad=0.1)
    report = check_trajectory(robot, limits, trajectory, samples=10 * 2 * data["design"]["samples"])
    assert report.feasible, report.lines()
    assert np.ptp(trajectory.evaluate(np.linspace(0, trajectory.period_s, 200))[0], axis=0).max() > 0.05


def test_design_and_check_take_a_urdf_and_the_shared_default_friction(tmp_path, capsys):
    """Our panda_hand.urdf carries coarse cylinders (links 2 and 4 never more than 14 mm apart on them): designed and
    checked to keep them apart (clearance 0), which both state."""
    out = tmp_path / "urdf"
    joints = ",".join(ARM)
    clearance = ["--clearance", "0", "--clearance-margin", "0"]
    assert main(["design", "--urdf", PANDA_HAND_URDF, "--joints", joints, *URDF_LIMITS, *clearance, *TINY,
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "closest approach (capsules" in printed and "clearance 0.0 mm" in printed
    data = yaml.safe_load((out / "excitation.yaml").read_text())
    trajectory = load_trajectory(out / "excitation.yaml")
    assert trajectory.robot == "panda_hand" and trajectory.joint_names == tuple(ARM)
    limits = data["design"]["limits"]
    assert limits["velocity_rad_s"] == [2.175] * 4 + [2.61] * 3 and limits["torque_nm"] == [87.0] * 4 + [12.0] * 3
    assert limits["acceleration_rad_s2"] == [10.0] * 7 and limits["flange_frame"] == "fer_link7"
    assert limits["position_lower_rad"][3] == pytest.approx(-3.0718 + 0.1)
    # one default friction (the estimator's), recorded in the file and used by check
    assert recorded_friction(out / "excitation.yaml") == DEFAULT_FRICTION == ("FV", "FC", "FO")
    assert "(64 base parameters, friction ['FV', 'FC', 'FO'])" in printed
    assert limits["collision"]["geometry"].endswith("panda_hand.urdf (<collision> elements)")
    check = ["check", str(out / "excitation.yaml"), "--urdf", PANDA_HAND_URDF, *URDF_LIMITS, *clearance,
             "--out", str(out)]
    assert main(check) == 0
    printed = capsys.readouterr().out
    assert "FEASIBLE" in printed and "(64 base parameters, friction ['FV', 'FC', 'FO'])" in printed
    assert "closest approach (capsules" in printed and "clearance 0.0 mm" in printed


def test_check_uses_the_friction_a_trajectory_was_designed_for(tmp_path, capsys):
    assert recorded_friction("panda") == ("FV", "FC")
    assert main(["check", "panda", "--out", str(tmp_path)]) == 0
    assert "friction ['FV', 'FC'])" in capsys.readouterr().out
