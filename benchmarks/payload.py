"""Payload benchmark: a robot's shipped payload excitation (robot_id_description robots/<robot>/trajectories/
payload.yaml: 10 s, joints 1-3 still at the pose, the wrist moving) followed by the simulated robot (MuJoCo, perturbed
from its URDF) for 4 periods with each of three loads (robot_id_bringup.payload_check.LOADS: 0.5, 1.5 and
3 kg, CoM up to 10 cm off the flange axis) and without a load; each load identified three ways:

- baseline: against the arm identified from the run without the load (the two-recording method);
- identified arm: against the arm identified from its own excitation (the shipped <robot>.yaml, 3 periods in MuJoCo);
- URDF: against the URDF's arm (the perturbation's error goes into the load).

Per load and method also: the identified arm with the load on its flange predicting truth_check's random motion
(torque from the true dynamics) with the true load, against the identified arm alone predicting it without the load
(sums over the joints of the RMS error).

Per load and method: the mass error [%], the CoM error [mm], each principal moment's error [%] with the moments the
identification names undetermined, the held-out error over the load's torque and the joints the check failed on, the
identification time. First the payload excitation is designed again as it was for shipping (for the Panda: `python -m
robot_id_excitation design --robot panda --payload fer_link8 --pose 0,-0.3,0,-2.2,0,2.0,0.8 --still
fer_joint1,fer_joint2,fer_joint3 --base-frequency 0.1 --harmonics 4 --starts 2 --velocity-scale 0.5`; the pose is the
shipped trajectory's offsets, the still joints those without harmonics), timed. Ends with one JSON line.

Run from the repository root:  source env.sh && python benchmarks/payload.py [--robot panda|iiwa14|iiwa7]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time

import numpy as np

from robot_id_bringup.payload_check import LOADS, band_limit, load_errors, load_runs, prediction_errors
from robot_id_estimator.payload.estimate import PayloadBounds, estimate_payload
from robot_id_estimator.payload.identify_payload import baseline_arm, check_failures
from robot_id_estimator.payload.samples import ArmModel, identified_arm, payload_samples, urdf_arm
from robot_id_estimator.pipeline import identify
from robot_id_estimator.recordings.recording import Recording
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_estimator.settings import EstimatorConfig, PhysicalConfig
from robot_id_excitation.constraints import DESIGN_CLEARANCE_MARGIN_M, design_limits
from robot_id_excitation.design import design_excitation
from robot_id_excitation.design_problem import DesignOptions
from robot_id_excitation.fourier import FourierTrajectory
from robot_id_excitation.regressor_sensitivity import payload_columns
from robot_id_excitation.trajectory_file import load_trajectory
from robot_id_lab.truth_check import followed
from robot_id_model.robot_config import load_robot_config


def arm_from_its_excitation(robot: str, setup: RobotSetup, arm_truth) -> ArmModel:
    """The arm identified from its shipped excitation followed for 3 periods in MuJoCo (no physical stage)."""
    trajectory = load_trajectory(robot)
    t_s = np.arange(0.0, 4 * trajectory.period_s + 0.005, 0.01)
    run = Recording.of_arrays(**vars(followed(robot, arm_truth, t_s, trajectory.evaluate(t_s % trajectory.period_s),
                                              trajectory.period_s, band_limit(trajectory), 3, "the arm's excitation")))
    config = dataclasses.replace(EstimatorConfig(), physical=PhysicalConfig(method="none"))
    return identified_arm(identify([run], setup, config), "the arm identified from its excitation")


def one_method(robot: str, setup: RobotSetup, model: ArmModel, runs, load, arm: ArmModel) -> dict:
    """The load identified against `model`; its errors, and the identified `arm` with it on the unseen motion."""
    started = time.perf_counter()
    samples = payload_samples(model, setup.flange_frame, [runs.loaded], EstimatorConfig().processing,
                              setup.torque_filter_time_constant_s)
    estimate = estimate_payload(samples, PayloadBounds((0.0, setup.rated_payload_kg), 0.3))
    identify_s = time.perf_counter() - started
    errors = load_errors(estimate, load)
    predicted = prediction_errors(robot, arm, estimate.values, runs.arm, load)
    bounds = estimate.arm_error
    return {"mass_percent": round(errors.mass_percent, 2), "com_mm": round(errors.com_mm, 1),
            "moments_percent": [round(e, 1) for e in errors.moments_percent],
            "undetermined_moments": list(errors.undetermined),
            "arm_error_bound_moments_percent": None if bounds is None else [round(float(b), 1)
                                                                           for b in bounds.moments_percent],
            "arm_error_bound_mass_percent": None if bounds is None else round(float(bounds.mass_percent), 2),
            "arm_error_bound_com_mm": None if bounds is None else round(float(bounds.com_mm), 1),
            "held_out_over_load_torque": round(float(estimate.held_out_rms_nm.sum()
                                                     / estimate.load_torque_rms_nm.sum()), 3),
            "check_failed_joints": list(check_failures(estimate, samples.noise_std_nm, samples.arm_error_rms_nm,
                                                       setup.joint_names)),
            "unseen_arm_only_nm": round(float(predicted.arm_only_nm.sum()), 3),
            "unseen_arm_and_load_nm": round(float(predicted.arm_and_load_nm.sum()), 3),
            "identify_s": round(identify_s, 2)}


def design_seconds(robot: str, shipped: FourierTrajectory) -> tuple[float, float]:
    """The shipped payload excitation designed again (its pose, still joints, period and harmonics; 2 starts, half
    the speed limits, the CLI's clearance): wall time and cond."""
    config = load_robot_config(robot)
    model = config.load_model()
    still = tuple(int(j) for j in np.flatnonzero(~np.any(shipped.coefficients_a != 0.0, axis=1)
                                                 & ~np.any(shipped.coefficients_b != 0.0, axis=1)))
    options = DesignOptions(harmonics=shipped.harmonics, base_frequency_hz=shipped.base_frequency_hz, starts=2,
                            pose_rad=tuple(float(q) for q in shipped.offsets_rad), still_joints=still)
    limits = design_limits(config, 0.1, 0.5, clearance_margin_m=DESIGN_CLEARANCE_MARGIN_M)  # the CLI's defaults
    started = time.perf_counter()
    result = design_excitation(model, limits, options, robot, payload_columns(model, config.flange_frame),
                               progress=lambda _: None)
    return time.perf_counter() - started, result.criteria.condition_number


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", default="panda", help="a robot with a shipped payload excitation (%(default)s)")
    robot = parser.parse_args().robot
    trajectory = load_trajectory(f"{robot}_payload")
    design_s, cond = design_seconds(robot, trajectory)
    print(f"payload excitation designed in {design_s:.0f} s, cond {cond:.2f}", flush=True)
    setup = RobotSetup.from_config(load_robot_config(robot))
    rows, arm = {}, None
    for name, load in LOADS.items():
        started = time.perf_counter()
        runs = load_runs(robot, trajectory, load)
        simulated_s = time.perf_counter() - started
        arm = arm or arm_from_its_excitation(robot, setup, runs.arm)
        methods = {"baseline": baseline_arm([runs.bare], setup, EstimatorConfig()), "identified arm": arm,
                   "urdf": urdf_arm(setup)}
        rows[name] = {label: one_method(robot, setup, model, runs, load, arm) for label, model in methods.items()}
        rows[name]["simulation_s"] = round(simulated_s, 1)
        for label, f in rows[name].items():
            if isinstance(f, dict):
                print(f"{name:>7} {label:>15}: mass {f['mass_percent']:+6.2f} %, CoM {f['com_mm']:5.1f} mm, moments "
                      f"{f['moments_percent']} % (undetermined {f['undetermined_moments']}, arm-error bound "
                      f"{f['arm_error_bound_moments_percent']}), held-out/load {f['held_out_over_load_torque']} "
                      f"(check failed on {f['check_failed_joints'] or 'none'}); "
                      f"unseen motion, sum of RMS: identified arm {f['unseen_arm_only_nm']} Nm without the load, "
                      f"with this load on it {f['unseen_arm_and_load_nm']} Nm", flush=True)
    print(json.dumps({"benchmark": "payload", "robot": robot, "design_s": round(design_s, 1),
                      "design_cond": round(cond, 2), "excitation_period_s": trajectory.period_s,
                      "excitation_s": 4 * trajectory.period_s, "loads": rows}))


if __name__ == "__main__":
    main()
