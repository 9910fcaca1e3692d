"""Each joint's Coulomb law chosen by the data among the families of robot_id_model.coulomb_laws (FAMILIES: sign(dq);
tanh(dq/v_s), smooth through rest; Gaz et al. 2019's off-centre sigmoid; Dahl's presliding; a Stribeck rise; and any
family registered there), each trying its own candidates (CoulombLaw.candidates).

Real friction is continuous through zero speed (presliding; Gaz et al. 2019 fit the Panda's with an off-centre
sigmoid of speed) and often higher at low speed than at high (the Stribeck effect; Luo et al.
2024, eq. 7). For a fixed shape the regression stays linear, the law's column in place of the sign column, so the
model is separable: the linear parameters are the least-squares solution for each shape and only the shape is
searched, per joint, on a grid (variable projection, Golub and Pereyra 1973, with the projected problem evaluated
on a grid instead of by Gauss-Newton). The law kept is the one that predicts held-out data best: a validation motion
when one is given (recorded apart and never fitted; its N_FOLDS time blocks predicted by a fit on all the
recordings), else N_FOLDS contiguous time blocks of every recording, each block predicted by a fit on the others
(K-fold cross-validation, Hastie et al. 2009, section 7.10). A motion that reverses every joint fast leaves the law
near rest undetermined (DETERMINED_T); a validation motion with slow reversals determines it. Every candidate comes
from one pass over the data (regression_stream keeps each fold's regression with the candidate columns beside it),
so the choice costs no regressor evaluation of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robot_id_estimator.processing.reduction import JointBlocks, merge, triangular_factor
from robot_id_estimator.processing.regression_data import N_FOLDS, RegressionData, restreamed, without_candidates
from robot_id_estimator.progress import Progress, say
from robot_id_estimator.results.law_choice import CoulombLawChoice
from robot_id_estimator.robot_setup import RobotSetup
from robot_id_estimator.settings import EstimatorConfig
from robot_id_model.base_parameters import BaseParameters
from robot_id_model.coulomb_laws import FAMILIES, CoulombLaw
from robot_id_model.robot_model import RobotModel

SMOOTH_GAIN = 0.1
"""A joint gets another law than sign(dq) only when it predicts held-out data at least this fraction better (RMS):
a joint whose friction is sign-like keeps the simpler law (on sign-law data a noisy velocity estimate makes a tanh
of a few mrad/s look 4–5 % better, a hedge around each zero crossing, not friction)."""

FOLD_MAJORITY = 0.8
"""...and in at least this fraction of the folds: a law that wins on one block (where the training blocks leave a
parameter poorly determined, so that any extra column changes the extrapolation) and loses on the others is chance,
not friction (seen on sign-law data: a Stribeck rise 43 % better on one fold of five, worse on four)."""

DETERMINED_T = 2.8
"""A joint's law is determined by the data when the held-out advantage of the better of sign(dq) and the best other
law exceeds this many standard errors of that advantage: per fold, the relative reduction of the squared error;
their mean over the N_FOLDS folds over its standard error (a one-sided Student t, 97.5 % with 4 degrees of
freedom). A joint whose law is not determined is reported so, with what would determine it; the choice itself
stays SMOOTH_GAIN's and FOLD_MAJORITY's: choosing sign whenever the law is not determined cost the real Panda log
of Gaz et al. 2019 (first 70 % identified, last 30 % predicted) 4.6 % on A5 and 1.3 % on A6, whose presliding laws
win there by 15 and 10 % at t = 1.6 and 1.1. Measured on the shipped iiwa14 excitation (5 × 20 s at 500 Hz, 16 ms
torque filter, 0.05 Nm noise; truths written apart from the estimator, 4 noise seeds): sign law, t of the best other
law −1.9 to +2.1 on every joint; tanh(dq/0.01): +4.2 to +11.7 on A1, A2, A4, +3.4 to +4.5 on A5, +2.5 to +3.4 on A3,
+1.1 to +2.9 on A6 and A7, where the excitation reverses too fast to tell the laws apart; tanh(dq/0.05): 26 and
more."""

EXTENSION_GAIN = 0.05
"""A law replaces the best law of the family it extends (CoulombLaw.extends: a sigmoid, tanh with a shift) only when
it predicts held-out data at least this fraction better (RMS), in FOLD_MAJORITY of the folds: a shift the data do
not show is not kept."""

INTERVAL_TOLERANCE = 0.01
"""The scale's uncertainty (v_s, x_c: CoulombLaw.scale): the range of the chosen family's candidate scales (of the
chosen form: r, δ/v_s) whose held-out error is within this fraction of the best (a profile of the held-out error;
the grid's step is its resolution)."""

SWEEPS = 2
"""Passes over the joints, each choosing one joint's law with the others at their latest choice."""


def _columns(n_base: int, fc_column: int, law: int) -> list[int]:
    """Columns of the extended regression [Yb C τ] that make a joint's regression with candidate `law`."""
    columns = list(range(n_base))
    if fc_column >= 0:
        columns[fc_column] = n_base + law
    return columns


def _rows(blocks: Sequence[np.ndarray], n_base: int, fc: np.ndarray, laws: np.ndarray,
          weights: np.ndarray) -> np.ndarray:
    """Stacked weighted rows [A y] of every joint's factor with its law's columns."""
    tau = blocks[0].shape[-1] - 1
    return np.concatenate([np.sqrt(weights[j]) * block[:, [*_columns(n_base, fc[j], laws[j]), tau]]
                           for j, block in enumerate(blocks)])


def _fit(rows: np.ndarray) -> np.ndarray:
    return np.linalg.lstsq(rows[:, :-1], rows[:, -1], rcond=None)[0]


def _residual_sq(block: np.ndarray, n_base: int, fc_column: int, law: int, theta: np.ndarray) -> float:
    tau = block.shape[-1] - 1
    return float(np.sum((block[:, [*_columns(n_base, fc_column, law), tau]] @ np.append(-theta, 1.0)) ** 2))


@dataclass(frozen=True)
class _Folds:
    """The held-out blocks' factors over all recordings, the training data's factors, which training data each
    block is predicted by, and each joint's weight."""

    held_out: list[JointBlocks]
    training: list[np.ndarray]
    trained_on: list[int]
    """Per held-out block, its index in `training`: its own (the other blocks) in cross-validation, one for all
    (every recording) with a validation motion."""
    weights: np.ndarray


def _folds(data: RegressionData, base: BaseParameters, fc: np.ndarray,
           validation: RegressionData | None = None) -> _Folds:
    """Cross-validation over the data's time blocks, or with `validation`: its blocks held out, all the data
    training."""
    n_folds = len(data.streamed[0].candidate_folds)
    blocks = [merge([s.candidate_folds[f] for s in data.streamed]) for f in range(n_folds)]
    weights = _noise_weights(blocks, base, fc)
    if validation is not None:
        whole = merge(blocks).r_aug
        held_out = [merge([s.candidate_folds[f] for s in validation.streamed])
                    for f in range(len(validation.streamed[0].candidate_folds))]
        return _Folds(held_out, [whole], [0] * len(held_out), weights)
    training = [merge([g for i, g in enumerate(blocks) if i != f]).r_aug for f in range(n_folds)]
    return _Folds(blocks, training, list(range(n_folds)), weights)


def _noise_weights(folds: Sequence[JointBlocks], base: BaseParameters, fc: np.ndarray) -> np.ndarray:
    """(n,) 1/σ² of each joint's residual in an unweighted sign-law fit of all data: the joints weighed alike."""
    n = len(fc)
    whole = merge(folds).r_aug
    laws = np.zeros(n, dtype=int)
    theta = _fit(_rows(whole, base.n_base, fc, laws, np.ones(n)))
    rows_used = np.maximum(sum(fold.n_rows for fold in folds), 1)
    variance = np.array([_residual_sq(whole[j], base.n_base, fc[j], 0, theta) for j in range(n)]) / rows_used
    return 1.0 / np.maximum(variance, 1e-12 * max(variance.max(), 1e-300))


def _held_out_errors(folds: _Folds, n_base: int, fc: np.ndarray, laws: np.ndarray, joint: int,
                     m: int) -> np.ndarray:
    """(F, m) per held-out block, the squared error of `joint`'s torque with each of the m candidate laws there and
    `laws` at the other joints. Only the joint's Coulomb column differs between candidates, so each training data's
    fit is solved once without it and every candidate's column is added by projection (the least-squares update for
    one column), all candidates at once."""
    others = np.arange(len(fc)) != joint
    fixed = [k for k in range(n_base) if k != fc[joint]]
    candidates = n_base + np.arange(m)
    tau = n_base + m
    fits = []
    for training in folds.training:
        rest = triangular_factor(_rows([t for t, other in zip(training, others, strict=True) if other], n_base,
                                       fc[others], laws[others], folds.weights[others]))
        own = np.sqrt(folds.weights[joint]) * training[joint]
        a = np.concatenate([rest[:, fixed], own[:, fixed]])
        y = np.concatenate([rest[:, -1], own[:, tau]])
        x = np.concatenate([np.zeros((len(rest), m)), own[:, candidates]])
        fits.append(_with_one_column(a, y, x))
    sq = np.zeros((len(folds.held_out), m))
    for f, fold in enumerate(folds.held_out):
        theta_fixed, theta_law = fits[folds.trained_on[f]]
        held = fold.r_aug[joint]
        residual = held[:, fixed] @ theta_fixed + held[:, candidates] * theta_law - held[:, [tau]]
        sq[f] = np.sum(residual**2, axis=0)
    return sq


def _with_one_column(a: np.ndarray, y: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each column x_c of x, the least-squares solution of [a x_c]·θ ≈ y: θ of a's columns (k, m) and of x_c
    (m,). x_c's part is its component outside span(a) against y's (zero where x_c lies in span(a))."""
    coefficients = np.linalg.lstsq(a, np.column_stack([y, x]), rcond=None)[0]
    y_out = y - a @ coefficients[:, 0]
    x_out = x - a @ coefficients[:, 1:]
    norm = np.sum(x_out**2, axis=0)
    theta_law = np.where(norm > 1e-12 * np.sum(x**2, axis=0), (x_out.T @ y_out) / np.where(norm > 0, norm, 1.0), 0.0)
    return coefficients[:, [0]] - coefficients[:, 1:] * theta_law, theta_law


def _chosen(sq: np.ndarray, candidates: Sequence[CoulombLaw], allowed: np.ndarray, forced: bool) -> int:
    """The candidate with the smallest held-out error among `allowed`; unless `forced`, a law extending another
    family (a sigmoid: tanh with a shift) only if it beats that family's best by EXTENSION_GAIN, and any law only if
    it beats the sign law (0) by SMOOTH_GAIN (_beats)."""
    total = sq.sum(axis=0)
    best = int(np.argmin(np.where(allowed[1:], total[1:], np.inf))) + 1
    if forced:
        return best
    extended = candidates[best].extends
    if extended is not None:
        simpler = int(np.argmin(np.where([law.family == extended for law in candidates], total, np.inf)))
        best = best if _beats(sq, best, simpler, EXTENSION_GAIN) else simpler
    return best if _beats(sq, best, 0, SMOOTH_GAIN) else 0


def _advantage_t(sq: np.ndarray, law: int, simpler: int) -> float:
    """The mean over the folds of `law`'s relative reduction of `simpler`'s held-out squared error, over its standard
    error (DETERMINED_T); ±inf when every fold gives the same reduction."""
    gain = 1.0 - sq[:, law] / np.maximum(sq[:, simpler], 1e-300)
    spread = gain.std(ddof=1) / np.sqrt(len(gain))
    if spread > 0.0:
        return float(gain.mean() / spread)
    return float(np.copysign(np.inf, gain.mean())) if gain.mean() != 0.0 else 0.0


def _determined(sq: np.ndarray, allowed: np.ndarray, chosen: int) -> bool:
    """Whether the data tell the joint's law from sign (DETERMINED_T): a law other than sign when it predicts the
    held-out folds better than sign beyond the scatter; sign when sign and the best other allowed law differ beyond
    it either way (a better law kept out by SMOOTH_GAIN is named on the joint's line with its error)."""
    if chosen != 0:
        return _advantage_t(sq, chosen, 0) >= DETERMINED_T
    total = sq.sum(axis=0)
    best = int(np.argmin(np.where(allowed[1:], total[1:], np.inf))) + 1
    return abs(_advantage_t(sq, best, 0)) >= DETERMINED_T


def _beats(sq: np.ndarray, law: int, simpler: int, gain: float) -> bool:
    """Whether `law` predicts the held-out folds at least `gain` better (RMS) than `simpler`, and better in at least
    FOLD_MAJORITY of the folds."""
    better = np.sqrt(sq[:, law].sum()) < (1.0 - gain) * np.sqrt(sq[:, simpler].sum())
    return bool(better and np.sum(sq[:, law] < sq[:, simpler]) >= FOLD_MAJORITY * len(sq))


def choose_coulomb_laws(data: RegressionData, base: BaseParameters, fc: np.ndarray,
                        candidates: Sequence[CoulombLaw], family: str | None = None,
                        validation: RegressionData | None = None) -> CoulombLawChoice:
    """The law of every joint with a Coulomb column (fc ≥ 0) among the `candidates` the data (and `validation`)
    were streamed with (robot_id_model.coulomb_laws.candidate_laws), judged on `validation` when given, one joint at
    a time for SWEEPS passes (_chosen; with `family`, the best law of that family)."""
    candidates = tuple(candidates)
    folds = _folds(data, base, fc, validation)
    allowed = np.array([family is None or law.family == family for law in candidates])
    laws = np.zeros(len(fc), dtype=int)
    errors = np.full((len(fc), len(candidates)), np.nan)
    determined = np.ones(len(fc), dtype=bool)
    for _ in range(SWEEPS):
        for j in np.flatnonzero(fc >= 0):
            sq = _held_out_errors(folds, base.n_base, fc, laws, int(j), len(candidates))
            errors[j] = np.sqrt(sq.sum(axis=0) / max(sum(int(fold.n_rows[j]) for fold in folds.held_out), 1))
            laws[j] = _chosen(sq, candidates, allowed, forced=family is not None)
            determined[j] = family is not None or _determined(sq, allowed, int(laws[j]))
    chosen = tuple(candidates[k] for k in laws)
    return CoulombLawChoice(candidates, errors, chosen, _intervals(candidates, errors, laws),
                            tuple(bool(d) for d in determined),
                            ", ".join(validation.sources) if validation is not None else "")


def _intervals(candidates: Sequence[CoulombLaw], errors: np.ndarray, laws: np.ndarray) -> np.ndarray:
    """Per joint, the range of the scale (CoulombLaw.scale) over the chosen family's candidates of the same form
    (CoulombLaw.form: r, δ/v_s) whose held-out error is within INTERVAL_TOLERANCE of the chosen law's; NaN for a law
    without shape."""
    intervals = np.full((len(laws), 2), np.nan)
    for j in np.flatnonzero(laws > 0):
        chosen = candidates[laws[j]]
        if not chosen.shape:
            continue
        scales = [law.scale() for k, law in enumerate(candidates)
                  if law.family == chosen.family and np.allclose(law.form(), chosen.form())
                  and errors[j][k] <= (1.0 + INTERVAL_TOLERANCE) * errors[j][laws[j]]]
        intervals[j] = min(scales), max(scales)
    return intervals


def with_chosen_laws(data: RegressionData, validation: RegressionData | None, setup: RobotSetup, robot: RobotModel,
                     base: BaseParameters, fc: np.ndarray, config: EstimatorConfig, candidates: Sequence[CoulombLaw],
                     progress: Progress) -> tuple[RegressionData, RegressionData | None, RobotModel, CoulombLawChoice]:
    """Each joint's Coulomb law chosen by held-out data among the `candidates` the data and the validation data were
    streamed with (choose_coulomb_laws), both regressions and the model with them (a regression built again where a
    law is not sign: the candidates were on choice samples only)."""
    judged = (f"judged on the validation recording(s) {', '.join(validation.sources)}" if validation is not None
              else f"{N_FOLDS}-fold cross-validation")
    say(progress, f"Coulomb law per joint: {len(candidates)} candidates, {judged}")
    family = config.coulomb_law if config.coulomb_law in FAMILIES else None  # else auto
    choice = choose_coulomb_laws(data, base, fc, candidates, family, validation)
    chosen = robot.with_coulomb_laws(choice.chosen)

    def with_laws(regression: RegressionData | None) -> RegressionData | None:
        if regression is None:
            return None
        if chosen.coulomb_laws:  # some law other than sign: the regression built again with it
            return restreamed(regression, setup, chosen, base, config, progress)
        return without_candidates(regression)

    return with_laws(data), with_laws(validation), chosen, choice
