"""A robot added as one folder: the URDF corpus's UR5e (Universal Robots' own URDF, unchanged) with a robot.yaml
beside it, in a folder of its own outside the workspace. `design` writes the folder's excitation, and the offline demo
(`check`, a simulated run, `identify`, `validate`) runs against `--robot <folder>`: no file of the workspace is
changed or needed for it (robot_id_description/robots/README.md)."""

import importlib.util
import pathlib
import shutil
import sys

import numpy as np
import pytest
import yaml

from robot_id_bringup import offline_demo
from robot_id_bringup.graph import Run
from robot_id_excitation.__main__ import main as excitation_cli
from robot_id_excitation.trajectory_file import load_trajectory
from robot_id_lab.written_model import written_torque_nm
from robot_id_model import load_robot_config, regressor
from robot_id_model.robot_config import robot_names

ROOT = pathlib.Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("urdf_corpus", ROOT / "benchmarks" / "urdf_corpus.py")
corpus = importlib.util.module_from_spec(_spec)
sys.modules["urdf_corpus"] = corpus
_spec.loader.exec_module(corpus)

TWO_PI, PI = 6.283185307179586, 3.141592653589793
UR5E = {
    "robot": "ur5e",
    "urdf": "ur5e.urdf",
    "joint_names": ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
                    "wrist_3_joint"],
    "flange_frame": "flange",
    "gravity_m_s2": [0.0, 0.0, -9.81],
    "limits": {  # the URDF's <limit>s; acceleration, flange speed and floor as benchmarks/urdf_corpus.py designs
        "position_lower_rad": [-TWO_PI, -TWO_PI, -PI, -TWO_PI, -TWO_PI, -TWO_PI],
        "position_upper_rad": [TWO_PI, TWO_PI, PI, TWO_PI, TWO_PI, TWO_PI],
        "velocity_rad_s": [PI] * 6,
        "acceleration_rad_s2": [10.0] * 6,
        "torque_nm": [150.0, 150.0, 150.0, 28.0, 28.0, 28.0],
        "flange_speed_m_s": 1.0,
    },
    "floor_z_m": 0.05,
    "state_rate_hz": 500.0,  # the e-Series controller's cycle
    "topics": {"joint_states": "/joint_states",
               "joint_trajectory": "/scaled_joint_trajectory_controller/joint_trajectory"},  # ur_robot_driver's
    "torque_filter_time_constant_s": 0.0,
}
"""The UR5e's robot.yaml, without `collision:` (its design is then not checked for collisions, and says so)."""
SHORT_DESIGN = ["--harmonics", "2", "--base-frequency", "0.2", "--samples", "40", "--starts", "1",
                "--max-iterations", "100"]
HELD_OUT_ERROR_PERCENT = 10.0
"""identified.urdf's torque error against the demo's true robot on its slower validation path, per joint (measured
4.7 % on the shoulder pan, whose torque is the smallest; at most 0.33 % on the others)."""


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> pathlib.Path:
    """tmp/ur5e/: the corpus's ur5e.urdf and robot.yaml; then `design --robot <folder>` into its trajectories/."""
    ur5e = tmp_path_factory.mktemp("robots") / "ur5e"
    ur5e.mkdir()
    shutil.copy(corpus.CORPUS / "ur5e.urdf", ur5e / "ur5e.urdf")
    (ur5e / "robot.yaml").write_text(yaml.safe_dump(UR5E, sort_keys=False))
    assert excitation_cli(["design", "--robot", str(ur5e), *SHORT_DESIGN, "--out", str(ur5e / "trajectories")]) == 0
    return ur5e


@pytest.fixture(scope="module")
def demo(folder, tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("demo")
    assert offline_demo.main(["--robot", str(folder), "--out", str(out)]) == 0
    return out


def test_the_folder_is_the_robot_and_its_design_keeps_the_limits_its_robot_yaml_states(folder):
    config = load_robot_config(folder)
    assert config.robot == "ur5e" not in robot_names()  # not installed: the folder alone
    assert config.urdf_path == folder / "ur5e.urdf" and config.collision is None
    trajectory = load_trajectory(folder)  # the folder's trajectories/excitation.yaml
    assert trajectory.robot == "ur5e" and trajectory.joint_names == tuple(UR5E["joint_names"])
    q, dq, ddq = trajectory.evaluate(np.linspace(0.0, trajectory.period_s, 2001))
    limits = UR5E["limits"]
    assert np.all((q >= limits["position_lower_rad"]) & (q <= limits["position_upper_rad"]))
    assert np.all(np.abs(dq) <= np.array(limits["velocity_rad_s"]) + 1e-9)
    assert np.all(np.abs(ddq) <= np.array(limits["acceleration_rad_s2"]) + 1e-9)
    np.testing.assert_allclose([q[0], dq[0], ddq[0]], [q[-1], dq[-1], ddq[-1]], atol=1e-9)  # periodic


def test_the_demo_identifies_the_folders_robot_and_its_urdf_predicts_the_truth(folder, demo):
    """identified.urdf through pinocchio (not the suite's model code) plus identified.yaml's friction, against the
    demo's true robot (links 10 % heavier, a tool, DEMO_FRICTION) on the validation path, 20 % slower."""
    config = load_robot_config(folder)
    robot = config.load_model(tuple(offline_demo.DEMO_FRICTION))
    pi_true = offline_demo.heavier_links_with_tool(robot)  # the demo's own truth
    trajectory = load_trajectory(folder)
    t_s = np.linspace(0.0, trajectory.period_s, 501)
    q, dq, ddq = trajectory.evaluate(t_s)
    dq, ddq = offline_demo.SLOWER * dq, offline_demo.SLOWER**2 * ddq
    truth_nm = regressor(robot, q, dq, ddq) @ pi_true
    predicted_nm = written_torque_nm(demo / "identification", config.joint_names, q, dq, ddq)
    error_percent = 100.0 * np.sqrt(np.mean((predicted_nm - truth_nm) ** 2, axis=0) / np.mean(truth_nm**2, axis=0))
    assert np.all(error_percent < HELD_OUT_ERROR_PERCENT), error_percent


def test_the_runner_runs_the_folders_trajectories(folder):
    """`robot_id identify --robot <folder>` runs the folder's excitation, with --payload its payload.yaml."""
    assert Run(str(folder)).trajectory_name == str(folder / "trajectories" / "excitation.yaml")
    assert Run(str(folder), payload=True).trajectory_name == str(folder / "trajectories" / "payload.yaml")
    assert Run("iiwa14", payload=True).trajectory_name == "iiwa14_payload"


def test_a_folder_without_robot_yaml_is_one_line_and_exit_2(tmp_path, capsys):
    assert excitation_cli(["design", "--robot", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: --robot: no robot folder '{tmp_path}' (a folder holding robot.yaml)"]
