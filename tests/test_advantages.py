"""compute_advantages against hand-computed values and the published TRL, verl and RLOO formulas."""

import pytest
import torch
from conftest import assert_one_line_error, assert_one_line_naming

from grpo_lab import compute_advantages
from grpo_lab.core.advantages import EMABaseline
from grpo_lab.errors import ConfigError

REWARDS = torch.tensor([[1.0, 0.0, 0.0, 1.0], [0.2, 0.4, 0.6, 0.8], [3.0, 3.0, 3.0, 3.0]])


def trl_advantages(rewards: torch.Tensor, scale_rewards: str) -> torch.Tensor:
    """TRL GRPOTrainer's formula, written out: group mean, Bessel std, std + 1e-4."""
    flat = rewards.reshape(-1)
    group_size = rewards.shape[1]
    mean = rewards.mean(dim=1).repeat_interleave(group_size)
    advantages = flat - mean
    if scale_rewards == "group":
        advantages = advantages / (rewards.std(dim=1).repeat_interleave(group_size) + 1e-4)
    elif scale_rewards == "batch":
        advantages = advantages / (flat.std() + 1e-4)
    return advantages.view_as(rewards)


def verl_advantages(rewards: torch.Tensor, epsilon: float = 1e-6) -> torch.Tensor:
    """verl's compute_grpo_outcome_advantage, per group: a group of one gets mean 0 and std 1."""
    rows = []
    for group in rewards:
        if len(group) == 1:
            mean, std = torch.tensor(0.0), torch.tensor(1.0)
        else:
            mean, std = group.mean(), group.std()
        rows.append((group - mean) / (std + epsilon))
    return torch.stack(rows)


def test_hand_computed_group_of_two():
    # rewards 1 and 0: mean 0.5, Bessel std sqrt(0.5) = 0.7071
    rewards = torch.tensor([[1.0, 0.0]])
    assert compute_advantages(rewards, "none").tolist() == [[1.0, 0.0]]
    assert compute_advantages(rewards, "mean").tolist() == [[0.5, -0.5]]
    assert compute_advantages(rewards, "rloo").tolist() == [[1.0, -1.0]]
    z = compute_advantages(rewards, "zscore", std_eps=0.0)
    assert torch.allclose(z, torch.tensor([[0.7071068, -0.7071068]]))
    population = compute_advantages(rewards, "zscore", std_eps=0.0, std_ddof=0)
    assert torch.allclose(population, torch.tensor([[1.0, -1.0]]))


@pytest.mark.parametrize("scale_rewards, baseline, scope", [("group", "zscore", "group"), ("batch", "zscore", "batch"), ("none", "mean", "group")])
def test_matches_trl(scale_rewards, baseline, scope):
    ours = compute_advantages(REWARDS, baseline, std_eps=1e-4, std_scope=scope)
    assert torch.allclose(ours, trl_advantages(REWARDS, scale_rewards), atol=1e-6)


def test_matches_verl_for_groups_of_two_or_more():
    ours = compute_advantages(REWARDS, "zscore", std_eps=1e-6)
    assert torch.allclose(ours, verl_advantages(REWARDS), atol=1e-6)


def test_verl_group_of_one_differs_from_ours_on_purpose():
    # verl treats a lone response as mean 0, std 1 (advantage = its reward); we refuse instead,
    # because a group baseline of one response is not a baseline
    assert verl_advantages(torch.tensor([[0.7]])).item() == pytest.approx(0.7 / (1 + 1e-6))
    with pytest.raises(ValueError) as caught:
        compute_advantages(torch.tensor([[0.7]]), "zscore")
    assert_one_line_naming(caught.value, "group_size", "'zscore'")


def test_rloo_is_leave_one_out_mean():
    rewards = torch.tensor([[1.0, 2.0, 6.0]])
    expected = [1 - (2 + 6) / 2, 2 - (1 + 6) / 2, 6 - (1 + 2) / 2]
    assert compute_advantages(rewards, "rloo").tolist()[0] == pytest.approx(expected)
    # and it is G/(G-1) times the mean-centred advantage
    assert torch.allclose(compute_advantages(rewards, "rloo"), 1.5 * compute_advantages(rewards, "mean"))


def test_equal_rewards_give_zero_with_eps_and_nan_without():
    equal = torch.full((1, 4), 0.3)
    assert compute_advantages(equal, "zscore", std_eps=1e-4).abs().max() == 0
    assert torch.isnan(compute_advantages(equal, "zscore", std_eps=0.0)).all()


def test_near_equal_rewards_are_amplified_to_unit_scale():
    # the real "explosion": rewards 1e-6 apart become advantages of about +-1 when eps is tiny
    rewards = torch.tensor([[0.5, 0.5 + 1e-6, 0.5, 0.5 + 1e-6]])
    tiny_eps = compute_advantages(rewards, "zscore", std_eps=1e-10)
    assert tiny_eps.abs().max() > 0.8
    assert compute_advantages(rewards, "zscore", std_eps=1e-2).abs().max() < 1e-3


def test_clamp_versus_add():
    rewards = torch.tensor([[0.0, 0.001]])  # Bessel std 0.000707
    add = compute_advantages(rewards, "zscore", std_eps=0.01, eps_mode="add")
    clamp = compute_advantages(rewards, "zscore", std_eps=0.01, eps_mode="clamp")
    assert torch.allclose(add, torch.tensor([[-0.0005, 0.0005]]) / (0.000707107 + 0.01), atol=1e-6)
    assert torch.allclose(clamp, torch.tensor([[-0.05, 0.05]]), atol=1e-6)


def test_offset_and_scale_invariance():
    shifted = REWARDS + 5.0
    assert torch.allclose(compute_advantages(shifted, "mean"), compute_advantages(REWARDS, "mean"), atol=1e-5)
    assert torch.allclose(compute_advantages(shifted, "zscore"), compute_advantages(REWARDS, "zscore"), atol=1e-4)
    scaled = REWARDS[:2] * 0.1  # z-score undoes a per-group scale (up to eps), mean-only does not
    assert torch.allclose(compute_advantages(scaled, "zscore", std_eps=0), compute_advantages(REWARDS[:2], "zscore", std_eps=0), atol=1e-5)
    assert not torch.allclose(compute_advantages(scaled, "mean"), compute_advantages(REWARDS[:2], "mean"))


def test_ema_baseline():
    ema = EMABaseline(decay=0.5)
    first = torch.tensor([[1.0, 0.0]])
    assert ema.current(first) == 0.5  # starts at the first batch's mean
    ema.update(first)
    ema.update(torch.tensor([[1.0, 1.0]]))
    assert ema.value == pytest.approx(0.75)
    assert compute_advantages(first, "ema", ema_value=0.75).tolist() == [[0.25, -0.75]]


@pytest.mark.parametrize("knob, value", [("baseline", "median"), ("std_eps", -1e-4), ("std_scope", "prompt"), ("eps_mode", "max"), ("std_ddof", 2)])
def test_invalid_arguments_name_the_knob(knob, value):
    with pytest.raises(ConfigError) as caught:
        compute_advantages(REWARDS, **{knob: value})
    assert_one_line_error(caught.value, knob, value)


def test_a_value_baseline_is_refused_without_a_value_model():
    with pytest.raises(ValueError) as caught:
        compute_advantages(REWARDS, "critic")
    assert_one_line_naming(caught.value, "'critic'")


def test_invalid_rewards():
    for rewards, baseline, named in [
        (torch.tensor([[1.0, float("nan")]]), "mean", ["rewards"]),
        (torch.tensor([1.0, 0.0]), "mean", ["rewards", (2,)]),  # not [prompts, group_size]
        (torch.tensor([[1.0], [0.0]]), "mean", ["group_size", "'mean'"]),  # a group baseline needs two responses
    ]:
        with pytest.raises(ValueError) as caught:
            compute_advantages(rewards, baseline)
        assert_one_line_naming(caught.value, *named)
    # baselines that are not group statistics accept a group of one
    assert compute_advantages(torch.tensor([[1.0], [0.0]]), "none").shape == (2, 1)
