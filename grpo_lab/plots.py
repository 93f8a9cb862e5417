"""The course's static figures: a run's curves (notebooks), metrics side by side, the experiments'
seed bands and error points, and saving a figure atomically. The lab's live figure is in
``live_figure.py``.

Figures are built with ``matplotlib.figure.Figure`` (not pyplot), so they work in a background
thread and in a headless process alike.
"""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from .checks.files import write_atomically
from .errors import ConfigError

RUN_PANELS = ("reward", "variance", "zero_std")
X_LABELS = {"step": "training step", "samples": "responses sampled"}
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


def series(history: list[dict], key: str, x_key: str = "step") -> tuple[list[float], list[float]]:
    """The (x, y) points of one metric, skipping steps that did not record it. history: per-step dicts."""
    points = [(record[x_key], record[key]) for record in history if key in record and x_key in record]
    return [x for x, _ in points], [y for _, y in points]


def draw_run_panels(
    axes, history: list[dict], label: str = "", color=None, alpha: float = 1.0, x_key: str = "step", marker: str = "o", ls: str = "-"
) -> None:
    """Draw one run on the three run panels: reward and held-out accuracy; gradient variance;
    fraction of zero-std groups. Every line of the run has its colour, marker and line style ``ls``."""
    reward_axis, variance_axis, zero_std_axis = axes
    (line,) = reward_axis.plot(*series(history, "reward", x_key), color=color, ls=ls, alpha=0.45 * alpha, lw=1, label=f"{label} train reward".strip())
    color = line.get_color()
    reward_axis.plot(
        *series(history, "eval_accuracy", x_key), color=color, ls=ls, alpha=alpha, lw=2, marker=marker, ms=3, label=f"{label} eval accuracy".strip()
    )
    variance_axis.plot(*series(history, "grad_var", x_key), color=color, ls=ls, alpha=alpha, lw=2, marker=marker, ms=3, label=label or "grad_var")
    zero_std_axis.plot(
        *series(history, "frac_reward_zero_std", x_key),
        color=color,
        ls=ls,
        alpha=alpha,
        lw=1.5,
        marker=marker,
        ms=3,
        markevery=5,
        label=label or "frac_reward_zero_std",
    )


def style_run_panels(axes, x_key: str = "step") -> None:
    reward_axis, variance_axis, zero_std_axis = axes
    x_label = X_LABELS[x_key]
    reward_axis.set(title="Reward (thin) and held-out accuracy (thick)", xlabel=x_label, ylabel="fraction correct", ylim=(-0.02, 1.02))
    variance_axis.set(title="Variance of the step's gradient", xlabel=x_label, ylabel="grad_var (trace, log scale)")
    variance_axis.set_yscale("log")
    zero_std_axis.set(title="Groups with no reward spread", xlabel=x_label, ylabel="frac_reward_zero_std", ylim=(-0.02, 1.02))
    for axis in axes:
        axis.grid(alpha=0.3)


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


def run_figure(runs: list[tuple[str, list[dict]]], x_key: str = "step", title: str = "") -> Figure:
    """The three run panels (two a row, the legend in the fourth slot) for one or more (label, history) runs."""
    with matplotlib.rc_context(READABLE):
        figure, slots = two_a_row(3, title)
        for index, (label, history) in enumerate(runs):
            draw_run_panels(slots[:3], history, label, x_key=x_key, **run_look(index))
        style_run_panels(slots[:3], x_key)
        legend_in_slot(slots[3], slots[0], "every panel: one colour, marker and line style a run")
    return figure


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


def save_figure(figure: Figure, path: str | Path, dpi: int = 110, tight: bool = False) -> Path:
    """Write the figure to ``path`` (PNG, SVG or PDF by its suffix), atomically (files.py);
    ``tight``: cropped to what is drawn."""
    image_format = figure_format(path)
    bbox = "tight" if tight else None
    return write_atomically(path, lambda file: figure.savefig(file, format=image_format, dpi=dpi, bbox_inches=bbox))


# --- experiment figures: seed means with their spread ------------------------------------------------
# Used by grpo_lab/experiments/figures.py: every figure there shows the mean over seeds with a band
# or error bars of one standard deviation.


def draw_seed_band(axis, x, per_seed, label: str = "", color=None, **style):
    """Mean over seeds as a line, mean +- one std as a band. x: [n]; per_seed: [seeds][n] with
    None (or NaN) where a seed has no value. Returns the line."""
    values = np.array([[np.nan if v is None else v for v in row] for row in per_seed], dtype=float)
    counts = np.isfinite(values).sum(axis=0)
    keep = counts > 0
    x, values, counts = np.asarray(x, dtype=float)[keep], values[:, keep], counts[keep]
    mean = np.nanmean(values, axis=0)
    spread = np.array([np.nanstd(column, ddof=1) if n > 1 else 0.0 for column, n in zip(values.T, counts)])
    (line,) = axis.plot(x, mean, label=label, color=color, **style)
    axis.fill_between(x, mean - spread, mean + spread, color=line.get_color(), alpha=0.18, lw=0)
    return line


def draw_error_points(axis, x, means, stds, label: str = "", color=None, **style):
    """Seed means joined by a line, with +- one std error bars; None values are skipped."""
    points = [(a, m, 0.0 if s is None else s) for a, m, s in zip(x, means, stds) if m is not None]
    if not points:
        return None
    xs, ms, ss = zip(*points)
    return axis.errorbar(xs, ms, yerr=ss, label=label, color=color, capsize=3, marker=style.pop("marker", "o"), ms=4, **style)
