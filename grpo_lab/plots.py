"""The course's figures, in one place: the CLI, the notebooks and the lab all draw with these.

Figures are built with ``matplotlib.figure.Figure`` (not pyplot), so they work in a background
thread and in a headless process alike.
"""

from __future__ import annotations

import io
from pathlib import Path

from matplotlib.figure import Figure

RUN_PANELS = ("reward", "variance", "zero_std")


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
    reward_axis.plot(*series(history, "eval_accuracy", x_key), color=color, alpha=alpha, lw=2, marker="o", ms=3, label=f"{label} eval accuracy".strip())
    variance_axis.plot(*series(history, "grad_var", x_key), color=color, alpha=alpha, lw=2, marker="o", ms=3, label=label or "grad_var")
    zero_std_axis.plot(*series(history, "frac_reward_zero_std", x_key), color=color, alpha=alpha, lw=1.5, label=label or "frac_reward_zero_std")


def style_run_panels(axes, x_key: str = "step") -> None:
    reward_axis, variance_axis, zero_std_axis = axes
    x_label = "training step" if x_key == "step" else "responses sampled"
    reward_axis.set(title="Reward (thin) and held-out accuracy (thick)", xlabel=x_label, ylabel="fraction correct", ylim=(-0.02, 1.02))
    variance_axis.set(title="Gradient variance across groups", xlabel=x_label, ylabel="grad_var (trace, log scale)")
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


def figure_png(figure: Figure, dpi: int = 90) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def save_figure(figure: Figure, path: str | Path, dpi: int = 110) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=dpi)
    return path
