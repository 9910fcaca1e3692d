"""Nonlinear Stribeck friction (Luo et al. 2024, eq. 7) fitted by Levenberg–Marquardt to friction sweeps (eq. 15)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import scipy.optimize
import scipy.stats

from robot_id_estimator.stribeck_law import STRIBECK_NAMES, stribeck_torque

MIN_STEADY_SAMPLES = 3
"""A pass needs at least this many samples at constant speed to count."""

OUTLIER_MADS = 6.0
"""Friction points further than this many (normal-consistent) median absolute deviations from the median of
their pass are dropped."""

CREEP_FRACTION = 0.5
"""A run between a pass and its reverse pass that is slower than this fraction of the pass's speed and covers less
than this fraction of its distance is creep (a joint settling after a stop), not a pass."""

LEVEL_GAP = 0.05
"""Friction points whose sorted speeds are more than this fraction apart belong to different speed levels."""

MIN_LEVELS = 5
"""Speed levels the fit needs: at one speed eq. (7) is one number, so one level per coefficient of the simplest
model (fv1, fs, fc and one Stribeck velocity fs1 = fc1) and one more, which the curve need not pass through, to
check it."""

F_TEST_P = 0.05
"""A simpler model of eq. (7) is kept unless the richest the levels determine explains their mean friction better
at this significance (F-test)."""

PLAUSIBLE_FACTOR = 2.0
"""A fitted curve above this multiple of the largest measured friction is no friction curve."""

BAND_FRACTION = 0.2
"""Between two adjacent sweep speeds a fitted curve stays within their measured frictions widened by this fraction
of the largest measured friction (a Stribeck decay plus a viscous rise stays within the two), and below the
slowest sweep speed it does not fall by more than that under the friction measured there (friction does not drop
as a joint slows to a stop)."""


@dataclass(frozen=True)
class StribeckFit:
    """Stribeck coefficients of one joint (STRIBECK_NAMES order) and how well they fit the sweep points."""

    coefficients: np.ndarray
    rms_nm: float
    n_points: int
    speed_range_rad_s: tuple[float, float]
    n_levels: int
    """distinct sweep speeds among the points"""
    terms: str
    """whether fv2 and fv3 were fitted, and why"""


def _runs(dq: np.ndarray, min_speed: float) -> list[tuple[int, int, int]]:
    """Contiguous runs (start, stop, sign) where |dq| > min_speed with a constant sign."""
    sign = np.where(dq > min_speed, 1, np.where(dq < -min_speed, -1, 0))
    edges = np.flatnonzero(np.diff(sign)) + 1
    bounds = np.concatenate([[0], edges, [len(dq)]])
    return [(int(a), int(b), int(sign[a])) for a, b in itertools.pairwise(bounds) if sign[a] != 0]


def _cruise_speed(speed: np.ndarray) -> float:
    """The constant speed of a pass: its 90th percentile, on the plateau even when the ramps are longer."""
    return float(np.percentile(np.abs(speed), 90))


def _travel(q: np.ndarray, run: tuple[int, int, int]) -> float:
    """The distance a run covers [rad]."""
    return float(np.ptp(q[run[0]:run[1]]))


def _steady(speed: np.ndarray, tolerance: float) -> np.ndarray:
    """Samples of a run at its cruise speed: they and both neighbours within `tolerance` of it (so the
    acceleration is small too); the first and last samples of a run are never steady."""
    cruise = _cruise_speed(speed)
    near = np.abs(np.abs(speed) - cruise) <= tolerance * cruise
    steady = near.copy()
    steady[1:] &= near[:-1]
    steady[:-1] &= near[1:]
    steady[[0, -1]] = False
    return steady


def mirrored_friction(
    q_rad: np.ndarray,
    dq_rad_s: np.ndarray,
    tau_nm: np.ndarray,
    min_speed_rad_s: float = 1e-3,
    speed_tolerance: float = 0.05,
) -> tuple[np.ndarray, np.ndarray]:
    """Friction points of one joint from forward/backward passes at constant speed (Luo et al. 2024, eq. 15).

    Each run of positive velocity is paired with the next run of negative velocity at the same speed, or the
    other way round, past any creep between them (CREEP_FRACTION); at every position both passes cover,
    τ(t) − τ(T−t) = 2·τ_f(q̇(t)): gravity is the same at the same position, the velocity-quadratic terms are the
    same at opposite velocity, and at constant speed there is no inertial torque. That holds when the other
    joints stand still and when they move along the same path back (a simultaneous sweep): at the same position
    of this joint they are at the same positions with opposite velocities. T−t is found by position, so the
    passes need not be time-symmetric. Only the constant-speed part of each pass is used: samples that, with their
    neighbours, are within `speed_tolerance` of the pass's cruise speed, without the outliers of each pass
    (OUTLIER_MADS). Returns (speed > 0, friction torque at that speed).
    """
    q, dq, tau = (np.asarray(x, dtype=float).ravel() for x in (q_rad, dq_rad_s, tau_nm))
    # runs without a constant-speed stretch (filter ringing around a stop) would break the pairing
    runs = [
        r for r in _runs(dq, min_speed_rad_s)
        if r[1] - r[0] >= MIN_STEADY_SAMPLES and _steady(dq[r[0]:r[1]], speed_tolerance).sum() >= MIN_STEADY_SAMPLES
    ]
    speeds, frictions = [], []
    i = 0
    while i + 1 < len(runs):
        first = runs[i]
        speed_first = _cruise_speed(dq[first[0]:first[1]])
        k = i + 1
        while k + 1 < len(runs) and (_cruise_speed(dq[runs[k][0]:runs[k][1]]) < CREEP_FRACTION * speed_first
                                     and _travel(q, runs[k]) < CREEP_FRACTION * _travel(q, first)):
            k += 1  # creep: the reverse pass follows it
        second = runs[k]
        speed_second = _cruise_speed(dq[second[0]:second[1]])
        if first[2] == second[2] or abs(speed_first - speed_second) > speed_tolerance * speed_first:
            i += 1  # not a forward/backward pair at one speed (a spurious run, or a change of speed)
            continue
        forward, backward = (first, second) if first[2] > 0 else (second, first)
        speed, friction = _pair_friction(q, dq, tau, slice(*forward[:2]), slice(*backward[:2]), speed_tolerance)
        speeds.append(speed)
        frictions.append(friction)
        i = k + 1
    if not speeds:
        return np.zeros(0), np.zeros(0)
    return np.concatenate(speeds), np.concatenate(frictions)


def _pair_friction(q: np.ndarray, dq: np.ndarray, tau: np.ndarray, fwd: slice, bwd: slice,
                   speed_tolerance: float) -> tuple[np.ndarray, np.ndarray]:
    """(speed, friction) of one forward/backward pair at the positions both cover (eq. 15), constant-speed samples
    only, without the pass's outliers."""
    q_b, order = q[bwd], np.argsort(q[bwd])
    inside = (q[fwd] >= q_b.min()) & (q[fwd] <= q_b.max())
    q_f = q[fwd][inside]
    dq_b = np.interp(q_f, q_b[order], dq[bwd][order])
    tau_b = np.interp(q_f, q_b[order], tau[bwd][order])
    dq_f, tau_f = dq[fwd][inside], tau[fwd][inside]
    steady_f = _steady(dq[fwd], speed_tolerance)[inside]
    steady_b = _steady(dq[bwd], speed_tolerance).astype(float)
    # a constant-speed forward sample, and a backward value interpolated between constant-speed samples
    steady = steady_f & (np.interp(q_f, q_b[order], steady_b[order]) == 1.0)
    speed, friction = 0.5 * (dq_f - dq_b)[steady], 0.5 * (tau_f - tau_b)[steady]
    if not len(friction):
        return speed, friction
    # at one speed eq. (7) is one value: drop what the pass's own scatter calls an outlier (a sample at the edge of
    # a speed ramp still carries inertial torque)
    deviation = np.abs(friction - np.median(friction))
    keep = deviation <= OUTLIER_MADS * 1.4826 * np.median(deviation) + 1e-12
    return speed[keep], friction[keep]


def _basis(speed: np.ndarray, fs1: float, fc1: float, polynomial: bool) -> np.ndarray:
    """Columns of eq. (7) given its velocity scales: fv1 (fv2, fv3 when `polynomial`), fs, fc."""
    powers = [speed, speed**2, speed**3] if polynomial else [speed]
    return np.column_stack([*powers, np.exp(-((speed / fs1) ** 2)), 1.0 - np.exp(-((speed / fc1) ** 2))])


@dataclass(frozen=True)
class _Model:
    """Which coefficients of eq. (7) a fit frees: fv2 and fv3 (`polynomial`), fc1 apart from fs1 (not `shared`)."""

    polynomial: bool
    shared: bool

    @property
    def free(self) -> list[int]:
        return [0, *([1, 2] if self.polynomial else []), 3, 4, 5, *([] if self.shared else [6])]

    @property
    def description(self) -> str:
        return (("fv2, fv3 fitted" if self.polynomial else "fv2 = fv3 = 0") + ", "
                + ("fc1 = fs1" if self.shared else "fc1 apart from fs1"))


def _initial_guess(speed: np.ndarray, friction: np.ndarray, model: _Model, grid: int = 16) -> np.ndarray:
    """Start of the fit, all seven coefficients with the velocity scales as logarithms: the best scales on a log
    grid over the swept speeds (variable projection: the other coefficients are linear), so that LM starts in the
    right basin."""

    def linear(fs1: float, fc1: float) -> tuple[np.ndarray, float]:
        basis = _basis(speed, fs1, fc1, model.polynomial)
        solution, *_ = np.linalg.lstsq(basis, friction, rcond=None)
        return solution, float(np.sum((basis @ solution - friction) ** 2))

    scales = np.geomspace(0.5 * speed.min(), speed.max(), grid)
    pairs = [(a, a) for a in scales] if model.shared else [(a, b) for a in scales for b in scales]
    fs1, fc1 = min(pairs, key=lambda pair: linear(*pair)[1])
    solution = linear(fs1, fc1)[0]
    fv = solution[:3] if model.polynomial else [solution[0], 0.0, 0.0]
    return np.array([*fv, solution[-2], np.log(fs1), solution[-1], np.log(fc1)])


def _fit(speed: np.ndarray, friction: np.ndarray, model: _Model) -> np.ndarray:
    """Levenberg–Marquardt fit of eq. (7) (scipy least_squares, method "lm") over the model's free coefficients
    (the others zero, or fc1 = fs1); the velocity scales are fitted as logarithms so that they stay positive."""
    free = model.free

    def coefficients(x: np.ndarray) -> np.ndarray:
        c = np.zeros(len(STRIBECK_NAMES))
        c[free] = x
        if model.shared:
            c[6] = c[4]
        c[[4, 6]] = np.exp(c[[4, 6]])
        return c

    def residual(x: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):  # a tiny velocity scale LM tries: (q̇/fs1)² overflows, its exp is 0
            return stribeck_torque(speed, coefficients(x)) - friction

    start = _initial_guess(speed, friction, model)[free]
    return coefficients(scipy.optimize.least_squares(residual, start, method="lm", x_scale="jac").x)


def _levels(speed: np.ndarray) -> np.ndarray:
    """Speed level of every point, 0, 1, ... from the slowest: sorted speeds more than LEVEL_GAP apart start a new
    level; −1 for a stray group of fewer than MIN_STEADY_SAMPLES points."""
    order = np.argsort(speed)
    ordered = speed[order]
    group = np.concatenate([[0], np.cumsum(ordered[1:] > (1.0 + LEVEL_GAP) * ordered[:-1])])
    counted = np.bincount(group) >= MIN_STEADY_SAMPLES
    labels = np.empty(len(speed), dtype=int)
    labels[order] = np.where(counted, np.cumsum(counted) - 1, -1)[group]
    return labels


def speed_levels(speed_rad_s: np.ndarray) -> int:
    """How many distinct speeds (levels, LEVEL_GAP apart) friction points were measured at."""
    labels = _levels(np.abs(np.asarray(speed_rad_s, dtype=float)))
    return int(labels.max()) + 1 if len(labels) else 0


def _level_means(values: np.ndarray, labels: np.ndarray) -> np.ndarray:
    counted = labels >= 0
    return np.bincount(labels[counted], values[counted]) / np.bincount(labels[counted])


def _f_test(residual_reduced: np.ndarray, residual_full: np.ndarray, labels: np.ndarray, extra: int,
            n_full: int) -> float:
    """p-value of `extra` coefficients more (n_full in all): F-test of the nested fits on the levels' mean
    residuals (the points of one level share their filtered noise, so they are one observation)."""
    sse_reduced, sse_full = (float(np.sum(_level_means(r, labels) ** 2)) for r in (residual_reduced, residual_full))
    dof = int(labels.max()) + 1 - n_full
    if dof < 1 or sse_full >= sse_reduced:
        return 1.0
    if sse_full == 0.0:
        return 0.0
    return float(scipy.stats.f.sf((sse_reduced - sse_full) / extra / (sse_full / dof), extra, dof))


def implausibility(coefficients: np.ndarray, level_speed_rad_s: np.ndarray, level_friction_nm: np.ndarray,
                   top_speed_rad_s: float) -> str | None:
    """Why eq. (7) with `coefficients` is no friction curve over the speeds it is applied to, given the mean
    friction measured at each of at least two sweep speeds (ascending) and the sweep's top speed; None when it is
    plausible.

    From 0 to the top speed friction opposes the motion (is positive), stays below PLAUSIBLE_FACTOR × the largest
    measured friction and, below and between the sweep speeds, within BAND_FRACTION of what was measured there;
    beyond the top speed it does not fall without bound (the leading velocity coefficient is not negative).
    """
    v_top = top_speed_rad_s
    speed = np.unique(np.concatenate([np.geomspace(1e-6 * v_top, v_top, 600), np.linspace(0.0, v_top, 300)[1:],
                                      level_speed_rad_s]))
    curve = stribeck_torque(speed, coefficients)
    v, f = level_speed_rad_s, level_friction_nm
    largest = float(np.max(np.abs(f)))
    margin = BAND_FRACTION * largest
    if np.any(curve <= 0.0):
        k = int(np.argmax(curve <= 0.0))
        return f"is {curve[k]:.3g} Nm at {speed[k]:.3g} rad/s: friction must oppose the motion"
    if np.any(curve > PLAUSIBLE_FACTOR * largest):
        k = int(np.argmax(curve))
        return (f"reaches {curve[k]:.3g} Nm at {speed[k]:.3g} rad/s, over {PLAUSIBLE_FACTOR:g}× the largest measured "
                f"friction ({largest:.3g} Nm)")
    slower = speed < v[0]
    if np.any(curve[slower] < f[0] - margin):
        k = int(np.argmin(curve[slower]))
        return (f"falls to {curve[slower][k]:.3g} Nm at {speed[slower][k]:.3g} rad/s, below the {f[0]:.3g} Nm "
                f"measured at the slowest sweep speed {v[0]:.3g} rad/s (− {margin:.2g} Nm)")
    between = (speed >= v[0]) & (speed <= v[-1])
    i = np.clip(np.searchsorted(v, speed[between], side="right") - 1, 0, len(v) - 2)
    outside = (curve[between] < np.minimum(f[i], f[i + 1]) - margin) | (
        curve[between] > np.maximum(f[i], f[i + 1]) + margin)
    if np.any(outside):
        k = int(np.argmax(outside))
        return (f"is {curve[between][k]:.3g} Nm at {speed[between][k]:.3g} rad/s, outside the {f[i[k]]:.3g} and "
                f"{f[i[k] + 1]:.3g} Nm measured at {v[i[k]]:.3g} and {v[i[k] + 1]:.3g} rad/s (± {margin:.2g} Nm)")
    leading = next((j for j in (2, 1, 0) if coefficients[j] != 0.0), 0)
    if coefficients[leading] < 0.0:
        return (f"falls without bound beyond the top sweep speed ({STRIBECK_NAMES[leading]} = "
                f"{coefficients[leading]:.3g} < 0)")
    return None


def fit_stribeck(speed_rad_s: np.ndarray, friction_nm: np.ndarray) -> StribeckFit:
    """Levenberg–Marquardt fit of eq. (7) to friction points, from the simplest model up.

    The simplest: fv2 = fv3 = 0 and one Stribeck velocity (fc1 = fs1: the classic curve fc + (fs − fc)·exp(−(q̇/fs1)²)
    plus viscous friction), which needs MIN_LEVELS speed levels; then a separate fc1, fv2 and fv3, and both, each
    fitted when the sweep has a level more than its coefficients. Of those with a plausible curve (`implausibility`),
    the answer is the simplest that fits the levels' mean friction as well as the richest (F-test at F_TEST_P).
    Raises ValueError with the reason when the points cannot determine the model or the fitted curve is
    implausible (`implausibility`).
    """
    speed = np.abs(np.asarray(speed_rad_s, dtype=float))
    friction = np.asarray(friction_nm, dtype=float) * np.sign(speed_rad_s)
    labels = _levels(speed)
    n_levels = speed_levels(speed)
    if n_levels < MIN_LEVELS:
        found = ", ".join(f"{v:.3g}" for v in _level_means(speed, labels))
        raise ValueError(f"{n_levels} sweep speeds ({found or 'none'} rad/s); the Stribeck fit needs at least "
                         f"{MIN_LEVELS} (fv1, fs, fc, a Stribeck velocity and one to check them): sweep more speeds")
    level_speed, level_friction = _level_means(speed, labels), _level_means(friction, labels)

    def problem(coefficients: np.ndarray) -> str | None:
        return implausibility(coefficients, level_speed, level_friction, float(speed.max()))

    def residual(coefficients: np.ndarray) -> np.ndarray:
        return stribeck_torque(speed, coefficients) - friction

    # the models the levels can determine, simplest first; of those with a plausible curve, the simplest that fits
    # as well as the richest (F-test) is the answer
    models = [m for m in (_Model(False, True), _Model(False, False), _Model(True, True), _Model(True, False))
              if len(m.free) < n_levels]
    fits = [_fit(speed, friction, m) for m in models]
    plausible = [(m, c) for m, c in zip(models, fits, strict=True) if problem(c) is None]
    if not plausible:
        raise ValueError(f"the fitted Stribeck curve {problem(fits[0])}")
    model, coef = plausible[-1]
    terms = "the richest plausible model the sweep speeds determine"
    for candidate, fitted in plausible[:-1]:
        p = _f_test(residual(fitted), residual(coef), labels, len(model.free) - len(candidate.free), len(model.free))
        if p >= F_TEST_P:
            terms = f"as good as with {len(model.free)} coefficients (F-test p = {p:.2g})"
            model, coef = candidate, fitted
            break
    terms = f"{model.description}: {terms}"
    rms = float(np.sqrt(np.mean(residual(coef) ** 2)))
    return StribeckFit(coef, rms, len(speed), (float(speed.min()), float(speed.max())), n_levels, terms)


