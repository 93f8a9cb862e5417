"""Supervised warm start: the reference policies shipped in data/reference/.

RL from a random policy on this task would wait a long time for its first correct answer, and
GRPO learns nothing from a group that is all wrong. So, like DeepSeekMath starting from an SFT
model, we first train with plain cross-entropy on correct answers, and stop early on purpose:

- ``default``: stopped when greedy accuracy on the 2-digit addition eval set is about half,
  so most groups contain right and wrong answers and GRPO has signal;
- ``weak``: stopped much earlier, so most groups are all wrong (frac_reward_zero_std near 1);
- ``sparse``: the sparse-reward start of the experiments' ``sparse`` regime (catalog.REGIMES): the
  first 20-step checkpoint of the same run whose greedy accuracy reaches 20% (measured: 260 steps);
- ``long``: the start of the ``long-answer`` regime, on 5-digit addition (answers of 5-6 digits and
  EOS: 6-7 tokens), with a 24-position context (the other references read 16, enough for 3 digits):
  the first 500-step checkpoint of that run whose greedy accuracy reaches 20%, the sparse rule on a
  coarser grid because the run is slow to start (measured by ``scripts/long_reference_scan.py``).

``python -m grpo_lab pretrain --only NAME`` rebuilds one deterministically, always with one torch
thread (``PRETRAIN_THREADS``): the floating-point sums of a matrix product depend on how many threads
split them, and this run is chaotic near the steps where accuracy jumps (0.18 at 240 steps, 0.65 at
320), so one seed gave 0.647, 0.633 and 0.603 greedy accuracy with 1, 2 and 4 threads. Each
checkpoint records the thread count and the torch version it was built with.

The same bytes come back only on the CPU that built them: on another instruction set torch's kernels
sum in another order, and on an AVX2 AMD EPYC the ``long`` recipe reached 0.627, not the shipped 0.277
(data/README.md, "Rebuilding the references"). Every cached result starts from the shipped files, so
plain ``pretrain`` writes only the references that are missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from .checks.checkpoints import record_checksum, reference_path, save_policy
from .checks.threads import torch_threads
from .core.model import EOS_ID, PolicyConfig, TinyTransformer, encode
from .task import ProblemSampler, Task, eval_accuracy


@dataclass(frozen=True)
class PretrainRecipe:
    name: str
    steps: int  # supervised steps, fixed so the file is reproducible
    task: str = "2d+"
    max_len: int = PolicyConfig().max_len  # positions the policy reads (policy.positions_needed(task) at least)
    batch_size: int = 64
    lr: float = 3e-3
    seed: int = 0


LONG_TASK, LONG_STEPS = "5d+", 3500  # the long-answer start: what first_checkpoint_reaching gives on the scan
LONG_START_ACCURACY, LONG_CHECKPOINT_EVERY, LONG_SCAN_STEPS = 0.2, 500, 5000  # the rule, and the scan it reads
PRETRAIN_THREADS = 1  # torch threads while pretraining: the same bytes on one CPU with one torch build
RECIPES = {
    "default": PretrainRecipe("default", steps=320),
    "weak": PretrainRecipe("weak", steps=200),
    "sparse": PretrainRecipe("sparse", steps=260),
    "long": PretrainRecipe("long", steps=LONG_STEPS, task=LONG_TASK, max_len=24),
}


def first_checkpoint_reaching(scan: dict, accuracy: float = LONG_START_ACCURACY) -> int | None:
    """The first checkpoint of a scan (data/results/regimes/long-reference-scan.json: {"checkpoints":
    [{"step", "eval_accuracy"}]}) whose greedy accuracy is at least ``accuracy``, or None."""
    return next((point["step"] for point in scan["checkpoints"] if point["eval_accuracy"] >= accuracy), None)


def supervised_batch(task: Task, sampler: ProblemSampler, batch_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(sequence [N, T] = prompt + answer + EOS, padded with EOS; target mask [N, T-1] on answer tokens)."""
    batch = sampler.sample(batch_size)
    length = task.prompt_length + task.max_answer_length
    sequences = torch.full((batch_size, length), EOS_ID, dtype=torch.long)
    target_mask = torch.zeros(batch_size, length - 1)
    for row, (text, answer) in enumerate(zip(batch.texts, batch.answers)):
        tokens = encode(text + answer) + [EOS_ID]
        sequences[row, : len(tokens)] = torch.tensor(tokens)
        target_mask[row, task.prompt_length - 1 : len(tokens) - 1] = 1
    return sequences, target_mask


def pretrain(recipe: PretrainRecipe, progress=None, after_step=None) -> tuple[TinyTransformer, float]:
    """Train a fresh TinyTransformer with cross-entropy, on ``PRETRAIN_THREADS`` torch threads;
    returns (policy, greedy eval accuracy). ``after_step(step, policy)``, if given, is called after
    every step (the checkpoint scans evaluate there: greedy evaluation changes no state, so a scan's
    checkpoint at step N is the policy ``pretrain`` gives for N steps)."""
    with torch_threads(PRETRAIN_THREADS):
        return pretrain_on_this_thread_count(recipe, progress, after_step)


def pretrain_on_this_thread_count(recipe: PretrainRecipe, progress=None, after_step=None) -> tuple[TinyTransformer, float]:
    """``pretrain`` with however many torch threads are set (a different count gives different weights)."""
    torch.manual_seed(recipe.seed)
    task = Task.parse(recipe.task)
    policy = TinyTransformer(PolicyConfig(max_len=recipe.max_len))
    optimizer = torch.optim.AdamW(policy.parameters(), lr=recipe.lr, weight_decay=0.01)
    sampler = ProblemSampler(task, seed=recipe.seed + 100)
    for step in range(1, recipe.steps + 1):
        sequences, target_mask = supervised_batch(task, sampler, recipe.batch_size)
        logits = policy(sequences[:, :-1])
        losses = F.cross_entropy(logits.transpose(1, 2), sequences[:, 1:], reduction="none")
        loss = (losses * target_mask).sum() / target_mask.sum()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if progress is not None:
            progress.update(1)
        if after_step is not None:
            after_step(step, policy)
    policy.eval()
    return policy, eval_accuracy(policy, task)


def write_reference(name: str, progress=None) -> tuple[Path, float]:
    """Pretrain reference policy ``name``, save it to data/reference/NAME.pt and record its
    SHA-256 in data/reference/checksums.json (checked whenever the shipped file is loaded)."""
    recipe = RECIPES[name]
    policy, accuracy = pretrain(recipe, progress)
    metadata = {
        "name": name,
        "task": recipe.task,
        "steps": recipe.steps,
        "seed": recipe.seed,
        "eval_accuracy": accuracy,
        "torch_threads": PRETRAIN_THREADS,
        "torch_version": str(torch.__version__),
        "command": f"python -m grpo_lab pretrain --only {name}",
    }
    path = save_policy(policy, reference_path(name), metadata)
    record_checksum(path)
    return path, accuracy
