"""Guarantee 5 (docs/safety.md): no trajectory the suite sends brings two non-adjacent links, or a link and the
environment, closer than the clearance. Checked against the vendors' collision meshes read by coal."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest
from vendor_meshes import mesh_distances

from robot_id_excitation.__main__ import main
from robot_id_excitation.check import time_grid
from robot_id_excitation.command_check import CommandPoints, check_points
from robot_id_excitation.constraints import constraint_groups, design_limits
from robot_id_excitation.excitation_guard import trajectory_refusal
from robot_id_excitation.excitation_settings import ExcitationSettings
from robot_id_excitation.excitation_state import ExcitationStateMachine, Phase
from robot_id_excitation.trajectory_file import load_trajectory
from robot_id_model.robot_config import load_robot_config, robot_folder

DATA = pathlib.Path(__file__).parent / "data"
SAMPLES = {"panda": 500, "panda_hand": 500, "fr3": 200, "fr3_hand": 200, "iiwa14": 100, "iiwa7": 100}
"""Poses per period checked on the meshes (the iiwa's meshes hold 8000–16000 triangles per link)."""


def _setup(robot_name: str):
    config = load_robot_config(robot_name)
    return config, config.load_model(("FV", "FC")), design_limits(config)


def test_the_panda_excitation_shipped_before_the_check_is_refused_with_pair_time_and_distance() -> None:
    """The old panda.yaml drives link 7 into the table and against link 5; the refusal names the pair, the time and
    the distance, and the vendor's meshes confirm it at that time."""
    _, robot, limits = _setup("panda")
    trajectory = load_trajectory(DATA / "panda_before_collision_check.yaml")
    refusal = trajectory_refusal(trajectory, robot, limits, "panda")
    assert "collision" in refusal and "fer_link5–fer_link7" in refusal and "fer_link7–floor" in refusal
    line = next(line for line in refusal.splitlines() if "fer_link5–fer_link7" in line)
    distance_m = float(line.split("distance ")[1].split(" m")[0])
    time_s = float(line.split("t = ")[1].split(" s")[0])
    assert distance_m < 0.0  # overlapping
    q = trajectory.evaluate(np.array([time_s]))[0]
    assert mesh_distances(robot, limits.collision, [("fer_link5", "fer_link7")], q)[0, 0] < limits.collision.clearance_m


@pytest.mark.parametrize("robot_name", ["panda", "panda_hand", "fr3", "fr3_hand", "iiwa14", "iiwa7"])
def test_shipped_trajectories_clear_the_vendor_meshes_by_the_clearance(robot_name: str) -> None:
    """Excitation and friction sweep: every non-adjacent pair and every moving link over the floor keep the clearance
    on the vendor's meshes (coal), at every checked pose of a period; a pair the geometry allows closer (the FR3's
    links 5 and 7) keeps its allowed distance."""
    _, robot, limits = _setup(robot_name)
    geometry = limits.collision
    for name in (robot_name, f"{robot_name}_friction_sweep", f"{robot_name}_payload"):
        trajectory = load_trajectory(name)  # accepted by the suite's own check: test_shipped_trajectories, test_sweeps
        t = time_grid(trajectory.period_s, SAMPLES[robot_name] if name == robot_name else 100)
        q = trajectory.evaluate(t)[0]
        zeros = np.zeros_like(q)
        pairs = [tuple(g.where.split("–")) for g in constraint_groups(robot, limits, q[:1], zeros[:1], zeros[:1])
                 if g.constraint == "collision"]
        clearances_m = [geometry.clearance_of(*pair) for pair in pairs]
        margins = mesh_distances(robot, geometry, pairs, q, exact_below_m=max(clearances_m)) - clearances_m
        k, p = np.unravel_index(np.argmin(margins), margins.shape)
        assert margins[k, p] >= 0.0, (name, pairs[p], t[k], margins[k, p])


def test_check_prints_the_closest_approach(capsys, tmp_path) -> None:
    assert main(["check", str(DATA / "panda_before_collision_check.yaml"), "--robot", "panda",
                 "--out", str(tmp_path)]) == 3
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("closest approach"))
    assert "never more than the meshes" in line and "fer_link7 and floor" in line
    assert "VIOLATED" in line and "clearance 10.0 mm" in line
    assert main(["check", "panda", "--out", str(tmp_path)]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("closest approach"))
    assert "VIOLATED" not in line and float(line.split("): ")[1].split(" mm")[0]) >= 10.0


def test_the_command_monitor_refuses_a_command_that_folds_the_wrist() -> None:
    """A command through q6 near its lower limit (links 5 and 7 of the Panda overlap there) is refused."""
    _, robot, limits = _setup("panda")
    q = np.tile([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785], (11, 1))
    q[:, 5] = np.linspace(1.571, 0.0, 11)
    t = np.linspace(0.1, 10.1, 11)
    velocities = np.gradient(q, t, axis=0)
    problems = check_points(CommandPoints(robot.joint_names, 0.0, t, q, velocities, np.zeros_like(q)), robot, limits)
    assert any("fer_link5 and fer_link7" in p for p in problems), problems
    q[:, 5] = np.linspace(1.571, 1.0, 11)
    assert check_points(CommandPoints(robot.joint_names, 0.0, t, q, np.gradient(q, t, axis=0), np.zeros_like(q)),
                        robot, limits) == []


def test_the_approach_from_a_pose_in_collision_is_refused_with_the_pair() -> None:
    """An arm standing with its wrist folded (within the joint limits) is not moved: the approach starts in
    collision."""
    _, robot, limits = _setup("panda")
    trajectory = load_trajectory("panda")
    machine = ExcitationStateMachine(trajectory, robot, limits, ExcitationSettings(start_delay_s=0.0))
    folded = trajectory.rest_pose_rad.copy()
    folded[5] = 0.0
    machine.on_joint_state(0.0, folded, np.zeros(7), None)
    step = machine.step(0.01)
    assert machine.phase is Phase.REFUSED and not step.commands
    assert any("fer_link5–fer_link7" in line.text for line in step.log), [line.text for line in step.log]


def test_a_box_in_a_copy_of_the_config_refuses_the_shipped_excitation_naming_it(tmp_path) -> None:
    """docs/real_robots.md: a wall added to a copy of the iiwa14 config, its urdf and geometry by absolute path."""
    folder = robot_folder("iiwa14")
    text = (folder / "robot.yaml").read_text()
    text = text.replace("urdf: ", f"urdf: {folder}/").replace("geometry: ", f"geometry: {folder}/")
    wall = "  - {name: wall, centre_m: [0.0, -0.45, 0.5], size_m: [2.0, 0.1, 1.0]}"
    text = text.replace("  boxes: []", "  boxes:\n" + wall)
    (tmp_path / "cell.yaml").write_text(text)
    config = load_robot_config(tmp_path / "cell.yaml")
    refusal = trajectory_refusal(load_trajectory("iiwa14"), config.load_model(("FV", "FC")), design_limits(config),
                                 "iiwa14")
    assert "–wall distance -" in refusal


def test_a_urdf_arm_refuses_pairs_the_trajectory_was_not_designed_allowing_and_bad_ones(tmp_path, capsys) -> None:
    """A trajectory checked with an --allow-pair it was not designed with (its file records none) is refused in one
    line, exit 2, before any check; so is a pair naming no link with geometry, or not two names."""
    urdf = str(load_robot_config("panda").urdf_path)
    limits = ["--acceleration-limit", "10", "--flange-speed", "1.0", "--floor-z", "0.05", "--out", str(tmp_path)]
    trajectory = str(DATA / "panda_before_collision_check.yaml")
    assert main(["check", trajectory, "--urdf", urdf, *limits]) == 3
    assert "fer_link5–fer_link7" in capsys.readouterr().out
    allowed = ["--allow-pair", "fer_link5,fer_link7"]
    assert main(["check", trajectory, "--urdf", urdf, *allowed, *limits]) == 2
    printed = capsys.readouterr()
    assert not printed.out and printed.err.count("\n") == 1, printed
    assert "not designed allowing fer_link5–fer_link7 closer than the clearance" in printed.err
    for bad in (["--allow-pair", "fer_link5,nothing"], ["--allow-pair", "fer_link5"]):
        assert main(["check", trajectory, "--urdf", urdf, *bad, *limits]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and ("nothing" in err or "LINK,LINK" in err), err
