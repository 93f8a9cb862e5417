"""PPO's critic: a learned value model, GAE over the answer tokens, and the critic's own updates.

The value model is a **separate network**, not a head on the policy: a copy of the reference
policy's transformer whose vocabulary head is swapped for a scalar one. Separate, because in a
model this small a shared trunk lets the value loss pull on the very features the policy
gradient is moving (CleanRL's PPO makes the same choice); initialised from the reference, as in
RLHF practice, so it starts with features that already know the task instead of from noise.
**Every** parameter trains, trunk and head (about 101k with the default policy; ``ValueModel``
unfreezes the copy, since the reference it copies is frozen as the KL anchor).

A critic needs many more updates than a policy gets: like CleanRL's PPO, each batch is used for
``critic_epochs`` passes of ``critic_minibatches`` shuffled minibatches (``update_critic``), with
an optional clip of how far V may move from the values it had when the batch was sampled. With
``critic_schedule='policy'`` the critic instead takes the policy's schedule, ``inner_epochs`` x
``policy_minibatches`` updates a step, as verl and OpenRLHF run actor and critic on the same
minibatches (``critic_updates_schedule``).
This is the extra network, optimiser, loss and compute that GRPO's group baseline removes.

Shapes: B responses, La answer tokens. The reward arrives only at a response's last token.
"""

from __future__ import annotations

import copy
import math

import torch
import torch.nn as nn

from .config import TrainConfig
from .model import TinyTransformer

CRITIC_SCHEDULES = ("own", "policy")  # the critic's updates a step: its own epochs x minibatches, or the policy's (verl, OpenRLHF)

VALUE_HEAD_INIT_STD = 0.01  # small and random: V starts near 0, and the trunk gets a gradient from the first update


class ValueModel(nn.Module):
    """tokens [B, T] -> value estimate V(s_t) of the state after reading token t, [B, T]."""

    def __init__(self, reference: TinyTransformer):
        super().__init__()
        self.trunk = copy.deepcopy(reference)
        self.trunk.head = nn.Identity()
        self.value_head = nn.Linear(reference.config.d_model, 1)
        nn.init.normal_(self.value_head.weight, std=VALUE_HEAD_INIT_STD)
        nn.init.zeros_(self.value_head.bias)
        self.requires_grad_(True)  # the copied reference arrives frozen; the critic trains all of itself

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.value_head(self.trunk(tokens)).squeeze(-1)

    def num_trainable_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad)


def answer_values(value_model: ValueModel, prompts: torch.Tensor, answers: torch.Tensor) -> torch.Tensor:
    """V of the state before each answer token. prompts [B, Lp], answers [B, La] -> [B, La].
    Column 0 is V(prompt): the value of the prompt alone, the quantity a group mean estimates."""
    sequence = torch.cat([prompts, answers], dim=1)
    return value_model(sequence[:, :-1])[:, prompts.shape[1] - 1 :]


def gae(rewards: torch.Tensor, values: torch.Tensor, mask: torch.Tensor, gamma: float = 1.0, lam: float = 0.95) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalised advantage estimation with the sequence reward on its last answer token.

    rewards [B] (one scalar per response), values [B, La], mask [B, La]
    -> (advantages [B, La], returns [B, La]); both 0 where mask is 0.
    delta_t = r_t + gamma * V_{t+1} - V_t, A_t = delta_t + gamma * lam * A_{t+1}, and V after the
    last token is 0 (the episode ends). returns = A + V, the critic's regression target.
    """
    values = values * mask
    last = mask.sum(dim=1).long() - 1
    token_rewards = torch.zeros_like(values)
    token_rewards[torch.arange(len(rewards)), last] = rewards
    advantages = torch.zeros_like(values)
    running = torch.zeros_like(rewards)
    for t in reversed(range(values.shape[1])):
        next_value = values[:, t + 1] if t + 1 < values.shape[1] else torch.zeros_like(rewards)
        delta = token_rewards[:, t] + gamma * next_value - values[:, t]
        running = (delta + gamma * lam * running) * mask[:, t]
        advantages[:, t] = running
    return advantages, (advantages + values) * mask


def whiten(advantages: torch.Tensor, mask: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """Normalise advantages to mean 0, std 1 over the batch's answer tokens (as PPO does)."""
    count = mask.sum()
    mean = (advantages * mask).sum() / count
    variance = (((advantages - mean) * mask) ** 2).sum() / count
    return (advantages - mean) / (variance.sqrt() + eps) * mask


def value_loss(
    values: torch.Tensor, returns: torch.Tensor, mask: torch.Tensor, old_values: torch.Tensor | None = None, value_clip: float = 0.0
) -> torch.Tensor:
    """Mean squared error between V and the returns over answer tokens (a scalar); all inputs [b, La].

    With ``value_clip`` > 0 (and the values the critic gave when the batch was sampled), the
    error of V moved at most ``value_clip`` from ``old_values`` is also computed and the larger of
    the two is kept, PPO's clipped value loss (CleanRL ``clip_vloss``): V cannot chase one batch's
    returns far in a single batch.
    """
    squared = (values - returns) ** 2
    if value_clip > 0 and old_values is not None:
        moved = old_values + (values - old_values).clamp(-value_clip, value_clip)
        squared = torch.maximum(squared, (moved - returns) ** 2)
    return (squared * mask).sum() / mask.sum()


def critic_updates_schedule(settings: TrainConfig) -> tuple[int, int]:
    """(passes over the batch, minibatches per pass) of the critic's updates: ``critic_epochs`` x
    ``critic_minibatches``, or under ``critic_schedule='policy'`` the policy's ``inner_epochs`` x
    ``policy_minibatches``."""
    if settings.critic_schedule == "policy":
        return settings.inner_epochs, settings.policy_minibatches
    return settings.critic_epochs, settings.critic_minibatches


def update_critic(
    value_model: ValueModel,
    optimizer: torch.optim.Optimizer,
    prompts: torch.Tensor,
    answers: torch.Tensor,
    mask: torch.Tensor,
    returns: torch.Tensor,
    old_values: torch.Tensor,
    settings: TrainConfig,
    generator: torch.Generator,
) -> dict:
    """Fit the critic to one batch's returns: the passes of ``critic_updates_schedule(settings)``,
    each over that many shuffled minibatches, one optimiser step per minibatch (epochs x
    minibatches updates in all), with ``settings.value_clip`` and ``settings.max_grad_norm``.

    prompts [B, Lp], answers / mask / returns / old_values [B, La]. Returns {"value_loss": mean
    loss of the last pass, "critic_updates": the number of optimiser steps}.
    """
    epochs, minibatches = critic_updates_schedule(settings)
    value_clip, max_grad_norm = settings.value_clip, settings.max_grad_norm
    rows = len(prompts)
    size = math.ceil(rows / minibatches)
    parameters = list(value_model.parameters())
    last_pass = []
    for _ in range(epochs):
        last_pass.clear()
        order = torch.randperm(rows, generator=generator).to(prompts.device)
        for start in range(0, rows, size):
            index = order[start : start + size]
            loss = value_loss(answer_values(value_model, prompts[index], answers[index]), returns[index], mask[index], old_values[index], value_clip)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(parameters, max_grad_norm)
            optimizer.step()
            last_pass.append(float(loss.detach()))
    return {"value_loss": sum(last_pass) / len(last_pass), "critic_updates": epochs * math.ceil(rows / size)}


def explained_variance(predictions: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor | None = None) -> float:
    """1 - Var(targets - predictions) / Var(targets): 1 is a perfect fit, 0 is no better than a
    constant, negative is worse than a constant; NaN when Var(targets) = 0 (nothing to explain).
    predictions, targets: the same shape (a critic's values and returns, [B, La]); mask: that shape,
    the entries to count (answer tokens), or None for all of them."""
    if mask is not None:
        selected = mask.bool()
        predictions, targets = predictions[selected], targets[selected]
    variance = targets.var(correction=0)
    if variance == 0:
        return float("nan")
    return float(1 - (targets - predictions).var(correction=0) / variance)
