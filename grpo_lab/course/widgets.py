"""Two small course widgets: the advantage calculator (notebook 02) and self-check quizzes (06).

Each is a thin wrapper: the calculator's numbers come from ``compute_advantages`` and its logic
(``advantage_table``) is a plain function, so it can be tested without a browser.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import ipywidgets as widgets
import torch
from matplotlib.figure import Figure

from ..checks.arguments import compute_advantages
from ..plots import figure_png
from .text_files import load_text

MAX_CALCULATOR_GROUP = 64
EPSILON_CHOICES = (
    ("0 (no guard)", 0.0),
    ("1e-9 (OpenRLHF)", 1e-9),
    ("1e-8 (the card)", 1e-8),
    ("1e-6 (verl)", 1e-6),
    ("1e-4 (TRL)", 1e-4),
    ("1e-2", 1e-2),
    ("0.1", 0.1),
)
CALCULATOR_ROWS = (  # (label, compute_advantages keyword arguments); z-score rows take the chosen eps
    ("none: r_i", {"baseline": "none"}),
    ("mean: r_i - mean", {"baseline": "mean"}),
    ("rloo: r_i - mean of others", {"baseline": "rloo"}),
    ("ema: r_i - b", {"baseline": "ema"}),
    ("zscore, Bessel std (TRL, verl)", {"baseline": "zscore", "std_ddof": 1}),
    ("zscore, population std", {"baseline": "zscore", "std_ddof": 0}),
)


def parse_rewards(text: str) -> list[float]:
    """'1, 0, 0.5' -> [1.0, 0.0, 0.5]; a bad entry raises one ValueError naming the input."""
    try:
        values = [float(part) for part in text.replace(";", ",").split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"rewards={text!r} is not valid: write 2 to {MAX_CALCULATOR_GROUP} numbers separated by commas, e.g. 1, 0, 0, 1") from None
    if not 2 <= len(values) <= MAX_CALCULATOR_GROUP:
        raise ValueError(f"rewards={text!r} is not valid: a group needs 2 to {MAX_CALCULATOR_GROUP} rewards, got {len(values)}")
    if not all(torch.isfinite(torch.tensor(values))):
        raise ValueError(f"rewards={text!r} is not valid: every reward must be a finite number")
    return values


def advantage_table(rewards: list[float], std_eps: float = 1e-4, eps_mode: str = "add", ema_value: float = 0.0) -> dict[str, list[float]]:
    """The advantage of each response of one group under every baseline: {row label: [G] floats}.
    NaN marks 0/0 (all-equal rewards with std_eps = 0)."""
    group = torch.tensor([rewards], dtype=torch.float32)
    table = {}
    for label, options in CALCULATOR_ROWS:
        if options["baseline"] == "zscore":
            options = {**options, "std_eps": std_eps, "eps_mode": eps_mode}
        table[label] = compute_advantages(group, ema_value=ema_value, **options)[0].tolist()
    return table


def group_diagnosis(rewards: list[float], std_eps: float, eps_mode: str) -> str:
    """One sentence about this group's std: zero, tiny (noise amplified) or ordinary."""
    group = torch.tensor(rewards, dtype=torch.float64)
    std = float(group.std(correction=1))
    guard = f"max(std, {std_eps:g})" if eps_mode == "clamp" else f"std + {std_eps:g}"
    if std == 0:
        if std_eps == 0:
            return "All rewards are equal: std = 0 and eps = 0, so the z-score is 0/0 = NaN (the trainer stops a run here)."
        return f"All rewards are equal: std = 0, so the z-score is 0 / ({guard}) = exactly 0: no signal, no explosion."
    spread = float(group.max() - group.min())
    largest = float(compute_advantages(group[None].float(), "zscore", std_eps, eps_mode=eps_mode).abs().max())
    if std < 1e-2 and largest > 0.1:
        return (
            f"The rewards differ by only {spread:.3g} (std {std:.3g}), yet dividing by {guard} blows that difference up "
            f"to advantages of size {largest:.3g}: noise amplification, the real 'sigma -> 0' problem."
        )
    if std < 1e-2:
        return (
            f"The rewards differ by only {spread:.3g} (std {std:.3g}); here eps dominates {guard}, so the z-scored "
            f"advantages stay small (largest {largest:.3g}): a large enough eps damps the amplification."
        )
    return f"Reward std {std:.3g} (Bessel), mean {float(group.mean()):.3g}; largest z-scored |advantage| {largest:.3g}."


def table_html(rewards: list[float], table: dict[str, list[float]]) -> str:
    def cell(value: float) -> str:
        if value != value:  # NaN
            return '<td style="color:#b00;text-align:right">NaN</td>'
        shade = "#1f6f3f" if value > 1e-12 else "#9b1c1c" if value < -1e-12 else "#555"
        return f'<td style="color:{shade};text-align:right;font-family:monospace">{value:+.3f}</td>'

    header = "".join(f'<th style="text-align:right">r{index + 1}={reward:g}</th>' for index, reward in enumerate(rewards))
    rows = "".join(f"<tr><td>{html.escape(label)}</td>{''.join(cell(v) for v in values)}</tr>" for label, values in table.items())
    return f'<table style="border-collapse:collapse"><tr><th style="text-align:left">baseline</th>{header}</tr>{rows}</table>'


def table_figure(rewards: list[float], table: dict[str, list[float]]) -> Figure:
    """Grouped bars: one colour per baseline, one group of bars per response."""
    figure = Figure(figsize=(8, 3), layout="constrained")
    axis = figure.subplots()
    width = 0.8 / len(table)
    for row, (label, values) in enumerate(table.items()):
        finite = [v if v == v else 0.0 for v in values]
        axis.bar([i + row * width for i in range(len(rewards))], finite, width=width, label=label)
    axis.axhline(0, color="black", lw=0.8)
    axis.set_xticks([i + 0.4 - width / 2 for i in range(len(rewards))], [f"r={r:g}" for r in rewards])
    axis.set(ylabel="advantage", title="Advantage of each response under each baseline")
    axis.legend(fontsize=7, ncols=2)
    axis.grid(alpha=0.3, axis="y")
    return figure


class AdvantageCalculator(widgets.VBox):
    """Edit one group's rewards, pick epsilon and its form, and see every baseline's advantages."""

    def __init__(self, rewards: str = "1, 0, 0, 0, 0, 0, 0, 1", std_eps: float = 1e-4, ema_value: float = 0.5) -> None:
        self.rewards_text = widgets.Text(value=rewards, description="rewards", layout=widgets.Layout(width="480px"), continuous_update=False)
        self.std_eps = widgets.Dropdown(options=EPSILON_CHOICES, value=std_eps, description="std_eps")
        self.eps_mode = widgets.ToggleButtons(
            options=[("std + eps (TRL, verl)", "add"), ("max(std, eps) (the card)", "clamp")], value="add", description="eps form"
        )
        self.ema_value = widgets.FloatText(value=ema_value, description="ema b", layout=widgets.Layout(width="180px"))
        self.message = widgets.HTML()
        self.table = widgets.HTML()
        self.plot = widgets.Image(format="png")
        for control in (self.rewards_text, self.std_eps, self.eps_mode, self.ema_value):
            control.observe(lambda _change: self.refresh(), names="value")
        super().__init__([self.rewards_text, widgets.HBox([self.std_eps, self.ema_value]), self.eps_mode, self.message, self.table, self.plot])
        self.refresh()

    def set_rewards(self, rewards: list[float]) -> None:
        self.rewards_text.value = ", ".join(f"{r:g}" for r in rewards)

    def current(self) -> dict[str, list[float]]:
        """The table now shown (raises ValueError for unparsable rewards)."""
        return advantage_table(parse_rewards(self.rewards_text.value), self.std_eps.value, self.eps_mode.value, self.ema_value.value)

    def refresh(self) -> None:
        try:
            rewards = parse_rewards(self.rewards_text.value)
        except ValueError as error:
            self.message.value = f'<span style="color:#b00">{html.escape(str(error))}</span>'
            return
        table = advantage_table(rewards, self.std_eps.value, self.eps_mode.value, self.ema_value.value)
        self.message.value = html.escape(group_diagnosis(rewards, self.std_eps.value, self.eps_mode.value))
        self.table.value = table_html(rewards, table)
        self.plot.value = figure_png(table_figure(rewards, table))


@dataclass
class Question:
    """A multiple-choice question: ``why[i]`` explains option i, right or wrong."""

    prompt: str
    options: list[str]
    answer: int
    why: list[str]
    source: str = ""  # where the course measures it, e.g. "04_pitfalls, section 1"


class QuizQuestion(widgets.VBox):
    """One question; choosing an option shows at once whether it is right and why."""

    def __init__(self, question: Question, number: int, labels: dict[str, str]) -> None:
        self.question = question
        self.labels = labels
        self.choices = widgets.RadioButtons(
            options=[(text, index) for index, text in enumerate(question.options)], value=None, layout=widgets.Layout(width="auto")
        )
        self.feedback = widgets.HTML()
        self.choices.observe(lambda change: self.choose(change["new"]), names="value")
        super().__init__([widgets.HTML(f"<b>{number}. {html.escape(question.prompt)}</b>"), self.choices, self.feedback])

    @property
    def correct(self) -> bool:
        return self.choices.value == self.question.answer

    def choose(self, index: int | None) -> str:
        """Select option ``index`` (as a click would) and return the feedback text shown."""
        if index is None:
            return ""
        if self.choices.value != index:
            self.choices.value = index  # the observer calls back here with the same index
            return self.feedback_text(index)
        self.feedback.value = self.feedback_html(index)
        return self.feedback_text(index)

    def feedback_text(self, index: int) -> str:
        verdict = self.labels["right"] if index == self.question.answer else self.labels["wrong"]
        source = f" ({self.labels['see']} {self.question.source})" if self.question.source else ""
        return f"{verdict} {self.question.why[index]}{source}"

    def feedback_html(self, index: int) -> str:
        colour = "#1f6f3f" if index == self.question.answer else "#9b1c1c"
        return f'<div style="color:{colour};margin-left:1em">{html.escape(self.feedback_text(index))}</div>'


class Quiz(widgets.VBox):
    """Several questions and a running score."""

    LABELS: dict[str, dict[str, str]] = load_text("labels.json", lambda text: text["quiz"])  # by language (text/labels.json)

    def __init__(self, questions: list[Question], language: str = "en") -> None:
        if language not in self.LABELS:
            raise ValueError(f"language={language!r} is not valid: choose one of {', '.join(self.LABELS)}")
        self.labels = self.LABELS[language]
        self.questions = [QuizQuestion(question, number, self.labels) for number, question in enumerate(questions, 1)]
        self.score = widgets.HTML()
        for question in self.questions:
            question.choices.observe(lambda _change: self.update_score(), names="value")
        super().__init__([*self.questions, self.score])
        self.update_score()

    def update_score(self) -> None:
        answered = sum(q.choices.value is not None for q in self.questions)
        right = sum(q.correct for q in self.questions)
        self.score.value = f"<b>{self.labels['score']}: {right} / {len(self.questions)}</b> ({answered} answered)"
