"""What every report figure shares: an empty figure, a legend below its axes, writing it as a PNG. matplotlib is
imported when a figure is drawn, not when this module is."""

from __future__ import annotations

import pathlib
from typing import TYPE_CHECKING

from robot_id_estimator.output.files import atomic_path

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def new_figure(figsize: tuple[float, float]) -> Figure:
    """An empty figure with constrained layout (which leaves room for a legend outside the axes)."""
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")


def legend_below(fig: Figure, handles: list, labels: list[str]) -> None:
    """The figure's legend in one row below its axes, where it covers no data."""
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), fontsize=8, frameon=False)


def save_png(fig: Figure, path: pathlib.Path) -> str:
    """Write the figure (atomically) and return the file's name, for a link in the report."""
    with atomic_path(path) as temporary:
        fig.savefig(temporary, dpi=100, format="png")
    return path.name
