"""What the course's figures share: the runs' colours, markers and line styles, readable type at
notebook width, a run's figure as a static frame (of ``live_figure.LiveRunFigure``, the lab's), metrics
side by side, and saving a figure atomically. The experiments' figures are in ``experiments/figures.py``.

Figures are built with ``matplotlib.figure.Figure`` (not pyplot), so they work in a background
thread and in a headless process alike.
"""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from .checks.files import write_atomically
from .errors import ConfigError
from .live_figure import HISTORY_PANELS, LIVE_FONT_SIZES, X_LABELS, LiveRunFigure, RunCurves, series

# Okabe and Ito's colour-blind-safe palette (their yellow left out: too pale on white), each colour
# paired with a marker of its own, so that runs stay apart in grey or under colour blindness too
RUN_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
RUN_MARKERS = ("o", "s", "^", "D", "v", "P", "X")
# and a line style, so that curves that coincide stay apart too: 4 styles x 7 markers, 28 looks before one repeats
LINE_STYLES = ("-", "--", "-.", ":")


def run_style(index: int) -> tuple[str, str]:
    """The (colour, marker) of the ``index``-th run: RUN_COLORS and RUN_MARKERS in step, cycling."""
    return RUN_COLORS[index % len(RUN_COLORS)], RUN_MARKERS[index % len(RUN_MARKERS)]


def run_look(index: int) -> dict:
    """Line options of the ``index``-th run of a static figure: run_style's colour and marker, and a line style."""
    color, marker = run_style(index)
    return {"color": color, "marker": marker, "ls": LINE_STYLES[index % len(LINE_STYLES)]}


def run_styled_axes(axes) -> None:
    """Give each axis the runs' colour-and-marker cycle (for figures that draw one line per run)."""
    from cycler import cycler

    for axis in axes:
        axis.set_prop_cycle(cycler(color=RUN_COLORS) + cycler(marker=RUN_MARKERS))


FIGURE_WIDTH = 9.5  # inches: 855 px at 90 dpi, inside a notebook's ~900 px, so nothing shrinks
PANEL_HEIGHT = 3.3  # inches per row of two panels
READABLE = {  # points at 90 dpi: 10 pt draws 12.5 px, what 9 pt is on a 96-dpi screen
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "xtick.labelsize": 10,
    "ytick.labelsize": 10,
    "legend.fontsize": 10,
    "figure.titlesize": 11,
}


def two_a_row(panels: int, title: str = "") -> tuple[Figure, np.ndarray]:
    """A constrained-layout figure of ``panels`` panels, two a row, at notebook width with READABLE fonts.
    Returns the figure and every slot, row by row: slots past ``panels`` are for a legend (or hidden)."""
    with matplotlib.rc_context(READABLE):
        rows = -(-panels // 2)
        figure = Figure(figsize=(FIGURE_WIDTH, PANEL_HEIGHT * rows + (0.4 if title else 0.1)), layout="constrained")
        slots = np.atleast_1d(figure.subplots(rows, 2)).ravel()
        if title:
            figure.suptitle(title)
    return figure, slots


def legend_in_slot(slot, source_axis, title: str = "") -> None:
    """Turn an unused panel slot into the legend of ``source_axis`` (so no legend hides a line)."""
    slot.axis("off")
    slot.legend(*source_axis.get_legend_handles_labels(), loc="upper left", title=title or None)


RUN_TITLE_CHARACTERS = 70  # a run figure's title wraps before it runs past the edges at the live figure's type size


def run_figure(runs: list[tuple[str, list[dict]]], x_key: str = "step", title: str = "") -> Figure:
    """One or more (label, history) runs as a static frame of the lab's run figure (live_figure.LiveRunFigure):
    its panels that a finished history can draw (the histogram needs a step's raw batch), the legend in
    the fourth slot, each run in run_style's colour and marker. x_key: "step" or "samples"."""
    frame = LiveRunFigure(height_px=720, panels=HISTORY_PANELS)
    curves = []
    for index, (label, history) in enumerate(runs):
        color, marker = run_style(index)
        curves.append(RunCurves(index, label, [history], color, marker=marker))
    frame.update(curves, x_key=x_key, x_max=max((record.get(x_key, 0) for _, history in runs for record in history), default=None))
    if title:
        frame.figure.suptitle(balanced_lines(title, RUN_TITLE_CHARACTERS), fontsize=LIVE_FONT_SIZES["title"])
    frame.figure.set_layout_engine("constrained")  # drawn once: a layout engine makes room for the title, nothing to crop
    return frame.figure


def balanced_lines(text: str, width: int) -> str:
    """``text`` wrapped into as few lines as ``width`` characters allow, of near-equal length (no line
    of one short word under a full one)."""
    lines = len(textwrap.wrap(text, width))
    narrowest = next(w for w in range(max(1, len(text) // lines), width + 1) if len(textwrap.wrap(text, w)) == lines)
    return textwrap.fill(text, narrowest)


def metrics_figure(runs: list[tuple[str, list[dict]]], metrics: list[str], x_key: str = "step", title: str = "") -> Figure:
    """One panel per metric name (two a row), one line per (label, history) run: e.g. our run next to TRL's.
    The legend goes in a spare slot when there is one, else in the first panel."""
    with matplotlib.rc_context(READABLE):
        figure, slots = two_a_row(len(metrics), title)
        axes = slots[: len(metrics)]
        run_styled_axes(axes)
        for axis, metric in zip(axes, metrics):
            for label, history in runs:
                axis.plot(*series(history, metric, x_key), ms=3, lw=1.5, label=label)
            axis.set(title=metric, xlabel=X_LABELS[x_key])
            axis.grid(alpha=0.3)
        if len(slots) > len(metrics):
            legend_in_slot(slots[len(metrics)], axes[0], "every panel")
        else:
            axes[0].legend(loc="best")
    return figure


def figure_png(figure: Figure, dpi: int = 90) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


FIGURE_FORMATS = ("png", "svg", "pdf")  # what save_figure writes, chosen by the file's suffix


def figure_format(path: str | Path) -> str:
    """The image format of ``path`` from its suffix; one ConfigError when it is not one we write."""
    suffix = Path(path).suffix.lower().lstrip(".")
    if suffix not in FIGURE_FORMATS:
        raise ConfigError("plot", str(path), "the file name must end in " + ", ".join(f".{f}" for f in FIGURE_FORMATS))
    return suffix


def save_figure(figure: Figure, path: str | Path, dpi: int = 110) -> Path:
    """Write the figure to ``path`` (PNG, SVG or PDF by its suffix), atomically (files.py)."""
    image_format = figure_format(path)
    return write_atomically(path, lambda file: figure.savefig(file, format=image_format, dpi=dpi))
