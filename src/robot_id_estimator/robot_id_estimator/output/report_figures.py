"""The report pages' figures: torque per joint, the base parameters' RSD, the momentum observer's residual, the
validation's error per joint and the payload's check per joint.

Figures are drawn with matplotlib's object API on the Agg canvas (no display, no pyplot state); matplotlib is
imported when a figure is drawn, not when this module is. Each parameter set has one line style (STYLES), chosen
so that curves that coincide all stay visible: the base parameters' wide translucent band under the essential
ones' dashes and the physical ones' dots. Legends sit below the axes, outside the data.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from robot_id_estimator.output.figures import envelope, legend_below, new_figure
from robot_id_estimator.results import Identification, Traces
from robot_id_estimator.results.validation import Validation

if TYPE_CHECKING:
    from matplotlib.figure import Figure

STYLES = {
    "measured": dict(color="black", ls="-", lw=0.9, zorder=2),
    "urdf": dict(color="tab:gray", ls="-.", lw=1.0, zorder=1),
    "base": dict(color="tab:blue", ls="-", lw=3.5, alpha=0.4, zorder=3),
    "essential": dict(color="tab:red", ls="--", lw=1.2, zorder=4),
    "physical": dict(color="tab:green", ls=":", lw=1.6, zorder=5),
}
"""Line style of the measured torque and of each parameter set's prediction ('urdf': the nominal URDF model)."""
OTHER_COLOUR = "tab:gray"
"""Bars of base parameters that are not essential."""


def set_label(parameter_set: str) -> str:
    return "nominal URDF model" if parameter_set == "urdf" else f"{parameter_set} parameters"


def torque_figure(traces: Traces, j: int, title: str) -> Figure:
    """Joint j's measured and predicted torque over time (every parameter set and the URDF model in traces),
    and the prediction errors below."""
    t, measured = traces.t_s, traces.measured_nm[:, j]
    fig = new_figure((10, 5))
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[2, 1])
    top.plot(*envelope(t, measured), **STYLES["measured"], label="measured")
    for s, tau in traces.predicted_nm.items():
        top.plot(*envelope(t, tau[:, j]), **STYLES[s], label=f"predicted: {set_label(s)}")
        bottom.plot(*envelope(t, measured - tau[:, j]), **STYLES[s])
    top.set_ylabel("torque [Nm]")
    top.grid(alpha=0.3)
    fig.suptitle(title)
    legend_below(fig, *top.get_legend_handles_labels())
    bottom.set_ylabel("measured − predicted [Nm]")
    bottom.set_xlabel("time [s]")
    bottom.grid(alpha=0.3)
    return fig


def rsd_figure(result: Identification) -> Figure:
    """Bar chart of the base parameters' RSD (log scale), essential ones in red, the RSD threshold dashed."""
    rsd = result.base.rsd_percent
    essential = set(result.essential.names)
    shown = np.where(np.isfinite(rsd), np.maximum(rsd, 1e-3), np.nan)
    fig = new_figure((max(8.0, 0.18 * len(rsd)), 4.5))
    ax = fig.subplots()
    colours = [STYLES["essential"]["color"] if name in essential else OTHER_COLOUR for name in result.base.names]
    ax.bar(np.arange(len(rsd)), shown, color=colours)
    ax.set_yscale("log")
    ax.axhline(result.config.essential_rsd_threshold_percent, color="k", ls="--", lw=0.8,
               label=f"{result.config.essential_rsd_threshold_percent:g} % threshold")
    ax.set_xticks(np.arange(len(rsd)), result.base.names, rotation=90, fontsize=6)
    ax.set_ylabel("RSD [%] (Xu et al. 2020, eq. 7)")
    ax.set_title("Base parameters: red = essential, grey = eliminated or not identified")
    ax.legend(fontsize=8)
    return fig


def observer_figure(traces: Traces, validation: Validation) -> Figure:
    """Momentum-observer residual per joint and parameter set, with the essential parameters' collision
    thresholds; the legend below the axes."""
    n = len(validation.joint_names)
    fig = new_figure((10, 1.6 * n + 1.5))
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    for j, ax in enumerate(axes):
        for s, r in traces.observer_nm.items():
            ax.plot(*envelope(traces.t_s, r[:, j]), **STYLES[s], label=set_label(s))
        threshold = validation.collision_threshold_nm["essential"][j]
        ax.axhline(threshold, color="k", ls=(0, (5, 5)), lw=0.7, label="collision threshold (essential)")
        ax.axhline(-threshold, color="k", ls=(0, (5, 5)), lw=0.7)
        ax.set_ylabel(f"r {validation.joint_names[j]}\n[Nm]", fontsize=8)
    fig.suptitle(f"Momentum-observer residual (K_O = {validation.observer_gain_1_s:g} 1/s)")
    legend_below(fig, *axes[0].get_legend_handles_labels())
    axes[-1].set_xlabel("time [s]")
    return fig


def joint_bars_figure(joint_names: Sequence[str], bars: dict[str, np.ndarray], colours: dict[str, str],
                      ylabel: str, title: str) -> Figure:
    """Bars per joint, one per entry of `bars` side by side, on a log scale."""
    x, width = np.arange(len(joint_names)), 0.8 / len(bars)
    fig = new_figure((max(8.0, 1.3 * len(joint_names)), 4.0))
    ax = fig.subplots()
    for k, (label, values) in enumerate(bars.items()):
        ax.bar(x + (k - 0.5 * (len(bars) - 1)) * width, values, width, label=label, color=colours[label])
    ax.set_yscale("log")
    ax.set_xticks(x, joint_names)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return fig


def rms_figure(validation: Validation) -> Figure:
    """Each set's RMS error per joint as a percentage of the joint's torque RMS."""
    return joint_bars_figure(validation.joint_names, validation.rms_percent_of_torque,
                             {s: STYLES[s]["color"] for s in validation.rms_percent_of_torque},
                             "RMS error [% of torque RMS]", "Torque prediction error on the validation data")
