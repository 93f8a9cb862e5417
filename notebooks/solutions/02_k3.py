# Worked solution: Schulman's k3 estimator of KL(pi || pi_ref) from the sampled tokens' log-probs.
# With x = pi_ref / pi, k3 = x - log x - 1: unbiased (E_pi[x] = 1) and never negative (log x <= x - 1).
import torch


def k3(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    """logprobs, ref_logprobs: same shape -> per-token KL estimates, same shape."""
    log_ratio = ref_logprobs - logprobs
    return torch.exp(log_ratio) - log_ratio - 1
