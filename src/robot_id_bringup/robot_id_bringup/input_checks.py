"""What the nodes would refuse at start-up, found by the runner before anything starts: the options' ranges, the robot
config, the trajectory (the excitation node's own refusal: robot, joints, limits) and the bags (there, a bag, closed).

Each problem is one line; the runner prints them together and exits 2.
"""

from __future__ import annotations

import math
import pathlib
from typing import TYPE_CHECKING

from robot_id_bringup.graph import Run
from robot_id_cli.command_line import robot_source_problems

if TYPE_CHECKING:
    from robot_id_estimator.recordings.described_excitation import Excitation
    from robot_id_model.robot_config import RobotConfig

STORAGE_SUFFIXES = (".mcap", ".db3")
"""rosbag2 storage files: a bag is their directory with metadata.yaml, which the recorder writes when it closes it."""


def option_problems(run: Run, timeout_s: float, assume_yes: bool, robot_timeout_s: float = 0.0) -> list[str]:
    """The runner's own options out of range (the request's: Run.problems)."""
    problems = []
    for option, seconds in (("--timeout", timeout_s), ("--robot-timeout", robot_timeout_s)):
        if not (math.isfinite(seconds) and seconds >= 0.0):
            problems.append(f"{option} must be a finite number of seconds, at least 0 (0: never), not {seconds:g}")
    if assume_yes and run.mode != "hardware":
        problems.append(f"--yes confirms the motion of mode hardware; mode {run.mode} moves no robot")
    return problems


def bag_problem(bag: str, label: str = "bag") -> str:
    """Why `bag` cannot be identified as it is ('' if it can): not there, not a rosbag2 bag (a directory with
    metadata.yaml, or its storage file), or not closed (storage files but no metadata.yaml: still being written,
    or its recorder was killed, which `python -m robot_id_recorder repair` mends)."""
    path = pathlib.Path(bag)
    if not path.exists():
        return f"{label} not found: {bag}"
    if path.is_file() and path.suffix not in STORAGE_SUFFIXES:
        return f"{label} {bag} is not a rosbag2 bag (a directory with metadata.yaml, or its .mcap or .db3 file)"
    directory = path if path.is_dir() else path.parent
    if (directory / "metadata.yaml").is_file():
        return ""
    if any(f.suffix in STORAGE_SUFFIXES for f in directory.iterdir()):
        return (f"{label} {bag} is not closed (no metadata.yaml): its recording is still going on, or its recorder was "
                f"killed; then make it readable with `python -m robot_id_recorder repair {directory}`")
    return f"{label} {bag} is not a rosbag2 bag (no metadata.yaml, no .mcap or .db3 file)"


def trajectory_problems(run: Run, config: RobotConfig) -> list[str]:
    """The trajectory the excitation node would run (--trajectory, else the one shipped for the robot) refused as the
    node refuses it: not loadable, for another robot or other joints, designed allowing other pairs closer than the
    clearance than the config's collision file allows, or beyond the robot config's limits."""
    from robot_id_excitation.constraints import design_limits
    from robot_id_excitation.excitation_guard import trajectory_refusal
    from robot_id_excitation.trajectory_file import load_trajectory, recorded_allowed_pairs
    from robot_id_model.robot_model import ModelError

    if not run.trajectory and pathlib.Path(run.robot).suffix:
        return ["--trajectory: a robot config given as a file needs its trajectory (a file, or a shipped name such "
                "as iiwa14)"]
    name = run.trajectory_name
    try:
        trajectory, carried = load_trajectory(name), recorded_allowed_pairs(name)
    except (OSError, ValueError) as err:
        return [str(err)]
    try:
        refusal = trajectory_refusal(trajectory, config.load_model(), design_limits(config), config.robot, carried)
    except (ModelError, OSError, ValueError) as err:
        return [f"--trajectory {name}: cannot be checked against {run.robot}: {err}"]
    if not refusal:
        return []
    lines = [" ".join(line.split()) for line in refusal.splitlines() if line.strip()]
    if len(lines) <= 2:
        return [f"--trajectory {name}: {' '.join(lines)}"]
    # the limit check's report: what failed, then one line per violation, the worst first
    return [f"--trajectory {name}: {lines[0]} {lines[1].removesuffix(' violated:').removesuffix(';')}; the worst: "
            f"{lines[2]}; all of them: python -m robot_id_excitation check {name} --robot {run.robot}"]


def payload_problems(run: Run, config: RobotConfig) -> list[str]:
    """The arm models of a payload run read as the estimator will read them, before the arm moves with the load on:
    each baseline bag a closed bag of this robot's joints, the arm's identification one of this robot."""
    if not (run.payload_baselines or run.payload_arm):
        return []  # and the estimator's modules (scipy, pinocchio) not imported: a request answers at once
    from robot_id_estimator.payload.identify_payload import other_robot
    from robot_id_estimator.recordings.loading import load_recording
    from robot_id_estimator.results import read_identification

    problems, planned = [], _planned_excitation(run.trajectory_name)
    for bag in run.payload_baselines:
        problem = bag_problem(bag, "payload baseline bag")
        if not problem:
            try:
                ran = load_recording(bag, config.joint_names).excitation
            except (OSError, ValueError) as err:
                problem = str(err)
            else:
                differs = "" if ran is None or planned is None else ran.differs_from(planned)
                problem = (f"it ran another excitation than this run's {run.trajectory_name} ({differs}): the "
                           "two-recording method needs the same one; record the baseline with it (--payload "
                           "--record-only)" if differs else "")
            problem = f"--baseline {bag}: {problem}" if problem else ""
        problems.append(problem)
    if run.payload_arm:
        try:
            arm = read_identification(run.payload_arm)
        except (OSError, ValueError) as err:
            problems.append(f"--arm {run.payload_arm}: {err}")
        else:
            problem = other_robot(arm, config.robot, config.joint_names)
            problems.append(f"--arm {run.payload_arm} {problem}" if problem else "")
    return problems


def _planned_excitation(trajectory_name: str) -> Excitation | None:
    """The excitation this run will run (None when its trajectory does not load: trajectory_problems says why)."""
    from robot_id_estimator.recordings.described_excitation import Excitation
    from robot_id_excitation.trajectory_file import load_trajectory

    try:
        return Excitation.of(load_trajectory(trajectory_name))
    except (OSError, ValueError):
        return None


def input_problems(run: Run) -> list[str]:
    """The robot config, then (only when it loads) the trajectory, and the bags to identify."""
    from robot_id_model.robot_config import load_robot_config
    from robot_id_model.robot_model import ModelError

    problems = robot_source_problems(run.robot)
    if not problems:
        try:
            config = load_robot_config(run.robot)  # there, but perhaps malformed
        except ModelError as err:
            problems.append(f"--robot: {err}")
        else:
            problems += trajectory_problems(run, config) if run.mode != "replay" else []
            problems += payload_problems(run, config)
    if run.mode == "replay" and run.bag:
        problems.append(bag_problem(run.bag))
    elif run.mode != "replay" and pathlib.Path(run.bag_path).exists():
        problems.append(f"--out {run.output_dir} already holds a recording ({run.bag_path}): choose a new --out")
    problems += [bag_problem(bag, "friction sweep bag") for bag in run.friction_sweeps]
    if run.friction_sweeps and run.records_sweep:
        problems.append("a friction-sweep run only records; give --friction-sweep to the identification run after it")
    return [p for p in problems if p]
