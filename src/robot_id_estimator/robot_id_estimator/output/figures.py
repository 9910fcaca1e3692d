"""What every report figure shares: an empty figure, a legend below its axes, long traces drawn from their envelope,
a fixed layout, the figure as a PNG inside the page. matplotlib is imported when a figure is drawn, not when this
module is."""

from __future__ import annotations

import base64
import io
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def new_figure(figsize: tuple[float, float]) -> Figure:
    """An empty figure, laid out when it is drawn (fixed_layout)."""
    from matplotlib.figure import Figure

    return Figure(figsize=figsize)


def legend_below(fig: Figure, handles: list, labels: list[str]) -> None:
    """The figure's legend in one row at its bottom edge, below the axes (fixed_layout leaves it room)."""
    fig.legend(handles, labels, loc="lower center", ncols=len(labels), fontsize=8, frameon=False)


PAD_IN = 0.1
"""Room at a figure's edge and between two texts (inches)."""
TICK_LABEL_WIDTH_EM = 3.6
"""The widest y tick label allowed for, in ems of its font ('−0.75', '10⁻³')."""
LINE_EM = 1.4
"""Height of a line of text, in ems (font size and spacing)."""
TICK_PT = 7.0
"""A tick's length and the pad to its label (matplotlib's default 3.5 + 3.5 points)."""


def fixed_layout(fig: Figure) -> None:
    """Place the axes of `fig`'s one grid with margins and gaps in inches, from the font sizes of what it shows:
    titles, axis labels, tick labels (rotated ones by their length), a legend at the bottom. Constrained layout
    measured every text of every axes instead, which took about half of a report's CPU time."""
    width_in, height_in = fig.get_size_inches()
    grid = fig.axes[0].get_subplotspec().get_gridspec()
    rows, columns = grid.get_geometry()
    on_row = [[ax for ax in fig.axes if ax.get_subplotspec().rowspan.start == r and ax.get_visible()]
              for r in range(rows)]
    top = PAD_IN + max(_title_in(ax.get_title(), ax.title) for ax in on_row[0])
    if fig.get_suptitle():  # at the top edge, whatever the figure's height
        title = fig.suptitle(fig.get_suptitle(), y=1.0 - 0.5 * PAD_IN / height_in)
        top += _title_in(fig.get_suptitle(), title)
    legends = sum(LINE_EM * legend.get_texts()[0].get_fontsize() / 72.0 + PAD_IN for legend in fig.legends)
    bottom = PAD_IN + legends + max(_below_axes_in(ax) for ax in on_row[-1])
    between_rows = (max((_below_axes_in(ax) for row in on_row[:-1] for ax in row), default=0.0)
                    + max((_title_in(ax.get_title(), ax.title) for row in on_row[1:] for ax in row), default=0.0))
    left = PAD_IN + max(_left_of_axes_in(ax) for ax in fig.axes if ax.get_subplotspec().colspan.start == 0)
    between_columns = max((_left_of_axes_in(ax) for ax in fig.axes if ax.get_subplotspec().colspan.start > 0),
                          default=0.0) + PAD_IN
    axes_width_in = (width_in - left - 2.0 * PAD_IN - (columns - 1) * between_columns) / columns
    axes_height_in = (height_in - top - bottom - (rows - 1) * between_rows) / rows
    fig.subplots_adjust(left=left / width_in, right=1.0 - 2.0 * PAD_IN / width_in, bottom=bottom / height_in,
                        top=1.0 - top / height_in, wspace=between_columns / axes_width_in,
                        hspace=(between_rows + PAD_IN) / axes_height_in)


def _title_in(text: str, artist) -> float:
    """Height of a title line (none: 0)."""
    return LINE_EM * artist.get_fontsize() / 72.0 if text else 0.0


def _below_axes_in(ax) -> float:
    """Height of what sits below an axes: its x tick labels (rotated: their length) and its x label."""
    height, labels = 0.0, ax.get_xticklabels()
    if labels and ax.xaxis.get_tick_params()["labelbottom"]:
        rotated = [len(label.get_text()) * 0.6 for label in labels if label.get_rotation() == 90.0]
        height += (TICK_PT + max([LINE_EM, *rotated]) * labels[0].get_fontsize()) / 72.0
    label = ax.xaxis.label
    return height + (LINE_EM * label.get_fontsize() / 72.0 if label.get_text() else 0.0)


def _left_of_axes_in(ax) -> float:
    """Width of what sits left of an axes: its y tick labels and its y label (each of its lines)."""
    labels = ax.get_yticklabels()
    width = (TICK_PT + TICK_LABEL_WIDTH_EM * labels[0].get_fontsize()) / 72.0 if labels else 0.0
    label = ax.yaxis.label
    lines = label.get_text().count("\n") + 1 if label.get_text() else 0
    return width + lines * LINE_EM * label.get_fontsize() / 72.0


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
    """The figure laid out (fixed_layout) as a PNG data URI, for an <img> of a page that needs no file beside it."""
    fixed_layout(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, dpi=100, format="png")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
