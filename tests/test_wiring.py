"""Tests that catch wiring bugs: each would fail if a piece were connected wrongly (the KL's reference,
the inner epochs and their fresh gradients, GAE's gamma and lambda, the critic's whitening,
clip_ratio's denominator, the gradient-noise probe's statistics, the batch scope's exact zeros).
tests/test_planted_bugs.py plants each of those bugs and checks that these tests catch it."""

import math

import pytest
import torch

import grpo_lab.core.loop as trainer_module
from grpo_lab import TrainConfig, compute_advantages, train
from grpo_lab.core import probes

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


def test_the_critic_advantages_are_gae_with_gamma_one_and_the_configured_lambda(monkeypatch):
    calls = []
    real_gae = trainer_module.gae

    def recording_gae(*args, **kwargs):
        advantages, returns = real_gae(*args, **kwargs)
        calls.append((args[0], args[1], args[2], advantages))
        return advantages, returns

    monkeypatch.setattr(trainer_module, "gae", recording_gae)
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
    # a large step and a tiny clip: the first pass never clips (its ratio is exactly 1), the second binds on
    # about half of the tokens, so over both passes the share is at most 1/2; every answer has at least 2
    # tokens, so a count divided by responses instead of tokens would exceed 1/2
    history = train(TrainConfig(steps=1, inner_epochs=2, lr=1e-2, clip_eps=1e-3, **SMALL)).history
    assert 0.15 < history[1]["clip_ratio"] <= 0.5, history[1]["clip_ratio"]


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
