"""PPO's critic: a learned value model and GAE over the answer tokens.

The value model is a **separate network**, not a head on the policy: a copy of the reference
policy's transformer whose vocabulary head is swapped for a scalar one. Separate, because in a
model this small a shared trunk lets the value loss pull on the very features the policy
gradient is moving (CleanRL's PPO makes the same choice); initialised from the reference, as in
RLHF practice, so it starts with features that already know the task instead of from noise.
This is the extra network, optimiser and loss that GRPO's group baseline removes.

Shapes: B responses, La answer tokens. The reward arrives only at a response's last token.
"""

from __future__ import annotations

import copy

import torch
import torch.nn as nn

from .policy import TinyTransformer


class ValueModel(nn.Module):
    """tokens [B, T] -> value estimate V(s_t) of the state after reading token t, [B, T]."""

    def __init__(self, reference: TinyTransformer):
        super().__init__()
        self.trunk = copy.deepcopy(reference)
        self.trunk.head = nn.Identity()
        self.value_head = nn.Linear(reference.config.d_model, 1)
        nn.init.zeros_(self.value_head.weight)
        nn.init.zeros_(self.value_head.bias)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.value_head(self.trunk(tokens)).squeeze(-1)


def answer_values(value_model: ValueModel, prompts: torch.Tensor, answers: torch.Tensor) -> torch.Tensor:
    """V of the state before each answer token. prompts [B, Lp], answers [B, La] -> [B, La]."""
    sequence = torch.cat([prompts, answers], dim=1)
    return value_model(sequence[:, :-1])[:, prompts.shape[1] - 1 :]


def gae(rewards: torch.Tensor, values: torch.Tensor, mask: torch.Tensor, gamma: float = 1.0, lam: float = 0.95):
    """Generalised advantage estimation with the sequence reward on its last answer token.

    rewards [B] (one scalar per response), values [B, La], mask [B, La]
    -> (advantages [B, La], returns [B, La]); both 0 where mask is 0.
    delta_t = r_t + gamma * V_{t+1} - V_t, A_t = delta_t + gamma * lam * A_{t+1}, and V after the
    last token is 0 (the episode ends).
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


def value_loss(values: torch.Tensor, returns: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean squared error between V and the GAE returns over answer tokens (a scalar)."""
    return (((values - returns) ** 2) * mask).sum() / mask.sum()


def explained_variance(values: torch.Tensor, returns: torch.Tensor, mask: torch.Tensor) -> float:
    """1 - Var(returns - V) / Var(returns) over answer tokens: 1 is a perfect critic, 0 is no better
    than a constant, negative is worse than a constant."""
    selected = mask.bool()
    target = returns[selected]
    variance = target.var(correction=0)
    if variance == 0:
        return float("nan")
    return float(1 - (target - values[selected]).var(correction=0) / variance)
