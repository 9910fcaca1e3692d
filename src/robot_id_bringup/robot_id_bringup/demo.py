"""The demo: identify a simulated iiwa14 end to end through the real node graph, then check the result against the
simulator's truth on a motion it was not identified on.

    python -m robot_id_bringup.demo [--robot iiwa14] [--periods 5] [--output-dir results/demo_<time>]

The graph (graph.py, started by the runner): the simulated robot with seeded true dynamics, the excitation node with
the trajectory shipped for the robot, the recorder (lockstep: the simulation runs as fast as it keeps up) and the
estimator. Results: <output>/bag (with period_index.yaml), <output>/bag_identification (identification.json,
report, identified.urdf, identified.yaml), <output>/truth.yaml, <output>/truth_check.json, and a summary table.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import numpy as np

from robot_id_bringup.graph import DEFAULT_PERIODS, Run
from robot_id_bringup.runner import RunnerError, run_graph
from robot_id_bringup.truth_check import check_against_truth


def summary(run: Run, wall_s: float) -> tuple[str, dict]:
    """The summary table and its figures: parameters, median RSD, torque error of each model against the truth."""
    results = pathlib.Path(run.results_path)
    identification = json.loads((results / "identification.json").read_text())
    validation = check_against_truth(run.robot, results / "identification.json", run.truth_path)
    percent = {name: [float(x) for x in values] for name, values in validation.rms_percent_of_torque.items()}
    rsd = np.array([x for x in identification["base"]["rsd_percent"] if x is not None], dtype=float)
    lines = [f"{run.robot}: {len(identification['base']['names'])} base parameters, "
             f"{len(identification['essential']['names'])} essential; median RSD of the base parameters "
             f"{np.median(rsd):.2f} %",
             "torque error against the simulator's truth on a motion not used for identification "
             "[% of torque RMS]:",
             f"{'':<12}" + "".join(f"{name:>9}" for name in validation.joint_names)]
    labels = {"urdf": "nominal URDF", "base": "base", "essential": "essential", "physical": "physical"}
    for key, label in labels.items():
        if key in percent:
            lines.append(f"{label:<12}" + "".join(f"{x:>9.2f}" for x in percent[key]))
    lines.append(f"wall time {wall_s:.0f} s; identified URDF: {results / 'identified.urdf'}")
    figures = {"rms_percent_of_torque": percent, "median_base_rsd_percent": float(np.median(rsd)), "wall_s": wall_s}
    return "\n".join(lines), figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m robot_id_bringup.demo", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--robot", default="iiwa14", help="robot config with a shipped excitation")
    parser.add_argument("--periods", type=int, default=DEFAULT_PERIODS, help="excitation periods")
    parser.add_argument("--output-dir", default="", help="results directory (default: results/demo_<time>)")
    args = parser.parse_args(argv)
    run = Run(args.robot, "sim", args.output_dir or time.strftime("results/demo_%Y%m%d_%H%M%S"), args.periods)
    started = time.monotonic()
    try:
        code = run_graph(run)
    except RunnerError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if code != 0:
        return code
    print("\nrobot_id: checking the identification against the simulator's truth ...", flush=True)
    table, figures = summary(run, time.monotonic() - started)
    (pathlib.Path(run.output_dir) / "truth_check.json").write_text(json.dumps(figures, indent=1))
    print("\n" + table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
