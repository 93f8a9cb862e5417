"""The public functions' argument checks: ``grpo_lab.compute_advantages`` is the algorithm's
``core.advantages.compute_advantages`` behind them. A bad argument is one ConfigError (a knob) or
ValueError (a tensor) saying what is wrong; the arithmetic itself lives in core."""

from __future__ import annotations

import math

import torch

from ..core import advantages as core
from ..errors import ConfigError

SMALLEST_STD_EPS = torch.finfo(torch.float32).tiny  # float32's smallest normal number: a positive eps below it is 0 or imprecise


def compute_advantages(
    rewards: torch.Tensor,
    baseline: str = "zscore",
    std_eps: float = 1e-4,
    std_scope: str = "group",
    std_ddof: int = 1,
    eps_mode: str = "add",
    ema_value: float = 0.0,
) -> torch.Tensor:
    """``core.advantages.compute_advantages`` (its docstring has the formulas) after checking every
    argument. rewards: float [P, G] -> advantages [P, G], in the rewards' precision (float64 stays
    float64; integer and half-precision rewards are computed in float32). Rewards so large that the
    group statistics overflow float32 are computed in float64 and handed back in float32, or refused
    when even that overflows. With eps = 0 a group of equal rewards is 0/0 = NaN, as documented."""
    check_choice("baseline", baseline, core.BASELINES)
    if baseline in core.VALUE_BASELINES:
        raise ValueError(
            f"baseline={baseline!r} needs a value model (critic) or value rollouts (mc_value), not just rewards: "
            "use grpo_lab.core.critic or grpo_lab.core.mc_value (train() does this for you)"
        )
    check_choice("std_scope", std_scope, core.STD_SCOPES)
    check_choice("eps_mode", eps_mode, core.EPS_MODES)
    if std_ddof not in (0, 1) or isinstance(std_ddof, bool):
        raise ConfigError("std_ddof", std_ddof, "use 1 (Bessel, as TRL and verl) or 0 (population)")
    if not isinstance(rewards, torch.Tensor) or rewards.ndim != 2 or rewards.shape[0] == 0:
        got = f"shape {tuple(rewards.shape)}" if isinstance(rewards, torch.Tensor) else f"a {type(rewards).__name__}"
        raise ValueError(f"rewards must be a tensor of shape [prompts, group_size] with at least one prompt; got {got}")
    if rewards.is_complex():
        raise ValueError(f"rewards must be real numbers; got a {rewards.dtype} tensor")
    if not torch.isfinite(rewards).all():
        raise ValueError("rewards contain NaN or infinity: check the reward function (advantages of non-finite rewards are meaningless)")
    group_size = rewards.shape[1]
    if baseline in core.GROUP_BASELINES and group_size < 2:
        raise ValueError(f"group_size={group_size} is too small for baseline={baseline!r}: a group baseline needs at least 2 responses per prompt")
    dtype = torch.promote_types(rewards.dtype, torch.float32)  # the advantages' precision
    tiny = torch.finfo(dtype).tiny
    eps = real_number(std_eps)
    if eps is None or not (eps == 0 or tiny <= eps < math.inf):
        raise ConfigError("std_eps", std_eps, f"it must be 0 or a finite number >= {tiny:.3g} ({dtype}'s smallest normal number; TRL uses 1e-4)")
    average = real_number(ema_value)
    if average is None or not math.isfinite(average):
        raise ConfigError("ema_value", ema_value, "it must be a finite number (the running reward average)")

    largest = float(rewards.abs().max())
    for precision in (dtype, torch.float64):  # float64 only when the group statistics would overflow the rewards' precision
        squares = (2 * largest) * (2 * largest) * rewards.numel()  # the std's sum of squares, at most
        if baseline == "zscore" and not squares < torch.finfo(precision).max:
            continue
        # checked in the rewards' precision: advantages that fit float64 can still overflow it on the way back
        advantages = core.compute_advantages(rewards.to(precision), baseline, eps, std_scope, std_ddof, eps_mode, average).to(dtype)
        if (torch.isfinite(advantages) | advantages.isnan()).all():
            return advantages
    raise ValueError(
        f"rewards up to |r| = {largest:.3g} overflow the advantages' {dtype} range under baseline={baseline!r}: "
        "scale the rewards down (or pass float64 rewards)"
    )


def check_choice(knob: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ConfigError(knob, value, f"choose one of {', '.join(choices)}")


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
