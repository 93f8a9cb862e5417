"""What the course's figures share: the runs' colours, markers and line styles, readable type at
notebook width, a run's figure as a static frame (of ``live_figure.LiveRunFigure``, the lab's), metrics
side by side, and saving a figure atomically. The experiments' figures are in ``experiments/figures.py``.

Figures are built with ``matplotlib.figure.Figure`` (not pyplot), so they work in a background
thread and in a headless process alike.
"""

from __future__ import annotations

import io
import math
import textwrap
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .checks.files import write_atomically
from .errors import ConfigError
from .live_figure import HISTORY_PANELS, LIVE_FONT_SIZES, X_LABELS, LiveRunFigure, RunCurves, series

# The runs' colours: Okabe and Ito's blue, vermillion and black, IBM's colour-blind-safe purple and
# Paul Tol's rose, wine and indigo, chosen so that any two of the seven stay apart under protanopia and deuteranopia as well as
# with normal vision (Machado et al. 2009 at severity 1; CIE76 delta E over 24, over 27 for the first
# six: tests/test_lab_widgets.py computes it), each at least 3:1 against white; each colour paired with a
# marker of its own, so that runs stay apart in grey too. (Okabe-Ito's first six, used before, come
# within delta E 18 of each other there: bluish green and reddish purple under deuteranopia.)
RUN_COLORS = ("#0072B2", "#D55E00", "#785EF0", "#CC6677", "#000000", "#882255", "#332288")
RUN_MARKERS = ("o", "s", "^", "D", "v", "P", "X")
# and a line style, so that curves that coincide stay apart too: 5 styles x 7 markers, 35 looks before one repeats
LINE_STYLES = ("-", "--", "-.", ":", (0, (6, 2, 1, 2, 1, 2)))


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
    the fourth slot, each run in run_style's colour and marker. Two things the live frame leaves out: the
    train reward kept off a fraction axis (rewards_off_the_fraction_axis) and each run's mean grad_var over
    steps (mean_grad_var_lines). x_key: "step" or "samples"."""
    frame = LiveRunFigure(height_px=720, panels=HISTORY_PANELS)
    curves = []
    for index, (label, history) in enumerate(runs):
        color, marker = run_style(index)
        curves.append(RunCurves(index, label, [history], color, marker=marker))
    frame.update(curves, x_key=x_key, x_max=max((record.get(x_key, 0) for _, history in runs for record in history), default=None))
    rewards_off_the_fraction_axis(frame.panels["reward"])
    mean_grad_var_lines(frame.panels["variance"], [(curve.color, curve.histories[0]) for curve in curves])
    frame.legend_slot.add_artist(frame.legend_slot.get_legend())  # the runs' legend stays; a key to the reference lines goes under it
    frame.legend_slot.legend(
        [Line2D([], [], color="0.3", ls=":", lw=2)],
        ["grad_var's mean over steps:\nthe level to read, the zig-zag\naround it is noise"],
        loc="lower left",
        fontsize=LIVE_FONT_SIZES["legend"],
        frameon=False,
    )
    if title:
        frame.figure.suptitle(balanced_lines(title, RUN_TITLE_CHARACTERS), fontsize=LIVE_FONT_SIZES["title"])
    # drawn once: a layout engine makes room for the title and a reward axis, nothing to crop
    frame.figure.set_layout_engine("constrained", wspace=0.08)
    return frame.figure


def rewards_off_the_fraction_axis(axis) -> None:
    """Keep the train reward off a y axis that reads as a fraction: a reward is in reward units (a scale makes
    it 0.2 where as many answers are right, an offset 5 and more). Rewards within [0, 1] share the panel's
    axis, labelled for both; rewards outside it move to a right-hand axis of their own, one reward unit tall
    from the whole number under them when they fit (an offset run then looks as a run without one), drawn
    under the accuracy lines."""
    rewards = [line for line in axis.get_lines() if line.get_label().endswith(": reward")]
    values = [y for line in rewards for y in line.get_ydata() if np.isfinite(y)]
    if not values or 0 <= min(values) <= max(values) <= 1:
        axis.set_ylabel("accuracy, reward", fontsize=LIVE_FONT_SIZES["label"])
        return
    reward_axis = axis.twinx()
    for line in rewards:
        moved = Line2D(*line.get_data())
        moved.update_from(line)  # colour, style, markers; and the old axis's transform, replaced next
        moved.set(label=line.get_label(), transform=reward_axis.transData)
        reward_axis.add_line(moved)
        line.remove()
    base = math.floor(min(values))
    if max(values) <= base + 1:
        reward_axis.set_ylim(*(base + limit for limit in axis.get_ylim()))
    else:
        reward_axis.margins(y=0.1)
        reward_axis.autoscale_view()
    axis.set_zorder(reward_axis.get_zorder() + 1)  # accuracy on top; its background off, so the rewards show through
    axis.patch.set_visible(False)
    axis.set_ylabel("accuracy (thick)", fontsize=LIVE_FONT_SIZES["label"])
    reward_axis.set_ylabel("train reward (thin)", fontsize=LIVE_FONT_SIZES["label"])
    reward_axis.tick_params(labelsize=LIVE_FONT_SIZES["tick"])


def mean_grad_var_lines(axis, runs: list[tuple[str, list[dict]]]) -> None:
    """Each run's mean grad_var over its probed steps as a dotted line in its colour: one estimate from a few
    chunks of a batch is noisy, and the mean is what to read it against. runs: [(colour, history)]."""
    for color, history in runs:
        values = series(history, "grad_var")[1]
        if values:
            axis.axhline(float(np.mean(values)), color=color, ls=":", lw=2, zorder=2)


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
