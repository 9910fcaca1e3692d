"""PNG of a trajectory: q, dq, ddq of every joint over one period, with the limits drawn.

Uses matplotlib's object interface (Figure renders PNG with Agg), never pyplot: no display, no global state.
"""

from __future__ import annotations

import pathlib

from matplotlib.figure import Figure

from robot_id_excitation.check import time_grid
from robot_id_excitation.constraints import DesignLimits
from robot_id_excitation.trajectory_file import Trajectory


def plot_trajectory(
    trajectory: Trajectory,
    path: str | pathlib.Path,
    limits: DesignLimits | None = None,
    hard_limits: DesignLimits | None = None,
    title: str = "",
    samples: int = 2000,
) -> pathlib.Path:
    """Write a grid of n rows (joints) × 3 columns (q, dq, ddq); dashed: design limits, solid red: hard limits."""
    t = time_grid(trajectory.period_s, samples)
    states = trajectory.evaluate(t)
    n = trajectory.n_joints
    fig = Figure(figsize=(13, 1.7 * n + 1))
    axes = fig.subplots(n, 3, sharex=True, squeeze=False)
    headers = ("position [rad]", "velocity [rad/s]", "acceleration [rad/s²]")
    for col, (values, header) in enumerate(zip(states, headers, strict=True)):
        axes[0, col].set_title(header)
        for row in range(n):
            ax = axes[row, col]
            ax.plot(t, values[:, row], color="tab:blue", lw=1.0)
            for lim, style in ((limits, dict(color="tab:orange", ls="--", lw=0.8)),
                               (hard_limits, dict(color="tab:red", ls="-", lw=0.8))):
                if lim is None:
                    continue
                if col == 0:
                    bounds = (lim.position_lower_rad[row], lim.position_upper_rad[row])
                else:
                    bound = (lim.velocity_rad_s if col == 1 else lim.acceleration_rad_s2)[row]
                    bounds = (-bound, bound)
                for b in bounds:
                    ax.axhline(b, **style)
            ax.grid(True, lw=0.3)
            if col == 0:
                ax.set_ylabel(trajectory.joint_names[row], fontsize=8)
    for ax in axes[-1]:
        ax.set_xlabel("t [s]")
    fig.suptitle(title or f"{trajectory.kind} trajectory, period {trajectory.period_s:.3g} s")
    fig.tight_layout()
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    return path
