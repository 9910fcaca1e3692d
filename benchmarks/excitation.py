"""Excitation design benchmark: cond(Yb), log det and wall time per criterion, on the iiwa14 and the Panda.

cond(Yb) is the plain condition number of the stacked, unscaled base regressor over one period (2000 samples,
Coulomb column sign(dq)), as Xu et al. 2020 and Gaz et al. report it. log det is log det((1/K)·Σ Yb_kᵀYb_k), per
sample (Σ = I). Every design is checked against its limits on a grid ten times finer than its design grids.

- iiwa14 as Xu et al. 2020: L = 5, f_f = 0.05 Hz, friction FV, FC (57 base parameters), velocity limits reduced to
  VELOCITY_SCALE of the datasheet (Xu et al. 2020 reduced them but its Table 3 is not in the text we have).
- Panda as Gaz et al. 2019: L = 5, ω_f = 0.15π (f_f = 0.075 Hz), friction FV, FC, FO (64 base parameters),
  datasheet limits.
Both: position margin 0.1 rad, acceleration and torque limits of the robot config, flange speed ≤ 1 m/s, no
link origin or flange below z = 0.05 m.

Anchors: Xu et al. 2020 cond 156.3 (iiwa14), robot_payload_id 116.7 (iiwa), Gaz et al. 121.88 (Panda), Luo et al. 2024
targets ≤ 100; our goal is cond ≤ 100 on both robots in under 5 minutes. When /work/shared is present, Gaz et
al.'s own Table II trajectory is evaluated with the same regressor for comparison.

Collision (docs/safety.md, guarantee 5): for each shipped robot, the design of its shipped excitation (L = 5,
f_f = 0.05 Hz, friction FV, FC, velocity limits halved, cond, one start, seed 0, at most COLLISION_TIME_LIMIT_S) without
the collision constraint (before) and with it (after: the config's clearance plus the design margin of 5 mm): wall
time, iterations, cond(Yb) and the closest approach of two links or a link and the floor (capsules and hulls).
`--part collision` runs only this part, `--part criteria` only the rest.

Prints a table, design progress on stderr, and ends with one line of JSON holding every figure.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import pathlib
import sys
import time

import numpy as np

from robot_id_excitation.check import check_trajectory, trajectory_criteria
from robot_id_excitation.constraints import DESIGN_CLEARANCE_MARGIN_M, design_limits
from robot_id_excitation.design import design_excitation
from robot_id_excitation.design_problem import DesignOptions
from robot_id_excitation.fourier import FourierTrajectory
from robot_id_model import base_parameters, load_robot_config
from robot_id_model.robot_config import robot_names

GAZ_TABLE = pathlib.Path("/work/shared/datasets/panda_gaz2019/params/gaz2019_excitation_fourier_tableII.csv")
VELOCITY_SCALE = 0.5
CRITERIA = ("cond", "d_optimality", "hadamard", "embedded")
CASES = {
    "iiwa14": {"base_frequency_hz": 0.05, "friction": ("FV", "FC"), "velocity_scale": VELOCITY_SCALE},
    "panda": {"base_frequency_hz": 0.075, "friction": ("FV", "FC", "FO"), "velocity_scale": 1.0},
}
COLLISION_ROBOTS = robot_names()
COLLISION_TIME_LIMIT_S = 300.0
BUDGET = {"cond": (4, 270.0), "d_optimality": (2, 150.0), "hadamard": (2, 150.0), "embedded": (2, 270.0)}
"""criterion: (starts, time limit in s)"""


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_case(name: str, case: dict) -> dict:
    config = load_robot_config(name)
    robot = config.load_model(case["friction"])
    base = base_parameters(robot)
    limits = design_limits(config, position_margin_rad=0.1, velocity_scale=case["velocity_scale"])
    out = {"setup": {"harmonics": 5, "base_frequency_hz": case["base_frequency_hz"], "friction": list(robot.friction),
                     "n_base": base.n_base, "velocity_scale": case["velocity_scale"], "position_margin_rad": 0.1}}
    for criterion in CRITERIA:
        starts, limit_s = BUDGET[criterion]
        options = DesignOptions(harmonics=5, base_frequency_hz=case["base_frequency_hz"], criterion=criterion,
                                starts=starts, seed=0, time_limit_s=limit_s)
        started = time.monotonic()
        result = design_excitation(robot, limits, options, name, base=base, progress=_progress)
        wall = time.monotonic() - started
        c = result.criteria
        out[criterion] = {"condition_number": round(c.condition_number, 2), "log_det": round(c.log_det, 3),
                          "hadamard": round(c.hadamard, 3), "wall_time_s": round(wall, 1), "starts": starts,
                          "feasible": result.feasible}
        print(f"{name:<7} {criterion:<13} cond {c.condition_number:8.2f}   log det {c.log_det:8.2f}   "
              f"Hadamard {c.hadamard:8.2f}   {wall:6.1f} s   {'feasible' if result.feasible else 'INFEASIBLE'}",
              flush=True)
    return out


def gaz_table_ii() -> dict | None:
    """cond of Gaz et al.'s published Panda trajectory (their Table II) with our regressor, FV, FC, FO."""
    if not GAZ_TABLE.is_file():
        return None
    rows = [r for r in csv.reader(line for line in GAZ_TABLE.read_text().splitlines() if not line.startswith("#"))]
    values = np.array([[float(v) for v in r[1:]] for r in rows[1:]])
    config = load_robot_config("panda")
    robot = config.load_model(("FV", "FC", "FO"))
    traj = FourierTrajectory("fourier", "panda", config.joint_names, 0.075, values[:, :5], values[:, 5:10],
                             values[:, 10])
    c = trajectory_criteria(robot, traj)
    report = check_trajectory(robot, design_limits(config), traj)
    return {"condition_number": round(c.condition_number, 2), "log_det": round(c.log_det, 3),
            "violations_of_our_checks": [f"{v.constraint} {v.where}" for v in report.violations]}


def collision_case(name: str) -> dict:
    """The shipped robot's excitation designed without and with the collision constraint."""
    config = load_robot_config(name)
    robot = config.load_model(("FV", "FC"))
    base = base_parameters(robot)
    with_collision = design_limits(config, position_margin_rad=0.1, velocity_scale=0.5,
                                   clearance_margin_m=DESIGN_CLEARANCE_MARGIN_M)
    hard = design_limits(config)
    out = {"clearance_m": config.collision.clearance_m}
    for label, limits in (("before", dataclasses.replace(with_collision, collision=None)), ("after", with_collision)):
        options = DesignOptions(harmonics=5, base_frequency_hz=0.05, criterion="cond", starts=1, seed=0,
                                time_limit_s=COLLISION_TIME_LIMIT_S)
        started = time.monotonic()
        result = design_excitation(robot, limits, options, name, base=base, progress=_progress)
        wall = time.monotonic() - started
        closest = check_trajectory(robot, hard, result.trajectory).closest("collision")
        out[label] = {"wall_time_s": round(wall, 1), "iterations": sum(s.iterations for s in result.starts),
                      "stopped": result.stopped, "condition_number": round(result.criteria.condition_number, 2),
                      "closest_m": round(closest.value, 4), "closest_pair": closest.where}
        print(f"{name:<11} {label:<7} {wall:6.0f} s  {out[label]['iterations']:4d} iterations"
              f"{' (time limit)' if result.stopped else '':13}  cond {result.criteria.condition_number:7.2f}  "
              f"closest {1000 * closest.value:7.1f} mm ({closest.where})", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description="excitation design benchmark")
    parser.add_argument("--part", choices=("all", "criteria", "collision"), default="all")
    part = parser.parse_args().part
    figures: dict = {}
    if part in ("all", "collision"):
        print("design without and with the collision constraint (clearance of the config + 5 mm):")
        figures["collision"] = {name: collision_case(name) for name in COLLISION_ROBOTS}
    if part in ("all", "criteria"):
        figures.update(criteria_figures())
    print(json.dumps(figures))


def criteria_figures() -> dict:
    print(__doc__.split("\n\n")[0])
    print("cond(Yb): plain condition number of the stacked, unscaled base regressor over one period\n")
    figures = {name: run_case(name, case) for name, case in CASES.items()}
    gaz = gaz_table_ii()
    if gaz is not None:
        print(f"\nGaz et al. Table II trajectory (Panda, FV FC FO) with our regressor: cond {gaz['condition_number']}"
              f" (they report 121.88); our checks flag: {gaz['violations_of_our_checks'] or 'nothing'}")
    figures["gaz2019_table2"] = gaz
    figures["anchors"] = {"xu2020_iiwa14": 156.3, "robot_payload_id_iiwa": 116.7, "gaz2019_panda": 121.88,
                          "luo2024_target": 100.0}
    goal = all(figures[name]["cond"]["condition_number"] <= 100 and figures[name]["cond"]["wall_time_s"] < 300
               and figures[name]["cond"]["feasible"] for name in CASES)
    figures["goal_cond_le_100_under_5_min"] = goal
    print(f"\ngoal cond <= 100 on both robots in under 5 minutes: {'met' if goal else 'NOT met'}")
    return figures


if __name__ == "__main__":
    main()
