"""The robot's measured-torque filter found from the data, not assumed. In: the recordings processed, the arm's model
(sign-law Coulomb friction) and the configured first-order time constant. Out: the time constant the data show,
and whether it replaces the configured one.

lbr_fri_ros2_stack low-passes the measured torque before publishing it, and how changed between its versions (a
10 Hz cutoff, 16 ms, in its 2024 system config; a `measured_torque_tau` parameter, 0.04 s by the hardware interface's
defaults, later): a model filtered with the wrong time constant lags or leads the data, which a friction law or the
inertias partly take up, and the identification is biased. The base parameters are fitted by least squares with
the regressor filtered like the torque (processing.model_side.torque_side) for each candidate time constant, on at
most FIT_SECONDS of each recording; the best is refined between its neighbours.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.optimize

from robot_id_estimator.processing.model_side import robot_filtered, torque_side
from robot_id_estimator.processing.samples import ProcessedData
from robot_id_estimator.settings import ProcessingConfig
from robot_id_model.regressor import regressor
from robot_id_model.robot_model import RobotModel

CANDIDATES_S = (0.0, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256)
"""Time constants tried (and the configured one): none, and a geometric grid over the robots' filters."""
USED_BELOW = 0.5
"""The time constant found replaces the configured one when its fit leaves at most this fraction of the configured
one's residual (measured: 0.24 for data through 40 ms configured as 16, 0.07 through 100 ms, 0.35 through 16 ms
configured as none), ..."""
DIFFERENT = 0.25
"""... it differs from the configured one by more than this fraction (of the larger, at least 2 ms), ..."""
EXPLAINED = 0.15
"""... it leaves at most this fraction of every joint's torque RMS (a time constant that only explains a mistake in
the data less badly, such as a flipped torque sign, explains nothing: the diagnosis names the mistake), and it lies
inside the candidates (256 ms is no robot's filter)."""
REFINED_TO = 0.02
"""The best candidate is refined between its neighbours (Brent's bounded search) to this fraction of it."""
FIT_SECONDS = 30.0
"""Seconds of each recording the candidates are fitted on (a period of periodic data is all of it) ..."""
FIT_RATE_HZ = 100.0
"""... at about this rate (every k-th processed sample: the filters' exact discretisation holds at any rate, and
the torque they filter is band-limited far below it)."""


@dataclass(frozen=True)
class TorqueFilterFit:
    """The configured and the found time constant, and each candidate's fit (summed residual RMS relative to each
    joint's torque RMS)."""

    configured_s: float
    found_s: float
    score: dict[float, float]
    worst_joint: dict[float, float]
    """Per time constant, the largest fraction of a joint's torque RMS its fit leaves."""

    @property
    def replaces(self) -> bool:
        """Whether the found time constant is to be used instead of the configured one."""
        apart = abs(self.found_s - self.configured_s) > DIFFERENT * max(self.found_s, self.configured_s, 0.002)
        inside = min(CANDIDATES_S) < self.found_s < max(CANDIDATES_S)
        return (apart and inside and self._fit(self.found_s) <= USED_BELOW * self._fit(self.configured_s)
                and self.worst_joint[self.found_s] <= EXPLAINED)

    def _fit(self, time_constant_s: float) -> float:
        return self.score[min(self.score, key=lambda tc: abs(tc - time_constant_s))]

    def warning(self) -> str:
        """What the user must know when the found time constant replaces the configured one."""
        return (f"the robot filters its torque with a time constant of about {1000 * self.found_s:.0f} ms, not the "
                f"configured {1000 * self.configured_s:g} ms: identified with {1000 * self.found_s:.0f} ms (its fit "
                f"leaves {self._fit(self.found_s) / self._fit(self.configured_s):.0%} of the configured one's "
                "residual); set torque_filter_time_constant_s in the robot config to the robot's (lbr_fri_ros2_stack: "
                "measured_torque_tau, or its 10 Hz cutoff's 16 ms in older versions)")


def found_time_constant(robot: RobotModel, independent: np.ndarray, processing: ProcessingConfig, configured_s: float,
                        processed: Sequence[ProcessedData]) -> TorqueFilterFit:
    """The torque filter's time constant that lets the base parameters (π's `independent` columns) explain the
    torque best (module docstring)."""
    windows = [windowed(d, fitting_window(d, FIT_SECONDS, FIT_RATE_HZ)) for d in processed]
    # both filters are linear and time-invariant, so they commute: the zero-phase low-pass once, the robot's per
    # candidate
    smoothed = [torque_side(regressor(robot, d.q_rad, d.dq_rad_s, d.ddq_rad_s2)[..., independent], d, processing, 0.0)
                for d in windows]
    tau_nm = np.concatenate([d.tau_nm for d in windows])
    torque_rms_nm = np.maximum(np.sqrt(np.mean(tau_nm**2, axis=0)), 1e-9)

    worst: dict[float, float] = {}

    def score(time_constant_s: float) -> float:
        yb = np.concatenate([robot_filtered(y, d, time_constant_s) for y, d in zip(smoothed, windows, strict=True)])
        a = yb.reshape(-1, yb.shape[-1])
        values = scipy.linalg.lstsq(a, tau_nm.ravel(), lapack_driver="gelsy")[0]
        relative = np.sqrt(np.mean((tau_nm - (a @ values).reshape(tau_nm.shape)) ** 2, axis=0)) / torque_rms_nm
        worst[time_constant_s] = float(relative.max())
        return float(np.sum(relative))

    scores = {tc: score(tc) for tc in sorted({*CANDIDATES_S, configured_s})}
    grid = sorted(scores)
    i = min(range(len(grid)), key=lambda k: scores[grid[k]])
    if grid[i] != configured_s:  # refined between its neighbours (the configured one fitting best needs none)
        low, high = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
        result = scipy.optimize.minimize_scalar(score, bounds=(low, high), method="bounded",
                                                options={"xatol": REFINED_TO * max(grid[i], 0.002)})
        scores[float(result.x)] = float(result.fun)
    return TorqueFilterFit(configured_s, min(scores, key=scores.get), scores, worst)


def fitting_window(data: ProcessedData, seconds: float, rate_hz: float = math.inf) -> slice:
    """The first `seconds` of a recording (all of a periodic one) that a refit runs on, every k-th sample for about
    `rate_hz` (a periodic recording keeps whole periods on the coarser grid, else every sample)."""
    k = len(data.t_s) if data.n_periods > 0 else int(np.searchsorted(data.t_s, data.t_s[0] + seconds))
    step = max(1, int((1.0 / (data.t_s[1] - data.t_s[0])) // rate_hz))
    return slice(0, k, 1 if data.n_periods > 0 and k % step else step)


def windowed(data: ProcessedData, window: slice) -> ProcessedData:
    """The processed samples in `window`."""
    return dataclasses.replace(data, t_s=data.t_s[window], q_rad=data.q_rad[window], dq_rad_s=data.dq_rad_s[window],
                               ddq_rad_s2=data.ddq_rad_s2[window], tau_nm=data.tau_nm[window])
