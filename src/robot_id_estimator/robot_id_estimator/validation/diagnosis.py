"""Diagnosis before verdict: when the model explains the data poorly, the usual mistakes are tried and the one
that explains them is named with its evidence.

In: the processed recordings and the torque they are to explain (processing.regression_data), the model (with the
chosen Coulomb laws), the estimated base columns. Out: a Diagnosis, one line naming the likely mistake with the fit
it gives, and whether it is a mistake in the data.

Each hypothesis changes the data or the model as the mistake would have and refits the base parameters by plain
least squares on the same samples (at most DIAGNOSIS_SECONDS of each recording): a torque sign flipped on one joint
(that torque negated), an encoder counting the other way (position, velocity and acceleration negated), a constant
position offset on one joint (fitted as an extra parameter: Gauss-Newton on δ from the linearised regression
∂(Yb·π̂)/∂q_j, Nocedal and Wright 2006, section 10.3). A hypothesis is named when it leaves at most IMPROVEMENT of
the residual (summed over joints, each relative to its torque RMS). The robot's torque filter is no hypothesis here:
the identification finds its time constant from the data before (processing.torque_filter).

A flipped torque sign or encoder on a lightly loaded joint (the last one, a wrist) the base set can absorb: the
joint's own friction columns and inertia take the other sign and the fit stays as good (the iiwa14's and the
Panda's A7: FV7 and FC7 negative, RSD 0.3 %). Friction takes energy from the motion, so a joint whose friction
gives energy (energy_giving) names its torque sign or its encoder when undoing it makes the friction take energy
and fits as well (FIT_TOLERANCE); on the last joint the two fit alike and both are named.

A base set that fits well but predicts held-out data far worse (poor_generalisation) is explained by the RSDs of
Xu et al. 2020, eq. (7): too little excitation when an essential parameter is poorly determined, too little data or
a model that misses something when another base parameter is (twice the data tell them apart), else a model that
misses something the data hold (another arm's config, a payload, effects outside the model).

A moving joint whose torque the base set fitted to every joint explains about none of (UNEXPLAINED) carries no
torque of this arm: a dead sensor putting out noise, or the wrong column.

A named mistake is a data mistake (Diagnosis.data_mistake: the model written from such data would not hold), and so
are such a joint, and too little excitation and too little data where the poor generalisation `matters`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from robot_id_estimator.processing.model_side import torque_side
from robot_id_estimator.processing.samples import ProcessedData
from robot_id_estimator.processing.torque_filter import fitting_window, windowed
from robot_id_estimator.settings import ProcessingConfig
from robot_id_model.parameters import friction_columns
from robot_id_model.regressor import regressor
from robot_id_model.robot_model import RobotModel

POOR_FRACTION = 0.15
"""Every hypothesis is tried when the base set leaves more than this fraction of some joint's torque RMS
unexplained ..."""
NOISE_FACTOR = 3.0
"""A base set also generalises poorly where it predicts held-out data more than this many times the noise the periods
show (periodic data; generalises_poorly)."""
UNEXPLAINED = 0.9
"""A joint's torque is not this arm's when the fit leaves more than this fraction of its RMS (explains under a fifth of
its variance): noise in place of a wrist's torque left 94-99 % on the last joint, where the joint's own parameters
fit the noise, and 604 % on A5, where the others' make the fit predict a torque the sensor does not show."""
MOVING_RAD_S = 0.1
"""... of a joint that moves (RMS speed): one that barely moves shows little but noise whatever its sensor."""
IMPROVEMENT = 0.5
"""A hypothesis is named when its fit leaves at most this fraction of the original residual."""
DIAGNOSIS_SECONDS = 30.0
"""Seconds of each recording the hypotheses are fitted on (a period of periodic data is all of it)."""
FIT_TOLERANCE = 0.1
"""A sign or encoder hypothesis on a joint whose friction gives energy fits as well when it leaves at most this
fraction more residual than the data as given; two such hypotheses within it of each other are both named."""
FRICTION_SIGNIFICANCE = 3.0
"""A friction term is below zero when it is more than this many standard deviations below (its RSD under
100/FRICTION_SIGNIFICANCE %)."""
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
    window = fitting_window(data, DIAGNOSIS_SECONDS)
    return windowed(data, window), tau_nm[window]


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
    """Least-squares values over all joints' equations and the (n,) residual RMS per joint; with (K, n, m) torques,
    m fits at once: (b, m) values and (n, m) residuals."""
    rhs = tau_nm.reshape(-1, *tau_nm.shape[2:])
    values = scipy.linalg.lstsq(yb.reshape(-1, yb.shape[-1]), rhs, lapack_driver="gelsy")[0]
    return values, np.sqrt(np.mean((tau_nm - np.einsum("knb,b...->kn...", yb, values)) ** 2, axis=0))


def _score(rms_nm: np.ndarray, torque_rms_nm: np.ndarray) -> float:
    return float(np.sum(rms_nm / np.maximum(torque_rms_nm, 1e-9)))


@dataclass(frozen=True)
class Finding:
    """A hypothesis and the fit it gives."""

    text: str
    rms_nm: np.ndarray
    score: float
    values: np.ndarray | None = None
    """The refitted values over the base columns (sign and encoder hypotheses, for the friction's energy)."""


@dataclass(frozen=True)
class Diagnosis:
    """What the diagnosis says (a warning line) and whether it names a mistake in the data: then the identified model
    is not to be trusted (identified.rejected.urdf, exit 4)."""

    line: str
    data_mistake: bool


def energy_giving(base_names: Sequence[str], values: np.ndarray, rsd_percent: np.ndarray,
                  n_joints: int) -> np.ndarray:
    """(n,) the joints whose estimated viscous and Coulomb friction (those estimated) are all below zero by more than
    FRICTION_SIGNIFICANCE standard deviations: friction that gives the motion energy."""
    index = {name: i for i, name in enumerate(base_names)}
    out = np.zeros(n_joints, bool)
    for j in range(n_joints):
        terms = [index[f"{t}{j + 1}"] for t in ("FV", "FC") if f"{t}{j + 1}" in index]
        estimated = [k for k in terms if np.isfinite(values[k])]
        out[j] = bool(estimated) and all(values[k] < 0 and rsd_percent[k] < 100.0 / FRICTION_SIGNIFICANCE
                                         for k in estimated)
    return out


def diagnose(problem: DiagnosisProblem, joint_names: Sequence[str], flagged: np.ndarray, every: bool,
             poor: bool, energy: np.ndarray) -> Diagnosis | None:
    """The mistake that best explains the misfit of the `flagged` joints, with its evidence. With `every` each
    hypothesis is tried; the torque sign and encoder of the joints whose friction gives `energy` always. A `poor` fit
    (POOR_FRACTION) none explains is said so (not a data mistake); otherwise None when none explains it."""
    tau = np.concatenate(problem.tau_nm)
    torque_rms = np.sqrt(np.mean(tau**2, axis=0))
    raw = _raw(problem)
    yb = _filtered(problem, raw, problem.time_constant_s)
    values, rms = _fit(yb, tau)
    score = _score(rms, torque_rms)
    findings = [] if not every else [
        *_signs(yb, tau, joint_names, torque_rms, range(len(joint_names))),
        *_encoders(problem, tau, joint_names, torque_rms, range(len(joint_names))),
        _offset(problem, yb, values, tau, joint_names, torque_rms)]

    def shares(rms_nm: np.ndarray) -> str:
        return ", ".join(f"{joint_names[j]} {100 * rms_nm[j] / torque_rms[j]:.3g} %" for j in np.flatnonzero(flagged))

    best = min(findings, key=lambda f: f.score, default=None)
    if best is not None and best.score <= IMPROVEMENT * score:
        return Diagnosis(f"diagnosis: {best.text}? The model leaves {shares(rms)} of the torque RMS unexplained; "
                         f"with that corrected, {shares(best.rms_nm)}", True)
    reversed_joint = _reversed_joint(problem, yb, tau, joint_names, torque_rms, score, values, energy)
    if reversed_joint is not None:
        return reversed_joint
    speed = np.sqrt(np.mean(np.concatenate([d.dq_rad_s for d in problem.data]) ** 2, axis=0))
    dead = [joint_names[j] for j in np.flatnonzero(flagged)
            if rms[j] > UNEXPLAINED * torque_rms[j] and speed[j] > MOVING_RAD_S]
    if poor and dead:  # about none of it explained: no model of this arm does that
        return Diagnosis(f"diagnosis: {' and '.join(dead)}'s torque does not follow the motion: the model fitted to "
                         f"every joint leaves {shares(rms)} of the torque RMS unexplained, about all of it or more "
                         "(a dead sensor putting out noise, or the wrong column?)", True)
    if poor:
        return Diagnosis(f"diagnosis: the model leaves {shares(rms)} of the torque RMS unexplained; none of a flipped "
                         "torque sign, an encoder counting the other way or a position offset explains it, nor the "
                         "torque filter fitted (a payload, a URDF far from the robot or effects outside the model do "
                         "this)", False)
    return None


def _reversed_joint(problem: DiagnosisProblem, yb: np.ndarray, tau: np.ndarray, names: Sequence[str],
                    torque_rms: np.ndarray, score: float, values: np.ndarray, energy: np.ndarray) -> Diagnosis | None:
    """The first joint whose friction gives `energy` and whose torque sign or encoder, undone, makes it take energy
    with a fit as good (FIT_TOLERANCE): the hypothesis that fits best, with the other when it fits alike."""
    for j in np.flatnonzero(energy):
        undone = [f for f in (*_signs(yb, tau, names, torque_rms, [j]),
                              *_encoders(problem, tau, names, torque_rms, [j]))
                  if f.score <= (1.0 + FIT_TOLERANCE) * score and _friction_power_w(problem, f.values)[j] > 0.0]
        if not undone:
            continue
        undone.sort(key=lambda f: f.score)
        alike = [f.text for f in undone if f.score <= (1.0 + FIT_TOLERANCE) * undone[0].score]
        given_w, corrected_w = (_friction_power_w(problem, v)[j] for v in (values, undone[0].values))
        return Diagnosis(f"diagnosis: {' or '.join(alike)}? {names[j]}'s friction gives the motion energy "
                         f"({given_w:.3g} W on average: its viscous and Coulomb terms came out below zero), which no "
                         f"friction does; with that corrected it takes {corrected_w:.3g} W"
                         + (" (the data fit both alike)" if len(alike) > 1 else ""), True)
    return None


def _friction_power_w(problem: DiagnosisProblem, values: np.ndarray) -> np.ndarray:
    """(n,) the mean power each joint's fitted viscous and Coulomb friction takes from the motion of the diagnosed
    samples, FV·⟨q̇²⟩ + FC·⟨|q̇|⟩ (the sign law; a joint without those columns: 0)."""
    dq = np.concatenate([d.dq_rad_s for d in problem.data])
    at = {int(k): i for i, k in enumerate(problem.independent[problem.columns])}
    robot = problem.robot
    power = np.zeros(robot.n_joints)
    for term, mean in (("FV", np.mean(dq**2, axis=0)), ("FC", np.mean(np.abs(dq), axis=0))):
        if term not in robot.friction:
            continue
        for j, k in enumerate(friction_columns(robot)[:, robot.friction.index(term)]):
            power[j] += values[at[int(k)]] * mean[j] if int(k) in at else 0.0
    return power


def _signs(yb: np.ndarray, tau: np.ndarray, names: Sequence[str], torque_rms: np.ndarray,
           joints: Sequence[int]) -> list[Finding]:
    """Each of `joints` with its torque negated, fitted together (one factorisation of `yb`)."""
    flipped = np.repeat(tau[..., None], len(joints), axis=2)
    for k, j in enumerate(joints):
        flipped[:, j, k] *= -1.0
    values, rms = _fit(yb, flipped)
    return [Finding(f"{names[j]}'s torque has the wrong sign", rms[:, k], _score(rms[:, k], torque_rms), values[:, k])
            for k, j in enumerate(joints)]


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


def _encoders(problem: DiagnosisProblem, tau: np.ndarray, names: Sequence[str], torque_rms: np.ndarray,
              joints: Sequence[int]) -> list[Finding]:
    findings = []
    for j in joints:
        values, rms = _fit(_yb(problem, _negated(j)), tau)
        findings.append(Finding(f"{names[j]}'s encoder counts the other way (position, velocity and acceleration of "
                                "the opposite sign)", rms, _score(rms, torque_rms), values))
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


OVERFIT_FACTOR = 3.0
"""The base set generalises poorly when it predicts held-out data this many times worse (RMS, on some joint) than the
data it was fitted to. (The real Panda log of Gaz et al. 2019: at most 2.1.)"""
MATTERING_FRACTION = 0.03
"""... and it is a data mistake (the model written would not hold) where it also leaves more than this fraction of a
joint's torque RMS unexplained on held-out data: 5 s logs of the iiwa14 and the Panda left 4.5 % to 10⁴ % on a joint
predicted 3 × worse than fitted; the simulated graph runs of 2 × 8 s (physical sets a fiftieth of the URDF's error
off the truth) 1.2 % at most, noise-free data 10⁻³ %."""
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


def matters(training_rms_nm: np.ndarray, held_out_rms_nm: np.ndarray, torque_rms_nm: np.ndarray) -> np.ndarray:
    """(n,) the joints whose poor generalisation matters: held-out error above OVERFIT_FACTOR × the training error
    and above MATTERING_FRACTION of the joint's torque RMS."""
    held_out = np.asarray(held_out_rms_nm)
    return (held_out > OVERFIT_FACTOR * np.asarray(training_rms_nm)) & (held_out > MATTERING_FRACTION
                                                                         * np.asarray(torque_rms_nm))


def poor_generalisation(training_rms_nm: np.ndarray, held_out_rms_nm: np.ndarray, noise_nm: np.ndarray | None,
                        joint_names: Sequence[str], base_rsd_percent: np.ndarray, essential_rsd_percent: np.ndarray,
                        seconds: float, condition_number: float, torque_rms_nm: np.ndarray) -> Diagnosis | None:
    """When the base set predicts held-out data far worse than it fits (OVERFIT_FACTOR) or, given the noise the
    periods show, than NOISE_FACTOR × that noise: too little excitation when some essential parameter is poorly
    determined (RSD above RSD_TARGET_PERCENT, Xu et al. 2020, eq. 7; with the seconds of such data it needs); too
    little data or a model that misses something when only other base parameters are, which twice the seconds
    recorded tell apart (the held-out error of too little data falls with more of it); both data mistakes (the model
    written would not hold) when it `matters` on some joint, else warnings. With every base parameter determined, a
    model that misses something the data hold (a warning)."""
    ratio, over_noise = _generalisation(training_rms_nm, held_out_rms_nm, noise_nm)
    joints = np.flatnonzero((ratio > OVERFIT_FACTOR) | (over_noise > NOISE_FACTOR))
    if not len(joints):
        return None

    def joint(j: int) -> str:
        return f"{joint_names[j]} {ratio[j]:.2g}×" + (f", {over_noise[j]:.2g}× the noise the periods show"
                                                      if noise_nm is not None else "")

    worse = (f"The base set predicts held-out data far worse than the data it was fitted to "
             f"({'; '.join(joint(j) for j in joints)})")
    worst = float(np.nanmax(essential_rsd_percent)) if len(essential_rsd_percent) else 0.0
    estimated = np.isfinite(base_rsd_percent)
    n_vague = int(np.sum(base_rsd_percent[estimated] > RSD_TARGET_PERCENT))
    vague = (f"{n_vague} of {int(estimated.sum())} base parameters have an RSD above {RSD_TARGET_PERCENT:g} % (Xu et "
             "al. 2020, eq. 7)")
    mistake = bool(matters(training_rms_nm, held_out_rms_nm, torque_rms_nm).any())
    misses = ("another arm's kinematics (the config of another robot), a payload, or effects outside the model (a "
              "cogging or cable torque)")
    if worst > RSD_TARGET_PERCENT:
        needed_s = seconds * (worst / RSD_TARGET_PERCENT) ** 2
        return Diagnosis(f"diagnosis: too little excitation? {worse}: it follows the noise there. {vague}, cond(Yb) "
                         f"{condition_number:.3g}; about {needed_s:.3g} s of data like these would bring the worst "
                         f"essential parameter's RSD ({worst:.3g} %) to {RSD_TARGET_PERCENT:g} % (it falls as 1/√T): "
                         f"record at least {needed_s:.3g} s, or a richer motion", mistake)
    if n_vague:
        return Diagnosis(f"diagnosis: too little data, or the model misses something the data hold? {worse}; the "
                         f"essential parameters are determined (RSD at most {worst:.3g} %) but {vague}: record at "
                         f"least {2 * seconds:.3g} s, twice the {seconds:.3g} s recorded (a held-out error that falls "
                         f"with it was too little data; one that stays is {misses})", mistake)
    return Diagnosis(f"diagnosis: the model misses something the data hold? {worse}, though the data determine "
                     f"every base parameter (RSD at most {float(np.nanmax(base_rsd_percent)):.3g} %): {misses}", False)
