"""The run figure: four panels of one or more runs, redrawn while a run trains in the lab.

One persistent Figure, rendered to PNG bytes that the lab puts into an ipywidgets.Image (this
updates in JupyterLab and Voila alike while a run is going). Redrawing a whole 2x2 figure takes
a few tenths of a second of Python that would hold the GIL against training, so it is drawn in
full only when the picture's frame changes (a run starts or ends, an axis has to grow); every
other frame pastes that background and draws just the live run's lines on it (blitting).
``plots.run_figure`` draws a static frame of it (the notebooks' runs, the CLI's ``train --plot``).
"""

from __future__ import annotations

import io
import math
import textwrap
from dataclasses import dataclass

import numpy as np
import PIL.Image
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import Formatter, FuncFormatter, MultipleLocator

LIVE_FONT_SIZES = {"title": 17, "label": 16, "tick": 16, "legend": 16}  # points: at display size when the PNG is shown at css_width_px
CSS_DPI = 96  # a browser's pixels per inch at 100%: a figure drawn at dpi D is shown at D / CSS_DPI device pixels per CSS pixel
X_LABELS = {"step": "training step", "samples": "responses sampled"}  # the x axis of each x_key a history has
ALL_PANELS = ("reward", "variance", "zero_std", "histogram")
HISTORY_PANELS = ALL_PANELS[:3]  # what a finished history can draw: the histogram needs a step's raw batch
TWIN_PANELS = {"variance": "snr", "zero_std": "adv_max"}  # the right-hand axis that shares each panel
FADED_ALPHA = 0.3  # earlier runs stay on the plot, faded
HISTOGRAM_BINS = 41
# markers every 12% of a dense line's length (per-step metrics), each run starting 3% further on,
# so that the markers of runs whose curves coincide sit side by side instead of on top of each other
MARKER_SPACING, MARKER_STAGGER = 0.12, 0.03


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
    marker: str = "o"  # with the colour, tells this run apart without colour vision (plots.run_style)
    tag: str = ""  # a short name written at the end of its accuracy curve ("run 3"), also in the legend


def series(history: list[dict], key: str, x_key: str = "step") -> tuple[list[float], list[float]]:
    """The (x, y) points of one metric, skipping steps that did not record it. history: per-step dicts."""
    points = [(record[x_key], record[key]) for record in history if key in record and x_key in record]
    return [x for x, _ in points], [y for _, y in points]


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
    """The run figure's four panels: (1) train reward (thin) and held-out accuracy (dots) against step or
    samples; (2) gradient variance (solid, log, left) and SNR (dashed, right); (3) the fraction of
    zero-std groups (solid, left) and the largest |advantage| (dashed, log, right): the explosion
    detector; (4) the histogram of the latest step's advantages. Every line of a run carries its
    marker (on dense lines, every MARKER_SPACING), so that runs differ in more than colour.

    ``update`` moves the lines of runs it has seen before (by ``RunCurves.key``) instead of
    redrawing, adds new runs and drops runs no longer given; ``png`` renders the figure. Axis
    limits only grow while a run trains (starting from the previous picture's), and fit the runs
    again when none does, so most frames are blitted.
    """

    # metric -> (panel, line style, dense: recorded every step, so marked every MARKER_SPACING, not at
    # every point); the snr and adv_max panels are the right-hand twins
    METRICS = {
        "reward": ("reward", {"lw": 1.3, "ms": 4}, True),
        "eval_accuracy": ("reward", {"lw": 2.6, "ms": 6}, False),
        "grad_var": ("variance", {"lw": 2.2, "ms": 5}, False),
        "grad_snr": ("snr", {"lw": 1.6, "ls": "--", "ms": 4}, False),
        "frac_reward_zero_std": ("zero_std", {"lw": 2.0, "ms": 5}, True),
        "adv_abs_max": ("adv_max", {"lw": 1.6, "ls": "--", "ms": 4}, True),
    }
    LOG_PANELS = ("variance", "adv_max")

    def __init__(self, width_px: int = 900, height_px: int = 900, dpi: int = CSS_DPI, panels: tuple[str, ...] = ALL_PANELS):
        """width_px, height_px: the PNG's size; dpi: its pixels per inch (fonts are in points, so
        they are LIVE_FONT_SIZES at display size when it is shown ``css_width_px`` wide); panels: all
        four (a 2 x 2 grid), three (the legend in the fourth slot: HISTORY_PANELS, a static frame) or
        two of ALL_PANELS stacked (the lab's projector views)."""
        if len(panels) not in (2, 3, 4) or not set(panels) <= set(ALL_PANELS):
            raise ValueError(f"panels={panels!r} is not valid: all four of {ALL_PANELS}, or three or two of them")
        self.dpi, self.width_px, self.height_px, self.panel_names = dpi, width_px, height_px, tuple(panels)
        self.css_width_px = round(width_px * CSS_DPI / dpi)
        self.dark = False  # drawn for a dark page: set_dark()
        self.figure = Figure(figsize=(width_px / dpi, height_px / dpi), dpi=dpi)
        self.canvas = FigureCanvasAgg(self.figure)
        self._crop_height = height_px  # rows of the PNG down to the legend's bottom edge (set at every full draw)
        self.legend_slot = None  # the spare fourth slot of three panels, which holds the legend
        # fixed margins instead of a layout engine: the layout would be recomputed on every frame
        if len(panels) > 2:  # four: the legend goes under the panels; three: into the fourth slot
            self.figure.subplots_adjust(left=0.1, right=0.9, bottom=0.36 if len(panels) == 4 else 0.1, top=0.955, wspace=0.75, hspace=0.45)
            grid = self.figure.subplots(2, 2).ravel()
            if len(panels) == 3:
                self.legend_slot = grid[3]
                self.legend_slot.axis("off")
        else:  # stacked, wide margins: 16-point ticks and labels on both sides of a narrow picture
            self.figure.subplots_adjust(left=0.2, right=0.8, bottom=0.4, top=0.94, hspace=0.75)
            grid = self.figure.subplots(2, 1)
        self.panels = dict(zip(panels, grid))
        if len(panels) == 2:  # short panels: the fraction axes ticked every half, not only at 0 and 1
            for name in {"reward", "zero_std"} & set(panels):
                self.panels[name].yaxis.set_major_locator(MultipleLocator(0.5))
        for panel, twin in TWIN_PANELS.items():
            if panel in self.panels:
                self.panels[twin] = self.panels[panel].twinx()
        for name in self.LOG_PANELS:
            if name in self.panels:
                self.panels[name].set_yscale("log")
                self.panels[name].yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
                self.panels[name].yaxis.set_minor_formatter(ShortRangeLogLabels())
        self.histogram = None
        if "histogram" in self.panels:
            self.histogram = self.panels["histogram"].stairs([0.0], [-1.0, 1.0], fill=True, alpha=0.7, animated=True)
            self.panels["histogram"].axvline(0, color="0.3", lw=1)
            self.panels["histogram"].title.set_animated(True)  # "Advantages at step k" changes every frame
        self._lines: dict[int, dict[str, Line2D]] = {}
        self._bands: list = []
        self._legend = None
        self._frame = None  # what the background shows: x axis, runs, which one is live
        self._limits: dict[str, tuple[float, float]] = {}
        self._background = None  # pixels of everything but the live run, valid while _frame and _limits hold
        self._animated: list = self._histogram_artists()  # drawn on top, every frame
        self.x_key = "step"
        self._style()

    def _histogram_artists(self) -> list:
        return [self.histogram, self.panels["histogram"].title] if self.histogram is not None else []

    def _style(self) -> None:
        size = LIVE_FONT_SIZES
        titles = {
            "reward": "Reward, accuracy (dots)",
            "variance": "Grad var, SNR (dashed)",
            "zero_std": "Zero-std, max |adv| (dashed)",
            "histogram": "Advantages, latest step",
        }
        y_labels = {
            "reward": "fraction",
            "variance": "grad_var (log)",
            "snr": "grad_snr",
            "zero_std": "zero-std fraction",
            "adv_max": "max |adv| (log)",
            "histogram": "responses",
        }
        for name, axis in self.panels.items():
            if name in titles:
                axis.set_title(titles[name], fontsize=size["title"])
                axis.set_xlabel(X_LABELS[self.x_key] if name != "histogram" else "advantage", fontsize=size["label"])
                axis.grid(alpha=0.3)
            axis.set_ylabel(y_labels[name], fontsize=size["label"])
            axis.tick_params(which="both", labelsize=size["tick"])

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
        frame = (x_key, x_max, tuple((run.key, run.label, run.color, run.marker, run.tag, run.faded, run.live) for run in runs))
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
        self._animated = self._histogram_artists()
        extents: dict[str, list[float]] = {}
        for run in runs:
            self._draw_run(run, x_key, extents)
        if self.histogram is not None:
            counts, edges = self._histogram_counts(advantages)
            extents["histogram"] = [float(edges[0]), float(edges[-1])]
            extents["histogram_counts"] = [0.0, float(counts.max()) if len(counts) else 1.0]
        self._grow_limits(extents, x_max)
        if self.histogram is not None:
            self.histogram.set_data(counts, edges)
            if histogram_color is not None:
                self.histogram.set_color(histogram_color)
            self.panels["histogram"].set_title(advantages_title or "Advantages, latest step", fontsize=LIVE_FONT_SIZES["title"])

    def _draw_run(self, run: RunCurves, x_key: str, extents: dict[str, list[float]]) -> None:
        lines = self._lines.setdefault(run.key, {})
        alpha = FADED_ALPHA if run.faded else 1.0
        for metric, (panel, style, dense) in self.METRICS.items():
            if panel not in self.panels:
                continue
            axis = self.panels[panel]
            x, mean, low, high = seed_band(run.histories, metric, x_key, positive=panel in self.LOG_PANELS)
            if metric not in lines:
                markevery = (MARKER_STAGGER * (run.key % 4), MARKER_SPACING) if dense else None  # 4 staggers fill one spacing
                (lines[metric],) = axis.plot([], [], label=f"{run.label}: {metric}", marker=run.marker, markevery=markevery, **style)
            line = lines[metric]
            line.set_data(x, mean)
            if metric == "eval_accuracy":
                self._draw_end_label(run, lines, x, mean, alpha)
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

    def _draw_end_label(self, run: RunCurves, lines: dict, x, mean, alpha: float) -> None:
        """The run's tag ("run 3") at the last point of its accuracy curve, in its colour."""
        if "end_label" not in lines:
            lines["end_label"] = self.panels["reward"].text(0, 0, "", fontsize=LIVE_FONT_SIZES["tick"], va="center", ha="left")
        label = lines["end_label"]
        visible = bool(run.tag) and len(x) > 0
        label.set(visible=visible, color=run.color, alpha=alpha, animated=run.live, zorder=4)
        if visible:
            label.set_text(" " + run.tag)
            label.set_position((x[-1], mean[-1]))
        if run.live:
            self._animated.append(label)

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
            low_decade, high_decade = math.floor(math.log10(min(positive)) + 1e-9), math.ceil(math.log10(max(positive)) - 1e-9)
            return 10.0**low_decade, 10.0 ** max(high_decade, low_decade + 1)  # one decade at least: a constant, 1.0, is on it
        if panel in ("reward", "zero_std"):  # fractions: an offset reward (5.3) runs off the top, accuracy keeps the panel
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
            if panel.removesuffix("_counts") not in self.panels:
                continue
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
                if panel in self.panels:
                    self.panels[panel].set_xlim(0, x_max * 1.02)

    def _draw_legend(self, runs: list[RunCurves]) -> None:
        if self._legend is not None:
            self._legend.remove()
            self._legend = None
        if not runs:
            return
        handles = [Line2D([], [], color=run.color, marker=run.marker, ms=9, lw=3, alpha=FADED_ALPHA + 0.2 if run.faded else 1.0) for run in runs]
        # wrapped to the picture's width, or the spare slot's (about 0.55 em a character, the marker's room left out)
        width = self.css_width_px * (0.45 if self.legend_slot is not None else 1.0)
        characters = int(width / (0.55 * LIVE_FONT_SIZES["legend"] * CSS_DPI / 72)) - 5
        labels = [textwrap.fill(f"{run.tag}: {run.label}" if run.tag else run.label, characters, subsequent_indent="  ") for run in runs]
        if self.legend_slot is not None:
            self._legend = self.legend_slot.legend(handles, labels, loc="upper left", fontsize=LIVE_FONT_SIZES["legend"], frameon=False)
            return
        # right under the bottom panels' axis labels; png() crops the picture below it
        below_labels = self.figure.subplotpars.bottom - 3.0 * LIVE_FONT_SIZES["label"] / 72 * self.dpi / self.height_px
        self._legend = self.figure.legend(
            handles,
            labels,
            loc="upper center",
            bbox_to_anchor=(0.5, below_labels),
            ncol=1,
            fontsize=LIVE_FONT_SIZES["legend"],
            # the two-panel views leave the title out: their height is a projector screen's
            title="runs (earlier ones faded, newest last)" if len(runs) > 1 and len(self.panel_names) == 4 else None,
            title_fontsize=LIVE_FONT_SIZES["legend"],
            frameon=False,
            columnspacing=1.5,
        )

    def png(self) -> bytes:
        """The figure as PNG bytes: a full draw when the background is stale, else the background
        plus the animated artists (the live run, the histogram and its title)."""
        if self._background is None:
            self.canvas.draw()  # animated artists are left out of this
            self._background = self.canvas.copy_from_bbox(self.figure.bbox)
            if self.legend_slot is not None:  # the legend is in the spare slot: nothing under the panels to crop
                self._crop_height = self.height_px
            elif self._legend is not None:  # room for the legend and no empty band under it
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
