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
rewards alone; they live in ``critic.py`` and ``mc_value.py``.
"""

from __future__ import annotations

import math

import torch

from .errors import ConfigError

BASELINES = ("none", "mean", "zscore", "rloo", "ema", "critic", "mc_value")
GROUP_BASELINES = ("mean", "zscore", "rloo")
VALUE_BASELINES = ("critic", "mc_value")  # a value V(s_t) per answer prefix and GAE: a learned critic, or Monte-Carlo rollouts (VinePPO)
STD_SCOPES = ("group", "batch")
EPS_MODES = ("add", "clamp")
SMALLEST_STD_EPS = torch.finfo(torch.float32).tiny  # float32's smallest normal number: a positive eps below it is 0 or imprecise


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
    """Advantages for each response. rewards: float [P, G] -> advantages [P, G], in the rewards'
    precision (float64 stays float64; integer and half-precision rewards are computed in float32).

    ``std_eps`` guards the z-score division: ``add`` divides by std + eps (TRL 1e-4, verl 1e-6),
    ``clamp`` by max(std, eps) (as the card writes it).

    A group whose rewards are all equal gets advantage exactly 0 under ``mean``, ``rloo`` and
    ``zscore`` with any eps > 0, whatever the rewards' size: its centred rewards and its std are
    set to exactly 0. (Computed plainly, in float32 the mean of 16 rewards of 5 + 1/3 is one rounding
    step off, and that step divided by eps = 1e-6 is an advantage of 0.48 for every response, a
    spurious signal; TRL and verl compute it plainly.) With eps = 0 such a group's z-score is 0/0 =
    NaN, always NaN (never ±inf): this function returns that NaN on purpose, and the trainer stops
    the run and says why. Groups that differ by a single rounding step are not equal and are
    z-scored like any other group. ``ema_value`` is the running reward average that
    ``baseline="ema"`` subtracts.
    """
    if baseline not in BASELINES:
        raise ConfigError("baseline", baseline, f"choose one of {', '.join(BASELINES)}")
    if baseline in VALUE_BASELINES:
        raise ValueError(
            f"baseline={baseline!r} needs a value model (critic) or value rollouts (mc_value), not just rewards: "
            "use grpo_lab.critic or grpo_lab.mc_value (train() does this for you)"
        )
    if std_scope not in STD_SCOPES:
        raise ConfigError("std_scope", std_scope, f"choose one of {', '.join(STD_SCOPES)}")
    if eps_mode not in EPS_MODES:
        raise ConfigError("eps_mode", eps_mode, f"choose one of {', '.join(EPS_MODES)}")
    if std_ddof not in (0, 1):
        raise ConfigError("std_ddof", std_ddof, "use 1 (Bessel, as TRL and verl) or 0 (population)")
    if not isinstance(rewards, torch.Tensor) or rewards.ndim != 2 or rewards.shape[0] == 0:
        got = f"shape {tuple(rewards.shape)}" if isinstance(rewards, torch.Tensor) else f"a {type(rewards).__name__}"
        raise ValueError(f"rewards must be a tensor of shape [prompts, group_size] with at least one prompt; got {got}")
    if rewards.is_complex():
        raise ValueError(f"rewards must be real numbers; got a {rewards.dtype} tensor")
    if not torch.isfinite(rewards).all():
        raise ValueError("rewards contain NaN or infinity: check the reward function (advantages of non-finite rewards are meaningless)")
    group_size = rewards.shape[1]
    if baseline in GROUP_BASELINES and group_size < 2:
        raise ValueError(f"group_size={group_size} is too small for baseline={baseline!r}: a group baseline needs at least 2 responses per prompt")
    dtype = torch.promote_types(rewards.dtype, torch.float32)  # the advantages' precision
    tiny = torch.finfo(dtype).tiny
    eps = real_number(std_eps)
    if eps is None or not (eps == 0 or tiny <= eps < math.inf):
        allowed = f"it must be 0 or a finite number >= {tiny:.3g} ({dtype}'s smallest normal number; TRL uses 1e-4)"
        raise ConfigError("std_eps", std_eps, allowed, f"{std_eps!r:.60}")
    average = real_number(ema_value)
    if average is None or not math.isfinite(average):
        raise ConfigError("ema_value", ema_value, "it must be a finite number (the running reward average)", f"{ema_value!r:.60}")

    advantages = baseline_advantages(rewards.to(dtype), baseline, eps, std_scope, std_ddof, eps_mode, average)
    if advantages is None:  # the rewards are too large for their precision: the statistics overflowed
        advantages = baseline_advantages(rewards.to(torch.float64), baseline, eps, std_scope, std_ddof, eps_mode, average)
        advantages = None if advantages is None else advantages.to(dtype)
        if advantages is None or not (torch.isfinite(advantages) | advantages.isnan()).all():
            largest = float(rewards.abs().max())
            raise ValueError(
                f"rewards up to |r| = {largest:.3g} overflow the advantages' {dtype} range under baseline={baseline!r}: "
                "scale the rewards down (or pass float64 rewards)"
            )
    return advantages


def real_number(value: object) -> float | None:
    """value as a Python float when it is one real number (an int, a float, a numpy number, a one-element
    real tensor; not a bool), else None."""
    if isinstance(value, torch.Tensor):
        if value.numel() != 1 or value.is_complex() or value.dtype == torch.bool:
            return None
        value = value.item()
    elif type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return float(value)
    except OverflowError:  # an integer beyond any float
        return None


def baseline_advantages(
    rewards: torch.Tensor, baseline: str, std_eps: float, std_scope: str, std_ddof: int, eps_mode: str, ema_value: float
) -> torch.Tensor | None:
    """``compute_advantages`` on checked arguments, in the rewards' dtype; None when a statistic
    (a mean, a centred reward, a std) or an advantage overflowed that dtype where NaN is not the
    documented answer (eps = 0 on a group of equal rewards)."""
    if baseline == "none":
        advantages = rewards.clone()
    elif baseline == "ema":
        advantages = rewards - ema_value
    else:
        advantages = group_advantages(rewards, baseline, std_eps, std_scope, std_ddof, eps_mode)
        if advantages is None:
            return None
    return advantages if (torch.isfinite(advantages) | advantages.isnan()).all() else None


def group_advantages(rewards: torch.Tensor, baseline: str, std_eps: float, std_scope: str, std_ddof: int, eps_mode: str) -> torch.Tensor | None:
    """The group baselines (mean, rloo, zscore) of rewards [P, G]; None if the group statistics overflowed."""
    group_size = rewards.shape[1]
    equal = equal_groups(rewards)[:, None]  # [P, 1]: groups with no spread at all
    if baseline == "rloo":
        # mean of the others = (sum - r_i) / (G - 1), so r_i - that = G/(G-1) * (r_i - mean)
        return (rewards - (rewards.sum(dim=1, keepdim=True) - rewards) / (group_size - 1)).masked_fill(equal, 0.0)
    centered = (rewards - rewards.mean(dim=1, keepdim=True)).masked_fill(equal, 0.0)
    if baseline == "mean":
        return centered
    std = group_std(rewards, std_scope, std_ddof)
    if not (torch.isfinite(centered).all() and torch.isfinite(std).all()):  # squares of |r| beyond sqrt(dtype max)
        return None
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
        if not 0 <= decay < 1:
            raise ConfigError("ema_decay", decay, "it must be in [0, 1)")
        self.decay = decay
        self.value: float | None = None

    def current(self, rewards: torch.Tensor) -> float:
        return float(rewards.mean()) if self.value is None else self.value

    def update(self, rewards: torch.Tensor) -> None:
        batch_mean = float(rewards.mean())
        self.value = batch_mean if self.value is None else self.decay * self.value + (1 - self.decay) * batch_mean
