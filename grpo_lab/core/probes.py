"""How noisy is the policy gradient? Gradients of disjoint shares of a batch, and their statistics.

The estimator. A training step's gradient is the mean of P per-prompt (per-group) gradients,
``g_hat = mean_p g_p``. Cut the batch into K chunks of P/K whole groups each; ``g_hat`` is also the
mean of the K chunk gradients ``g_c``, and since the groups are independent draws the chunks are
too. So the variance of ``g_hat`` is estimated by ``grad_var = sum_k Var_c(g_c[k]) / K``, the trace
of its covariance (summed over the parameters k, sample variance with Bessel's correction). Any K
from 2 to P gives an unbiased estimate of the same number: more chunks make it less noisy and cost
more backward passes. The experiments use one chunk per group (K = P); the training loop's probe uses
about 4 chunks (``probe_chunks``), which costs 4 small backward passes instead of P.
Its signal-to-noise ratio is ``grad_snr = ||g_hat||^2 / grad_var``. It includes the noise floor:
E||g_hat||^2 = ||E g||^2 + grad_var, so pure noise reads about 1, and a step points mostly where the
expected gradient points only when grad_snr is well above 1. The variance experiment reports
``net_snr`` instead, with the noise's share subtracted, (||g_hat||^2 - grad_var) / grad_var: pure
noise reads 0, and on average grad_snr = net_snr + 1. Both are measured on the same batch the step
trains on, before the update, at ``probe_every`` steps.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

PROBE_CHUNKS = 4  # backward passes per gradient-noise probe: fewer is cheaper, more is less noisy


def probe_chunks(num_groups: int) -> int:
    """How many chunks the probe cuts a batch of ``num_groups`` groups into: the smallest divisor of
    num_groups that is at least PROBE_CHUNKS (all the groups, one each, when there are fewer)."""
    return next(k for k in range(min(num_groups, PROBE_CHUNKS), num_groups + 1) if num_groups % k == 0)


def flat_gradient(parameters: list[torch.Tensor]) -> torch.Tensor:
    """The current .grad of every parameter, concatenated into one vector [n_params]."""
    return torch.cat([(p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1) for p in parameters])


def per_share_gradients(parameters: list[torch.Tensor], share_loss: Callable[[int], torch.Tensor], num_shares: int) -> torch.Tensor:
    """Gradient of each share's loss: ``share_loss(k)`` returns share k's scalar loss (a group, a chunk
    of groups, one answer), scaled so that the batch loss is the mean of the share losses.
    Returns [num_shares, n_params]."""
    gradients = []
    for share in range(num_shares):
        for parameter in parameters:
            parameter.grad = None
        share_loss(share).backward()
        gradients.append(flat_gradient(parameters))
    for parameter in parameters:
        parameter.grad = None
    return torch.stack(gradients)


def gradient_noise(share_gradients: torch.Tensor) -> dict[str, float]:
    """share_gradients [K, n_params], the gradients of K equal shares of a batch (groups or chunks
    of groups) -> {"grad_var", "grad_snr", "grad_mean_norm"} as in the module docstring. K >= 2."""
    num_shares = share_gradients.shape[0]
    mean_gradient = share_gradients.mean(dim=0)
    variance = float(share_gradients.var(dim=0, correction=1).sum() / num_shares)
    signal = float(mean_gradient.pow(2).sum())
    return {
        "grad_var": variance,
        "grad_snr": signal / variance if variance > 0 else 0.0,  # identical shares: no noise, no signal
        "grad_mean_norm": signal**0.5,
    }


def cosine_similarity(a: torch.Tensor, b: torch.Tensor) -> float:
    """Cosine of the angle between two flat gradients (1: same direction, 0: orthogonal)."""
    denominator = float(a.norm() * b.norm())
    return float(a @ b) / denominator if denominator > 0 else 0.0
