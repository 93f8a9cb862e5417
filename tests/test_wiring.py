"""Tests that catch wiring bugs: each would fail if a piece were connected wrongly (the KL's reference,
the inner epochs and their fresh gradients, GAE's gamma and lambda, the critic's whitening,
clip_ratio's denominator, the gradient-noise probe's statistics, the batch scope's exact zeros;
the Monte-Carlo values' samples, lambda and temperature; the critic's passes and reported updates;
dynamic sampling's refill count; std_scope; the reward noise's seed; the held-out explained
variance; the old log-probs of one pass of minibatches; a fresh minibatch order each pass).
tests/test_planted_bugs.py plants each of those bugs and checks that these tests catch it."""

import math
from types import SimpleNamespace

import pytest
import torch

import grpo_lab.core.critic as critic_module
import grpo_lab.core.loop as trainer_module
import grpo_lab.core.mc_value as mc_value_module
from grpo_lab import TrainConfig, compute_advantages, train
from grpo_lab.checks.config_rules import validate_config
from grpo_lab.core import probes
from grpo_lab.core.model import TinyTransformer
from grpo_lab.trainer import start_run

SMALL = dict(prompts_per_step=8, group_size=8, eval_every=0, probe_every=0, seed=0)


def test_the_kl_is_measured_against_the_frozen_reference_once_the_policy_has_moved():
    history = train(TrainConfig(steps=2, lr=1e-2, kl_coef=0.1, **SMALL)).history
    assert history[1]["kl"] == pytest.approx(0.0, abs=1e-6)  # step 1: the policy is still the reference
    assert all(record["kl"] > 1e-3 for record in history[2:]), [record["kl"] for record in history[1:]]  # step 0 has no kl


def record_optimiser_steps(monkeypatch) -> list[torch.Tensor]:
    """Every policy optimiser step of a run from now on: the flat gradient it was given, in order."""
    steps: list[torch.Tensor] = []
    original = torch.optim.Adam.step

    def recording_step(self, *args, **kwargs):
        steps.append(torch.cat([p.grad.detach().reshape(-1).clone() for group in self.param_groups for p in group["params"]]))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(torch.optim.Adam, "step", recording_step)
    return steps


@pytest.fixture
def optimiser_steps(monkeypatch):
    return record_optimiser_steps(monkeypatch)


@pytest.mark.parametrize("inner_epochs", [1, 2, 3])
def test_k_inner_epochs_make_k_optimiser_steps_each_from_a_fresh_gradient(inner_epochs, optimiser_steps):
    # lr tiny: the parameters barely move, so every pass's fresh gradient is the first pass's; no clipping
    # of the norm, so gradients left to pile up across passes (2x, 3x) would show
    train(TrainConfig(steps=1, inner_epochs=inner_epochs, lr=1e-12, max_grad_norm=1e6, **SMALL))
    assert len(optimiser_steps) == inner_epochs
    first = optimiser_steps[0]
    assert float(first.norm()) > 0
    for gradient in optimiser_steps[1:]:
        assert float(gradient.norm() / first.norm()) == pytest.approx(1.0, rel=1e-3)
        assert torch.allclose(gradient, first, rtol=1e-3, atol=1e-6 * float(first.abs().max()))


def reference_gae(rewards: torch.Tensor, values: torch.Tensor, mask: torch.Tensor, lam: float) -> torch.Tensor:
    """GAE written out once more, gamma = 1: A_t = sum_l lam^l delta_{t+l}, the reward on the last token."""
    advantages = torch.zeros_like(values)
    for row in range(len(rewards)):
        length = int(mask[row].sum())
        deltas = [(float(rewards[row]) if t == length - 1 else float(values[row, t + 1])) - float(values[row, t]) for t in range(length)]
        for t in range(length):
            advantages[row, t] = sum(lam**offset * delta for offset, delta in enumerate(deltas[t:]))
    return advantages


def record_gae(monkeypatch) -> list[tuple[torch.Tensor, ...]]:
    """Every GAE of a run from now on, the loop's (Monte-Carlo values) and the critic's: (rewards,
    values, mask, advantages), in order."""
    calls = []
    for module in (trainer_module, critic_module):

        def recording_gae(*args, real_gae=module.gae, **kwargs):
            advantages, returns = real_gae(*args, **kwargs)
            calls.append((args[0], args[1], args[2], advantages))
            return advantages, returns

        monkeypatch.setattr(module, "gae", recording_gae)
    return calls


def test_the_critic_advantages_are_gae_with_gamma_one_and_the_configured_lambda(monkeypatch):
    calls = record_gae(monkeypatch)
    train(TrainConfig(baseline="critic", steps=1, gae_lambda=0.3, **SMALL))
    ((rewards, values, mask, advantages),) = calls
    assert torch.allclose(advantages, reference_gae(rewards, values, mask, 0.3), atol=1e-5)


def test_the_critic_advantages_are_whitened_over_the_batch_tokens():
    # token_mean at ratio 1 (one pass, no KL): the loss is minus the token mean of the advantages,
    # 0 once they are whitened; raw GAE advantages of 0/1 rewards against a near-0 critic are not
    record = train(TrainConfig(baseline="critic", steps=1, loss_agg="token_mean", **SMALL)).history[1]
    assert record["loss"] == pytest.approx(0.0, abs=1e-5)
    assert record["adv_abs_max"] > 1.0  # unit std: some token lies beyond one std


def test_clip_ratio_is_a_fraction_of_tokens():
    # a large step and a tiny clip: the first of 4 passes never clips (its ratio is exactly 1), so over the
    # passes the share of tokens is at most 3/4; the later passes bind on a good part of the tokens (0.155 to
    # 0.42 over seeds 0-5 and two reference policies), and every answer has at least 2 tokens, so a count
    # divided by the responses of a pass instead of its tokens would be at least 8 x 0.1, above 3/4
    history = train(TrainConfig(steps=1, inner_epochs=4, lr=1e-2, clip_eps=1e-3, **SMALL)).history
    assert 0.1 < history[1]["clip_ratio"] <= 0.75, history[1]["clip_ratio"]


def test_the_gradient_noise_probe_on_hand_computed_gradients():
    gradients = torch.tensor([[1.0, 0.0], [3.0, 2.0]])  # mean [2, 1]; Bessel variance 2 per parameter
    noise = probes.gradient_noise(gradients)
    assert noise["grad_var"] == pytest.approx((2 + 2) / 2)  # trace of the covariance of the mean of K=2
    assert noise["grad_snr"] == pytest.approx((2**2 + 1**2) / 2.0)
    assert noise["grad_mean_norm"] == pytest.approx(math.sqrt(5))


def test_the_gradient_noise_probe_recovers_a_known_variance():
    # K chunk gradients = mu + N(0, sigma^2 I): Var(mean) has trace n_params * sigma^2 / K, and
    # E||mean||^2 = ||mu||^2 + that, so grad_snr reads ||mu||^2 / trace + 1 on average
    generator = torch.Generator().manual_seed(0)
    num_chunks, num_params, sigma = 8, 20_000, 0.5
    mu = torch.full((num_params,), 0.01)
    gradients = mu + sigma * torch.randn(num_chunks, num_params, generator=generator)
    noise = probes.gradient_noise(gradients)
    trace = num_params * sigma**2 / num_chunks
    assert noise["grad_var"] == pytest.approx(trace, rel=0.03)
    assert noise["grad_snr"] == pytest.approx(float(mu.pow(2).sum()) / trace + 1, rel=0.05)


def test_a_tied_group_is_exactly_zero_in_the_batch_scope_too():
    # 16 rewards of 5 + 1/3: their float32 mean is one rounding step off, so centring them plainly
    # would leave +-5e-7, a spurious signal once divided by a tiny eps
    tied = torch.full((1, 16), 5 + 1 / 3)
    rewards = torch.cat([tied, torch.linspace(0, 1, 16)[None]])
    for eps_mode in ("add", "clamp"):
        advantages = compute_advantages(rewards, "zscore", std_eps=1e-6, std_scope="batch", eps_mode=eps_mode)
        assert (advantages[0] == 0).all() and (advantages[1] != 0).all()


def test_a_batch_without_any_spread_is_exactly_zero_with_eps_and_nan_without():
    rewards = torch.full((4, 8), 5 + 1 / 3)
    assert float(rewards.reshape(-1).std()) > 0  # computed plainly, 32 equal float32 numbers have a std of one rounding step
    assert (compute_advantages(rewards, "zscore", std_eps=1e-6, std_scope="batch") == 0).all()
    assert compute_advantages(rewards, "zscore", std_eps=0.0, std_scope="batch").isnan().all()  # 0/0, as documented


def record_sampling(monkeypatch) -> list[tuple[str, int, float]]:
    """Every call of ``model.sample`` by the loop and by the Monte-Carlo values from now on:
    (the calling module, the responses it generated, its temperature), in order."""
    calls: list[tuple[str, int, float]] = []
    for module in (trainer_module, mc_value_module):

        def recording(policy, prompts, max_new_tokens, temperature=1.0, *rest, real=module.sample, where=module.__name__, **kwargs):
            calls.append((where, len(prompts), temperature))
            return real(policy, prompts, max_new_tokens, temperature, *rest, **kwargs)

        monkeypatch.setattr(module, "sample", recording)
    return calls


MC_VALUE_RUN = dict(baseline="mc_value", mc_rollouts=2, temperature=0.7, prompts_per_step=4, group_size=4, eval_every=0, probe_every=0, seed=0)


def test_the_samples_count_every_generated_response_the_value_rollouts_included(monkeypatch):
    calls = record_sampling(monkeypatch)
    generated_by_step = []  # responses generated so far (greedy evaluation aside), when each step is reported
    train(TrainConfig(steps=2, **MC_VALUE_RUN), on_step=lambda record: generated_by_step.append((record["step"], record["samples"], calls[:])))
    for step, samples, calls_so_far in generated_by_step[1:]:
        value_rollouts = sum(rows for where, rows, _ in calls_so_far if where == mc_value_module.__name__)
        assert value_rollouts > 0
        assert samples == sum(rows for _, rows, temperature in calls_so_far if temperature > 0), step


def test_the_value_rollouts_are_sampled_at_the_policys_sampling_temperature(monkeypatch):
    calls = record_sampling(monkeypatch)
    train(TrainConfig(steps=1, **MC_VALUE_RUN))
    rollout_temperatures = {temperature for where, _, temperature in calls if where == mc_value_module.__name__}
    response_temperatures = {temperature for where, _, temperature in calls if where == trainer_module.__name__ and temperature > 0}
    assert rollout_temperatures == response_temperatures == {0.7}


def test_the_monte_carlo_advantages_are_gae_with_lambda_zero(monkeypatch):
    # VinePPO's A_t = r_t + V(s_{t+1}) - V(s_t): lambda 0 whatever gae_lambda says
    calls = record_gae(monkeypatch)
    train(TrainConfig(steps=1, gae_lambda=0.95, **MC_VALUE_RUN))
    ((rewards, values, mask, advantages),) = calls
    assert len(torch.unique(values[mask.bool()])) > 2  # the values differ along the answers: lambda matters
    assert torch.allclose(advantages, reference_gae(rewards, values, mask, 0.0), atol=1e-5)


def critic_minibatches_seen(monkeypatch, settings: TrainConfig, rows: int) -> tuple[list[list[int]], int, int]:
    """One ``update_critic`` on a batch of ``rows`` distinct rows: (the rows each optimiser step fitted,
    in order; the optimiser steps taken; the critic_updates it reported)."""
    torch.manual_seed(0)
    value_model = critic_module.ValueModel(TinyTransformer())
    optimizer = torch.optim.Adam(value_model.parameters(), lr=1e-4)
    prompts = torch.arange(rows)[:, None]  # row i's prompt is the token i: each minibatch says which rows it holds
    answers = torch.randint(0, 10, (rows, 2), generator=torch.Generator().manual_seed(0))
    mask, returns = torch.ones(rows, 2), torch.rand(rows, 2, generator=torch.Generator().manual_seed(1))
    fitted, steps = [], []
    answer_values, step = critic_module.answer_values, optimizer.step
    monkeypatch.setattr(critic_module, "answer_values", lambda model, p, a: (fitted.append(p[:, 0].tolist()), answer_values(model, p, a))[1])
    monkeypatch.setattr(optimizer, "step", lambda *a, **k: (steps.append(1), step(*a, **k))[1])
    metrics = critic_module.update_critic(value_model, optimizer, prompts, answers, mask, returns, torch.zeros(rows, 2), settings, torch.Generator())
    return fitted, len(steps), metrics["critic_updates"]


def test_the_critic_makes_its_epochs_passes_each_of_its_minibatches(monkeypatch):
    # 3 passes of 2 minibatches over 8 rows: 6 steps of 4 rows, each pass covering every row once
    # (swapped, 2 passes of 3 minibatches would also be 6 steps, of 3, 3 and 2 rows)
    own = TrainConfig(baseline="critic", critic_epochs=3, critic_minibatches=2, inner_epochs=5, policy_minibatches=4)
    policy = TrainConfig(baseline="critic", critic_schedule="policy", critic_epochs=5, critic_minibatches=4, inner_epochs=3, policy_minibatches=2)
    for settings in (own, policy):
        fitted, _, _ = critic_minibatches_seen(monkeypatch, settings, rows=8)
        assert [len(rows) for rows in fitted] == [4] * 6, settings.critic_schedule
        for first in range(0, 6, 2):
            assert sorted(fitted[first] + fitted[first + 1]) == list(range(8)), settings.critic_schedule


@pytest.mark.parametrize("rows", [3, 5, 8])
def test_the_critic_reports_the_optimiser_steps_it_took(monkeypatch, rows):
    # 4 minibatches of 3 rows are 3 steps a pass (one row each), of 5 rows 3 steps (2, 2, 1)
    settings = TrainConfig(baseline="critic", critic_epochs=2, critic_minibatches=4)
    fitted, steps, reported = critic_minibatches_seen(monkeypatch, settings, rows)
    assert steps == len(fitted) and reported == steps
    assert steps == 2 * {3: 3, 5: 3, 8: 4}[rows]


class ScriptedRewards:
    """A reward model whose every batch of P groups of G answers gets the next scripted rewards,
    one letter a group: 's' (a spread: 1, 0, 0, ...), '0' (all wrong) or '1' (all right). The
    rewards are exactly 0/1 and ``correct`` is them: 'the rewards all equal' and 'all correct or
    all wrong' (DAPO's words) pick the same groups."""

    def __init__(self, script: list[str], group_size: int):
        self.script, self.group_size = list(script), group_size

    def score(self, prompts: torch.Tensor, answers: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        spread = torch.zeros(self.group_size).index_fill(0, torch.tensor([0]), 1.0)
        groups = {"s": spread, "0": torch.zeros(self.group_size), "1": torch.ones(self.group_size)}
        rewards = torch.cat([groups[letter] for letter in self.script.pop(0)])
        assert len(rewards) == len(prompts)
        return rewards, rewards.bool()


@pytest.mark.parametrize(
    "script, extra_batches, groups",
    [
        (["sss0", "1ss1"], 3, 4),  # three groups with a spread, then one of the next batch's two
        (["ssss"], 3, 4),  # the first batch is enough
        (["s000", "0s00", "00s0", "000s"], 3, 4),  # the fourth batch completes the batch exactly
        (["s000", "0s00", "0000"], 2, 2),  # the draws run out: fewer groups
    ],
)
def test_dynamic_sampling_refills_up_to_p_groups_with_a_spread(script, extra_batches, groups):
    config = validate_config(TrainConfig(prompts_per_step=4, group_size=4, dynamic_sampling_batches=extra_batches, eval_every=0, probe_every=0))
    state, problems = start_run(config)
    state.reward_model = ScriptedRewards(script, config.group_size)
    batch, sampled = trainer_module.sample_and_score(config, state, problems)
    assert not state.reward_model.script  # every scripted batch was drawn, and no more
    assert sampled["rewards"].shape == (4 * len(script), 4)
    assert batch["rewards"].shape == (groups, 4) and len(batch["prompts"]) == len(batch["answers"]) == groups * 4
    assert (batch["rewards"].sum(dim=1) == 1).all()  # only groups with a spread


def test_the_trainer_scales_the_advantages_with_the_configured_std_scope():
    for scope in ("batch", "group"):
        batches = []
        train(TrainConfig(steps=1, std_scope=scope, **SMALL), on_batch=batches.append)
        rewards, advantages = batches[0]["rewards"], batches[0]["advantages"]
        by_scope = {other: compute_advantages(rewards, "zscore", std_scope=other) for other in ("batch", "group")}
        assert not torch.allclose(by_scope["batch"], by_scope["group"], atol=1e-3)  # this batch tells the scopes apart
        assert torch.allclose(advantages, by_scope[scope], atol=1e-5), scope


def reward_noise_of_a_run(seed: int) -> torch.Tensor:
    """The noise of every reward of a 1-step run with reward_noise 0.01 (exact 0/1 task rewards plus
    it, so it is each reward's distance to the nearest integer)."""
    batches = []
    train(TrainConfig(steps=1, reward_noise=0.01, **{**SMALL, "seed": seed}), on_batch=batches.append)
    rewards = torch.cat([batch["rewards"] for batch in batches])
    return rewards - rewards.round()


def test_the_reward_noise_is_seeded_by_the_runs_seed():
    first = reward_noise_of_a_run(0)
    assert float(first.abs().max()) > 0
    assert torch.equal(first, reward_noise_of_a_run(0))
    assert not torch.allclose(first, reward_noise_of_a_run(1), atol=1e-3)


def test_the_held_out_explained_variance_compares_v_with_each_responses_reward():
    # two responses, rewards 1 (two tokens, V 1/2 and 3/4) and 0 (one token, V 1/4, then padding):
    # residuals 1/2, 1/4, -1/4 have variance 7/72, the targets 1, 1, 0 have 2/9, so EV = 1 - 7/16
    values = torch.tensor([[0.5, 0.75], [0.25, 0.5]])
    state = SimpleNamespace(value_model=lambda tokens: values.clone(), device=torch.device("cpu"))
    prompts, answers = torch.tensor([[3], [3]]), torch.tensor([[1, 2], [4, 0]])
    mask, rewards = torch.tensor([[1.0, 1.0], [1.0, 0.0]]), torch.tensor([[1.0, 0.0]])
    record = {}
    trainer_module.value_advantages(TrainConfig(baseline="critic", group_size=2), state, prompts, answers, mask, rewards, record)
    assert record["heldout_explained_variance"] == pytest.approx(9 / 16)


def test_one_pass_of_several_minibatches_takes_the_ratio_against_the_sampling_policy():
    # the first minibatch's step moves the policy, so the second's ratio leaves 1 and a tiny clip binds
    # on some of its tokens; against log-probs of the current policy the ratio would stay 1, never clipped
    record = train(TrainConfig(steps=1, inner_epochs=1, policy_minibatches=2, lr=1e-2, clip_eps=1e-3, **SMALL)).history[1]
    assert record["policy_updates"] == 2
    assert 0.05 < record["clip_ratio"] <= 0.5, record["clip_ratio"]


def test_every_pass_draws_a_fresh_order_of_whole_groups(monkeypatch):
    minibatches = []  # the prompt of each row of each optimiser step's minibatch
    accumulate = trainer_module.accumulate_gradients

    def recording(policy, batch, *rest):
        minibatches.append([tuple(prompt) for prompt in batch.prompts.tolist()])
        return accumulate(policy, batch, *rest)

    monkeypatch.setattr(trainer_module, "accumulate_gradients", recording)
    train(TrainConfig(steps=1, inner_epochs=3, policy_minibatches=2, lr=1e-12, **SMALL))
    G = SMALL["group_size"]
    groups_of = [minibatch[::G] for minibatch in minibatches]
    assert len(minibatches) == 6 and all(minibatch == [p for p in groups for _ in range(G)] for minibatch, groups in zip(minibatches, groups_of))
    passes = [groups_of[first] + groups_of[first + 1] for first in range(0, 6, 2)]
    assert all(len(set(order)) == SMALL["prompts_per_step"] and set(order) == set(passes[0]) for order in passes)  # every group once a pass
    assert len({tuple(order) for order in passes}) == 3, passes  # three passes, three orders
