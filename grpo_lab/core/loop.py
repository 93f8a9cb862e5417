"""The GRPO training loop, read in one sitting. Its knobs are TrainConfig's (config.py).

One step (``train_step``), P prompts with G answers each, B = P*G responses in contiguous groups:

1. sample   P problems, G answers to each from the current policy                  -> answers [B, La]
            (DAPO's dynamic sampling: keep the groups whose rewards differ and refill from more draws)
2. score    each answer with the (possibly distorted) reward model                 -> rewards [P, G]
3. advantages  each response's reward against its group (advantages.py)           -> [P, G], one per response
            or, with a value baseline, GAE per token on V(s_t): PPO's learned critic (critic.py) or
            VinePPO's Monte-Carlo rollouts (mc_value.py)                            -> [B, La]
4. loss and update  ``inner_epochs`` passes of ``policy_minibatches`` shuffled minibatches of whole
            groups (CleanRL's update_epochs x num_minibatches), each the clipped-ratio loss plus
            ``kl_coef`` x k3 KL (losses.py), one Adam step per minibatch; then the critic fits the returns
            (a value head on the policy's trunk, ``critic_trunk='shared'``, trains in the policy's steps instead)
5. metrics  TRL's names where TRL has one; greedy evaluation and the gradient-noise probe at their intervals

``run`` repeats the step and reports each step's metrics. Nothing here reads files or checks
input: ``grpo_lab.train`` checks the config and loads the reference first (grpo_lab/trainer.py), and
hands in the problems (``.sample(P)`` -> prompts [P, Lp], hard [P]), the reward model
(``.score(prompts, answers)`` -> rewards [N], correct [N]) and the held-out problems.
"""

from __future__ import annotations

import copy
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, fields

import torch

from .advantages import VALUE_BASELINES, EMABaseline, compute_advantages, equal_groups
from .config import TrainConfig
from .critic import (
    ValueModel,
    advantages_and_returns,
    answer_values,
    backward_value_loss,
    explained_variance,
    gae,
    new_value_model,
    pretrain_critic,
    update_critic,
    whiten,
)
from .losses import aggregate, policy_loss_terms
from .mc_value import mc_prefix_values
from .model import TinyTransformer, decode, sample, token_logprobs
from .probes import gradient_noise, per_share_gradients, probe_chunks


class NonFiniteError(RuntimeError):
    """Raised inside the loop when advantages, losses or gradients stop being finite numbers."""


@dataclass
class Rollout:
    """The batch a policy update trains on. prompts [B, Lp]; answers, mask, token_advantages [B, La];
    old_logprobs (the sampling policy's; None when the batch is trained on once: the ratio is then
    exactly 1) and ref_logprobs (the reference's; None without the KL term), [B, La] or None;
    returns and old_values (the critic's targets and its values at sampling, [B, La]) only when a
    value head on the policy's trunk trains with it (critic_trunk='shared'), else None."""

    prompts: torch.Tensor
    answers: torch.Tensor
    mask: torch.Tensor
    token_advantages: torch.Tensor
    old_logprobs: torch.Tensor | None = None
    ref_logprobs: torch.Tensor | None = None
    returns: torch.Tensor | None = None
    old_values: torch.Tensor | None = None

    def __len__(self) -> int:
        return len(self.prompts)

    def rows(self, index: torch.Tensor | slice) -> Rollout:
        """The same rollout restricted to some rows (a slice, or a tensor of row indices)."""
        values = {item.name: getattr(self, item.name) for item in fields(self)}
        return Rollout(**{name: None if value is None else value[index] for name, value in values.items()})


def rollout(policy: TinyTransformer, problems, reward_model, group_size: int, max_len: int, temperature: float, generator, chunk_size=None) -> dict:
    """Sample G answers to each of the P ``problems`` (prompts [P, Lp], hard [P]) and score them;
    ``chunk_size``: decode that many responses at a time (``model.sample``: the same answers).

    Returns {"prompts" [B, Lp], "answers", "mask" [B, max_len] (groups in contiguous rows, on the
    prompts' device), "rewards" [P, G], "correct" [P, G] (bool), "tied" [P] (all G rewards equal),
    "unanimous" [P] (all G answers right, or all wrong: DAPO's filter drops these), "hard" [P]}.
    Under exact rewards a group is tied exactly when it is unanimous; under noisy or partial rewards
    a unanimous group's rewards still differ."""
    prompts = problems.prompts.repeat_interleave(group_size, dim=0)
    answers, mask = sample(policy, prompts, max_len, temperature, generator, chunk_size)
    rewards, correct = reward_model.score(prompts, answers)
    rewards, correct = rewards.view(-1, group_size), correct.view(-1, group_size)
    groups = {"prompts": prompts, "answers": answers, "mask": mask, "rewards": rewards, "correct": correct}
    return {**groups, "tied": equal_groups(rewards), "unanimous": equal_groups(correct), "hard": problems.hard}


@dataclass
class RunState:
    """What a run carries from one step to the next (built once by ``start``)."""

    policy: TinyTransformer  # the one being trained
    reference: TinyTransformer  # frozen: where the policy starts and the KL's anchor
    parameters: list[torch.Tensor]  # the policy's (and, with critic_trunk='shared', its value head's)
    optimizer: torch.optim.Optimizer
    reward_model: object  # .score(prompts, answers) -> (rewards [N], correct [N])
    ema: EMABaseline  # the running reward average of baseline='ema'
    sampling_generator: torch.Generator
    value_model: ValueModel | None  # the critic (baseline='critic' only)
    value_optimizer: torch.optim.Optimizer | None  # a separate critic's (a shared trunk's head is in ``optimizer``)
    critic_shuffle: torch.Generator  # minibatch order of the critic's updates
    policy_shuffle: torch.Generator  # minibatch order of the policy's updates (policy_minibatches > 1)
    max_len: int  # La, the longest possible answer
    device: torch.device


def start(config: TrainConfig, reference: TinyTransformer, reward_model, max_len: int, device: torch.device) -> RunState:
    """A run's state at step 0: a trainable copy of the frozen reference, its optimiser, the critic
    if any, and the seeded generators. The critic's value head is drawn from torch's global
    generator, which ``grpo_lab.train`` seeds with ``config.seed`` before it loads the reference.
    A shared trunk's value head joins the policy's optimiser (one optimiser, as CleanRL's agent)."""
    reference = reference.to(device).eval().requires_grad_(False)
    policy = copy.deepcopy(reference).train().requires_grad_(True)
    value_model = new_value_model(config, reference, policy).to(device) if config.baseline == "critic" else None
    shared = value_model is not None and config.critic_trunk == "shared"
    parameters = list(policy.parameters()) + (list(value_model.value_head.parameters()) if shared else [])
    fused = device.type in ("cpu", "cuda")  # one kernel for all parameters: ~5x cheaper than the loop on a CPU
    return RunState(
        policy=policy,
        reference=reference,
        parameters=parameters,
        optimizer=torch.optim.Adam(parameters, lr=config.lr, fused=fused),
        reward_model=reward_model,
        ema=EMABaseline(config.ema_decay),
        sampling_generator=torch.Generator().manual_seed(config.seed),
        value_model=value_model,
        value_optimizer=torch.optim.Adam(value_model.parameters(), lr=config.critic_lr, fused=fused) if value_model and not shared else None,
        critic_shuffle=torch.Generator().manual_seed(config.seed + 1),
        policy_shuffle=torch.Generator().manual_seed(config.seed + 2),
        max_len=max_len,
        device=device,
    )


def run(
    config: TrainConfig,
    state: RunState,
    problems,
    held_out,
    on_step: Callable[[dict], None] | None = None,
    stop: threading.Event | None = None,
    on_batch: Callable[[dict], None] | None = None,
) -> tuple[list[dict], str, str]:
    """``config.steps`` training steps. Returns (history: one metrics dict per step, step 0 being the
    greedy accuracy on ``held_out`` before any update, after the critic's warm-up if any, whose
    responses its ``samples`` counts; status 'finished', 'stopped' or 'failed';
    a message saying why it stopped). ``on_step(record)`` after every step, ``stop`` checked before
    every step, ``on_batch({"step", "rewards" [P, G], "advantages" [P, G]})`` after every step."""
    history, status, message = [], "finished", ""
    started = time.perf_counter()

    def emit(record: dict) -> None:
        record["wall_time"] = time.perf_counter() - started
        history.append(record)
        if on_step is not None:
            on_step(record)

    samples = 0
    if config.critic_warmup_steps:  # VAPO: the critic first fits the starting policy's responses (the policy does not move)
        samples = pretrain_critic(
            state.value_model, state.value_optimizer, lambda: sample_and_score(config, state, problems)[0], config, state.critic_shuffle
        )
    emit({"step": 0, "samples": samples, "eval_accuracy": greedy_accuracy(state.policy, held_out, state.max_len)})
    for step in range(1, config.steps + 1):
        if stop is not None and stop.is_set():
            status, message = "stopped", f"stopped by the user after {step - 1} of {config.steps} steps"
            break
        try:
            record, batch = train_step(config, state, problems, step)
        except NonFiniteError as error:
            status, message = "failed", f"stopped at step {step}: {error}"
            break
        samples += record["responses_sampled"] + record.get("value_rollouts", 0)  # mc_value's rollouts are generated responses too
        record["samples"] = samples
        if on_batch is not None:
            on_batch({"step": step, **batch})
        if (config.eval_every and step % config.eval_every == 0) or step == config.steps:
            record["eval_accuracy"] = greedy_accuracy(state.policy, held_out, state.max_len)
        emit(record)
    state.policy.eval()
    return history, status, message


def train_step(config: TrainConfig, state: RunState, problems, step: int) -> tuple[dict, dict]:
    """One GRPO step (the module docstring's stages). Returns (its metrics, its raw batch
    {"rewards" [P, G], "advantages" [P, G]} on the CPU, for ``run``'s ``on_batch``)."""
    G = config.group_size
    # 1-2. sample P prompts x G answers from the current policy, and score them
    groups, sampled = sample_and_score(config, state, problems)
    record = {"step": step, **sampling_metrics(sampled, G)}
    rewards = groups["rewards"]
    P = rewards.shape[0]  # the prompts trained on (dynamic sampling may find fewer than prompts_per_step)
    if P == 0:  # dynamic sampling found no group with right and wrong answers in any draw: nothing to learn from
        record.update(adv_abs_max=0.0, groups_used=0, loss=0.0, grad_norm=0.0, clip_ratio=0.0)
        return record, {"rewards": rewards.cpu(), "advantages": rewards.cpu()}
    longest = int(groups["mask"].sum(dim=1).max())  # columns after every answer's end carry nothing: drop them
    prompts, answers, mask = groups["prompts"], groups["answers"][:, :longest], groups["mask"][:, :longest]
    with torch.no_grad():
        # with one update on the batch the sampling policy *is* the current one: the ratio is
        # exactly 1 and old log-probs come free from the loss's own forward (as TRL does)
        reused = config.inner_epochs * config.policy_minibatches > 1
        old_logprobs = token_logprobs(state.policy, prompts, answers, temperature=config.temperature) if reused else None
        # the reference is only consulted when the KL term is on (TRL logs kl only when beta > 0)
        ref_logprobs = token_logprobs(state.reference, prompts, answers, temperature=config.temperature) if config.kl_coef > 0 else None

    # 3. advantages: GAE on the values of answer prefixes, or each response's reward against its group's
    keep_groups = ~groups["unanimous"] if config.skip_zero_std_groups and G > 1 else torch.ones(P, dtype=torch.bool)  # DAPO's filter
    if config.baseline in VALUE_BASELINES:
        token_advantages, values, returns = value_advantages(config, state, prompts, answers, mask, rewards, record)
    else:
        advantages = response_advantages(config, state.ema, rewards, keep_groups, record)
        token_advantages = advantages.reshape(-1, 1).to(state.device) * mask  # every token of a response shares its advantage
    record["adv_abs_max"] = float((token_advantages.abs() * mask).max())
    per_response = (token_advantages * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)
    raw_batch = {"rewards": rewards.detach().cpu(), "advantages": per_response.detach().cpu().view(P, G)}

    # 4. loss and update, on the kept groups' rows: the gradient's noise first (at its interval), then
    # the policy's passes, then the critic fits this batch's returns
    record["groups_used"] = int(keep_groups.sum())
    index = keep_groups.repeat_interleave(G).to(state.device).nonzero().squeeze(1)
    shared = config.baseline == "critic" and config.critic_trunk == "shared"  # the value head trains in the policy's updates
    value_targets = (returns, values) if shared else (None, None)
    batch = Rollout(prompts, answers, mask, token_advantages, old_logprobs, ref_logprobs, *value_targets).rows(index)
    if len(batch) == 0:  # every group was filtered out: nothing to learn from this batch
        record.update(loss=0.0, grad_norm=0.0, clip_ratio=0.0)
        return record, raw_batch
    if config.probe_every and step % config.probe_every == 0 and len(batch) // G >= 2:
        record.update(probe_gradient_noise(state, batch, config))
    record.update(update_policy(config, state, batch, record["adv_abs_max"]))
    if state.value_optimizer is not None:  # a separate critic
        record.update(update_critic(state.value_model, state.value_optimizer, prompts, answers, mask, returns, values, config, state.critic_shuffle))
    # 5. metrics: ``record`` holds this step's (``run`` adds samples, eval_accuracy and wall_time)
    return record, raw_batch


# a rollout's entries with one row per group, [P, ...]; the others have one per response
PER_GROUP_KEYS = ("rewards", "correct", "tied", "unanimous", "hard")


def sample_and_score(config: TrainConfig, state: RunState, problems) -> tuple[dict, dict]:
    """(the groups to train on, everything sampled this step), as ``rollout`` returns them. Without
    dynamic sampling the two are one batch. With it (DAPO), only groups with right and wrong answers
    (not unanimous) are kept, and further batches of P prompts are drawn (at most
    ``dynamic_sampling_batches`` more) until P such groups are found; the batch is cut to P groups
    (fewer if the draws ran out).
    With gradient accumulation the answers are decoded ``micro_batch_size`` at a time too, so that
    sampling's memory is bounded as the backward pass's is (the same answers as the whole batch's)."""
    P, G = config.prompts_per_step, config.group_size

    def draw() -> dict:
        drawn = problems.sample(P)
        drawn.prompts = drawn.prompts.to(state.device)
        return rollout(
            state.policy, drawn, state.reward_model, G, state.max_len, config.temperature, state.sampling_generator, config.micro_batch_size or None
        )

    if not config.dynamic_sampling_batches:
        groups = draw()
        return groups, groups
    kept, sampled = [], []
    for _ in range(1 + config.dynamic_sampling_batches):
        groups = draw()
        sampled.append(groups)
        spread = ~groups["unanimous"]
        rows = spread.repeat_interleave(G)
        kept.append({key: value[spread] if key in PER_GROUP_KEYS else value[rows] for key, value in groups.items()})
        if sum(len(k["rewards"]) for k in kept) >= P:
            break
    batch = {key: torch.cat([k[key] for k in kept])[: P * (1 if key in PER_GROUP_KEYS else G)] for key in kept[0]}
    return batch, {key: torch.cat([groups[key] for groups in sampled]) for key in ("rewards", "tied", "correct")}


def sampling_metrics(sampled: dict, group_size: int) -> dict:
    """reward, accuracy, responses_sampled and, for groups of G > 1, reward_std (the mean group
    std), frac_reward_zero_std (TRL's: groups whose rewards are all equal) and frac_all_right_or_wrong
    (groups DAPO's filter drops): they describe everything sampled this step (``sampled``: rewards,
    correct [P', G], tied [P'])."""
    metrics: dict = {
        "reward": float(sampled["rewards"].mean()),
        "accuracy": float(sampled["correct"].float().mean()),
        "responses_sampled": sampled["rewards"].numel(),
    }
    if group_size > 1:
        metrics["reward_std"] = float(sampled["rewards"].std(dim=1).mean())
        metrics["frac_reward_zero_std"] = float(sampled["tied"].float().mean())
        metrics["frac_all_right_or_wrong"] = float(equal_groups(sampled["correct"]).float().mean())
    return metrics


def response_advantages(config: TrainConfig, ema: EMABaseline, rewards: torch.Tensor, keep_groups: torch.Tensor, record: dict) -> torch.Tensor:
    """Advantages [P, G] of rewards [P, G] under ``config.baseline`` (advantages.py), 0 for the
    groups not kept (keep_groups [P]). Under baseline='ema' it records ``ema_baseline`` and the
    average then takes in these rewards. Raises NonFiniteError, saying why, if a kept advantage is
    not finite."""
    advantages = compute_advantages(
        rewards, config.baseline, config.std_eps, config.std_scope, config.std_ddof, config.eps_mode, ema.current(rewards)
    )
    if not torch.isfinite(advantages[keep_groups]).all():
        raise NonFiniteError(explain_non_finite_advantages(rewards, config))
    if config.baseline == "ema":
        record["ema_baseline"] = ema.current(rewards)
        ema.update(rewards)
    return advantages.where(keep_groups[:, None], 0.0)  # dropped groups: 0/0 is fine, unused


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


def value_advantages(
    config: TrainConfig, state: RunState, prompts: torch.Tensor, answers: torch.Tensor, mask: torch.Tensor, rewards: torch.Tensor, record: dict
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """PPO's and VinePPO's per-token advantages [B, La], whitened over the batch's tokens, with the
    values V(s_t) [B, La] they came from and GAE's returns (the critic's targets; None for
    mc_value). Records explained_variance (the critic on its own targets, before it fits them,
    CleanRL's) and heldout_explained_variance (V against each response's reward, which holds no V)."""
    flat_rewards = rewards.reshape(-1).to(state.device)
    if state.value_model is not None:  # PPO: a learned critic, GAE with gamma 1: gae_lambda for the advantages, critic_lambda for the returns
        with torch.no_grad():
            values = answer_values(state.value_model, prompts, answers)
        token_advantages, returns = advantages_and_returns(flat_rewards, values, mask, config)
        record["explained_variance"] = explained_variance(values, returns, mask)
    else:  # VinePPO: unbiased values from rollouts, and A_t = r_t + V(s_{t+1}) - V(s_t)
        values, record["value_rollouts"] = mc_prefix_values(
            state.policy, prompts, answers, mask, state.reward_model, config.mc_rollouts, config.temperature, state.sampling_generator
        )
        token_advantages, returns = gae(flat_rewards, values, mask, 1.0, 0.0)[0], None
    record["heldout_explained_variance"] = explained_variance(values, flat_rewards[:, None] * mask, mask)
    return whiten(token_advantages, mask), values, returns


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
    the first minibatch and leaves 1 once the policy has moved. With a shared trunk (the batch holds
    returns) each minibatch's ``vf_coef`` x value loss joins the policy's gradient before the step.
    Returns policy_updates (the number of optimiser steps), loss and grad_norm (means over the
    updates), entropy, clip_ratio and kl when the KL term is on (token means over every update, as
    CleanRL's clipfrac); with a shared trunk also value_loss (mean over the updates) and critic_updates."""
    losses, grad_norms, sums, num_tokens, value_losses = [], [], {}, 0.0, []
    for _ in range(config.inner_epochs):
        for rows in minibatch_rows(len(batch) // config.group_size, config.group_size, config.policy_minibatches, state.policy_shuffle):
            minibatch = batch if len(rows) == len(batch) else batch.rows(rows.to(batch.prompts.device))
            state.optimizer.zero_grad(set_to_none=True)
            loss, minibatch_sums = accumulate_gradients(state.policy, minibatch, config, state.max_len)
            if minibatch.returns is not None:  # CleanRL's loss = pg_loss + vf_coef * v_loss, through the shared trunk
                value_losses.append(
                    backward_value_loss(
                        state.value_model, minibatch.prompts, minibatch.answers, minibatch.mask, minibatch.returns, minibatch.old_values, config
                    )
                )
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
    if value_losses:
        metrics.update(value_loss=sum(value_losses) / len(value_losses), critic_updates=len(value_losses))
    return metrics


def loss_terms(policy: TinyTransformer, chunk: Rollout, config: TrainConfig) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """``losses.policy_loss_terms`` of a rollout's rows: the per-token loss [b, La] and its diagnostics."""
    return policy_loss_terms(policy, chunk.prompts, chunk.answers, chunk.mask, chunk.old_logprobs, chunk.ref_logprobs, chunk.token_advantages, config)


def accumulate_gradients(policy: TinyTransformer, batch: Rollout, config: TrainConfig, max_len: int) -> tuple[float, dict[str, float]]:
    """Backpropagate the batch loss into ``.grad``, ``micro_batch_size`` responses at a time.

    The gradient equals the full-batch one (``aggregate`` normalises every micro-batch by the whole
    batch's sizes); only peak memory changes. Returns (the batch loss, sums over answer tokens of
    each diagnostic)."""
    num_sequences = len(batch)
    num_tokens = float(batch.mask.sum())
    micro = config.micro_batch_size or num_sequences
    total_loss, sums = 0.0, {}
    for start_row in range(0, num_sequences, micro):
        chunk = batch.rows(slice(start_row, start_row + micro))
        per_token, diagnostics = loss_terms(policy, chunk, config)
        loss = aggregate(per_token, chunk.mask, config.loss_agg, num_sequences, num_tokens, max_len)
        if not torch.isfinite(loss):
            raise NonFiniteError(f"the loss became non-finite (largest |advantage| {float(chunk.token_advantages.abs().max()):.3g}, lr {config.lr})")
        loss.backward()
        total_loss += float(loss.detach())
        for name, values in diagnostics.items():
            sums[name] = sums.get(name, 0.0) + float((values * chunk.mask).sum())
    return total_loss, sums


def chunk_gradients(policy: TinyTransformer, batch: Rollout, config: TrainConfig, rows_per_chunk: int, max_len: int) -> torch.Tensor:
    """Gradient of each chunk's loss, [num_chunks, n_params], the batch's rows cut into chunks of
    ``rows_per_chunk`` (one GRPO group, or several in a row). Each chunk is normalised on its own,
    so that the batch loss is the mean of the chunk losses (probes.py)."""

    def chunk_loss(index: int) -> torch.Tensor:
        chunk = batch.rows(slice(index * rows_per_chunk, (index + 1) * rows_per_chunk))
        per_token, _ = loss_terms(policy, chunk, config)
        return aggregate(per_token, chunk.mask, config.loss_agg, rows_per_chunk, float(chunk.mask.sum()), max_len)

    return per_share_gradients(list(policy.parameters()), chunk_loss, len(batch) // rows_per_chunk)


def probe_gradient_noise(state: RunState, batch: Rollout, config: TrainConfig) -> dict[str, float]:
    """grad_var and grad_snr of this step's gradient, from the gradients of ``probe_chunks`` chunks of
    whole groups of ``batch`` (probes.py)."""
    num_groups = len(batch) // config.group_size
    rows_per_chunk = config.group_size * (num_groups // probe_chunks(num_groups))
    noise = gradient_noise(chunk_gradients(state.policy, batch, config, rows_per_chunk, state.max_len))
    return {"grad_var": noise["grad_var"], "grad_snr": noise["grad_snr"]}


def greedy_correct(policy: TinyTransformer, problems, max_len: int) -> torch.Tensor:
    """Whether the policy answers each problem (prompts [N, Lp]; ``.correct(responses)`` judges N
    responses: the result exactly, the final one of a worked answer) decoding greedily: [N] bool."""
    device = next(policy.parameters()).device
    answers, _ = sample(policy, problems.prompts.to(device), max_len, temperature=0)
    return problems.correct([decode(row) for row in answers.cpu().tolist()])


def greedy_accuracy(policy: TinyTransformer, problems, max_len: int) -> float:
    """The fraction of ``problems`` the policy answers exactly, decoding greedily (``eval_accuracy``
    on the task's held-out problems)."""
    correct = greedy_correct(policy, problems, max_len)
    return int(correct.sum()) / len(correct)
