"""The excitations shipped in the robot folders (robots/<robot>/trajectories/) are within their robot's limits and
start and end at rest."""

import numpy as np
import pytest
import yaml

from robot_id_excitation.check import check_trajectory, trajectory_criteria
from robot_id_excitation.constraints import design_limits
from robot_id_excitation.regressor_sensitivity import payload_columns
from robot_id_excitation.trajectory_file import load_trajectory, shipped_trajectories
from robot_id_model.robot_config import load_robot_config, robot_names

SHIPPED = shipped_trajectories()
EXCITATIONS = sorted(name for name in SHIPPED if name in robot_names())
PAYLOAD = sorted(name for name in SHIPPED if name.endswith("_payload"))


def test_every_robot_folder_ships_an_excitation_and_names_its_other_motions_after_itself():
    assert EXCITATIONS == list(robot_names())
    for robot in robot_names():
        assert SHIPPED[robot].parts[-3:] == (robot, "trajectories", "excitation.yaml")
        for motion in ("friction_sweep", "payload"):
            assert SHIPPED[f"{robot}_{motion}"] == SHIPPED[robot].with_name(f"{motion}.yaml")


@pytest.mark.parametrize("name", EXCITATIONS)
def test_shipped_excitation_is_safe_and_as_designed(name):
    config, path = load_robot_config(name), SHIPPED[name]
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


@pytest.mark.parametrize("name", PAYLOAD)
def test_shipped_payload_excitation_is_safe_short_and_moves_the_wrist_about_its_pose(name):
    """Within the robot's limits; its cond is that of the load's ten parameters on the config's flange, recomputed;
    30-60 s for 3-6 periods; joints 1-3 stay at the pose, which is the trajectory's offsets."""
    config, path = load_robot_config(name.removesuffix("_payload")), SHIPPED[name]
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
