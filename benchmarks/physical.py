"""Physical-parameter benchmark (issues 5 and 14): both retrieval methods, default estimator config, on simulated
iiwa14/panda runs and on the real Panda log.

For each case and method: wall time of the retrieval; starts that ended feasible (multistart: a start ends
feasible when its local solve visited a point that meets every constraint, the start itself included; "improved"
counts those that found a better one than their start); constraint violations (goal: none; a violating set is never
returned: the pipeline falls back to the other method or fails); the residual of Xu et al. 2020, eq. (15) against the
unconstrained least-squares residual of the same columns; torque RMS on held-out data; the constraints the solution
lies on (active bounds: the data pushed against them); a digest of the retrieved standard parameters (the same in
every run: the methods are deterministic). Methods: the convex program (default, Euclidean pull; and the entropic
one) and Xu et al.'s (2020) multi-start (8 starts, 2 processes; goal on the Panda log: at least half the starts
feasible, under 20 s).

1. Simulated: 10 periods of 20 s at 250 Hz, 0.1 Nm torque noise; the true model is the URDF one with link masses and
   inertias scaled by ±10 % per link and linear friction (Franka's link 4, which breaks the triangle inequality, made
   consistent). Held-out: a different noise-free trajectory.
2. Real data (../shared/datasets/panda_gaz2019, skipped when absent): identify on the first 70 % of the log's time with
   the panda_hand config (the Franka Hand lumped onto link 7 and kept as known), hold out the last 30 %; goal: the
   physical set within 2 % of the base parameters on every joint.

Run from the repository root:  source env.sh && python benchmarks/physical.py   (ends with one JSON line)
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
from bench_data import PANDA_LOG, panda_log, robot_setup, simulated

from robot_id_estimator.pipeline import identify
from robot_id_estimator.settings import EstimatorConfig, PhysicalConfig
from robot_id_estimator.validate import validate
from robot_id_lab.synthetic import scaled_links

METHODS = {
    "lmi-euclidean": PhysicalConfig(method="lmi"),
    "lmi-entropic": PhysicalConfig(method="lmi", regularizer="entropic"),
    "multistart": PhysicalConfig(method="multistart"),
}


def digest(values: np.ndarray) -> str:
    """Short digest of parameter values rounded to 9 significant digits (equal in repeated runs)."""
    return hashlib.sha256(" ".join(f"{v:.9g}" for v in values).encode()).hexdigest()[:12]


def run(label: str, train, check, setup, config: EstimatorConfig, rms_unit: str) -> dict:
    result = identify([train], setup, config)
    p = result.physical
    if p is None:
        print(f"   {label:<15} FAILED: {result.checks['physical'].failures[0]}", flush=True)
        return {"failed": result.checks["physical"].failures[0]}
    validation = validate(result, [check], config)
    rms = validation.rms_nm["physical"] if rms_unit == "Nm" else (
        100.0 * validation.rms_nm["physical"] / validation.torque_rms_nm)
    over_base = validation.rms_nm["physical"] / validation.rms_nm["base"]
    feasible = next((n.split(" ")[0] for n in p.notes if "starts feasible" in n), "1/1")
    improved = next((n.split(" ")[0] for n in p.notes if "improved on their start" in n), "-")
    figures = {
        "method": p.method,
        "wall_time_s": round(p.wall_time_s, 2),
        "feasible_starts": feasible,
        "starts_improved_by_the_local_solver": improved,
        "violations": len(p.violations),
        "residual_increase_percent": round(p.residual_increase_percent, 3),
        f"held_out_rms_{'nm' if rms_unit == 'Nm' else 'percent_of_torque'}": [round(float(x), 4) for x in rms],
        "over_base": [round(float(x), 4) for x in over_base],
        "active_bounds": list(p.plausibility.active),
        "check_passed": result.passed("physical"),
        "digest": digest(p.standard_values),
    }
    print(f"   {label:<15} {figures['wall_time_s']:6.2f} s  starts feasible {feasible:>4} (improved {improved:>1})  "
          f"violations "
          f"{figures['violations']}  residual {figures['residual_increase_percent']:+7.3f} %  held-out RMS "
          f"[{rms_unit}] " + " ".join(f"{x:.3f}" for x in rms) + "  /base max "
          f"{over_base.max():.4f}  active {len(p.plausibility.active)}  digest {figures['digest']}", flush=True)
    return figures


def simulated_case(name: str) -> dict:
    print(f"1. simulated {name}: 10 periods of 20 s at 250 Hz, 0.1 Nm noise (held-out RMS in % of torque)", flush=True)
    setup = robot_setup(name)
    robot = setup.model(("FV", "FC", "FO"))
    pi = scaled_links(robot)
    train = simulated(robot, setup, pi, 10, seed=0, noise_nm=0.1, rate_hz=250.0)
    check = simulated(robot, setup, pi, 1, seed=7, noise_nm=0.0, rate_hz=250.0)
    return {label: run(label, train, check, setup, EstimatorConfig(physical=method), "%")
            for label, method in METHODS.items()}


def panda_case() -> dict:
    print("2. real Panda log (Gaz et al. 2019), default config: identify on the first 70 %, hold out the last 30 %",
          flush=True)
    data = panda_log()
    if data is None:
        print(f"   skipped: {PANDA_LOG} not found")
        return {"skipped": f"{PANDA_LOG} not found"}
    train, check = data
    setup = robot_setup("panda_hand")  # the logged robot carries the Franka Hand
    figures = {label: run(label, train, check, setup, EstimatorConfig(physical=method), "Nm")
               for label, method in METHODS.items()}
    for label, f in figures.items():
        if "active_bounds" in f:
            print(f"   {label} active bounds: " + "; ".join(f["active_bounds"]))
    return figures


def main() -> None:
    figures = {"iiwa14_simulated": simulated_case("iiwa14"), "panda_simulated": simulated_case("panda")}
    figures["panda_real"] = panda_case()
    runs = [f for case in figures.values() for f in case.values() if isinstance(f, dict) and "wall_time_s" in f]
    figures["max_wall_time_s"] = max(f["wall_time_s"] for f in runs)
    figures["all_without_violations"] = all(f["violations"] == 0 for f in runs)
    print(json.dumps({"benchmark": "physical", **figures}))


if __name__ == "__main__":
    main()
