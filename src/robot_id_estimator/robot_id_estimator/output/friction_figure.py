"""The report's friction figure: per joint, the friction the identification data show against speed, with the
identified law through it."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from robot_id_estimator.output.figures import inline_png, legend_below, new_figure
from robot_id_estimator.results import Friction, Traces

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MAX_POINTS = 4000
"""Samples drawn per joint."""


def friction_curve_nm(f: Friction, joint: int, dq_rad_s: np.ndarray, q_rad: np.ndarray | None = None) -> np.ndarray:
    """The identified linear-in-parameters friction of one joint at speeds dq (a path-dependent law along the
    positions q of the same samples): FV·dq + FC·law + FO (an unestimated term counts 0)."""
    viscous, coulomb, offset = (np.nan_to_num(x[joint]) for x in (f.viscous_nm_s_rad, f.coulomb_nm, f.offset_nm))
    return viscous * dq_rad_s + coulomb * f.laws()[joint].signal(dq_rad_s, q_rad) + offset


def friction_figure(traces: Traces, f: Friction) -> Figure:
    """One panel per joint: measured torque less the base set's rigid body (dots) against speed, and the
    identified law (line)."""
    n = len(f.joint_names)
    columns = min(n, 4)
    fig = new_figure((3.2 * columns, 2.8 * math.ceil(n / columns) + 0.6))
    axes = np.atleast_1d(fig.subplots(math.ceil(n / columns), columns, squeeze=False)).ravel()
    step = max(1, len(traces.t_s) // MAX_POINTS)
    for j, (ax, name) in enumerate(zip(axes, f.joint_names, strict=False)):
        dq = traces.dq_rad_s[::step, j]
        ax.plot(dq, traces.friction_nm[::step, j], ".", ms=1.5, color="tab:gray", label="data less the rigid body")
        law = f.laws()[j].formula()
        if f.laws()[j].path_dependent:  # a state of the path (presliding): drawn at the samples, along them
            friction = friction_curve_nm(f, j, traces.dq_rad_s[:, j], traces.q_rad[:, j])[::step]
            ax.plot(dq, friction, ".", ms=1.0, color="tab:red", label="identified friction")
        else:
            speeds = np.linspace(dq.min(), dq.max(), 801)
            ax.plot(speeds, friction_curve_nm(f, j, speeds), color="tab:red", lw=1.2, label="identified friction")
        ax.set_title(f"{name}: {law}", fontsize=9)
        ax.set_xlabel("dq [rad/s]", fontsize=8)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("friction torque [Nm]", fontsize=8)
    for ax in axes[n:]:
        ax.set_visible(False)
    legend_below(fig, *axes[0].get_legend_handles_labels())
    return fig


def friction_png(traces: Traces | None, f: Friction) -> str | None:
    """friction_figure as a PNG data URI (figures.inline_png); None without the traces' velocities (an
    identification read from JSON)."""
    if traces is None or traces.dq_rad_s is None:
        return None
    return inline_png(friction_figure(traces, f))
