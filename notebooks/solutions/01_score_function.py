# Worked solution: the score function of a softmax policy over K actions.
# log pi(a) = theta_a - logsumexp(theta), so d log pi(a) / d theta_k = [k == a] - pi(k).
import torch


def score_function(logits: torch.Tensor, action: int) -> torch.Tensor:
    """logits [K], action in 0..K-1 -> gradient of log softmax(logits)[action] w.r.t. logits, [K]."""
    return torch.nn.functional.one_hot(torch.tensor(action), len(logits)).float() - torch.softmax(logits, dim=0)
