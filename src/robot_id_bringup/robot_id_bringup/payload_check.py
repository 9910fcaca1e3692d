"""A payload identification checked against the simulator's truth, without the ROS graph: the simulated
robot (MuJoCo; the arm perturbed from its URDF as robot_id_sim draws it, here without its default 1 kg tool) follows a
payload excitation with a known load on its flange and without it; the load is identified against an arm model and
compared with the load the simulator carried.

The loads: 0.5, 1.5 and 3 kg with their CoM up to 10 cm off the flange axis and inertias of solid boxes turned off
the flange's axes.

The arm with the identified load is also checked on a motion neither was identified on (robot_id_lab.truth_check's
random motion, torque from the true dynamics): it should predict the loaded arm as well as the arm model alone
predicts the arm without the load.

It stays beside the estimator, not in robot_id_lab: it checks the estimator's payload estimate with the estimator's
own payload samples (robot_id_lab may not depend on the estimator, whose tests use it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from robot_id_estimator.payload.estimate import PayloadEstimate
from robot_id_estimator.payload.samples import ArmModel, payload_samples
from robot_id_estimator.recordings.recording import Recording
from robot_id_estimator.settings import EstimatorConfig
from robot_id_excitation.fourier import FourierTrajectory
from robot_id_lab.truth_check import followed, true_model_run
from robot_id_model.physical import LinkInertial
from robot_id_model.robot_config import load_robot_config
from robot_id_sim.seeded_load import solid_box
from robot_id_sim.true_dynamics import Perturbation, TrueDynamics, perturbed_dynamics, with_payload


def _box(mass_kg: float, size_m: tuple[float, float, float], com_m: tuple[float, float, float],
         turn_deg: tuple[float, float, float]) -> LinkInertial:
    """A solid box of `size_m`, its axes turned by `turn_deg` (xyz Euler) from the flange's."""
    return solid_box(mass_kg, size_m, np.array(com_m), Rotation.from_euler("xyz", turn_deg, degrees=True).as_matrix())


LOADS = {
    "0.5 kg": _box(0.5, (0.06, 0.08, 0.10), (0.02, 0.0, 0.05), (0.0, 0.0, 20.0)),
    "1.5 kg": _box(1.5, (0.10, 0.15, 0.12), (0.10, -0.01, 0.08), (10.0, 0.0, 30.0)),
    "3 kg": _box(3.0, (0.15, 0.12, 0.20), (-0.03, 0.07, 0.12), (0.0, 15.0, -20.0)),
}


@dataclass(frozen=True)
class LoadRuns:
    loaded: Recording
    bare: Recording
    arm: TrueDynamics
    """The true arm without the load."""


def load_runs(robot_name: str, trajectory: FourierTrajectory, load: LinkInertial, periods: int = 4,
              seed: int = 0) -> LoadRuns:
    """`periods` periods of `trajectory` as the true robot of `seed` follows it with `load` on its flange and
    without."""
    config = load_robot_config(robot_name)
    arm = perturbed_dynamics(config.load_model(), config.limits.torque_nm,
                             Perturbation(seed=seed, payload_mass_kg=0.0))
    t_s = np.arange(0.0, (periods + 1) * trajectory.period_s + 0.005, 0.01)
    motion = trajectory.evaluate(t_s % trajectory.period_s)
    loaded_arm = with_payload(arm, config.load_model(), load, config.flange_frame)
    args = (t_s, motion, trajectory.period_s, band_limit(trajectory), periods)
    return LoadRuns(Recording.of_arrays(**vars(followed(robot_name, loaded_arm, *args, "with the load"))),
                    Recording.of_arrays(**vars(followed(robot_name, arm, *args, "without the load"))), arm)


def band_limit(trajectory: FourierTrajectory) -> int | None:
    """The harmonics a recording of `trajectory` may declare, as the bag reader declares them: a finite Fourier
    series's; none for a modified one, whose boundary terms are not band-limited (declared, its derivatives were
    cut at them: a 1.5 kg load's moments 18 % off from noise-free data)."""
    return trajectory.harmonics if trajectory.kind == "fourier" else None


@dataclass(frozen=True)
class LoadErrors:
    mass_percent: float
    com_mm: float
    moments_percent: tuple[float, float, float]
    """Each principal moment's error (ascending order) against the truth's."""
    undetermined: tuple[int, ...]
    """The principal moments the identification says the motion does not determine."""


def load_errors(estimate: PayloadEstimate, load: LinkInertial) -> LoadErrors:
    found = estimate.inertial
    moments = np.linalg.eigvalsh(found.inertia_com_kg_m2) / np.linalg.eigvalsh(load.inertia_com_kg_m2) - 1.0
    return LoadErrors(100.0 * (found.mass_kg / load.mass_kg - 1.0),
                      1000.0 * float(np.linalg.norm(found.com_m - load.com_m)),
                      tuple(float(100.0 * m) for m in moments), estimate.undetermined_moments)


@dataclass(frozen=True)
class PredictionErrors:
    """RMS torque errors per joint on robot_id_lab.truth_check's unseen motion."""

    arm_only_nm: np.ndarray
    """(n,) the arm model alone, predicting the arm without the load."""
    arm_and_load_nm: np.ndarray
    """(n,) the arm model with the identified load on its flange, predicting the arm carrying the true load."""


def prediction_errors(robot_name: str, arm: ArmModel, load_values: np.ndarray, bare: TrueDynamics,
                      load: LinkInertial) -> PredictionErrors:
    """How well `arm` alone and `arm` with the load of `load_values` (NAMES order, flange frame) predict the unseen
    motion without and with the true `load` (bare: the true arm without it)."""
    config = load_robot_config(robot_name)
    loaded = with_payload(bare, config.load_model(), load, config.flange_frame)
    processing = EstimatorConfig().processing
    without, carrying = (payload_samples(arm, config.flange_frame,
                                         [Recording.of_arrays(**vars(true_model_run(robot_name, truth)))],
                                         processing, config.torque_filter_time_constant_s, min_speed_rad_s=0.0)
                         for truth in (bare, loaded))
    return PredictionErrors(np.sqrt(np.mean(without.tau_nm**2, axis=0)),
                            np.sqrt(np.mean((carrying.tau_nm - carrying.y @ load_values) ** 2, axis=0)))
