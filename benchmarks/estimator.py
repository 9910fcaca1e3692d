"""Estimator benchmark: speed at seed 000's data size, and torque prediction on real Panda data.

1. Speed: a simulated iiwa14 run of 20 periods × 10 000 samples at 500 Hz (seed 000 IV-B: L = 5, f = 0.05 Hz),
   7 joints, torque through the LBR's filter plus noise. Timed: identify (processing, regressor, base
   parameters, WLS, essential parameters) and validate (on another trajectory, with the momentum observer);
   loading the same data from CSV and writing the reports are timed apart. Goal: identify + validate < 10 s.
2. Real data (../shared/datasets/panda_gaz2019, skipped when absent): identify on the first 70 % of the log,
   validate on the last 30 %, with the panda config (hand mass absorbed by link 7's base parameters) and
   friction FV, FC, FO; per-joint RMS [Nm] against plain OLS with linear friction and Gaz et al.'s model.

Run from the repository root:  source env.sh && python benchmarks/estimator.py
(without an installed workspace: PYTHONPATH=src/robot_id_estimator:src/robot_id_model:$PYTHONPATH).
Ends with one line of JSON holding every figure.

BLAS runs single-threaded (OPENBLAS_NUM_THREADS=1 unless set): on a 2-core machine shared with other work,
OpenBLAS's threads spin against each other and the same QR takes ten times longer; the figure is reproducible
this way, and the JSON records the setting.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys
import tempfile
import time

import numpy as np

from robot_id_estimator.pipeline import identify, validate
from robot_id_estimator.processing import ProcessingConfig, first_order_lowpass
from robot_id_estimator.recording import Recording, load_recording
from robot_id_estimator.report import write_identification_report, write_validation_report
from robot_id_estimator.results import RobotSetup, write_identification, write_validation
from robot_id_estimator.settings import EstimatorConfig
from robot_id_model import load_robot_config, nominal_parameters, regressor
from robot_id_model.parameters import friction_columns

ROOT = pathlib.Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "src" / "robot_id_bringup" / "config"
PANDA_LOG = ROOT.parent / "shared" / "datasets" / "panda_gaz2019" / "panda_traj1_robot_log.csv"
REFERENCE_OLS_NM = [0.32, 0.40, 0.28, 0.43, 0.12, 0.13, 0.06]
REFERENCE_GAZ_NM = [0.41, 0.80, 0.35, 0.50, 0.17, 0.14, 0.07]


def progress(text: str) -> None:
    print(f"  … {text}", file=sys.stderr, flush=True)


def fourier_run(robot, period_s: float, per_period: int, harmonics: int, seed: int):
    """q, dq, ddq of one period of a random finite Fourier series (seed 000 eq. 8) inside 70 % of the joint
    ranges and 60 % of the velocity limits."""
    rng = np.random.default_rng(seed)
    t = np.arange(per_period) * period_s / per_period
    w, ls = 2.0 * np.pi / period_s, np.arange(1, harmonics + 1)
    a, b = rng.normal(size=(2, robot.n_joints, harmonics)) / ls
    phase = w * np.outer(t, ls)
    q = np.sin(phase) @ (a / (w * ls)).T - np.cos(phase) @ (b / (w * ls)).T
    dq = np.cos(phase) @ a.T + np.sin(phase) @ b.T
    ddq = (-np.sin(phase) * w * ls) @ a.T + (np.cos(phase) * w * ls) @ b.T
    lower, upper = robot.position_limits_rad
    v_max = np.array([robot.model.velocityLimit[robot.model.joints[j].idx_v] for j in range(1, robot.model.njoints)])
    scale = np.minimum(0.35 * (upper - lower) / np.abs(q).max(axis=0), 0.6 * v_max / np.abs(dq).max(axis=0))
    return 0.5 * (lower + upper) + q * scale, dq * scale, ddq * scale


def simulated(robot, setup, pi, n_periods: int, seed: int, noise_nm: float) -> Recording:
    """n_periods of 20 s at 500 Hz with the torque the LBR publishes (its filter, then noise)."""
    per_period, period_s = 10_000, 20.0
    q, dq, ddq = fourier_run(robot, period_s, per_period, 5, seed)
    tau = np.tile(regressor(robot, q, dq, ddq) @ pi, (n_periods + 1, 1))
    tau = first_order_lowpass(tau, period_s / per_period, setup.torque_filter_time_constant_s)[per_period:]
    rng = np.random.default_rng(seed + 100)
    k = n_periods * per_period
    return Recording(robot.joint_names, np.arange(k) * period_s / per_period,
                     np.tile(q, (n_periods, 1)) + 1e-5 * rng.normal(size=(k, 7)),
                     tau + noise_nm * rng.normal(size=(k, 7)), None, None, period_s, 5, f"simulated seed {seed}", ())


def speed(tmp: pathlib.Path) -> dict:
    print("1. speed: iiwa14, 20 periods x 10 000 samples at 500 Hz, 7 joints")
    setup = RobotSetup.from_config(load_robot_config(CONFIGS / "iiwa14.yaml"))
    robot = setup.model(("FV", "FC", "FO"))
    pi = nominal_parameters(robot)
    pi[friction_columns(robot)] = [0.4, 0.6, -0.15]
    ident = simulated(robot, setup, pi, 20, seed=0, noise_nm=0.1)
    check = simulated(robot, setup, pi, 2, seed=7, noise_nm=0.0)

    t0 = time.perf_counter()
    result = identify([ident], setup, progress=progress)
    t1 = time.perf_counter()
    validation = validate(result, [check], progress=progress)
    t2 = time.perf_counter()
    write_identification(result, tmp / "id" / "identification.json")
    write_identification_report(result, tmp / "id")
    write_validation(validation, tmp / "val" / "validation.json")
    write_validation_report(validation, tmp / "val")
    t3 = time.perf_counter()

    csv = tmp / "ident.csv"
    names = robot.joint_names
    header = ",".join(["t"] + [f"q_{j}" for j in names] + [f"tau_{j}" for j in names])
    np.savetxt(csv, np.column_stack([ident.t_s, ident.q_rad, ident.tau_nm]), delimiter=",", header=header,
               comments="", fmt="%.9g")
    t4 = time.perf_counter()
    load_recording(csv, names, period_s=20.0)
    t5 = time.perf_counter()

    relative = validation.rms_nm["essential"] / validation.torque_rms_nm
    figures = {
        "samples": len(ident.t_s),
        "identify_s": round(t1 - t0, 3),
        "validate_s": round(t2 - t1, 3),
        "identify_plus_validate_s": round(t2 - t0, 3),
        "reports_s": round(t3 - t2, 3),
        "csv_load_s": round(t5 - t4, 3),
        "stages_s": result.metrics.timings_s,
        "condition_number": round(result.metrics.condition_number, 2),
        "n_essential": len(result.essential.names),
        "validation_error_percent_of_torque_rms": [round(100 * float(r), 3) for r in relative],
    }
    print(f"   identify {figures['identify_s']} s (stages {figures['stages_s']}), validate {figures['validate_s']} s"
          f" -> {figures['identify_plus_validate_s']} s (goal < 10 s); reports {figures['reports_s']} s; "
          f"loading the {len(ident.t_s)}-row CSV {figures['csv_load_s']} s")
    print(f"   cond(Yb) {figures['condition_number']}, {figures['n_essential']} essential parameters; validation "
          f"error / torque RMS [%]: {figures['validation_error_percent_of_torque_rms']}")
    return figures


def panda(tmp: pathlib.Path) -> dict:
    print("2. real data: Panda, Gaz et al. 2019 trajectory 1; identify on the first 70 %, validate on the last 30 %")
    if not PANDA_LOG.is_file():
        print(f"   skipped: {PANDA_LOG} not found")
        return {"skipped": f"{PANDA_LOG} not found"}
    raw = np.loadtxt(PANDA_LOG, delimiter=",", skiprows=1)
    names = [f"fer_joint{i}" for i in range(1, 8)]
    header = ",".join(["t"] + [f"q_{j}" for j in names] + [f"dq_{j}" for j in names] + [f"tau_{j}" for j in names])
    split = int(0.7 * len(raw))
    for name, rows in (("train", raw[:split]), ("validate", raw[split:])):
        np.savetxt(tmp / f"panda_{name}.csv", rows, delimiter=",", header=header, comments="", fmt="%.9g")
    setup = RobotSetup.from_config(load_robot_config(CONFIGS / "panda.yaml"))
    train = load_recording(tmp / "panda_train.csv", names)
    check = load_recording(tmp / "panda_validate.csv", names)
    for note in train.repairs:
        print(f"   train data: {note}")
    # the source's processing: logged velocities, 4th-order Butterworth at 10 Hz on dq and ddq; the torque is
    # filtered alike on both sides of the regression (parallel filtering), so its cutoff matches the motion's
    processing = ProcessingConfig(torque_cutoff_hz=10.0, motion_cutoff_hz=10.0)
    figures = {"reference_ols_nm": REFERENCE_OLS_NM, "reference_gaz_nm": REFERENCE_GAZ_NM}
    print(f"   {'':<15}" + " ".join(f"{'j' + str(i):>6}" for i in range(1, 8)))
    print(f"   {'OLS reference':<15}" + " ".join(f"{x:6.3f}" for x in REFERENCE_OLS_NM))
    print(f"   {'Gaz et al.':<15}" + " ".join(f"{x:6.3f}" for x in REFERENCE_GAZ_NM))
    for method in ("ols", "wls"):
        config = EstimatorConfig(processing=processing, method=method)
        t0 = time.perf_counter()
        result = identify([train], setup, config)
        validation = validate(result, [check], config)
        elapsed = time.perf_counter() - t0
        for parameter_set in ("base", "essential"):
            rms = validation.rms_nm[parameter_set]
            label = f"{method.upper()} {parameter_set}"
            print(f"   {label:<15}" + " ".join(f"{x:6.3f}" for x in rms))
            figures[f"{method}_{parameter_set}_rms_nm"] = [round(float(x), 4) for x in rms]
            figures[f"{method}_{parameter_set}_at_or_below_ols_reference_2_decimals"] = bool(
                np.all(np.round(rms, 2) <= REFERENCE_OLS_NM))
            figures[f"{method}_{parameter_set}_below_gaz"] = bool(np.all(rms < REFERENCE_GAZ_NM))
        figures[f"{method}_condition_number"] = round(result.metrics.condition_number, 2)
        figures[f"{method}_n_essential"] = len(result.essential.names)
        figures[f"{method}_unidentified"] = list(result.unidentified)
        figures[f"{method}_seconds"] = round(elapsed, 2)
    print(f"   cond(Yb) {figures['ols_condition_number']}; essential parameters: OLS {figures['ols_n_essential']}, "
          f"WLS {figures['wls_n_essential']} of 64")
    return figures


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        figures = {"speed": speed(pathlib.Path(tmp)), "panda_gaz2019": panda(pathlib.Path(tmp))}
    figures["openblas_num_threads"] = os.environ.get("OPENBLAS_NUM_THREADS")
    print(json.dumps(figures))


if __name__ == "__main__":
    if "OPENBLAS_NUM_THREADS" not in os.environ:  # numpy reads it at import: start again with it set
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    main()
