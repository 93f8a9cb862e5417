"""Supervised warm start: the reference policies shipped in data/reference/.

RL from a random policy on this task would wait a long time for its first correct answer, and
GRPO learns nothing from a group that is all wrong. So, like DeepSeekMath starting from an SFT
model, we first train with plain cross-entropy on correct answers, and stop early on purpose:

- ``default``: stopped when greedy accuracy on the 2-digit addition eval set is about half,
  so most groups contain right and wrong answers and GRPO has signal: the first step whose greedy
  accuracy reaches 48%, evaluated at every step because one step can move it by 0.19 where it climbs;
- ``weak``: stopped much earlier, at a fixed 200 steps, so most groups are all wrong
  (frac_reward_zero_std near 1): accuracy is flat there (0.05-0.10), where a rule would pick noise;
- ``sparse``: the sparse-reward start of the experiments' ``sparse`` regime (catalog.REGIMES): the
  first 20-step checkpoint of the same run whose greedy accuracy reaches 20% (measured: 260 steps);
- ``long``: the start of the ``long-answer`` regime, on 5-digit addition (answers of 5-6 digits and
  EOS: 6-7 tokens), with a 24-position context (the other references read 16, enough for 3 digits):
  the first 500-step checkpoint of that run whose greedy accuracy reaches 20%, the sparse rule on a
  coarser grid because the run is slow to start (measured by ``scripts/long_reference_scan.py``).
- ``practice``: the start of the ``practice`` regime (docs/practice-regime.md), on worked 3-digit addition
  (``3d+w``: 27-28 answer tokens) with a 36-position context: the first 10-step checkpoint whose greedy
  accuracy reaches 10% (measured: 120 steps, by ``scripts/long_reference_scan.py practice``).

A reference with a rule (``START_RULES``) is rebuilt by its rule, evaluated while it trains, not by a
step count, so a rebuild on another CPU, whose run drifts, still stops at the accuracy the rule names.
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

from dataclasses import dataclass, replace
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
    steps: int  # supervised steps; with a rule (START_RULES), the steps its rule gave for the shipped file
    task: str = "2d+"
    max_len: int = PolicyConfig().max_len  # positions the policy reads (policy.positions_needed(task) at least)
    batch_size: int = 64
    lr: float = 3e-3
    seed: int = 0


LONG_TASK, LONG_STEPS = "5d+", 3500  # the long-answer start: what first_checkpoint_reaching gives on the scan
LONG_START_ACCURACY, LONG_CHECKPOINT_EVERY, LONG_SCAN_STEPS = 0.2, 500, 5000  # the rule, and the scan it reads
PRACTICE_TASK, PRACTICE_STEPS = "3d+w", 120  # the practice start (docs/practice-regime.md): what the rule gives on its scan
PRACTICE_START_ACCURACY, PRACTICE_CHECKPOINT_EVERY, PRACTICE_SCAN_STEPS = 0.1, 10, 1000  # revised from 50 and 3,000 (docs/practice-regime.md, 6)
# recipe: (the accuracy its first checkpoint must reach, checkpoint every N steps, the most steps: a scan's length),
# applied while pretraining (write_reference) and on a scan (scripts/long_reference_scan.py); a recipe's steps are then
# where its rule stopped when the shipped file was built (default.pt, older than its rule, ran a fixed 320)
START_RULES = {
    "default": (0.48, 1, 1000),  # every step: one step moves accuracy by up to 0.19 where it climbs (data/README.md)
    "sparse": (0.2, 20, 1000),
    "long": (LONG_START_ACCURACY, LONG_CHECKPOINT_EVERY, LONG_SCAN_STEPS),
    "practice": (PRACTICE_START_ACCURACY, PRACTICE_CHECKPOINT_EVERY, PRACTICE_SCAN_STEPS),
}
PRETRAIN_THREADS = 1  # torch threads while pretraining: the same bytes on one CPU with one torch build
RECIPES = {
    "default": PretrainRecipe("default", steps=320),
    "weak": PretrainRecipe("weak", steps=200),
    "sparse": PretrainRecipe("sparse", steps=260),
    "long": PretrainRecipe("long", steps=LONG_STEPS, task=LONG_TASK, max_len=24),
    "practice": PretrainRecipe("practice", steps=PRACTICE_STEPS, task=PRACTICE_TASK, max_len=36),
}


def first_checkpoint_reaching(scan: dict, accuracy: float = LONG_START_ACCURACY) -> int | None:
    """The first checkpoint of a scan (data/results/regimes/long-reference-scan.json: {"checkpoints":
    [{"step", "eval_accuracy"}]}) whose greedy accuracy is at least ``accuracy``, or None."""
    return next((point["step"] for point in scan["checkpoints"] if point["eval_accuracy"] >= accuracy), None)


def checkpoint_evaluator(task: Task, every: int, checkpoints: list[dict], stop_at: float | None = None):
    """An ``after_step`` hook for ``pretrain``: at every ``every``-th step it appends {"step",
    "eval_accuracy"} (greedy, on ``task``'s eval set) to ``checkpoints``, a scan's list, and with
    ``stop_at`` it returns True, which ends pretraining, at the first checkpoint whose accuracy is at
    least ``stop_at``: ``first_checkpoint_reaching`` applied while the run goes."""

    def evaluate(step: int, policy: TinyTransformer) -> bool:
        if step % every:
            return False
        checkpoints.append({"step": step, "eval_accuracy": eval_accuracy(policy, task)})
        return stop_at is not None and checkpoints[-1]["eval_accuracy"] >= stop_at

    return evaluate


def supervised_batch(task: Task, sampler: ProblemSampler, batch_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(sequence [N, T] = prompt + answer + EOS, padded with EOS; target mask [N, T-1] on answer tokens).
    The answer is the whole one a right policy writes (``ProblemBatch.targets``: a worked task's steps too)."""
    batch = sampler.sample(batch_size)
    length = task.prompt_length + task.max_answer_length
    sequences = torch.full((batch_size, length), EOS_ID, dtype=torch.long)
    target_mask = torch.zeros(batch_size, length - 1)
    for row, (text, answer) in enumerate(zip(batch.texts, batch.targets)):
        tokens = encode(text + answer) + [EOS_ID]
        sequences[row, : len(tokens)] = torch.tensor(tokens)
        target_mask[row, task.prompt_length - 1 : len(tokens) - 1] = 1
    return sequences, target_mask


def pretrain(recipe: PretrainRecipe, progress=None, after_step=None) -> tuple[TinyTransformer, float]:
    """Train a fresh TinyTransformer with cross-entropy, on ``PRETRAIN_THREADS`` torch threads;
    returns (policy, greedy eval accuracy). ``after_step(step, policy)``, if given, is called after
    every step, and a True from it ends training there (``checkpoint_evaluator``: the checkpoint scans
    and the start rules evaluate there; greedy evaluation changes no state, so a scan's checkpoint at
    step N is the policy ``pretrain`` gives for N steps)."""
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
        if after_step is not None and after_step(step, policy):
            break
    policy.eval()
    return policy, eval_accuracy(policy, task)


def pretrain_reference(name: str, progress=None) -> tuple[TinyTransformer, float, int]:
    """Pretrain reference policy ``name``: its recipe's steps, or with a start rule (START_RULES) up to
    the first checkpoint at or above the rule's accuracy. Returns (policy, greedy eval accuracy, steps).
    A rule that no checkpoint meets within its most steps is one line naming the rule (ValueError)."""
    recipe = RECIPES[name]
    if name not in START_RULES:
        return *pretrain(recipe, progress), recipe.steps
    accuracy, every, most_steps = START_RULES[name]
    checkpoints: list[dict] = []
    evaluate = checkpoint_evaluator(Task.parse(recipe.task), every, checkpoints, stop_at=accuracy)
    policy, reached = pretrain(replace(recipe, steps=most_steps), progress, evaluate)
    if first_checkpoint_reaching({"checkpoints": checkpoints}, accuracy) is None:
        best = max(checkpoints, key=lambda point: point["eval_accuracy"])
        raise ValueError(
            f"pretrain {name}: no {every}-step checkpoint up to {most_steps} steps reached greedy accuracy {accuracy} on "
            f"{recipe.task} (best {best['eval_accuracy']:.3f} at step {best['step']}); see START_RULES in grpo_lab/pretrain.py"
        )
    return policy, reached, checkpoints[-1]["step"]


def write_reference(name: str, progress=None, path: Path | None = None) -> tuple[Path, float]:
    """Pretrain reference policy ``name`` (``pretrain_reference``), save it to data/reference/NAME.pt
    and record its SHA-256 in data/reference/checksums.json (checked whenever the shipped file is
    loaded); or, given ``path``, save it there and leave data/reference/ as it is."""
    recipe = RECIPES[name]
    policy, accuracy, steps = pretrain_reference(name, progress)
    metadata = {
        "name": name,
        "task": recipe.task,
        "steps": steps,
        "seed": recipe.seed,
        "eval_accuracy": accuracy,
        "torch_threads": PRETRAIN_THREADS,
        "torch_version": str(torch.__version__),
        "command": f"python -m grpo_lab pretrain --only {name}",
    }
    if path is not None:
        return save_policy(policy, path, metadata), accuracy
    path = save_policy(policy, reference_path(name), metadata)
    record_checksum(path)
    return path, accuracy
