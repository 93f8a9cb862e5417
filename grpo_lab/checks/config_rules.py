"""The allowed range of every TrainConfig knob, checked before a run starts: ``validate_config`` raises
one ConfigError naming the knob, the value and the allowed range. It also checks that the reference
file exists, that the device is one this machine has and that a step fits in memory."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path, PurePath

from ..core.advantages import BASELINES, EPS_MODES, GROUP_BASELINES, STD_SCOPES, VALUE_BASELINES
from ..core.config import TrainConfig
from ..core.critic import CRITIC_SCHEDULES, CRITIC_TRUNKS, SAME_AS_GAE_LAMBDA
from ..core.losses import LOSS_AGGREGATIONS
from ..core.probes import probe_chunks
from ..errors import ConfigError
from ..task import MAX_PROMPT_POOL, REWARD_KINDS, Task, largest_pool
from .arguments import SMALLEST_STD_EPS
from .devices import available_devices, resolve_device
from .memory import USABLE_FRACTION, available_bytes, step_bytes
from .paths import REFERENCE_NAMES

MAX_GROUP_SIZE = 256
MAX_PROMPTS_PER_STEP = 1024
KIND_WORDS = {"int": "an integer", "float": "a number", "bool": "True or False", "str": "a string"}


def plain_values(config: TrainConfig) -> None:
    """numpy (and 0-d torch) scalars become Python numbers and paths become strings, in place, so
    that to_dict() stays JSON-writable."""
    for config_field in fields(config):
        value = getattr(config, config_field.name)
        if type(value).__module__ in ("numpy", "torch") and getattr(value, "ndim", None) == 0:
            setattr(config, config_field.name, value.item())
        elif isinstance(value, PurePath):
            setattr(config, config_field.name, str(value))


def config_rules(config: TrainConfig) -> list[tuple[str, Callable[[object], bool], str]]:
    """(knob, test of a value of the right type, the allowed range in words), in checking order."""
    minimum_group = 2 if config.baseline in GROUP_BASELINES else 1
    # a prompts_per_step of the wrong type is refused by its own rule first
    most_minibatches = min(256, config.prompts_per_step) if is_of_kind(config.prompts_per_step, "int") and config.prompts_per_step >= 1 else 256

    try:  # a bad task is refused by its own rule first; the eval set is read only for a pool
        pool_limit = largest_pool(Task.parse(config.task)) if is_of_kind(config.prompt_pool, "int") and config.prompt_pool else MAX_PROMPT_POOL
    except (ConfigError, TypeError):
        pool_limit = 0

    def between(low: float, high: float) -> Callable[[float], bool]:
        return lambda value: math.isfinite(value) and low <= value <= high

    def one_of(options) -> tuple[Callable[[object], bool], str]:
        return (lambda value: value in options), "choose one of " + ", ".join(map(str, options))

    def existing_reference(value: str) -> bool:
        if value in REFERENCE_NAMES:
            return True
        try:
            return value.endswith(".pt") and Path(value).is_file()
        except OSError:  # a name longer than the file system allows, or a path it cannot look at
            return False

    return [
        ("task", lambda value: Task.parse(value) is not None, "write '{digits}d{ops}', e.g. '2d+'"),
        ("reference", existing_reference, f"choose one of {', '.join(REFERENCE_NAMES)} or the path of an existing .pt file"),
        ("baseline", *one_of(BASELINES)),
        (
            "group_size",
            between(minimum_group, MAX_GROUP_SIZE),
            f"must be an integer from {minimum_group} to {MAX_GROUP_SIZE}"
            + (f" (baseline={config.baseline!r} needs at least 2 responses per group)" if minimum_group == 2 else ""),
        ),
        ("prompts_per_step", between(1, MAX_PROMPTS_PER_STEP), f"must be an integer from 1 to {MAX_PROMPTS_PER_STEP}"),
        (
            "prompt_pool",
            between(0, pool_limit),
            f"must be 0 (fresh problems every step) or an integer from 1 to {pool_limit} (the task's problems outside its eval set, at most {MAX_PROMPT_POOL})",
        ),
        (
            "std_eps",
            lambda value: value == 0 or between(SMALLEST_STD_EPS, 10)(value),
            f"must be 0 or between {SMALLEST_STD_EPS:.3g} (below it float32 rounds it to 0 or loses its precision) and 10 (TRL uses 1e-4)",
        ),
        ("std_scope", *one_of(STD_SCOPES)),
        ("std_ddof", *one_of((0, 1))),
        ("eps_mode", *one_of(EPS_MODES)),
        ("ema_decay", lambda value: 0 <= value < 1, "must be in [0, 1)"),
        ("kl_coef", between(0, 10), "must be between 0 and 10"),
        ("clip_eps", lambda value: 0 < value <= 10, "must be in (0, 10] (0.2 is usual)"),
        ("inner_epochs", between(1, 16), "must be an integer from 1 to 16"),
        (
            "policy_minibatches",
            lambda value: 1 <= value <= most_minibatches,
            f"must be an integer from 1 to {most_minibatches} (at most prompts_per_step: a minibatch holds whole groups)",
        ),
        ("critic_schedule", *one_of(CRITIC_SCHEDULES)),
        ("mc_rollouts", between(1, 64), "must be an integer from 1 to 64"),
        ("lr", lambda value: 0 < value <= 1, "must be in (0, 1]"),
        ("critic_lr", lambda value: 0 < value <= 1, "must be in (0, 1]"),
        ("critic_epochs", between(1, 64), "must be an integer from 1 to 64"),
        ("critic_minibatches", between(1, 256), "must be an integer from 1 to 256"),
        ("value_clip", between(0, 100), "must be between 0 (off) and 100"),
        ("critic_trunk", *one_of(CRITIC_TRUNKS)),
        ("vf_coef", lambda value: 0 < value <= 100, "must be in (0, 100] (CleanRL's 0.5)"),
        (
            "critic_lambda",
            lambda value: value == SAME_AS_GAE_LAMBDA or 0 <= value <= 1,
            f"must be in [0, 1] (VAPO's critic: 1.0), or {SAME_AS_GAE_LAMBDA:g} for the same as gae_lambda",
        ),
        (
            "critic_warmup_steps",
            lambda value: 0 <= value <= 1000 and (value == 0 or config.baseline == "critic" and config.critic_trunk == "separate"),
            "must be an integer from 0 (off) to 1000, and needs baseline='critic' with critic_trunk='separate' (a shared trunk is the policy, "
            "which must not move before its first update)",
        ),
        ("max_grad_norm", lambda value: math.isfinite(value) and value > 0, "must be > 0"),
        ("steps", between(1, 100_000), "must be an integer from 1 to 100000"),
        ("temperature", between(0.05, 10), "must be between 0.05 and 10"),
        ("reward", *one_of(REWARD_KINDS)),
        ("reward_offset", between(-1e6, 1e6), "must be a finite number with |offset| <= 1e6"),
        ("reward_scale", lambda value: 0 < value <= 1e6, "must be in (0, 1e6]"),
        ("reward_noise", between(0, 1e3), "must be between 0 and 1000"),
        ("hard_reward_scale", lambda value: 0 < value <= 1e6, "must be in (0, 1e6]"),
        ("loss_agg", *one_of(LOSS_AGGREGATIONS)),
        ("skip_zero_std_groups", lambda value: True, "must be True or False"),
        ("micro_batch_size", lambda value: value >= 0, "must be an integer >= 0 (0 = the whole batch)"),
        (
            "dynamic_sampling_batches",
            lambda value: 0 <= value <= 64 and (value == 0 or config.group_size >= 2 and config.baseline not in VALUE_BASELINES),
            "must be an integer from 0 (off) to 64, and needs groups (group_size >= 2, not baseline='critic' or 'mc_value')",
        ),
        ("gae_lambda", lambda value: 0 <= value <= 1, "must be in [0, 1]"),
        ("eval_every", lambda value: value >= 0, "must be an integer >= 0"),
        ("probe_every", lambda value: value >= 0, "must be an integer >= 0"),
        (
            "prompts_per_step",
            lambda value: config.probe_every == 0 or value >= 2,
            "must be at least 2 when probe_every > 0 (the variance needs two groups)",
        ),
        ("seed", between(0, 2**31 - 1), "must be an integer from 0 to 2**31 - 1"),
        ("device", lambda value: resolve_device(value) is not None, "choose one of " + ", ".join(available_devices())),
    ]


def validate_config(config: TrainConfig) -> TrainConfig:
    """Raise one ConfigError (a ValueError) naming the knob, the value and the allowed range; return ``config``.

    Every knob is checked for its type first (the annotation: a str for a float knob, a bool
    for an int knob, anything but True/False for a bool knob are refused), then for its range;
    numpy scalars are accepted as the Python numbers they hold. Last, the batch must fit in
    memory (``memory_problem``)."""
    if not isinstance(config, TrainConfig):
        raise ConfigError("config", config, "give a TrainConfig (or a dict of its knob values)")
    plain_values(config)
    rules = config_rules(config)
    for config_field in fields(config):
        value, kind = getattr(config, config_field.name), str(config_field.type)
        if not is_of_kind(value, kind):
            allowed = next((words for name, _, words in rules if name == config_field.name), f"must be {KIND_WORDS[kind]}")
            raise ConfigError(config_field.name, value, f"{allowed} ({type(value).__name__}, not {KIND_WORDS[kind]})")
    for name, test, allowed in rules:
        try:
            ok = bool(test(getattr(config, name)))
        except (OverflowError, TypeError):  # e.g. an integer too large to compare as a float
            ok = False
        if not ok:
            raise ConfigError(name, getattr(config, name), allowed)
    problem = memory_problem(config)
    if problem:
        raise problem
    return config


def is_of_kind(value: object, kind: str) -> bool:
    """Whether ``value`` fits a knob annotated ``kind``: bools only for 'bool', never for numbers;
    an int is a fine 'float'."""
    if kind == "bool" or isinstance(value, bool):
        return kind == "bool" and isinstance(value, bool)
    return isinstance(value, {"int": int, "float": (int, float), "str": str}.get(kind, object))


def memory_problem(config: TrainConfig) -> ConfigError | None:
    """None when a step of ``config`` fits in the memory available (memory.py), else the ConfigError
    to raise, naming the knob to change: micro_batch_size (and probe_every, whose probe back-propagates a
    share of the batch at once) when micro-batches would fit, prompts_per_step when nothing would."""
    available = available_bytes(resolve_device(config.device))
    if available is None:
        return None
    task = Task.parse(config.task)
    P, G = config.prompts_per_step, config.group_size
    responses = config.samples_per_step
    probe_rows = G * (P // probe_chunks(P)) if config.probe_every and P >= 2 else 0
    backward = max(min(config.micro_batch_size or responses, responses), probe_rows)
    lengths = (task.max_answer_length, task.prompt_length + task.max_answer_length)
    budget = USABLE_FRACTION * available
    if step_bytes(responses, backward, *lengths) <= budget:
        return None
    need, usable, have = step_bytes(responses, backward, *lengths) / 2**30, budget / 2**30, available / 2**30
    shape = (
        f"{P} prompts x {G} responses = {responses} responses per step need about {need:.1f} GB, more than the {usable:.1f} GB "
        f"usable ({USABLE_FRACTION:.0%} of the {have:.1f} GB available)"
    )
    if step_bytes(responses, 1, *lengths) > budget:
        return ConfigError("prompts_per_step", P, f"{shape}, and even micro-batches of 1 would not fit; use fewer prompts or a smaller group_size")
    fits = next(size for size in (2**k for k in range(20, -1, -1)) if step_bytes(responses, size, *lengths) <= budget)
    advice = f"set micro_batch_size to {fits} or less (--micro-batch-size {fits}: the same gradient, less memory)"
    if probe_rows > fits:
        advice += " and probe_every to 0 (the gradient-noise probe back-propagates a quarter of the batch at once)"
    return ConfigError("micro_batch_size", config.micro_batch_size, f"{shape}; {advice}")
