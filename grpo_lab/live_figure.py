"""The run figure: four panels of one or more runs, redrawn while a run trains in the lab.

One persistent Figure, rendered to PNG bytes that the lab puts into an ipywidgets.Image (this
updates in JupyterLab and Voila alike while a run is going). Redrawing a whole 2x2 figure takes
a few tenths of a second of Python that would hold the GIL against training, so it is drawn in
full only when the picture's frame changes (a run starts or ends, an axis has to grow); every
other frame pastes that background and draws just the live run's lines on it (blitting).
``plots.run_figure`` draws a static frame of it (the notebooks' runs, the CLI's ``train --plot``).

Made for comparing runs: each run has a colour, a marker and a line style of its own (earlier runs
are drawn a little thinner, never faded); its tag ("run 3") sits right of the accuracy panel, level
with its curve's end, the tags spread apart so that they never overlap; a reward with an offset or a
scale is drawn as ``(reward - offset) / scale``, so it never squashes accuracy's 0-1 axis; the
histogram overlays the advantages of the runs being compared, as shares of their responses.
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
from matplotlib.patches import Patch
from matplotlib.ticker import Formatter, FuncFormatter, MultipleLocator

LIVE_FONT_SIZES = {"title": 17, "label": 16, "tick": 16, "legend": 16}  # points: at display size when the PNG is shown at css_width_px
# points between a panel's title and its frame: clear of half a tick label, which a right-hand axis can draw at the very top
TITLE_PAD = 0.5 * LIVE_FONT_SIZES["tick"] + 5
CSS_DPI = 96  # a browser's pixels per inch at 100%: a figure drawn at dpi D is shown at D / CSS_DPI device pixels per CSS pixel
# the x axis of each x_key a history has; responses sampled on a log scale (linear below 100, where
# 0 is), so that a G = 2 run, which samples an eighth of G = 16's responses, is not squeezed into a sliver
X_LABELS = {"step": "training step", "samples": "responses sampled (log)"}
ALL_PANELS = ("reward", "variance", "zero_std", "histogram")
HISTORY_PANELS = ALL_PANELS[:3]  # what a finished history can draw: the histogram needs a step's raw batch
TWIN_PANELS = {"variance": "snr", "zero_std": "adv_max"}  # the right-hand axis that shares each panel
EARLIER_WIDTH = 0.75  # earlier runs are drawn this much thinner than the newest, in full colour, under it
TRAIN_REWARD_ALPHA = 0.45  # the thin, noisy train-reward lines stay behind the accuracy curves
HISTOGRAM_BINS = 41
END_LABEL_GAP = 1.2  # the least distance between the centres of two run tags, in font sizes: a line of text is about 1.17
MAX_LEGEND_COLUMNS = 4
# room under the four panels for their axis labels and up to about nine rows of legend (the picture is
# cropped under the legend): the panels keep their size however long the legend
UNDER_PANELS_PX = 324
MIN_LOG_DECADES = 2  # a log axis spans at least this many decades: runs of similar size keep the same axis
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
    earlier: bool = False  # an earlier run: drawn a little thinner (EARLIER_WIDTH), under the newest
    live: bool = False
    marker: str = "o"  # with the colour and the line style, tells this run apart without colour vision (plots.run_look)
    line_style: str | tuple = "-"  # a matplotlib line style: a name or (offset, dash pattern)
    tag: str = ""  # a short name written level with the end of its accuracy curve ("run 3"), also in the legend
    reward_offset: float = 0.0  # the reward line is drawn as (reward - reward_offset) / reward_scale: on accuracy's scale
    reward_scale: float = 1.0
    histogram: bool = False  # drawn in the histogram panel (the runs being compared)
    advantages: object = None  # its latest step's advantages, any shape (None before its first step)


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


def spread_apart(targets: list[float], gap: float, low: float, high: float) -> list[float]:
    """Positions as near ``targets`` as can be with at least ``gap`` between any two, within [low, high]
    when they fit there (else centred on it): where to write labels that must not overlap. Labels that
    would touch form a cluster, laid out ``gap`` apart around its targets' mean. Returns one position
    per target, in the targets' order."""
    order = sorted(range(len(targets)), key=lambda index: targets[index])
    room = high - low

    def start_of(members: list[int]) -> float:
        span = (len(members) - 1) * gap
        first = sum(targets[index] for index in members) / len(members) - span / 2
        return min(max(first, low), high - span) if span <= room else (low + high - span) / 2

    clusters: list[list[int]] = []  # indices of targets, in order
    starts: list[float] = []
    for index in order:
        clusters.append([index])
        starts.append(start_of([index]))
        while len(clusters) > 1 and starts[-2] + len(clusters[-2]) * gap > starts[-1] + 1e-9:
            merged = clusters[-2] + clusters.pop()
            starts.pop()
            clusters[-1], starts[-1] = merged, start_of(merged)
    positions = [0.0] * len(targets)
    for members, start in zip(clusters, starts):
        for place, index in enumerate(members):
            positions[index] = start + place * gap
    return positions


def nearest_free(target: float, taken: list[float], gap: float, low: float, high: float) -> float:
    """The position nearest ``target`` at least ``gap`` from every one ``taken``, within [low, high] if
    one is free there: a live run's tag, placed among the fixed tags of the finished runs."""
    candidates = [target] + [position + side * gap for position in taken for side in (-1, 1)]
    free = [c for c in candidates if all(abs(c - position) >= gap - 1e-9 for position in taken)]
    inside = [c for c in free if low <= c <= high]
    return min(inside or free, key=lambda c: abs(c - target))


class ShortRangeLogLabels(Formatter):
    """Minor-tick labels of a log axis: the 2s and 5s as plain numbers when the axis spans under
    ~1.5 decades (where there is often no power of ten to label), nothing otherwise."""

    def __call__(self, value, pos=None) -> str:
        low, high = sorted(self.axis.get_view_interval())
        if low <= 0 or high / low > 30:
            return ""
        leading = round(value / 10 ** math.floor(math.log10(value) + 1e-9))
        return f"{value:g}" if leading in (2, 5) else ""


def plain_tick(value: float, _position: object = None) -> str:
    """A tick label without an offset or scientific notation: '0.5', '1e+03' only where %g needs it."""
    return f"{value:g}"


PLAIN_NUMBERS = FuncFormatter(plain_tick)  # a named function, not a lambda: a figure that uses it can be pickled


class LiveRunFigure:
    """The run figure's four panels: (1) train reward (thin, minus its offset, divided by its scale) and
    held-out accuracy (thick, a marker at every evaluation) against step or samples; (2) gradient
    variance (thick, log, left) and SNR (thin, right); (3) the fraction of zero-std groups (thick,
    left) and the largest |advantage| (thin, log, right): the explosion detector; (4) the histogram of
    the compared runs' latest advantages, as shares of their responses (the newest filled, the other
    outlined). Every line of a run carries its marker (on dense lines, every MARKER_SPACING) and its
    line style, so that runs differ in more than colour.

    ``update`` moves the lines of runs it has seen before (by ``RunCurves.key``) instead of
    redrawing, adds new runs and drops runs no longer given; ``png`` renders the figure. Axis
    limits only grow while a run trains (starting from the previous picture's), and fit the runs
    again when none does, so most frames are blitted.
    """

    # metric -> (panel, line style, dense: recorded every step, so marked every MARKER_SPACING, not at
    # every point); the snr and adv_max panels are the right-hand twins: thin, where the left's are thick
    METRICS = {
        "reward": ("reward", {"lw": 1.3, "ms": 4}, True),
        "eval_accuracy": ("reward", {"lw": 2.6, "ms": 6}, False),
        "grad_var": ("variance", {"lw": 2.4, "ms": 5}, False),
        "grad_snr": ("snr", {"lw": 1.2, "ms": 4}, False),
        "frac_reward_zero_std": ("zero_std", {"lw": 2.4, "ms": 5}, True),
        "adv_abs_max": ("adv_max", {"lw": 1.2, "ms": 4}, True),
    }
    LOG_PANELS = ("variance", "adv_max")

    def __init__(self, width_px: int = 900, height_px: int = 824, dpi: int = CSS_DPI, panels: tuple[str, ...] = ALL_PANELS):
        """width_px, height_px: the PNG's size; dpi: its pixels per inch (fonts are in points, so
        they are LIVE_FONT_SIZES at display size when it is shown ``css_width_px`` wide); panels: all
        four (a 2 x 2 grid), three (the legend in the fourth slot: HISTORY_PANELS, a static frame) or
        two of ALL_PANELS stacked (the lab's projector views)."""
        if len(panels) not in (2, 3, 4) or not set(panels) <= set(ALL_PANELS):
            raise ValueError(f"panels={panels!r} is not valid: all four of {ALL_PANELS}, or three or two of them")
        self.dpi, self.width_px, self.height_px, self.panel_names = dpi, width_px, height_px, tuple(panels)
        self.css_width_px = round(width_px * CSS_DPI / dpi)
        self.figure = Figure(figsize=(width_px / dpi, height_px / dpi), dpi=dpi)
        self.canvas = FigureCanvasAgg(self.figure)
        self._crop_height = height_px  # rows of the PNG down to the legend's bottom edge (set at every full draw)
        self.legend_slot = None  # the spare fourth slot of three panels, which holds the legend
        # fixed margins instead of a layout engine: the layout would be recomputed on every frame
        if len(panels) > 2:  # four: the legend goes under the panels; three: into the fourth slot
            bottom = UNDER_PANELS_PX / height_px if len(panels) == 4 else 0.1
            # four: the top row's x axis is named under the bottom row's only, but its panels are shorter (the legend is under them)
            hspace = 0.5 if len(panels) == 4 else 0.45
            self.figure.subplots_adjust(left=0.1, right=0.9, bottom=bottom, top=1 - 40 / height_px, wspace=0.75, hspace=hspace)
            grid = self.figure.subplots(2, 2).ravel()
            if len(panels) == 3:
                self.legend_slot = grid[3]
                self.legend_slot.axis("off")
        else:  # stacked, wide margins: 16-point ticks and labels on both sides of a narrow picture
            self.figure.subplots_adjust(left=0.2, right=0.8, bottom=0.4, top=0.94, hspace=0.85)
            grid = self.figure.subplots(2, 1)
        self.panels = dict(zip(panels, grid))
        if len(panels) == 2:  # short panels: the fraction axes ticked every half, not only at 0 and 1
            for name in {"reward", "zero_std"} & set(panels):
                self.panels[name].yaxis.set_major_locator(MultipleLocator(0.5))
        for panel, twin in TWIN_PANELS.items():
            if panel in self.panels:
                self.panels[twin] = self.panels[panel].twinx()
        if "snr" in self.panels:  # until there is data: 0 to 1, not matplotlib's -0.05 to 0.05, whose ticks push its label off the picture
            self.panels["snr"].set_ylim(0, 1)
        for name in self.LOG_PANELS:
            if name in self.panels:
                self.panels[name].set_yscale("log")
                self.panels[name].yaxis.set_major_formatter(PLAIN_NUMBERS)
                self.panels[name].yaxis.set_minor_formatter(ShortRangeLogLabels())
        if "histogram" in self.panels:
            self.panels["histogram"].axvline(0, color="0.3", lw=1)
        self._lines: dict[int, dict] = {}  # run key -> its artists: one line per metric, its tag, its histogram
        self._bands: list = []
        self._legend = None
        self._histogram_legend = None
        self._frame = None  # what the background shows: x axis, runs, which one is live
        self._limits: dict[str, tuple[float, float]] = {}
        self._background = None  # pixels of everything but the live run, valid while _frame and _limits hold
        self._animated: list = []  # drawn on top, every frame: the live run's artists and the histograms
        self.x_key = "step"
        self._style()

    def _style(self) -> None:
        size = LIVE_FONT_SIZES
        titles = {
            "reward": "Reward (thin), accuracy",
            "variance": "Grad var, SNR (thin)",
            "zero_std": "Zero-std, max |adv| (thin)",
            "histogram": "Advantages, latest step",
        }
        y_labels = {
            "reward": "accuracy, reward",
            "variance": "grad_var (log)",
            "snr": "grad_snr",
            "zero_std": "zero-std fraction",
            "adv_max": "max |adv| (log)",
            "histogram": "share of responses",
        }
        for name, axis in self.panels.items():
            if name in titles:
                axis.set_title(titles[name], fontsize=size["title"], pad=TITLE_PAD)
                top_row = len(self.panel_names) > 2 and name in self.panel_names[:2]  # the grid: named under the bottom row
                axis.set_xlabel("" if top_row else X_LABELS[self.x_key] if name != "histogram" else "advantage", fontsize=size["label"])
                axis.grid(alpha=0.3)
                if name != "histogram":  # responses sampled: log above 100, linear below (0 is on it)
                    if self.x_key == "samples":
                        axis.set_xscale("symlog", linthresh=100.0, linscale=0.5)
                        axis.xaxis.set_major_formatter(PLAIN_NUMBERS)
                    else:
                        axis.set_xscale("linear")
            axis.set_ylabel(y_labels[name], fontsize=size["label"])
            axis.tick_params(which="both", labelsize=size["tick"])

    def update(self, runs: list[RunCurves], x_key: str = "step", x_max: float | None = None, legend_title: str = "") -> None:
        """Show ``runs`` (oldest first). x_max: the right end of the x axis (the planned length of the
        longest run); legend_title: a line over the legend (what the runs share, say), or none."""
        shifted = any(run.reward_offset != 0 or run.reward_scale != 1 for run in runs)
        frame = (
            x_key,
            x_max,
            legend_title,
            tuple((run.key, run.label, run.color, run.marker, run.line_style, run.tag, run.earlier, run.live, run.histogram) for run in runs),
        )
        if frame != self._frame:  # a new picture: everything is redrawn
            self._frame, self._background = frame, None
            if not any(run.live for run in runs):
                self._limits = {}  # at rest the limits fit the runs shown, and may shrink
            # while a run trains they start from the last picture's and only grow: its first points
            # rarely move an axis, and every moved axis is a full redraw that holds the GIL against training
            if x_key != self.x_key:
                self.x_key = x_key
                self._style()
            if "reward" in self.panels:  # a truthful title: what the thin line is
                title = "Reward − offset, accuracy" if shifted else "Reward (thin), accuracy"
                self.panels["reward"].set_title(title, fontsize=LIVE_FONT_SIZES["title"], pad=TITLE_PAD)
            for key in set(self._lines) - {run.key for run in runs}:
                for artist in self._lines.pop(key).values():
                    artist.remove()
            self._draw_legend(runs, legend_title, shifted)
        for band in self._bands:
            band.remove()
        self._bands = []
        self._animated = []
        extents: dict[str, list[float]] = {}
        ends: dict[int, tuple[float, float]] = {}  # run key -> the last point of its accuracy curve
        for run in runs:
            self._draw_run(run, x_key, extents, ends)
        shares = self._histogram_shares([run for run in runs if run.histogram], extents)
        self._grow_limits(extents, x_max)
        for key, (counts, edges) in shares.items():
            self._lines[key]["histogram"].set_data(counts, edges)
        self._place_tags(runs, ends)

    def _draw_run(self, run: RunCurves, x_key: str, extents: dict[str, list[float]], ends: dict[int, tuple[float, float]]) -> None:
        lines = self._lines.setdefault(run.key, {})
        width = EARLIER_WIDTH if run.earlier else 1.0
        for metric, (panel, style, dense) in self.METRICS.items():
            if panel not in self.panels:
                continue
            axis = self.panels[panel]
            x, mean, low, high = seed_band(run.histories, metric, x_key, positive=panel in self.LOG_PANELS)
            if metric == "reward":  # on accuracy's scale: an offset or scaled reward must not squash it
                mean, low, high = ((values - run.reward_offset) / run.reward_scale for values in (mean, low, high))
            if metric not in lines:
                markevery = (MARKER_STAGGER * (run.key % 4), MARKER_SPACING) if dense else None  # 4 staggers fill one spacing
                (lines[metric],) = axis.plot([], [], label=f"{run.label}: {metric}", marker=run.marker, markevery=markevery, **style)
            line = lines[metric]
            line.set_data(x, mean)
            if metric == "eval_accuracy" and len(x):
                ends[run.key] = (float(x[-1]), float(mean[-1]))
            line.set(
                color=run.color,
                linestyle=run.line_style,
                alpha=TRAIN_REWARD_ALPHA if metric == "reward" else 1.0,
                animated=run.live,
                linewidth=style["lw"] * width,
                markersize=style["ms"] * width**0.5,
                zorder=2 if run.earlier else 3,
            )
            if len(x):
                extents.setdefault(panel, []).extend([float(low.min()), float(high.max())])
            if len(run.histories) > 1 and len(x):
                band = axis.fill_between(x, low, high, color=run.color, alpha=0.15, lw=0, animated=run.live)
                self._bands.append(band)
                if run.live:
                    self._animated.append(band)
            if run.live:
                self._animated.append(line)
        if "reward" in self.panels and "tag" not in lines:
            lines["tag"] = self.panels["reward"].annotate(
                "",
                (0, 0),
                xytext=(0, 0),
                textcoords="axes pixels",
                fontsize=LIVE_FONT_SIZES["tick"],
                va="center",
                ha="left",
                annotation_clip=False,
                arrowprops={"arrowstyle": "-", "linestyle": ":", "lw": 1.2, "shrinkA": 1, "shrinkB": 3},
            )
        if "histogram" in lines and not run.histogram:  # no longer compared
            lines.pop("histogram").remove()
        if "histogram" in self.panels and run.histogram and "histogram" not in lines:
            lines["histogram"] = self.panels["histogram"].stairs([0.0], [-1.0, 1.0])
        if "histogram" in lines:
            # the newest run filled, the one it is compared with outlined on top: both stay readable
            lines["histogram"].set(
                fill=not run.earlier, color=run.color, alpha=0.55 if not run.earlier else 1.0, lw=2.5, zorder=3 if run.earlier else 2, animated=True
            )
            self._animated.append(lines["histogram"])

    def _histogram_shares(self, runs: list[RunCurves], extents: dict[str, list[float]]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """Each run's share of responses in fixed bins spanning the histogram's current range (grown
        to fit every run's advantages): run key -> (shares, edges)."""
        if "histogram" not in self.panels or not runs:
            return {}
        values = {run.key: np.asarray(run.advantages if run.advantages is not None else [], dtype=float).ravel() for run in runs}
        values = {key: value[np.isfinite(value)] for key, value in values.items()}
        largest = max((float(np.abs(value).max()) for value in values.values() if len(value)), default=0.0)
        reach = nice_ceiling(max(largest, 0.5) * 1.05)
        low, high = self._limits.get("histogram", (-reach, reach))
        reach = max(reach, -low, high)
        edges = np.linspace(-reach, reach, HISTOGRAM_BINS + 1)
        shares = {key: np.histogram(value, bins=edges)[0] / max(len(value), 1) for key, value in values.items()}
        extents["histogram"] = [float(edges[0]), float(edges[-1])]
        extents["histogram_counts"] = [0.0, max((float(share.max()) for share in shares.values()), default=0.0)]
        return {key: (share, edges) for key, share in shares.items()}

    def _place_tags(self, runs: list[RunCurves], ends: dict[int, tuple[float, float]]) -> None:
        """Write each run's tag just right of the accuracy panel, level with its curve's last point (a
        dotted leader joins them), spread apart so that no two overlap. The finished runs' tags are
        placed together; a live run's takes the free place nearest its point, so the others stay put
        (they are in the blitted background)."""
        if "reward" not in self.panels:
            return
        axis = self.panels["reward"]
        box = axis.get_window_extent()
        gap = END_LABEL_GAP * LIVE_FONT_SIZES["tick"] / 72 * self.dpi
        tagged = [run for run in runs if run.tag and run.key in ends]
        for run in runs:
            self._lines[run.key]["tag"].set_visible(run in tagged)
        heights = {run.key: float(axis.transData.transform(ends[run.key])[1]) - box.y0 for run in tagged}
        fixed = [run for run in tagged if not run.live]
        low, high = gap / 2, box.height - gap / 2  # level with the panel: never up into its title
        places = dict(zip((run.key for run in fixed), spread_apart([heights[run.key] for run in fixed], gap, low, high)))
        for run in tagged:
            if run.live:
                places[run.key] = nearest_free(heights[run.key], list(places.values()), gap, low, high)
            tag = self._lines[run.key]["tag"]
            tag.set_text(run.tag)
            tag.xy, tag.xyann = ends[run.key], (box.width + 0.4 * gap, places[run.key])
            tag.set(color=run.color, animated=run.live, zorder=4)
            tag.arrow_patch.set_color(run.color)
            tag.arrow_patch.set_animated(run.live)
            if run.live:
                self._animated.append(tag)

    def _target_limits(self, panel: str, values: list[float]) -> tuple[float, float] | None:
        if not values:
            return None
        low, high = min(values), max(values)
        if panel in self.LOG_PANELS:  # whole decades, MIN_LOG_DECADES at least: axes that rarely move
            positive = [v for v in values if v > 0]
            if not positive:
                return None
            low_decade, high_decade = math.floor(math.log10(min(positive)) + 1e-9), math.ceil(math.log10(max(positive)) - 1e-9)
            missing = MIN_LOG_DECADES - (high_decade - low_decade)
            if missing > 0:  # widened about the data, the odd decade below it
                low_decade, high_decade = low_decade - (missing + 1) // 2, high_decade + missing // 2
            return 10.0**low_decade, 10.0**high_decade
        if panel in ("reward", "zero_std"):  # fractions (the reward drawn on accuracy's scale, noise aside)
            return -0.02, 1.02
        if panel == "histogram":
            return low, high
        if panel == "histogram_counts":  # shares of responses
            return 0.0, min(nice_ceiling(max(high, 0.01) * 1.1), 1.0)
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

    def _draw_legend(self, runs: list[RunCurves], title: str, shifted: bool) -> None:
        for legend in (self._legend, self._histogram_legend):
            if legend is not None:
                legend.remove()
        self._legend = self._histogram_legend = None
        if not runs:
            return
        compared = [run for run in runs if run.histogram]
        if "histogram" in self.panels and len(compared) > 1:  # which histogram is which
            self._histogram_legend = self.panels["histogram"].legend(
                [Patch(facecolor=run.color, alpha=0.55) if not run.earlier else Patch(fill=False, edgecolor=run.color, lw=2.5) for run in compared],
                [run.tag or run.label for run in compared],
                loc="upper left",
                fontsize=LIVE_FONT_SIZES["legend"],
                handlelength=1.2,
                borderaxespad=0.2,
                framealpha=0.8,
            )
        # wrapped to the picture's width, or the spare slot's (about 0.55 em a character)
        width = self.css_width_px * (0.45 if self.legend_slot is not None else 1.0)
        characters = int(width / (0.55 * LIVE_FONT_SIZES["legend"] * CSS_DPI / 72))
        if shifted:  # say how the reward line is drawn
            title = (title + "\n" if title else "") + "thin reward lines: (reward − offset) / scale"
        title = "\n".join(textwrap.fill(line, characters) for line in title.splitlines())
        handles = [Line2D([], [], color=run.color, marker=run.marker, ls=run.line_style, ms=9, lw=3) for run in runs]
        labels = [f"{run.tag}: {run.label}" if run.tag and run.label else run.tag or run.label for run in runs]
        if self.legend_slot is not None:
            labels = [textwrap.fill(label, characters - 5, subsequent_indent="  ") for label in labels]
            self._legend = self.legend_slot.legend(handles, labels, loc="upper left", fontsize=LIVE_FONT_SIZES["legend"], frameon=False)
            return
        # right under the bottom panels' axis labels (png() crops the picture below it), in as many
        # columns as fit the picture's width: a short legend keeps the picture on one screen
        below_labels = self.figure.subplotpars.bottom - 2.7 * LIVE_FONT_SIZES["label"] / 72 * self.dpi / self.height_px
        for columns in range(min(len(runs), MAX_LEGEND_COLUMNS), 0, -1):
            self._legend = self.figure.legend(
                handles,
                labels if columns > 1 else [textwrap.fill(label, characters - 5, subsequent_indent="  ") for label in labels],
                loc="upper center",
                bbox_to_anchor=(0.5, below_labels),
                ncol=columns,
                fontsize=LIVE_FONT_SIZES["legend"],
                title=title or None,
                title_fontsize=LIVE_FONT_SIZES["legend"],
                frameon=False,
                columnspacing=1.0,
                handlelength=2.0,
                labelspacing=0.3,
            )
            if columns == 1 or self._legend.get_window_extent(self.canvas.get_renderer()).width <= 0.98 * self.width_px:
                break
            self._legend.remove()

    def png(self) -> bytes:
        """The figure as PNG bytes: a full draw when the background is stale, else the background
        plus the animated artists (the live run, the histograms)."""
        if self._background is None:
            self.canvas.draw()  # animated artists are left out of this
            self._background = self.canvas.copy_from_bbox(self.figure.bbox)
            if self.legend_slot is not None:  # the legend is in the spare slot: nothing under the panels to crop
                self._crop_height = self.height_px
            elif self._legend is not None:  # room for the legend and no empty band under it
                legend_bottom = self._legend.get_window_extent(self.canvas.get_renderer()).y0
                self._crop_height = min(self.height_px, int(self.height_px - legend_bottom) + 2)
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
