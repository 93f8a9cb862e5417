"""The course's three-sentence answer (notebooks 00 and 05c, the README) is worded from the numbers it is given."""

from __future__ import annotations

import copy
import re
from pathlib import Path

from grpo_lab.course.final_answer import answer_figure, course_answer, three_sentence_answer
from grpo_lab.experiments import load_result
from grpo_lab.experiments.catalog import result_cell
from grpo_lab.experiments.runner import result_path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_each_sentence_quotes_the_numbers_of_the_result():
    result = load_result("grpo-vs-ppo")
    first, second, third = three_sentence_answer(result)
    grpo = result_cell(result, "grpo")["summary"]
    assert f"{grpo['late_eval_accuracy']['mean']:.3f}" in first
    for cell_id in ("ppo", "ema", "ppo-reuse", "ema-reuse"):  # one answer per prompt, once and reused
        assert f"{result_cell(result, cell_id)['summary']['late_eval_accuracy']['mean']:.3f}" in second
    ratio = result_cell(result, "ppo-g8")["summary"]["time_per_step_s"]["mean"] / grpo["time_per_step_s"]["mean"]
    assert f"{ratio:.1f}x" in third
    assert f"{grpo['samples_to_target']['mean']:,.0f}" in third


def test_each_sentence_is_short_enough_to_say_aloud():
    """Issue 39: the answer is said, not recited: no sentence of it over 60 words."""
    for paragraph in course_answer():
        for sentence in re.split(r"(?<=\.) (?=[A-Z])", paragraph):
            assert len(sentence.split()) <= 60, sentence


def test_each_sentence_says_the_finding_first_and_the_numbers_after():
    for sentence in three_sentence_answer(load_result("grpo-vs-ppo")):
        finding, rest = sentence.split(": ", 1)
        assert not re.search(r"\d", finding) and re.search(r"\d", rest), sentence


def with_accuracy(result: dict, cell_id: str, shift: float) -> dict:
    """A copy of the result with one learner's late accuracy moved by ``shift``, its spread made tiny."""
    changed = copy.deepcopy(result)
    accuracy = result_cell(changed, cell_id)["summary"]["late_eval_accuracy"]
    accuracy.update(mean=accuracy["mean"] + shift, std=0.001)
    return changed


def test_the_findings_follow_the_numbers():
    result = load_result("grpo-vs-ppo")
    assert three_sentence_answer(with_accuracy(result, "grpo", -0.2))[0].startswith("GRPO's group baseline costs accuracy")
    assert three_sentence_answer(with_accuracy(result, "grpo", 0.1))[0].startswith("GRPO's group baseline beats")
    wide = with_accuracy(with_accuracy(result, "ppo", 0.1), "ema", 0.1)  # many prompts, one answer each, far ahead
    wide = with_accuracy(wide, "grpo", 0.0)
    assert three_sentence_answer(wide)[1].startswith("What the group pays for is fewer prompts per step, not the missing critic")
    without_critic = with_accuracy(wide, "ema", -0.3)  # the critic-free control far behind PPO
    assert "the critic adds to that" in three_sentence_answer(without_critic)[1].split(":")[0]


def test_a_difference_is_judged_at_the_level_given():
    result = with_accuracy(with_accuracy(load_result("grpo-vs-ppo"), "ppo", 0.0), "grpo", 0.0)
    ppo, grpo = (result_cell(result, c)["summary"]["late_eval_accuracy"] for c in ("ppo", "grpo"))
    ppo.update(mean=grpo["mean"] + 0.02, std=0.01)  # a gap that a lenient level counts and a strict one does not
    assert "above GRPO's" in three_sentence_answer(result, level=0.05)[1]
    assert "within noise of GRPO's" in three_sentence_answer(result, level=1e-6)[1]


def test_the_readme_says_the_answer_the_course_words_from_the_shipped_results():
    """00 and 05c print course_answer(); the README cannot run code, so its words are checked against it."""
    section = README.read_text(encoding="utf-8").split("## The answer\n", 1)[1].split("\n## ", 1)[0]
    assert " ".join(course_answer()) in " ".join(section.split())


def test_the_summary_figure_has_two_panels_at_notebook_width():
    figure = answer_figure(load_result("grpo-vs-ppo"))
    assert len(figure.axes) == 2 and figure.get_size_inches()[0] <= 9


def test_the_practice_sentence_quotes_the_practice_result_and_follows_its_numbers():
    """The answer's sentence on the practice regime (a finite pool, 27-28 token worked answers): finding first, the
    regime's own numbers after, and its findings change with them."""
    from grpo_lab.course.final_answer import practice_sentence

    practice = load_result("grpo-vs-ppo", regime="practice")
    sentence = practice_sentence(practice)
    finding, numbers = sentence.split(": ", 1)
    assert not re.search(r"\d", finding) and "27-28 tokens" in numbers
    for cell_id in ("grpo", "ppo", "ema", "ppo-reuse", "ema-reuse"):
        assert f"{result_cell(practice, cell_id)['summary']['late_eval_accuracy']['mean']:.3f}" in numbers
    assert f"{result_cell(practice, 'grpo')['summary']['best_eval_accuracy']['mean']:.3f}" in numbers
    start = result_cell(practice, "grpo")["summary"]["initial_eval_accuracy"]["mean"]
    assert "GRPO gains held-out accuracy" in practice_sentence(with_accuracy(practice, "grpo", start + 0.2 - accuracy_of(practice, "grpo")))
    assert "below its start" in practice_sentence(with_accuracy(practice, "grpo", start - 0.2 - accuracy_of(practice, "grpo")))
    level = with_accuracy(with_accuracy(with_accuracy(with_accuracy(practice, "ppo", 0.0), "ema", 0.0), "ppo-reuse", 0.0), "ema-reuse", 0.0)
    for cell_id in ("ema", "ema-reuse"):
        result_cell(level, cell_id)["summary"]["late_eval_accuracy"]["mean"] = accuracy_of(level, cell_id.replace("ema", "ppo"))
    assert "a learned critic ends within noise of a critic-free baseline" in practice_sentence(level)
    assert "a learned critic beats a critic-free baseline" in practice_sentence(with_accuracy(level, "ema", -0.3))
    assert "a critic-free baseline beats a learned critic" in practice_sentence(with_accuracy(level, "ema-reuse", 0.3))
    assert "each win one of the two comparisons" in practice_sentence(with_accuracy(with_accuracy(level, "ema", -0.3), "ema-reuse", 0.3))


def accuracy_of(result: dict, cell_id: str) -> float:
    return result_cell(result, cell_id)["summary"]["late_eval_accuracy"]["mean"]


def test_the_answer_adds_the_practice_sentence_where_the_regime_was_measured():
    from grpo_lab.course.drill import verdicts_by_regime
    from grpo_lab.course.final_answer import practice_sentence

    gentle, practice = load_result("grpo-vs-ppo"), load_result("grpo-vs-ppo", regime="practice")
    level = next(iter(verdicts_by_regime()["gentle"].values())).level  # the claims table's, as course_answer judges
    replicated = result_path("grpo-vs-ppo", regime="practice", replicate=True).exists()
    replication = load_result("grpo-vs-ppo", regime="practice", replicate=True) if replicated else None
    assert course_answer(gentle, practice) == [*three_sentence_answer(gentle, level), practice_sentence(practice, level, replication)]
    assert "Not yet checked on fresh seeds." in practice_sentence(practice)
    # fresh seeds that find what the sentence says confirm it; ones that move a finding do not
    assert "fresh seeds find the same" in practice_sentence(practice, replication=practice)
    start = result_cell(practice, "grpo")["summary"]["initial_eval_accuracy"]["mean"]
    moved = with_accuracy(practice, "grpo", start + 0.2 - accuracy_of(practice, "grpo"))  # fresh seeds where GRPO gains
    assert "fresh seeds, GRPO gains held-out accuracy" in practice_sentence(practice, replication=moved)  # names what moved

    assert course_answer() == course_answer(gentle, practice)  # the shipped results: the practice regime's included
