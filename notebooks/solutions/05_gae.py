# Worked solution: GAE for one response, gamma = 1, the reward on the last token, V after the end = 0.
import torch


def gae_one_response(reward: float, values: torch.Tensor, lam: float) -> torch.Tensor:
    """reward: the response's scalar reward; values [La]: V(s_t) before each token -> advantages [La]."""
    length = len(values)
    advantages = torch.zeros(length)
    running = 0.0
    for t in reversed(range(length)):
        next_value = values[t + 1] if t + 1 < length else 0.0
        token_reward = reward if t == length - 1 else 0.0
        delta = token_reward + next_value - values[t]
        running = delta + lam * running
        advantages[t] = running
    return advantages
