"""The policy's loss, piece by piece: the clipped-ratio policy-gradient term, the k3 KL to the
reference, and the aggregation of per-token losses into one number (GRPO, DAPO, Dr. GRPO).

Every tensor is [b, La] (responses x answer tokens) unless said otherwise; the training loop
(loop.py), the exercises' reference answer (course/exercises.py) and the bridge's parity checks use
these same functions.
"""

from __future__ import annotations

import torch

from .config import TrainConfig
from .model import TinyTransformer, token_logprobs

LOSS_AGGREGATIONS = ("seq_mean", "token_mean", "token_sum_norm")  # GRPO, DAPO, Dr. GRPO (``aggregate``)


def aggregate(per_token: torch.Tensor, mask: torch.Tensor, loss_agg: str, num_sequences: int, num_tokens: float, max_len: int) -> torch.Tensor:
    """Sum of a micro-batch's share of the batch loss. per_token, mask: [b, La].

    The normalisers (num_sequences, num_tokens) are the *whole batch's*, so the shares of the
    micro-batches add up to exactly the full-batch loss (gradient accumulation changes memory, not
    the gradient). seq_mean: mean over responses of each response's token mean (GRPO);
    token_mean: mean over all answer tokens of the batch (DAPO); token_sum_norm: token sum divided
    by responses x the longest possible answer, a constant (Dr. GRPO).
    """
    masked = per_token * mask
    if loss_agg == "seq_mean":
        return (masked.sum(dim=1) / mask.sum(dim=1).clamp(min=1)).sum() / num_sequences
    if loss_agg == "token_mean":
        return masked.sum() / num_tokens
    return masked.sum() / (num_sequences * max_len)


def policy_loss_terms(
    policy: TinyTransformer,
    prompts: torch.Tensor,
    answers: torch.Tensor,
    mask: torch.Tensor,
    old_logprobs: torch.Tensor | None,
    ref_logprobs: torch.Tensor | None,
    token_advantages: torch.Tensor,
    config: TrainConfig,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Per-token GRPO loss and its diagnostics for one micro-batch; all tensors [b, La].

    loss_t = -min(ratio_t * A_t, clip(ratio_t, 1-e, 1+e) * A_t) + kl_coef * k3_t, with
    ratio_t = pi(a_t) / pi_old(a_t) (pi_old = the policy that sampled; None means "this one") and
    k3 the KL estimator below; the KL term is left out when ``ref_logprobs`` is None. Log-probs are
    taken at ``config.temperature``, the distribution the answers were sampled from.
    """
    logprobs, entropy = token_logprobs(policy, prompts, answers, with_entropy=True, temperature=config.temperature)
    ratio = torch.exp(logprobs - (logprobs.detach() if old_logprobs is None else old_logprobs))
    unclipped = ratio * token_advantages
    clipped = ratio.clamp(1 - config.clip_eps, 1 + config.clip_eps) * token_advantages
    per_token = -torch.minimum(unclipped, clipped)
    diagnostics = {"entropy": entropy.detach(), "clipped": (clipped < unclipped).float()}
    if ref_logprobs is not None:
        k3 = kl_k3(logprobs, ref_logprobs)
        per_token = per_token + config.kl_coef * k3
        diagnostics["kl"] = k3.detach()
    return per_token, diagnostics


def kl_k3(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    """Per-token k3 estimate of KL(pi || pi_ref) from the sampled tokens' log-probs, [b, La]:
    exp(ref - logp) - (ref - logp) - 1 (Schulman; the form TRL and DeepSeekMath use)."""
    log_ratio = ref_logprobs - logprobs
    return torch.exp(log_ratio) - log_ratio - 1
