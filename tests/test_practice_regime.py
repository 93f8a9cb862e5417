"""The practice regime (docs/practice-regime.md): worked answers whose final result alone is rewarded,
a fixed prompt pool revisited epoch after epoch, and the reference its rule chose."""

from __future__ import annotations

import json
import re

import pytest
import torch
from conftest import assert_one_line_error

from grpo_lab.core.config import TrainConfig
from grpo_lab.core.model import EOS_ID, PAD_ID, decode, encode
from grpo_lab.errors import ConfigError
from grpo_lab.experiments.measures import run_metrics
from grpo_lab.task import ProblemSampler, RewardModel, Task, eval_problems, make_batch, problem_of_prompt, solve

WORKED = Task.parse("3d+w")
STEP = re.compile(r"(\d)\+(\d)(?:\+([01]))?=(\d\d)")


def response_tokens(texts: list[str], length: int = WORKED.max_answer_length) -> torch.Tensor:
    """Answer texts -> [N, length] token ids: each text, EOS, then padding."""
    return torch.tensor([encode(text) + [EOS_ID] + [PAD_ID] * (length - len(text) - 1) for text in texts])


def test_the_worked_task_parses_and_names_itself():
    assert WORKED == Task(3, "+", worked=True) and WORKED.name == "3d+w" and Task.parse(WORKED.name) == WORKED
    assert Task.parse("3d+") == Task(3, "+") != WORKED  # the plain task is unchanged
    assert WORKED.prompt(347, "+", 586) == "=347+586=" and WORKED.prompt_length == 9
    for bad in ("3d-w", "3d+-w", "3dw+", "6d+w", "3d+ww"):
        with pytest.raises(ConfigError) as caught:
            Task.parse(bad)
        assert_one_line_error(caught.value, "task", bad)
    with pytest.raises(ConfigError) as caught:
        Task(2, "*", worked=True)
    assert_one_line_error(caught.value, "worked", True)


@pytest.mark.parametrize("a, b", [(347, 586), (999, 999), (1, 2), (500, 500), (0, 0), (91, 9)])
def test_the_worked_answer_reads_back_as_its_problem_and_result(a, b):
    """Each step adds the column's digits of a and b and the carry the step before wrote; the last
    '=' gives the sum; prompt and answer survive the vocabulary (encode, decode) unchanged."""
    text = WORKED.target(a, "+", b)
    steps, _, result = text.rpartition("=")
    assert result == solve(a, "+", b)
    columns = STEP.findall(steps)
    assert "".join(f"{x}+{y}{'+' + c if c else ''}={s}" for x, y, c, s in columns) == steps and len(columns) == 3
    carry = 0
    for column, (x, y, written_carry, total) in enumerate(columns):
        assert (int(x), int(y)) == (a // 10**column % 10, b // 10**column % 10)
        assert written_carry == ("" if column == 0 else str(carry))
        assert int(total) == int(x) + int(y) + carry
        carry = int(total) // 10
    assert len(text) + 1 <= WORKED.max_answer_length  # EOS included
    assert decode(encode(WORKED.prompt(a, "+", b) + text) + [EOS_ID]) == WORKED.prompt(a, "+", b) + text
    assert problem_of_prompt(tuple(encode(WORKED.prompt(a, "+", b))))[0] == solve(a, "+", b)
    batch = make_batch(WORKED, [(a, "+", b)])
    assert batch.targets == [text] and batch.answers == [result] and batch.correct([text]).tolist() == [True]


def test_answers_average_at_least_15_tokens_and_the_longest_fits():
    batch = ProblemSampler(WORKED, seed=0).sample(500)
    lengths = [len(target) + 1 for target in batch.targets]  # EOS included
    assert sum(lengths) / len(lengths) >= 15 and max(lengths) == WORKED.max_answer_length == 28


def test_only_the_final_result_is_rewarded_whatever_the_steps_say():
    right = WORKED.target(347, "+", 586)  # ...=933
    wrong_steps_right_result = "1+1=022+2+0=043+3+0=06=933"
    right_steps_wrong_result = right[:-3] + "934"
    no_steps = "=933"
    no_result = right.rpartition("=")[0]  # stops after the last step: its '=09' is what it answers
    responses = [right, wrong_steps_right_result, right_steps_wrong_result, no_steps, no_result, "933"]
    prompts = torch.tensor([encode(WORKED.prompt(347, "+", 586))] * len(responses))
    rewards, correct = RewardModel().score(prompts, response_tokens(responses))
    assert rewards.tolist() == [1, 1, 0, 1, 0, 1] and correct.tolist() == rewards.tolist()
    assert make_batch(WORKED, [(347, "+", 586)] * len(responses)).correct(responses).tolist() == [1, 1, 0, 1, 0, 1]
    partial, _ = RewardModel("partial").score(prompts[:3], response_tokens(responses[:3]))
    assert partial.tolist() == pytest.approx([1.0, 1.0, 2 / 3])  # on the final result, not the steps


def test_a_plain_prompt_is_still_scored_on_its_whole_answer():
    prompts = torch.tensor([encode("347+586=")] * 3)
    rewards, _ = RewardModel().score(prompts, response_tokens(["933", "1=933", "7+6=13=933"], 12))
    assert rewards.tolist() == [1, 0, 0]


@pytest.mark.parametrize("task_spec, pool_size", [("3d+w", 256), ("2d+", 40), ("1d+", 100)])
def test_a_pool_sampler_yields_only_its_pool_every_problem_once_an_epoch_and_never_an_eval_problem(task_spec, pool_size):
    task = Task.parse(task_spec)
    sampler = ProblemSampler(task, seed=3, pool_size=pool_size)
    pool = set(sampler.pool)
    assert len(pool) == pool_size
    held_out = set(eval_problems(task)) if task.digits > 1 else set()  # a 1-digit task's whole space is its eval set
    assert not pool & held_out
    drawn = [sampler.sample(16).texts for _ in range(-(-3 * pool_size // 16))]  # at least three epochs
    texts = [text for batch in drawn for text in batch]
    assert set(texts) == {task.prompt(*problem) for problem in pool}
    for epoch in range(3):  # each epoch visits every pool problem exactly once
        assert sorted(texts[epoch * pool_size : (epoch + 1) * pool_size]) == sorted(task.prompt(*problem) for problem in pool)
    other_seed = ProblemSampler(task, seed=4, pool_size=pool_size)
    assert other_seed.pool == sampler.pool  # one data set for every run seed
    assert ProblemSampler(task, seed=4, pool_size=pool_size).sample(pool_size).texts != ProblemSampler(task, 3, pool_size).sample(pool_size).texts


def test_a_pool_of_zero_draws_fresh_problems_as_before():
    assert ProblemSampler(WORKED, seed=5).sample(64).texts == ProblemSampler(WORKED, seed=5, pool_size=0).sample(64).texts
    assert len(set(ProblemSampler(Task.parse("3d+"), seed=5).sample(512).texts)) > 500  # fresh: almost no repeats


@pytest.mark.parametrize("value", [-1, 101, 2.5, True])
def test_a_prompt_pool_out_of_range_is_one_line(value):
    from grpo_lab.checks.config_rules import validate_config

    with pytest.raises(ConfigError) as caught:
        validate_config(TrainConfig(task="1d+", prompt_pool=value))  # 100 problems in all
    assert_one_line_error(caught.value, "prompt_pool", value)
    with pytest.raises(ConfigError):
        ProblemSampler(Task.parse("1d+"), 0, pool_size=101)  # built directly, it refuses too (it would never fill)


def test_train_draws_its_prompts_from_the_configured_pool():
    from grpo_lab.trainer import start_run

    _, problems = start_run(TrainConfig(prompt_pool=48, seed=2))
    assert len(problems.pool) == 48 and set(problems.sample(96).texts) == {Task.parse("2d+").prompt(*p) for p in problems.pool}
    _, fresh = start_run(TrainConfig())
    assert fresh.pool == []


def test_best_eval_step_is_where_held_out_accuracy_first_peaked():
    history = [{"step": 0, "eval_accuracy": 0.1}, {"step": 5, "reward": 0.2, "wall_time": 0.5}]
    history += [
        {"step": step, "eval_accuracy": accuracy, "reward": 0.3, "wall_time": step / 10}
        for step, accuracy in ((10, 0.4), (20, 0.6), (30, 0.6), (40, 0.3))
    ]
    metrics = run_metrics(history)
    assert metrics["best_eval_accuracy"] == 0.6 and metrics["best_eval_step"] == 20


def test_the_practice_reference_is_what_its_rule_gives_on_the_recorded_scan():
    from dataclasses import asdict

    from grpo_lab.checks.checkpoints import context_problem, load_reference_policy
    from grpo_lab.experiments.catalog import BEST_LR, REGIMES
    from grpo_lab.experiments.runner import RESULTS_DIR
    from grpo_lab.pretrain import PRACTICE_START_ACCURACY, PRACTICE_STEPS, RECIPES, START_RULES, first_checkpoint_reaching

    scan = json.loads((RESULTS_DIR / "regimes" / "practice-reference-scan.json").read_text())
    assert scan["command"] == "python scripts/long_reference_scan.py practice"
    assert {**scan["recipe"], "steps": PRACTICE_STEPS} == {key: value for key, value in asdict(RECIPES["practice"]).items() if key != "name"}
    accuracy, every, _ = START_RULES["practice"]
    assert [point["step"] for point in scan["checkpoints"]][:3] == [every, 2 * every, 3 * every]
    assert first_checkpoint_reaching(scan, PRACTICE_START_ACCURACY) == PRACTICE_STEPS == scan["chosen_steps"]
    coarse = {"checkpoints": [point for point in scan["checkpoints"] if point["step"] % 50 == 0]}
    assert first_checkpoint_reaching(coarse, accuracy) == 150  # the first rule's 50-step grid (docs/practice-regime.md, 6)
    reference = load_reference_policy("practice")
    reached = next(point["eval_accuracy"] for point in scan["checkpoints"] if point["step"] == PRACTICE_STEPS)
    assert reference.metadata["eval_accuracy"] == reached and 0.10 <= reached <= 0.25
    assert reference.metadata["task"] == "3d+w" and context_problem(reference, WORKED) is None
    assert REGIMES["practice"].train == {"task": "3d+w", "reference": "practice", "prompt_pool": 256, "lr": BEST_LR, "steps": 150}


@pytest.mark.learning
def test_a_run_in_the_practice_regime_starts_from_practice_pt():
    from grpo_lab.checks.checkpoints import load_reference_policy
    from grpo_lab.experiments.catalog import REGIMES
    from grpo_lab.trainer import train

    result = train(TrainConfig(**{**REGIMES["practice"].train, "steps": 2, "eval_every": 0, "probe_every": 0}))
    assert result.status == "finished"
    assert result.history[0]["eval_accuracy"] == pytest.approx(load_reference_policy("practice").metadata["eval_accuracy"], abs=1 / 300 + 1e-9)


def test_the_practice_regime_leaves_out_the_monte_carlo_cells_and_its_claims_say_why():
    """docs/practice-regime.md, section 7: only the Monte-Carlo value cells are left out; a claim deciding on one
    says why it is not tested there, and claim [group-in-ppo] is judged without its auxiliary Monte-Carlo arm."""
    from grpo_lab.experiments.catalog import EXPERIMENTS, REGIMES, experiments_in, grid_in, left_out_in
    from grpo_lab.experiments.claims import CLAIMS, Claim, finding_in
    from grpo_lab.experiments.findings import UNTESTED, cell_summary
    from grpo_lab.experiments.runner import load_result

    for name in experiments_in("practice"):
        for fast in (False, True):
            every, kept = EXPERIMENTS[name].grid(fast), grid_in(name, "practice", fast)
            dropped = [c for c in every if c not in kept]
            assert all(c["config"]["train"]["baseline"] == "mc_value" for c in dropped), name
            assert all(c["config"].get("train", {}).get("baseline") != "mc_value" for c in kept), name
            assert grid_in(name, "gentle", fast) == every  # other regimes run every cell
    assert left_out_in("grpo-vs-ppo", "mc-value", "practice") and not left_out_in("grpo-vs-ppo", "mc-value", "gentle")
    assert not left_out_in("grpo-vs-ppo", "ppo-reuse", "practice")

    gentle = load_result("grpo-vs-ppo")
    without = {"grpo-vs-ppo": {**gentle, "cells": [c for c in gentle["cells"] if c["id"] != "mc-value"]}}
    deciding = Claim("mc", "", "", "", ("grpo-vs-ppo",), lambda r: cell_summary(r, "grpo-vs-ppo", "mc-value", "late_eval_accuracy"))
    verdict, reason = finding_in(deciding, without, "practice").judge()
    assert verdict == UNTESTED and reason == REGIMES["practice"].why_leaves_out
    elsewhere = finding_in(deciding, without, "gentle")  # elsewhere a missing cell is an incomplete result, not the regime's choice
    assert elsewhere.judge()[0] == UNTESTED and REGIMES["practice"].why_leaves_out not in (elsewhere.evidence, elsewhere.judge()[1])

    group_in_ppo = next(claim for claim in CLAIMS if claim.key == "group-in-ppo")
    full, less = finding_in(group_in_ppo, {"grpo-vs-ppo": gentle}), finding_in(group_in_ppo, without, "practice")
    assert len(full.auxiliary) == 1 and less.auxiliary == ()
    assert [c.difference for c in less.deciding] == [c.difference for c in full.deciding]
    assert less.judge(*(c.direction() for c in less.deciding))[0] == full.judge(*(c.direction() for c in full.deciding))[0]
