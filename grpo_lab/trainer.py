"""TrainConfig and the GRPO training loop, readable in one sitting.

One step (P prompts, G responses each, B = P*G):
1. sample P problems and G answers per problem from the current policy        -> [B, La]
   (with ``dynamic_sampling_batches``, DAPO: keep the groups whose rewards differ and refill the
   batch from further draws of P problems)
2. score them with the (possibly distorted) reward model                       -> rewards [P, G]
3. turn rewards into advantages with the chosen baseline                       -> [P, G] or [B, La]
4. for ``inner_epochs`` passes, in micro-batches: the clipped-ratio policy-gradient loss plus
   ``kl_coef`` times the k3 KL to the reference, aggregated by ``loss_agg``; one optimiser step
   per pass (DeepSeekMath's GRPO objective)
5. log the metrics (names as TRL's where TRL has one), evaluate and probe at their intervals

``train_step`` is that list in order, on a ``RunState`` (what a run carries between steps); the
batch it trains on is a ``rollout.Rollout``. ``train`` returns a TrainResult; a stopped or failed run
returns what it has, with a message.
"""

from __future__ import annotations

import copy
import math
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path, PurePath
from typing import Any

import torch

from .advantages import BASELINES, EPS_MODES, GROUP_BASELINES, STD_SCOPES, EMABaseline, compute_advantages, equal_groups
from .critic import ValueModel, answer_values, explained_variance, gae, update_critic, whiten
from .errors import ConfigError
from .evaluation import greedy_accuracy, greedy_correct
from .files import finite_json
from .losses import LOSS_AGGREGATIONS, aggregate, kl_k3, policy_loss_terms
from .memory import USABLE_FRACTION, available_bytes, step_bytes
from .policy import (
    REFERENCE_NAMES,
    TinyTransformer,
    available_devices,
    load_reference_policy,
    resolve_device,
    token_logprobs,
)
from .probes import gradient_noise, per_group_gradients
from .rollout import Rollout, rollout
from .task import REWARD_KINDS, ProblemSampler, RewardModel, Task

# moved to losses.py and evaluation.py; still importable from here (older notebooks and user code)
__all__ = ["LOSS_AGGREGATIONS", "TrainConfig", "TrainResult", "aggregate", "greedy_accuracy", "greedy_correct", "kl_k3", "policy_loss_terms", "train"]

MAX_GROUP_SIZE = 256
MAX_PROMPTS_PER_STEP = 1024
PROBE_CHUNKS = 4  # backward passes per gradient-noise probe (probes.py): fewer is cheaper, more is less noisy


def knob(default: object, help: str) -> Any:
    """A TrainConfig field: its default and one line of help (shown by ``python -m grpo_lab train --help``)."""
    return field(default=default, metadata={"help": help})


@dataclass
class TrainConfig:
    """Every knob of a run. The command line's flags are these names with '-' for '_', and each
    knob's help text (``field.metadata["help"]``) is that flag's ``--help`` line."""

    task: str = knob("2d+", "problems: '{digits}d{ops}', digits 1-3, ops from '+-*' (e.g. '2d+', '1d+-*')")
    reference: str = knob("default", "starting policy and KL anchor: 'default' (~50% accurate), 'weak' (<15%), or a .pt path")
    group_size: int = knob(8, "G, responses sampled per prompt (GRPO's group)")
    prompts_per_step: int = knob(16, "P, prompts per training step; a step samples P*G responses")
    baseline: str = knob("zscore", "none | mean | zscore | rloo | ema | critic (see advantages.py)")
    std_eps: float = knob(1e-4, "epsilon in the z-score's denominator (TRL 1e-4, verl 1e-6, OpenRLHF 1e-9)")
    std_scope: str = knob("group", "std over each group, or over the whole batch ('batch', TRL scale_rewards='batch')")
    std_ddof: int = knob(1, "1: Bessel's correction (TRL, verl); 0: population std")
    eps_mode: str = knob("add", "'add': std + eps (TRL, verl); 'clamp': max(std, eps) (the card's formula)")
    ema_decay: float = knob(0.9, "decay of the global moving-average baseline for baseline='ema'")
    kl_coef: float = knob(0.0, "beta, weight of the k3 KL to the reference (TRL default 0.0; DeepSeekMath 0.04)")
    clip_eps: float = knob(0.2, "PPO ratio clip: the ratio is clipped to [1 - clip_eps, 1 + clip_eps]")
    inner_epochs: int = knob(1, "optimiser passes over each batch (TRL num_iterations); >1 makes the clip matter")
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

        def between(low: float, high: float) -> Callable[[float], bool]:
            return lambda value: math.isfinite(value) and low <= value <= high

        def one_of(options) -> tuple[Callable[[object], bool], str]:
            return (lambda value: value in options), "choose one of " + ", ".join(map(str, options))

        def existing_reference(value: str) -> bool:
            return value in REFERENCE_NAMES or (value.endswith(".pt") and Path(value).is_file())

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
            ("std_eps", between(0, 10), "must be between 0 and 10 (TRL uses 1e-4)"),
            ("std_scope", *one_of(STD_SCOPES)),
            ("std_ddof", *one_of((0, 1))),
            ("eps_mode", *one_of(EPS_MODES)),
            ("ema_decay", lambda value: 0 <= value < 1, "must be in [0, 1)"),
            ("kl_coef", between(0, 10), "must be between 0 and 10"),
            ("clip_eps", lambda value: 0 < value <= 10, "must be in (0, 10] (0.2 is usual)"),
            ("inner_epochs", between(1, 16), "must be an integer from 1 to 16"),
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
                lambda value: 0 <= value <= 64 and (value == 0 or self.group_size >= 2 and self.baseline != "critic"),
                "must be an integer from 0 (off) to 64, and needs groups (group_size >= 2, not baseline='critic')",
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


@dataclass
class TrainResult:
    """What a run produced. status: 'finished', 'stopped' (the stop event was set) or 'failed'
    (non-finite values; ``message`` says why). history: one dict per step, step 0 being the
    reference's evaluation before any update."""

    config: TrainConfig
    history: list[dict] = field(default_factory=list)
    policy: TinyTransformer | None = None
    status: str = "finished"
    message: str = ""

    @property
    def stopped(self) -> bool:
        return self.status == "stopped"

    @property
    def final(self) -> dict:
        """The last value of each metric, plus the status and the initial eval accuracy."""
        summary: dict = {"status": self.status, "message": self.message}
        for record in self.history:
            summary.update(record)
        if self.history:
            summary["initial_eval_accuracy"] = self.history[0].get("eval_accuracy")
        return summary

    def to_json(self) -> dict:
        """{"config", "history", "final"} ready for json.dumps: a non-finite number (JSON has none)
        becomes null, and then "notes" says, per metric, where and why."""
        clean, nulled = finite_json({"config": self.config.to_dict(), "history": self.history, "final": self.final})
        if nulled:
            clean["notes"] = null_notes(nulled)
        return clean


WHY_NULL = {  # metrics that can be undefined, and why
    "explained_variance": "undefined when every return of the batch is the same (Var(returns) = 0): there is nothing to explain",
}


def null_notes(places: list[str]) -> dict[str, str]:
    """['history[3].explained_variance', 'final.explained_variance'] -> {metric: 'null in history[3], final: why'}."""
    by_metric: dict[str, list[str]] = {}
    for place in places:
        where, _, metric = place.rpartition(".")
        by_metric.setdefault(metric, []).append(where or "top level")
    notes = {}
    for metric, wheres in by_metric.items():
        shown = ", ".join(wheres[:5]) + (f" and {len(wheres) - 5} more" if len(wheres) > 5 else "")
        notes[metric] = f"null in {shown}: " + WHY_NULL.get(metric, "the value was not a finite number")
    return notes


class NonFiniteError(RuntimeError):
    """Raised inside the loop when advantages, losses or gradients stop being finite numbers."""


def explain_non_finite_advantages(rewards: torch.Tensor, config: TrainConfig) -> str:
    tied = int(equal_groups(rewards).sum()) if rewards.shape[1] > 1 else 0
    if config.baseline == "zscore" and config.std_eps == 0 and tied:
        return (
            f"{tied} group(s) had all-equal rewards and std_eps is 0, so their z-scored advantage is 0/0 "
            "(NaN). Set std_eps > 0 (TRL uses 1e-4) or skip_zero_std_groups=True."
        )
    return (
        f"the advantages became non-finite with baseline={config.baseline!r} (reward range {float(rewards.min()):.3g} to {float(rewards.max()):.3g})"
    )


@dataclass
class RunState:
    """What a run carries from one step to the next (built once by ``start_run``)."""

    task: Task
    policy: TinyTransformer  # the one being trained
    reference: TinyTransformer  # frozen: where the policy starts and the KL's anchor
    parameters: list[torch.Tensor]  # the policy's
    optimizer: torch.optim.Optimizer
    reward_model: RewardModel
    ema: EMABaseline  # the running reward average of baseline='ema'
    sampling_generator: torch.Generator
    value_model: ValueModel | None  # the critic (baseline='critic' only)
    value_optimizer: torch.optim.Optimizer | None
    critic_shuffle: torch.Generator  # minibatch order of the critic's updates
    max_len: int  # La, the longest possible answer
    device: torch.device


def start_run(config: TrainConfig) -> tuple[RunState, ProblemSampler]:
    """A run's state at step 0 (a trainable copy of the reference, its optimiser, the critic if any,
    the seeded generators) and its stream of problems."""
    device = resolve_device(config.device)
    task = Task.parse(config.task)
    torch.manual_seed(config.seed)
    reference = load_reference_policy(config.reference, device).eval()
    for parameter in reference.parameters():
        parameter.requires_grad_(False)
    policy = copy.deepcopy(reference).train()
    for parameter in policy.parameters():
        parameter.requires_grad_(True)
    parameters = list(policy.parameters())
    fused = device.type in ("cpu", "cuda")  # one kernel for all parameters: ~5x cheaper than the loop on a CPU
    optimizer = torch.optim.Adam(parameters, lr=config.lr, fused=fused)
    value_model = ValueModel(reference).to(device) if config.baseline == "critic" else None
    value_optimizer = torch.optim.Adam(value_model.parameters(), lr=config.critic_lr, fused=fused) if value_model else None
    critic_shuffle = torch.Generator().manual_seed(config.seed + 1)
    problems = ProblemSampler(task, config.seed)
    state = RunState(
        task=task,
        policy=policy,
        reference=reference,
        parameters=parameters,
        optimizer=optimizer,
        reward_model=RewardModel.for_config(config, config.seed),
        ema=EMABaseline(config.ema_decay),
        sampling_generator=torch.Generator().manual_seed(config.seed),
        value_model=value_model,
        value_optimizer=value_optimizer,
        critic_shuffle=critic_shuffle,
        max_len=task.max_answer_length,
        device=device,
    )
    return state, problems


def train(
    config: TrainConfig,
    on_step: Callable[[dict], None] | None = None,
    stop: threading.Event | None = None,
    on_batch: Callable[[dict], None] | None = None,
) -> TrainResult:
    """Train a copy of the reference policy with GRPO (or a baseline variant, or PPO's critic).

    ``on_step(metrics)`` is called after every step (and once for step 0, the evaluation before
    training); ``stop`` is checked before every step and ends the run early, marked 'stopped'.
    ``on_batch({"step", "rewards" [P, G], "advantages" [P, G]})`` is called after every training
    step with that step's raw batch (for live views such as the lab's advantage histogram; the
    history keeps only summaries). Under baseline='critic' a response's advantage is the mean of
    its tokens' GAE advantages.

    Deterministic on a CPU for the same config, seed, torch build and torch thread count; with 1 and 2
    threads histories differ around the 7th digit (float sums split differently), which is why the
    CLI's run.json records ``environment.torch_threads`` (data/README.md, "Where determinism holds").
    """
    config.validate()
    state, problems = start_run(config)
    result = TrainResult(config=config, policy=state.policy)
    started = time.perf_counter()

    def emit(record: dict) -> None:
        record["wall_time"] = time.perf_counter() - started
        result.history.append(record)
        if on_step is not None:
            on_step(record)

    emit({"step": 0, "samples": 0, "eval_accuracy": greedy_accuracy(state.policy, state.task, state.device)})
    samples = 0
    for step in range(1, config.steps + 1):
        if stop is not None and stop.is_set():
            result.status, result.message = "stopped", f"stopped by the user after {step - 1} of {config.steps} steps"
            break
        try:
            record, batch = train_step(config, state, problems, step)
        except NonFiniteError as error:
            result.status, result.message = "failed", f"stopped at step {step}: {error}"
            break
        samples += record["responses_sampled"]
        if on_batch is not None:
            on_batch({"step": step, **batch})
        record["samples"] = samples
        if (config.eval_every and step % config.eval_every == 0) or step == config.steps:
            record["eval_accuracy"] = greedy_accuracy(state.policy, state.task, state.device)
        emit(record)
    state.policy.eval()
    return result


def train_step(config: TrainConfig, state: RunState, problems: ProblemSampler, step: int) -> tuple[dict, dict]:
    """One GRPO step (see the module docstring). Returns (its metrics, its raw batch {"rewards" [P, G],
    "advantages" [P, G]} on the CPU, for ``train``'s ``on_batch``)."""
    G = config.group_size
    # 1. sample P prompts x G answers from the current policy and score them
    groups, sampled = sample_and_score(config, state, problems)
    record = {"step": step, **sampling_metrics(sampled, G)}
    rewards = groups["rewards"]
    P = rewards.shape[0]  # the prompts trained on (dynamic sampling may find fewer than prompts_per_step)
    longest = int(groups["mask"].sum(dim=1).max()) if P else 1  # columns after every answer's end carry nothing: drop them
    prompts, answers, mask = groups["prompts"], groups["answers"][:, :longest], groups["mask"][:, :longest]
    if P == 0:  # dynamic sampling found no group with a reward spread in any draw: nothing to learn from
        record.update(adv_abs_max=0.0, groups_used=0, loss=0.0, grad_norm=0.0, clip_ratio=0.0)
        return record, {"rewards": rewards.cpu(), "advantages": rewards.cpu()}

    with torch.no_grad():
        # with one pass over the batch the sampling policy *is* the current one: the ratio is
        # exactly 1 and old log-probs come free from the loss's own forward (as TRL does)
        old_logprobs = token_logprobs(state.policy, prompts, answers) if config.inner_epochs > 1 else None
        # the reference is only consulted when the KL term is on (TRL logs kl only when beta > 0)
        ref_logprobs = token_logprobs(state.reference, prompts, answers) if config.kl_coef > 0 else None

    # 2. advantages: GAE on the critic's values, or each response's reward against its group's
    keep_groups = ~groups["tied"] if config.skip_zero_std_groups and G > 1 else torch.ones(P, dtype=torch.bool)  # DAPO's filter
    if state.value_model is not None:
        with torch.no_grad():
            values = answer_values(state.value_model, prompts, answers)
        token_advantages, returns = gae(rewards.reshape(-1).to(state.device), values, mask, 1.0, config.gae_lambda)
        token_advantages = whiten(token_advantages, mask)
        # how well the critic predicted this fresh batch, before it trains on it (CleanRL's explained_variance)
        record["explained_variance"] = explained_variance(values, returns, mask)
    else:
        advantages, ema_metrics = group_advantages(config, state.ema, rewards, keep_groups)
        record.update(ema_metrics)
        token_advantages = advantages.reshape(-1, 1).to(state.device) * mask  # every token of a response shares its advantage
    record["adv_abs_max"] = float((token_advantages.abs() * mask).max())
    response_advantages = (token_advantages * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)
    raw_batch = {"rewards": rewards.detach().cpu(), "advantages": response_advantages.detach().cpu().view(P, G)}

    # 3. the batch trained on: the kept groups' rows
    record["groups_used"] = int(keep_groups.sum())
    index = keep_groups.repeat_interleave(G).to(state.device).nonzero().squeeze(1)
    batch = Rollout(prompts, answers, mask, token_advantages, old_logprobs, ref_logprobs).rows(index)
    if len(batch) == 0:  # every group was filtered out: nothing to learn from this batch
        record.update(loss=0.0, grad_norm=0.0, clip_ratio=0.0)
        return record, raw_batch

    # 4. the gradient's noise (at its interval), then the policy update
    if config.probe_every and step % config.probe_every == 0 and len(batch) // G >= 2:
        record.update(probe_gradient_noise(state.policy, state.parameters, batch, config, G, state.max_len))
    record.update(update_policy(config, state, batch, record["adv_abs_max"]))

    # 5. the critic fits this batch's returns
    if state.value_model is not None:
        record.update(
            update_critic(
                state.value_model,
                state.value_optimizer,
                prompts,
                answers,
                mask,
                returns,
                values,
                config,
                state.critic_shuffle,
            )
        )
    return record, raw_batch


PER_GROUP_KEYS = ("rewards", "correct", "tied", "hard")  # a rollout's entries with one row per group, [P, ...]; the others have one per response


def sample_groups(config: TrainConfig, state: RunState, problems: ProblemSampler) -> dict:
    """Draw P prompts, sample G answers to each from the current policy and score them
    (``rollout.rollout``: prompts, answers, mask [P*G, ...]; rewards, correct [P, G]; tied, hard [P]).
    With gradient accumulation the answers are decoded ``micro_batch_size`` at a time too, so that
    sampling's memory is bounded as the backward pass's is (the same answers as the whole batch's)."""
    P, G = config.prompts_per_step, config.group_size
    chunk = config.micro_batch_size or None
    return rollout(state.policy, problems, state.reward_model, P, G, state.max_len, config.temperature, state.sampling_generator, state.device, chunk)


def dynamic_sampling(config: TrainConfig, state: RunState, problems: ProblemSampler) -> tuple[dict, dict]:
    """DAPO's dynamic sampling: keep only groups whose rewards differ, and sample further batches of
    P prompts (at most ``dynamic_sampling_batches`` more) until P such groups are found; the batch
    is then cut to P groups (fewer if the draws ran out). Returns (the kept groups, as in
    ``sample_groups``, and every sampled group's rewards, tied and correct, for the statistics of
    what was sampled)."""
    P, G = config.prompts_per_step, config.group_size
    kept, sampled = [], []
    for _ in range(1 + config.dynamic_sampling_batches):
        groups = sample_groups(config, state, problems)
        sampled.append(groups)
        spread = ~groups["tied"]
        rows = spread.repeat_interleave(G)
        kept.append({key: value[spread] if key in PER_GROUP_KEYS else value[rows] for key, value in groups.items()})
        if sum(len(k["rewards"]) for k in kept) >= P:
            break
    batch = {key: torch.cat([k[key] for k in kept])[: P * (1 if key in PER_GROUP_KEYS else G)] for key in kept[0]}
    return batch, {key: torch.cat([groups[key] for groups in sampled]) for key in ("rewards", "tied", "correct")}


def sample_and_score(config: TrainConfig, state: RunState, problems: ProblemSampler) -> tuple[dict, dict]:
    """(the groups to train on, everything sampled this step): the same batch of ``sample_groups``
    twice, or with ``dynamic_sampling_batches`` the groups ``dynamic_sampling`` kept and all it drew."""
    if config.dynamic_sampling_batches:
        return dynamic_sampling(config, state, problems)
    groups = sample_groups(config, state, problems)
    return groups, groups


def sampling_metrics(sampled: dict, group_size: int) -> dict:
    """reward, accuracy, responses_sampled and, for groups of G > 1, reward_std (the mean group
    std) and frac_reward_zero_std: they describe everything sampled this step (``sampled`` as in
    ``sample_groups``: rewards, correct [P', G], tied [P'])."""
    metrics: dict = {
        "reward": float(sampled["rewards"].mean()),
        "accuracy": float(sampled["correct"].float().mean()),
        "responses_sampled": sampled["rewards"].numel(),
    }
    if group_size > 1:
        metrics["reward_std"] = float(sampled["rewards"].std(dim=1).mean())
        metrics["frac_reward_zero_std"] = float(sampled["tied"].float().mean())
    return metrics


def group_advantages(config: TrainConfig, ema: EMABaseline, rewards: torch.Tensor, keep_groups: torch.Tensor) -> tuple[torch.Tensor, dict]:
    """Advantages [P, G] of rewards [P, G] under ``config.baseline`` (advantages.py), 0 for the
    groups not kept (keep_groups [P]), and {"ema_baseline"} for baseline='ema' (whose average then
    takes in these rewards). Raises NonFiniteError, saying why, if a kept advantage is not finite."""
    advantages = compute_advantages(
        rewards, config.baseline, config.std_eps, config.std_scope, config.std_ddof, config.eps_mode, ema.current(rewards)
    )
    if not torch.isfinite(advantages[keep_groups]).all():
        raise NonFiniteError(explain_non_finite_advantages(rewards, config))
    advantages = advantages.where(keep_groups[:, None], 0.0)  # dropped groups: 0/0 is fine, unused
    metrics = {}
    if config.baseline == "ema":
        metrics["ema_baseline"] = ema.current(rewards)
        ema.update(rewards)
    return advantages, metrics


def update_policy(config: TrainConfig, state: RunState, batch: Rollout, adv_abs_max: float) -> dict:
    """``inner_epochs`` optimiser steps on the batch's loss (each after gradient accumulation and
    norm clipping); returns loss, grad_norm, entropy, clip_ratio (and kl when the KL term is on),
    the token means of the last pass."""
    for _ in range(config.inner_epochs):
        state.optimizer.zero_grad(set_to_none=True)
        total_loss, sums = accumulate_gradients(state.policy, batch, config, state.max_len)
        grad_norm = float(torch.nn.utils.clip_grad_norm_(state.parameters, config.max_grad_norm))
        if not math.isfinite(grad_norm):
            raise NonFiniteError(f"the gradient norm became non-finite (largest |advantage| {adv_abs_max:.3g})")
        state.optimizer.step()
    num_tokens = float(batch.mask.sum())
    metrics = {"loss": total_loss, "grad_norm": grad_norm, "entropy": sums["entropy"] / num_tokens, "clip_ratio": sums["clipped"] / num_tokens}
    if "kl" in sums:
        metrics["kl"] = sums["kl"] / num_tokens
    return metrics


def rollout_loss_terms(policy: TinyTransformer, chunk: Rollout, config: TrainConfig) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """``losses.policy_loss_terms`` of a rollout's rows: the per-token loss [b, La] and its diagnostics."""
    return policy_loss_terms(policy, chunk.prompts, chunk.answers, chunk.mask, chunk.old_logprobs, chunk.ref_logprobs, chunk.token_advantages, config)


def group_gradients(
    policy: TinyTransformer, parameters: list[torch.Tensor], batch: Rollout, config: TrainConfig, group_size: int, max_len: int
) -> torch.Tensor:
    """Gradient of each group's loss, [num_groups, n_params]; the batch's rows are grouped by
    ``group_size`` (probes.py). A "group" here may be several GRPO groups in a row: a chunk of the
    batch."""
    num_groups = len(batch) // group_size

    def group_loss(group: int) -> torch.Tensor:
        chunk = batch.rows(slice(group * group_size, (group + 1) * group_size))
        per_token, _ = rollout_loss_terms(policy, chunk, config)
        # each group normalised on its own, so that the batch loss is the mean of the group losses
        return aggregate(per_token, chunk.mask, config.loss_agg, group_size, float(chunk.mask.sum()), max_len)

    return per_group_gradients(parameters, group_loss, num_groups)


def accumulate_gradients(policy: TinyTransformer, batch: Rollout, config: TrainConfig, max_len: int) -> tuple[float, dict[str, float]]:
    """Backpropagate the batch loss into ``.grad``, ``micro_batch_size`` responses at a time.

    batch: the B responses to train on (rollout.py: every tensor [B, ...]). The gradient equals the
    full-batch one (see ``aggregate``); only peak memory changes. Returns (the batch loss, sums
    over answer tokens of each diagnostic).
    """
    num_sequences = len(batch)
    num_tokens = float(batch.mask.sum())
    micro = config.micro_batch_size or num_sequences
    total_loss, sums = 0.0, {}
    for start in range(0, num_sequences, micro):
        chunk = batch.rows(slice(start, start + micro))
        per_token, diagnostics = rollout_loss_terms(policy, chunk, config)
        loss = aggregate(per_token, chunk.mask, config.loss_agg, num_sequences, num_tokens, max_len)
        if not torch.isfinite(loss):
            raise NonFiniteError(f"the loss became non-finite (largest |advantage| {float(chunk.token_advantages.abs().max()):.3g}, lr {config.lr})")
        loss.backward()
        total_loss += float(loss.detach())
        for name, values in diagnostics.items():
            sums[name] = sums.get(name, 0.0) + float((values * chunk.mask).sum())
    return total_loss, sums


def probe_chunks(num_groups: int) -> int:
    """How many chunks the probe cuts a batch of ``num_groups`` groups into: the smallest divisor of
    num_groups that is at least PROBE_CHUNKS (all the groups, one each, when there are fewer)."""
    return next(k for k in range(min(num_groups, PROBE_CHUNKS), num_groups + 1) if num_groups % k == 0)


def probe_gradient_noise(
    policy: TinyTransformer, parameters: list[torch.Tensor], batch: Rollout, config: TrainConfig, group_size: int, max_len: int
) -> dict[str, float]:
    """grad_var and grad_snr of this step's gradient from the gradients of ``probe_chunks`` chunks
    of whole groups of ``batch`` (probes.py)."""
    num_groups = len(batch) // group_size
    rows_per_chunk = group_size * (num_groups // probe_chunks(num_groups))
    noise = gradient_noise(group_gradients(policy, parameters, batch, config, rows_per_chunk, max_len))
    return {"grad_var": noise["grad_var"], "grad_snr": noise["grad_snr"]}
