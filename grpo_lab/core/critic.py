"""PPO's critic: a learned value model, GAE over the answer tokens, and the critic's own updates.

By default the value model is a **separate network**, not a head on the policy: a copy of the
reference policy's transformer whose vocabulary head is swapped for a scalar one. Separate, because
in a model this small a shared trunk lets the value loss pull on the very features the policy
gradient is moving (CleanRL's PPO makes the same choice); initialised from the reference, as in
RLHF practice, so it starts with features that already know the task instead of from noise.
**Every** parameter trains, trunk and head (about 101k with the default policy; ``ValueModel``
unfreezes the copy, since the reference it copies is frozen as the KL anchor).

The variants practitioners use, each a TrainConfig knob (off by default):

- ``critic_trunk='shared'``: a value head on the policy's own hidden states (``ValueModel`` of the
  policy, sharing its parameters), trained with it: loss = policy loss + ``vf_coef`` x value loss,
  one optimiser at the policy's ``lr`` and on its schedule (``backward_value_loss``; CleanRL's
  Atari agents, the original RLHF setups);
- ``critic_lambda``: the lambda of the critic's return targets apart from ``gae_lambda``, the
  actor's (``advantages_and_returns``); VAPO fits the critic to lambda = 1 returns, the Monte-Carlo
  return, whose target does not lean on the critic's own, biased, values;
- ``critic_warmup_steps``: VAPO's value pretraining, the critic fitted to batches of the starting
  policy's responses before the policy's first update (``pretrain_critic``).

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
from collections.abc import Callable

import torch
import torch.nn as nn

from .config import TrainConfig
from .model import TinyTransformer

CRITIC_SCHEDULES = ("own", "policy")  # the critic's updates a step: its own epochs x minibatches, or the policy's (verl, OpenRLHF)
CRITIC_TRUNKS = ("separate", "shared")  # the critic's transformer: its own copy of the reference, or the policy's (a value head on it)
SAME_AS_GAE_LAMBDA = -1.0  # critic_lambda's default: the critic's returns take gae_lambda, as the actor's advantages do

VALUE_HEAD_INIT_STD = 0.01  # small and random: V starts near 0, and the trunk gets a gradient from the first update


class ValueModel(nn.Module):
    """tokens [B, T] -> value estimate V(s_t) of the state after reading token t, [B, T]: a scalar
    head on a transformer's last hidden states (``model`` without its vocabulary head).

    ``shared=False``: the transformer is a copy of ``model`` (the reference), trained on its own.
    ``shared=True``: it *is* ``model`` (the policy): the trunk holds the policy's own modules, so V
    reads the hidden states the policy's logits are computed from, and the value loss's gradient
    reaches the policy's parameters."""

    def __init__(self, model: TinyTransformer, shared: bool = False):
        super().__init__()
        self.trunk = copy.copy(model) if shared else copy.deepcopy(model)
        self.trunk._modules = dict(self.trunk._modules)  # its own table of modules: swapping the head below leaves a shared policy's alone
        self.trunk.head = nn.Identity()
        self.value_head = nn.Linear(model.config.d_model, 1)
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


def new_value_model(settings: TrainConfig, reference: TinyTransformer, policy: TinyTransformer) -> ValueModel:
    """The critic of a run at step 0 (``settings.critic_trunk``): a copy of the frozen reference, or a
    value head on the policy itself. The head is drawn from torch's global generator."""
    if settings.critic_trunk == "shared":
        return ValueModel(policy, shared=True)
    return ValueModel(reference)


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


def critic_lambda(settings: TrainConfig) -> float:
    """The lambda of the critic's return targets: ``settings.critic_lambda``, or ``gae_lambda`` when it
    is SAME_AS_GAE_LAMBDA (-1, the default)."""
    return settings.gae_lambda if settings.critic_lambda == SAME_AS_GAE_LAMBDA else settings.critic_lambda


def advantages_and_returns(
    rewards: torch.Tensor, values: torch.Tensor, mask: torch.Tensor, settings: TrainConfig
) -> tuple[torch.Tensor, torch.Tensor]:
    """PPO's advantages and the critic's targets from one batch's values, gamma 1: (GAE advantages
    with ``gae_lambda``, the actor's; GAE returns with ``critic_lambda(settings)``, the critic's),
    each [B, La]. rewards [B], values and mask [B, La]. With one lambda for both (the default) it is
    one ``gae``; VAPO's decoupled lambdas (critic 1.0, actor below 1) take a second."""
    advantages, returns = gae(rewards, values, mask, 1.0, settings.gae_lambda)
    if critic_lambda(settings) != settings.gae_lambda:
        returns = gae(rewards, values, mask, 1.0, critic_lambda(settings))[1]
    return advantages, returns


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
    ``policy_minibatches``, as always under ``critic_trunk='shared'`` (the value head trains in the
    policy's updates)."""
    if settings.critic_schedule == "policy" or settings.critic_trunk == "shared":
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


def backward_value_loss(
    value_model: ValueModel,
    prompts: torch.Tensor,
    answers: torch.Tensor,
    mask: torch.Tensor,
    returns: torch.Tensor,
    old_values: torch.Tensor,
    settings: TrainConfig,
) -> float:
    """The value half of a shared trunk's joint loss: backpropagate ``settings.vf_coef`` x ``value_loss``
    of one (mini)batch into ``.grad``, beside the policy loss's gradient there already (CleanRL's
    ``loss = pg_loss + vf_coef * v_loss``; the caller steps the one optimiser). ``micro_batch_size``
    rows at a time, each share normalised by the whole batch's answer tokens, so the gradient is the
    whole batch's. prompts [b, Lp], the rest [b, La]. Returns the value loss (unweighted)."""
    rows, num_tokens = len(prompts), mask.sum()
    micro = settings.micro_batch_size or rows
    total = 0.0
    for start in range(0, rows, micro):
        part = slice(start, start + micro)
        values = answer_values(value_model, prompts[part], answers[part])
        share = value_loss(values, returns[part], mask[part], old_values[part], settings.value_clip) * mask[part].sum() / num_tokens
        (settings.vf_coef * share).backward()
        total += float(share.detach())
    return total


def pretrain_critic(
    value_model: ValueModel, optimizer: torch.optim.Optimizer, draw: Callable[[], dict], settings: TrainConfig, generator: torch.Generator
) -> int:
    """VAPO's value pretraining: ``settings.critic_warmup_steps`` batches from ``draw()`` (a rollout
    dict: prompts [B, Lp], answers and mask [B, La], rewards [P, G], sampled from the starting
    policy, which does not move), each fitted as a training step fits its batch: returns from
    ``advantages_and_returns``, then ``update_critic``. Returns the number of responses drawn (a
    run counts them in ``samples``)."""
    drawn = 0
    for _ in range(settings.critic_warmup_steps):
        batch = draw()
        rewards = batch["rewards"].reshape(-1).to(batch["mask"].device)
        with torch.no_grad():
            values = answer_values(value_model, batch["prompts"], batch["answers"])
        _, returns = advantages_and_returns(rewards, values, batch["mask"], settings)
        update_critic(value_model, optimizer, batch["prompts"], batch["answers"], batch["mask"], returns, values, settings, generator)
        drawn += len(rewards)
    return drawn


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
