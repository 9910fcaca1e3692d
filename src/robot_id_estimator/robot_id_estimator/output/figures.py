"""What every report figure shares: an empty figure, a legend below its axes, the figure as a PNG inside the page.
matplotlib is imported when a figure is drawn, not when this module is."""

from __future__ import annotations

import base64
import io
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def new_figure(figsize: tuple[float, float]) -> Figure:
    """An empty figure with constrained layout (which leaves room for a legend outside the axes)."""
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")


def legend_below(fig: Figure, handles: list, labels: list[str]) -> None:
    """The figure's legend in one row below its axes, where it covers no data."""
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), fontsize=8, frameon=False)


def inline_png(fig: Figure) -> str:
    """The figure as a PNG data URI, for an <img> of a page that needs no file beside it."""
    buffer = io.BytesIO()
    fig.savefig(buffer, dpi=100, format="png")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
