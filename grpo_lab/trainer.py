"""The GRPO training loop, readable in one sitting (its knobs, TrainConfig, are in config.py).

One step (P prompts, G responses each, B = P*G):
1. sample P problems and G answers per problem from the current policy        -> [B, La]
   (with ``dynamic_sampling_batches``, DAPO: keep the groups whose rewards differ and refill the
   batch from further draws of P problems)
2. score them with the (possibly distorted) reward model                       -> rewards [P, G]
3. turn rewards into advantages with the chosen baseline                       -> [P, G] or [B, La]
   (per token, by GAE, for a value baseline: the learned critic, or ``mc_value``'s rollouts from
   every answer prefix, mc_value.py)
4. for ``inner_epochs`` passes, each cut into ``policy_minibatches`` shuffled minibatches of whole
   groups (CleanRL's update_epochs x num_minibatches), in micro-batches: the clipped-ratio
   policy-gradient loss plus ``kl_coef`` times the k3 KL to the reference, aggregated by
   ``loss_agg``; one optimiser step per minibatch (DeepSeekMath's GRPO objective)
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
from dataclasses import dataclass, field

import torch

from .advantages import VALUE_BASELINES, EMABaseline, compute_advantages, equal_groups
from .config import LOSS_AGGREGATIONS, MAX_GROUP_SIZE, MAX_PROMPTS_PER_STEP, TrainConfig, memory_problem, shown
from .critic import ValueModel, answer_values, explained_variance, gae, update_critic, whiten
from .errors import ConfigError
from .evaluation import greedy_accuracy, greedy_correct
from .files import finite_json
from .losses import aggregate, kl_k3, policy_loss_terms
from .mc_value import mc_prefix_values
from .policy import TinyTransformer, context_problem, load_reference_policy, resolve_device, token_logprobs
from .probes import gradient_noise, per_group_gradients, probe_chunks
from .rollout import Rollout, rollout
from .task import ProblemSampler, RewardModel, Task

# moved to config.py, losses.py, probes.py and evaluation.py; still importable from here (older notebooks and user code)
__all__ = [
    "LOSS_AGGREGATIONS",
    "MAX_GROUP_SIZE",
    "MAX_PROMPTS_PER_STEP",
    "TrainConfig",
    "TrainResult",
    "aggregate",
    "greedy_accuracy",
    "greedy_correct",
    "kl_k3",
    "memory_problem",
    "policy_loss_terms",
    "probe_chunks",
    "train",
]


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
    policy_shuffle: torch.Generator  # minibatch order of the policy's updates (policy_minibatches > 1)
    max_len: int  # La, the longest possible answer
    device: torch.device


def start_run(config: TrainConfig) -> tuple[RunState, ProblemSampler]:
    """A run's state at step 0 (a trainable copy of the reference, its optimiser, the critic if any,
    the seeded generators) and its stream of problems."""
    device = resolve_device(config.device)
    task = Task.parse(config.task)
    torch.manual_seed(config.seed)
    reference = load_reference_policy(config.reference, device).eval()
    problem = context_problem(reference, task)
    if problem is not None:
        raise ConfigError("task", config.task, f"with reference {config.reference!r}, {problem}: choose a shorter task or a reference that reads it")
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
        policy_shuffle=torch.Generator().manual_seed(config.seed + 2),
        max_len=task.max_answer_length,
        device=device,
    )
    return state, problems


def train(
    config: TrainConfig | dict,
    on_step: Callable[[dict], None] | None = None,
    stop: threading.Event | None = None,
    on_batch: Callable[[dict], None] | None = None,
) -> TrainResult:
    """Train a copy of the reference policy with GRPO (or a baseline variant, or PPO's critic).

    ``on_step(metrics)`` is called after every step (and once for step 0, the evaluation before
    training); ``stop`` is checked before every step and ends the run early, marked 'stopped'.
    ``on_batch({"step", "rewards" [P, G], "advantages" [P, G]})`` is called after every training
    step with that step's raw batch (for live views such as the lab's advantage histogram; the
    history keeps only summaries). Under baseline='critic' or 'mc_value' a response's advantage is
    the mean of its tokens' GAE advantages. ``samples`` counts every response generated, the value
    rollouts of 'mc_value' (``value_rollouts`` a step) included. ``config`` may also be a dict of
    knob values (``TrainConfig.from_dict``).

    Deterministic on a CPU for the same config, seed, torch build and torch thread count; with 1 and 2
    threads histories differ around the 7th digit (float sums split differently), which is why the
    CLI's run.json records ``environment.torch_threads`` (data/README.md, "Where determinism holds").
    """
    config = checked_train_arguments(config, on_step, stop, on_batch)
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
        samples += record["responses_sampled"] + record.get("value_rollouts", 0)  # mc_value's rollouts are generated responses too
        if on_batch is not None:
            on_batch({"step": step, **batch})
        record["samples"] = samples
        if (config.eval_every and step % config.eval_every == 0) or step == config.steps:
            record["eval_accuracy"] = greedy_accuracy(state.policy, state.task, state.device)
        emit(record)
    state.policy.eval()
    return result


def checked_train_arguments(config: TrainConfig | dict, on_step: object, stop: object, on_batch: object) -> TrainConfig:
    """``train``'s arguments checked before any work: the validated TrainConfig (built from a dict of knob
    values if given one), or one ConfigError naming the argument that is wrong."""
    if isinstance(config, dict):
        config = TrainConfig.from_dict(config)
    if not isinstance(config, TrainConfig):
        raise ConfigError("config", config, "give a TrainConfig (or a dict of its knob values)", shown(config))
    if stop is not None and not callable(getattr(stop, "is_set", None)):
        raise ConfigError("stop", stop, "give a threading.Event (set it to stop the run) or None", shown(stop))
    for name, callback in (("on_step", on_step), ("on_batch", on_batch)):
        if callback is not None and not callable(callback):
            raise ConfigError(name, callback, "give a function of one dict, or None", shown(callback))
    return config.validate()


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
        # with one update on the batch the sampling policy *is* the current one: the ratio is
        # exactly 1 and old log-probs come free from the loss's own forward (as TRL does)
        reused = config.inner_epochs * config.policy_minibatches > 1
        old_logprobs = token_logprobs(state.policy, prompts, answers) if reused else None
        # the reference is only consulted when the KL term is on (TRL logs kl only when beta > 0)
        ref_logprobs = token_logprobs(state.reference, prompts, answers) if config.kl_coef > 0 else None

    # 2. advantages: GAE on the values of answer prefixes, or each response's reward against its group's
    keep_groups = ~groups["tied"] if config.skip_zero_std_groups and G > 1 else torch.ones(P, dtype=torch.bool)  # DAPO's filter
    if config.baseline in VALUE_BASELINES:
        flat_rewards = rewards.reshape(-1).to(state.device)
        if state.value_model is not None:
            with torch.no_grad():
                values = answer_values(state.value_model, prompts, answers)
            token_advantages, returns = gae(flat_rewards, values, mask, 1.0, config.gae_lambda)
            # how well the critic predicted this fresh batch's GAE returns, before it trains on it (CleanRL's explained_variance)
            record["explained_variance"] = explained_variance(values, returns, mask)
        else:  # VinePPO: unbiased values from rollouts, and A_t = r_t + V(s_{t+1}) - V(s_t)
            values, record["value_rollouts"] = mc_prefix_values(
                state.policy, prompts, answers, mask, state.reward_model, config.mc_rollouts, config.temperature, state.sampling_generator
            )
            token_advantages, _ = gae(flat_rewards, values, mask, 1.0, 0.0)
        token_advantages = whiten(token_advantages, mask)
        # the share of the rewards' variance V explains on a batch it was not fitted on; the target is
        # each response's reward (its Monte-Carlo return, gamma 1), which, unlike GAE's returns, holds no V
        record["heldout_explained_variance"] = explained_variance(values, flat_rewards[:, None] * mask, mask)
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


def minibatch_rows(num_groups: int, group_size: int, minibatches: int, generator: torch.Generator) -> list[torch.Tensor]:
    """Row indices of each minibatch of one pass over a batch of ``num_groups`` groups of
    ``group_size`` contiguous rows: all rows for one minibatch; otherwise the groups shuffled and
    cut into ``minibatches`` near-equal parts (fewer if there are fewer groups). Groups stay whole,
    so each minibatch's rows still share prompts (the loss's packed forward computes each once)."""
    if minibatches == 1:
        return [torch.arange(num_groups * group_size)]
    order = torch.randperm(num_groups, generator=generator)
    return [(part[:, None] * group_size + torch.arange(group_size)).reshape(-1) for part in order.tensor_split(min(minibatches, num_groups))]


def update_policy(config: TrainConfig, state: RunState, batch: Rollout, adv_abs_max: float) -> dict:
    """``inner_epochs`` passes over the batch, each over ``policy_minibatches`` shuffled minibatches
    (``minibatch_rows``), one optimiser step per minibatch (zero_grad, gradient accumulation, norm
    clip, step). The ratio is taken against the sampling policy's log-probs, so it is exactly 1 on
    the first minibatch and leaves 1 once the policy has moved. Returns policy_updates (the number
    of optimiser steps), loss and grad_norm (means over the updates), entropy, clip_ratio and kl
    when the KL term is on (token means over every update, as CleanRL's clipfrac)."""
    losses, grad_norms, sums, num_tokens = [], [], {}, 0.0
    for _ in range(config.inner_epochs):
        for rows in minibatch_rows(len(batch) // config.group_size, config.group_size, config.policy_minibatches, state.policy_shuffle):
            minibatch = batch if len(rows) == len(batch) else batch.rows(rows.to(batch.prompts.device))
            state.optimizer.zero_grad(set_to_none=True)
            loss, minibatch_sums = accumulate_gradients(state.policy, minibatch, config, state.max_len)
            grad_norm = float(torch.nn.utils.clip_grad_norm_(state.parameters, config.max_grad_norm))
            if not math.isfinite(grad_norm):
                raise NonFiniteError(f"the gradient norm became non-finite (largest |advantage| {adv_abs_max:.3g})")
            state.optimizer.step()
            losses.append(loss)
            grad_norms.append(grad_norm)
            num_tokens += float(minibatch.mask.sum())
            for name, value in minibatch_sums.items():
                sums[name] = sums.get(name, 0.0) + value
    metrics = {
        "policy_updates": len(losses),
        "loss": sum(losses) / len(losses),
        "grad_norm": sum(grad_norms) / len(grad_norms),
        "entropy": sums["entropy"] / num_tokens,
        "clip_ratio": sums["clipped"] / num_tokens,
    }
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


def probe_gradient_noise(
    policy: TinyTransformer, parameters: list[torch.Tensor], batch: Rollout, config: TrainConfig, group_size: int, max_len: int
) -> dict[str, float]:
    """grad_var and grad_snr of this step's gradient from the gradients of ``probe_chunks`` chunks
    of whole groups of ``batch`` (probes.py)."""
    num_groups = len(batch) // group_size
    rows_per_chunk = group_size * (num_groups // probe_chunks(num_groups))
    noise = gradient_noise(group_gradients(policy, parameters, batch, config, rows_per_chunk, max_len))
    return {"grad_var": noise["grad_var"], "grad_snr": noise["grad_snr"]}
