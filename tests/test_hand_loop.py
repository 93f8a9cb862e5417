"""The GRPO step a learner writes by hand (notebook 02b, worked solution in notebooks/solutions/)
reproduces ``train()`` on the same seed, and the check catches a step that differs."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import assert_one_line_error

from grpo_lab.course.hand_loop import PARAMETER_ATOL, check_grpo_step, compare_with_train, hand_config, train_by_hand
from grpo_lab.errors import ConfigError

SOLUTIONS = Path(__file__).resolve().parent.parent / "notebooks" / "solutions"
WORKED = (SOLUTIONS / "02_grpo_loss.py").read_text() + (SOLUTIONS / "02b_grpo_step.py").read_text()


def hand_step(source: str = WORKED):
    namespace: dict = {}
    exec(source, namespace)
    return namespace["grpo_step"]


def test_the_worked_step_matches_train_on_the_same_seed():
    config = hand_config(steps=6, seed=3, eval_every=3, group_size=4, prompts_per_step=8, lr=3e-4)
    comparison = compare_with_train(hand_step(), config)
    assert comparison["reward_steps_equal"] == 6  # the same answers sampled at every step
    assert comparison["loss_abs_diff_max"] <= 1e-6
    assert comparison["parameter_abs_diff_max"] <= PARAMETER_ATOL


@pytest.mark.parametrize(
    "broken, change",
    [
        ("mean baseline", ("/ (std + std_eps)", "")),
        ("DAPO's token mean", ('"kl_coef": 0.0}', '"kl_coef": 0.0, "loss_agg": "token_mean"}')),
        ("no gradient clip", ("    torch.nn.utils.clip_grad_norm_(policy.parameters(), config.max_grad_norm)\n", "")),
    ],
)
def test_a_step_that_differs_from_the_trainers_fails_the_check(broken, change, capsys):
    assert change[0] in WORKED, f"the worked solution changed: update the {broken} case"
    check_grpo_step(hand_step(WORKED.replace(*change)))
    assert "[02b_grpo_step] FAIL" in capsys.readouterr().out


def test_the_check_passes_the_worked_step(capsys):
    check_grpo_step(hand_step())
    assert "[02b_grpo_step] PASS" in capsys.readouterr().out


@pytest.mark.learning
def test_the_hand_written_loop_learns():
    history, _ = train_by_hand(hand_step(), hand_config(steps=60, seed=0, eval_every=30, lr=3e-4))
    assert history[-1]["eval_accuracy"] > history[0]["eval_accuracy"] + 0.05, [h.get("eval_accuracy") for h in history]


def test_a_knob_the_hand_step_does_not_implement_is_refused_in_one_line():
    with pytest.raises(ConfigError) as caught:
        hand_config(kl_coef=0.04)
    assert_one_line_error(caught.value, "kl_coef", 0.04)
