"""Estimator benchmark: speed at Xu et al.'s (2020) data size, and torque prediction on real Panda data.

1. Speed: a simulated iiwa14 run of 20 periods × 10 000 samples at 500 Hz (Xu et al. 2020, IV-B: L = 5, f = 0.05 Hz),
   7 joints, torque through the LBR's filter plus noise. Timed: identify (processing, regressor, base
   parameters, WLS, essential parameters) and validate (on another trajectory, with the momentum observer);
   loading the same data from CSV and writing the reports are timed apart. Goal: identify + validate < 10 s.
2. Real data (../shared/datasets/panda_gaz2019, skipped when absent): the log read as shipped (column map),
   identify on the first 70 % of its time span, validate on the last 30 %, with the panda_hand config and the
   DEFAULT estimator config; per-joint held-out RMS [Nm] of the base, essential, physical and URDF models
   against plain OLS with linear friction and Gaz et al.'s model. Goal: physical within 5 % of base on every
   joint. The source's setting (OLS, 10 Hz filters) is printed beside it.

3. Long logs: non-periodic 7-joint logs (iiwa14, sums of incommensurate sines) of 1, 5 and 10 minutes at 1 kHz,
   each identified in a fresh process (the regression streamed in chunks,
   robot_id_estimator.processing.regression_stream): wall time of identify and peak memory (resident set of the
   process and of its largest chunk worker). Goal for 10 minutes: under 30 s and under 2 GB. `--long-only` runs
   only this part.

Run from the repository root:  source env.sh && python benchmarks/estimator.py
(without an installed workspace: PYTHONPATH=src/robot_id_estimator:src/robot_id_model:$PYTHONPATH).
Ends with one line of JSON holding every figure.

env.sh runs BLAS single-threaded (OPENBLAS_NUM_THREADS=1 unless set): on a 2-core machine shared with other
work, OpenBLAS's threads spin against each other and the same QR takes ten times longer; the JSON records the
setting.
"""

from __future__ import annotations

import json
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
from bench_data import PANDA_LOG, load_recording, panda_log, progress, robot_setup, simulated

from robot_id_estimator.output.report import write_identification_report, write_validation_report
from robot_id_estimator.pipeline import identify
from robot_id_estimator.recordings.recording import Recording, save_csv
from robot_id_estimator.results import write_identification
from robot_id_estimator.results.validation import write_validation
from robot_id_estimator.settings import EstimatorConfig, ProcessingConfig
from robot_id_estimator.validate import validate
from robot_id_model import nominal_parameters
from robot_id_model.parameters import friction_columns
from robot_id_model.regressor import regressor
from robot_id_model.torque_filter import first_order_lowpass

REFERENCE_OLS_NM = [0.32, 0.40, 0.28, 0.43, 0.12, 0.13, 0.06]
REFERENCE_GAZ_NM = [0.41, 0.80, 0.35, 0.50, 0.17, 0.14, 0.07]


def speed(tmp: pathlib.Path) -> dict:
    print("1. speed: iiwa14, 20 periods x 10 000 samples at 500 Hz, 7 joints")
    setup = robot_setup("iiwa14")
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

    csv = save_csv(ident, tmp / "ident.csv")
    t4 = time.perf_counter()
    load_recording(csv, robot.joint_names, period_s=20.0)
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


def panda() -> dict:
    print("2. real data: Panda with the Franka Hand, Gaz et al. 2019 trajectory 1, read as shipped (column map); "
          "identify on the first 70 % of its time, validate on the last 30 %; DEFAULT estimator config")
    data = panda_log()
    if data is None:
        print(f"   skipped: {PANDA_LOG} not found")
        return {"skipped": f"{PANDA_LOG} not found"}
    train, check = data
    setup = robot_setup("panda_hand")
    for note in train.repairs:
        print(f"   train data: {note}")
    figures = {"config": "default (EstimatorConfig())", "reference_ols_nm": REFERENCE_OLS_NM,
               "reference_gaz_nm": REFERENCE_GAZ_NM}
    print(f"   {'held-out RMS [Nm]':<22}" + " ".join(f"{'j' + str(i):>6}" for i in range(1, 8)))
    print(f"   {'OLS reference':<22}" + " ".join(f"{x:6.3f}" for x in REFERENCE_OLS_NM))
    print(f"   {'Gaz et al.':<22}" + " ".join(f"{x:6.3f}" for x in REFERENCE_GAZ_NM))
    t0 = time.perf_counter()
    result = identify([train], setup, EstimatorConfig())
    validation = validate(result, [check])
    figures["seconds"] = round(time.perf_counter() - t0, 2)
    figures["rms_nm"] = {}
    for parameter_set, rms in validation.rms_nm.items():
        print(f"   {parameter_set:<22}" + " ".join(f"{x:6.3f}" for x in rms))
        figures["rms_nm"][parameter_set] = [round(float(x), 4) for x in rms]
    ratio = validation.rms_nm["physical"] / validation.rms_nm["base"]
    figures["physical_over_base"] = [round(float(x), 4) for x in ratio]
    figures["physical_within_5_percent_of_base"] = bool(np.all(ratio <= 1.05))
    figures["below_gaz"] = {s: bool(np.all(rms < REFERENCE_GAZ_NM)) for s, rms in validation.rms_nm.items()}
    figures["checks_passed"] = {s: c.passed for s, c in result.checks.items()}
    figures["self_check"] = self_check(result)
    links = result.physical.plausibility.links
    figures["spread_over_hull"] = {k.link_name: None if k.spread is None else round(k.spread, 4) for k in links}
    figures["smallest_principal_moment_kg_m2"] = {k.link_name: float(f"{k.principal_moments_kg_m2[0]:.3g}")
                                                  for k in links}
    spreads = ", ".join(f"{k.link_name} {k.spread:.3g} (≥ {k.size_bound:.3g})" for k in links if k.spread is not None)
    print(f"   physical links' spread over their hulls: {spreads or 'no size bounds (spread_fraction 0)'}")
    figures["warnings"] = list(result.warnings)
    figures["condition_number"] = round(result.metrics.condition_number, 2)
    figures["n_essential"] = len(result.essential.names)
    print(f"   physical / base per joint: {' '.join(f'{x:.3f}' for x in ratio)} (goal: each <= 1.05); checks "
          f"{figures['checks_passed']}; cond(Yb) {figures['condition_number']}, {figures['n_essential']} essential")

    # beside the default, the setting of the reference figures: OLS with 10 Hz filters (the source's processing)
    tuned = EstimatorConfig(processing=ProcessingConfig(torque_cutoff_hz=10.0, motion_cutoff_hz=10.0), method="ols")
    tuned_validation = validate(identify([train], setup, tuned), [check], tuned)
    figures["ols_10hz_rms_nm"] = {s: [round(float(x), 4) for x in rms] for s, rms in tuned_validation.rms_nm.items()
                                  if s != "urdf"}
    print("   beside it, OLS with the source's 10 Hz filters: base "
          + " ".join(f"{x:.3f}" for x in tuned_validation.rms_nm["base"]) + "; physical "
          + " ".join(f"{x:.3f}" for x in tuned_validation.rms_nm["physical"]))
    return figures


def self_check(result) -> dict:
    """Each set's error on the data it was fitted to and on the identify's own held-out blocks, and the verdict."""
    held_out = result.held_out
    print(f"   self-check of identify ({held_out.source} of the 70 % it was given; verdict and best set):")
    figures = {"held_out": held_out.source, "training_rms_nm": {}, "cross_validated_rms_nm": {},
               "passed": {s: c.passed for s, c in result.checks.items()}, "best_set": result.best_set}
    for s in result.parameter_sets:
        training, held = result.metrics.residual_rms_nm[s], held_out.rms_nm(s)
        figures["training_rms_nm"][s] = [round(float(x), 4) for x in training]
        figures["cross_validated_rms_nm"][s] = [round(float(x), 4) for x in held]
        print(f"   {s + ' training':<22}" + " ".join(f"{x:6.3f}" for x in training))
        print(f"   {s + ' held out':<22}" + " ".join(f"{x:6.3f}" for x in held)
              + f"   {'passed' if result.checks[s].passed else 'FAILED'}")
    print(f"   best on held-out data: {result.best_set}")
    return figures


LONG_MINUTES = (1, 5, 10)
LONG_RATE_HZ = 1000.0


def nonperiodic_log(minutes: float, seed: int = 0, chunk: int = 20_000) -> Recording:
    """A non-periodic iiwa14 log: each joint a sum of 5 sines of random incommensurate frequencies (0.05–0.6 Hz)
    about a mid pose, torque Y·π through the LBR's filter plus 0.1 Nm noise, built `chunk` samples at a time."""
    setup = robot_setup("iiwa14")
    robot = setup.model(("FV", "FC", "FO"))
    pi = nominal_parameters(robot)
    pi[friction_columns(robot)] = [0.4, 0.6, -0.15]
    rng = np.random.default_rng(seed)
    lower, upper = robot.position_limits_rad
    mid, span = 0.5 * (lower + upper), 0.5 * (upper - lower)
    omega = 2 * np.pi * rng.uniform(0.05, 0.6, (5, 7))
    amp = 0.6 * span / 5 * rng.uniform(0.5, 1.0, (5, 7))
    phase = rng.uniform(0, 2 * np.pi, (5, 7))
    t = np.arange(round(minutes * 60 * LONG_RATE_HZ)) / LONG_RATE_HZ
    q, dq, ddq, tau = (np.empty((len(t), 7)) for _ in range(4))
    for s in range(0, len(t), chunk):
        arg = omega * t[s:s + chunk, None, None] + phase
        q[s:s + chunk] = mid + np.sum(amp * np.sin(arg), axis=1)
        dq[s:s + chunk] = np.sum(amp * omega * np.cos(arg), axis=1)
        ddq[s:s + chunk] = -np.sum(amp * omega**2 * np.sin(arg), axis=1)
        tau[s:s + chunk] = regressor(robot, q[s:s + chunk], dq[s:s + chunk], ddq[s:s + chunk]) @ pi
    tau = first_order_lowpass(tau, 1.0 / LONG_RATE_HZ, setup.torque_filter_time_constant_s)
    tau += 0.1 * rng.normal(size=tau.shape)
    return Recording(robot.joint_names, t, q, tau, None, None, None, None, f"non-periodic {minutes} min", ())


def _identify_saved(path: str) -> None:
    """Child process: identify the saved log and print wall time and peak memory as JSON."""
    arrays = np.load(path)
    rec = Recording(tuple(arrays["joints"]), arrays["t"], arrays["q"], arrays["tau"], None, None, None, None,
                    "long log", ())
    t0 = time.perf_counter()
    result = identify([rec], robot_setup("iiwa14"))
    seconds = time.perf_counter() - t0
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    worker = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(json.dumps({"identify_s": round(seconds, 2), "peak_mb": round(own), "worker_peak_mb": round(worker),
                      "stages_s": result.metrics.timings_s}))


def long_logs(tmp: pathlib.Path) -> list[dict]:
    print("3. long non-periodic logs, iiwa14, 7 joints at 1 kHz: identify in a fresh process each")
    print(f"   {'minutes':>7} {'samples':>8} {'identify [s]':>13} {'peak [MB]':>10} {'worker peak [MB]':>17}  "
          "stages [s]")
    rows = []
    for minutes in LONG_MINUTES:
        rec = nonperiodic_log(minutes)
        path = tmp / f"long{minutes}.npz"
        np.savez(path, joints=np.array(rec.joint_names), t=rec.t_s, q=rec.q_rad, tau=rec.tau_nm)
        del rec
        out = subprocess.run([sys.executable, __file__, "--identify-saved", str(path)], check=True,
                             capture_output=True, text=True).stdout
        row = {"minutes": minutes, "samples": round(minutes * 60 * LONG_RATE_HZ), **json.loads(out.splitlines()[-1])}
        rows.append(row)
        print(f"   {minutes:>7} {row['samples']:>8} {row['identify_s']:>13} {row['peak_mb']:>10} "
              f"{row['worker_peak_mb']:>17}  {row['stages_s']}", flush=True)
    return rows


def main() -> None:
    if sys.argv[1:2] == ["--identify-saved"]:
        _identify_saved(sys.argv[2])
        return
    with tempfile.TemporaryDirectory() as tmp:
        if sys.argv[1:2] == ["--long-only"]:
            figures = {"long_logs": long_logs(pathlib.Path(tmp))}
        else:
            figures = {"speed": speed(pathlib.Path(tmp)), "panda_real": panda(),
                       "long_logs": long_logs(pathlib.Path(tmp))}
    figures["openblas_num_threads"] = os.environ.get("OPENBLAS_NUM_THREADS")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
