"""Identification against the simulated robot's physics: does the estimator find the truth MuJoCo integrated?

The iiwa14 with its default seeded true dynamics (robot_id_sim: payload, changed links, friction of Luo et al.
2024, eq. 7 with a Stribeck rise to 1.3 × Coulomb at rest, armature, sensor offset) follows the shipped iiwa14
excitation (20 s period) for one lead-in and 3 recorded periods at 500 Hz, with the default sensor model (0.1 Nm
torque noise, the LBR's 16 ms torque filter); no ROS, the library loop only. Identified with the DEFAULT estimator
config (friction FV, FC, FO); printed beside it: the model with rotor inertia (FV, FC, FO, IA), a truth without
the Stribeck rise (static = Coulomb friction), where the linear friction model is exact, and the default truth
with the Stribeck friction fitted to the shipped friction sweep (`iiwa14_friction_sweep`, simulated the same way).

Figures: per-joint residual RMS [Nm] of the base and physical fits; the relative error of the base parameters
against the truth, ‖β̂ − β‖ / ‖β‖, with β the truth's base parameters of the same model (the truth file's), over
all of them and over those without FV and FC (which a sweep's Stribeck fit replaces); and the torque error of the
base and physical sets against the true model on a motion not used for identification (the demo's check,
robot_id_lab.truth_check), per joint in % of torque RMS: the figure that weighs parameters by what they do.

Run from the repository root:  source env.sh && python benchmarks/sim_identification.py
Ends with one line of JSON.
"""

from __future__ import annotations

import json
import time

import numpy as np

from robot_id_estimator.pipeline import identify
from robot_id_estimator.recordings.recording import Recording
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_estimator.settings import EstimatorConfig
from robot_id_estimator.validate import validate
from robot_id_excitation.trajectory_file import load_trajectory
from robot_id_lab.truth_check import true_model_run
from robot_id_model.base_parameters import base_parameters
from robot_id_model.robot_config import load_robot_config
from robot_id_sim.sensors import SensorOptions
from robot_id_sim.simulated_robot import SimSettings, SimulatedRobot
from robot_id_sim.trajectory_follower import TrajectoryCommand
from robot_id_sim.true_dynamics import TRUTH_FRICTION, Perturbation, TrueDynamics, perturbed_dynamics

ROBOT = "iiwa14"
PERIODS = 3
SENSORS_NOISE_NM = 0.1


def simulate(config, truth: TrueDynamics, name: str = ROBOT, periods: int = PERIODS) -> Recording:
    """One lead-in period, then `periods` recorded periods of the shipped trajectory `name` (a sweep: 0 and 1)."""
    trajectory = load_trajectory(name)
    period_s = trajectory.period_s
    q0 = trajectory.evaluate(np.array([0.0]))[0][0]
    sensors = SensorOptions(torque_noise_nm=SENSORS_NOISE_NM,
                            torque_filter_time_constant_s=config.torque_filter_time_constant_s)
    sim = SimulatedRobot(config, config.load_model(), config.urdf_path.read_text(), truth,
                         SimSettings(config.state_rate_hz), sensors, q0)
    lead_in = 1 if periods > 1 else 0
    end_s = (periods + lead_in) * period_s
    t = np.append(np.arange(0.0, end_s, 0.01), end_s)
    phase = np.append(t[:-1] % period_s, period_s)  # the end exactly: a sweep is at rest there, as the JTC asks
    refusal = sim.command(TrajectoryCommand(0.0, config.joint_names, t, *trajectory.evaluate(phase)))
    if refusal:
        raise RuntimeError(f"the simulated controller refused {name}: {refusal}")
    samples = []
    n_samples = round((periods + lead_in) * period_s * config.state_rate_hz)
    for k in range(n_samples):
        sample = sim.advance()
        if k + 1 > n_samples - periods * period_s * config.state_rate_hz:
            samples.append(sample)
    t_s = np.array([s.t_s for s in samples])
    return Recording(config.joint_names, t_s - t_s[0], np.array([s.q_rad for s in samples]),
                     np.array([s.effort_nm for s in samples]), np.array([s.dq_rad_s for s in samples]), None,
                     period_s, trajectory.harmonics if trajectory.kind == "fourier" else None,
                     f"simulated {name}", ())


def identified(recording: Recording, setup: RobotSetup, truth: TrueDynamics, friction: tuple[str, ...],
               sweeps: tuple[Recording, ...] = ()) -> dict:
    result = identify([recording], setup, EstimatorConfig(friction=friction), sweeps)
    robot = setup.model(friction)
    beta_true = base_parameters(robot).values(truth.standard_parameters(robot))
    order = [base_parameters(robot).names.index(name) for name in result.base.names]
    beta_true = beta_true[order]
    beta = result.base.values

    def error(kept: np.ndarray) -> float | None:
        if np.isnan(beta[kept]).any():
            return None
        return round(100.0 * float(np.linalg.norm(beta[kept] - beta_true[kept]) / np.linalg.norm(beta_true[kept])), 2)

    rigid = np.array([not name.startswith(("FV", "FC")) for name in result.base.names])
    rms = result.metrics.residual_rms_nm
    against_truth = validate(result, [Recording.of_arrays(**vars(true_model_run(ROBOT, truth)))]).rms_percent_of_torque
    return {"base_rms_nm": [round(x, 4) for x in rms["base"]],
            "physical_rms_nm": [round(x, 4) for x in rms.get("physical", [])],
            "base_error_percent": error(np.ones(len(beta), dtype=bool)),
            "base_error_without_fv_fc_percent": error(rigid),
            "true_model_error_percent": {s: [round(float(x), 2) for x in against_truth[s]]
                                         for s in ("base", "physical") if s in against_truth},
            "failed_sets": result.failed_sets()}


def main() -> None:
    config = load_robot_config(ROBOT)
    setup = RobotSetup.from_config(config)
    truth_model = config.load_model(TRUTH_FRICTION)
    figures = {}
    runs = [("default truth, default estimator", Perturbation(), ("FV", "FC", "FO"), False),
            ("default truth, with rotor inertia", Perturbation(), ("FV", "FC", "FO", "IA"), False),
            ("no Stribeck rise, with rotor inertia", Perturbation(static_over_coulomb=1.0), ("FV", "FC", "FO", "IA"),
             False),
            ("default truth, Stribeck from the sweep", Perturbation(), ("FV", "FC", "FO"), True)]
    recordings: dict[float, Recording] = {}
    for label, perturbation, friction, with_sweep in runs:
        truth = perturbed_dynamics(truth_model, config.limits.torque_nm, perturbation)
        if perturbation.static_over_coulomb not in recordings:
            started = time.perf_counter()
            print(f"simulating {ROBOT}: {PERIODS + 1} periods at {config.state_rate_hz:g} Hz "
                  f"(static/Coulomb {perturbation.static_over_coulomb:g}) ...", flush=True)
            recordings[perturbation.static_over_coulomb] = simulate(config, truth)
            print(f"  {time.perf_counter() - started:.1f} s wall", flush=True)
        sweeps = ()
        if with_sweep:
            print(f"simulating the shipped sweep {ROBOT}_friction_sweep ...", flush=True)
            sweeps = (simulate(config, truth, f"{ROBOT}_friction_sweep", 1),)
        figures[label] = identified(recordings[perturbation.static_over_coulomb], setup, truth, friction, sweeps)
        f = figures[label]
        total = "   —  " if f["base_error_percent"] is None else f"{f['base_error_percent']:6.2f}"
        print(f"{label:38s} base error {total} % (without FV, FC {f['base_error_without_fv_fc_percent']:6.2f} %)"
              "   base RMS [Nm] "
              + " ".join(f"{x:.3f}" for x in f["base_rms_nm"])
              + ("   FAILED " + ", ".join(f["failed_sets"]) if f["failed_sets"] else ""))
        for name, errors in f["true_model_error_percent"].items():
            print(f"{'':38s} {name} vs the true model [% of torque RMS] " + " ".join(f"{x:.2f}" for x in errors))
    print(json.dumps({"benchmark": "sim_identification", "robot": ROBOT, "periods": PERIODS,
                      "torque_noise_nm": SENSORS_NOISE_NM, "runs": figures}))


if __name__ == "__main__":
    main()
