"""Supervised warm start: the reference policies shipped in data/reference/.

RL from a random policy on this task would wait a long time for its first correct answer, and
GRPO learns nothing from a group that is all wrong. So, like DeepSeekMath starting from an SFT
model, we first train with plain cross-entropy on correct answers, and stop early on purpose:

- ``default``: stopped when greedy accuracy on the 2-digit addition eval set is about half,
  so most groups contain right and wrong answers and GRPO has signal;
- ``weak``: stopped much earlier, so most groups are all wrong (frac_reward_zero_std near 1);
- ``sparse``: the sparse-reward start of the experiments' ``sparse`` regime (catalog.REGIMES): the
  first 20-step checkpoint of the same run whose greedy accuracy reaches 20% (measured: 260 steps).

``python -m grpo_lab pretrain`` regenerates them deterministically on a CPU, always with one torch
thread (``PRETRAIN_THREADS``): the floating-point sums of a matrix product depend on how many threads
split them, and this run is chaotic near the steps where accuracy jumps (0.18 at 240 steps, 0.65 at
320), so one seed gave 0.647, 0.633 and 0.603 greedy accuracy with 1, 2 and 4 threads. Each
checkpoint records the thread count and the torch version it was built with.

``default.pt`` and ``weak.pt`` predate that record and are not rebuilt bit for bit by this code on
any thread count tried (data/README.md, "Rebuilding the references"); every cached result depends on
them, so they stay as shipped. ``sparse.pt`` and later references are rebuilt bit for bit
(``tests/test_task_policy.py::test_pretrain_rebuilds_the_sparse_reference_bit_for_bit``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F

from .evaluation import greedy_accuracy
from .policy import PolicyConfig, TinyTransformer, record_checksum, reference_path, save_policy
from .task import EOS_ID, ProblemSampler, Task, encode
from .threads import torch_threads


@dataclass(frozen=True)
class PretrainRecipe:
    name: str
    steps: int  # supervised steps, fixed so the file is reproducible
    task: str = "2d+"
    batch_size: int = 64
    lr: float = 3e-3
    seed: int = 0


PRETRAIN_THREADS = 1  # torch threads while pretraining: the same bytes on any machine with the same torch build
RECIPES = {
    "default": PretrainRecipe("default", steps=320),
    "weak": PretrainRecipe("weak", steps=200),
    "sparse": PretrainRecipe("sparse", steps=260),
}
SHIPPED_BEFORE_THREAD_RECORD = ("default", "weak")  # built before checkpoints recorded their threads: not rebuilt bit for bit


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


def pretrain(recipe: PretrainRecipe, progress=None) -> tuple[TinyTransformer, float]:
    """Train a fresh TinyTransformer with cross-entropy, on ``PRETRAIN_THREADS`` torch threads;
    returns (policy, greedy eval accuracy)."""
    with torch_threads(PRETRAIN_THREADS):
        return pretrain_on_this_thread_count(recipe, progress)


def pretrain_on_this_thread_count(recipe: PretrainRecipe, progress=None) -> tuple[TinyTransformer, float]:
    """``pretrain`` with however many torch threads are set (a different count gives different weights)."""
    torch.manual_seed(recipe.seed)
    task = Task.parse(recipe.task)
    policy = TinyTransformer(PolicyConfig())
    optimizer = torch.optim.AdamW(policy.parameters(), lr=recipe.lr, weight_decay=0.01)
    sampler = ProblemSampler(task, seed=recipe.seed + 100)
    for _ in range(recipe.steps):
        sequences, target_mask = supervised_batch(task, sampler, recipe.batch_size)
        logits = policy(sequences[:, :-1])
        losses = F.cross_entropy(logits.transpose(1, 2), sequences[:, 1:], reduction="none")
        loss = (losses * target_mask).sum() / target_mask.sum()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        if progress is not None:
            progress.update(1)
    policy.eval()
    return policy, greedy_accuracy(policy, task, torch.device("cpu"))


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
