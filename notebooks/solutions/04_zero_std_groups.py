# Worked solution: a group has zero std exactly when all its rewards are equal.
# Compare with the first reward rather than testing std < threshold: 0.5 and 0.5 + 1e-6 differ,
# and that tiny difference is precisely the group whose z-score amplifies noise.
import torch


def zero_std_groups(rewards: torch.Tensor) -> torch.Tensor:
    """rewards [P, G] -> bool [P], True where every reward of the group is the same."""
    return (rewards == rewards[:, :1]).all(dim=1)
