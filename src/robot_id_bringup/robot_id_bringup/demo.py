"""The demo: identify a simulated iiwa14 end to end through the real node graph, then check the result against the
simulator's truth on a motion it was not identified on (robot_id_lab.truth_check: the model files as a user loads
them).

    python -m robot_id_bringup.demo [--robot iiwa14] [--periods 5] [--out results/demo_<time>]

Two runs of the graph (graph.py, started by the runner), each with the simulated robot of the same seeded true
dynamics (its joints' friction drawn from DEMO_FRICTION_LAWS: some with a Stribeck rise, some smooth and off-centre
through rest, so that neither the sweep's Stribeck fit nor the excitation's laws contain every joint's exactly), the
excitation node and the recorder (lockstep: the simulation runs as fast as the recorder keeps up): first the
friction sweep shipped for the robot (all joints together at constant speeds, forward and backward; Luo et al.
2024), recorded only; then the shipped excitation, with the estimator, which fits the Stribeck friction to the sweep
and identifies the rest. Results: <output>/friction_sweep/bag, <output>/bag (with period_index.yaml),
<output>/bag_identification (identification.json, report, identified.urdf, identified.yaml), <output>/truth.yaml,
<output>/truth_check.json, and a summary table.
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
from robot_id_cli.command_line import HelpFormatter, check_writable_directory, robot_source_problems
from robot_id_lab.truth_check import MODELS, check_against_truth
from robot_id_model.exit_codes import add_exit_codes
from robot_id_sim.true_friction import FRICTION_LAWS

DEMO_FRICTION_LAWS = ("stribeck", "sigmoid")
"""The laws the demo robot's joints draw their friction from (robot_id_sim.true_friction)."""

def summary(run: Run, wall_s: float) -> tuple[str, dict]:
    """The summary table and its figures: parameters, median RSD, torque error of the nominal URDF and of the
    written model against the truth."""
    results = pathlib.Path(run.results_path)
    identification = json.loads((results / "identification.json").read_text())
    checks = check_against_truth(run.robot, results, run.truth_path)
    rsd = np.array([x for x in identification["base"]["rsd_percent"] if x is not None], dtype=float)
    friction = "Stribeck friction from the sweep" if run.friction_sweeps else "linear friction (no sweep)"
    lines = [f"{run.robot}: {len(identification['base']['names'])} base parameters, "
             f"{len(identification['essential']['names'])} essential, {friction}; median RSD of the base "
             f"parameters {np.median(rsd):.2f} %"]
    figures: dict = {"median_base_rsd_percent": float(np.median(rsd)), "wall_s": wall_s,
                     "friction_sweep": bool(run.friction_sweeps)}
    for reference, errors in checks.items():
        percent = {name: [float(x) for x in values] for name, values in errors.rms_percent_of_torque.items()}
        figures[reference] = percent
        lines += ["", f"torque error against the {reference} on a motion not used for identification "
                      "[% of torque RMS]:",
                  f"{'':<24}" + "".join(f"{name:>9}" for name in errors.joint_names)]
        lines += [f"{label:<24}" + "".join(f"{x:>9.2f}" for x in percent[key]) for key, label in MODELS.items()]
    lines.append(f"\nwall time {wall_s:.0f} s; identified URDF: {results / 'identified.urdf'}")
    return "\n".join(lines), figures


def parser() -> argparse.ArgumentParser:
    """The demo's parser."""
    p = argparse.ArgumentParser(prog="python -m robot_id_bringup.demo", description=__doc__.splitlines()[0],
                                formatter_class=HelpFormatter)
    p.add_argument("--robot", default="iiwa14", help="robot config with a shipped excitation and sweep")
    p.add_argument("--periods", type=int, default=DEFAULT_PERIODS, help="excitation periods")
    p.add_argument("--out", default="", metavar="DIR", help="results directory (default: results/demo_<time>)")
    p.add_argument("--no-friction-sweep", action="store_true",
                   help="skip the sweep: linear (viscous + Coulomb) friction only")
    p.add_argument("--friction-laws", default=",".join(DEMO_FRICTION_LAWS), metavar="LAWS",
                   help="the laws the simulated joints' true friction is drawn from, comma-separated, of "
                        f"{', '.join(FRICTION_LAWS)} (stribeck alone: the truth of earlier demos)")
    return add_exit_codes(p)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    output_dir = pathlib.Path(args.out or time.strftime("results/demo_%Y%m%d_%H%M%S"))
    laws = tuple(law for law in args.friction_laws.split(",") if law)
    sweep = Run(args.robot, "sim", str(output_dir / "friction_sweep"), trajectory=f"{args.robot}_friction_sweep",
                sim_friction_laws=laws)
    started = time.monotonic()
    problems = robot_source_problems(args.robot)
    unknown = [law for law in laws if law not in FRICTION_LAWS]
    if unknown or not laws:
        problems.append(f"--friction-laws takes laws from {', '.join(FRICTION_LAWS)}, not '{args.friction_laws}'")
    if problems:
        print(f"error: {'; '.join(problems)}", file=sys.stderr)
        return 2
    try:
        check_writable_directory(output_dir)
        if not args.no_friction_sweep:
            code = run_graph(sweep)
            if code != 0:
                return code
        run = Run(args.robot, "sim", str(output_dir), args.periods,
                  friction_sweeps=() if args.no_friction_sweep else (sweep.bag_path,), sim_friction_laws=laws)
        code = run_graph(run)
    except (RunnerError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if code != 0:
        return code
    print("\nrobot_id: checking the identification against the simulator's truth ...", flush=True)
    table, figures = summary(run, time.monotonic() - started)
    (output_dir / "truth_check.json").write_text(json.dumps(figures, indent=1))
    print("\n" + table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
