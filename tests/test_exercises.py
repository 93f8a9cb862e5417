"""The exercise checkers: a worked solution passes, a stub is 'not attempted', a wrong answer fails
with a hint, and the course widgets compute what the library computes."""

from __future__ import annotations

import html
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import assert_one_line_naming

from grpo_lab import compute_advantages
from grpo_lab.course import exercises
from grpo_lab.course.widgets import AdvantageCalculator, Question, Quiz, advantage_table, group_diagnosis, parse_rewards

SOLUTIONS = Path(__file__).resolve().parent.parent / "notebooks" / "solutions"

# exercise name -> (checker, the name the solution defines, a plausible wrong answer)
CODE_EXERCISES = {
    "01_score_function": (exercises.check_score_function, "score_function", lambda logits, action: torch.softmax(logits, 0)),
    "02_rloo": (exercises.check_rloo, "rloo", lambda rewards: rewards - rewards.mean(dim=1, keepdim=True)),
    "02_k3": (exercises.check_k3, "k3", lambda logprobs, ref_logprobs: logprobs - ref_logprobs),
    "04_zero_std_groups": (exercises.check_zero_std_groups, "zero_std_groups", lambda rewards: rewards.std(dim=1) < 1e-3),
    "05_gae": (exercises.check_gae, "gae_one_response", lambda reward, values, lam: reward - values),
    "02_grpo_loss": (
        exercises.check_grpo_loss,
        "grpo_loss",
        lambda rewards, *args, **options: (rewards - rewards.mean(dim=1, keepdim=True), None, None),
    ),
    "04_zscore_weight": (exercises.check_zscore_weight, "zscore_weight", lambda p: 1 / (p * (1 - p))),
    "05_ema_baseline": (exercises.check_ema_baseline, "ema_advantages", lambda batches, decay: [rewards - rewards.mean() for rewards in batches]),
}


def solution(name: str, symbol: str):
    namespace: dict = {}
    exec((SOLUTIONS / f"{name}.py").read_text(), namespace)
    return namespace[symbol]


def stub(*_args, **_options):
    raise NotImplementedError  # what an untouched exercise cell defines


@pytest.mark.parametrize("name", CODE_EXERCISES)
def test_worked_solution_passes(name, capsys):
    checker, symbol, _ = CODE_EXERCISES[name]
    checker(solution(name, symbol))
    assert f"[{name}] PASS" in capsys.readouterr().out


@pytest.mark.parametrize("name", CODE_EXERCISES)
def test_untouched_exercise_is_not_attempted(name, capsys):
    checker, _, _ = CODE_EXERCISES[name]
    checker(stub)
    out = capsys.readouterr().out
    assert f"[{name}] NOT ATTEMPTED" in out and f"notebooks/solutions/{name}.py" in out


@pytest.mark.parametrize("name", CODE_EXERCISES)
def test_wrong_answer_fails_with_the_input_and_a_hint(name, capsys):
    checker, _, wrong = CODE_EXERCISES[name]
    checker(wrong)
    out = capsys.readouterr().out
    assert f"[{name}] FAIL" in out and ("Hint:" in out or "shape" in out)


def test_a_crashing_answer_fails_without_a_traceback(capsys):
    exercises.check_rloo(lambda rewards: rewards.undefined_method())
    out = capsys.readouterr().out
    assert "FAIL: calling it with" in out and "raised AttributeError" in out
    exercises.check_rloo(lambda rewards: None)
    assert "you return None" in capsys.readouterr().out
    exercises.check_rloo(lambda rewards: [["x"]])
    assert "not a tensor of numbers" in capsys.readouterr().out


def test_largest_zscore_prediction(capsys):
    exercises.check_largest_zscore(solution("04_largest_zscore", "largest_zscore_g16"), group_size=16)  # as 04b asks it
    assert "[04_largest_zscore] PASS:" in capsys.readouterr().out
    exercises.check_largest_zscore(2.4749, group_size=16)  # G = 8's bound, printed in earlier notebooks, is not the answer
    assert "[04_largest_zscore] FAIL:" in capsys.readouterr().out
    for prediction, outcome in (
        (2.47, "PASS"),
        (2.5, "PASS"),
        (2.4, "FAIL"),
        (1.0, "FAIL"),
        (None, "NOT ATTEMPTED"),
    ):
        exercises.check_largest_zscore(prediction)
        assert f"[04_largest_zscore] {outcome}:" in capsys.readouterr().out


@pytest.mark.parametrize("group_size", [2, 3, 8, 64])
def test_samuelson_bound_is_what_the_library_reaches(group_size):
    rewards = torch.zeros(1, group_size)
    rewards[0, 0] = 1.0
    for ddof in (0, 1):
        reached = float(compute_advantages(rewards, "zscore", std_eps=0.0, std_ddof=ddof).abs().max())
        assert reached == pytest.approx(exercises.largest_zscore(group_size, ddof), rel=1e-5)
    random_groups = torch.rand(500, group_size, generator=torch.Generator().manual_seed(group_size))
    assert float(compute_advantages(random_groups, "zscore", std_eps=0.0).abs().max()) <= exercises.largest_zscore(group_size) + 1e-5


def test_prediction_is_recorded_not_graded(capsys):
    choices = ("rises", "flat", "falls")
    exercises.check_prediction("x", "falls", choices, "rises", "accuracy 0.5 -> 0.7")
    out = capsys.readouterr().out
    assert "[x] PREDICTION RECORDED" in out and "the measurement says 'rises'" in out and "accuracy 0.5 -> 0.7" in out
    exercises.check_prediction("x", None, choices, "rises", "")
    assert "[x] NOT ATTEMPTED" in capsys.readouterr().out
    exercises.check_prediction("x", "up", choices, "rises", "")
    assert "[x] FAIL: prediction='up' is not one of the choices" in capsys.readouterr().out


def test_advantage_calculator_shows_the_library_values():
    calculator = AdvantageCalculator(rewards="1, 0, 0, 1")
    calculator.std_eps.value = 1e-6
    table = calculator.current()
    rewards = torch.tensor([[1.0, 0.0, 0.0, 1.0]])
    assert table["zscore, Bessel std (TRL, verl)"] == pytest.approx(compute_advantages(rewards, "zscore", 1e-6)[0].tolist())
    assert table["rloo: r_i - mean of others"] == pytest.approx(compute_advantages(rewards, "rloo")[0].tolist())
    before = calculator.plot.value
    calculator.set_rewards([1, 0, 0, 0, 0, 0, 0, 0])
    assert calculator.plot.value != before and "r8=0" in calculator.table.value


def test_advantage_calculator_explains_zero_and_tiny_std():
    assert "0/0 = NaN" in group_diagnosis([1.0, 1.0, 1.0], 0.0, "add")
    assert "exactly 0" in group_diagnosis([1.0, 1.0, 1.0], 1e-4, "add")
    assert "noise amplification" in group_diagnosis([0.5, 0.5, 0.5 + 1e-3, 0.5], 1e-6, "add")
    table = advantage_table([1.0, 1.0], std_eps=0.0)
    assert all(value != value for value in table["zscore, Bessel std (TRL, verl)"])  # NaN, shown as such


def test_bad_rewards_text_gives_one_clear_line():
    lines = {}
    for text in ("1, x", "1"):  # not a number; a group of one
        with pytest.raises(ValueError) as caught:
            parse_rewards(text)
        assert_one_line_naming(caught.value, "rewards", repr(text), 2, 64)  # the text, and how many rewards a group takes
        lines[text] = str(caught.value)
    calculator = AdvantageCalculator()
    calculator.rewards_text.value = "1, x"
    assert html.escape(lines["1, x"]) in calculator.message.value  # the calculator shows that line


def test_quiz_gives_immediate_feedback_and_keeps_score():
    quiz = Quiz([Question("q1", ["a", "b"], 1, ["why a", "why b"], "04"), Question("q2", ["c", "d"], 0, ["why c", "why d"])], "zh")
    assert quiz.questions[0].choose(0).startswith("不对。 why a")
    assert "why a" in quiz.questions[0].feedback.value
    quiz.questions[0].choose(1)
    quiz.questions[1].choose(0)
    assert "2 / 2" in quiz.score.value
    with pytest.raises(ValueError) as caught:
        Quiz([], "fr")
    assert_one_line_naming(caught.value, "language", "'fr'", "en", "zh")


def grpo_loss_with(**changes):
    """The worked solution of 02_grpo_loss with one piece replaced by a plausible mistake."""
    right = solution("02_grpo_loss", "grpo_loss")

    def loss(rewards, logprobs, old_logprobs, ref_logprobs, mask, **options):
        if "std_ddof" in changes:
            options = {**options, "std_ddof": changes["std_ddof"]}
        if changes.get("no_clip"):
            options = {**options, "clip_eps": 1e9}
        if changes.get("no_kl"):
            options = {**options, "kl_coef": 0.0}
        if "loss_agg" in changes:
            options = {**options, "loss_agg": changes["loss_agg"]}
        return right(rewards, logprobs, old_logprobs, ref_logprobs, mask, **options)

    return loss


@pytest.mark.parametrize(
    "mistake, piece, case",
    [
        ({"std_ddof": 0}, "advantages", "0/1 rewards, Bessel's std, eps added"),
        ({"no_clip": True}, "per-token loss", "a stale sampler (ratios leave the clip range), no KL"),
        ({"no_kl": True}, "per-token loss", "a stale sampler, with the k3 KL"),
        # token_mean equals seq_mean when every answer has the same length: the first case that tells them apart
        # depends on the lengths the reference policy samples, so only the piece is pinned
        ({"loss_agg": "token_mean"}, "aggregated loss", None),
    ],
)
def test_the_grpo_loss_checker_names_the_first_wrong_piece(mistake, piece, case, capsys):
    exercises.check_grpo_loss(grpo_loss_with(**mistake))
    out = capsys.readouterr().out
    named = f"the first wrong piece is the {piece} in case '{case}'" if case else f"the first wrong piece is the {piece} in case '"
    assert "[02_grpo_loss] FAIL" in out and named in out and "Hint:" in out


def test_the_grpo_loss_checker_asks_for_three_outputs(capsys):
    exercises.check_grpo_loss(lambda *args, **options: 0.0)
    assert "return three things" in capsys.readouterr().out


def test_the_zscore_weight_is_one_over_the_bernoulli_std_for_large_groups():
    for p in (0.1, 0.5, 0.8):
        assert exercises.zscore_weight_exact(p, 256) == pytest.approx(1 / (p * (1 - p)) ** 0.5, rel=0.02)
    assert exercises.zscore_weight_exact(0.05, 8) < 0.7 * exercises.zscore_weight_exact(0.05, 256)  # small groups flatten it


def test_a_lab_prediction_is_compared_with_real_short_runs(capsys):
    from grpo_lab import TrainConfig

    short = dict(steps=4, eval_every=0, probe_every=0, seed=0)
    exercises.check_run_prediction(
        "03_x",
        "G = 16",
        {"G = 2": TrainConfig(group_size=2, **short), "G = 16": TrainConfig(group_size=16, **short)},
        "frac_reward_zero_std",
        tolerance=0.02,
    )
    out = capsys.readouterr().out
    assert "[03_x] PREDICTION RECORDED: you predicted 'G = 16': the measurement says 'G = 2'" in out and "frac_reward_zero_std" in out
    assert "within 0.02" in out  # the rule for 'about the same' is in the feedback
    with pytest.raises(ValueError) as caught:
        exercises.check_run_prediction("03_x", None, {"a": TrainConfig(**short)}, "reward")
    assert_one_line_naming(caught.value, "configs", 1)


@pytest.mark.parametrize(
    "name, symbol",
    [
        ("03_predict_advantages", "prediction_advantages"),
        ("03_predict_zero_std", "prediction_zero_std"),
        ("03_predict_eps_zero", "prediction_eps_zero"),
        ("03_predict_offset", "prediction_offset"),
    ],
)
def test_the_lab_predictions_have_worked_answers(name, symbol):
    assert isinstance(solution(name, symbol), str)


# --- wrong learner answers of every kind: always one verdict, never a traceback ----------------------------------


def on_tensors(value, change):
    """``value`` with ``change`` applied to every tensor inside it (a tuple's or a list's items too; a
    float is a 0-d tensor here)."""
    if isinstance(value, float):
        value = torch.tensor(value)
    if isinstance(value, torch.Tensor):
        return change(value)
    if isinstance(value, (tuple, list)):
        return type(value)(on_tensors(item, change) for item in value)
    return value


def raises(error: Exception):
    def answer(*_args, **_options):
        raise error

    return answer


# (label, how a right function becomes a wrong one, the verdict it must get: None where the change may
# keep the answer right, e.g. float64 or a list of the same numbers)
WRONG_ANSWERS = [
    ("returns None", lambda right: lambda *a, **o: None, "FAIL"),
    ("returns text", lambda right: lambda *a, **o: "about 2.5", "FAIL"),
    ("returns a dict", lambda right: lambda *a, **o: {"answer": right(*a, **o)}, "FAIL"),
    ("returns a generator", lambda right: lambda *a, **o: (x for x in [1.0]), "FAIL"),
    ("returns one big tensor", lambda right: lambda *a, **o: torch.ones(9, 9, dtype=torch.complex64), "FAIL"),
    ("Long tensors", lambda right: lambda *a, **o: on_tensors(right(*a, **o), lambda t: (t > t.float().mean()).long()), None),
    ("bool tensors", lambda right: lambda *a, **o: on_tensors(right(*a, **o), lambda t: t > 0), None),
    ("complex tensors", lambda right: lambda *a, **o: on_tensors(right(*a, **o), lambda t: t * (1 + 1j)), "FAIL"),
    ("float64 tensors", lambda right: lambda *a, **o: on_tensors(right(*a, **o), lambda t: t.double()), None),
    ("tensors needing grad", lambda right: lambda *a, **o: on_tensors(right(*a, **o), lambda t: t.float().requires_grad_()), None),
    ("nested lists", lambda right: lambda *a, **o: on_tensors(right(*a, **o), lambda t: t.tolist()), None),
    (
        "flattened",
        lambda right: lambda *a, **o: on_tensors(right(*a, **o), lambda t: t.reshape(-1)[:-1] if t.numel() > 1 else t.reshape(-1).repeat(2)),
        "FAIL",
    ),
    ("an extra axis", lambda right: lambda *a, **o: on_tensors(right(*a, **o), lambda t: torch.stack([t, t])), "FAIL"),
    ("one number", lambda right: lambda *a, **o: on_tensors(right(*a, **o), lambda t: t.float().sum() * 0 + 7.0), "FAIL"),
    ("NaN", lambda right: lambda *a, **o: on_tensors(right(*a, **o), lambda t: t.float() * float("nan")), "FAIL"),
    ("huge", lambda right: lambda *a, **o: on_tensors(right(*a, **o), lambda t: t.double() * 1e300 * 1e300), "FAIL"),
    ("strings inside", lambda right: lambda *a, **o: on_tensors(right(*a, **o), lambda t: ["x"] * len(t) if t.ndim else "x"), "FAIL"),
    (
        "objects inside",
        lambda right: lambda *a, **o: on_tensors(right(*a, **o), lambda t: [object()] * max(len(t), 1) if t.ndim else object()),
        "FAIL",
    ),
    (
        "mutates its input after answering",
        lambda right: lambda *a, **o: (right(*a, **o), on_tensors(a[0], lambda t: t.mul_(0) if t.is_floating_point() else t))[0],
        "PASS",
    ),
    ("raises ValueError", lambda right: raises(ValueError("a bug in my code")), "FAIL"),
    ("raises ZeroDivisionError", lambda right: raises(ZeroDivisionError("division by zero")), "FAIL"),
    ("raises torch's NotImplementedError", lambda right: raises(NotImplementedError("\"round_cpu\" not implemented for 'Long'")), "FAIL"),
    ("raises RecursionError", lambda right: raises(RecursionError("maximum recursion depth exceeded")), "FAIL"),
    ("is not a function", lambda right: 42, "FAIL"),
]


def wrong_cases():
    for name in CODE_EXERCISES:
        for label, make, outcome in WRONG_ANSWERS:
            yield pytest.param(name, make, outcome, id=f"{name}-{label}")


def only_verdict(name: str, out: str) -> str:
    lines = out.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"[{name}] "), out
    return lines[0].split("] ", 1)[1].split(":", 1)[0]


@pytest.mark.parametrize("name, make, outcome", list(wrong_cases()))
def test_every_kind_of_wrong_answer_gets_one_verdict(name, make, outcome, capsys):
    checker, symbol, _ = CODE_EXERCISES[name]
    checker(make(solution(name, symbol)))
    out = capsys.readouterr().out
    got = only_verdict(name, out)
    assert got == outcome if outcome else got in ("PASS", "FAIL"), out  # a wrong answer is never mistaken for an untouched cell
    assert "Traceback" not in out and len(out) < 1500, out


def test_the_issue_examples_get_a_verdict(capsys):
    exercises.check_rloo(lambda r: (r > r.mean(1, keepdim=True)).long())
    assert only_verdict("02_rloo", capsys.readouterr().out) == "FAIL"
    exercises.check_grpo_loss(lambda *args, **options: (None, None, None))
    assert only_verdict("02_grpo_loss", capsys.readouterr().out) == "FAIL"
    exercises.check_ema_baseline(lambda batches, decay: [None] * len(batches))
    assert only_verdict("05_ema_baseline", capsys.readouterr().out) == "FAIL"
    exercises.check_largest_zscore("about 2.5")
    out = capsys.readouterr().out
    assert only_verdict("04_largest_zscore", out) == "FAIL" and "2.5" in out


@pytest.mark.parametrize(
    "prediction",
    ["about 2.5", "2.5", "", b"2.5", True, float("nan"), float("inf"), 10**400, 2.5 + 0j, [2.5], (2.5, 1.0), {}, object(), torch.tensor([2.5, 1.0])],
    ids=repr,
)
def test_a_prediction_that_is_not_one_number_fails_with_a_hint(prediction, capsys):
    exercises.check_largest_zscore(prediction)
    out = capsys.readouterr().out
    assert only_verdict("04_largest_zscore", out) == "FAIL" and "Hint" in out, out


@pytest.mark.parametrize("prediction", [2.4748737341529163, torch.tensor(2.475), torch.tensor([2.475]), np.float32(2.475)], ids=repr)
def test_a_prediction_held_in_a_tensor_or_numpy_number_is_read(prediction, capsys):
    exercises.check_largest_zscore(prediction)
    assert only_verdict("04_largest_zscore", capsys.readouterr().out) == "PASS"


@pytest.mark.parametrize("prediction", [1, 2.5, ["rises"], torch.tensor([1.0, 2.0]), np.array(["rises", "flat"]), object()], ids=repr)
def test_a_choice_prediction_that_is_not_text_fails(prediction, capsys):
    exercises.check_prediction("x", prediction, ("rises", "flat"), "rises", "")
    assert only_verdict("x", capsys.readouterr().out) == "FAIL"


def test_checker_messages_show_inputs_to_float32_precision_without_float_noise(capsys):
    """0.5 + 1e-6 must not print as 0.5 (the case would look like a tie), nor 2/3 as 0.666700005531311."""
    from grpo_lab.course.exercises import check_zero_std_groups, readable_value

    check_zero_std_groups(lambda rewards: rewards.std(dim=1) < 1e-3)  # a tolerance hides the 1e-6 spread
    out = capsys.readouterr().out
    assert "FAIL" in out and "0.500001" in out, out
    assert readable_value(torch.tensor([0.6667])) == "[0.6667]"


def test_numbers_set_side_by_side_in_a_verdict_print_apart_when_they_differ():
    """'you give 0.5, expected 0.5' is no help: a verdict shows as many digits as it takes (float32's 7 at most)."""
    from grpo_lab.course.exercises import distinct, first_difference

    assert distinct(0.55213, 0.55231, digits=3) == ["0.5521", "0.5523"]
    assert distinct(float(torch.tensor(2 / 3)), 0.6667) == ["0.66667", "0.6667"]
    assert distinct(0.25, 0.25) == ["0.25", "0.25"]
    got, expected = torch.tensor([1.0, 0.5]), torch.tensor([1.0, 0.50012])
    assert first_difference(got, expected) == "0.5 at index [1], expected 0.50012"


def test_find_the_bug_passes_only_the_batch_mean_line(capsys):
    from grpo_lab.course.exercises import BUGGY_LINE, check_find_the_bug

    for line in (1, 2, 3, 4, None, 7):
        check_find_the_bug(line)
        out = capsys.readouterr().out
        assert ("PASS" in out) == (line == BUGGY_LINE), (line, out)
        if line == BUGGY_LINE:  # both advantage tables whole and rounded, not float32 digits cut mid-number
            assert "[[0.935, 0.935, 0.935, -0.935], [-0.935, -0.935, -0.935, 0.935]]" in out and "[[0.5, 0.5, 0.5, -1.5]," in out, out


# exercises worked out by hand: exercise name -> (checker, the name the solution defines, a plausible wrong answer)
BY_HAND = {
    "02c_rloo_by_hand": (exercises.check_rloo_by_hand, "rloo_by_hand", {"right": 0.75, "wrong": -0.25, "ratio_to_mean": 1.0}),
    "02_k3_by_hand": (  # x taken the wrong way round (pi / pi_ref): k3 of the two tokens swapped
        exercises.check_k3_by_hand,
        "k3_by_hand",
        {"k1_liked": 1.0986, "k3_liked": 0.9014, "k1_disliked": -1.0986, "k3_disliked": 0.4319},
    ),
}


@pytest.mark.parametrize("name", BY_HAND)
def test_by_hand_exercises_pass_the_solution_and_fail_a_plausible_slip(name, capsys):
    checker, symbol, wrong = BY_HAND[name]
    checker(solution(name, symbol))
    assert f"[{name}] PASS" in capsys.readouterr().out
    checker(None)
    assert f"[{name}] NOT ATTEMPTED" in capsys.readouterr().out
    checker(wrong)
    out = capsys.readouterr().out
    assert f"[{name}] FAIL" in out and "Hint:" in out
    checker({"right": 1.0})
    assert "exactly the keys" in capsys.readouterr().out


def test_a_live_comparison_trains_each_run_and_reads_its_verdict_from_the_runs(capsys):
    from grpo_lab.course.live import comparison_line, late_accuracy, live_comparison

    runs = live_comparison({"eps 1e-4": {"reference": "weak", "std_eps": 1e-4}, "eps 0": {"reference": "weak", "std_eps": 0.0}}, steps=3)
    out = capsys.readouterr().out
    assert [label for label, _ in runs] == ["eps 1e-4", "eps 0"] and "eps 0" in out and "failed: " in out and "std_eps is 0" in out
    assert "cannot be compared" in out
    history = [{"step": 0, "eval_accuracy": 0.5}, {"step": 5, "eval_accuracy": 0.6}, {"step": 10, "eval_accuracy": 0.7}]
    assert late_accuracy(history) == 0.7
    assert "ends 0.100 above" in comparison_line("a", 0.7, "b", 0.6) and "about the same" in comparison_line("a", 0.61, "b", 0.6)
    assert "about the same" not in comparison_line("a", 0.63, "b", 0.6)


# --- answers that game a checker: a test on the std, a near miss, a function that exits, floods or hangs -----------


@pytest.mark.parametrize(
    "answer",
    [
        lambda rewards: rewards.std(dim=1) == 0,
        lambda rewards: rewards.var(dim=1) == 0,
        lambda rewards: rewards.std(dim=1) < 1e-5,  # no threshold separates float32 copies from a 1e-6 spread
        lambda rewards: torch.isclose(rewards, rewards[:, :1]).all(dim=1),
    ],
    ids=["std == 0", "var == 0", "std < 1e-5", "isclose"],
)
def test_zero_std_groups_fails_a_test_on_the_std(answer, capsys):
    exercises.check_zero_std_groups(answer)
    assert only_verdict("04_zero_std_groups", capsys.readouterr().out) == "FAIL"


def test_zero_std_groups_says_why_the_exact_zero_test_fails(capsys):
    exercises.check_zero_std_groups(lambda rewards: rewards.std(dim=1) == 0)
    out = capsys.readouterr().out
    copies_std = float(torch.full((1, 16), 100.7).std(dim=1)[0])
    assert copies_std > 0  # the premise: torch's std of float32 copies of one reward is not 0
    assert "100.7" in out and f"{copies_std:.1e}" in out, out  # the group that failed, and its std
    exercises.check_zero_std_groups(lambda rewards: rewards.max(dim=1).values == rewards.min(dim=1).values)
    assert only_verdict("04_zero_std_groups", capsys.readouterr().out) == "PASS"


def off_by(right, relative: float, absolute: float = 0.0):
    """``right`` with every number of its answer moved up by relative * |x| + absolute (in float64, so the move survives)."""
    return lambda *a, **o: on_tensors(right(*a, **o), lambda t: t.double() + relative * t.double().abs() + absolute)


# exercise -> (moves that stay within its tolerance, moves just outside it): (relative, absolute). The tensor
# checkers allow float32 rounding (1e-5 + 1e-4 |x|); zscore_weight 3% of the exact expectation
CODE_TOLERANCES = {name: ([(2e-5, 2e-6)], [(3e-4, 0.0), (-3e-4, 0.0), (0.0, 3e-5)]) for name in CODE_EXERCISES if name != "04_zero_std_groups"}
CODE_TOLERANCES["04_zscore_weight"] = ([(0.02, 0.0), (-0.02, 0.0)], [(0.04, 0.0), (-0.04, 0.0)])
RIGHT_ANSWERS = {"04_zscore_weight": lambda p: exercises.zscore_weight_exact(p, 256)}  # the exact value, not the large-G formula


@pytest.mark.parametrize("name", CODE_TOLERANCES)
def test_every_code_checker_fails_an_answer_just_outside_its_tolerance(name, capsys):
    checker, symbol, _ = CODE_EXERCISES[name]
    right = RIGHT_ANSWERS.get(name) or solution(name, symbol)
    within, outside = CODE_TOLERANCES[name]
    for move in within:
        checker(off_by(right, *move))
        assert only_verdict(name, capsys.readouterr().out) == "PASS", move
    for move in outside:
        checker(off_by(right, *move))
        assert only_verdict(name, capsys.readouterr().out) == "FAIL", move


@pytest.mark.parametrize("name", BY_HAND)
def test_by_hand_numbers_must_be_right_to_three_decimals(name, capsys):
    checker, symbol, _ = BY_HAND[name]
    exact = solution(name, symbol)
    cases = [
        ({key: round(value, 3) for key, value in exact.items()}, "PASS"),
        ({key: value + 4e-4 for key, value in exact.items()}, "PASS"),
        ({key: round(value, 2) for key, value in exact.items()}, "FAIL"),  # rounded numbers
        ({key: value + 2e-3 for key, value in exact.items()}, "FAIL"),
    ]
    for predictions, outcome in cases:
        checker(predictions)
        assert only_verdict(name, capsys.readouterr().out) == outcome, predictions


def test_largest_zscore_fails_a_prediction_just_outside_its_tolerance_and_says_which_side(capsys):
    bound = exercises.largest_zscore(8)
    for prediction, outcome in ((bound * 1.015, "PASS"), (bound * 0.985, "PASS"), (bound * 1.03, "FAIL"), (bound * 0.97, "FAIL")):
        exercises.check_largest_zscore(prediction)
        out = capsys.readouterr().out
        assert only_verdict("04_largest_zscore", out) == outcome, prediction
        if outcome == "FAIL":  # it says which side the prediction is on, and never prints the answer
            assert f"{bound:.4f}" not in out and ("above the bound" in out) == (prediction > bound), out


def test_every_checker_is_pinned_by_a_tolerance_test_or_grades_exactly():
    pinned = {CODE_EXERCISES[name][0].__name__ for name in CODE_TOLERANCES} | {BY_HAND[name][0].__name__ for name in BY_HAND}
    pinned |= {"check_zero_std_groups", "check_largest_zscore"}
    exact = {"check_prediction", "check_run_prediction", "check_find_the_bug"}  # choices and line numbers
    helpers = {"check_against_reference", "check_predicted_numbers"}  # pinned through the checkers that use them
    assert {name for name in dir(exercises) if name.startswith("check_")} == pinned | exact | helpers


def right_rloo(rewards):
    return compute_advantages(rewards, "rloo")


def spin(rewards):
    while True:
        pass


def spin_past_except(rewards):
    while True:
        try:
            time.sleep(0.01)
        except Exception:  # a learner's catch-all cannot swallow the time limit
            pass


def print_forever(rewards):
    while True:
        print("debug " * 20)


# (label, a learner function, what the one FAIL line must name)
MISBEHAVING = [
    ("sys.exit()", lambda rewards: sys.exit(1), "SystemExit"),
    ("raise SystemExit", raises(SystemExit(0)), "SystemExit"),
    ("raise KeyboardInterrupt", raises(KeyboardInterrupt()), "KeyboardInterrupt"),
    ("prints megabytes", lambda rewards: print("x" * 5_000_000) or right_rloo(rewards), "5,000,001"),
    ("prints forever", print_forever, "2,000"),
    ("loops forever", spin, "0.5 s"),
    ("loops past except Exception", spin_past_except, "0.5 s"),
    ("sleeps", lambda rewards: time.sleep(1.5), "0.5 s"),
]


@pytest.mark.parametrize("label, function, named", MISBEHAVING, ids=[m[0] for m in MISBEHAVING])
def test_a_function_that_exits_floods_or_hangs_gets_one_fail_line(label, function, named, capsys, monkeypatch):
    monkeypatch.setattr(exercises, "TIME_LIMIT_S", 0.5)
    started = time.perf_counter()
    exercises.check_rloo(function)
    out = capsys.readouterr().out
    assert only_verdict("02_rloo", out) == "FAIL" and named in out and len(out) < 1500, out
    assert time.perf_counter() - started < 3.0
    if label != "sleeps":  # a Python loop is stopped; a sleep ends on its own
        assert not any(thread.name == "learner function" and thread.is_alive() for thread in threading.enumerate())


@pytest.mark.skipif(not hasattr(signal, "pthread_kill"), reason="needs POSIX signals")
def test_ctrl_c_while_a_function_runs_stops_it_with_one_fail_line(capsys):
    main = threading.main_thread().ident

    def press_stop_then_spin(rewards):
        signal.pthread_kill(main, signal.SIGINT)  # the notebook's stop button, while the checker waits
        spin(rewards)

    exercises.check_rloo(press_stop_then_spin)
    out = capsys.readouterr().out
    assert only_verdict("02_rloo", out) == "FAIL" and "KeyboardInterrupt" in out, out
    assert not any(thread.name == "learner function" and thread.is_alive() for thread in threading.enumerate())


def test_what_a_function_prints_is_shown_above_its_verdict(capsys):
    exercises.check_rloo(lambda rewards: print("shape", tuple(rewards.shape)) or right_rloo(rewards))
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "shape (1, 4)" and lines[-1].startswith("[02_rloo] PASS"), lines


@pytest.mark.notebook
def test_a_kernel_survives_exit_and_a_hang_in_a_checked_function():
    """In Jupyter, exit() asks the kernel to shut down instead of raising: the checker turns it into a
    verdict, and the kernel keeps running the next cells after a time-out."""
    import nbformat
    from nbclient import NotebookClient

    cells = [
        "from grpo_lab.course import exercises\nexercises.TIME_LIMIT_S = 0.5",
        "def leave(rewards):\n    exit()\n\nexercises.check_rloo(leave)",
        "def spin(rewards):\n    while True:\n        pass\n\nexercises.check_rloo(spin)",
        "print('exit_now', get_ipython().exit_now)\nexercises.check_rloo(lambda r: r - (r.sum(1, keepdim=True) - r) / (r.shape[1] - 1))",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    NotebookClient(notebook, timeout=60, kernel_name="python3").execute()
    outputs = ["".join(output.get("text", "") for output in cell.outputs) for cell in notebook.cells]
    assert outputs[1].startswith("[02_rloo] FAIL") and "SystemExit" in outputs[1], outputs
    assert outputs[2].startswith("[02_rloo] FAIL") and "0.5 s" in outputs[2], outputs
    assert outputs[3].startswith("exit_now False") and "[02_rloo] PASS" in outputs[3], outputs  # the kernel still checks
