"""TrainConfig validation, the training loop's contract, gradient accumulation and failure messages.
Runs here are a few steps long: they test the machinery, not learning (see test_learning.py)."""

import pickle
import threading

import pytest
import torch
from conftest import assert_one_line_error

from grpo_lab import TrainConfig, train
from grpo_lab.checks.checkpoints import load_reference_policy
from grpo_lab.checks.config_rules import validate_config
from grpo_lab.checks.devices import available_devices
from grpo_lab.core.loop import Rollout, accumulate_gradients, rollout
from grpo_lab.core.model import decode, sample
from grpo_lab.core.probes import probe_chunks
from grpo_lab.errors import ConfigError
from grpo_lab.task import ProblemSampler, RewardModel, Task, eval_batch

SHORT = dict(steps=4, prompts_per_step=4, group_size=4, eval_every=2, probe_every=2)


def without_time(history):
    return [{k: v for k, v in record.items() if k != "wall_time"} for record in history]


# every knob's bad values are refused in one line by tests/test_reliability.py's table (tests/bad_values.py)
@pytest.mark.parametrize(
    "overrides, knob, value, allowed_mentions",
    [
        ({"group_size": 1}, "group_size", 1, ["2", "256", "zscore"]),  # the range, and the baseline that sets its low end
        ({"lr": "fast"}, "lr", "fast", ["1", "str"]),  # the range, and the type that was given
        ({"baseline": "median"}, "baseline", "median", ["none", "mean", "zscore", "rloo", "ema", "critic", "mc_value"]),
        ({"task": "9d+"}, "task", "9d+", ["2d+"]),  # an example of the form
        ({"device": "tpu"}, "device", "tpu", available_devices()),
        ({"seed": -1}, "seed", -1, ["0", "2**31 - 1"]),
    ],
)
def test_a_config_error_carries_the_knob_the_value_and_the_allowed_range(overrides, knob, value, allowed_mentions):
    with pytest.raises(ConfigError) as caught:
        validate_config(TrainConfig(**overrides))
    error = caught.value
    assert isinstance(error, ValueError)  # `except ValueError` still catches it
    assert_one_line_error(error, knob, value)
    assert all(mention in error.allowed for mention in allowed_mentions), error.allowed
    copy = pickle.loads(pickle.dumps(error))  # the sweep's worker processes send errors back pickled
    assert (type(copy), copy.knob, copy.value, copy.allowed, str(copy)) == (ConfigError, knob, value, error.allowed, str(error))


def test_a_config_error_shortens_a_long_value_in_its_line_but_keeps_it_whole():
    long_name = "exact" * 1000
    with pytest.raises(ConfigError) as caught:
        validate_config(TrainConfig(reward=long_name))
    assert_one_line_error(caught.value, "reward", long_name)
    assert caught.value.value == long_name and len(str(caught.value)) < 300


def test_rollout_scores_each_answer_against_its_own_problem():
    """rollout() samples G answers per problem in contiguous groups, and the reward model, which reads
    each prompt's problem from its tokens, scores every answer against that problem's answer."""
    task, policy = Task.parse("2d+"), load_reference_policy("default")
    held_out = eval_batch(task)
    groups = rollout(policy, held_out, RewardModel(), 3, task.max_answer_length, 1.0, torch.Generator().manual_seed(0))
    assert torch.equal(groups["prompts"][::3], held_out.prompts) and groups["rewards"].shape == (len(held_out.answers), 3)
    expected = [[float(decode(answer) == held_out.answers[row // 3])] for row, answer in enumerate(groups["answers"].tolist())]
    assert groups["rewards"].reshape(-1, 1).tolist() == expected and 0 < groups["rewards"].mean() < 1


@pytest.mark.parametrize("baseline", ["none", "ema", "critic"])
def test_group_of_one_is_allowed_without_a_group_baseline(baseline):
    validate_config(TrainConfig(baseline=baseline, group_size=1))


def test_same_seed_same_history_and_different_seed_differs():
    first = train(TrainConfig(**SHORT, seed=3))
    second = train(TrainConfig(**SHORT, seed=3))
    other = train(TrainConfig(**SHORT, seed=4))
    assert without_time(first.history) == without_time(second.history)
    assert without_time(first.history) != without_time(other.history)


def test_history_has_the_documented_metrics():
    result = train(TrainConfig(**SHORT, kl_coef=0.04, inner_epochs=2))
    assert result.status == "finished" and [r["step"] for r in result.history] == [0, 1, 2, 3, 4]
    step_two = result.history[2]
    for key in (
        "step",
        "samples",
        "reward",
        "reward_std",
        "frac_reward_zero_std",
        "adv_abs_max",
        "grad_norm",
        "grad_var",
        "grad_snr",
        "kl",
        "entropy",
        "clip_ratio",
        "eval_accuracy",
        "wall_time",
    ):
        assert key in step_two, key
    assert step_two["samples"] == 2 * 4 * 4
    assert step_two["kl"] >= 0 and 0 <= step_two["clip_ratio"] <= 1 and step_two["grad_var"] > 0
    assert result.final["initial_eval_accuracy"] == result.history[0]["eval_accuracy"]
    assert set(result.to_json()) == {"config", "history", "final"}


def test_on_step_and_stop_event():
    stop = threading.Event()
    seen = []

    def on_step(record):
        seen.append(record["step"])
        if record["step"] == 2:
            stop.set()

    result = train(TrainConfig(**{**SHORT, "steps": 50}), on_step=on_step, stop=stop)
    assert result.status == "stopped" and result.stopped
    assert seen == [0, 1, 2] and len(result.history) == 3
    assert "stopped by the user after 2 of 50 steps" in result.message


def test_zero_eps_with_all_equal_groups_stops_with_an_explanation():
    # the weak reference gets almost everything wrong, so whole groups have reward 0 and std 0
    result = train(TrainConfig(**SHORT, reference="weak", std_eps=0.0))
    assert result.status == "failed"
    assert "all-equal rewards and std_eps is 0, so their z-scored advantage is 0/0" in result.message
    for record in result.history:
        assert all(v == v for v in record.values() if isinstance(v, float)), "no NaN reaches the history"


def test_zero_std_filter_drops_all_equal_groups():
    result = train(TrainConfig(**SHORT, reference="weak", std_eps=0.0, skip_zero_std_groups=True))
    assert result.status == "finished"
    for record in result.history[1:]:
        assert record["groups_used"] == round(4 * (1 - record["frac_reward_zero_std"]))


@pytest.mark.parametrize("loss_agg", ["seq_mean", "token_mean", "token_sum_norm"])
@pytest.mark.parametrize("baseline", ["zscore", "critic"])
def test_gradient_accumulation_gives_the_full_batch_gradient(loss_agg, baseline):
    policy = load_reference_policy("default").train()
    config = TrainConfig(loss_agg=loss_agg, kl_coef=0.1, baseline=baseline)
    prompts = ProblemSampler(Task.parse("2d+"), 0).sample(24).prompts
    answers, mask = sample(policy, prompts, 4, 1.0, torch.Generator().manual_seed(0))
    advantages = torch.randn(24, 1) * mask if baseline == "zscore" else torch.randn(24, 4) * mask
    with torch.no_grad():
        ref_logprobs = torch.log_softmax(torch.randn(24, 4, 16), -1)[..., 0]
    batch = Rollout(prompts, answers, mask, advantages, ref_logprobs=ref_logprobs)

    def gradient(micro_batch_size):
        policy.zero_grad(set_to_none=True)
        config.micro_batch_size = micro_batch_size
        loss, _ = accumulate_gradients(policy, batch, config, max_len=4)
        return loss, torch.cat([p.grad.reshape(-1) for p in policy.parameters()])

    full_loss, full = gradient(0)
    for micro in (1, 5, 8):
        loss, accumulated = gradient(micro)
        assert abs(loss - full_loss) < 1e-5
        assert (accumulated - full).abs().max() < 1e-5


def test_every_baseline_runs():
    for baseline in ("none", "mean", "zscore", "rloo", "ema", "critic"):
        result = train(TrainConfig(**{**SHORT, "steps": 2}, baseline=baseline))
        assert result.status == "finished", (baseline, result.message)
    critic = train(TrainConfig(**{**SHORT, "steps": 2, "group_size": 1, "probe_every": 0}, baseline="critic"))
    assert "explained_variance" in critic.history[1] and "value_loss" in critic.history[1]
    assert "frac_reward_zero_std" not in critic.history[1]  # a group of one has no spread to measure


@pytest.mark.parametrize("num_groups, chunks", [(16, 4), (2, 2), (3, 3), (5, 5), (6, 6), (8, 4), (12, 4), (64, 4)])
def test_the_probe_cuts_the_batch_into_equal_chunks_of_whole_groups(num_groups, chunks):
    assert probe_chunks(num_groups) == chunks and num_groups % chunks == 0


def test_the_non_finite_message_counts_tied_groups_exactly_even_for_one_prompt():
    # the std of one row of identical float32 values such as 2/3 can come out one rounding step, not 0:
    # tied groups are found by exact equality (advantages.equal_groups), so the message still names them
    from grpo_lab.core.loop import explain_non_finite_advantages

    message = explain_non_finite_advantages(torch.full((1, 8), 2 / 3), TrainConfig(std_eps=0.0))
    assert message.startswith("1 group(s) had all-equal rewards")
