"""The batch a policy update trains on, with its rows named: a ``Rollout``.

B responses (P prompts x G answers each, groups in contiguous rows); every tensor is [B, ...], and
the optional log-probs are None when the step does not need them (see ``trainer.train_step``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch


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
