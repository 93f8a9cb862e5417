"""Levers on the step's arithmetic (issue 13): packed answers (adopted) and distinct responses (not).

    python benchmarks/bench_step_levers.py [--steps 40] [--rounds 3]

The default step (16 prompts x G=8, 2d+, no evaluation or probe, one torch thread), three ways,
alternating within one process, each round a fresh run of ``train_step`` from the reference:

- **cached prompt (before)**: the loss's forward as it was until commit f934655: each distinct
  prompt run once, its keys and values copied to each of its G rows, then the answers attend to
  them;
- **packed answers (now)**: ``policy.token_logprobs`` runs one sequence per group, the prompt once
  and then its answers, with an attention mask that keeps the answers apart (``pack_answers``);
- **+ distinct responses only**: a group often holds the same answer several times (in a default
  run about half of the 128 responses repeat another of their group), and identical responses to one
  prompt have identical advantages, so the loss runs once per distinct (prompt, answer), weighted by
  its count: the same gradient, summed in another order (not adopted, see benchmarks/README.md).

All three give the same loss and gradient up to rounding. Reports the median step of each and the
last step's grad norm. Measurements, not assertions.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_core import machine  # noqa: E402

import grpo_lab.core.loop as trainer  # noqa: E402
import grpo_lab.core.losses as losses  # noqa: E402
import grpo_lab.trainer as entry  # noqa: E402
from grpo_lab.checks.config_rules import validate_config
from grpo_lab.core.model import TinyTransformer, run_prompts  # noqa: E402

WARMUP = 10


def distinct_rows_accumulate(policy, batch, config, max_len):
    """``trainer.accumulate_gradients`` (whole batch) on the distinct rows of the batch, each weighted by its count."""
    num_sequences, num_tokens = len(batch), float(batch.mask.sum())
    keys = torch.cat([batch.prompts, batch.answers, batch.token_advantages.view(torch.int32)], dim=1)  # bits of the advantage
    _, row_to_distinct, counts = torch.unique(keys, dim=0, return_inverse=True, return_counts=True)
    first_row = torch.full((len(counts),), len(keys)).scatter_reduce(0, row_to_distinct, torch.arange(len(keys)), "amin")
    first_row, order = first_row.sort()  # distinct rows in batch order, so that groups stay contiguous
    weights = counts[order].float()[:, None]
    chunk = batch.rows(first_row)
    per_token, diagnostics = trainer.loss_terms(policy, chunk, config)
    loss = losses.aggregate(per_token * weights, chunk.mask, config.loss_agg, num_sequences, num_tokens, max_len)
    loss.backward()
    return float(loss.detach()), {name: float((values * chunk.mask * weights).sum()) for name, values in diagnostics.items()}


def cached_prompt_token_logprobs(policy: TinyTransformer, prompts, answers, with_entropy=False):
    """``policy.token_logprobs`` as it was before answers were packed (commit f934655): each distinct
    prompt run once (``run_prompts``), its keys and values copied to every row, then the answers."""
    first_logits, caches = run_prompts(policy, prompts)
    logits = first_logits[:, None, :]
    if answers.shape[1] > 1:
        logits = torch.cat([logits, policy(answers[:, :-1], caches, start=prompts.shape[1])], dim=1)
    log_probs = torch.log_softmax(logits.float(), dim=-1)
    chosen = log_probs.gather(-1, answers[:, :, None]).squeeze(-1)
    return (chosen, -(log_probs.exp() * log_probs).sum(-1)) if with_entropy else chosen


def timed_run(lever: str, steps: int) -> tuple[float, float]:
    """(median step in ms, last grad norm) of WARMUP + steps default steps with ``lever`` on."""
    accumulate, logprobs = trainer.accumulate_gradients, losses.token_logprobs
    if lever == "packed answers + distinct responses only":
        trainer.accumulate_gradients = distinct_rows_accumulate
    elif lever == "cached prompt (before)":
        losses.token_logprobs = cached_prompt_token_logprobs
    try:
        config = validate_config(entry.TrainConfig(eval_every=0, probe_every=0, device="cpu"))
        state, problems = entry.start_run(config)
        seconds = []
        for step in range(1, WARMUP + steps + 1):
            started = time.perf_counter()
            record, _ = trainer.train_step(config, state, problems, step)
            seconds.append(time.perf_counter() - started)
    finally:
        trainer.accumulate_gradients, losses.token_logprobs = accumulate, logprobs
    return 1e3 * statistics.median(seconds[WARMUP:]), record["grad_norm"]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=40, help="timed steps per run (default 40)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the three variants, alternating (default 3)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    levers = ("cached prompt (before)", "packed answers (now)", "packed answers + distinct responses only")
    medians: dict[str, list[float]] = {lever: [] for lever in levers}
    norms: dict[str, float] = {}
    for _ in range(args.rounds):
        for lever in levers:
            median, norms[lever] = timed_run(lever, args.steps)
            medians[lever].append(median)
    print(f"Machine: {machine()}")
    print(f"Command: `python benchmarks/bench_step_levers.py {' '.join(argv if argv is not None else sys.argv[1:])}".rstrip() + "`\n")
    print(
        f"| default step, one thread ({args.rounds} runs x {args.steps} steps) | median step | speed-up | grad norm at step {WARMUP + args.steps} |"
    )
    print("|---|---|---|---|")
    base = statistics.median(medians["cached prompt (before)"])
    for lever in levers:
        median = statistics.median(medians[lever])
        print(f"| {lever} | {median:.1f} ms | {base / median:.2f}x | {norms[lever]:.6f} |")


if __name__ == "__main__":
    main()
