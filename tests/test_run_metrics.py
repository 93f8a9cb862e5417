"""Measures of a training run (experiments/measures.py): steps to target interpolated between
evaluations, and the area under the accuracy curve."""

import pytest

from grpo_lab.experiments.measures import accuracy_auc, run_metrics, target_crossing


def history(points: list[tuple[int, float]]) -> list[dict]:
    """Evaluation records at (step, accuracy), 100 samples and 0.5 s a step."""
    return [{"step": step, "samples": 100 * step, "wall_time": 0.5 * step, "eval_accuracy": accuracy, "reward": 0.0} for step, accuracy in points]


def test_steps_to_target_are_interpolated_between_the_evaluations_around_the_crossing():
    evals = history([(0, 0.5), (5, 0.6), (10, 0.8), (15, 0.9)])
    # 0.7 lies half-way from 0.6 (step 5) to 0.8 (step 10): 7.5 steps, not the grid's 10
    assert target_crossing(evals, 0.7) == pytest.approx({"step": 7.5, "samples": 750.0, "wall_time": 3.75})
    assert target_crossing(evals, 0.5)["step"] == 0  # already there at the start
    assert target_crossing(evals, 0.95) is None and target_crossing(evals, None) is None
    metrics = run_metrics(evals, 0.7)
    assert metrics["steps_to_target"] == pytest.approx(7.5) and metrics["samples_to_target"] == pytest.approx(750)


def test_two_seeds_crossing_between_the_same_two_evaluations_read_differently():
    early, late = history([(0, 0.5), (5, 0.6), (10, 0.9)]), history([(0, 0.5), (5, 0.6), (10, 0.72)])
    assert target_crossing(early, 0.7)["step"] < target_crossing(late, 0.7)["step"] < 10


def test_accuracy_auc_is_the_curves_mean_height():
    assert accuracy_auc(history([(0, 0.5), (10, 0.5)])) == pytest.approx(0.5)
    # trapezoids: 5 x (0.5 + 0.7) / 2 + 5 x (0.7 + 0.7) / 2 = 6.5 over 10 steps
    assert accuracy_auc(history([(0, 0.5), (5, 0.7), (10, 0.7)])) == pytest.approx(0.65)
    # the same late accuracy, reached later: a smaller area
    assert accuracy_auc(history([(0, 0.5), (5, 0.5), (10, 0.7)])) < accuracy_auc(history([(0, 0.5), (5, 0.7), (10, 0.7)]))
    assert run_metrics(history([(0, 0.5), (5, 0.7), (10, 0.7)]))["eval_accuracy_auc"] == pytest.approx(0.65)
