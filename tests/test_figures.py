"""A reader's checks over every static figure the library draws (issue 39): each experiment's figure from
every shipped result (every regime), the run figure of real short runs (one with a reward offset), the metrics figure, the
advantage-table figure and the answer figure. A figure passes when

- no legend and no text label covers plotted data (lines sampled every few pixels, error bars, bar tops,
  scatter points), read from matplotlib's renderer after a full draw;
- no two texts overlap or touch: titles, axis labels, legends, text labels and the tick labels matplotlib draws (two tick
  labels are left to matplotlib);
- no y axis labelled a fraction or an accuracy holds data outside [0, 1] (a panel without a y label reads the
  label of the panel on its left, as the figures draw one label a row);
- every bar panel's y axis reaches 0, the bars' base, unless its y label says "difference" (DIFFERENCE_MARK:
  the panel draws differences from a level, and says so where the reader looks);
- a panel draws at most four learners (lines of three points or more), or more grouped by style: at most
  four colours, the lines of one colour told apart by line style or marker.

Each check is shown to fail on a planted bad figure below.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.colors import to_hex
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.text import Annotation, Text

from grpo_lab import TrainConfig, train
from grpo_lab.experiments import EXPERIMENTS, experiment_figure, load_result
from grpo_lab.experiments.catalog import REGIMES
from grpo_lab.experiments.runner import result_path
from grpo_lab.lab.classroom import PLOT_VIEWS
from grpo_lab.lab.dashboard import live_figure_for
from grpo_lab.live_figure import RunCurves

DIFFERENCE_MARK = "difference"  # in a bar panel's y label: its axis may leave out 0
FRACTION_WORDS = ("fraction", "accuracy")  # a y label with one of these promises values in [0, 1]
MOST_LEARNERS = 4  # per panel, unless grouped by style
SAMPLE_PX = 2.0  # a drawn line is checked every this many pixels
EDGE_PX = 2.0  # a label may touch data along its edge (a label sits on its own line)
TEXT_GAP_PX = 1.0  # two texts at least this far apart: two labels end to end read as one


def drawn(figure: Figure):
    """The renderer of a full draw of ``figure`` (places "best" legends and runs the layout)."""
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return canvas.get_renderer()


def capline_ids(axis) -> set[int]:
    return {id(cap) for container in axis.containers if isinstance(container, ErrorbarContainer) for cap in container.lines[1]}


def data_lines(axis) -> list:
    """The axis's visible lines that draw data (error-bar caps left out)."""
    caps = capline_ids(axis)
    return [line for line in axis.get_lines() if line.get_visible() and id(line) not in caps]


def along(points: np.ndarray) -> np.ndarray:
    """Points every SAMPLE_PX along a polyline [n, 2] in display coordinates (NaN breaks it)."""
    samples = [points[np.isfinite(points).all(axis=1)][:1]]
    for start, end in zip(points[:-1], points[1:]):
        if np.isfinite(start).all() and np.isfinite(end).all():
            steps = max(1, int(np.hypot(*(end - start)) / SAMPLE_PX))
            samples.append(start + np.linspace(0, 1, steps + 1)[:, None] * (end - start))
    return np.concatenate(samples) if samples else np.empty((0, 2))


def data_points(axis, renderer) -> np.ndarray:
    """Display coordinates [n, 2] of what ``axis`` draws inside its frame: its lines sampled along their
    segments (markers only: the markers), error bars, bar tops and scatter points."""
    points = []
    for line in data_lines(axis):
        xy = line.get_transform().transform(line.get_xydata())
        points.append(xy if line.get_linestyle() in ("None", "none", "", " ") else along(xy))
    for collection in axis.collections:
        if isinstance(collection, LineCollection) and collection.get_visible():
            points += [along(collection.get_transform().transform(segment)) for segment in collection.get_segments()]
        elif isinstance(collection, PathCollection) and collection.get_visible():
            points.append(collection.get_offset_transform().transform(collection.get_offsets()))
    for container in axis.containers:
        if isinstance(container, BarContainer):
            for bar in container.patches:
                box = bar.get_window_extent(renderer)
                top = box.y1 if bar.get_height() >= 0 else box.y0
                points.append(along(np.array([[box.x0, top], [box.x1, top]])))
    points = np.concatenate(points) if points else np.empty((0, 2))
    frame = axis.get_window_extent(renderer)
    inside = (points[:, 0] >= frame.x0) & (points[:, 0] <= frame.x1) & (points[:, 1] >= frame.y0) & (points[:, 1] <= frame.y1)
    return points[np.isfinite(points).all(axis=1) & inside]


def labels_of(figure: Figure) -> list[tuple[str, object]]:
    """(name, artist) of every visible legend and text label of the figure, in its panels and on it."""
    found = []
    for axis in figure.axes:
        if axis.get_legend() is not None and axis.get_legend().get_visible():
            found.append((f"legend of {axis.get_title()!r}", axis.get_legend()))
        found += [(f"legend of {axis.get_title()!r}", artist) for artist in axis.artists if artist.__class__.__name__ == "Legend"]
        found += [(f"text {text.get_text()!r}", text) for text in axis.texts if text.get_visible() and text.get_text().strip()]
    found += [("figure legend", legend) for legend in figure.legends]
    found += [(f"text {text.get_text()!r}", text) for text in figure.texts if text.get_visible() and text.get_text().strip()]
    return found


def check_no_label_over_data(figure: Figure) -> None:
    renderer = drawn(figure)
    points = {axis: data_points(axis, renderer) for axis in figure.axes if axis.get_visible()}
    for name, label in labels_of(figure):
        box = label.get_window_extent(renderer)
        for axis, xy in points.items():
            covered = xy[
                (xy[:, 0] > box.x0 + EDGE_PX) & (xy[:, 0] < box.x1 - EDGE_PX) & (xy[:, 1] > box.y0 + EDGE_PX) & (xy[:, 1] < box.y1 - EDGE_PX)
            ]
            assert not len(covered), f"{name} covers {len(covered)} points of panel {axis.get_title()!r} (pixels {covered[:2].round().tolist()})"


def texts_of(figure: Figure, renderer) -> list[tuple[str, object]]:
    """(name, display box) of every text a reader sees: labels_of's, the panels' titles and axis labels, and the
    tick labels drawn inside their panel's span (matplotlib keeps labels for ticks past the limits, undrawn). An
    annotation's box is its text's, not its arrow's."""
    found = [(name, artist.get_window_extent(renderer)) for name, artist in labels_of(figure) if not isinstance(artist, Annotation)]
    found += [(name, Text.get_window_extent(artist, renderer)) for name, artist in labels_of(figure) if isinstance(artist, Annotation)]
    for axis in figure.axes:
        if not axis.get_visible():
            continue
        panel = f"panel {axis.get_title()!r}"
        named = [(f"title of {panel}", t) for t in (axis.title, axis._left_title, axis._right_title)]
        named += [(f"x label of {panel}", axis.xaxis.label), (f"y label of {panel}", axis.yaxis.label)]
        found += [(name, t.get_window_extent(renderer)) for name, t in named if t.get_visible() and t.get_text().strip()]
        for which, ruler in (("x", axis.xaxis), ("y", axis.yaxis)):
            low, high = sorted(ruler.get_view_interval())
            slack = 1e-9 * max(abs(low), abs(high), 1.0)
            for tick in ruler.get_major_ticks():
                if not low - slack <= tick.get_loc() <= high + slack:
                    continue  # not drawn: its label keeps wherever an earlier draw left it
                for label in (tick.label1, tick.label2):
                    if label.get_visible() and label.get_text().strip():
                        found.append((f"{which} tick label {label.get_text()!r} of {panel}", label.get_window_extent(renderer)))
    return found


def check_no_text_over_text(figure: Figure) -> None:
    texts = texts_of(figure, drawn(figure))
    for (name, box), (other, other_box) in itertools.combinations(texts, 2):
        if " tick label " in name and " tick label " in other and (name[0], name.split(" of panel ")[1]) != (other[0], other.split(" of panel ")[1]):
            continue  # tick labels of two rulers meet at a panel's corner; those of one ruler must stay apart
        width = min(box.x1, other_box.x1) - max(box.x0, other_box.x0)
        height = min(box.y1, other_box.y1) - max(box.y0, other_box.y0)
        assert width <= -TEXT_GAP_PX or height <= -TEXT_GAP_PX, f"{name} overlaps or touches {other} ({width:.0f} x {height:.0f} pixels)"


def y_label_read(axis) -> str:
    """The y label a reader reads a panel by: its own, or (a panel without one) that of the panel on its left."""
    spec = axis.get_subplotspec()
    if axis.get_ylabel() or spec is None:
        return axis.get_ylabel()
    for other in axis.figure.axes:
        beside = other.get_subplotspec()
        if beside is not None and beside.rowspan == spec.rowspan and beside.colspan.stop == spec.colspan.start:
            return y_label_read(other)
    return ""


def check_fraction_labels(figure: Figure) -> None:
    for axis in figure.axes:
        if not any(word in y_label_read(axis).lower() for word in FRACTION_WORDS):
            continue
        values = [line.get_ydata() for line in data_lines(axis)]
        values += [[bar.get_y() + bar.get_height() for bar in c.patches] for c in axis.containers if isinstance(c, BarContainer)]
        values = np.concatenate([np.asarray(v, dtype=float).ravel() for v in values]) if values else np.empty(0)
        values = values[np.isfinite(values)]
        outside = values[(values < -1e-9) | (values > 1 + 1e-9)]
        assert not len(outside), f"panel {axis.get_title()!r} is labelled {y_label_read(axis)!r} but draws {outside[:3].tolist()}"


def check_bars_from_zero(figure: Figure) -> None:
    for axis in figure.axes:
        bars = [bar for c in axis.containers if isinstance(c, BarContainer) for bar in c.patches if np.isfinite(bar.get_height())]
        if not bars or DIFFERENCE_MARK in axis.get_ylabel().lower():
            continue
        low, high = sorted(axis.get_ylim())
        bases = {bar.get_y() for bar in bars}
        assert axis.get_yscale() == "linear" and all(low <= base <= high for base in bases), (
            f"panel {axis.get_title()!r}: bars from {sorted(bases)} on a {axis.get_yscale()} axis from {low:.3g} to {high:.3g}; "
            f"start it at 0 or say {DIFFERENCE_MARK!r} in its y label"
        )


def check_learners_per_panel(figure: Figure) -> None:
    for axis in figure.axes:
        learners = [line for line in data_lines(axis) if np.isfinite(np.asarray(line.get_ydata(), dtype=float)).sum() >= 3]
        if len(learners) <= MOST_LEARNERS:
            continue
        by_colour: dict[str, list] = {}
        for line in learners:  # a look: line style, marker and width (thick accuracy, thin reward, as a panel's title says)
            look = (str(line.get_linestyle()), str(line.get_marker()), round(line.get_linewidth(), 1))
            by_colour.setdefault(to_hex(line.get_color()), []).append(look)
        assert len(by_colour) <= MOST_LEARNERS, f"panel {axis.get_title()!r}: {len(learners)} learners in {len(by_colour)} colours"
        for colour, looks in by_colour.items():
            assert len(set(looks)) == len(looks), f"panel {axis.get_title()!r}: lines of colour {colour} share a line style, marker and width"


def check_log_axes_positive(figure: Figure) -> None:
    """A log axis has no place for 0 or less: a line point or an error bar that reaches there is drawn off the axis (to its
    bottom edge), so a quantity that can be 0 or negative, or a spread that reaches it, belongs on a linear axis."""
    for axis in figure.axes:
        if axis.get_yscale() != "log":
            continue
        values = [np.asarray(line.get_ydata(), dtype=float) for line in data_lines(axis)]
        for container in axis.containers:
            if isinstance(container, ErrorbarContainer):
                values += [np.asarray(segment)[:, 1] for bars in container.lines[2] for segment in bars.get_segments()]
        lowest = min((float(np.nanmin(v)) for v in values if np.isfinite(v).any()), default=np.inf)
        assert lowest > 0, f"panel {axis.get_title()!r}: a value or error bar reaches {lowest:.3g} on a log axis"


CHECKS = (
    check_no_label_over_data,
    check_no_text_over_text,
    check_fraction_labels,
    check_bars_from_zero,
    check_learners_per_panel,
    check_log_axes_positive,
)


def check_figure(figure: Figure) -> None:
    for check in CHECKS:
        check(figure)


# --- every static figure ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def short_runs() -> dict[str, list[dict]]:
    """Two real short runs on small batches: the default baseline, and none with every reward offset by 5 (01b's live run)."""
    runs = {"default": {}, "offset 5, no baseline": {"baseline": "none", "reward_offset": 5.0}}
    base = {"steps": 10, "prompts_per_step": 4, "group_size": 4, "eval_every": 2, "probe_every": 2, "seed": 0}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # batches this small run ten times faster on one thread than on a busy machine's several
    try:
        return {name: train(TrainConfig(**base, **overrides)).history for name, overrides in runs.items()}
    finally:
        torch.set_num_threads(threads)


SHIPPED = [(regime, name) for regime in REGIMES for name in EXPERIMENTS if result_path(name, regime=regime).is_file()]


@pytest.mark.parametrize(("regime", "name"), SHIPPED)
def test_every_experiment_figure_of_every_shipped_result_passes_the_checks(regime, name):
    """Every regime's results too: a legend that finds room over the default's curves may cover another's."""
    check_figure(experiment_figure(name, load_result(name, regime=regime)))


def test_the_run_figure_passes_the_checks_with_and_without_a_reward_offset(short_runs):
    from grpo_lab.plots import run_figure

    check_figure(run_figure(list(short_runs.items()), title="two runs"))
    check_figure(run_figure([("offset 5", short_runs["offset 5, no baseline"])]))


@pytest.mark.parametrize("plot_room", [0, 700])
@pytest.mark.parametrize("view", list(PLOT_VIEWS))
def test_the_labs_live_frame_has_no_text_over_text(short_runs, view, plot_room):
    """The lab's frame as a page shows it (each plot view, at the narrowest and a wide plot room), with two runs and
    their end tags: a right-hand axis whose top tick sits at the frame's top (max |adv| at 10) stays clear of the panel's
    title, and stacked panels' titles clear the x labels above them."""
    frame = live_figure_for(view, plot_room)
    runs = [RunCurves(i, name, [history], f"C{i}", tag=f"run {i + 1}") for i, (name, history) in enumerate(short_runs.items())]
    frame.update(runs, x_key="step", x_max=10)
    check_no_text_over_text(frame.figure)


def test_the_metrics_figure_passes_the_checks(short_runs):
    from grpo_lab.plots import metrics_figure

    check_figure(metrics_figure(list(short_runs.items()), ["eval_accuracy", "reward", "kl"]))


def test_the_advantage_table_figure_passes_the_checks():
    from grpo_lab.course.widgets import advantage_table, table_figure

    rewards = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    check_figure(table_figure(rewards, advantage_table(rewards, 1e-4, "add", 0.5)))


def test_the_answer_figure_passes_the_checks():
    from grpo_lab.course.final_answer import answer_figure

    check_figure(answer_figure(load_result("grpo-vs-ppo")))


def test_the_run_figure_draws_rewards_on_their_own_axis_and_a_mean_to_read_grad_var_against(short_runs):
    """A reward is in reward units (an offset moves it to 5 and more, a scale to 0.2): the run figure draws it
    on an axis of its own, not on accuracy's fraction axis; grad_var gets its mean over steps as a reference."""
    from grpo_lab.plots import run_figure

    history = short_runs["offset 5, no baseline"]
    figure = run_figure([("offset 5", history)])
    drawn(figure)
    (reward,) = [line for axis in figure.axes for line in axis.get_lines() if line.get_label().endswith(": reward")]
    (accuracy,) = [line for axis in figure.axes for line in axis.get_lines() if line.get_label().endswith(": eval_accuracy")]
    assert reward.axes is not accuracy.axes and "reward" in reward.axes.get_ylabel()
    low, high = reward.axes.get_ylim()
    assert low <= min(reward.get_ydata()) and max(reward.get_ydata()) <= high
    (variance,) = [line for axis in figure.axes for line in axis.get_lines() if line.get_label().endswith(": grad_var")]
    means = [line for line in variance.axes.get_lines() if len(set(line.get_ydata())) == 1]
    assert [line.get_ydata()[0] for line in means] == pytest.approx([np.mean([r["grad_var"] for r in history if "grad_var" in r])])


# --- the checks fail on planted bad figures --------------------------------------------------------------


def planted(draw) -> Figure:
    figure = Figure(figsize=(5, 3.5), layout="constrained")
    draw(figure.subplots())
    return figure


def diagonal(axis, label: str = "a learner", **style) -> None:
    axis.plot(np.linspace(0, 1, 50), np.linspace(0, 1, 50), label=label, **style)


PLANTED = {
    "a legend over a line": (check_no_label_over_data, lambda a: (diagonal(a), a.legend(loc="center"))),
    "a text over a line": (check_no_label_over_data, lambda a: (diagonal(a), a.text(0.5, 0.5, "label over the line", ha="center"))),
    "a text over a reference line": (check_no_label_over_data, lambda a: (a.axhline(0.5), a.set_ylim(0, 1), a.text(0.3, 0.48, "level"))),
    "a legend over bars": (check_no_label_over_data, lambda a: (a.bar([0, 1, 2], [1, 2, 1.5], label="bars"), a.legend(loc="upper center"))),
    "a note over the title": (
        check_no_text_over_text,
        lambda a: (diagonal(a), a.set_title("the title"), a.text(0.5, 1.03, "a note over it", transform=a.transAxes, ha="center")),
    ),
    "tick labels that touch": (check_no_text_over_text, lambda a: (diagonal(a), a.set_xticks([0, 0.02], ["a long tick label", "another"]))),
    "two texts on one spot": (check_no_text_over_text, lambda a: (diagonal(a), a.text(1.05, 0.5, "G=8"), a.text(1.05, 0.51, "G=16"))),
    "an annotation's text on a text": (
        check_no_text_over_text,
        lambda a: (diagonal(a), a.text(0.1, 0.8, "G=8"), a.annotate("G=16", (1, 1), xytext=(0.1, 0.8), arrowprops={"arrowstyle": "-"})),
    ),
    "rewards of 5 on an accuracy axis": (check_fraction_labels, lambda a: (a.plot([0, 1, 2], [5.1, 5.3, 5.2]), a.set_ylabel("accuracy"))),
    "bars from 0.6": (check_bars_from_zero, lambda a: (a.bar([0, 1], [0.78, 0.79]), a.set_ylim(0.6, 0.8))),
    "bars on a log axis": (check_bars_from_zero, lambda a: (a.bar([0, 1], [10, 100]), a.set_yscale("log"))),
    "an error bar below 0 on a log axis": (
        check_log_axes_positive,
        lambda a: (a.errorbar([1, 2, 3], [0.1, 0.2, 0.3], yerr=[0.05, 0.3, 0.1]), a.set_yscale("log")),
    ),
    "six learners in six colours": (check_learners_per_panel, lambda a: [diagonal(a, f"learner {i}", ls=("-", "--")[i % 2]) for i in range(6)]),
    "two learners of one colour in one style": (
        check_learners_per_panel,
        lambda a: [diagonal(a, f"learner {i}", color=("C0", "C1", "C2")[i % 3], ls="-") for i in range(6)],
    ),
}


@pytest.mark.parametrize("defect", list(PLANTED))
def test_each_check_fails_on_a_planted_bad_figure(defect):
    check, draw = PLANTED[defect]
    with pytest.raises(AssertionError):
        check(planted(draw))


def test_the_checks_pass_a_figure_that_does_it_right():
    """The counterparts of the planted defects, done right: the checks do not fail everything."""

    def good(axis):
        axis.bar([0, 1], [0.78, 0.79])
        axis.set_ylim(0.6, 0.8)
        axis.set_ylabel("late accuracy, difference from 0.6")
        for i in range(6):  # six learners grouped by style: three colours, two line styles each
            axis.plot(np.linspace(0, 1, 20), 0.62 + 0.01 * i + np.zeros(20), color=f"C{i // 2}", ls=("-", "--")[i % 2])
        axis.text(1.02, 0.5, "outside", transform=axis.transAxes)

    check_figure(planted(good))
    check_figure(planted(lambda a: (diagonal(a), a.legend(loc="upper left"))))


def test_a_kind_of_baseline_has_one_colour_in_every_figure():
    """Issue 39: GRPO's group baseline, PPO's critic and the critic-free moving average keep their colour from one
    figure to the next (they swapped between grpo-vs-ppo's figure and batch-shape's)."""
    from grpo_lab.course.final_answer import LEARNERS, answer_figure

    def colours(figure: Figure, words: dict[str, str]) -> dict[str, set[str]]:
        """The colours of the legend entries whose text starts with each kind's word."""
        legends = [*figure.legends, *(axis.get_legend() for axis in figure.axes if axis.get_legend() is not None)]
        found = {kind: set() for kind in words}
        for legend in legends:
            for handle, text in zip(legend.legend_handles, legend.get_texts()):
                for kind, word in words.items():
                    if text.get_text().startswith(word):
                        found[kind].add(to_hex(handle.get_color()))
        return found

    versus = colours(experiment_figure("grpo-vs-ppo", load_result("grpo-vs-ppo")), {"group": "GRPO", "critic": "PPO critic", "ema": "EMA"})
    shape = colours(experiment_figure("batch-shape", load_result("batch-shape")), {"group": "group", "critic": "learned critic", "ema": "EMA"})
    for kind in versus:
        assert len(versus[kind]) == 1 and versus[kind] == shape[kind], (kind, versus[kind], shape[kind])
    assert len({next(iter(found)) for found in versus.values()}) == 3  # three kinds, three colours
    bars = answer_figure(load_result("grpo-vs-ppo")).axes[0].patches
    by_learner = {learner: to_hex(bar.get_facecolor()) for learner, bar in zip(LEARNERS, bars)}
    assert {by_learner["grpo"]} == versus["group"] and {by_learner["ppo"]} == versus["critic"] and {by_learner["ema"]} == versus["ema"]
