"""DAPO's dynamic sampling (``dynamic_sampling_batches``): over-sample and refill the batch with groups
whose rewards differ, counting every sampled response; against the filter that drops without refilling."""

from __future__ import annotations

import pytest
from conftest import assert_one_line_error

from grpo_lab import TrainConfig, train
from grpo_lab.checks.config_rules import validate_config
from grpo_lab.errors import ConfigError

SHORT = dict(reference="weak", prompts_per_step=8, group_size=4, steps=3, eval_every=0, probe_every=0, seed=0)


def test_dynamic_sampling_trains_only_on_groups_with_a_spread_and_counts_every_sampled_response():
    batches = []
    result = train(TrainConfig(dynamic_sampling_batches=8, **SHORT), on_batch=batches.append)
    steps = result.history[1:]
    assert result.status == "finished"
    for record, batch in zip(steps, batches):
        rewards = batch["rewards"]
        assert bool((rewards.std(dim=1, correction=0) > 0).all()), "a tied group was trained on"
        assert record["responses_sampled"] % (8 * 4) == 0 and record["responses_sampled"] >= 8 * 4
        assert record["groups_used"] == rewards.shape[0] == 8 or record["responses_sampled"] == 9 * 8 * 4
    # the weak reference ties most groups (all wrong), so refilling needs more than one draw
    assert sum(record["responses_sampled"] for record in steps) > len(steps) * 8 * 4
    assert steps[-1]["samples"] == sum(record["responses_sampled"] for record in steps)


def test_the_filter_without_refill_trains_on_fewer_groups_and_samples_one_batch():
    result = train(TrainConfig(skip_zero_std_groups=True, **SHORT))
    steps = result.history[1:]
    assert all(record["responses_sampled"] == 8 * 4 for record in steps)
    assert any(record["groups_used"] < 8 for record in steps)


def test_without_dynamic_sampling_a_step_samples_one_batch():
    steps = train(TrainConfig(**{**SHORT, "reference": "default"})).history[1:]
    assert all(record["responses_sampled"] == 8 * 4 and record["groups_used"] == 8 for record in steps)


# its range (-1, 65, ...) is in the shared table of bad values (tests/bad_values.py)
@pytest.mark.parametrize("changes", [{"baseline": "critic", "group_size": 1}, {"baseline": "mc_value"}])
def test_dynamic_sampling_without_groups_to_compare_is_one_clear_error(changes):
    with pytest.raises(ConfigError) as caught:
        validate_config(TrainConfig(dynamic_sampling_batches=2, **changes))
    assert_one_line_error(caught.value, "dynamic_sampling_batches", 2)
