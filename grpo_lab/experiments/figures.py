"""One figure per experiment, drawn from its result dict alone (a cached file or a fresh run).

Every panel shows the mean over seeds with a band or error bars of one standard deviation
(draw_seed_band, draw_error_points), and says its units on its axes. What tests/test_figures.py checks of
every figure: no legend or label over data, no fraction or accuracy axis holding other values, bars from 0
(or "difference" in the y label), and at most four learners a panel, or more grouped by colour (learner_look).
"""

from __future__ import annotations

import math
import statistics
import textwrap
from collections.abc import Iterable
from pathlib import Path

import matplotlib
import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from ..errors import ConfigError
from ..plots import FIGURE_WIDTH, LINE_STYLES, READABLE, RUN_COLORS, RUN_MARKERS, save_figure
from .catalog import BASELINES, TARGET_ACCURACY, cell_label

ACCURACY_LABEL = "held-out accuracy\n(fraction correct)"  # two lines: one is taller than a panel, and two rows of panels would read as one label
# one colour family per kind of baseline in every figure (plots.RUN_COLORS, chosen to stay apart under protanopia and
# deuteranopia): GRPO's group baselines blue, PPO's learned critic vermillion, the critic-free moving average (EMA)
# purple, Monte-Carlo values rose, no baseline black
BASELINE_FAMILY = {"zscore": 0, "mean": 0, "rloo": 0, "critic": 1, "ema": 2, "mc_value": 3, "none": 4}
# where group baselines are compared with each other (variance, offset-and-scale, difficulty-bias), the group mean and
# RLOO (G/(G-1) x mean) take wine, apart from z-score's blue; each baseline a line style too, so that lines that
# coincide (mean and rloo, mean and zscore in the offset curves) stay visible, in grey too
BASELINE_COLORS = {"none": RUN_COLORS[4], "mean": RUN_COLORS[5], "rloo": RUN_COLORS[5], "zscore": RUN_COLORS[0], "ema": RUN_COLORS[2]}
BASELINE_LINES = {"none": "-", "mean": "--", "rloo": "-.", "zscore": ":", "ema": (0, (5, 1, 1, 1))}


def learner_look(index: int, family: int, member: int = 0) -> dict:
    """Line options of the ``index``-th learner of a figure that draws many: the colour of its ``family``
    (plots.RUN_COLORS, chosen to stay apart under protanopia and deuteranopia), the line style of its place ``member`` in
    that family, and a marker of its own (sparse, every tenth of the panel). A panel of more than four
    learners shows at most four families, so that its lines group by colour and stay apart in grey."""
    return {
        "color": RUN_COLORS[family % len(RUN_COLORS)],
        "ls": LINE_STYLES[member % len(LINE_STYLES)],
        "marker": RUN_MARKERS[index % len(RUN_MARKERS)],
        "markevery": 0.1,
        "ms": 4,
    }


def baseline_look(baseline: str) -> dict:
    """Matplotlib line options (colour and line style) of one baseline."""
    return {"color": BASELINE_COLORS[baseline], "ls": BASELINE_LINES[baseline]}


SPREAD_NOTE = "lines: mean over seeds; bands and bars: +- 1 std over seeds"


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


def cells_where(result: dict, **axes: object) -> list[dict]:
    """The result's cells whose axes match every given value, in grid order."""
    return [cell for cell in result["cells"] if all(cell["axes"].get(key) == value for key, value in axes.items())]


def summary_value(cell: dict, metric: str, field: str = "mean") -> float | None:
    """One field ("mean", "std" or "n") of one metric's summary over seeds in a cell (None when absent)."""
    return cell["summary"].get(metric, {}).get(field)


def metric_points(cells: list[dict], x_axis: str, metric: str) -> tuple[list, list, list]:
    """(x, seed means, seed stds) of one metric over cells, x read from each cell's axes."""
    return [c["axes"][x_axis] for c in cells], [summary_value(c, metric) for c in cells], [summary_value(c, metric, "std") for c in cells]


def eval_curves(cell: dict, x_key: str = "eval_step", skip_zero: bool = False) -> tuple[list, list[list]]:
    """The evaluation curve of every seed on a common x (the longest seed's; a seed that stopped
    early has None after its end). x_key: eval_step or eval_samples; skip_zero drops x = 0 (for
    a log axis)."""
    runs = [entry["series"] for entry in cell["per_seed"]]
    longest = max(runs, key=lambda series: len(series[x_key]))
    x = longest[x_key]
    curves = [series["eval_accuracy"] + [None] * (len(x) - len(series["eval_accuracy"])) for series in runs]
    keep = [i for i, value in enumerate(x) if value > 0 or not skip_zero]
    return [x[i] for i in keep], [[curve[i] for i in keep] for curve in curves]


def curves_on_time_grid(cell: dict, end: float, points: int = 60) -> tuple[np.ndarray, list[np.ndarray]]:
    """Every seed's evaluation curve interpolated onto a common wall-time grid [0, end] (seconds)."""
    grid = np.linspace(0, end, points)
    return grid, [np.interp(grid, s["series"]["eval_wall_time"], s["series"]["eval_accuracy"]) for s in cell["per_seed"]]


def means_and_stds(cells: list[dict], metric: str) -> tuple[list, list]:
    """(seed means, seed stds) of one metric, one per cell."""
    return [summary_value(c, metric) for c in cells], [summary_value(c, metric, "std") for c in cells]


def style(
    axis: Axes,
    title: str,
    xlabel: str,
    ylabel: str,
    log_x: bool = False,
    log_y: bool = False,
    legend: str | None = "best",
    twins: tuple[Axes, ...] = (),
) -> None:
    """Title, axis labels, scales, grid and a legend for the artists of ``axis`` and its ``twins`` (twinx axes).
    legend: a matplotlib location, "above the data" (raise the y limits and put the legend in the room this makes,
    so that it covers no line, bar or error bar, whatever the data), or None."""
    axis.set(title=title, xlabel=xlabel, ylabel=ylabel)
    if log_x:
        axis.set_xscale("log", base=2)
    if log_y:
        axis.set_yscale("log")
    axis.grid(alpha=0.3)
    handles = [h for a in (axis, *twins) for h in a.get_legend_handles_labels()[0]]
    if legend == "above the data":
        labels = [h.get_label() for h in handles]
        columns = 2 if max(map(len, labels)) <= TWO_COLUMN_LABEL_CHARACTERS else 1
        room_above(axis, *twins, fraction=0.08 + 0.09 * math.ceil(len(labels) / columns))
        axis.legend(handles, labels, loc="upper center", ncol=columns)
    elif legend and handles:
        axis.legend(handles, [h.get_label() for h in handles], loc=legend)


def draw_bars(
    axis: Axes, tick_labels: list[str], bars: list[tuple[list, list, dict]], group_width: float = 0.8, first_slot: int = 0, slots: int = 0
) -> None:
    """Side-by-side bars with +- 1 std error bars: one group per tick label, and in each group one bar per
    entry of ``bars`` = [(seed means, seed stds, Axes.bar keyword arguments)]. A group has ``slots`` places
    (default: one per bar) and these bars fill them from ``first_slot`` on (a twin axis fills the others)."""
    slots = slots or len(bars)
    positions, width = np.arange(len(tick_labels)), group_width / slots
    for slot, (means, stds, options) in enumerate(bars, start=first_slot):
        axis.bar(
            positions + (slot - (slots - 1) / 2) * width,
            [np.nan if m is None else m for m in means],
            width,
            yerr=[0.0 if e is None else e for e in stds],
            capsize=3,
            **options,
        )
    axis.set_xticks(positions)
    axis.set_xticklabels(tick_labels)


def room_above(*axes: Axes, fraction: float = 0.3) -> None:
    """Raise the top of each y axis so that the data fill at most the lower (1 - fraction) of the panel,
    leaving the top free for a legend ("upper ..." locations) that must not cover bars or error bars."""
    for axis in axes:
        bottom, top = axis.get_ylim()
        axis.set_ylim(bottom, bottom + (top - bottom) / (1 - fraction))


def figure_legend(figure: Figure, axis: Axes) -> None:
    """One legend under all panels, for the lines of ``axis`` (every panel draws the same ones)."""
    handles, labels = axis.get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 3))


BAR_LABEL_CHARACTERS = 7  # a tick label under one of six bars wraps at this width
TWO_COLUMN_LABEL_CHARACTERS = 16  # a legend above the data takes two columns only if its labels fit a half-width panel twice


PANEL_HEIGHT = 3.4  # inches per row of two panels
TITLE_CHARACTERS = 105  # a title line wraps before it runs past the figure's edges at 11 pt


def new_figure(panels: int, result: dict, title: str, panel_height: float = PANEL_HEIGHT) -> tuple[Figure, np.ndarray]:
    """A constrained-layout figure of ``panels`` panels, two a row (a spare slot is hidden), under a title
    that names the mode, the seeds, the spread shown and the command that made ``result``. Returns the
    figure and its panels as a flat array, row by row."""
    rows = math.ceil(panels / 2)
    title = "\n".join(textwrap.fill(line, TITLE_CHARACTERS) for line in title.split("\n"))
    title_lines = title.count("\n") + 3  # the title, then the seeds line and the command line
    figure = Figure(figsize=(FIGURE_WIDTH, panel_height * rows + 0.2 * title_lines + 0.3), layout="constrained")
    axes = np.atleast_1d(figure.subplots(rows, 2)).ravel()
    for spare in axes[panels:]:
        spare.set_visible(False)
    mode = "fast mode, " if result["fast"] else ""
    figure.suptitle(f"{title}\n{mode}{result['seeds']} seeds; {SPREAD_NOTE}\n`{result['command']}`")
    return figure, axes[:panels]


def group_size_ticks(axis: Axes, sizes: Iterable[int]) -> None:
    axis.set_xticks(list(sizes))
    axis.set_xticklabels([str(s) for s in sizes])


# --- 1 ---------------------------------------------------------------------------------------------------


def variance_figure(result: dict) -> Figure:
    """The four gradient measures at the first policy of the grid (the reference), one panel each. The result
    also holds a half-trained policy, which the course reads in tables only."""
    policy = result["cells"][0]["axes"]["policy"]
    cells = cells_where(result, policy=policy)
    sizes = [c["axes"]["group_size"] for c in cells]
    figure, axes = new_figure(
        4,
        result,
        f"Policy-gradient quality at the {policy} policy, per baseline and group size (one batch = "
        f"{cells[0]['config']['prompts']} prompts x G responses); 'true' = a large-batch RLOO "
        "gradient.\nmean and rloo coincide (rloo = G/(G-1) x mean), and at G=2 zscore does too",
    )
    panels = (
        ("cos_step", "cos(one batch's gradient, true)", "cosine similarity", False),
        # net SNR can be 0 or below (pure noise reads 0 on average), and so can a seed's spread: linear axes
        ("net_snr", "Net SNR of one batch's gradient (pure noise: 0)", "net SNR = |E g|^2 / tr Var g", False),
        ("net_snr_per_1k_responses", "Net SNR per 1000 responses", "net SNR per 1000 responses", False),
        ("cos_expected", "cos(expected gradient, true)", "cosine similarity", False),
    )
    for axis, (metric, title, ylabel, log_y) in zip(axes, panels):
        for baseline in BASELINES:
            draw_error_points(axis, *metric_points(cells, "group_size", f"{metric}.{baseline}"), label=baseline, **baseline_look(baseline))
        style(axis, title, "group size G (responses per prompt)", ylabel, log_x=True, log_y=log_y, legend=None)
        group_size_ticks(axis, sizes)
    figure_legend(figure, axes[0])
    return figure


# --- 2 ---------------------------------------------------------------------------------------------------


def offset_and_scale_figure(result: dict) -> Figure:
    figure, axes = new_figure(3, result, "A global reward offset, and hard prompts' rewards x 0.1: none vs mean vs zscore")
    baselines = ("none", "mean", "zscore")
    for baseline in baselines:
        draw_error_points(
            axes[0],
            *metric_points(cells_where(result, baseline=baseline, hard_reward_scale=1.0), "reward_offset", "late_eval_accuracy"),
            label=baseline,
            **baseline_look(baseline),
        )
    axes[0].axhline(result["cells"][0]["summary"]["initial_eval_accuracy"]["mean"], color="0.5", ls=":", label="before training")
    style(
        axes[0],
        "Accuracy at the end vs the reward offset",
        "reward offset added to every reward (reward units)",
        ACCURACY_LABEL,
        legend="above the data",  # inside, any place covers a line: "before training" runs the whole width
    )
    largest = max(c["axes"]["reward_offset"] for c in result["cells"])
    for baseline in baselines:
        (offset_cell,) = cells_where(result, baseline=baseline, reward_offset=largest, hard_reward_scale=1.0)
        draw_seed_band(axes[1], *eval_curves(offset_cell), label=baseline, **baseline_look(baseline))
    style(axes[1], f"Learning curves with offset {largest:g}", "training step", ACCURACY_LABEL)
    bars = []
    for scale, subset, hatch in ((1.0, "hard", ""), (0.1, "hard", "//"), (1.0, "easy", ""), (0.1, "easy", "//")):
        cells = [cells_where(result, baseline=b, reward_offset=0.0, hard_reward_scale=scale)[0] for b in baselines]
        bars.append(
            (
                *means_and_stds(cells, f"{subset}_eval_accuracy"),
                {
                    "hatch": hatch,
                    "color": "tab:orange" if subset == "hard" else "tab:cyan",
                    "edgecolor": "k",
                    "lw": 0.5,
                    "label": f"{subset} problems, hard rewards x{scale:g}",
                },
            )
        )
    draw_bars(axes[2], list(baselines), bars)
    style(axes[2], "Hard (carry) vs easy problems at the end", "baseline", ACCURACY_LABEL, legend=None)
    # the legend goes in the empty fourth slot: above the bars it would stretch an accuracy axis past 1
    spare = figure.axes[3]
    spare.set_visible(True)
    spare.axis("off")
    spare.legend(*axes[2].get_legend_handles_labels(), loc="center left")
    return figure


# --- 3 ---------------------------------------------------------------------------------------------------


def paired_look(index: int) -> dict:
    """learner_look of the ``index``-th of an ordered series (group sizes): neighbours in pairs, a pair one
    colour, the second of a pair dashed."""
    return learner_look(index, family=index // 2, member=index % 2)


def group_size_figure(result: dict) -> Figure:
    figure, axes = new_figure(6, result, "Group size G at equal prompts per step and at equal samples per step")
    # rows: accuracy late and responses to the target; the learning curves; the two oscillation measures
    regimes = ("equal prompts", "equal samples")
    sizes = sorted({c["axes"]["group_size"] for c in result["cells"]})
    for regime, marker in zip(regimes, ("o", "s")):
        cells = cells_where(result, regime=regime)
        for axis, metric in (
            (axes[0], "late_eval_accuracy"),
            (axes[1], "samples_to_target"),
            (axes[4], "eval_total_drop"),
            (axes[5], "eval_max_drawdown"),
        ):
            draw_error_points(axis, *metric_points(cells, "group_size", metric), label=regime, marker=marker)
    for axis, regime, x_key, xlabel in (
        (axes[2], "equal prompts", "eval_samples", "responses sampled (log)"),
        (axes[3], "equal samples", "eval_step", "training step"),
    ):
        for c in cells_where(result, regime=regime):
            draw_seed_band(
                axis,
                *eval_curves(c, x_key, skip_zero=regime == "equal prompts"),
                label=f"G={c['axes']['group_size']}, P={c['axes']['prompts_per_step']}",
                lw=1.3,
                **paired_look(sizes.index(c["axes"]["group_size"])),
            )
        axis.axhline(TARGET_ACCURACY, color="0.4", ls=":", lw=1)
        style(axis, f"Learning curves, {regime}", xlabel, ACCURACY_LABEL, legend="above the data")
    axes[2].set_xscale("log")
    titles = {
        0: ("Accuracy late in training", ACCURACY_LABEL),
        1: (f"Responses to reach {TARGET_ACCURACY:.0%}\n(no point: no seed did)", "responses sampled (log)"),
        4: ("Oscillation: total fall\nbetween evaluations", "accuracy lost (sum of falls, 0-1)"),
        5: ("Oscillation: largest fall\nfrom the best so far", "accuracy lost (0-1)"),
    }
    for index, (title, ylabel) in titles.items():
        style(axes[index], title, "group size G (log scale)", ylabel, log_x=True, log_y=index == 1)
        group_size_ticks(axes[index], sizes)
    return figure


# --- 4 ---------------------------------------------------------------------------------------------------

ZERO_EPS_AT = 1e-10  # where eps = 0 is drawn on the log axis


def eps_tick(eps: float) -> str:
    """A short std_eps tick label: 0, 1e-8, 1e-6, 0.01, 0.1 (the 1e-02 style crowds the last decades)."""
    if eps == ZERO_EPS_AT:
        return "0"
    return f"{eps:g}" if eps >= 0.01 else f"1e{round(math.log10(eps))}"


def sigma_to_zero_figure(result: dict) -> Figure:
    figure, axes = new_figure(4, result, "When the group std goes to zero: std_eps, add vs clamp, and DAPO's dynamic sampling")
    full = result
    result = {**result, "cells": [c for c in result["cells"] if c["axes"].get("reference", "default") == "default"]}
    rewards = list(dict.fromkeys(c["axes"]["reward"] for c in result["cells"]))
    # a colour and a marker per reward kind (RUN_COLORS, RUN_MARKERS): told apart without telling red from green
    colors, markers = dict(zip(rewards, RUN_COLORS)), dict(zip(rewards, RUN_MARKERS))
    group_size = result["train_defaults"]["group_size"]
    for axis in axes[:1]:
        axis.axhline((group_size - 1) / group_size**0.5, color="0.3", ls=":", lw=1, label=f"bound (G-1)/sqrt(G), G={group_size}")
    panels = (
        ("adv_abs_max", "Largest |advantage| in training", "max |advantage| over steps (advantage units)", False),
        ("probe_no_signal_share", "|advantage| on groups with no right/wrong spread", "share of total |advantage|", False),
        ("late_eval_accuracy", "Late accuracy (x: stopped on 0/0, last evaluation)", ACCURACY_LABEL, False),
    )
    for axis, (metric, title, ylabel, log_y) in zip(axes, panels):
        for reward in rewards:
            for mode, line_style in (("add", "-"), ("clamp", "--")):
                cells = [c for c in cells_where(result, reward=reward, filter=False) if c["axes"]["eps_mode"] == mode or c["axes"]["std_eps"] == 0]
                x = [max(c["axes"]["std_eps"], ZERO_EPS_AT) for c in cells]
                draw_error_points(
                    axis,
                    x,
                    [summary_value(c, metric) for c in cells],
                    [summary_value(c, metric, "std") for c in cells],
                    label=f"{reward}, {mode}",
                    color=colors[reward],
                    marker=markers[reward],
                    ls=line_style,
                )
                failed = [(xx, summary_value(c, "final_eval_accuracy")) for xx, c in zip(x, cells) if (summary_value(c, "failed") or 0) > 0]
                if failed and metric == "late_eval_accuracy":
                    axis.scatter(*zip(*failed), marker="x", s=60, color=colors[reward], zorder=5)
        axis.set_xscale("log")
        ticks = sorted({max(c["axes"]["std_eps"], ZERO_EPS_AT) for c in result["cells"]})
        axis.set_xticks(ticks)
        axis.set_xticklabels([eps_tick(t) for t in ticks])
        style(axis, title, "std_eps (log; solid: std + eps, dashed: max(std, eps))", ylabel, log_y=log_y, legend=None)
    figure_legend(figure, axes[0])
    # the bars: each reward at the default reference, and the weak reference (most groups tied), without
    # the filter, dropping tied groups, and refilling the batch (dynamic sampling) where the result has it
    settings = [(r, {"reward": r}) for r in rewards] + [("weak ref.\nexact", {"reward": "exact", "reference": "weak"})]
    variants = [(False, "eps=1e-4, no filter", None), (True, "drop tied groups (no refill)", "//"), ("refill", "dynamic sampling (refill)", "..")]
    picked = {}
    for variant, _, _ in variants:
        for name, where in settings:
            source = full if "reference" in where else result
            found = [c for c in cells_where(source, filter=variant, eps_mode="add", **where) if c["axes"]["std_eps"] == 1e-4]
            picked[(variant, name)] = found[0] if found else None
    settings = [(name, where) for name, where in settings if all(picked[(v, name)] for v, _, _ in variants[:2])]
    variants = [v for v in variants if all(picked[(v[0], name)] for name, _ in settings)]
    bar_colors = [colors.get(where["reward"], "tab:gray") if "reference" not in where else "0.5" for _, where in settings]
    bar_style = {"color": bar_colors, "edgecolor": "k", "lw": 0.5, "alpha": 0.8}
    draw_bars(
        axes[3],
        [f"{name}\n{summary_value(picked[(False, name)], 'frac_reward_zero_std'):.0%} tied" for name, _ in settings],
        [
            (
                *means_and_stds([picked[(variant, name)] for name, _ in settings], "late_eval_accuracy"),
                {**bar_style, "label": label, **({"hatch": hatch} if hatch else {})},
            )
            for variant, label, hatch in variants
        ],
    )
    style(
        axes[3],
        "DAPO: drop tied groups, or refill the batch",
        "reward (and its share of groups with all-equal rewards)",
        ACCURACY_LABEL,
        legend="above the data",
    )
    return figure


# --- 5 ---------------------------------------------------------------------------------------------------


def train_setting(result: dict, cell: dict, key: str):
    """One TrainConfig value of a cell: its own, else the experiment's default."""
    return cell["config"]["train"].get(key, result["train_defaults"][key])


def small_group_figure(result: dict) -> Figure:
    """Learning curves in two panels of at most four learners: the remedies on G = 2's own batch by step, and
    G = 2 against the learners with a larger batch by responses sampled; then late accuracy and the largest
    fall, one bar per learner in its curves' colour."""
    figure, axes = new_figure(4, result, "G = 2 and its remedies (EMA baseline, KL penalty, lower learning rate) against G = 8")
    labels = [cell_label(result["name"], c["id"]) for c in result["cells"]]
    first = result["cells"][0]  # plain G = 2

    def batch(cell: dict) -> int:
        return train_setting(result, cell, "group_size") * train_setting(result, cell, "prompts_per_step")

    def family(cell: dict) -> int:
        """BASELINE_FAMILY's colours where a remedy is a baseline (the EMA purple, the group z-score blue); the KL
        penalty wine, the lower lr indigo, more prompts black (RUN_COLORS), none of them a baseline's colour."""
        if train_setting(result, cell, "baseline") != "zscore":
            return BASELINE_FAMILY[train_setting(result, cell, "baseline")]
        if train_setting(result, cell, "kl_coef") != train_setting(result, first, "kl_coef"):
            return 5
        if train_setting(result, cell, "lr") != train_setting(result, first, "lr"):
            return 6
        return 4 if train_setting(result, cell, "group_size") == train_setting(result, first, "group_size") and batch(cell) != batch(first) else 0

    looks = []
    for index, (c, label) in enumerate(zip(result["cells"], labels)):
        look = learner_look(index, family=family(c), member=int(c is not first and family(c) == 0))
        looks.append(look)
        if batch(c) == batch(first):
            draw_seed_band(axes[0], *eval_curves(c, "eval_step"), label=label, lw=1.6, **look)
        if c is first or batch(c) != batch(first):
            draw_seed_band(axes[1], *eval_curves(c, "eval_samples"), label=label, lw=1.6, **look)
    style(axes[0], f"Remedies on G = 2's batch ({batch(first)} responses a step)", "training step", ACCURACY_LABEL, legend="above the data")
    style(axes[1], "G = 2 against larger batches, at equal samples", "responses sampled", ACCURACY_LABEL, legend="above the data")
    axes[1].xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(5))  # five-digit counts: more ticks run into each other
    colors = {"color": [look["color"] for look in looks], "edgecolor": "k", "lw": 0.5}
    for axis, metric, title, ylabel in (
        (axes[2], "late_eval_accuracy", "Accuracy late in training", ACCURACY_LABEL),
        (axes[3], "eval_max_drawdown", "Oscillation: largest fall from the best so far", "accuracy lost (0-1)"),
    ):
        tick_labels = [textwrap.fill(label, BAR_LABEL_CHARACTERS, break_long_words=False) for label in labels]  # six bars a half-width panel
        draw_bars(axis, tick_labels, [(*means_and_stds(result["cells"], metric), colors)], group_width=0.6)
        style(axis, title, "", ylabel)
    return figure


# --- 6 ---------------------------------------------------------------------------------------------------


def blowup_figure(result: dict) -> Figure:
    figure, axes = new_figure(3, result, "The batch is prompts x G responses: time and memory per step, and micro-batching")
    whole = sorted(cells_where(result, micro_batch_size=0), key=lambda c: c["axes"]["prompts_per_step"] * c["axes"]["group_size"])
    x = [summary_value(c, "responses_per_step") for c in whole]
    draw_error_points(
        axes[0],
        x,
        [summary_value(c, "time_per_step_s") for c in whole],
        [summary_value(c, "time_per_step_s", "std") for c in whole],
        label="one step",
    )
    for c, xx in zip(whole, x):
        axes[0].annotate(
            f"{c['axes']['prompts_per_step']}x{c['axes']['group_size']}",
            (xx, summary_value(c, "time_per_step_s")),
            textcoords="offset points",
            xytext=(4, -10),
        )
    style(axes[0], "Time per training step", "responses per step (prompts x G, log)", "seconds (log)", log_x=True, log_y=True)
    for metric, label in (("peak_rss_mb", "peak resident memory of the process"), ("saved_activations_mb", "activations kept for backward")):
        draw_error_points(axes[1], x, [summary_value(c, metric) for c in whole], [summary_value(c, metric, "std") for c in whole], label=label)
    axes[1].set_yscale("log")
    axes[1].set_ylim(top=axes[1].get_ylim()[1] * 10)  # a decade of room above the lines for the legend
    style(axes[1], "Memory", "responses per step (prompts x G, log)", "MB (log)", log_x=True, log_y=True, legend="upper left")
    shape = max((c["axes"]["prompts_per_step"], c["axes"]["group_size"]) for c in result["cells"] if c["axes"]["micro_batch_size"])
    micro = sorted(
        cells_where(result, prompts_per_step=shape[0], group_size=shape[1]),
        key=lambda c: c["axes"]["micro_batch_size"] or shape[0] * shape[1],
        reverse=True,
    )
    sizes = [c["axes"]["micro_batch_size"] or shape[0] * shape[1] for c in micro]
    tick_labels = [f"{s}" + (" (whole)" if i == 0 else "") for i, s in enumerate(sizes)]
    time_axis = axes[2].twinx()
    draw_bars(
        axes[2],
        tick_labels,
        [(*means_and_stds(micro, "saved_activations_mb"), {"color": "tab:blue", "label": "activations for backward (MB, left)"})],
        slots=2,
    )
    draw_bars(
        time_axis,
        tick_labels,
        [(*means_and_stds(micro, "time_per_step_s"), {"color": "tab:orange", "label": "time per step (s, right)"})],
        first_slot=1,
        slots=2,
    )
    time_axis.set_ylabel("seconds per step")
    style(
        axes[2],
        f"Micro-batches at {shape[0]} prompts x G={shape[1]} (same gradient)",
        "responses per backward pass",
        "MB",
        legend="above the data",
        twins=(time_axis,),
    )
    return figure


# --- 7 ---------------------------------------------------------------------------------------------------


COST_LEARNERS = ("grpo", "ppo", "ema", "ppo-32prompts")  # the crossover's two, the critic-free control, the fewest responses


def grpo_vs_ppo_figure(result: dict) -> Figure:
    """3 x 2 panels: the learners that take one update per batch, then those that take several, each at equal
    samples and at equal wall time; the cost to reach the target with the crossover marked; noisy rewards.
    A learner's colour is its baseline (GRPO's group, PPO's critic, no critic, Monte-Carlo values) and its
    line style its place among them; one legend under the panels."""
    figure, axes = new_figure(6, result, "GRPO's group baseline against PPO's learned critic")
    exact = [c for c in result["cells"] if not c["config"]["train"].get("reward_noise")]
    looks, members = {}, {}
    for index, c in enumerate(exact):
        family = BASELINE_FAMILY[train_setting(result, c, "baseline")]
        members[family] = members.get(family, -1) + 1
        looks[c["id"]] = learner_look(index, family, members[family])

    def several_updates(cell: dict) -> bool:
        return train_setting(result, cell, "inner_epochs") * train_setting(result, cell, "policy_minibatches") > 1

    rows = ([c for c in exact if not several_updates(c)], [c for c in exact if several_updates(c)])
    end = min(s["series"]["eval_wall_time"][-1] for c in exact for s in c["per_seed"])
    for (samples_axis, time_axis), cells in zip((axes[0:2], axes[2:4]), rows):
        for c in cells:
            draw_seed_band(samples_axis, *eval_curves(c, "eval_samples"), label=cell_label(result["name"], c["id"]), **looks[c["id"]])
            draw_seed_band(time_axis, *curves_on_time_grid(c, end), **looks[c["id"]])
    for axis in axes[:4]:
        axis.axhline(TARGET_ACCURACY, color="0.4", ls=":", lw=1)
    low = min(axis.get_ylim()[0] for axis in axes[:4])
    high = max(axis.get_ylim()[1] for axis in axes[:4])
    for axis in axes[:4]:  # one accuracy scale: a row reads against the other
        axis.set_ylim(low, high)
    # the Monte-Carlo value arm also samples its value rollouts (about ten times the others' responses): the axis
    # ends where the others do, and the legend says where that arm ends
    rollout_arms = [c for c in exact if train_setting(result, c, "baseline") == "mc_value"]
    others_end = max(s["series"]["eval_samples"][-1] for c in exact if c not in rollout_arms for s in c["per_seed"])
    off_the_edge = {}
    for c in rollout_arms:
        axes[2].set_xlim(0, others_end * 1.02)
        last = statistics.fmean(s["series"]["eval_samples"][-1] for s in c["per_seed"])
        label = cell_label(result["name"], c["id"])
        off_the_edge[label] = f"{label}\n(equal samples: runs on past the axis to {last:,.0f} responses, its value rollouts counted)"
    for row, (samples_axis, time_axis) in zip(("one update per batch", "several updates per batch"), (axes[0:2], axes[2:4])):
        style(samples_axis, f"Equal samples, {row}", "responses sampled", ACCURACY_LABEL, legend=None)
        style(time_axis, f"Equal wall time, {row}", "wall time (seconds, this CPU, shared)", ACCURACY_LABEL, legend=None)
    draw_cost_to_target(axes[4], result, [c for c in exact if c["id"] in COST_LEARNERS], looks)
    noise = 0.0
    for cell_id, exact_id, line in (("grpo", "grpo", "-"), ("ppo", "ppo", "-"), ("grpo-noisy", "grpo", "--"), ("ppo-noisy", "ppo", "--")):
        for c in (c for c in result["cells"] if c["id"] == cell_id):
            noise = max(noise, c["config"]["train"].get("reward_noise", 0.0))
            short = ("GRPO" if exact_id == "grpo" else "PPO") + (", noisy" if line == "--" else ", exact")
            draw_seed_band(axes[5], *eval_curves(c, "eval_samples"), label=short, **{**looks[exact_id], "ls": line})
    style(axes[5], f"Noisy rewards (noise std {noise:g}) against exact", "responses sampled", ACCURACY_LABEL, legend="above the data")
    for axis in (axes[0], axes[2], axes[5]):
        axis.locator_params(axis="x", nbins=5)  # five-digit tick labels: more would run into each other
    handles, labels = zip(*(h_l for axis in axes[0:4:2] for h_l in zip(*axis.get_legend_handles_labels())))
    figure.legend(handles, [off_the_edge.get(label, label) for label in labels], loc="outside lower center", ncol=1)
    return figure


def draw_cost_to_target(axis: Axes, result: dict, cells: list[dict], looks: dict) -> None:
    """Seconds to reach the target if every response also cost c seconds to generate (wall time + c x
    responses), per learner over c, with the crossover of GRPO and PPO (derived) marked where they meet."""
    costs = np.logspace(-5, 1, 61)
    for c in cells:
        per_seed = [
            [None if m["time_to_target_s"] is None else m["time_to_target_s"] + cost * m["samples_to_target"] for cost in costs]
            for m in (s["metrics"] for s in c["per_seed"])
        ]
        if any(v is not None for row in per_seed for v in row):
            draw_seed_band(axis, costs, per_seed, **looks[c["id"]])  # named in the figure's legend
    axis.set_xscale("log")
    if not axis.get_lines():  # an empty panel would read as a drawing error
        axis.text(0.5, 0.5, f"no seed of any learner reached {TARGET_ACCURACY:.0%}", transform=axis.transAxes, ha="center", va="center")
    crossover = result["derived"].get("crossover_s_per_response")
    if crossover:  # where the two lines meet (the means' crossing, as derived), a dashed drop to c below it
        bottom = min(line.get_ydata().min() for line in axis.get_lines()) / 2
        axis.set_ylim(bottom=bottom)
        (grpo,) = (c for c in result["cells"] if c["id"] == "grpo")
        seconds = summary_value(grpo, "time_to_target_s") + crossover * summary_value(grpo, "samples_to_target")
        axis.plot([crossover, crossover], [bottom, seconds], color="k", ls="--", lw=1)
        axis.plot([crossover], [seconds], "ko", ms=9, mfc="none", mew=1.5)
    # the crossover is named in the title, not in a legend: on log axes the lines fill every corner of the panel
    where = f"\nGRPO and PPO (G=1) means cross at c = {crossover:.2g} s (circle)" if crossover else ""
    style(
        axis,
        f"Cost to reach {TARGET_ACCURACY:.0%}: wall time + c x responses{where}",
        "simulated generation cost c (seconds per response, log)",
        "seconds (log)",
        log_y=True,
        legend=None,
    )


# --- 8 ---------------------------------------------------------------------------------------------------


LEVEL_GAP = 0.09  # labels of horizontal lines at least this share of the y range apart: a line of 10-pt type on a 3.4-inch panel


def label_levels(axis: Axes, levels: dict[str, float]) -> None:
    """Name each horizontal line {name: y} just outside the right edge of ``axis``, where no data are: the
    names in the lines' order, moved apart by LEVEL_GAP where lines lie close, each tied to its line by a
    short leader. Call it after the panel's data are drawn (it reads the y limits)."""
    low, high = axis.get_ylim()
    axis.set_ylim(low, high)  # fixed: the labels' places are computed on this range
    gap = LEVEL_GAP * (high - low)
    names = sorted(levels, key=levels.get)
    places = []
    for name in names:  # upwards, each at least a gap above the one below ...
        places.append(max(levels[name], places[-1] + gap) if places else levels[name])
    for index in range(len(places) - 1, -1, -1):  # ... then down again where the top ran past the axis
        ceiling = high - gap / 2 if index == len(places) - 1 else places[index + 1] - gap
        places[index] = min(places[index], ceiling)
    for name, place in zip(names, places):
        axis.annotate(
            name,
            (1.0, levels[name]),
            xytext=(1.06, place),
            xycoords=("axes fraction", "data"),
            textcoords=("axes fraction", "data"),
            va="center",
            color="0.2",
            annotation_clip=False,
            arrowprops={"arrowstyle": "-", "color": "0.5", "lw": 0.6, "shrinkA": 0, "shrinkB": 2},
        )


# the batch-shape grid's baselines, (colour family, line style): BASELINE_FAMILY's four families, the group baselines one
# family in three line styles (rloo is G/(G-1) x mean); the legend lists them in this order
SHAPE_FAMILIES = {"ema": (2, 0), "mean": (0, 0), "zscore": (0, 1), "rloo": (0, 2), "critic": (1, 0), "mc_value": (3, 0)}
SHAPE_NAMES = {
    "ema": "EMA (global, no critic)",
    "mean": "group mean",
    "zscore": "group z-score",
    "rloo": "RLOO",
    "critic": "learned critic (PPO)",
    "mc_value": "Monte-Carlo value (VinePPO)",
}


def batch_shape_figure(result: dict) -> Figure:
    """Late held-out accuracy against the batch's shape at a fixed number of responses a step, one line per baseline, one
    panel per reuse setting (trained on once; reused as PPO does). x: prompts per step (each with G = responses / prompts
    answers); each baseline's points are nudged sideways a little so that the error bars stay apart."""
    reuses = list(dict.fromkeys(c["axes"]["reuse"] for c in result["cells"]))
    figure, axes = new_figure(
        len(reuses), result, "Which matters at a fixed number of responses a step: the baseline, or how many prompts they cover?"
    )
    baselines = [b for b in SHAPE_FAMILIES if any(c["axes"]["baseline"] == b for c in result["cells"])]
    prompts = sorted({c["axes"]["prompts_per_step"] for c in result["cells"]})
    responses = result["cells"][0]["axes"]["prompts_per_step"] * result["cells"][0]["axes"]["group_size"]
    for axis, reuse in zip(axes, reuses):
        for index, baseline in enumerate(baselines):
            cells = cells_where(result, reuse=reuse, baseline=baseline)
            nudge = 2 ** (0.06 * (index - (len(baselines) - 1) / 2))
            x, means, stds = metric_points(cells, "prompts_per_step", "late_eval_accuracy")
            family, member = SHAPE_FAMILIES[baseline]
            look = learner_look(index, family, member)
            draw_error_points(
                axis,
                [value * nudge for value in x],
                means,
                stds,
                label=SHAPE_NAMES[baseline],
                color=look["color"],
                ls=look["ls"],
                marker=look["marker"],
            )
        words = next(cell_label(result["name"], c["id"]).split(", ", 2)[2] for c in cells_where(result, reuse=reuse))
        style(
            axis,
            f"Each batch {'trained on once' if reuse == 'once' else 'reused: ' + words}",
            f"prompts per step (x answers each = {responses})",
            "late " + ACCURACY_LABEL,
            log_x=True,
            legend=None,
        )
        axis.set_xticks(prompts)
        axis.set_xticklabels([f"{P}\nx {responses // P}" for P in prompts])
    low = min(axis.get_ylim()[0] for axis in axes)
    high = max(axis.get_ylim()[1] for axis in axes)
    start = float(np.mean([entry["metrics"]["initial_eval_accuracy"] for c in result["cells"] for entry in c["per_seed"]]))
    for axis in axes:  # one accuracy scale: a panel reads against the other
        axis.set_ylim(max(0.0, low), min(1.0, high))
        if low <= start <= high:  # where learners end near their start (the practice regime), the start is the level to read
            axis.axhline(start, color="0.3", ls=":", lw=1.5, label=f"start: the reference policy, {start:.3f}")
    figure_legend(figure, axes[0])
    return figure


# the critic's own colour (BASELINE_FAMILY) for the critic trained on fresh rollouts, wine for one on a fixed pool
FIT_COLORS = (RUN_COLORS[1], RUN_COLORS[5])


def critic_fit_figure(result: dict) -> Figure:
    figure, axes = new_figure(4, result, "PPO's critic at a fixed policy: how many updates to predict V, against a group of G samples")
    fresh = {
        c["axes"]["policy"]: c
        for c in cells_where(result, data="fresh", value_clip=0.0, variant=None)
        if c["axes"]["critic_lr"] == result["train_defaults"]["critic_lr"]
    }
    ev_floor = -0.5  # a G=2 mean explains less than a constant; the axis stops here so the critic's curve stays readable
    levels = {}  # the horizontal lines of the top-left panel, named at its right edge
    for index, (policy, c) in enumerate(fresh.items()):
        updates = c["per_seed"][0]["series"]["updates"]
        draw_seed_band(
            axes[0],
            [max(u, 1) for u in updates],
            [s["series"]["ev_prompt"] for s in c["per_seed"]],
            label=f"critic V(prompt), {policy}",
            color=RUN_COLORS[BASELINE_FAMILY["critic"]],  # the critic's colour in every figure; a line style per policy
            ls=LINE_STYLES[index % len(LINE_STYLES)],
            marker=RUN_MARKERS[index],
            ms=3,
        )
        if policy == "reference":
            sizes = sorted(int(k.split("=")[1]) for k in c["summary"] if k.startswith("group_ev."))
            levels = {f"G={G}": summary_value(c, f"group_ev.G={G}") for G in sizes}
            levels = {name: value for name, value in levels.items() if value is not None and value > ev_floor}
            for shade, value in zip(np.linspace(0.75, 0.25, len(levels)), levels.values()):
                axes[0].axhline(value, color=str(shade), ls="--", lw=1)
            axes[0].plot([], [], color="0.5", ls="--", lw=1, label="group mean of G samples (G at the right)")
            levels["oracle"] = summary_value(c, "oracle_ev")
            axes[0].axhline(levels["oracle"], color="k", lw=1.2, label="oracle V (reference policy)")
    axes[0].axhline(0, color="0.5", lw=0.8)
    label_levels(axes[0], levels)
    style(
        axes[0],
        "Held-out explained variance of V(prompt)",
        "critic updates (log; 1 = before training)",
        "explained variance (0 = a constant)",
        log_x=True,
        legend=None,
    )
    axes[3].axis("off")  # the spare slot holds the top panels' legends: no place inside either leaves every line uncovered
    axes[3].add_artist(axes[3].legend(*axes[0].get_legend_handles_labels(), loc="upper left", title="Top-left panel"))
    for index, c in enumerate([fresh.get("reference"), *cells_where(result, data="fixed", variant=None)]):
        if c is None:
            continue
        updates = [max(u, 1) for u in c["per_seed"][0]["series"]["updates"]]
        name = "fresh rollouts" if c["axes"]["data"] == "fresh" else "one fixed pool"
        draw_seed_band(
            axes[1],
            updates[1:],
            [s["series"]["train_ev_token"][1:] for s in c["per_seed"]],
            label=f"{name}: on its training batch",
            color=FIT_COLORS[index],
            ls="--",
            marker=RUN_MARKERS[index],
            ms=4,
        )
        draw_seed_band(
            axes[1],
            updates,
            [s["series"]["ev_token"] for s in c["per_seed"]],
            label=f"{name}: held out",
            color=FIT_COLORS[index],
            marker=RUN_MARKERS[index],
            ms=4,
        )
    axes[1].axhline(0, color="0.5", lw=0.8)
    token_ceiling = summary_value(fresh["reference"], "oracle_ev_token") if "reference" in fresh else None
    if token_ceiling is not None:  # results made before it was measured lack it
        axes[1].axhline(token_ceiling, color="k", lw=1.2, label="Monte-Carlo V(s_t) of the same states: the ceiling")
    style(axes[1], "Over- and under-fitting (every answer token)", "critic updates (log)", "explained variance", log_x=True, legend=None)
    axes[3].legend(*axes[1].get_legend_handles_labels(), loc="lower left", title="Top-right panel")
    variants = sorted(
        cells_where(result, policy="reference", data="fresh", variant=None), key=lambda c: (c["axes"]["value_clip"], c["axes"]["critic_lr"])
    )
    labels = [
        f"lr\n{c['axes']['critic_lr']:.0e}".replace("e-0", "e-") + (f"\nclip {c['axes']['value_clip']:g}" if c["axes"]["value_clip"] else "")
        for c in variants
    ]
    for variant, label in (("critic_lambda 1", "λ=1"), ("shared trunk", "shared")):  # the variants practitioners use
        variants += cells_where(result, policy="reference", variant=variant)
        labels += [label] * (len(variants) - len(labels))
    draw_bars(
        axes[2],
        labels,
        [
            (*means_and_stds(variants, "critic_ev_prompt"), {"label": "V(prompt)", "color": RUN_COLORS[5], "hatch": "//"}),
            (*means_and_stds(variants, "critic_ev_token"), {"label": "every token", "color": RUN_COLORS[1]}),
        ],
    )
    axes[2].axhline(0, color="0.5", lw=0.8)
    if token_ceiling is not None:
        axes[2].axhline(token_ceiling, color="k", lw=1.2, label="ceiling, every token")
    style(axes[2], "After all updates, by setting (λ=1: VAPO)", "", "held-out explained variance", legend="above the data")
    return figure


# --- 9 ---------------------------------------------------------------------------------------------------


def difficulty_figure(result: dict) -> Figure:
    figure, axes = new_figure(4, result, "Difficulty bias: how much each prompt counts under zscore vs mean (Dr. GRPO's argument)")
    weight_cells = cells_where(result, part="weights")
    G = weight_cells[0]["config"]["group_size"]
    ks = list(range(1, G))
    for c, line_style in zip(weight_cells, ("-", "--")):
        for baseline in ("mean", "zscore"):
            draw_error_points(
                axes[0],
                ks,
                [summary_value(c, f"weight_vs_middle.{baseline}.k={k}") for k in ks],
                [summary_value(c, f"weight_vs_middle.{baseline}.k={k}", "std") for k in ks],
                label=f"{baseline}, {c['axes']['policy']}",
                color=BASELINE_COLORS[baseline],
                ls=line_style,
            )
    style(
        axes[0],
        "A group's gradient norm, relative to a balanced group",
        f"right answers in the group (of G={G})",
        "gradient norm / that of the most balanced group",
        legend="above the data",  # room above the error bars: inside them a legend covers k = 1 or k = 7
    )
    ks = range(G + 1)
    draw_bars(
        axes[1],
        [str(k) for k in ks],
        [
            (
                [summary_value(c, f"frac_groups.k={k}") for k in ks],
                [summary_value(c, f"frac_groups.k={k}", "std") for k in ks],
                {"label": f"{c['axes']['policy']} policy"},
            )
            for c in weight_cells
        ],
    )
    style(axes[1], "How many groups have k right answers", f"right answers in the group (of G={G})", "fraction of groups")
    training = cells_where(result, part="training")
    draw_bars(
        axes[2],
        [c["axes"]["baseline"] for c in training],
        [(*means_and_stds(training, f"{subset}_eval_accuracy"), {"label": f"{subset} problems"}) for subset in ("hard", "easy")],
    )
    style(axes[2], "After training: hard (carry) vs easy problems", "baseline", ACCURACY_LABEL, legend="above the data")
    for c in training:
        draw_seed_band(axes[3], *eval_curves(c), label=c["axes"]["baseline"], **baseline_look(c["axes"]["baseline"]))
    style(axes[3], "Learning curves", "training step", ACCURACY_LABEL)
    return figure


FIGURES = {
    "variance": variance_figure,
    "offset-and-scale": offset_and_scale_figure,
    "group-size": group_size_figure,
    "sigma-to-zero": sigma_to_zero_figure,
    "small-group-remedies": small_group_figure,
    "batch-blowup": blowup_figure,
    "grpo-vs-ppo": grpo_vs_ppo_figure,
    "batch-shape": batch_shape_figure,
    "critic-fit": critic_fit_figure,
    "difficulty-bias": difficulty_figure,
}


def cell_without_means(result: dict) -> str | None:
    """The axes of the first cell whose summary holds no mean at all (every metric null: a damaged
    or hand-edited file), or None. One metric may be null in every cell (a target never reached)."""
    for cell in result["cells"]:
        if not any(stats["mean"] is not None for stats in cell["summary"].values()):
            return ", ".join(f"{key}={value}" for key, value in cell["axes"].items()) or "with no axes"
    return None


def cannot_draw(name: str, reason: str) -> ValueError:
    return ValueError(f"the {name} result cannot be drawn ({reason}): remake it with `python -m grpo_lab sweep {name}`")


def error_text(error: Exception) -> str:
    return f"{type(error).__name__}: {str(error).splitlines()[0][:120] if str(error) else ''}"


def experiment_figure(name: str, result: dict) -> Figure:
    """The figure of experiment ``name`` drawn from a result dict (run_experiment or load_result).
    A result that follows the schema but holds values no figure can draw (a damaged file: a cell
    whose means are all null, a list where a number was, a series cut short) raises one ValueError
    saying what failed."""
    if name not in FIGURES:
        raise ConfigError("experiment", name, f"choose one of {', '.join(FIGURES)}")
    empty = cell_without_means(result)
    if empty is not None:
        raise cannot_draw(name, f"every summary mean is null in the cell {empty}")
    try:
        with matplotlib.rc_context(READABLE):
            return one_y_label_a_row(FIGURES[name](result))
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as error:
        raise cannot_draw(name, error_text(error)) from None


def one_y_label_a_row(figure: Figure) -> Figure:
    """A panel whose y label repeats the one of the panel on its left drops it: the row reads on one label, and a
    long label in the gap between two panels no longer runs into the figure's title or its neighbour's ticks."""
    for axis in figure.axes:
        spec = axis.get_subplotspec()
        if spec is None or spec.colspan.start == 0:
            continue
        for other in figure.axes:
            beside = other.get_subplotspec()
            if beside is not None and beside.rowspan == spec.rowspan and beside.colspan.stop == spec.colspan.start:
                if other.get_visible() and other.get_ylabel() == axis.get_ylabel():
                    axis.set_ylabel("")
    return figure


def save_experiment_figure(name: str, result: dict, path: Path, dpi: int = 90) -> Path:
    """``experiment_figure`` written to ``path``. matplotlib places some values only when it renders
    (an annotation at a null x), so a damaged result can first fail here: the same one ValueError."""
    figure = experiment_figure(name, result)
    try:
        return save_figure(figure, path, dpi=dpi)
    except (TypeError, ValueError) as error:
        raise cannot_draw(name, error_text(error)) from None
