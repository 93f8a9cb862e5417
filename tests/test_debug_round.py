"""The drill's debugging round: with every bug fixed the step is grpo_lab.core's loss, each planted
bug alone changes the loss or the gradient the way its symptom says, and the checker grades answers."""

from __future__ import annotations

import copy

import pytest
import torch
from conftest import assert_one_line_error

from grpo_lab import load_reference_policy
from grpo_lab.core.advantages import compute_advantages
from grpo_lab.core.config import TrainConfig
from grpo_lab.core.losses import aggregate, policy_loss_terms
from grpo_lab.core.model import PAD_ID, sample, token_logprobs
from grpo_lab.course import debug_round
from grpo_lab.course.debug_round import BUGS, bug_line, check_debug_round, step_with_bugs
from grpo_lab.errors import ConfigError
from grpo_lab.task import Task, make_batch

GROUP_SIZE = 4
REWARDS = torch.tensor([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0]])  # every slot differs across the two prompts


@pytest.fixture(scope="module")
def batch():
    """Two prompts x four answers sampled from the shipped reference policy (which also samples)."""
    torch.manual_seed(0)
    task = Task()
    reference = load_reference_policy().requires_grad_(False)
    prompts = make_batch(task, [(7, "+", 35), (58, "+", 61)]).prompts.repeat_interleave(GROUP_SIZE, dim=0)
    answers, mask = sample(reference, prompts, task.max_answer_length, 1.0, torch.Generator().manual_seed(0))
    return reference, prompts, answers, mask


def trainable(model, noise: float = 0.0):
    """A trainable copy of ``model``, its weights moved by ``noise`` x a seeded normal draw."""
    policy = copy.deepcopy(model).requires_grad_(True)
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for parameter in policy.parameters():
            parameter.add_(noise * torch.randn(parameter.shape, generator=generator))
    return policy


def sampler_logprobs(model, prompts, answers):
    """The log-probs the sampler recorded, as the loop takes them: no graph."""
    with torch.no_grad():
        return token_logprobs(model, prompts, answers)


def loss_and_grads(step, policy, reference, prompts, answers, mask, rewards, old_logprobs, **options):
    policy.zero_grad(set_to_none=True)
    loss, metrics = step(policy, reference, prompts, answers, mask, rewards, old_logprobs, **options)
    loss.backward()
    grads = [torch.zeros_like(p) if p.grad is None else p.grad.clone() for p in policy.parameters()]
    return loss.detach(), grads, metrics


def test_with_every_bug_fixed_the_step_is_the_core_loss_and_gradient(batch):
    reference, prompts, answers, mask = batch
    policy = trainable(reference, noise=0.05)  # moved off the reference: a ratio that clips, a KL above 0
    old_logprobs = sampler_logprobs(reference, prompts, answers)
    loss, grads, metrics = loss_and_grads(step_with_bugs([]), policy, reference, prompts, answers, mask, REWARDS, old_logprobs)

    policy.zero_grad(set_to_none=True)
    token_advantages = compute_advantages(REWARDS, "zscore", 1e-4).reshape(-1, 1) * mask
    config = TrainConfig(clip_eps=0.2, kl_coef=0.04)
    ref_logprobs = old_logprobs  # the reference is the sampler here
    per_token, _ = policy_loss_terms(policy, prompts, answers, mask, old_logprobs, ref_logprobs, token_advantages, config)
    core_loss = aggregate(per_token, mask, "token_mean", len(prompts), mask.sum(), answers.shape[1])
    core_loss.backward()
    assert metrics["kl"] > 0 and metrics["clip_fraction"] > 0
    torch.testing.assert_close(loss, core_loss.detach())
    for mine, core in zip(grads, (p.grad for p in policy.parameters())):
        torch.testing.assert_close(mine, core, atol=1e-6, rtol=1e-4)


def test_the_printed_step_is_the_step_with_all_four_bugs(batch):
    reference, prompts, answers, mask = batch
    policy = trainable(reference, noise=0.05)
    old_logprobs = sampler_logprobs(reference, prompts, answers)
    shown, _, _ = loss_and_grads(debug_round.buggy_grpo_step, policy, reference, prompts, answers, mask, REWARDS, old_logprobs)
    rebuilt, _, _ = loss_and_grads(step_with_bugs(BUGS), policy, reference, prompts, answers, mask, REWARDS, old_logprobs)
    assert torch.isfinite(shown) and torch.equal(shown, rebuilt)


def test_shifted_logprobs_make_the_ratio_clip_before_the_policy_has_moved(batch):
    reference, prompts, answers, mask = batch
    policy = trainable(reference)  # the first minibatch: the policy is the sampler, so the ratio should be exactly 1
    old_logprobs = sampler_logprobs(policy, prompts, answers)
    _, _, fixed = loss_and_grads(step_with_bugs([]), policy, reference, prompts, answers, mask, REWARDS, old_logprobs)
    _, _, shifted = loss_and_grads(step_with_bugs(["shift"]), policy, reference, prompts, answers, mask, REWARDS, old_logprobs)
    assert fixed["clip_fraction"] == 0
    assert shifted["clip_fraction"] > 0.2


def test_a_detached_ratio_leaves_the_policy_without_a_gradient(batch):
    reference, prompts, answers, mask = batch
    policy = trainable(reference)  # step 1: the policy is the reference, so the KL's gradient is 0 too
    old_logprobs = sampler_logprobs(policy, prompts, answers)
    _, fixed, _ = loss_and_grads(step_with_bugs([]), policy, reference, prompts, answers, mask, REWARDS, old_logprobs)
    _, detached, _ = loss_and_grads(step_with_bugs(["detach"]), policy, reference, prompts, answers, mask, REWARDS, old_logprobs)
    assert max(float(grad.abs().max()) for grad in fixed) > 1e-3
    assert all(float(grad.abs().max()) == 0 for grad in detached)


def test_a_std_across_prompts_is_not_the_group_z_score_and_blows_up(batch):
    reference, prompts, answers, mask = batch
    policy = trainable(reference)
    old_logprobs = sampler_logprobs(policy, prompts, answers)
    rewards = torch.tensor([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 1.0]])  # slot 3 holds equal rewards across the prompts
    _, _, fixed = loss_and_grads(step_with_bugs([]), policy, reference, prompts, answers, mask, rewards, old_logprobs)
    _, _, wrong_axis = loss_and_grads(step_with_bugs(["std_axis"]), policy, reference, prompts, answers, mask, rewards, old_logprobs)
    torch.testing.assert_close(fixed["adv_abs_max"], compute_advantages(rewards, "zscore", 1e-4).abs().max())
    assert wrong_axis["adv_abs_max"] > 100 * fixed["adv_abs_max"]  # about 0.5 / std_eps

    one_prompt = (policy, reference, prompts[:GROUP_SIZE], answers[:GROUP_SIZE], mask[:GROUP_SIZE], rewards[:1], old_logprobs[:GROUP_SIZE])
    assert torch.isfinite(loss_and_grads(step_with_bugs([]), *one_prompt)[0])
    with pytest.warns(UserWarning):  # torch warns that a std over one number has no degrees of freedom
        assert torch.isnan(loss_and_grads(step_with_bugs(["std_axis"]), *one_prompt)[0])


def test_a_mean_over_padding_changes_when_the_same_answers_are_padded_longer(batch):
    reference, prompts, answers, mask = batch
    policy = trainable(reference, noise=0.05)
    longer = torch.cat([answers, torch.full((len(answers), 2), PAD_ID)], dim=1)
    longer_mask = torch.cat([mask, torch.zeros(len(mask), 2)], dim=1)
    losses = {}
    for kinds in ([], ["mask"]):
        step = step_with_bugs(kinds)
        short = loss_and_grads(step, policy, reference, prompts, answers, mask, REWARDS, sampler_logprobs(reference, prompts, answers))[0]
        padded = loss_and_grads(step, policy, reference, prompts, longer, longer_mask, REWARDS, sampler_logprobs(reference, prompts, longer))[0]
        losses[tuple(kinds)] = (short, padded)
    torch.testing.assert_close(*losses[()])  # the masked token mean does not see padding
    assert abs(losses[("mask",)][0] - losses[("mask",)][1]) > 1e-3


def all_bugs() -> dict[int, str]:
    return {bug_line(kind): kind for kind in BUGS}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_complete_answer_passes_every_item(language, capsys):
    check_debug_round(all_bugs(), language)
    out = capsys.readouterr().out
    assert out.count("PASS") == len(BUGS) + 1 and "FAIL" not in out  # each bug, and the round
    for bug in BUGS.values():
        assert bug.symptom[language] in out and bug.fixed in out


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_wrong_line_or_kind_fails_that_item_and_the_missing_ones_are_not_given_away(language, capsys):
    lines = sorted(all_bugs())
    answer = {lines[0]: all_bugs()[lines[0]], lines[1] + 1: all_bugs()[lines[1]], lines[2]: "kl_direction"}
    check_debug_round(answer, language)
    text = capsys.readouterr().out
    out = [line for line in text.splitlines() if not line.startswith(" ")]  # not the fix under a PASS
    assert len(out) == 4 and "PASS" in out[0] and "FAIL" in out[1] and "FAIL" in out[2]  # the three items
    assert "PASS" not in out[3]  # the round: one of four found
    for kind in (all_bugs()[lines[1]], all_bugs()[lines[2]], all_bugs()[lines[3]]):
        assert BUGS[kind].fixed not in text and BUGS[kind].symptom[language] not in text


@pytest.mark.parametrize(
    ("answers", "knob", "value"),
    [
        ([(9, "shift")], "answers", [(9, "shift")]),
        ({9: "off-by-one"}, "kind", "off-by-one"),
        ({"9": "shift"}, "line", "9"),
        ({0: "shift"}, "line", 0),
        ({10_000: "shift"}, "line", 10_000),
    ],
)
def test_a_bad_answer_is_one_clear_error(answers, knob, value):
    with pytest.raises(ConfigError) as caught:
        check_debug_round(answers)
    assert_one_line_error(caught.value, knob, value)


def test_a_bad_language_or_bug_name_is_one_clear_error():
    with pytest.raises(ConfigError) as caught:
        check_debug_round({}, "fr")
    assert_one_line_error(caught.value, "language", "fr")
    with pytest.raises(ConfigError) as caught:
        step_with_bugs(["shift", "typo"])
    assert_one_line_error(caught.value, "kinds")
