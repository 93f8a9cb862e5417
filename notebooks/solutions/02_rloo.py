# Worked solution: RLOO, each response's baseline is the mean of the *other* G-1 rewards of its group.
import torch


def rloo(rewards: torch.Tensor) -> torch.Tensor:
    """rewards [P, G] -> leave-one-out advantages [P, G]."""
    group_size = rewards.shape[1]
    mean_of_others = (rewards.sum(dim=1, keepdim=True) - rewards) / (group_size - 1)
    return rewards - mean_of_others
