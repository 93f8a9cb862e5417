"""VinePPO's value baseline: V(s_t) of every answer prefix from a few fresh rollouts, no critic.

For each response and each answer position t, the state s_t is the prompt plus the answer's first
t tokens; ``mc_prefix_values`` continues it ``rollouts`` times with the current policy (at the
sampling temperature) and averages the rewards: an unbiased estimate of V(s_t), with no learned
network whose errors could leak into the advantages. Answers here are 3-7 tokens, and a group's
responses share most prefixes (every one shares V(prompt)), so the states are deduplicated first
and the extra rollouts are a few per distinct prefix.

The training loop (baseline='mc_value') turns these values into per-token advantages with
A_t = r_t + V(s_{t+1}) - V(s_t) (VinePPO's estimator: GAE with lambda 0 on Monte-Carlo values).
Shapes: B responses, Lp prompt tokens, La answer tokens.
"""

from __future__ import annotations

import torch

from .model import TinyTransformer, sample


@torch.no_grad()
def mc_prefix_values(
    policy: TinyTransformer,
    prompts: torch.Tensor,
    answers: torch.Tensor,
    mask: torch.Tensor,
    reward_model,
    rollouts: int,
    temperature: float,
    generator: torch.Generator,
) -> tuple[torch.Tensor, int]:
    """Monte-Carlo V(s_t) for every answer token's state. prompts [B, Lp], answers / mask [B, La]
    -> (values [B, La], 0 after each answer's end; the number of rollouts sampled).

    values[i, t] is the mean reward of ``rollouts`` answers that continue prompt i plus
    answers[i, :t] under ``policy``, scored by ``reward_model.score(prompts, answers)``; equal states
    (same prompt, same prefix) are estimated once.
    """
    max_len = answers.shape[1]
    lengths = mask.sum(dim=1).long().tolist()
    values = torch.zeros(answers.shape, dtype=torch.float32)
    sampled = 0
    for prefix_length in range(max_len):
        rows = [i for i, length in enumerate(lengths) if prefix_length < length]
        if not rows:
            break
        states = torch.cat([prompts[rows], answers[rows, :prefix_length]], dim=1)
        distinct, state_of_row = torch.unique(states, dim=0, return_inverse=True)  # [U, Lp + t], [len(rows)]
        starts = distinct.repeat_interleave(rollouts, dim=0)
        continuations, _ = sample(policy, starts, max_len - prefix_length, temperature, generator)
        responses = torch.cat([starts[:, prompts.shape[1] :], continuations], dim=1)
        rewards, _ = reward_model.score(starts[:, : prompts.shape[1]], responses)
        state_values = rewards.view(len(distinct), rollouts).mean(dim=1)
        values[rows, prefix_length] = state_values[state_of_row.cpu()]
        sampled += len(responses)
    return values.to(answers.device), sampled
