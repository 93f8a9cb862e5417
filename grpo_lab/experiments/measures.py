"""What one experiment unit measures: one (cell, seed) -> one per-seed entry.

A unit is a plain function of a cell's config dict and a seed, so it can run in a worker process
and be re-run alone (``runner.run_cell``). Five kinds:

- ``train``: a training run (``trainer.train``), summarised by ``run_metrics``;
- ``variance``: many independent batches at a fixed policy, the policy gradient of each baseline
  per group (``core.loop.chunk_gradients``), its SNR and its cosine to a large-batch gradient;
- ``difficulty_weights``: per-group gradient norms at a fixed policy, binned by how many of the
  group's responses are right (Dr. GRPO's argument about dividing by the std);
- ``blowup``: time per step and memory of a short run at a given batch shape;
- ``critic_fit``: PPO's critic trained on a fixed policy's rollouts, its held-out explained
  variance against the number of updates, beside the group mean of G samples and two ceilings
  (V(prompt) and V(s_t) from many samples).

A per-seed entry is ``{"seed", "status", "metrics": {name: float | None}, "series": {...}}``.
"""

from __future__ import annotations

import functools
import json
import math
import statistics
import sys
import weakref
from dataclasses import dataclass

import torch

from ..checks.arguments import compute_advantages
from ..checks.checkpoints import load_reference_policy
from ..core.advantages import EMABaseline
from ..core.config import TrainConfig
from ..core.critic import ValueModel, advantages_and_returns, answer_values, explained_variance, update_critic
from ..core.loop import Rollout, chunk_gradients, greedy_correct, rollout
from ..core.mc_value import mc_prefix_values
from ..core.model import TinyTransformer
from ..core.probes import cosine_similarity, gradient_noise
from ..errors import ConfigError
from ..task import ProblemSampler, RewardModel, Task, eval_batch
from ..trainer import train

LATE_FRACTION = 0.2  # "late" accuracy: the mean of the evaluations in the last 20% of the steps


# --- training runs ----------------------------------------------------------------------------------


def train_config(config: dict, seed: int) -> TrainConfig:
    """The TrainConfig of a cell: its ``train`` overrides on top of the defaults, on the CPU."""
    return TrainConfig.from_dict({**config.get("train", {}), "seed": seed, "device": "cpu"})


def target_crossing(evals: list[dict], target: float | None) -> dict | None:
    """Where the accuracy curve first reaches ``target``: {"step", "samples", "wall_time"}, read by
    linear interpolation between the last evaluation below the target and the first at or above
    it (so steps to target are not multiples of eval_every: the grid's ticks would make seeds that
    cross anywhere between two evaluations read the same); the first evaluation itself when it is
    already at the target; None if the curve never reaches it. evals: history records with
    eval_accuracy, in step order."""
    if target is None:
        return None
    for before, after in zip([None, *evals], evals):
        if after["eval_accuracy"] < target:
            continue
        if before is None:
            return {key: float(after[key]) for key in ("step", "samples", "wall_time")}
        share = (target - before["eval_accuracy"]) / (after["eval_accuracy"] - before["eval_accuracy"])
        return {key: before[key] + share * (after[key] - before[key]) for key in ("step", "samples", "wall_time")}
    return None


def accuracy_auc(evals: list[dict]) -> float:
    """Area under the held-out accuracy curve (trapezoids over the steps) divided by the steps
    spanned: the curve's mean height, in accuracy units. Unlike late accuracy it rewards learning
    early; two runs that end level differ here by how soon they got there. evals as in
    ``target_crossing``; a single evaluation is its own mean."""
    steps = [record["step"] for record in evals]
    accuracies = [record["eval_accuracy"] for record in evals]
    if steps[-1] == steps[0]:
        return accuracies[0]
    area = sum((b - a) * (x + y) / 2 for a, b, x, y in zip(steps, steps[1:], accuracies, accuracies[1:]))
    return area / (steps[-1] - steps[0])


def run_metrics(history: list[dict], target: float | None = None) -> dict:
    """Scalar summaries of one run's history (per-step dicts, step 0 = before training).

    late_eval_accuracy: mean held-out accuracy over the evaluations in the last 20% of the steps
    (less noisy than the last one); best_eval_step: the step of the first evaluation at the best
    accuracy (on a finite prompt pool held-out accuracy can peak, then fall); eval_accuracy_auc: the accuracy curve's mean height
    (``accuracy_auc``); *_to_target: where the curve first reaches ``target``, interpolated between
    evaluations (``target_crossing``; None if never); eval_total_drop: the sum of all falls between
    consecutive evaluations, and eval_max_drawdown: the largest fall from the best accuracy so far
    (0 for a curve that never goes down; both measure oscillation in accuracy points);
    mean_clip_ratio: the share of clipped tokens over the steps (0 unless a batch is reused);
    late_heldout_explained_variance: how much of the rewards' variance a value baseline (critic or
    mc_value) explained on fresh batches, late in the run.
    """
    evals = [record for record in history if "eval_accuracy" in record]
    accuracies = [record["eval_accuracy"] for record in evals]
    last_step = history[-1]["step"]
    late = [record["eval_accuracy"] for record in evals if record["step"] > 0 and record["step"] >= (1 - LATE_FRACTION) * last_step]
    hit = target_crossing(evals, target)
    trained = [record for record in history if record["step"] > 0]
    running_best, drawdown = -1.0, 0.0
    for accuracy in accuracies:
        running_best = max(running_best, accuracy)
        drawdown = max(drawdown, running_best - accuracy)

    def over_steps(key: str, reduce) -> float | None:
        values = [record[key] for record in trained if key in record and record[key] is not None and math.isfinite(record[key])]
        return reduce(values) if values else None

    def late_mean(values: list[float]) -> float:
        return statistics.fmean(values[-max(1, len(values) // 5) :])

    return {
        "initial_eval_accuracy": accuracies[0],
        "final_eval_accuracy": accuracies[-1],
        "late_eval_accuracy": statistics.fmean(late) if late else None,
        "best_eval_accuracy": max(accuracies),
        "best_eval_step": evals[accuracies.index(max(accuracies))]["step"],
        "eval_accuracy_auc": accuracy_auc(evals),
        "steps_to_target": hit["step"] if hit else None,
        "samples_to_target": hit["samples"] if hit else None,
        "time_to_target_s": hit["wall_time"] if hit else None,
        "reached_target": None if target is None else float(hit is not None),
        "eval_total_drop": sum(max(0.0, a - b) for a, b in zip(accuracies, accuracies[1:])),
        "eval_max_drawdown": drawdown,
        "adv_abs_max": over_steps("adv_abs_max", max),
        "frac_reward_zero_std": over_steps("frac_reward_zero_std", statistics.fmean),
        "frac_all_right_or_wrong": over_steps("frac_all_right_or_wrong", statistics.fmean),
        "late_reward": statistics.fmean([r["reward"] for r in trained[-max(1, len(trained) // 5) :]]) if trained else None,
        # how much the logged train reward jumps from step to step (sampling noise plus real swings)
        "reward_step_noise": statistics.stdev([b["reward"] - a["reward"] for a, b in zip(trained, trained[1:])]) / math.sqrt(2)
        if len(trained) > 2
        else None,
        "final_kl": over_steps("kl", lambda values: values[-1]),
        "late_explained_variance": over_steps("explained_variance", late_mean),
        "late_heldout_explained_variance": over_steps("heldout_explained_variance", late_mean),
        "mean_clip_ratio": over_steps("clip_ratio", statistics.fmean),
        "policy_updates_per_step": over_steps("policy_updates", statistics.fmean),
        "steps_completed": float(last_step),
        "samples": float(history[-1].get("samples", 0)),
        "wall_time_s": history[-1]["wall_time"],
        "time_per_step_s": history[-1]["wall_time"] / last_step if last_step else None,
    }


def run_series(history: list[dict]) -> dict:
    """The trimmed history kept in result files: every evaluation (the per-step rewards are summarised by
    late_reward and reward_step_noise; no figure draws them, and they were most of a result file's size)."""
    evals = [record for record in history if "eval_accuracy" in record]
    return {  # 4 significant digits are plenty for curves (accuracies are multiples of 1/300)
        "eval_step": [record["step"] for record in evals],
        "eval_samples": [record["samples"] for record in evals],
        "eval_wall_time": [float(f"{record['wall_time']:.4g}") for record in evals],
        "eval_accuracy": [float(f"{record['eval_accuracy']:.4g}") for record in evals],
    }


def accuracy_by_difficulty(policy: TinyTransformer, task: Task) -> dict:
    """Greedy held-out accuracy on the 'hard' problems (task.is_hard: a carry) and on the others."""
    correct = greedy_correct(policy, eval_batch(task), task.max_answer_length)
    hard = eval_batch(task).hard
    return {"hard_eval_accuracy": float(correct[hard].float().mean()), "easy_eval_accuracy": float(correct[~hard].float().mean())}


def train_unit(config: dict, seed: int) -> dict:
    """One training run. config: {"train": TrainConfig overrides, "target": accuracy,
    "by_difficulty": bool, "advantage_probe": bool}."""
    train_cfg = train_config(config, seed)
    result = train(train_cfg)
    metrics = run_metrics(result.history, config.get("target"))
    if config.get("by_difficulty"):
        metrics.update(accuracy_by_difficulty(result.policy, Task.parse(train_cfg.task)))
    if config.get("advantage_probe"):
        metrics.update(advantage_noise_share(train_cfg, seed))
    if train_cfg.baseline == "critic":  # the parameters a critic adds beside the policy's: a shared trunk adds only its head
        critic = ValueModel(result.policy)
        added = critic.value_head if train_cfg.critic_trunk == "shared" else critic
        metrics["critic_parameters"] = float(sum(p.numel() for p in added.parameters()))
    metrics["policy_parameters"] = float(result.policy.num_parameters())
    metrics["failed"] = float(result.status == "failed")
    return {"seed": seed, "status": result.status, "message": result.message, "metrics": metrics, "series": run_series(result.history)}


# --- fixed-policy measurements ------------------------------------------------------------------------


@functools.lru_cache(maxsize=4)
def fixed_policy(name: str, half_trained_steps: int, regime_train: str = "{}") -> TinyTransformer:
    """'reference': the regime's reference policy (default.pt unless ``regime_train``, the regime's
    TrainConfig values as JSON, names another); 'half-trained': it after ``half_trained_steps`` steps
    of default GRPO in that regime (seed 0). Cached per process: every unit of a worker reuses it."""
    values = json.loads(regime_train)
    if name == "reference":
        return load_reference_policy(values.get("reference", "default"))
    if name != "half-trained":
        raise ConfigError("policy", name, "choose 'reference' or 'half-trained'")
    return train(TrainConfig.from_dict({**values, "steps": half_trained_steps, "seed": 0, "eval_every": 0, "probe_every": 0, "device": "cpu"})).policy


def cell_policy(config: dict) -> TinyTransformer:
    """The fixed policy a cell measures, in the cell's regime (catalog.in_regime)."""
    return fixed_policy(config["policy"], config["half_trained_steps"], regime_json(config))


def regime_json(config: dict) -> str:
    return json.dumps(config.get("regime_train", {}), sort_keys=True)


def regime_task(regime_train: str) -> Task:
    """The task a fixed-policy unit poses: the regime's (its TrainConfig values as JSON), else the default."""
    return Task.parse(json.loads(regime_train).get("task", TrainConfig().task))


def cell_task(config: dict) -> Task:
    """The task of a fixed-policy cell, in the cell's regime (catalog.in_regime)."""
    return regime_task(regime_json(config))


def batch_group_gradients(policy: TinyTransformer, groups: dict, advantages: torch.Tensor, group_size: int, max_len: int) -> torch.Tensor:
    """The GRPO loss's gradient for each group of a sampled batch under the given advantages
    [P, G] (one pass, no KL: the ratio is 1), [P, n_params] (core.loop.chunk_gradients)."""
    mask = groups["mask"]
    batch = Rollout(groups["prompts"], groups["answers"], mask, advantages.reshape(-1, 1) * mask)
    return chunk_gradients(policy, batch, TrainConfig(), group_size, max_len)


@functools.lru_cache(maxsize=4)
def reference_gradient(
    policy_name: str, half_trained_steps: int, prompts: int, group_size: int, regime_train: str = "{}"
) -> tuple[torch.Tensor, float]:
    """A large-batch estimate of the expected policy gradient at the fixed policy, with the
    leave-one-out baseline (RLOO: unbiased, so its mean is what none, mean, rloo and ema all
    estimate; z-scoring's is not). Returns (gradient [n_params], the cosine between its two halves,
    a check of how well it is estimated: 1 would be noise-free)."""
    policy = fixed_policy(policy_name, half_trained_steps, regime_train)
    task = regime_task(regime_train)
    generator = torch.Generator().manual_seed(99_991)
    groups = rollout(policy, ProblemSampler(task, 99_991).sample(prompts), RewardModel(), group_size, task.max_answer_length, 1.0, generator)
    advantages = compute_advantages(groups["rewards"], "rloo")
    halves = batch_group_gradients(policy, groups, advantages, prompts * group_size // 2, task.max_answer_length)
    return halves.mean(dim=0), cosine_similarity(halves[0], halves[1])


def variance_unit(config: dict, seed: int) -> dict:
    """Policy-gradient noise of each baseline at a fixed policy and group size G.

    config: {"policy", "half_trained_steps", "group_size", "prompts", "batches", "ema_warmup",
    "baselines", "reference_prompts", "reference_group_size"}. Every batch (P prompts x G answers)
    is sampled once and every baseline's advantages are computed from the same rewards, so the
    baselines are compared on identical samples. Metrics per baseline b (keys 'metric.b'):

    - cos_step: mean cosine between one batch's gradient and the large-batch reference gradient
    - cos_expected: cosine between the baseline's mean gradient (over all batches) and the
      reference: below 1 when the baseline changes the expected direction (z-scoring does)
    - net_snr: ||E g||^2 / trace Var(g) of a batch of P prompts, from the pooled per-group gradients
      (probes.gradient_noise), with the noise's share removed from ||mean||^2: pure noise reads 0.
      The trainer's ``grad_snr`` keeps that share (||g_hat||^2 / Var): pure noise reads 1, and on
      average grad_snr = net_snr + 1 (probes.py)
    - net_snr_per_1k_responses: net_snr / (P * G) * 1000, for comparing G at equal samples
    - grad_var: trace Var of a batch gradient (raw, scale-dependent: z-scored advantages are larger)
    """
    policy = cell_policy(config)
    task, G, P = cell_task(config), config["group_size"], config["prompts"]
    reference, reference_split_cosine = reference_gradient(
        config["policy"], config["half_trained_steps"], config["reference_prompts"], config["reference_group_size"], regime_json(config)
    )
    unit_seed = seed * 1000 + G
    problems, reward_model = ProblemSampler(task, unit_seed), RewardModel()
    generator = torch.Generator().manual_seed(unit_seed)
    ema = EMABaseline(TrainConfig().ema_decay)
    for _ in range(config["ema_warmup"]):  # the trainer's EMA has seen earlier steps: warm it on earlier batches
        ema.update(rollout(policy, problems.sample(P), reward_model, G, task.max_answer_length, 1.0, generator)["rewards"])
    gradients: dict[str, list[torch.Tensor]] = {baseline: [] for baseline in config["baselines"]}
    rewards = []
    for _ in range(config["batches"]):
        groups = rollout(policy, problems.sample(P), reward_model, G, task.max_answer_length, 1.0, generator)
        rewards.append(groups["rewards"])
        for baseline in config["baselines"]:
            advantages = compute_advantages(groups["rewards"], baseline, ema_value=ema.current(groups["rewards"]))
            gradients[baseline].append(batch_group_gradients(policy, groups, advantages, G, task.max_answer_length))
        ema.update(groups["rewards"])
    all_rewards = torch.cat(rewards)
    # if the two halves of the reference agree with cosine c, the whole one agrees with the true gradient
    # with cosine sqrt(r / (1 + r)), r = 2c / (1 - c) its signal-to-noise ratio (independent noise in each half)
    ratio = 2 * reference_split_cosine / (1 - reference_split_cosine) if 0 < reference_split_cosine < 1 else 0.0
    metrics: dict = {
        "reward": float(all_rewards.mean()),
        "frac_reward_zero_std": float((all_rewards.std(dim=1) == 0).float().mean()),
        "reference_split_cosine": reference_split_cosine,
        "reference_cos_to_truth": math.sqrt(ratio / (1 + ratio)),
    }
    for baseline, per_batch in gradients.items():
        pooled = torch.cat(per_batch)  # [batches * P, n_params]
        noise = gradient_noise(pooled)
        per_group_variance = noise["grad_var"] * len(pooled)
        signal = max(noise["grad_mean_norm"] ** 2 - noise["grad_var"], 0.0)
        snr = signal / (per_group_variance / P) if per_group_variance > 0 else 0.0
        metrics[f"cos_step.{baseline}"] = statistics.fmean(cosine_similarity(batch.mean(dim=0), reference) for batch in per_batch)
        metrics[f"cos_expected.{baseline}"] = cosine_similarity(pooled.mean(dim=0), reference)
        metrics[f"net_snr.{baseline}"] = snr
        metrics[f"net_snr_per_1k_responses.{baseline}"] = snr / (P * G) * 1000
        metrics[f"grad_var.{baseline}"] = per_group_variance / P
    return {"seed": seed, "status": "finished", "message": "", "metrics": metrics}


def difficulty_weights_unit(config: dict, seed: int) -> dict:
    """How much each group pulls on the gradient, by the number k of right answers in it.

    config: {"policy", "half_trained_steps", "group_size", "prompts", "batches", "baselines"}.
    Metrics: frac_groups.k=K (how common each k is); grad_norm.b.k=K (mean norm of a group's
    gradient under baseline b, only groups with 0 < k < G carry any); weight_vs_middle.b.k=K
    (that norm divided by the norm of groups with k nearest G/2: how much an extreme group counts
    relative to a balanced one); hard_vs_easy.b (mean group-gradient norm of 'hard' problems over
    'easy' ones).
    """
    policy = cell_policy(config)
    task, G, P = cell_task(config), config["group_size"], config["prompts"]
    problems, reward_model = ProblemSampler(task, seed + 5000), RewardModel()
    generator = torch.Generator().manual_seed(seed + 5000)
    counts, hard, norms = [], [], {baseline: [] for baseline in config["baselines"]}
    for _ in range(config["batches"]):
        groups = rollout(policy, problems.sample(P), reward_model, G, task.max_answer_length, 1.0, generator)
        counts.append(groups["correct"].sum(dim=1).long())
        hard.append(groups["hard"])
        for baseline in config["baselines"]:
            advantages = compute_advantages(groups["rewards"], baseline)
            norms[baseline].append(batch_group_gradients(policy, groups, advantages, G, task.max_answer_length).norm(dim=1))
    counts_all, hard_all = torch.cat(counts), torch.cat(hard)
    metrics: dict = {f"frac_groups.k={k}": float((counts_all == k).float().mean()) for k in range(G + 1)}
    for baseline, per_batch in norms.items():
        norm = torch.cat(per_batch)
        by_k = {k: float(norm[counts_all == k].mean()) if (counts_all == k).any() else None for k in range(1, G)}
        present = [k for k, value in by_k.items() if value is not None]
        middle = min(present, key=lambda k: abs(k - G / 2)) if present else None
        for k, value in by_k.items():
            metrics[f"grad_norm.{baseline}.k={k}"] = value
            metrics[f"weight_vs_middle.{baseline}.k={k}"] = value / by_k[middle] if value is not None and by_k[middle] else None
        mixed = (counts_all > 0) & (counts_all < G)
        hard_norm, easy_norm = norm[mixed & hard_all], norm[mixed & ~hard_all]
        metrics[f"hard_vs_easy.{baseline}"] = float(hard_norm.mean() / easy_norm.mean()) if len(hard_norm) and len(easy_norm) else None
    return {"seed": seed, "status": "finished", "message": "", "metrics": metrics}


def advantage_noise_share(config: TrainConfig, seed: int, prompts: int = 64) -> dict:
    """At the starting policy, the share of the batch's total |advantage| that lands on groups whose
    exact-match rewards are all equal (no real signal in them: with a noisy reward model any spread
    there is noise, with partial credit it is partial credit). Also the largest |advantage|."""
    policy, task = load_reference_policy(config.reference), Task.parse(config.task)
    reward_model = RewardModel.for_config(config, seed + 77)
    generator = torch.Generator().manual_seed(seed + 77)
    groups = rollout(policy, ProblemSampler(task, seed + 77).sample(prompts), reward_model, config.group_size, task.max_answer_length, 1.0, generator)
    advantages = compute_advantages(groups["rewards"], config.baseline, config.std_eps, config.std_scope, config.std_ddof, config.eps_mode)
    no_signal = groups["correct"].std(dim=1) == 0
    total = float(advantages.abs().sum())
    finite = math.isfinite(total)
    return {
        "probe_adv_abs_max": float(advantages.abs().max()) if finite else None,
        "probe_no_signal_share": float(advantages[no_signal].abs().sum()) / total if finite and total > 0 else None,
        "probe_frac_no_signal_groups": float(no_signal.float().mean()),
    }


# --- batch shape: time and memory -----------------------------------------------------------------------


class SavedActivationMeter:
    """Bytes of tensors autograd keeps for the backward pass, live and at their peak.

    Used as ``with meter: ...``; counts through ``saved_tensors_hooks``, and a tensor's bytes are
    released when autograd drops it after backward. This is the memory that grows with the number
    of responses in a backward pass, which micro-batching bounds.
    """

    def __init__(self) -> None:
        self.live, self.peak = 0, 0
        self._hooks = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)

    def _release(self, size: int) -> None:
        self.live -= size

    def _pack(self, tensor: torch.Tensor):
        size = tensor.numel() * tensor.element_size()
        self.live += size
        self.peak = max(self.peak, self.live)
        holder = _Holder((tensor,))  # autograd keeps this until backward; when it goes, so do the bytes
        weakref.finalize(holder, self._release, size)
        return holder

    @staticmethod
    def _unpack(holder):
        return holder[0]

    def __enter__(self) -> SavedActivationMeter:
        self._hooks.__enter__()
        return self

    def __exit__(self, *exc: object) -> bool | None:
        return self._hooks.__exit__(*exc)


class _Holder(list):
    """A list that can be weakly referenced (a plain list cannot)."""


def blowup_unit(config: dict, seed: int) -> dict:
    """Time per step and peak memory of a short run at one batch shape. Meant for a fresh process
    (the process's peak resident memory is only meaningful there).

    config: {"train": overrides (prompts_per_step, group_size, micro_batch_size, steps >= 3)}.
    time_per_step_s: median wall time of the steps without an evaluation; peak_rss_mb: peak
    resident memory of the whole process (torch itself included); saved_activations_mb: peak bytes
    autograd kept for backward; first_grad_norm: of step 1 (before clipping), to check that
    micro-batching leaves the gradient unchanged.
    """
    try:
        import resource  # Unix only: peak resident memory is left out elsewhere
    except ImportError:
        resource = None

    def peak_rss_mb() -> float | None:  # ru_maxrss is in kB on Linux, in bytes on macOS
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / (2**20 if sys.platform == "darwin" else 1024) if resource else None

    train_cfg = train_config(config, seed)
    rss_before = peak_rss_mb()
    with SavedActivationMeter() as meter:
        history = train(train_cfg).history
    step_times = [b["wall_time"] - a["wall_time"] for a, b in zip(history, history[1:]) if "eval_accuracy" not in b]
    metrics = {
        "responses_per_step": float(train_cfg.samples_per_step),
        "time_per_step_s": statistics.median(step_times),
        "peak_rss_mb": peak_rss_mb(),
        "rss_before_mb": rss_before,
        "saved_activations_mb": meter.peak / 2**20,
        "first_grad_norm": history[1]["grad_norm"],
    }
    return {"seed": seed, "status": "finished", "message": "", "metrics": metrics}


# --- the critic's fit at a fixed policy -----------------------------------------------------------------


@dataclass(frozen=True)
class CriticFitSamples:
    """Every response a critic-fit unit reads, in the order its generator drew them: targets (the
    held-out problems, K responses each: rollout's dict), oracle_rewards [prompts, M] (M more
    responses to each, for the oracle and the group means) and batches (one rollout dict per
    training batch, one response per prompt)."""

    targets: dict
    oracle_rewards: torch.Tensor
    batches: tuple[dict, ...]


@functools.lru_cache(maxsize=4)
def critic_fit_samples(
    policy_name: str,
    half_trained_steps: int,
    regime_train: str,
    seed: int,
    batches: int,
    prompts_per_batch: int,
    targets_per_prompt: int,
    oracle_samples: int,
) -> CriticFitSamples:
    """The responses of a critic-fit unit, which depend on the fixed policy and the seed but not on
    the critic: every cell of one policy and seed (the critic's lr, its value clip, fresh or fixed
    data) reads the same ones, so a worker samples them once (about a quarter of a unit's time)."""
    policy, task = fixed_policy(policy_name, half_trained_steps, regime_train), regime_task(regime_train)
    max_len, reward_model = task.max_answer_length, RewardModel()
    generator = torch.Generator().manual_seed(seed + 31_337)  # every response below, held out and trained on, in this order
    held_out = eval_batch(task)
    targets = rollout(policy, held_out, reward_model, targets_per_prompt, max_len, 1.0, generator)
    # [prompts, M], independent of the target responses
    oracle = rollout(policy, held_out, reward_model, oracle_samples, max_len, 1.0, generator)["rewards"]
    problems = ProblemSampler(task, seed + 4242)
    training = tuple(rollout(policy, problems.sample(prompts_per_batch), reward_model, 1, max_len, 1.0, generator) for _ in range(batches))
    return CriticFitSamples(targets, oracle, training)


@functools.lru_cache(maxsize=4)
def critic_fit_mc_values(sample_key: tuple) -> torch.Tensor:
    """Monte-Carlo V(s_t) of every held-out target response of ``critic_fit_samples(*sample_key)`` (its arguments, in
    order) at every answer token, [responses, La]: the mean reward of ``oracle_samples`` continuations of
    the prompt plus the answer's first t tokens by the fixed policy at temperature 1
    (``mc_prefix_values``; equal states once). Like the samples, it depends on the policy and the
    seed, not on the critic: a worker computes it once for all of a policy's cells (about 20 s at
    128 continuations of 1200 responses on one CPU thread)."""
    policy_name, half_trained_steps, regime_train, seed, *_, oracle_samples = sample_key
    targets = critic_fit_samples(*sample_key).targets
    policy, reward_model = fixed_policy(policy_name, half_trained_steps, regime_train), RewardModel()
    generator = torch.Generator().manual_seed(seed + 27_182)  # apart from the samples' generator: they stay as they were
    values, _ = mc_prefix_values(policy, targets["prompts"], targets["answers"], targets["mask"], reward_model, oracle_samples, 1.0, generator)
    return values


def critic_fit_unit(config: dict, seed: int) -> dict:
    """How well PPO's critic learns V at a fixed policy, and what a group of G samples gives instead.

    config: {"policy", "half_trained_steps", "batches", "prompts_per_batch", "data" ('fresh': new
    rollouts every batch, as in a PPO run; 'fixed': the same rollouts every batch), "critic"
    (TrainConfig overrides of critic_lr, critic_epochs, critic_minibatches, value_clip, gae_lambda,
    and the variants' critic_lambda, critic_trunk, critic_warmup_steps), "targets_per_prompt",
    "oracle_samples", "group_sizes"}.

    Held out: the task's eval problems (never trained on), ``targets_per_prompt`` fresh responses
    each. A value estimate of a prompt is scored by its explained variance (EV) against those
    responses' rewards: the critic's V(prompt); the mean of G other samples of the same prompt
    (GRPO's baseline, G from ``group_sizes``). Token EV scores the critic's V(s_t) at every answer
    token against the same response's reward (the Monte-Carlo return, gamma 1). Two ceilings, with
    M = ``oracle_samples`` (128 in the full grid, 32 in ``--fast``):

    - oracle_ev, the prompt-level ceiling (beside critic_ev_prompt): the mean reward of M fresh
      responses to each prompt, as V(prompt), scored as the critic's V(prompt) is. No function of
      the prompt alone does better in expectation;
    - oracle_ev_token, the token-level ceiling (beside critic_ev_token): Monte-Carlo V(s_t), the
      mean reward of M continuations of each target response's prompt + answer prefix
      (``critic_fit_mc_values``), scored on the same tokens against the same targets as the
      critic's token EV. The true V(s_t) has the least expected squared error to those targets of
      any function of the state, so no critic beats it in expectation, and later tokens know more
      than the prompt: it sits above oracle_ev.

    Each is an estimate from M samples, whose noise (independent of the targets) lowers it by
    E[Var(reward | s)] / (M Var(targets)): at most 0.25 / (M Var(targets)) for rewards in [0, 1],
    about 0.01 at M = 128 and a reward std of 0.46, so either is a ceiling up to about that.

    The critic variants (core/critic.py) train as a run would: ``critic_lambda`` sets the returns'
    lambda; ``critic_warmup_steps`` = W fits the critic first to W batches of the starting
    (reference) policy's rollouts, the first W of its fresh stream, before the cell's own (VAPO's
    value pretraining: on the half-trained policy it asks whether fitting the start carries over);
    ``critic_trunk='shared'`` trains a value head on (a copy of) the fixed policy's trunk at the
    policy's lr and on its schedule (inner_epochs x policy_minibatches updates a batch), as a
    shared trunk trains in a run. The fixed policy has no loss here, so what a shared trunk's
    policy loss does to V (the tug of war of the two losses) is not measured, and vf_coef (a
    constant scale of the value loss, which Adam undoes) changes nothing but the gradient clip.

    Metrics: oracle_ev, oracle_ev_token, group_ev.G=g, critic_ev_prompt / critic_ev_token (after all updates),
    best_critic_ev_prompt, train_ev_token (on the last training batch, after its updates: the gap
    to critic_ev_token is over-fitting), updates_to_beat.G=g (the first measured update count at
    which the critic's prompt EV reaches the group's; None if never), critic_parameters,
    critic_updates (warm-up included). Series: updates, ev_prompt, ev_token, train_ev_token at each
    measurement (the first after the warm-up, if any).
    """
    policy = cell_policy(config)
    settings = TrainConfig.from_dict({**config["critic"], "baseline": "critic", "group_size": 1})
    if settings.critic_warmup_steps > config["batches"]:
        raise ConfigError(
            "critic_warmup_steps", settings.critic_warmup_steps, f"must be at most the cell's batches ({config['batches']}) in critic-fit"
        )
    sample_key = (
        config["policy"], config["half_trained_steps"], regime_json(config), seed,
        config["batches"], config["prompts_per_batch"], config["targets_per_prompt"], config["oracle_samples"],
    )  # fmt: skip
    samples = critic_fit_samples(*sample_key)
    targets, extra = samples.targets, samples.oracle_rewards
    target_prompts, target_answers, target_mask = targets["prompts"], targets["answers"], targets["mask"]
    target_rewards = targets["rewards"].reshape(-1)  # [prompts * K]
    target_returns = target_rewards[:, None].expand_as(target_mask)  # the Monte-Carlo return at every answer token (gamma 1)
    K = config["targets_per_prompt"]

    def prompt_ev(estimate: torch.Tensor) -> float:  # estimate [prompts] -> EV against the K targets of each prompt
        return explained_variance(estimate.repeat_interleave(K), target_rewards)

    metrics: dict = {
        "oracle_ev": prompt_ev(extra.mean(dim=1)),
        "oracle_ev_token": explained_variance(critic_fit_mc_values(sample_key), target_returns, target_mask),
        "reward": float(target_rewards.mean()),
    }
    group_ev = {G: prompt_ev(extra[:, :G].mean(dim=1)) for G in config["group_sizes"] if G <= config["oracle_samples"]}
    metrics.update({f"group_ev.G={G}": value for G, value in group_ev.items()})

    torch.manual_seed(seed)
    value_model = ValueModel(policy)  # a copy also for a shared trunk: the fixed policy (cached, shared by cells) must not move
    shared = settings.critic_trunk == "shared"
    optimizer = torch.optim.Adam(value_model.parameters(), lr=settings.lr if shared else settings.critic_lr)
    shuffle = torch.Generator().manual_seed(seed + 1)
    checkpoints = {round(2 ** (k / 2)) for k in range(2 * int(math.log2(config["batches"])) + 1)} | {config["batches"]}
    series: dict[str, list] = {"updates": [], "ev_prompt": [], "ev_token": [], "train_ev_token": []}
    updates, train_ev = 0, None

    def measure() -> None:
        with torch.no_grad():
            values = answer_values(value_model, target_prompts, target_answers)
        series["updates"].append(updates)
        series["ev_prompt"].append(explained_variance(values[:, 0], target_rewards))
        # token EV: against the Monte-Carlo return (gamma 1: the response's reward at every one of its tokens)
        series["ev_token"].append(explained_variance(values, target_returns, target_mask))
        series["train_ev_token"].append(train_ev)

    def fit(batch: dict) -> int:  # one batch's critic updates, as in a PPO step; returns how many
        rewards = batch["rewards"].reshape(-1)  # one response per prompt: [prompts_per_batch]
        with torch.no_grad():
            old_values = answer_values(value_model, batch["prompts"], batch["answers"])
        _, returns = advantages_and_returns(rewards, old_values, batch["mask"], settings)
        return update_critic(value_model, optimizer, batch["prompts"], batch["answers"], batch["mask"], returns, old_values, settings, shuffle)[
            "critic_updates"
        ]

    warmup = critic_fit_samples("reference", *sample_key[1:]).batches[: settings.critic_warmup_steps] if settings.critic_warmup_steps else ()
    for batch in warmup:  # VAPO's value pretraining, on the starting policy's rollouts
        updates += fit(batch)
    measure()
    for batch_number in range(1, config["batches"] + 1):
        batch = samples.batches[batch_number - 1 if config["data"] == "fresh" else 0]  # 'fixed': the first batch, every time
        prompts, answers, mask = batch["prompts"], batch["answers"], batch["mask"]
        rewards = batch["rewards"].reshape(-1)
        updates += fit(batch)
        if batch_number in checkpoints:
            with torch.no_grad():
                values = answer_values(value_model, prompts, answers)
                train_ev = explained_variance(values, rewards[:, None].expand_as(values), mask)
            measure()
    metrics.update(
        critic_ev_prompt=series["ev_prompt"][-1],
        critic_ev_token=series["ev_token"][-1],
        train_ev_token=train_ev,
        best_critic_ev_prompt=max(series["ev_prompt"]),
        critic_updates=float(updates),
        critic_parameters=float(value_model.num_trainable_parameters()),
    )
    for G, value in group_ev.items():
        metrics[f"updates_to_beat.G={G}"] = next((float(u) for u, ev in zip(series["updates"], series["ev_prompt"]) if ev >= value), None)
    return {"seed": seed, "status": "finished", "message": "", "metrics": metrics, "series": series}


UNITS = {
    "train": train_unit,
    "variance": variance_unit,
    "difficulty_weights": difficulty_weights_unit,
    "blowup": blowup_unit,
    "critic_fit": critic_fit_unit,
}
