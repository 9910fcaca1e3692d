"""What every report figure shares: an empty figure, a legend below its axes, long traces drawn from their envelope,
the figure as a PNG inside the page. matplotlib is imported when a figure is drawn, not when this module is."""

from __future__ import annotations

import base64
import io
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def new_figure(figsize: tuple[float, float]) -> Figure:
    """An empty figure with constrained layout (which leaves room for a legend outside the axes)."""
    from matplotlib.figure import Figure

    return Figure(figsize=figsize, layout="constrained")


def legend_below(fig: Figure, handles: list, labels: list[str]) -> None:
    """The figure's legend in one row below its axes, where it covers no data."""
    fig.legend(handles, labels, loc="outside lower center", ncols=len(labels), fontsize=8, frameon=False)


PLOT_BINS = 1500
"""A trace longer than twice this is drawn from its envelope: the lowest and the highest sample of each of this many
stretches of time (a figure 10 in wide at 100 dpi has about 900 pixel columns of axes, so the drawn line covers the
same pixels as the whole trace)."""


def envelope(t: np.ndarray, y: np.ndarray, bins: int = PLOT_BINS) -> tuple[np.ndarray, np.ndarray]:
    """(t, y) at the lowest and the highest sample of each of `bins` equal stretches of samples, in time order;
    the trace itself when it is not longer than 2·bins."""
    n = len(y)
    if n <= 2 * bins:
        return t, y
    per_bin = -(-n // bins)
    padded = np.concatenate([y, np.full(per_bin * bins - n, y[-1])]).reshape(bins, per_bin)
    start = np.arange(bins) * per_bin
    kept = np.unique(np.minimum(np.concatenate([start + padded.argmin(axis=1), start + padded.argmax(axis=1)]),
                                n - 1))
    return t[kept], y[kept]


def inline_png(fig: Figure) -> str:
    """The figure as a PNG data URI, for an <img> of a page that needs no file beside it."""
    buffer = io.BytesIO()
    fig.savefig(buffer, dpi=100, format="png")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
