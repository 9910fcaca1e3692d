"""PNG of a trajectory: q, dq, ddq of every joint over one period with the limits drawn, and, given the robot
model, the flange speed, the heights of the lowest point and of the flange, and the closest approach of two links
or a link and the environment, with their limits (the constraints that usually bind, as
constraints.constraint_groups evaluates them). A friction sweep shows only its swept joints
(the others hold still).

Uses matplotlib's object interface (Figure renders PNG with Agg), never pyplot: no display, no global state.
matplotlib is imported when a figure is drawn, not when this module is.
"""

from __future__ import annotations

import pathlib
from typing import TYPE_CHECKING

import numpy as np

from robot_id_excitation.check import time_grid
from robot_id_excitation.constraints import DesignLimits, constraint_groups
from robot_id_excitation.sweeps import FrictionSweep
from robot_id_excitation.trajectory_file import Trajectory
from robot_id_model.robot_model import RobotModel

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DESIGN_STYLE = dict(color="tab:orange", ls="--", lw=0.8, zorder=3)
"""Lines of the design limits (margin and scales applied), drawn over the robot's where they coincide."""
HARD_STYLE = dict(color="tab:red", ls="-", lw=0.8, zorder=2)
"""Lines of the robot's own limits."""


def plotted_joints(trajectory: Trajectory) -> list[int]:
    """Indices of the joints drawn: a friction sweep's swept joints, else all."""
    if isinstance(trajectory, FrictionSweep):
        return [trajectory.joint_names.index(name) for name in trajectory.joints]
    return list(range(trajectory.n_joints))


def _joint_bounds(lim: DesignLimits, col: int, j: int) -> tuple[float, float]:
    if col == 0:
        return lim.position_lower_rad[j], lim.position_upper_rad[j]
    bound = (lim.velocity_rad_s if col == 1 else lim.acceleration_rad_s2)[j]
    return -bound, bound


def _draw_distance(ax: Axes, groups: list, t: np.ndarray, limits: DesignLimits,
                   hard_limits: DesignLimits | None) -> None:
    """The least distance between two links or a link and the environment over time, with the clearance; the
    pairs allowed closer apart, with their own clearance."""
    collisions = [g for g in groups if g.constraint == "collision"]
    ax.set_title("closest approach [m]")
    ax.set_xlabel("t [s]")
    ax.grid(True, lw=0.3)
    if not collisions:
        ax.text(0.5, 0.5, "no collision geometry: not checked", ha="center", va="center", transform=ax.transAxes)
        return
    allowed = limits.collision.allowed_pairs
    for pairs, label, color in (([g for g in collisions if frozenset(g.where.split("–")) not in allowed], "least",
                                 "tab:blue"),
                                ([g for g in collisions if frozenset(g.where.split("–")) in allowed],
                                 "allowed pairs' least", "tab:green")):
        if not pairs:
            continue
        distances = np.stack([g.quantity for g in pairs])
        k = int(np.argmin(distances.min(axis=0)))
        ax.plot(t, distances.min(axis=0), color=color, lw=1.0,
                label=f"{label} (at t = {t[k]:.3g} s: {pairs[int(np.argmin(distances[:, k]))].where})")
    for lim, style, name in ((limits, DESIGN_STYLE, "design"), (hard_limits, HARD_STYLE, "robot")):
        if lim is not None and lim.collision is not None:
            ax.axhline(lim.collision.clearance_m, **style, label=f"{name} clearance {lim.collision.clearance_m:.3g} m")
            if lim.collision.allowed_pairs:
                clearance = min(lim.collision.clearance_m, lim.collision.allowed_clearance_m)
                ax.axhline(clearance, **(style | {"color": "tab:green"}),
                           label=f"{name} clearance of allowed pairs {clearance:.3g} m")
    ax.legend(loc="best", fontsize=7)


def _draw_cartesian(axes: tuple[Axes, Axes, Axes], robot: RobotModel, limits: DesignLimits,
                    hard_limits: DesignLimits | None, t: np.ndarray, states: tuple[np.ndarray, ...]) -> None:
    """Flange speed, the height of the lowest link origin or flange and that of the flange (the last floor
    group), and the closest approach of the links, as constraint_groups evaluates them."""
    speed_ax, floor_ax, distance_ax = axes
    groups = constraint_groups(robot, limits, *states)
    _draw_distance(distance_ax, groups, t, limits, hard_limits)
    speed = next(g for g in groups if g.constraint == "flange_speed")
    floor = [g for g in groups if g.constraint == "floor"]
    heights = np.stack([g.quantity for g in floor])
    lowest = np.argmin(heights, axis=0)
    k = int(np.argmin(heights.min(axis=0)))
    speed_ax.plot(t, speed.quantity, color="tab:blue", lw=1.0, label=f"‖v‖ of {speed.where}")
    floor_ax.plot(t, heights.min(axis=0), color="tab:blue", lw=1.0,
                  label=f"lowest point (at t = {t[k]:.3g} s: {floor[lowest[k]].where})")
    floor_ax.plot(t, floor[-1].quantity, color="tab:purple", lw=0.8, ls=":", label=f"flange {floor[-1].where}")
    for lim, style, name in ((limits, DESIGN_STYLE, "design"), (hard_limits, HARD_STYLE, "robot")):
        if lim is None:
            continue
        speed_ax.axhline(lim.flange_speed_m_s, **style, label=f"{name} limit {lim.flange_speed_m_s:.4g} m/s")
        floor_ax.axhline(lim.floor_z_m, **style, label=f"{name} floor z = {lim.floor_z_m:.4g} m")
    speed_ax.set_ylim(bottom=0.0)
    speed_ax.set_title("flange speed [m/s]")
    floor_ax.set_title("height above the base frame [m]")
    for ax in (speed_ax, floor_ax):
        ax.legend(loc="best", fontsize=7)
        ax.grid(True, lw=0.3)
        ax.set_xlabel("t [s]")


PAD_IN = 0.1
"""Room at the figure's edge and between an axes and the text beside it (inches)."""
TEXT_IN = 10.0 * 1.4 / 72.0
"""Height of a 10-point line of text: tick labels, an x label."""
TITLE_IN = 12.0 * 1.4 / 72.0
"""Height of a 12-point line: an axes' title, the figure's."""
TICKS_IN = 7.0 / 72.0 + TEXT_IN
"""Ticks, their pad and their labels below an axes."""
Y_TICKS_IN = 7.0 / 72.0 + 6 * 0.6 * 10.0 / 72.0
"""Ticks, their pad and y tick labels of up to six characters ('−0.010') left of an axes."""


def _row_spans_in(height_in: float, ratios: list[float], titled: list[bool], labelled: list[bool]) -> list[tuple]:
    """(bottom, height) in inches of each row of axes, from the top: fixed room for the figure's title, each row's
    titles above it and tick labels (and x labels) below it; the rest shared by `ratios`. matplotlib's constrained
    layout measured every text of every axes instead, most of a plot's CPU time."""
    below = [*titled[1:], False]  # the next row's titles; below the last row the figure's edge
    gaps = [TICKS_IN + TEXT_IN * label + PAD_IN + TITLE_IN * title
            for label, title in zip(labelled, below, strict=True)]
    top = PAD_IN + TITLE_IN + TITLE_IN * titled[0] + PAD_IN
    free = height_in - top - sum(gaps)
    spans, y = [], height_in - top
    for ratio, gap in zip(ratios, gaps, strict=True):
        h = free * ratio / sum(ratios)
        spans.append((y - h, h))
        y -= h + gap
    return spans


def trajectory_figure(
    trajectory: Trajectory,
    limits: DesignLimits | None = None,
    hard_limits: DesignLimits | None = None,
    title: str = "",
    samples: int = 2000,
    robot: RobotModel | None = None,
) -> Figure:
    """Rows of joints (plotted_joints) × columns q, dq, ddq; dashed: design limits, solid red: hard limits.
    With `robot` and `limits`, a last row with the flange speed and the floor clearance."""
    from matplotlib.figure import Figure

    t = time_grid(trajectory.period_s, samples)
    states = trajectory.evaluate(t)
    joints = plotted_joints(trajectory)
    cartesian = robot is not None and limits is not None
    width_in, height_in = 13.0, 1.7 * len(joints) + 2.6 * cartesian + 1
    fig = Figure(figsize=(width_in, height_in))
    rows = _row_spans_in(height_in, [1.0] * len(joints) + [1.6] * cartesian, [True] + [False] * (len(joints) - 1)
                         + [True] * cartesian, [False] * (len(joints) - 1) + [True] + [True] * cartesian)
    left_in = PAD_IN + TITLE_IN + Y_TICKS_IN
    column_in = (width_in - left_in - 2 * PAD_IN - 2 * (Y_TICKS_IN + PAD_IN)) / 3

    def axes_at(row: int, col: int, share: Axes | None) -> Axes:
        bottom, height = rows[row]
        x = left_in + col * (column_in + Y_TICKS_IN + PAD_IN)
        return fig.add_axes((x / width_in, bottom / height_in, column_in / width_in, height / height_in), sharex=share)

    first = None
    headers = ("position [rad]", "velocity [rad/s]", "acceleration [rad/s²]")
    for col, (values, header) in enumerate(zip(states, headers, strict=True)):
        for row, j in enumerate(joints):
            ax = axes_at(row, col, first)
            first = first or ax
            ax.plot(t, values[:, j], color="tab:blue", lw=1.0)
            for lim, style in ((limits, DESIGN_STYLE), (hard_limits, HARD_STYLE)):
                for b in _joint_bounds(lim, col, j) if lim is not None else ():
                    ax.axhline(b, **style)
            ax.grid(True, lw=0.3)
            if row == 0:
                ax.set_title(header)
            if col == 0:
                ax.set_ylabel(trajectory.joint_names[j], fontsize=8)
            if row == len(joints) - 1:
                ax.set_xlabel("t [s]")
    if cartesian:
        _draw_cartesian(tuple(axes_at(len(joints), i, first) for i in range(3)), robot, limits, hard_limits, t, states)
    fig.suptitle(title or f"{trajectory.kind} trajectory, period {trajectory.period_s:.3g} s",
                 y=1.0 - PAD_IN / height_in)
    return fig


def plot_trajectory(
    trajectory: Trajectory,
    path: str | pathlib.Path,
    limits: DesignLimits | None = None,
    hard_limits: DesignLimits | None = None,
    title: str = "",
    samples: int = 2000,
    robot: RobotModel | None = None,
) -> pathlib.Path:
    """Write trajectory_figure as a PNG at `path`."""
    fig = trajectory_figure(trajectory, limits, hard_limits, title, samples, robot)
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    return path
