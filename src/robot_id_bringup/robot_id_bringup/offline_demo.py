"""Offline end-to-end demo: excitation → simulated run → identification → physical URDF → validation.

    python -m robot_id_bringup.offline_demo [--robot iiwa14] [--out demo_output]

The "real" robot is the shipped URDF with every link 10 % heavier, a 0.5 kg tool on the last link, and
joint friction, none of which the identification is told. It follows the excitation shipped for the robot
(checked against every limit first), and its torques are computed from that true model, passed through the
robot's own torque filter (LBR: first order) and measured with 0.1 Nm of noise. The three command lines a
user would run then identify it and validate on the same path driven 20 % slower. The demo ends by comparing
the torque errors of the URDF model and of the identified models on that validation run.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

import numpy as np

from robot_id_bringup.model_line import best_set_note
from robot_id_cli.command_line import HelpFormatter, check_writable_directory, robot_source_problems
from robot_id_estimator.__main__ import main as estimator_cli
from robot_id_estimator.recordings.recording import Recording, save_csv
from robot_id_excitation.__main__ import main as excitation_cli
from robot_id_excitation.trajectory_file import load_trajectory
from robot_id_lab.synthetic import DEMO_FRICTION, SyntheticRun, heavier_links_with_tool, periodic_run, sample_times_s
from robot_id_model import load_robot_config
from robot_id_model.exit_codes import add_exit_codes

RATE_HZ = 500.0
PERIODS = 5
SLOWER = 0.8


def step(number: int, text: str) -> None:
    print(f"\n[{number}/5] {text}", flush=True)


def save_run(run: SyntheticRun, path: pathlib.Path) -> pathlib.Path:
    """The synthetic run as the CSV a user would hand the estimator (t, q_<joint>..., tau_<joint>...)."""
    return save_csv(Recording.of_arrays(**vars(run)), path)


def run(robot_name: str, out: pathlib.Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    config = load_robot_config(robot_name)
    robot = config.load_model(tuple(DEMO_FRICTION))
    trajectory = load_trajectory(robot_name)

    step(1, f"excitation: the designed trajectory shipped for {robot_name}, checked against every limit")
    if excitation_cli(["check", robot_name, "--robot", robot_name, "--out", str(out)]) != 0:
        print("the shipped excitation does not pass its checks; stopping", file=sys.stderr)
        return 1

    step(2, f"simulated run: {PERIODS} periods of {trajectory.period_s:g} s at {RATE_HZ:g} Hz, torque through the "
            f"robot's filter ({config.torque_filter_time_constant_s:g} s) plus 0.1 Nm noise")
    pi_true = heavier_links_with_tool(robot)  # the "real" robot: DEMO_FRICTION, links × 1.1, DEMO_TOOL
    t = sample_times_s(trajectory.period_s, RATE_HZ)
    run_csv = save_run(periodic_run(
        robot, pi_true, *trajectory.evaluate(t), trajectory.period_s, PERIODS, config.torque_filter_time_constant_s,
        0.1, 1e-5, seed=1, source="demo run"), out / "run.csv")
    slow_period = trajectory.period_s / SLOWER
    q, dq, ddq = trajectory.evaluate(SLOWER * np.arange(round(slow_period * RATE_HZ)) / RATE_HZ)
    check_csv = save_run(periodic_run(
        robot, pi_true, q, SLOWER * dq, SLOWER**2 * ddq, slow_period, 2, config.torque_filter_time_constant_s,
        source="demo validation"), out / "validation_run.csv")
    print(f"wrote {run_csv} and {check_csv}")

    step(3, "identification: python -m robot_id_estimator identify")
    identified = out / "identification"
    argv = ["identify", "--robot", robot_name, "--data", str(run_csv), "--period", f"{trajectory.period_s:.12g}",
            "--out", str(identified)]
    if estimator_cli(argv) != 0:
        return 1

    step(4, f"validation on the same path driven {100 * (1 - SLOWER):.0f} % slower: python -m robot_id_estimator "
            "validate")
    validated = out / "validation"
    argv = ["validate", "--result", str(identified / "identification.json"), "--data", str(check_csv), "--period",
            f"{slow_period:.12g}", "--out", str(validated)]
    if estimator_cli(argv) != 0:
        return 1

    step(5, "what the identification bought: torque error on the validation run, URDF model against identified")
    validation = json.loads((validated / "validation.json").read_text())
    percent = validation["rms_percent_of_torque"]
    labels = {"urdf": "URDF model"} | {s: s for s in percent if s != "urdf"}
    print(f"{'[% of torque RMS]':<18}" + "".join(f"{name:>9}" for name in robot.joint_names))
    for key, label in labels.items():
        print(f"{label:<18}" + "".join(f"{x:>9.2f}" for x in percent[key]))
    print(f"\nthe model is {identified / 'identified.urdf'}: the physical parameter set "
          f"({best_set_note(identified)})\nreports: {identified / 'identification.html'}, "
          f"{validated / 'validation.html'}")
    return 0


def parser() -> argparse.ArgumentParser:
    """The offline demo's parser."""
    p = argparse.ArgumentParser(prog="python -m robot_id_bringup.offline_demo", description=__doc__,
                                formatter_class=HelpFormatter)
    p.add_argument("--robot", default="iiwa14", help="robot config name with a shipped excitation")
    p.add_argument("--out", default="demo_output", type=pathlib.Path, metavar="DIR", help="output directory")
    return add_exit_codes(p)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    problems = robot_source_problems(args.robot)
    try:
        if problems:
            raise ValueError("; ".join(problems))
        check_writable_directory(args.out)
    except (ValueError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return run(args.robot, args.out)


if __name__ == "__main__":
    sys.exit(main())
