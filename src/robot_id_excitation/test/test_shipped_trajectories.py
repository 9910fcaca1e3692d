"""The excitations shipped in trajectories/ are within their robot's limits and start and end at rest."""

import pathlib

import numpy as np
import pytest
import yaml

from robot_id_excitation.check import check_trajectory, trajectory_criteria
from robot_id_excitation.constraints import design_limits
from robot_id_excitation.regressor_sensitivity import payload_columns
from robot_id_excitation.trajectory_file import load_trajectory
from robot_id_model.robot_config import config_directory, load_robot_config

PACKAGE = pathlib.Path(__file__).resolve().parents[1]
CONFIG_DIR = config_directory()
SHIPPED = sorted(p for p in (PACKAGE / "trajectories").glob("*.yaml")
                 if not p.stem.endswith(("_friction_sweep", "_payload")))
PAYLOAD = sorted((PACKAGE / "trajectories").glob("*_payload.yaml"))


def test_every_robot_config_has_a_shipped_excitation():
    assert {p.stem for p in SHIPPED} == {p.stem for p in CONFIG_DIR.glob("*.yaml")}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_excitation_is_safe_and_as_designed(path):
    config = load_robot_config(CONFIG_DIR / f"{path.stem}.yaml")
    traj = load_trajectory(path)
    assert traj.joint_names == config.joint_names and traj.kind == "modified_fourier"
    robot = config.load_model(("FV", "FC"))
    report = check_trajectory(robot, design_limits(config), traj)
    assert report.feasible, report.lines()
    recorded = yaml.safe_load(path.read_text())
    criteria = trajectory_criteria(robot, traj, samples=2000)  # cond(Yb) recomputed, never read from the file
    assert criteria.condition_number < 100
    assert recorded["criteria"]["condition_number"] == pytest.approx(criteria.condition_number, rel=1e-6)
    limits = recorded["design"]["limits"]
    q, dq, _ = traj.evaluate(np.linspace(0.0, traj.period_s, 2001))
    assert np.all(q >= np.array(limits["position_lower_rad"]) - 1e-9)
    assert np.all(np.abs(dq) <= np.array(limits["velocity_rad_s"]) + 1e-9)


@pytest.mark.parametrize("path", PAYLOAD, ids=lambda p: p.stem)
def test_shipped_payload_excitation_is_safe_short_and_moves_the_wrist_about_its_pose(path):
    """Within the robot's limits; its cond is that of the load's ten parameters on the config's flange, recomputed;
    30-60 s for 3-6 periods; joints 1-3 stay at the pose, which is the trajectory's offsets."""
    config = load_robot_config(CONFIG_DIR / f"{path.stem.removesuffix('_payload')}.yaml")
    traj = load_trajectory(path)
    robot = config.load_model(("FV", "FC"))
    assert check_trajectory(robot, design_limits(config), traj).feasible
    recorded = yaml.safe_load(path.read_text())
    criteria = trajectory_criteria(robot, traj, samples=2000,
                                   columns=payload_columns(robot, config.flange_frame), still_joints=(0, 1, 2))
    assert criteria.n_base == 10 and criteria.condition_number < 10
    assert recorded["criteria"]["condition_number"] == pytest.approx(criteria.condition_number, rel=1e-3)
    assert 30.0 <= 4 * traj.period_s <= 60.0
    q, dq, _ = traj.evaluate(np.linspace(0.0, traj.period_s, 2001))
    np.testing.assert_allclose(q[:, :3], np.tile(traj.offsets_rad[:3], (2001, 1)), atol=1e-12)
    assert np.all(np.abs(dq[:, 3:]).max(axis=0) > 0.2)
