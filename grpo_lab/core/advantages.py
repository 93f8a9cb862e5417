"""Every baseline of the course as one pure function of a ``[P, G]`` reward tensor.

P prompts, G responses per prompt (a "group"). Row p holds the rewards of prompt p's group.

| baseline | advantage of response i in a group with rewards r             |
|----------|----------------------------------------------------------------|
| none     | r_i                                   (REINFORCE, no baseline) |
| mean     | r_i - mean(r)                              (Dr. GRPO, TRL "none") |
| zscore   | (r_i - mean(r)) / (std(r) + eps)        (GRPO, TRL "group")  |
| rloo     | r_i - mean of the other G-1 rewards                      (RLOO) |
| ema      | r_i - b, b a moving average of past rewards     (the card, G=2) |

The PPO critic (``critic``) and the Monte-Carlo value (``mc_value``, VinePPO) are not functions of
rewards alone; they live in ``critic.py`` and ``mc_value.py``. The public ``grpo_lab.compute_advantages``
checks its arguments first (``grpo_lab.checks.arguments``) and then calls the function below.
"""

from __future__ import annotations

import torch

BASELINES = ("none", "mean", "zscore", "rloo", "ema", "critic", "mc_value")
GROUP_BASELINES = ("mean", "zscore", "rloo")
VALUE_BASELINES = ("critic", "mc_value")  # a value V(s_t) per answer prefix and GAE: a learned critic, or Monte-Carlo rollouts (VinePPO)
STD_SCOPES = ("group", "batch")
EPS_MODES = ("add", "clamp")


def equal_groups(rewards: torch.Tensor) -> torch.Tensor:
    """rewards [P, G] -> bool [P]: True where every reward of the group is exactly the same.
    (Safer than ``std == 0``: the std of identical float32 numbers can come out one rounding step.)"""
    return (rewards == rewards[:, :1]).all(dim=1)


def group_std(rewards: torch.Tensor, std_scope: str = "group", std_ddof: int = 1) -> torch.Tensor:
    """The std used to scale advantages, broadcastable to rewards [P, G]: per group -> [P, 1];
    ``batch`` -> one std over all P*G rewards, [1, 1] (TRL ``scale_rewards="batch"``)."""
    if std_scope == "group":
        return rewards.std(dim=1, correction=std_ddof, keepdim=True)
    return rewards.reshape(1, -1).std(dim=1, correction=std_ddof, keepdim=True)


def compute_advantages(
    rewards: torch.Tensor,
    baseline: str = "zscore",
    std_eps: float = 1e-4,
    std_scope: str = "group",
    std_ddof: int = 1,
    eps_mode: str = "add",
    ema_value: float = 0.0,
) -> torch.Tensor:
    """Advantages for each response: rewards [P, G] -> advantages [P, G].

    ``std_eps`` guards the z-score division: ``add`` divides by std + eps (TRL 1e-4, verl 1e-6),
    ``clamp`` by max(std, eps) (as the card writes it). ``ema_value`` is the running reward average
    that ``baseline="ema"`` subtracts (``EMABaseline``).

    A group whose rewards are all equal gets advantage exactly 0 under ``mean``, ``rloo`` and
    ``zscore`` with any eps > 0, whatever the rewards' size: its centred rewards and its std are
    set to exactly 0. (Computed plainly, in float32 the mean of 16 rewards of 5 + 1/3 is one rounding
    step off, and that step divided by eps = 1e-6 is an advantage of 0.48 for every response, a
    spurious signal; TRL and verl compute it plainly.) With eps = 0 such a group's z-score is 0/0 =
    NaN on purpose: the training loop stops the run and says why.
    """
    if baseline == "none":
        return rewards.clone()
    if baseline == "ema":
        return rewards - ema_value
    group_size = rewards.shape[1]
    equal = equal_groups(rewards)[:, None]  # [P, 1]: groups with no spread at all
    if baseline == "rloo":
        # mean of the others = (sum - r_i) / (G - 1), so r_i - that = G/(G-1) * (r_i - mean)
        return (rewards - (rewards.sum(dim=1, keepdim=True) - rewards) / (group_size - 1)).masked_fill(equal, 0.0)
    centered = (rewards - rewards.mean(dim=1, keepdim=True)).masked_fill(equal, 0.0)
    if baseline == "mean":
        return centered
    std = group_std(rewards, std_scope, std_ddof)
    if std_scope == "group":
        std = std.masked_fill(equal, 0.0)
    elif bool((rewards == rewards[0, 0]).all()):  # batch scope: the whole batch has no spread
        std = torch.zeros_like(std)
    scale = std + std_eps if eps_mode == "add" else std.clamp(min=std_eps)
    return centered / scale


class EMABaseline:
    """A global baseline b <- decay * b + (1 - decay) * mean(batch rewards), updated after each step.

    Starts at the first batch's mean, so the first step is already centred.
    """

    def __init__(self, decay: float = 0.9):
        self.decay = decay
        self.value: float | None = None

    def current(self, rewards: torch.Tensor) -> float:
        return float(rewards.mean()) if self.value is None else self.value

    def update(self, rewards: torch.Tensor) -> None:
        batch_mean = float(rewards.mean())
        self.value = batch_mean if self.value is None else self.decay * self.value + (1 - self.decay) * batch_mean
