"""Sampling and scoring a batch of groups (``rollout``), and the batch a policy update trains on,
with its rows named (``Rollout``).

B responses (P prompts x G answers each, groups in contiguous rows); every tensor is [B, ...], and
the optional log-probs are None when the step does not need them (see ``trainer.train_step``).
The trainer and the experiments (experiments/measures.py) sample through the same ``rollout``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch

from .advantages import equal_groups
from .errors import ConfigError
from .policy import TinyTransformer, sample
from .task import ProblemBatch, ProblemSampler, RewardModel, decode


@dataclass
class Rollout:
    """prompts [B, Lp]; answers, mask, token_advantages [B, La]; old_logprobs (the sampling
    policy's, None when the batch is trained on once: the ratio is then exactly 1) and ref_logprobs
    (the reference's, None without the KL term) [B, La] or None."""

    prompts: torch.Tensor
    answers: torch.Tensor
    mask: torch.Tensor
    token_advantages: torch.Tensor
    old_logprobs: torch.Tensor | None = None
    ref_logprobs: torch.Tensor | None = None

    def __len__(self) -> int:
        return len(self.prompts)

    def rows(self, index: torch.Tensor | slice) -> Rollout:
        """The same rollout restricted to some rows (a slice, or a tensor of row indices)."""
        values = {item.name: getattr(self, item.name) for item in fields(self)}
        return Rollout(**{name: None if value is None else value[index] for name, value in values.items()})


def rollout(
    policy: TinyTransformer,
    problems: ProblemSampler | ProblemBatch,
    reward_model: RewardModel,
    prompts_per_batch: int,
    group_size: int,
    max_len: int,
    temperature: float,
    generator: torch.Generator,
    device: torch.device | str = "cpu",
    chunk_size: int | None = None,
) -> dict:
    """Draw P problems, sample G answers to each from ``policy`` and score them with ``reward_model``;
    ``chunk_size``: decode that many responses at a time (``policy.sample``: the same answers).

    ``problems``: a ProblemSampler draws P = ``prompts_per_batch`` fresh problems; a ProblemBatch
    (e.g. the held-out ``task.eval_batch``) is used as it is, and must hold P problems.

    Returns {"prompts" [B, Lp], "answers", "mask" [B, max_len] (B = P*G, groups in contiguous rows,
    on ``device``), "rewards" [P, G], "correct" [P, G] (bool), "tied" [P] (all G rewards equal),
    "hard" [P] (task.is_hard)}.
    """
    if isinstance(problems, ProblemBatch):
        if len(problems.answers) != prompts_per_batch:
            raise ConfigError("prompts_per_batch", prompts_per_batch, f"the given ProblemBatch holds {len(problems.answers)} problems")
        batch = problems
    else:
        batch = problems.sample(prompts_per_batch)
    prompts = batch.prompts.repeat_interleave(group_size, dim=0).to(device)
    answers, mask = sample(policy, prompts, max_len, temperature, generator, chunk_size)
    flat_rewards, correct = reward_model(
        [decode(row) for row in answers.cpu().tolist()],
        [answer for answer in batch.answers for _ in range(group_size)],
        batch.hard.repeat_interleave(group_size),
    )
    rewards = flat_rewards.view(-1, group_size)
    return {
        "prompts": prompts,
        "answers": answers,
        "mask": mask,
        "rewards": rewards,
        "correct": correct.view(-1, group_size),
        "tied": equal_groups(rewards),
        "hard": batch.hard,
    }
