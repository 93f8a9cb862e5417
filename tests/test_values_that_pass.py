"""Values that used to pass the checks and then acted as 0 or as garbage: each is now refused with
one line naming the knob and what is allowed, or computed right (issue 21, item 5)."""

import threading

import numpy as np
import pytest
import torch
from conftest import assert_one_line_error, assert_one_line_naming

from grpo_lab import GRPOLab, TrainConfig, compute_advantages, train
from grpo_lab.checks.arguments import SMALLEST_STD_EPS
from grpo_lab.checks.config_rules import validate_config
from grpo_lab.errors import ConfigError
from grpo_lab.task import Task

MIXED_AND_TIED = torch.tensor([[1.0, 0.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0]])


@pytest.mark.parametrize("std_eps", [5e-324, 1e-46, 1e-39])
def test_an_eps_that_float32_cannot_hold_is_refused(std_eps):
    assert torch.tensor(std_eps, dtype=torch.float32) < SMALLEST_STD_EPS  # 0 or subnormal: it would not act as eps
    for refuse in (lambda: validate_config(TrainConfig(std_eps=std_eps)), lambda: compute_advantages(MIXED_AND_TIED, "zscore", std_eps=std_eps)):
        with pytest.raises(ConfigError) as caught:
            refuse()
        assert_one_line_error(caught.value, "std_eps", std_eps)
        assert f"{SMALLEST_STD_EPS:.3g}" in caught.value.allowed  # where the allowed range starts


@pytest.mark.parametrize("eps_mode", ["add", "clamp"])
def test_the_smallest_eps_allowed_still_gives_a_tied_group_exactly_zero(eps_mode):
    advantages = compute_advantages(MIXED_AND_TIED, "zscore", std_eps=SMALLEST_STD_EPS, eps_mode=eps_mode)
    assert torch.isfinite(advantages).all() and (advantages[1] == 0).all() and advantages[0].abs().min() > 0.5
    validate_config(TrainConfig(std_eps=SMALLEST_STD_EPS))


@pytest.mark.parametrize("std_eps", [10**400, float("inf"), float("nan"), -1e-4, "1e-4", True, None, [1e-4]], ids=lambda value: f"{value!r:.20}")
def test_an_eps_that_is_not_a_finite_number_is_refused_in_one_line(std_eps):
    with pytest.raises(ConfigError) as caught:
        compute_advantages(MIXED_AND_TIED, "zscore", std_eps=std_eps)
    assert_one_line_error(caught.value, "std_eps", std_eps)
    assert len(str(caught.value)) < 300  # 10**400's 401 digits are cut short


@pytest.mark.parametrize("std_eps", [np.float32(1e-4), np.float64(1e-4), torch.tensor(1e-4), 1e-4])
def test_numpy_and_tensor_numbers_are_read_as_the_numbers_they_hold(std_eps):
    expected = compute_advantages(MIXED_AND_TIED, "zscore", std_eps=1e-4)
    assert torch.allclose(compute_advantages(MIXED_AND_TIED, "zscore", std_eps=std_eps), expected)
    assert torch.equal(compute_advantages(MIXED_AND_TIED, "ema", ema_value=np.float32(0.5)), MIXED_AND_TIED - 0.5)


def test_complex_rewards_are_refused():
    with pytest.raises(ValueError) as caught:
        compute_advantages(MIXED_AND_TIED.to(torch.complex64), "mean")
    assert_one_line_naming(caught.value, "rewards", torch.complex64)


@pytest.mark.parametrize("ema_value", [float("nan"), float("inf"), "0.5", None, 10**400], ids=lambda value: f"{value!r:.20}")
def test_an_ema_value_that_is_not_a_finite_number_is_refused(ema_value):
    with pytest.raises(ConfigError) as caught:
        compute_advantages(MIXED_AND_TIED, "ema", ema_value=ema_value)
    assert_one_line_error(caught.value, "ema_value", ema_value)


@pytest.mark.parametrize("size", [1e20, 1e30, 3e38])
def test_huge_finite_rewards_are_z_scored_right(size):
    rewards = torch.tensor([[size, -size, 0.0, size], [size, size, size, size]], dtype=torch.float32)
    expected = compute_advantages(rewards.double() / size, "zscore", std_eps=1e-12).float()  # z-scores do not depend on the scale
    got = compute_advantages(rewards, "zscore")
    assert got.dtype == torch.float32 and torch.allclose(got, expected, atol=1e-5), got


@pytest.mark.parametrize("baseline", ["mean", "rloo"])
def test_rewards_whose_advantages_overflow_float32_are_refused_not_turned_into_nan(baseline):
    rewards = torch.tensor([[3e38, -3e38, 0.0, 3e38]])
    with pytest.raises(ValueError) as caught:
        compute_advantages(rewards, baseline)
    assert_one_line_naming(caught.value, "rewards", repr(baseline))
    smaller = compute_advantages(rewards.double() * 1e-30, baseline) * 1e30  # the same rewards, scaled into range
    assert torch.allclose(compute_advantages(rewards.double(), baseline), smaller)  # float64 holds them


def test_the_documented_zero_over_zero_is_still_nan():
    advantages = compute_advantages(MIXED_AND_TIED, "zscore", std_eps=0.0)
    assert advantages[1].isnan().all() and torch.isfinite(advantages[0]).all()


def test_train_takes_a_dict_of_knobs_and_refuses_what_is_not_a_config_or_an_event():
    result = train({"steps": 1, "eval_every": 0, "probe_every": 0, "prompts_per_step": 2, "group_size": 2}, stop=threading.Event())
    assert result.status == "finished" and isinstance(result.config, TrainConfig) and len(result.history) == 2
    with pytest.raises(ValueError) as caught:
        train({"stepz": 1})
    assert_one_line_naming(caught.value, "stepz")
    for arguments, knob, value in (((5,), "config", 5), ((TrainConfig(steps=1),), "stop", True), ((TrainConfig(steps=1), 3), "on_step", 3)):
        keywords = {"stop": True} if knob == "stop" else {}
        with pytest.raises(ConfigError) as caught:
            train(*arguments, **keywords)
        assert_one_line_error(caught.value, knob, value)


@pytest.mark.parametrize("max_runs", [0, -1, 2.5, True, "6"])
def test_the_lab_refuses_a_run_limit_that_keeps_nothing_or_everything(max_runs):
    with pytest.raises(ConfigError) as caught:
        GRPOLab(max_runs=max_runs)
    assert_one_line_error(caught.value, "max_runs", max_runs)


@pytest.mark.parametrize(
    ("digits", "ops", "knob"), [(10**30, "+", "digits"), (0, "+", "digits"), (6, "+", "digits"), (2, "", "ops"), (2, "/", "ops"), (2, "++", "ops")]
)
def test_a_task_built_directly_is_checked_like_a_parsed_one(digits, ops, knob):
    with pytest.raises(ConfigError) as caught:
        Task(digits, ops)
    assert_one_line_error(caught.value, knob, digits if knob == "digits" else ops)
    assert Task(2, "+-*").num_problems() == 30_000
