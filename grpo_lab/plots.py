"""The course's figures, in one place: the CLI, the notebooks and the lab all draw with these.

Figures are built with ``matplotlib.figure.Figure`` (not pyplot), so they work in a background
thread and in a headless process alike.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import PIL.Image
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import Formatter, FuncFormatter

from .errors import ConfigError
from .files import write_atomically

RUN_PANELS = ("reward", "variance", "zero_std")
X_LABELS = {"step": "training step", "samples": "responses sampled"}


def series(history: list[dict], key: str, x_key: str = "step") -> tuple[list[float], list[float]]:
    """The (x, y) points of one metric, skipping steps that did not record it. history: per-step dicts."""
    points = [(record[x_key], record[key]) for record in history if key in record and x_key in record]
    return [x for x, _ in points], [y for _, y in points]


def draw_run_panels(axes, history: list[dict], label: str = "", color=None, alpha: float = 1.0, x_key: str = "step") -> None:
    """Draw one run on the three run panels: reward and held-out accuracy; gradient variance;
    fraction of zero-std groups and the largest |advantage|."""
    reward_axis, variance_axis, zero_std_axis = axes
    (line,) = reward_axis.plot(*series(history, "reward", x_key), color=color, alpha=0.45 * alpha, lw=1, label=f"{label} train reward".strip())
    color = line.get_color()
    reward_axis.plot(
        *series(history, "eval_accuracy", x_key), color=color, alpha=alpha, lw=2, marker="o", ms=3, label=f"{label} eval accuracy".strip()
    )
    variance_axis.plot(*series(history, "grad_var", x_key), color=color, alpha=alpha, lw=2, marker="o", ms=3, label=label or "grad_var")
    zero_std_axis.plot(*series(history, "frac_reward_zero_std", x_key), color=color, alpha=alpha, lw=1.5, label=label or "frac_reward_zero_std")


def style_run_panels(axes, x_key: str = "step") -> None:
    reward_axis, variance_axis, zero_std_axis = axes
    x_label = X_LABELS[x_key]
    reward_axis.set(title="Reward (thin) and held-out accuracy (thick)", xlabel=x_label, ylabel="fraction correct", ylim=(-0.02, 1.02))
    variance_axis.set(title="Variance of the step's gradient", xlabel=x_label, ylabel="grad_var (trace, log scale)")
    variance_axis.set_yscale("log")
    zero_std_axis.set(title="Groups with no reward spread", xlabel=x_label, ylabel="frac_reward_zero_std", ylim=(-0.02, 1.02))
    for axis in axes:
        axis.grid(alpha=0.3)
        if axis.get_legend_handles_labels()[0]:
            axis.legend(fontsize=7, loc="best")


def run_figure(runs: list[tuple[str, list[dict]]], x_key: str = "step", title: str = "") -> Figure:
    """One figure with the three run panels for one or more (label, history) runs."""
    figure = Figure(figsize=(13, 3.8), layout="constrained")
    axes = figure.subplots(1, 3)
    for label, history in runs:
        draw_run_panels(axes, history, label, x_key=x_key)
    style_run_panels(axes, x_key)
    if title:
        figure.suptitle(title)
    return figure


def metrics_figure(runs: list[tuple[str, list[dict]]], metrics: list[str], x_key: str = "step", title: str = "") -> Figure:
    """One panel per metric name, one line per (label, history) run: e.g. our run next to TRL's."""
    figure = Figure(figsize=(4.3 * len(metrics), 3.4), layout="constrained")
    axes = figure.subplots(1, len(metrics), squeeze=False)[0]
    for axis, metric in zip(axes, metrics):
        for label, history in runs:
            axis.plot(*series(history, metric, x_key), marker="o", ms=3, lw=1.5, label=label)
        axis.set(title=metric, xlabel=X_LABELS[x_key])
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8, loc="best")
    if title:
        figure.suptitle(title)
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


# --- the lab's live figure ------------------------------------------------------------------------
# One persistent Figure, rendered to PNG bytes that the lab puts into an ipywidgets.Image (this
# updates in JupyterLab and Voila alike while a run is going). Redrawing a whole 2x2 figure takes
# a few tenths of a second of Python that would hold the GIL against training, so it is drawn in
# full only when the picture's frame changes (a run starts or ends, an axis has to grow); every
# other frame pastes that background and draws just the live run's lines on it (blitting).

LIVE_FONT_SIZES = {"title": 13, "label": 12, "tick": 11, "legend": 12}  # readable on a projector
FADED_ALPHA = 0.3  # earlier runs stay on the plot, faded
HISTOGRAM_BINS = 41


@dataclass
class RunCurves:
    """One run as the live figure draws it: the mean over seeds, with a band of one standard
    deviation when there are several. histories: one list of per-step dicts per seed; key: a
    stable id under which the run's lines are kept and updated in place; live: still training
    (redrawn every frame, on top)."""

    key: int
    label: str
    histories: list[list[dict]]
    color: str
    faded: bool = False
    live: bool = False


def seed_band(histories: list[list[dict]], key: str, x_key: str = "step", positive: bool = False):
    """Mean and mean -+ one std (Bessel) of one metric over seeds at every x that any seed
    recorded, skipping non-finite values (and values <= 0 when ``positive``, for log axes).
    Returns four arrays [n]: x, mean, low, high (low = high = mean where one seed has a value)."""
    by_x: dict[float, list[float]] = {}
    for history in histories:
        for x, y in zip(*series(history, key, x_key)):
            if math.isfinite(y) and (y > 0 or not positive):
                by_x.setdefault(x, []).append(y)
    xs = sorted(by_x)
    means = np.array([np.mean(by_x[x]) for x in xs])
    spreads = np.array([np.std(by_x[x], ddof=1) if len(by_x[x]) > 1 else 0.0 for x in xs])
    return np.asarray(xs, dtype=float), means, means - spreads, means + spreads


def nice_ceiling(value: float) -> float:
    """The smallest 1, 2 or 5 x 10^k that is >= value (value > 0): axis limits that rarely move."""
    exponent = math.floor(math.log10(value))
    for mantissa in (1, 2, 5, 10):
        if mantissa * 10**exponent >= value * (1 - 1e-12):
            return mantissa * 10**exponent
    return 10 ** (exponent + 1)


class ShortRangeLogLabels(Formatter):
    """Minor-tick labels of a log axis: the 2s and 5s as plain numbers when the axis spans under
    ~1.5 decades (where there is often no power of ten to label), nothing otherwise."""

    def __call__(self, value, pos=None) -> str:
        low, high = sorted(self.axis.get_view_interval())
        if low <= 0 or high / low > 30:
            return ""
        leading = round(value / 10 ** math.floor(math.log10(value) + 1e-9))
        return f"{value:g}" if leading in (2, 5) else ""


class LiveRunFigure:
    """The lab's four panels: (1) train reward (thin) and held-out accuracy (dots) against step or
    samples; (2) gradient variance (solid, log, left) and SNR (dashed, right); (3) the fraction of
    zero-std groups (solid, left) and the largest |advantage| (dashed, log, right): the explosion
    detector; (4) the histogram of the latest step's advantages.

    ``update`` moves the lines of runs it has seen before (by ``RunCurves.key``) instead of
    redrawing, adds new runs and drops runs no longer given; ``png`` renders the figure. Axis
    limits only grow while a run trains (starting from the previous picture's), and fit the runs
    again when none does, so most frames are blitted.
    """

    # metric -> (panel, line style); the snr and adv_max panels are the right-hand twins
    METRICS = {
        "reward": ("reward", {"lw": 1.3}),
        "eval_accuracy": ("reward", {"lw": 2.6, "marker": "o", "ms": 5}),
        "grad_var": ("variance", {"lw": 2.2, "marker": "o", "ms": 4}),
        "grad_snr": ("snr", {"lw": 1.6, "ls": "--"}),
        "frac_reward_zero_std": ("zero_std", {"lw": 2.0}),
        "adv_abs_max": ("adv_max", {"lw": 1.6, "ls": "--"}),
    }
    LOG_PANELS = ("variance", "adv_max")

    def __init__(self, width_px: int = 1040, height_px: int = 720, dpi: int = 80):
        self.dpi, self.width_px, self.height_px = dpi, width_px, height_px
        self.figure = Figure(figsize=(width_px / dpi, height_px / dpi), dpi=dpi)
        self.canvas = FigureCanvasAgg(self.figure)
        # fixed margins instead of a layout engine: the layout would be recomputed on every frame
        self.figure.subplots_adjust(left=0.07, right=0.93, bottom=0.23, top=0.955, wspace=0.42, hspace=0.45)
        self._crop_height = height_px  # rows of the PNG down to the legend's bottom edge (set at every full draw)
        grid = self.figure.subplots(2, 2)
        self.panels = {"reward": grid[0, 0], "variance": grid[0, 1], "zero_std": grid[1, 0], "histogram": grid[1, 1]}
        self.panels["snr"] = self.panels["variance"].twinx()
        self.panels["adv_max"] = self.panels["zero_std"].twinx()
        for name in self.LOG_PANELS:
            self.panels[name].set_yscale("log")
            self.panels[name].yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
            self.panels[name].yaxis.set_minor_formatter(ShortRangeLogLabels())
        self.histogram = self.panels["histogram"].stairs([0.0], [-1.0, 1.0], fill=True, alpha=0.7, animated=True)
        self.panels["histogram"].axvline(0, color="0.3", lw=1)
        self.panels["histogram"].title.set_animated(True)  # "Advantages at step k" changes every frame
        self._lines: dict[int, dict[str, Line2D]] = {}
        self._bands: list = []
        self._legend = None
        self._frame = None  # what the background shows: x axis, runs, which one is live
        self._limits: dict[str, tuple[float, float]] = {}
        self._background = None  # pixels of everything but the live run, valid while _frame and _limits hold
        self._animated: list = [self.histogram, self.panels["histogram"].title]  # drawn on top, every frame
        self.x_key = "step"
        self._style()

    def _style(self) -> None:
        size = LIVE_FONT_SIZES
        titles = {
            "reward": "Train reward (thin), held-out accuracy (dots)",
            "variance": "Gradient variance (solid), grad_snr (dashed; pure noise ~1)",
            "zero_std": "Zero-std groups (solid), max |adv| (dashed)",
            "histogram": "Advantages of the latest step",
        }
        y_labels = {
            "reward": "reward / accuracy",
            "variance": "grad_var (log)",
            "snr": "grad_snr (noise floor 1)",
            "zero_std": "frac_reward_zero_std",
            "adv_max": "adv_abs_max (log)",
            "histogram": "responses",
        }
        for name, axis in self.panels.items():
            if name in titles:
                axis.set_title(titles[name], fontsize=size["title"])
                axis.set_xlabel(X_LABELS[self.x_key] if name != "histogram" else "advantage", fontsize=size["label"])
                axis.grid(alpha=0.3)
            axis.set_ylabel(y_labels[name], fontsize=size["label"])
            axis.tick_params(labelsize=size["tick"])

    def update(
        self,
        runs: list[RunCurves],
        x_key: str = "step",
        x_max: float | None = None,
        advantages=None,
        advantages_title: str = "",
        histogram_color=None,
    ) -> None:
        """Show ``runs`` (oldest first). advantages: the latest step's advantages, any shape, or
        None; x_max: the right end of the x axis (the planned length of the longest run)."""
        frame = (x_key, x_max, tuple((run.key, run.label, run.color, run.faded, run.live) for run in runs))
        if frame != self._frame:  # a new picture: everything is redrawn
            self._frame, self._background = frame, None
            if not any(run.live for run in runs):
                self._limits = {}  # at rest the limits fit the runs shown, and may shrink
            # while a run trains they start from the last picture's and only grow: its first points
            # rarely move an axis, and every moved axis is a full redraw that holds the GIL against training
            if x_key != self.x_key:
                self.x_key = x_key
                self._style()
            for key in set(self._lines) - {run.key for run in runs}:
                for line in self._lines.pop(key).values():
                    line.remove()
            self._draw_legend(runs)
        for band in self._bands:
            band.remove()
        self._bands = []
        self._animated = [self.histogram, self.panels["histogram"].title]
        extents: dict[str, list[float]] = {}
        for run in runs:
            self._draw_run(run, x_key, extents)
        counts, edges = self._histogram_counts(advantages)
        extents["histogram"] = [float(edges[0]), float(edges[-1])]
        extents["histogram_counts"] = [0.0, float(counts.max()) if len(counts) else 1.0]
        self._grow_limits(extents, x_max)
        self.histogram.set_data(counts, edges)
        if histogram_color is not None:
            self.histogram.set_color(histogram_color)
        self.panels["histogram"].set_title(advantages_title or "Advantages of the latest step", fontsize=LIVE_FONT_SIZES["title"])

    def _draw_run(self, run: RunCurves, x_key: str, extents: dict[str, list[float]]) -> None:
        lines = self._lines.setdefault(run.key, {})
        alpha = FADED_ALPHA if run.faded else 1.0
        for metric, (panel, style) in self.METRICS.items():
            axis = self.panels[panel]
            x, mean, low, high = seed_band(run.histories, metric, x_key, positive=panel in self.LOG_PANELS)
            if metric not in lines:
                (lines[metric],) = axis.plot([], [], **style)
            line = lines[metric]
            line.set_data(x, mean)
            line.set(
                color=run.color,
                alpha=alpha * (0.6 if metric == "reward" else 1.0),
                animated=run.live,
                linewidth=style["lw"] * (0.7 if run.faded else 1.0),
                zorder=1 if run.faded else 3,
            )
            if len(x):
                extents.setdefault(panel, []).extend([float(low.min()), float(high.max())])
            if len(run.histories) > 1 and len(x):
                band = axis.fill_between(x, low, high, color=run.color, alpha=0.15 * alpha, lw=0, animated=run.live)
                self._bands.append(band)
                if run.live:
                    self._animated.append(band)
            if run.live:
                self._animated.append(line)

    def _histogram_counts(self, advantages):
        """Counts over fixed bins spanning the histogram's current range (grown to fit the data)."""
        values = np.asarray(advantages if advantages is not None else [], dtype=float).ravel()
        values = values[np.isfinite(values)]
        reach = nice_ceiling(max(float(np.abs(values).max()) if len(values) else 0.0, 0.5) * 1.05)
        low, high = self._limits.get("histogram", (-reach, reach))
        reach = max(reach, -low, high)
        edges = np.linspace(-reach, reach, HISTOGRAM_BINS + 1)
        counts, _ = np.histogram(values, bins=edges)
        return counts.astype(float), edges

    def _target_limits(self, panel: str, values: list[float]) -> tuple[float, float] | None:
        if not values:
            return None
        low, high = min(values), max(values)
        if panel in self.LOG_PANELS:  # whole decades: a curve that drifts down moves the axis rarely
            positive = [v for v in values if v > 0]
            if not positive:
                return None
            return 10.0 ** math.floor(math.log10(min(positive)) + 1e-9), 10.0 ** math.ceil(math.log10(max(positive)) - 1e-9)
        if panel == "reward":
            span = max(high - low, 1.0)
            return min(-0.02, low - 0.05 * span), max(1.02, high + 0.05 * span)
        if panel == "zero_std":
            return -0.02, 1.02
        if panel == "histogram":
            return low, high
        if panel == "histogram_counts":
            return 0.0, nice_ceiling(max(high, 1.0) * 1.1)
        return 0.0, nice_ceiling(max(high, 1e-3) * 1.05)  # snr: >= 0

    def _grow_limits(self, extents: dict[str, list[float]], x_max: float | None) -> None:
        """Set every axis's limits to fit the data, only ever growing them within one frame; a
        change invalidates the background."""
        for panel in ("reward", "variance", "snr", "zero_std", "adv_max", "histogram", "histogram_counts"):
            target = self._target_limits(panel, extents.get(panel, []))
            if target is None:
                continue
            old = self._limits.get(panel)
            grown = target if old is None else (min(old[0], target[0]), max(old[1], target[1]))
            if grown != old:
                self._limits[panel] = grown
                self._background = None
                if panel == "histogram":
                    self.panels["histogram"].set_xlim(*grown)
                elif panel == "histogram_counts":
                    self.panels["histogram"].set_ylim(*grown)
                else:
                    self.panels[panel].set_ylim(*grown)
        if self._background is None and x_max:
            for panel in ("reward", "variance", "zero_std"):
                self.panels[panel].set_xlim(0, x_max * 1.02)

    def _draw_legend(self, runs: list[RunCurves]) -> None:
        if self._legend is not None:
            self._legend.remove()
            self._legend = None
        if not runs:
            return
        handles = [Line2D([], [], color=run.color, lw=3, alpha=FADED_ALPHA + 0.2 if run.faded else 1.0) for run in runs]
        labels = [run.label for run in runs]
        # right under the bottom panels' axis labels, two columns; png() crops the picture below it
        below_labels = 0.23 - 3.6 * LIVE_FONT_SIZES["label"] / 72 * self.dpi / self.height_px
        self._legend = self.figure.legend(
            handles,
            labels,
            loc="upper center",
            bbox_to_anchor=(0.5, below_labels),
            ncol=2,
            fontsize=LIVE_FONT_SIZES["legend"],
            title="runs (earlier ones faded, newest last)",
            title_fontsize=LIVE_FONT_SIZES["legend"],
            frameon=False,
            columnspacing=3,
        )

    def png(self) -> bytes:
        """The figure as PNG bytes: a full draw when the background is stale, else the background
        plus the animated artists (the live run, the histogram and its title)."""
        if self._background is None:
            self.canvas.draw()  # animated artists are left out of this
            self._background = self.canvas.copy_from_bbox(self.figure.bbox)
            if self._legend is not None:  # room for the legend and no empty band under it
                legend_bottom = self._legend.get_window_extent(self.canvas.get_renderer()).y0
                self._crop_height = min(self.height_px, int(self.height_px - legend_bottom) + 6)
            else:
                self._crop_height = int(self.height_px * 0.86)
        else:
            self.canvas.restore_region(self._background)
        for artist in self._animated:
            self.figure.draw_artist(artist)
        image = PIL.Image.frombuffer("RGBA", self.canvas.get_width_height(), self.canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        image = image.crop((0, 0, image.width, self._crop_height))
        buffer = io.BytesIO()
        image.save(buffer, format="png", compress_level=1)  # fast: the bytes go over a local websocket
        return buffer.getvalue()


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
