"""Diagnosis before verdict: when the model explains the data poorly, the usual mistakes are tried and the one
that explains them is named with its evidence.

In: the processed recordings and the torque they are to explain (processing.regression_data), the model (with the
chosen Coulomb laws), the estimated base columns. Out: one line per likely mistake, with the fit it gives.

Each hypothesis changes the data or the model as the mistake would have and refits the base parameters by plain
least squares on the same samples (at most DIAGNOSIS_SECONDS of each recording): a torque sign flipped on one joint
(that torque negated), an encoder counting the other way (position, velocity and acceleration negated), a constant
position offset on one joint (fitted as an extra parameter: Gauss-Newton on δ from the linearised regression
∂(Yb·π̂)/∂q_j, Nocedal and Wright 2006, section 10.3), and a torque-filter time constant other than the configured
one. A hypothesis is named when it leaves at most IMPROVEMENT of the residual (summed over joints, each relative to
its torque RMS).

A base set that fits well but predicts held-out data far worse (poor_generalisation) is explained by the RSDs of
Xu et al. 2020, eq. (7): too little excitation when an essential parameter is poorly determined, else a model that
misses something the data hold (another arm's config, a payload, effects outside the model).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from robot_id_estimator.processing.model_side import torque_side
from robot_id_estimator.processing.samples import ProcessedData, ProcessingConfig
from robot_id_model.regressor import regressor
from robot_id_model.robot_model import RobotModel

POOR_FRACTION = 0.15
"""Every hypothesis is tried when the base set leaves more than this fraction of some joint's torque RMS
unexplained ..."""
NOISE_FACTOR = 3.0
"""... the torque filter's time constant (cheap) also when it leaves more than this many times the noise the periods
show (periodic data)."""
IMPROVEMENT = 0.5
"""A hypothesis is named when its fit leaves at most this fraction of the original residual."""
DIAGNOSIS_SECONDS = 30.0
"""Seconds of each recording the hypotheses are fitted on (a period of periodic data is all of it)."""
TIME_CONSTANTS_S = (0.0, 0.002, 0.005, 0.01, 0.016, 0.025, 0.04)
"""Torque-filter time constants tried (the LBR's is 0.016 s; none: 0)."""
OFFSET_ITERATIONS = 3
STEP_RAD = 1e-4
"""Finite-difference step of ∂Yb/∂q_j."""


@dataclass(frozen=True)
class DiagnosisProblem:
    """What every hypothesis is fitted on."""

    robot: RobotModel
    independent: np.ndarray
    columns: np.ndarray
    processing: ProcessingConfig
    time_constant_s: float
    data: tuple[ProcessedData, ...]
    tau_nm: tuple[np.ndarray, ...]


def _windowed(data: ProcessedData, tau_nm: np.ndarray) -> tuple[ProcessedData, np.ndarray]:
    """The first DIAGNOSIS_SECONDS of a recording (all of a periodic one)."""
    if data.n_periods > 0:
        return data, tau_nm
    k = int(np.searchsorted(data.t_s, data.t_s[0] + DIAGNOSIS_SECONDS))
    return dataclasses.replace(data, t_s=data.t_s[:k], q_rad=data.q_rad[:k], dq_rad_s=data.dq_rad_s[:k],
                               ddq_rad_s2=data.ddq_rad_s2[:k], tau_nm=data.tau_nm[:k]), tau_nm[:k]


def diagnosis_problem(robot: RobotModel, independent: np.ndarray, columns: np.ndarray, processing: ProcessingConfig,
                      time_constant_s: float, processed: Sequence[ProcessedData],
                      tau_nm: Sequence[np.ndarray]) -> DiagnosisProblem:
    windows = [_windowed(d, t) for d, t in zip(processed, tau_nm, strict=True)]
    return DiagnosisProblem(robot, independent, columns, processing, time_constant_s, tuple(w[0] for w in windows),
                            tuple(w[1] for w in windows))


Motion = Callable[[ProcessedData], ProcessedData]


def _raw(problem: DiagnosisProblem, motion: Motion | None = None) -> list[np.ndarray]:
    """Each recording's base regressor before filtering, with the motion changed by `motion`."""
    moved = [motion(d) if motion else d for d in problem.data]
    return [regressor(problem.robot, d.q_rad, d.dq_rad_s, d.ddq_rad_s2)[..., problem.independent] for d in moved]


def _filtered(problem: DiagnosisProblem, raw: Sequence[np.ndarray], time_constant_s: float) -> np.ndarray:
    """(K, n, b) the regressors `raw` filtered like the torque (a robot filter of `time_constant_s`), stacked."""
    return np.concatenate([torque_side(r, d, problem.processing, time_constant_s)[..., problem.columns]
                           for r, d in zip(raw, problem.data, strict=True)])


def _yb(problem: DiagnosisProblem, motion: Motion | None = None) -> np.ndarray:
    """(K, n, b) filtered base regressor of every recording stacked, with the motion changed by `motion`."""
    return _filtered(problem, _raw(problem, motion), problem.time_constant_s)


def _fit(yb: np.ndarray, tau_nm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Least-squares values over all joints' equations and the (n,) residual RMS per joint."""
    values = np.linalg.lstsq(yb.reshape(-1, yb.shape[-1]), tau_nm.ravel(), rcond=None)[0]
    return values, np.sqrt(np.mean((tau_nm - yb @ values) ** 2, axis=0))


def _score(rms_nm: np.ndarray, torque_rms_nm: np.ndarray) -> float:
    return float(np.sum(rms_nm / np.maximum(torque_rms_nm, 1e-9)))


@dataclass(frozen=True)
class Finding:
    """A hypothesis and the fit it gives."""

    text: str
    rms_nm: np.ndarray
    score: float


def diagnose(problem: DiagnosisProblem, joint_names: Sequence[str], flagged: np.ndarray, poor: bool) -> list[str]:
    """One line naming the mistake that best explains the misfit of the `flagged` joints, with its evidence; when
    the fit is `poor` (POOR_FRACTION) every hypothesis is tried, else (a fit merely above the noise) only the
    torque filter's time constant, and a poor fit none explains is said so."""
    tau = np.concatenate(problem.tau_nm)
    torque_rms = np.sqrt(np.mean(tau**2, axis=0))
    raw = _raw(problem)
    yb = _filtered(problem, raw, problem.time_constant_s)
    values, rms = _fit(yb, tau)
    findings = _time_constants(problem, raw, tau, torque_rms)
    if poor:
        findings += [*_signs(yb, tau, joint_names, torque_rms), *_encoders(problem, tau, joint_names, torque_rms),
                     _offset(problem, yb, values, tau, joint_names, torque_rms)]

    def shares(rms_nm: np.ndarray) -> str:
        return ", ".join(f"{joint_names[j]} {100 * rms_nm[j] / torque_rms[j]:.3g} %" for j in np.flatnonzero(flagged))

    best = min(findings, key=lambda f: f.score)
    if best.score <= IMPROVEMENT * _score(rms, torque_rms):
        return [f"diagnosis: {best.text}? The model leaves {shares(rms)} of the torque RMS unexplained; with that "
                f"corrected, {shares(best.rms_nm)}"]
    if poor:
        return [f"diagnosis: the model leaves {shares(rms)} of the torque RMS unexplained; none of a flipped torque "
                "sign, an encoder counting the other way, a position offset or another torque-filter time constant "
                "explains it (a payload, a URDF far from the robot or effects outside the model do this)"]
    return []


def _signs(yb: np.ndarray, tau: np.ndarray, names: Sequence[str], torque_rms: np.ndarray) -> list[Finding]:
    findings = []
    for j, name in enumerate(names):
        flipped = tau.copy()
        flipped[:, j] *= -1.0
        _, rms = _fit(yb, flipped)
        findings.append(Finding(f"{name}'s torque has the wrong sign", rms, _score(rms, torque_rms)))
    return findings


def _negated(j: int) -> Motion:
    def motion(d: ProcessedData) -> ProcessedData:
        q, dq, ddq = d.q_rad.copy(), d.dq_rad_s.copy(), d.ddq_rad_s2.copy()
        for x in (q, dq, ddq):
            x[:, j] *= -1.0
        return dataclasses.replace(d, q_rad=q, dq_rad_s=dq, ddq_rad_s2=ddq)

    return motion


def _shifted(j: int, offset_rad: float) -> Motion:
    def motion(d: ProcessedData) -> ProcessedData:
        q = d.q_rad.copy()
        q[:, j] += offset_rad
        return dataclasses.replace(d, q_rad=q)

    return motion


def _encoders(problem: DiagnosisProblem, tau: np.ndarray, names: Sequence[str],
              torque_rms: np.ndarray) -> list[Finding]:
    findings = []
    for j, name in enumerate(names):
        _, rms = _fit(_yb(problem, _negated(j)), tau)
        findings.append(Finding(f"{name}'s encoder counts the other way (position, velocity and acceleration of the "
                                "opposite sign)", rms, _score(rms, torque_rms)))
    return findings


def _linearised(yb: np.ndarray, yb_shifted: np.ndarray, values: np.ndarray,
                tau: np.ndarray) -> tuple[float, np.ndarray]:
    """One Gauss-Newton iteration on a joint's offset: the fit with the column ∂(Yb·π̂)/∂q_j (finite difference of
    `yb` and `yb_shifted`, STEP_RAD apart, at the fit `values`) beside the regressor; its offset step (clipped to
    ±0.5 rad) and residual RMS."""
    gradient = (yb_shifted - yb) / STEP_RAD @ values
    theta, rms = _fit(np.concatenate([yb, gradient[..., None]], axis=2), tau)
    return float(np.clip(theta[-1], -0.5, 0.5)), rms


def _offset(problem: DiagnosisProblem, yb: np.ndarray, values: np.ndarray, tau: np.ndarray, names: Sequence[str],
            torque_rms: np.ndarray) -> Finding:
    """The joint whose constant position offset, fitted as an extra parameter, best explains the data: each joint's
    first iteration from 0 (the linearised fit) chooses it, OFFSET_ITERATIONS iterations in all fit it."""
    first = [_linearised(yb, _yb(problem, _shifted(j, STEP_RAD)), values, tau) for j in range(len(names))]
    j = int(np.argmin([_score(rms, torque_rms) for _, rms in first]))
    offset_rad = first[j][0]
    for _ in range(OFFSET_ITERATIONS - 1):
        yb_j = _yb(problem, _shifted(j, offset_rad))
        values_j, _ = _fit(yb_j, tau)
        offset_rad += _linearised(yb_j, _yb(problem, _shifted(j, offset_rad + STEP_RAD)), values_j, tau)[0]
    _, rms = _fit(_yb(problem, _shifted(j, offset_rad)), tau)
    return Finding(f"{names[j]}'s position is off by a constant {-offset_rad:+.3g} rad (its zero)", rms,
                   _score(rms, torque_rms))


def _time_constants(problem: DiagnosisProblem, raw: Sequence[np.ndarray], tau: np.ndarray,
                    torque_rms: np.ndarray) -> list[Finding]:
    findings = []
    for tc in TIME_CONSTANTS_S:
        if np.isclose(tc, problem.time_constant_s):
            continue
        _, rms = _fit(_filtered(problem, raw, tc), tau)
        findings.append(Finding(f"the robot filters its torque with a time constant of about {1000 * tc:g} ms, not "
                                f"the configured {1000 * problem.time_constant_s:g} ms", rms, _score(rms, torque_rms)))
    return findings


OVERFIT_FACTOR = 3.0
"""The base set generalises poorly when it predicts held-out data this many times worse (RMS, on some joint) than the
data it was fitted to. (The real Panda log of Gaz et al. 2019: at most 2.1.)"""
RSD_TARGET_PERCENT = 40.0
"""The essential parameters' RSD threshold (Xu et al. 2020, section II-A): above it on some essential parameter,
poor generalisation is too little excitation, and the seconds needed are reckoned for it."""


def generalises_poorly(training_rms_nm: np.ndarray, held_out_rms_nm: np.ndarray,
                       noise_nm: np.ndarray | None) -> np.ndarray:
    """(n,) the joints whose held-out error is above OVERFIT_FACTOR × their training error or NOISE_FACTOR × the
    noise the periods show."""
    ratio, over_noise = _generalisation(training_rms_nm, held_out_rms_nm, noise_nm)
    return (ratio > OVERFIT_FACTOR) | (over_noise > NOISE_FACTOR)


def _generalisation(training_rms_nm: np.ndarray, held_out_rms_nm: np.ndarray,
                    noise_nm: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    ratio = np.asarray(held_out_rms_nm) / np.maximum(np.asarray(training_rms_nm), 1e-12)
    over_noise = np.zeros_like(ratio) if noise_nm is None else np.asarray(held_out_rms_nm) / np.maximum(noise_nm, 1e-12)
    return ratio, over_noise


def poor_generalisation(training_rms_nm: np.ndarray, held_out_rms_nm: np.ndarray, noise_nm: np.ndarray | None,
                        joint_names: Sequence[str], base_rsd_percent: np.ndarray, essential_rsd_percent: np.ndarray,
                        seconds: float, condition_number: float) -> list[str]:
    """One line when the base set predicts held-out data far worse than it fits (OVERFIT_FACTOR) or, given the noise
    the periods show, than NOISE_FACTOR × that noise: too little excitation when some essential parameter is poorly
    determined (RSD, Xu et al. 2020, eq. 7; with the seconds of such data it needs), else a model that misses
    something the data hold."""
    ratio, over_noise = _generalisation(training_rms_nm, held_out_rms_nm, noise_nm)
    joints = np.flatnonzero((ratio > OVERFIT_FACTOR) | (over_noise > NOISE_FACTOR))
    if not len(joints):
        return []

    def joint(j: int) -> str:
        return f"{joint_names[j]} {ratio[j]:.2g}×" + (f", {over_noise[j]:.2g}× the noise the periods show"
                                                      if noise_nm is not None else "")

    worse = (f"The base set predicts held-out data far worse than the data it was fitted to "
             f"({'; '.join(joint(j) for j in joints)})")
    worst = float(np.nanmax(essential_rsd_percent)) if len(essential_rsd_percent) else 0.0
    if worst <= RSD_TARGET_PERCENT:
        return [f"diagnosis: the model misses something the data hold? {worse}, though the data "
                f"determine every essential parameter (RSD at most {worst:.3g} %): another arm's kinematics (the "
                "config of another robot), a payload, or effects outside the model (a cogging or cable torque)"]
    estimated = np.isfinite(base_rsd_percent)
    vague = int(np.sum(base_rsd_percent[estimated] > RSD_TARGET_PERCENT))
    return [f"diagnosis: too little excitation? {worse}: it follows the noise there. {vague} of "
            f"{int(estimated.sum())} base parameters have an RSD above {RSD_TARGET_PERCENT:g} % (Xu et al. 2020, "
            f"eq. 7), cond(Yb) {condition_number:.3g}; about {seconds * (worst / RSD_TARGET_PERCENT) ** 2:.3g} s of "
            f"data like these would bring the worst essential parameter's RSD ({worst:.3g} %) to "
            f"{RSD_TARGET_PERCENT:g} % (it falls as 1/√T); record longer or a richer motion"]
