"""TrainConfig: every knob of a run, its help line and its checks (the bottom floor of the package).

It imports only modules that import nothing of the trainer's: the baselines' names (advantages.py),
the devices, the task grammar (task_spec.py), the memory estimate and the probe's chunking, so that
task.py, losses.py and critic.py can take a TrainConfig without an import circle. trainer.py
re-exports it (``from grpo_lab.trainer import TrainConfig`` keeps working).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path, PurePath
from typing import Any

from .advantages import BASELINES, EPS_MODES, GROUP_BASELINES, SMALLEST_STD_EPS, STD_SCOPES, VALUE_BASELINES
from .devices import available_devices, resolve_device
from .errors import ConfigError
from .memory import USABLE_FRACTION, available_bytes, step_bytes
from .paths import REFERENCE_NAMES
from .probes import probe_chunks
from .task_spec import Task

LOSS_AGGREGATIONS = ("seq_mean", "token_mean", "token_sum_norm")  # losses.py's aggregations
REWARD_KINDS = ("exact", "partial")  # task.py's reward functions
CRITIC_SCHEDULES = ("own", "policy")  # the critic's updates a step: its own epochs x minibatches, or the policy's (verl, OpenRLHF)
MAX_GROUP_SIZE = 256
MAX_PROMPTS_PER_STEP = 1024


def knob(default: object, help: str) -> Any:
    """A TrainConfig field: its default and one line of help (shown by ``python -m grpo_lab train --help``)."""
    return field(default=default, metadata={"help": help})


@dataclass
class TrainConfig:
    """Every knob of a run. The command line's flags are these names with '-' for '_', and each
    knob's help text (``field.metadata["help"]``) is that flag's ``--help`` line."""

    task: str = knob("2d+", "problems: '{digits}d{ops}', digits 1-3, ops from '+-*' (e.g. '2d+', '1d+-*')")
    reference: str = knob("default", "starting policy and KL anchor: 'default' (~50% accurate), 'sparse' (~30%), 'weak' (<15%), or a .pt path")
    group_size: int = knob(8, "G, responses sampled per prompt (GRPO's group)")
    prompts_per_step: int = knob(16, "P, prompts per training step; a step samples P*G responses")
    baseline: str = knob("zscore", "none | mean | zscore | rloo | ema | critic | mc_value (see advantages.py)")
    std_eps: float = knob(1e-4, "epsilon in the z-score's denominator (TRL 1e-4, verl 1e-6, OpenRLHF 1e-9)")
    std_scope: str = knob("group", "std over each group, or over the whole batch ('batch', TRL scale_rewards='batch')")
    std_ddof: int = knob(1, "1: Bessel's correction (TRL, verl); 0: population std")
    eps_mode: str = knob("add", "'add': std + eps (TRL, verl); 'clamp': max(std, eps) (the card's formula)")
    ema_decay: float = knob(0.9, "decay of the global moving-average baseline for baseline='ema'")
    kl_coef: float = knob(0.0, "beta, weight of the k3 KL to the reference (TRL default 0.0; DeepSeekMath 0.04)")
    clip_eps: float = knob(0.2, "PPO ratio clip: the ratio is clipped to [1 - clip_eps, 1 + clip_eps]")
    inner_epochs: int = knob(1, "optimiser passes over each batch (TRL num_iterations, CleanRL update_epochs); >1 makes the clip matter")
    policy_minibatches: int = knob(
        1,
        "shuffled minibatches of whole groups per policy pass, one optimiser step each (CleanRL num_minibatches): inner_epochs x this updates a step",
    )
    critic_schedule: str = knob(
        "own",
        "'own': critic_epochs x critic_minibatches critic updates a step; 'policy': the policy's inner_epochs x policy_minibatches (verl, OpenRLHF)",
    )
    mc_rollouts: int = knob(4, "rollouts from each answer prefix that estimate V(s_t) for baseline='mc_value' (VinePPO)")
    lr: float = knob(1e-4, "Adam learning rate of the policy")
    critic_lr: float = knob(
        3e-4,
        "Adam learning rate of the critic (baseline='critic' only); CleanRL's 2.5e-4. `sweep critic-fit`: 1e-4 and 3e-4 fit best, 1e-3 and 3e-3 worse",
    )
    critic_epochs: int = knob(4, "passes of the critic over each batch (CleanRL's update_epochs); the critic needs many more updates than the policy")
    critic_minibatches: int = knob(4, "shuffled minibatches per critic pass, one Adam step each: epochs x minibatches critic updates per step")
    value_clip: float = knob(0.0, "PPO's clipped value loss: V moves at most this far from its sampling-time value per batch; 0 = off")
    max_grad_norm: float = knob(1.0, "gradient norm clip before each optimiser step (TRL default 1.0)")
    steps: int = knob(150, "training steps")
    temperature: float = knob(1.0, "sampling temperature of the responses (evaluation is greedy)")
    reward: str = knob("exact", "'exact': 1 if the answer is right else 0; 'partial': credit per correct digit")
    reward_offset: float = knob(0.0, "simulated reward-model bias added to every reward")
    reward_scale: float = knob(1.0, "simulated reward-model scale multiplying every reward")
    reward_noise: float = knob(0.0, "std of Gaussian noise added to every reward")
    hard_reward_scale: float = knob(1.0, "extra scale on the rewards of 'hard' problems (task.is_hard: a carry): per-prompt scale differences")
    loss_agg: str = knob("seq_mean", "seq_mean (GRPO) | token_mean (DAPO) | token_sum_norm (Dr. GRPO)")
    skip_zero_std_groups: bool = knob(
        False, "drop groups whose rewards are all equal, without refilling (the filter half of DAPO's dynamic sampling)"
    )
    dynamic_sampling_batches: int = knob(
        0,
        "DAPO's dynamic sampling: sample up to this many extra batches of P prompts and refill the batch with groups whose rewards differ (0 = off)",
    )
    micro_batch_size: int = knob(0, "responses per backward pass (gradient accumulation); 0 = the whole batch")
    gae_lambda: float = knob(0.95, "GAE's lambda for baseline='critic' (gamma is 1: one reward per response)")
    eval_every: int = knob(10, "steps between greedy evaluations on the held-out set (0: only first and last)")
    probe_every: int = knob(10, "steps between gradient-noise probes (grad_var, grad_snr); 0 = never")
    seed: int = knob(0, "seeds sampling, problems, reward noise and the critic's initialisation")
    device: str = knob("auto", "'auto' (CUDA, then MPS, then CPU), 'cpu', 'cuda' or 'mps'")

    def __post_init__(self) -> None:
        self._plain_values()

    def _plain_values(self) -> None:
        """numpy (and 0-d torch) scalars become Python numbers and paths become strings, so to_dict()
        stays JSON-writable."""
        for config_field in fields(self):
            value = getattr(self, config_field.name)
            if type(value).__module__ in ("numpy", "torch") and getattr(value, "ndim", None) == 0:
                setattr(self, config_field.name, value.item())
            elif isinstance(value, PurePath):
                setattr(self, config_field.name, str(value))

    def rules(self) -> list[tuple[str, Callable[[object], bool], str]]:
        """(knob, test of a value of the right type, the allowed range in words), in checking order."""
        minimum_group = 2 if self.baseline in GROUP_BASELINES else 1
        # a prompts_per_step of the wrong type is refused by its own rule first
        most_minibatches = min(256, self.prompts_per_step) if is_of_kind(self.prompts_per_step, "int") and self.prompts_per_step >= 1 else 256

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
                + (f" (baseline={self.baseline!r} needs at least 2 responses per group)" if minimum_group == 2 else ""),
            ),
            ("prompts_per_step", between(1, MAX_PROMPTS_PER_STEP), f"must be an integer from 1 to {MAX_PROMPTS_PER_STEP}"),
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
                lambda value: 0 <= value <= 64 and (value == 0 or self.group_size >= 2 and self.baseline not in VALUE_BASELINES),
                "must be an integer from 0 (off) to 64, and needs groups (group_size >= 2, not baseline='critic' or 'mc_value')",
            ),
            ("gae_lambda", lambda value: 0 <= value <= 1, "must be in [0, 1]"),
            ("eval_every", lambda value: value >= 0, "must be an integer >= 0"),
            ("probe_every", lambda value: value >= 0, "must be an integer >= 0"),
            (
                "prompts_per_step",
                lambda value: self.probe_every == 0 or value >= 2,
                "must be at least 2 when probe_every > 0 (the variance needs two groups)",
            ),
            ("seed", between(0, 2**31 - 1), "must be an integer from 0 to 2**31 - 1"),
            ("device", lambda value: resolve_device(value) is not None, "choose one of " + ", ".join(available_devices())),
        ]

    def validate(self) -> TrainConfig:
        """Raise one ConfigError (a ValueError) naming the knob, the value and the allowed range; return self.

        Every knob is checked for its type first (the annotation: a str for a float knob, a bool
        for an int knob, anything but True/False for a bool knob are refused), then for its range;
        numpy scalars are accepted as the Python numbers they hold. Last, the batch must fit in
        memory (``memory_problem``)."""
        self._plain_values()
        rules = self.rules()
        for config_field in fields(self):
            value, kind = getattr(self, config_field.name), str(config_field.type)
            if not is_of_kind(value, kind):
                allowed = next((words for name, _, words in rules if name == config_field.name), f"must be {KIND_WORDS[kind]}")
                raise ConfigError(config_field.name, value, f"{allowed} ({type(value).__name__}, not {KIND_WORDS[kind]})", shown(value))
        for name, test, allowed in rules:
            try:
                ok = bool(test(getattr(self, name)))
            except (OverflowError, TypeError):  # e.g. an integer too large to compare as a float
                ok = False
            if not ok:
                raise ConfigError(name, getattr(self, name), allowed, shown(getattr(self, name)))
        problem = memory_problem(self)
        if problem:
            raise problem
        return self

    @property
    def samples_per_step(self) -> int:
        """Responses sampled per step, P x G (before dynamic sampling's extra draws)."""
        return self.prompts_per_step * self.group_size

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> TrainConfig:
        """A TrainConfig from {knob: value}; unknown knobs (or a non-dict) raise one ValueError naming them."""
        if not isinstance(values, dict):
            raise ValueError(f"TrainConfig.from_dict needs a dict of knob values, got a {type(values).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(repr(key) for key in values if key not in known)
        if unknown:
            raise ValueError(f"unknown TrainConfig field(s): {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        return cls(**values)


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


KIND_WORDS = {"int": "an integer", "float": "a number", "bool": "True or False", "str": "a string"}


def shown(value: object, limit: int = 60) -> str:
    """repr(value), cut to ``limit`` characters (an error line stays one readable line)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_of_kind(value: object, kind: str) -> bool:
    """Whether ``value`` fits a knob annotated ``kind``: bools only for 'bool', never for numbers;
    an int is a fine 'float'."""
    if kind == "bool" or isinstance(value, bool):
        return kind == "bool" and isinstance(value, bool)
    return isinstance(value, {"int": int, "float": (int, float), "str": str}.get(kind, object))
