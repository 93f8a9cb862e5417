"""The course's three-sentence answer (notebook 05c) is worded from the numbers it is given."""

from __future__ import annotations

import copy

from grpo_lab.course.final_answer import answer_figure, three_sentence_answer
from grpo_lab.experiments import load_result
from grpo_lab.experiments.catalog import result_cell
from grpo_lab.experiments.stats import format_mean_std


def test_each_sentence_quotes_the_numbers_of_the_result():
    result = load_result("grpo-vs-ppo")
    first, second, third = three_sentence_answer(result)
    grpo = result_cell(result, "grpo")["summary"]
    assert format_mean_std(grpo["late_eval_accuracy"], 3, prose=True) in first
    ratio = result_cell(result, "ppo-g8")["summary"]["time_per_step_s"]["mean"] / grpo["time_per_step_s"]["mean"]
    assert f"{ratio:.1f}x" in second
    assert format_mean_std(grpo["samples_to_target"], 0, prose=True) in third


def test_the_verdict_follows_the_numbers():
    result = copy.deepcopy(load_result("grpo-vs-ppo"))
    accuracy = result_cell(result, "grpo")["summary"]["late_eval_accuracy"]
    accuracy.update(mean=accuracy["mean"] - 0.2, std=0.001)  # GRPO far below the critic on the same batches
    assert "ends below a learned critic" in three_sentence_answer(result)[0]


def test_the_summary_figure_has_two_panels_at_notebook_width():
    figure = answer_figure(load_result("grpo-vs-ppo"))
    assert len(figure.axes) == 2 and figure.get_size_inches()[0] <= 9
