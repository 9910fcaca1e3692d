"""Synthetic data of a known model, the ground truth of tests, benchmarks and the offline demo: random Fourier
excitations, named "true parameter" scenarios, and what a robot of those parameters would publish over them, as
plain arrays (SyntheticRun; the estimator's tests and the demos make their recordings of it).

Not the simulated robot (robot_id_sim): nothing here moves a robot or speaks ROS; torques are τ = Y·π.

The motion is the finite Fourier series of robot_id_excitation's FourierTrajectory (kind "fourier"), computed here:
the lab does not depend on the excitation package, and the benchmarks' figures depend on the arithmetic to the last
bit (Xu et al.'s (2020) multi-start retrieval ends in other local minima when the data change by 1e-15).

Scenarios (standard parameters π, friction terms in the robot's order):
- `urdf_with_friction`: the URDF inertials with drive friction tapered from joint 1 to the last joint;
- `scaled_links`: each link's inertials scaled by a random factor, made consistent, random friction;
- `heavier_links_with_tool`: every link 10 % heavier and a 0.5 kg tool on the last link (the offline demo).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from robot_id_model.parameters import friction_columns, inertial_columns, nominal_parameters
from robot_id_model.physical import LinkInertial, link_from_standard, link_standard_parameters
from robot_id_model.regressor import regressor
from robot_id_model.robot_model import RobotModel
from robot_id_model.torque_filter import first_order_lowpass

DRIVE_FRICTION: dict[str, float] = {"FV": 0.4, "FC": 0.6, "FO": -0.15, "IA": 0.05}
"""Drive terms at joint 1: viscous [Nm s/rad], Coulomb [Nm], offset [Nm], rotor inertia [kg m²]."""

DEMO_FRICTION: dict[str, float] = {"FV": 0.5, "FC": 0.8, "FO": -0.2}
"""Drive terms at joint 1 of the offline demo's robot (units as DRIVE_FRICTION)."""

DEMO_TOOL = LinkInertial(0.5, np.array([0.0, 0.0, 0.08]), np.zeros((3, 3)))
"""The demo's tool: a 0.5 kg point mass 8 cm along the last link's z axis."""

POSITION_FRACTION, VELOCITY_FRACTION = 0.7, 0.6
"""How far `random_motion` goes: fractions of each joint's half range and of its URDF velocity limit."""

LIMIT_GRID_POINTS = 2001
"""Points over one period (both ends included) on which `random_motion` holds its limits by default."""

TRIANGLE_MARGIN_KG_M2 = 1.2e-3
"""Added to each principal moment of a link that breaks the triangle inequality (Franka's link 4)."""


# --- motion -----------------------------------------------------------------------------------------------------


def sample_times_s(period_s: float, rate_hz: float) -> np.ndarray:
    """The sample times of one period at rate_hz: 0, 1/rate_hz, ... (round(period_s·rate_hz) samples)."""
    return np.arange(round(period_s * rate_hz)) / rate_hz


def fourier_series(
    period_s: float, coefficients_a: np.ndarray, coefficients_b: np.ndarray, t_s: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """q − q0, dq, ddq (each (K, n)) at t_s of the finite Fourier series of Xu et al. 2020, eq. (8) with
    coefficients (n, L) [rad/s]: the maths of robot_id_excitation.fourier.FourierTrajectory (kind "fourier")."""
    w = 2.0 * np.pi / period_s
    ls = np.arange(1, coefficients_a.shape[1] + 1)
    phase = w * np.outer(t_s, ls)
    q = np.sin(phase) @ (coefficients_a / (w * ls)).T - np.cos(phase) @ (coefficients_b / (w * ls)).T
    dq = np.cos(phase) @ coefficients_a.T + np.sin(phase) @ coefficients_b.T
    ddq = (-np.sin(phase) * w * ls) @ coefficients_a.T + (np.cos(phase) * w * ls) @ coefficients_b.T
    return q, dq, ddq


def centred_motion(
    robot: RobotModel, period_s: float, coefficients_a: np.ndarray, coefficients_b: np.ndarray, t_s: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """q, dq, ddq at t_s of the `fourier_series` around the middle of each joint's range. Not held to rest at the
    period's ends (Xu et al. 2020, eq. 10): it is meant to be repeated, not started."""
    lower, upper = robot.position_limits_rad
    q, dq, ddq = fourier_series(period_s, coefficients_a, coefficients_b, t_s)
    return 0.5 * (lower + upper) + q, dq, ddq


def random_motion(
    robot: RobotModel,
    period_s: float,
    harmonics: int,
    t_s: np.ndarray,
    seed: int,
    *,
    still: Sequence[int] = (),
    limit_grid_s: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """q, dq, ddq at t_s of a random `centred_motion`: coefficients a_il, b_il ~ N(0, 1)/l, each joint scaled to
    stay within POSITION_FRACTION of its half range and VELOCITY_FRACTION of its URDF velocity limit on
    `limit_grid_s` (default LIMIT_GRID_POINTS over one period); a continuous joint counts as ±π. Joints (0-based)
    in `still` stay at the middle."""
    rng = np.random.default_rng(seed)
    ls = np.arange(1, harmonics + 1)
    a, b = rng.normal(size=(2, robot.n_joints, harmonics)) / ls
    q, dq, ddq = fourier_series(period_s, a, b, t_s)
    grid_s = np.linspace(0.0, period_s, LIMIT_GRID_POINTS) if limit_grid_s is None else limit_grid_s
    q_grid, dq_grid, _ = fourier_series(period_s, a, b, grid_s)
    lower, upper = robot.position_limits_rad
    lower, upper = np.where(np.isfinite(lower), lower, -np.pi), np.where(np.isfinite(upper), upper, np.pi)
    scale = np.minimum(POSITION_FRACTION * 0.5 * (upper - lower) / np.abs(q_grid).max(axis=0),
                       VELOCITY_FRACTION * robot.velocity_limits_rad_s / np.abs(dq_grid).max(axis=0))
    scale[list(still)] = 0.0
    return 0.5 * (lower + upper) + q * scale, dq * scale, ddq * scale


# --- true parameters --------------------------------------------------------------------------------------------


def urdf_with_friction(robot: RobotModel, friction: Mapping[str, float] = DRIVE_FRICTION) -> np.ndarray:
    """The URDF inertials with the drive terms `friction` (per term at joint 1), tapered linearly to 0.4 × that at
    the last joint."""
    pi = nominal_parameters(robot)
    taper = np.linspace(1.0, 0.4, robot.n_joints)
    for t, term in enumerate(robot.friction):
        pi[friction_columns(robot)[:, t]] = friction[term] * taper
    return pi


def heavier_links_with_tool(
    robot: RobotModel,
    friction: Mapping[str, float] = DEMO_FRICTION,
    mass_factor: float = 1.1,
    tool: LinkInertial = DEMO_TOOL,
) -> np.ndarray:
    """The offline demo's robot: `urdf_with_friction`, every link's inertials × mass_factor (10 % heavier) and
    `tool` fixed to the last link."""
    pi = urdf_with_friction(robot, friction)
    pi[inertial_columns(robot)] *= mass_factor
    pi[inertial_columns(robot)[-1]] += link_standard_parameters(tool)
    return pi


def scaled_links(
    robot: RobotModel,
    seed: int = 0,
    *,
    scale_range: tuple[float, float] = (0.9, 1.1),
    friction_range: tuple[float, float] = (0.1, 0.8),
    offset_shift_nm: float = 0.0,
    consistent: bool = True,
) -> np.ndarray:
    """The URDF model with each link's inertials scaled by one factor drawn from `scale_range` (a truth the URDF
    prior does not know) and every friction term drawn from `friction_range` [Nm s/rad, Nm, ...], plus
    `offset_shift_nm` on the offsets FO. Scaling keeps a link as consistent as the URDF has it; with `consistent`,
    a link that breaks the triangle inequality (Franka's link 4; Wensing et al. 2017) gets TRIANGLE_MARGIN_KG_M2
    more on each principal moment."""
    rng = np.random.default_rng(seed)
    pi = nominal_parameters(robot)
    for cols in inertial_columns(robot):
        pi[cols] *= rng.uniform(*scale_range)
        if consistent:
            pi[cols] = _triangle_repaired(pi[cols])
    pi[friction_columns(robot)] = rng.uniform(*friction_range, friction_columns(robot).shape)
    if offset_shift_nm and "FO" in robot.friction:
        pi[friction_columns(robot)[:, robot.friction.index("FO")]] += offset_shift_nm
    return pi


def _triangle_repaired(pi_link: np.ndarray) -> np.ndarray:
    """One link's 10 standard parameters, its principal moments raised by TRIANGLE_MARGIN_KG_M2 where the two
    smallest sum to less than the largest."""
    link = link_from_standard(pi_link)
    moments, axes = np.linalg.eigh(link.inertia_com_kg_m2)
    if moments[0] + moments[1] < moments[2]:
        moments = moments + TRIANGLE_MARGIN_KG_M2
    return link_standard_parameters(LinkInertial(link.mass_kg, link.com_m, (axes * moments) @ axes.T))


# --- what the robot publishes -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SyntheticRun:
    """Joint positions and published torques of a robot of known parameters over a periodic motion, with what is
    known of the motion (the fields of the estimator's Recording of the same names)."""

    joint_names: tuple[str, ...]
    t_s: np.ndarray
    """(K,) sample times [s] from 0."""
    q_rad: np.ndarray
    """(K, n)"""
    tau_nm: np.ndarray
    """(K, n) the torque the robot publishes."""
    period_s: float
    harmonics: int | None
    source: str
    dq_rad_s: np.ndarray | None = None
    """(K, n) velocities logged with the positions, where a run has them (truth_check's); none for the runs made
    here, whose velocities the estimator derives from the positions."""


def periodic_run(
    robot: RobotModel,
    pi: np.ndarray,
    q_rad: np.ndarray,
    dq_rad_s: np.ndarray,
    ddq_rad_s2: np.ndarray,
    period_s: float,
    n_periods: int,
    torque_filter_time_constant_s: float = 0.0,
    tau_noise_nm: np.ndarray | float = 0.0,
    q_noise_rad: float = 0.0,
    seed: int = 0,
    harmonics: int | None = None,
    source: str = "simulated",
    joint_friction: Callable[[np.ndarray], np.ndarray] | None = None,
) -> SyntheticRun:
    """`n_periods` repetitions of one period of motion (K samples over `period_s`) with the torque a robot of
    standard parameters `pi` publishes: τ = Y·π (plus `joint_friction`(dq), a friction law of the caller's),
    through its first-order torque filter in periodic steady state (after one lead-in period), plus Gaussian
    noise on τ and q."""
    per_period = len(q_rad)
    tau = regressor(robot, q_rad, dq_rad_s, ddq_rad_s2) @ pi
    if joint_friction is not None:
        tau = tau + joint_friction(dq_rad_s)
    tau = np.tile(tau, (n_periods + 1, 1))
    tau = first_order_lowpass(tau, period_s / per_period, torque_filter_time_constant_s)[per_period:]
    rng = np.random.default_rng(seed)
    k, n = n_periods * per_period, robot.n_joints
    q = np.tile(q_rad, (n_periods, 1)) + q_noise_rad * rng.normal(size=(k, n))
    tau = tau + np.asarray(tau_noise_nm) * rng.normal(size=(k, n))
    return SyntheticRun(robot.joint_names, np.arange(k) * period_s / per_period, q, tau, period_s, harmonics, source)


def random_run(
    robot: RobotModel,
    pi: np.ndarray,
    n_periods: int,
    *,
    seed: int,
    period_s: float,
    rate_hz: float,
    harmonics: int = 5,
    torque_filter_time_constant_s: float = 0.0,
    tau_noise_nm: np.ndarray | float = 0.0,
    q_noise_rad: float = 0.0,
    noise_seed: int = 0,
    still: Sequence[int] = (),
    limit_grid_s: np.ndarray | None = None,
    source: str | None = None,
    joint_friction: Callable[[np.ndarray], np.ndarray] | None = None,
) -> SyntheticRun:
    """`periodic_run` of the `random_motion` of `seed` (`still`, `limit_grid_s` as there) sampled at rate_hz,
    noise drawn from `noise_seed`, `joint_friction` as there; the run knows the period and the harmonics."""
    t_s = sample_times_s(period_s, rate_hz)
    q, dq, ddq = random_motion(robot, period_s, harmonics, t_s, seed, still=still, limit_grid_s=limit_grid_s)
    return periodic_run(robot, pi, q, dq, ddq, period_s, n_periods, torque_filter_time_constant_s,
                              tau_noise_nm, q_noise_rad, noise_seed, harmonics, source or f"random motion {seed}",
                              joint_friction)
