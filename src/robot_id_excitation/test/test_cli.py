"""python -m robot_id_excitation design | check | sweep, run in-process."""

import json

import numpy as np
import yaml

from robot_id_excitation.__main__ import main
from robot_id_excitation.fourier import FourierTrajectory
from robot_id_excitation.trajectory_file import load_trajectory, save_trajectory
from robot_id_model.robot_config import robot_config_path
from robot_id_model.robot_model import DEFAULT_FRICTION

PANDA = str(robot_config_path("panda"))
POSE = [0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.0]


def random_coefficients(n: int, harmonics: int, scale: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return scale * rng.normal(size=(n, harmonics)), scale * rng.normal(size=(n, harmonics))


def test_design_writes_trajectory_plot_and_criteria(tmp_path, capsys):
    """The files of a design, not its optimum: 30 iterations end feasible, exit 0, cond(Yb) 303 (150: 176), 3.1 s
    CPU instead of 7.2 s."""
    out = tmp_path / "design"
    code = main(["design", "--robot", PANDA, "--harmonics", "2", "--base-frequency", "0.2", "--samples", "40",
                 "--starts", "1", "--max-iterations", "30", "--out", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "cond(Yb) =" in printed and "FEASIBLE" in printed
    traj = load_trajectory(out / "excitation.yaml")
    assert isinstance(traj, FourierTrajectory) and traj.harmonics == 2 and traj.robot == "panda"
    criteria = yaml.safe_load((out / "excitation.yaml").read_text())["criteria"]
    summary = json.loads((out / "design.json").read_text())
    assert criteria["condition_number"] == summary["condition_number"] > 1
    assert criteria["friction"] == summary["friction"] == list(DEFAULT_FRICTION)
    assert (out / "excitation.png").stat().st_size > 10_000


def test_check_reports_feasible_and_infeasible_trajectories(tmp_path, capsys, panda_config):
    a, b = random_coefficients(7, 3, 0.05, seed=1)
    gentle = FourierTrajectory("modified_fourier", "panda", panda_config.joint_names, 0.1, a, b, np.array(POSE))
    path = save_trajectory(gentle, tmp_path / "gentle.yaml")
    assert main(["check", str(path), "--robot", PANDA, "--out", str(tmp_path / "plots")]) == 0
    printed = capsys.readouterr().out
    assert "FEASIBLE" in printed and "cond(Yb)" in printed and (tmp_path / "plots" / "gentle.png").is_file()

    wild = FourierTrajectory("modified_fourier", "panda", panda_config.joint_names, 0.1, 20 * a, 20 * b,
                             np.array(POSE))
    path = save_trajectory(wild, tmp_path / "wild.yaml")
    assert main(["check", str(path), "--robot", PANDA, "--out", str(tmp_path / "plots")]) == 3
    printed = capsys.readouterr().out
    assert "INFEASIBLE" in printed and "exceeds by" in printed and (tmp_path / "plots" / "wild.png").is_file()


def test_sweep_command_and_bad_input(tmp_path, capsys):
    out = tmp_path / "sweep"
    code = main(["sweep", "--robot", PANDA, "--joints", "fer_joint7", "--velocities", "0.05,0.3",
                 "--hold", ",".join(map(str, POSE)), "--out", str(out)])
    assert code == 0 and load_trajectory(out / "friction_sweep.yaml").joints == ("fer_joint7",)
    assert not load_trajectory(out / "friction_sweep.yaml").simultaneous
    assert main(["design", "--robot", str(tmp_path / "missing.yaml"), "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == f"error: --robot: no robot config file '{tmp_path / 'missing.yaml'}'"


def test_check_of_a_shipped_name_writes_its_plot_to_out_not_the_current_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["check", "panda"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "wrote excitation_check/panda.png"
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "excitation_check", "excitation_check/panda.png"]
    assert main(["check", "panda", "--out", str(tmp_path / "plots")]) == 0
    assert (tmp_path / "plots" / "panda.png").stat().st_size > 10_000


def test_sweep_joints_are_space_or_comma_separated_like_everywhere(tmp_path):
    hold = ["--hold", ",".join(map(str, POSE)), "--velocities", "0.05"]
    spellings = (["fer_joint6", "fer_joint7"], ["fer_joint6,fer_joint7"], ["fer_joint6,", "fer_joint7"])
    for i, joints in enumerate(spellings):
        assert main(["sweep", "--robot", PANDA, "--joints", *joints, *hold, "--out", str(tmp_path / str(i))]) == 0
        assert load_trajectory(tmp_path / str(i) / "friction_sweep.yaml").joints == ("fer_joint6", "fer_joint7")


def test_sweep_command_moves_all_joints_together_from_the_excitation_start(tmp_path, capsys, panda_config):
    out = tmp_path / "together"
    code = main(["sweep", "--robot", PANDA, "--joints", "all", "--simultaneous", "--velocities", "0.05:0.2:3",
                 "--hold", "panda", "--travel", "0.4", "--out", str(out)])  # the start pose has fer_joint4 near -2.9
    assert code == 0 and "(together): 3 speeds" in capsys.readouterr().out
    sweep = load_trajectory(out / "friction_sweep.yaml")
    assert sweep.simultaneous and sweep.joints == panda_config.joint_names
    assert np.allclose(sweep.velocities_rad_s, [0.05, 0.1, 0.2])
    assert np.array_equal(sweep.hold_rad, load_trajectory("panda").rest_pose_rad)
    assert main(["sweep", "--robot", PANDA, "--joints", "all", "--velocities", "0.05:0.2", "--out", str(out)]) == 2
    assert "MIN:MAX:N" in capsys.readouterr().err


def test_a_payload_excitation_moves_only_the_free_joints_about_the_given_pose(tmp_path, capsys):
    pose = [0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8]
    code = main(["design", "--robot", PANDA, "--payload", "fer_link8", "--pose", ",".join(map(str, pose)),
                 "--still", "fer_joint1,fer_joint2,fer_joint3", "--harmonics", "3", "--base-frequency", "0.1",
                 "--samples", "60", "--starts", "1", "--max-iterations", "80", "--velocity-scale", "0.5",
                 "--out", str(tmp_path / "payload")])
    assert code == 0, capsys.readouterr().err
    trajectory = load_trajectory(tmp_path / "payload" / "excitation.yaml")
    q, dq, _ = trajectory.evaluate(np.linspace(0.0, trajectory.period_s, 500))
    np.testing.assert_allclose(q[:, :3], np.tile(pose[:3], (500, 1)), atol=1e-12)
    np.testing.assert_allclose(trajectory.offsets_rad, pose)
    assert np.all(np.abs(dq[:, 3:]).max(axis=0) > 0.1)  # the wrist moves
    summary = json.loads((tmp_path / "payload" / "design.json").read_text())
    assert summary["n_base"] == 10 and summary["condition_number"] < 50.0  # the load's ten parameters
    assert main(["design", "--robot", PANDA, "--payload", "fer_link8", "--pose", ",".join(map(str, pose)),
                 "--still", "wrist", "--out", str(tmp_path / "x")]) == 2
    assert "--still: no joint named ['wrist']" in capsys.readouterr().err
