# Worked solution: the whole GRPO loss, piece by piece (the trainer's compute_advantages,
# policy_loss_terms and aggregate, written out).
import torch


def grpo_loss(rewards, logprobs, old_logprobs, ref_logprobs, mask, std_eps=1e-4, std_ddof=1, std_scope="group",
              clip_eps=0.2, kl_coef=0.04, loss_agg="seq_mean"):
    # 1. advantages [P, G]: centre by the group mean, scale by the group's (or the batch's) std plus eps
    mean = rewards.mean(dim=1, keepdim=True)
    if std_scope == "group":
        std = rewards.std(dim=1, correction=std_ddof, keepdim=True)
    else:
        std = rewards.reshape(1, -1).std(dim=1, correction=std_ddof, keepdim=True)
    advantages = (rewards - mean) / (std + std_eps)  # a tied group: 0 / (0 + eps) = exactly 0
    token_advantages = advantages.reshape(-1, 1) * mask  # row p*G + i is answer i of prompt p
    # 2. per-token loss [P*G, La]: the clipped surrogate (negated: a loss is minimised) plus beta * k3
    ratio = torch.exp(logprobs - old_logprobs)
    surrogate = torch.minimum(ratio * token_advantages, ratio.clamp(1 - clip_eps, 1 + clip_eps) * token_advantages)
    log_ratio_ref = ref_logprobs - logprobs
    k3 = torch.exp(log_ratio_ref) - log_ratio_ref - 1
    per_token = (-surrogate + kl_coef * k3) * mask
    # 3. one number: GRPO averages each answer over its own tokens, DAPO over all tokens of the batch,
    # Dr. GRPO divides the token sum by a constant (answers x the longest possible answer)
    if loss_agg == "seq_mean":
        loss = (per_token.sum(dim=1) / mask.sum(dim=1).clamp(min=1)).mean()
    elif loss_agg == "token_mean":
        loss = per_token.sum() / mask.sum()
    else:
        loss = per_token.sum() / (mask.shape[0] * mask.shape[1])
    return advantages, per_token, loss
